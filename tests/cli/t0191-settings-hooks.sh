#!/bin/bash
# PreState hooks change a markdown state's agent settings, as they change
# its model (docs/hooks.md): allowedTools, disallowedTools, permissionMode,
# mcpConfig, appendSystemPrompt, maxTurns.  A bad value is an error naming
# the hook file and line, and the state does not run; the values a hook
# set are in its decision line.
. "$(dirname "$0")/lib.sh"

export RAYMOND_RETRY_DELAY=0.05
unset CLAUDECODE IS_SANDBOX

has() { _in=$(cat) && { printf "%s\n" "$_in" | grep -qF -e "$1" || { echo "no '$1' in:"; printf "%s\n" "$_in"; false; }; }; }

log() { sed -n "${1}p" fake/log.jsonl; }

# argv_has N WORD...: invocation N's argv holds the WORDs one after another.
argv_has() {
	_n=$1; shift; _want=
	for _w in "$@"; do _want="$_want\"$(printf '%s' "$_w" | sed 's/\\/\\\\/g; s/"/\\"/g')\","; done
	log "$_n" | has "${_want%,}"
}

# start_with_settings: START.md with settings of its own, which the hooks
# of each test replace.
start_with_settings() {
	state START.md <<-\EOS
	---
	allowed_tools: [Read]
	permission_mode: plan
	max_turns: 5
	---
	MOCK: reply <result>ok</result>
	EOS
}

# hook BODY: wf/hooks.lua whose PreState handler (line 2) returns BODY.
hook() {
	printf -- "-- settings\nreturn { PreState = function(ev)\n  return %s\nend }\n" "$1" >wf/hooks.lua
}

test_expect_success 'a PreState hook replaces every setting; the hook sees the frontmatter'"'"'s in ev.invocation' '
	use_fake &&
	start_with_settings &&
	printf "{\"mcpServers\": {}}\n" >wf/other.json &&
	cat >wf/hooks.lua <<-\EOS &&
	-- settings
	return { PreState = function(ev)
	  local inv = ev.invocation
	  return { allowedTools = { inv.allowed_tools[1], "Grep" }, disallowedTools = { "Bash" },
	           permissionMode = inv.permission_mode == "plan" and "dontAsk" or "default",
	           mcpConfig = "other.json", appendSystemPrompt = "from the hook", maxTurns = inv.max_turns * 2 }
	end }
	EOS
	raymond wf >out 2>err &&
	grep -qx ok out &&
	argv_has 1 --permission-mode dontAsk &&
	argv_has 1 --allowedTools Read Grep --mcp-config "{\"mcpServers\": {}}" \
		--append-system-prompt=from\ the\ hook --max-turns 10 \
		--disallowed-tools EnterPlanMode,ExitPlanMode,AskUserQuestion,NotebookEdit Bash -- &&
	grep -aF "[main] wf/hooks.lua:2 PreState: set allowedTools = {\"Read\", \"Grep\"}, appendSystemPrompt = \"from the hook\", disallowedTools = {\"Bash\"}, maxTurns = 10, mcpConfig = \"other.json\", permissionMode = \"dontAsk\"" .raymond/debug/*.record
'

test_expect_success 'a bad value from a hook names the hook file and line; nothing runs' '
	use_fake &&
	start_with_settings &&
	for bad in "{ maxTurns = 0 }|PreState decision field '"'"'maxTurns'"'"' must be a whole number of turns from 1 to 1000000, got 0" \
		"{ permissionMode = \"ask\" }|PreState decision field '"'"'permissionMode'"'"' must be one of acceptEdits, auto, bypassPermissions, default, dontAsk, plan, got '"'"'ask'"'"'" \
		"{ allowedTools = { \"Bsh\" } }|PreState decision field '"'"'allowedTools'"'"' names an unknown tool '"'"'Bsh'"'"'; did you mean Bash?" \
		"{ allowedTools = \"Read\" }|PreState decision field '"'"'allowedTools'"'"' should be a table, got string" \
		"{ mcpConfig = \"../x.json\" }|PreState decision field '"'"'mcpConfig'"'"' must be the path of a JSON file of the workflow, relative to the state'"'"'s folder (e.g. servers.json), got '"'"'../x.json'"'"'" \
		"{ mcpConfig = \"gone.json\" }|wf/hooks.lua:2: PreState decision field '"'"'mcpConfig'"'"' names no file '"'"'gone.json'"'"' of the workflow (the path is relative to the state'"'"'s folder)"; do
		hook "${bad%%|*}" &&
		rm -rf .raymond &&
		expect_status 1 raymond wf --no-lint >out 2>err &&
		has "wf/hooks.lua:2: " <err &&
		has "${bad#*|}" <err &&
		test ! -e fake/log.jsonl || { echo "for $bad"; return 1; }
	done
'

test_expect_success 'a file that says on_error = "warn": a missing mcpConfig file is reported, the frontmatter'"'"'s used' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	mcp_config: servers.json
	---
	MOCK: reply <result>ok</result>
	EOS
	echo "{\"mcpServers\": {\"own\": {}}}" >wf/servers.json &&
	printf -- "-- settings\nreturn { on_error = \"warn\", PreState = function(ev)\n  return { mcpConfig = \"gone.json\", maxTurns = 4 }\nend }\n" >wf/hooks.lua &&
	raymond wf --no-lint >out 2>err &&
	grep -qx ok out &&
	has "raymond: warning: " <err &&
	has "wf/hooks.lua:2: PreState decision field '"'"'mcpConfig'"'"' names no file '"'"'gone.json'"'"' of the workflow (the path is relative to the state'"'"'s folder) (ignored: the file says on_error = \"warn\")" <err &&
	log 1 | has "\"--mcp-config\",\"{\\\"mcpServers\\\": {\\\"own\\\": {}}}\",\"--max-turns\",\"4\""
'

test_expect_success 'raymond lint, and so a run, finds a bad literal setting in a hook, with its line' '
	use_fake &&
	start_with_settings &&
	hook "{ maxTurns = -1 }" &&
	expect_status 1 raymond lint wf >out 2>err &&
	has "wf/hooks.lua:3: error: PreState decision field '"'"'maxTurns'"'"' must be a whole number of turns from 1 to 1000000, got -1 [hook-decision]" <out &&
	hook "{ mcpConfig = \"gone.json\" }" &&
	expect_status 1 raymond lint wf >out 2>err &&
	has "wf/hooks.lua:3: error: PreState decision field '"'"'mcpConfig'"'"' names no file '"'"'gone.json'"'"' of the workflow (the path is relative to the state'"'"'s folder) [hook-decision]" <out &&
	expect_status 1 raymond wf >out 2>err &&
	has "wf/hooks.lua:3: error: PreState decision field '"'"'mcpConfig'"'"' names no file" <err &&
	test ! -e fake/log.jsonl &&
	echo "{\"mcpServers\": {}}" >wf/gone.json &&
	raymond lint wf >out 2>err
'

test_done
