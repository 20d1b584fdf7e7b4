#!/bin/bash
# The fake Claude Code CLI's `tool NAME JSON => TEXT` step: the tools act
# for real (Write, Edit, Read, Bash) so tests can check their effects, with
# the real CLI's stream-json lines and tool_result texts; other tools
# answer "ok"; unknown and disallowed tools fail as in the CLI 2.1.197.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake-lib.sh"

# The tool_result line's content, and whether it is an error.
result_text() { jline user out | sed -n 's/.*"type":"tool_result","content":"\(.*\)","is_error".*/\1/p'; }
result_error() { jline user out | sed -n 's/.*"type":"tool_result",.*"is_error":\(true\|false\)}.*/\1/p'; }

test_expect_success 'Write creates the file (and its folders) and the turn goes on' '
	fake -- "MOCK: tool Write {\"file_path\":\"$PWD/sub/dir/w.txt\",\"content\":\"line one\nline two\n\"} => wrote it" >out &&
	printf "line one\nline two\n" >want &&
	cmp want sub/dir/w.txt &&
	jline assistant out | grep -F "\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_fake_" &&
	jline assistant out | grep -F "\"name\":\"Write\",\"input\":{\"file_path\":\"$PWD/sub/dir/w.txt\",\"content\":\"line one\nline two\n\"}}]" &&
	test "$(result_text)" = "File created successfully at: $PWD/sub/dir/w.txt (file state is current in your context — no need to Read it back)" &&
	test "$(result_error)" = false &&
	jline user out | grep -F "\"tool_use_result\":{\"type\":\"create\",\"filePath\":\"$PWD/sub/dir/w.txt\"" &&
	test "$(jline result out | jstr result)" = "wrote it" &&
	test "$(jline result out | jnum num_turns)" = 2 &&
	test "$(lastlog | jstr step)" = tool &&
	events tool_result | grep -F "\"tool\":\"Write\"" &&
	fake -- "MOCK: tool Write {\"file_path\":\"sub/dir/w.txt\",\"content\":\"again\"} => rewrote" >out &&
	test "$(cat sub/dir/w.txt)" = again &&
	test "$(result_text)" = "The file sub/dir/w.txt has been updated successfully."
'

test_expect_success 'Edit replaces old_string once, or everywhere with replace_all; mistakes fail as in the CLI' '
	printf "aaa bbb\nccc\n" >e.txt &&
	fake -- "MOCK: tool Edit {\"file_path\":\"e.txt\",\"old_string\":\"bbb\",\"new_string\":\"BBB\"} => edited" >out &&
	printf "aaa BBB\nccc\n" >want && cmp want e.txt &&
	test "$(result_text)" = "The file e.txt has been updated successfully." &&
	fake -- "MOCK: tool Edit {\"file_path\":\"e.txt\",\"old_string\":\"zzz\",\"new_string\":\"x\"} => edited" >out &&
	test "$(result_text)" = "<tool_use_error>String to replace not found in file.\nString: zzz</tool_use_error>" &&
	test "$(result_error)" = true &&
	jline user out | grep -F "\"tool_use_result\":\"Error: String to replace not found in file.\nString: zzz\"" &&
	printf "x x x\n" >m.txt &&
	fake -- "MOCK: tool Edit {\"file_path\":\"m.txt\",\"old_string\":\"x\",\"new_string\":\"y\"} => edited" >out &&
	result_text | grep "^<tool_use_error>Found 3 matches of the string to replace, but replace_all is false." &&
	test "$(cat m.txt)" = "x x x" &&
	fake -- "MOCK: tool Edit {\"file_path\":\"m.txt\",\"old_string\":\"x\",\"new_string\":\"y\",\"replace_all\":true} => edited" >out &&
	test "$(cat m.txt)" = "y y y" &&
	fake -- "MOCK: tool Edit {\"file_path\":\"none.txt\",\"old_string\":\"x\",\"new_string\":\"y\"} => edited" >out &&
	test "$(result_text)" = "<tool_use_error>File does not exist.</tool_use_error>"
'

test_expect_success 'Read numbers the lines as the CLI shows them; a missing file is an error' '
	printf "hello\nworld\n" >r.txt &&
	fake -- "MOCK: tool Read {\"file_path\":\"r.txt\"} => read" >out &&
	test "$(result_text)" = "1\thello\n2\tworld\n3\t" &&
	test "$(result_error)" = false &&
	fake -- "MOCK: tool Read {\"file_path\":\"$PWD/missing.txt\"} => read" >out &&
	test "$(result_text)" = "File does not exist. Note: your current working directory is $PWD." &&
	test "$(result_error)" = true
'

test_expect_success 'a Bash tool step runs its command; other known tools and MCP tools answer ok' '
	fake -- "MOCK: tool Bash {\"command\":\"echo ran >ran.txt; echo out\"} => done" >out &&
	test "$(cat ran.txt)" = ran &&
	test "$(result_text)" = out &&
	fake -- "MOCK: tool WebFetch {\"url\":\"http://example.invalid\",\"prompt\":\"p\"} => done" >out &&
	test "$(result_text)" = ok && test "$(result_error)" = false &&
	fake -- "MOCK: tool mcp__github__create_issue {\"title\":\"t\"} => done" >out &&
	test "$(result_text)" = ok
'

test_expect_success 'an unknown tool, or one --disallowedTools names, fails with the CLI'\''s tool_use_error' '
	fake -- "MOCK: tool Bogus {\"a\":1} => after" >out &&
	test "$(result_text)" = "<tool_use_error>Error: No such tool available: Bogus</tool_use_error>" &&
	test "$(result_error)" = true &&
	test "$(jline result out | jstr result)" = after &&
	fake --disallowedTools Write "Bash(git push:*)" -- "MOCK: tool Write {\"file_path\":\"no.txt\",\"content\":\"x\"} => after" >out &&
	test ! -e no.txt &&
	test "$(result_text)" = "<tool_use_error>Error: No such tool available: Write. Write exists but is not enabled in this context. Use one of the available tools instead.</tool_use_error>" &&
	lastlog | grep -F "\"disallowed_tools\":[\"Write\",\"Bash(git push:*)\"]"
'

test_expect_success 'hooks see a tool step as any tool call; a deny keeps a Write from writing' '
	cat >deny.sh <<-\EOS &&
	cat >in.json
	echo "{\"hookSpecificOutput\":{\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"protected\"}}"
	EOS
	fake --settings "$(hooks_json PreToolUse "Edit|Write" "sh deny.sh")" -- "MOCK: tool Write {\"file_path\":\"p.txt\",\"content\":\"x\"} => after" >out &&
	test ! -e p.txt &&
	test "$(result_text)" = protected &&
	grep -F "\"tool_name\":\"Write\",\"tool_input\":{\"file_path\":\"p.txt\",\"content\":\"x\"},\"tool_use_id\":\"toolu_" in.json
'

test_expect_success 'the JSON may hold =>; a step whose JSON is bad is unknown' '
	fake -- "MOCK: tool Write {\"file_path\":\"arrow.txt\",\"content\":\"a => b\"} => done" >out &&
	test "$(cat arrow.txt)" = "a => b" &&
	test "$(jline result out | jstr result)" = done &&
	fake -- "MOCK: tool Write {not json} => x" >out 2>err &&
	test "$(lastlog | jstr step)" = unknown &&
	grep -F "unknown step: tool Write {not json} => x" err
'

test_done
