#!/bin/bash
# mcp_config in a workflow archive: the file is read from the archive, as
# the states are, by a run, by a PreState hook's mcpConfig and by lint.
. "$(dirname "$0")/lib.sh"

unset CLAUDECODE IS_SANDBOX

MKZIP="$(dirname "$RAYMOND")/tests/mkzip"

has() { _in=$(cat) && { printf "%s\n" "$_in" | grep -qF -e "$1" || { echo "no '$1' in:"; printf "%s\n" "$_in"; false; }; }; }

# flow/START.md: a state whose line 2 names servers.json.
make_flow() {
	mkdir -p flow &&
	printf -- "---\nmcp_config: servers.json\n---\nMOCK: reply <result>zip ok</result>\n" >flow/START.md &&
	printf "{\"mcpServers\": {\"zipped\": {\"command\": \"srv\"}}}\n" >flow/servers.json
}

test_expect_success 'a single-folder archive: the MCP configuration inside it reaches the CLI' '
	use_fake &&
	make_flow &&
	"$MKZIP" flow.zip flow/ flow/START.md=flow/START.md flow/servers.json=flow/servers.json &&
	rm -r flow &&
	raymond lint flow.zip >out 2>err &&
	raymond flow.zip >out 2>err &&
	grep -qx "zip ok" out &&
	has "\"--mcp-config\",\"{\\\"mcpServers\\\": {\\\"zipped\\\": {\\\"command\\\": \\\"srv\\\"}}}\",\"--disallowed-tools\"" <fake/log.jsonl
'

test_expect_success 'a PreState hook inside a flat archive points mcpConfig at another file of it' '
	use_fake &&
	make_flow &&
	printf "{\"mcpServers\": {\"other\": {\"command\": \"o\"}}}\n" >flow/other.json &&
	printf "return { PreState = function(ev) return { mcpConfig = \"other.json\" } end }\n" >flow/hooks.lua &&
	"$MKZIP" flat.zip START.md=flow/START.md servers.json=flow/servers.json other.json=flow/other.json \
		hooks.lua=flow/hooks.lua &&
	raymond flat.zip >out 2>err &&
	grep -qx "zip ok" out &&
	has "\"--mcp-config\",\"{\\\"mcpServers\\\": {\\\"other\\\": {\\\"command\\\": \\\"o\\\"}}}\"" <fake/log.jsonl
'

test_expect_success 'an archive without the file is refused by lint and by a run, naming the state and line' '
	use_fake &&
	make_flow &&
	"$MKZIP" flow.zip flow/ flow/START.md=flow/START.md &&
	cp flow/servers.json . &&
	expect_status 1 raymond lint flow.zip >out 2>err &&
	has "flow.zip/START.md:2: error: mcp_config names no file '"'"'servers.json'"'"' of the workflow (the path is relative to the state'"'"'s folder) [invalid-mcp-config]" <out &&
	expect_status 1 raymond flow.zip >out 2>err &&
	has "flow.zip/START.md:2: error: mcp_config names no file '"'"'servers.json'"'"' of the workflow" <err &&
	has "raymond: error: flow.zip has 1 error; the run was not started" <err &&
	test ! -e fake/log.jsonl
'

test_done
