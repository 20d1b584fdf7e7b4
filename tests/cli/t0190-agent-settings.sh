#!/bin/bash
# Per-state agent settings in frontmatter reach the Claude Code CLI's
# command line (docs/authoring.md): allowed_tools, disallowed_tools (after
# raymond's own), permission_mode (instead of the run's default),
# mcp_config (the file's JSON text), append_system_prompt (placeholders
# filled in) and max_turns, all before the `--` that ends the options.
. "$(dirname "$0")/lib.sh"

export RAYMOND_RETRY_DELAY=0.05
unset CLAUDECODE IS_SANDBOX

has() { _in=$(cat) && { printf "%s\n" "$_in" | grep -qF -e "$1" || { echo "no '$1' in:"; printf "%s\n" "$_in"; false; }; }; }
lacks() { _in=$(cat) && { ! printf "%s\n" "$_in" | grep -qF -e "$1" || { echo "unexpected '$1' in:"; printf "%s\n" "$_in"; false; }; }; }

# log N: the fake's N-th invocation.
log() { sed -n "${1}p" fake/log.jsonl; }

# argv_has N WORD...: invocation N's argv holds the WORDs one after another.
argv_has() {
	_n=$1; shift; _want=
	for _w in "$@"; do _want="$_want\"$(printf '%s' "$_w" | sed 's/\\/\\\\/g; s/"/\\"/g')\","; done
	log "$_n" | has "${_want%,}"
}

RAYMONDS_OWN=EnterPlanMode,ExitPlanMode,AskUserQuestion,NotebookEdit

# NEXT.md: a state without settings that ends the run.
next_state() {
	state NEXT.md <<-\EOS
	I am NEXT
	MOCK: reply <result>done</result>
	EOS
}

test_expect_success 'every setting of the frontmatter reaches the CLI, before --; the next state has none' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_tools: [Read, "Bash(git log:*)", "mcp__github__*"]
	disallowed_tools: [WebFetch, "Bash(rm -rf:*)"]
	permission_mode: plan
	mcp_config: servers.json
	append_system_prompt: "Answer as {{agent_id}}, about {{input}}."
	max_turns: 7
	---
	I am START
	MOCK: reply <goto>NEXT</goto>
	EOS
	printf "{\"mcpServers\": {\"github\": {\"command\": \"gh-mcp\"}}}\n" >wf/servers.json &&
	next_state &&
	raymond wf --input "the input" >out 2>err &&
	grep -qx done out &&
	calls 2 &&
	argv_has 1 --verbose --permission-mode plan --session-id &&
	argv_has 1 --allowedTools Read "Bash(git log:*)" "mcp__github__*" \
		--mcp-config "{\"mcpServers\": {\"github\": {\"command\": \"gh-mcp\"}}}" \
		"--append-system-prompt=Answer as main, about the input." --max-turns 7 \
		--disallowed-tools $RAYMONDS_OWN WebFetch "Bash(rm -rf:*)" -- &&
	log 1 | lacks acceptEdits &&
	argv_has 2 --permission-mode acceptEdits &&
	argv_has 2 --disallowed-tools $RAYMONDS_OWN -- &&
	for o in --allowedTools --mcp-config --append-system-prompt --max-turns plan; do
		log 2 | lacks "\"$o" || return 1
	done
'

test_expect_success 'a comma-separated string of tools, a rule holding a comma, a text beginning with -' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_tools: Read, Grep ,Bash(git diff:*, git log:*)
	disallowed_tools: WebSearch
	append_system_prompt: "- keep it short"
	---
	MOCK: reply <result>ok</result>
	EOS
	raymond wf >out 2>err &&
	grep -qx ok out &&
	argv_has 1 --allowedTools Read Grep "Bash(git diff:*, git log:*)" "--append-system-prompt=- keep it short" \
		--disallowed-tools $RAYMONDS_OWN WebSearch --
'

test_expect_success 'with no hook at all (--no-default-hooks) the settings reach the CLI all the same' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_tools: Read
	max_turns: 2
	---
	MOCK: reply <result>ok</result>
	EOS
	raymond wf --no-default-hooks >out 2>err &&
	grep -qx ok out &&
	argv_has 1 --allowedTools Read --max-turns 2 --disallowed-tools
'

test_expect_success 'permission_mode replaces --dangerously-skip-permissions for its own state only' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	permission_mode: acceptEdits
	---
	MOCK: reply <goto>NEXT</goto>
	EOS
	next_state &&
	IS_SANDBOX=1 raymond --dangerously-skip-permissions wf >out 2>err &&
	grep -qx done out &&
	argv_has 1 --verbose --permission-mode acceptEdits --session-id &&
	log 1 | lacks dangerously &&
	argv_has 2 --verbose --dangerously-skip-permissions --resume
'

test_expect_success 'permission_mode: bypassPermissions as root is refused by the CLI once, with a hint naming it' '
	if [ "$(id -u)" != 0 ]; then echo "not root: nothing to refuse"; exit 0; fi &&
	use_fake &&
	state START.md <<-\EOS &&
	---
	permission_mode: bypassPermissions
	---
	MOCK: reply <result>never</result>
	EOS
	expect_status 1 raymond wf >out 2>err &&
	has "the Claude Code CLI refused to start: --dangerously-skip-permissions cannot be used with root/sudo privileges" <err &&
	has "hint: run raymond as a user other than root, or without --dangerously-skip-permissions and a state'"'"'s permission_mode: bypassPermissions (inside a container or sandbox, set IS_SANDBOX=1)" <err &&
	lacks retrying <err &&
	IS_SANDBOX=1 raymond --resume "$(run_id)" >out 2>err &&
	grep -qx never out &&
	argv_has 1 --verbose --permission-mode bypassPermissions --session-id
'

test_expect_success 'a reminder re-prompt runs under the same settings' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_transitions:
	  - { tag: result, payload: yes }
	allowed_tools: [Read]
	max_turns: 3
	---
	MOCK: reply <result>no</result> || reply <result>yes</result>
	EOS
	raymond wf >out 2>err &&
	grep -qx yes out &&
	calls 2 &&
	log 2 | has "REMINDER" &&
	argv_has 2 --allowedTools Read --max-turns 3 --disallowed-tools
'

test_done
