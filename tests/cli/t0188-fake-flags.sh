#!/bin/bash
# The fake Claude Code CLI's per-state agent flags: --max-turns ends a turn
# that needs more API calls (error_max_turns), --mcp-config needs its files,
# --settings is JSON or a file, and every such flag is logged in log.jsonl
# for tests to assert.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake-lib.sh"

test_expect_success '--max-turns N: a turn that needs more API calls ends with error_max_turns' '
	expect_status 1 fake --max-turns 1 -- "MOCK: bash touch ran => never" >out &&
	test -e ran &&
	test "$(jline assistant out | wc -l)" = 1 &&
	r=$(jline result out) &&
	test "$(echo "$r" | jstr subtype)" = error_max_turns &&
	test "$(echo "$r" | jlit is_error)" = true &&
	test "$(echo "$r" | jnum num_turns)" = 2 &&
	test "$(echo "$r" | jnum total_cost_usd)" = 0.0075 &&
	test "$(echo "$r" | jstr terminal_reason)" = max_turns &&
	echo "$r" | grep -F "\"errors\":[\"Reached maximum number of turns (1)\"]" &&
	test "$(lastlog | jnum max_turns)" = 1 &&
	fake --max-turns 2 -- "MOCK: bash true => fits" >out &&
	test "$(jline result out | jstr result)" = fits &&
	expect_status 1 fake --max-turns 3 -- "MOCK: calls 5 => never" >out &&
	test "$(jline assistant out | wc -l)" = 3 &&
	test "$(jline result out | jnum num_turns)" = 4 &&
	fake --max-turns 1 -- "MOCK: reply one call" >out &&
	test "$(jline result out | jstr result)" = "one call" &&
	fake -- hi >out &&
	test "$(lastlog | jlit max_turns)" = null
'

test_expect_success '--mcp-config: a missing file fails as in the CLI; a file or inline JSON is logged' '
	expect_status 1 fake --mcp-config missing.json -- hi >out 2>err &&
	printf "Error: Invalid MCP configuration:\nMCP config file not found: %s/missing.json\n" "$PWD" >want &&
	diff want err &&
	test ! -s out &&
	test ! -e fc/log.jsonl &&
	echo "{\"mcpServers\":{}}" >mcp.json &&
	fake --mcp-config mcp.json "{\"mcpServers\":{}}" -- hi >out &&
	lastlog | grep -F "\"mcp_config\":[\"mcp.json\",\"{\\\"mcpServers\\\":{}}\"]"
'

test_expect_success '--append-system-prompt, --allowedTools and --disallowedTools are logged' '
	fake --append-system-prompt "Mind the gap." --allowedTools "Bash(git log:*)" Edit \
		--disallowed-tools WebFetch,WebSearch -- hi >out &&
	l=$(lastlog) &&
	echo "$l" | grep -F "\"append_system_prompt\":\"Mind the gap.\"" &&
	echo "$l" | grep -F "\"allowed_tools\":[\"Bash(git log:*)\",\"Edit\"]" &&
	echo "$l" | grep -F "\"disallowed_tools\":[\"WebFetch\",\"WebSearch\"]" &&
	fake -- hi >out &&
	l=$(lastlog) &&
	echo "$l" | grep -F "\"append_system_prompt\":null,\"settings\":null" &&
	echo "$l" | grep -F "\"allowed_tools\":[],\"disallowed_tools\":[],\"mcp_config\":[]"
'

test_expect_success '--settings: JSON or a file; bad JSON and a missing file fail as in the CLI' '
	hooks_json PreToolUse Bash "touch hook-ran" >settings.json &&
	fake --settings settings.json -- "MOCK: bash true => ok" >out &&
	test -e hook-ran &&
	lastlog | grep -F "\"settings\":\"settings.json\"" &&
	expect_status 1 fake --settings "{\"hooks\": nope}" -- hi >out 2>err &&
	test "$(cat err)" = "Error: Invalid JSON provided to --settings" &&
	expect_status 1 fake --settings nowhere.json -- hi >out 2>err &&
	test "$(cat err)" = "Error: Settings file not found: nowhere.json" &&
	expect_status 1 fake --settings "{\"hooks\":" -- hi >out 2>err &&
	test "$(cat err)" = "Error: Settings file not found: {\"hooks\":" &&
	fake --settings "{\"permissions\":{\"allow\":[]}}" -- hi >out
'

test_done
