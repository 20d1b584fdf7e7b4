#!/bin/bash
# Bad agent settings in frontmatter (docs/bad-input.md): raymond lint
# reports each with the file and line, a run refuses before anything runs
# with the same line, and with --no-lint the state fails before the CLI
# is started.
. "$(dirname "$0")/lib.sh"

unset CLAUDECODE IS_SANDBOX

has() { _in=$(cat) && { printf "%s\n" "$_in" | grep -qF -e "$1" || { echo "no '$1' in:"; printf "%s\n" "$_in"; false; }; }; }

# finding LINE MESSAGE CHECK <FILE: FILE has the line of lint's finding
# CHECK at wf/START.md:LINE, whose message begins with MESSAGE.
finding() {
	grep -F -e "wf/START.md:$1: error: $2" | grep -qE "\[$3\]\$" ||
	{ echo "no [$3] finding at line $1: $2"; false; }
}

# refused LINE MESSAGE CHECK: wf/START.md, whose line 3 holds the bad
# setting (line 2 is a model), is refused by lint and by a run, with
# MESSAGE at LINE, and the CLI never runs.
refused() {
	expect_status 1 raymond lint wf >out 2>err &&
	finding "$@" <out &&
	expect_status 1 raymond wf >out 2>err &&
	finding "$@" <err &&
	has "raymond: error: wf has 1 error; the run was not started" <err &&
	expect_status 1 raymond wf --no-lint >out 2>err &&
	has "raymond: error: wf/START.md (agent main): wf/START.md: $2" <err &&
	{ test ! -e fake/log.jsonl || { echo "the CLI ran:"; cat fake/log.jsonl; false; }; }
}

# start SETTING: wf/START.md with SETTING on line 3.
start() {
	printf -- "---\nmodel: sonnet\n%s\n---\nMOCK: reply <result>ok</result>\n" "$1" | state START.md
}

test_expect_success 'an unknown tool name, with the tool it most likely means' '
	use_fake &&
	start "allowed_tools: [Read, Bsh]" &&
	refused 3 "allowed_tools names an unknown tool '"'"'Bsh'"'"'; did you mean Bash?" invalid-agent-setting &&
	start "disallowed_tools: Read, Frobnicate" &&
	refused 3 "disallowed_tools names an unknown tool '"'"'Frobnicate'"'"'; the tools are Agent, AskUserQuestion, Bash," invalid-agent-setting
'

test_expect_success 'a rule without its closing parenthesis, a list entry that is not a name, a mapping' '
	use_fake &&
	start "disallowed_tools: [\"Bash(git push:*\"]" &&
	refused 3 "disallowed_tools has '"'"'Bash(git push:*'"'"', which is not a tool rule: the rule goes in parentheses after the tool, as in Bash(git log:*)" invalid-agent-setting &&
	start "allowed_tools: [Read, [Bash]]" &&
	refused 3 "allowed_tools entry 2 must be a tool name, got a list" invalid-agent-setting &&
	start "allowed_tools: {Read: yes}" &&
	refused 3 "allowed_tools must be a list of tools, or one string of them separated by commas, got a mapping" invalid-agent-setting
'

test_expect_success 'a permission mode the CLI does not have' '
	use_fake &&
	start "permission_mode: ask" &&
	refused 3 "permission_mode must be one of acceptEdits, auto, bypassPermissions, default, dontAsk, plan, got '"'"'ask'"'"'" invalid-agent-setting
'

test_expect_success 'max_turns 0, "x", 2.5' '
	use_fake &&
	start "max_turns: 0" &&
	refused 3 "max_turns must be a whole number of turns from 1 to 1000000, got 0" invalid-agent-setting &&
	start "max_turns: x" &&
	refused 3 "max_turns must be a whole number of turns from 1 to 1000000, got '"'"'x'"'"'" invalid-agent-setting &&
	start "max_turns: 2.5" &&
	refused 3 "max_turns must be a whole number of turns from 1 to 1000000, got 2.5" invalid-agent-setting
'

test_expect_success 'append_system_prompt that is not text' '
	use_fake &&
	start "append_system_prompt: [a, b]" &&
	refused 3 "append_system_prompt must be text, got a list" invalid-agent-setting
'

test_expect_success 'mcp_config: a path out of the workflow, a missing file, a file that is not JSON, no mcpServers' '
	use_fake &&
	start "mcp_config: ../servers.json" &&
	echo "{\"mcpServers\": {}}" >servers.json &&
	refused 3 "mcp_config must be the path of a JSON file of the workflow, relative to the state'"'"'s folder (e.g. servers.json), got '"'"'../servers.json'"'"'" invalid-agent-setting &&
	start "mcp_config: missing.json" &&
	refused 3 "mcp_config names no file '"'"'missing.json'"'"' of the workflow (the path is relative to the state'"'"'s folder)" invalid-mcp-config &&
	start "mcp_config: bad.json" &&
	echo "{\"mcpServers\": {" >wf/bad.json &&
	refused 3 "mcp_config names '"'"'bad.json'"'"', which is not JSON: " invalid-mcp-config &&
	start "mcp_config: none.json" &&
	echo "{\"servers\": {}}" >wf/none.json &&
	refused 3 "mcp_config names '"'"'none.json'"'"', which has no \"mcpServers\" object; write {\"mcpServers\": {\"NAME\": {\"command\": \"...\", \"args\": [...]}}}" invalid-mcp-config
'

test_expect_success 'an append_system_prompt or an MCP configuration too long for one argument' '
	use_fake &&
	start "append_system_prompt: $(head -c 200000 /dev/zero | tr "\0" a)" &&
	refused 3 "append_system_prompt is 200000 bytes, more than the 131000 one command-line argument may hold; put the text in the prompt" invalid-agent-setting &&
	start "mcp_config: big.json" &&
	{ printf "{\"mcpServers\": {}, \"pad\": \"" && head -c 199971 /dev/zero | tr "\0" b && printf "\"}"; } >wf/big.json &&
	test "$(wc -c <wf/big.json)" -eq 200000 &&
	refused 3 "mcp_config names '"'"'big.json'"'"', which is 200000 bytes, more than the 131000 one command-line argument may hold" invalid-mcp-config
'

test_expect_success 'an append_system_prompt too long once a 200000-byte result fills it: the state fails before the CLI runs' '
	use_fake &&
	state START.sh <<-\EOS &&
	echo "<call return=\"B.md\">SUB.sh</call>"
	EOS
	state SUB.sh <<-\EOS &&
	echo "<result>$(head -c 200000 /dev/zero | tr "\000" b)</result>"
	EOS
	printf -- "---\nappend_system_prompt: \"{{result}}\"\n---\nMOCK: reply <result>ok</result>\n" | state B.md &&
	raymond lint wf >out 2>err &&
	expect_status 1 raymond wf >out 2>err &&
	has "raymond: error: wf/B.md (agent main): wf/B.md: append_system_prompt is 200000 bytes, more than the 131000 one command-line argument may hold; put the text in the prompt" <err &&
	test ! -e fake/log.jsonl
'

test_expect_success 'a state no transition reaches is not checked before a run; lint still reports it' '
	use_fake &&
	start "max_turns: 3" &&
	printf -- "---\nmax_turns: 0\n---\nnever\n" | state LATER.md &&
	raymond wf >out 2>err &&
	grep -qx ok out &&
	expect_status 1 raymond lint wf >out 2>err &&
	has "wf/LATER.md:2: error: max_turns must be a whole number of turns from 1 to 1000000, got 0 [invalid-agent-setting]" <out
'

test_done
