/*
 * fuzz_claude.c - the stream-json reader of lua/raymond/claude.lua, in the
 * real Lua host.
 *
 * The input is what the Claude Code CLI printed on stdout.  It is cut into
 * lines as lua_sched.c cuts it (at LF, one CR before the LF dropped, a
 * last line without LF handed on at the end), each line goes to
 * reader.line in a protected call, and then claude.outcome classifies the
 * invocation, as if the CLI had exited with status 0 and, a second time,
 * with status 1 and some stderr.  Neither may ever raise: the reader meets
 * whatever a broken or hostile CLI prints.  The outcome must also have
 * the shape markdown.lua relies on: a known kind, a text, a message when
 * it is not ok, a cost that is a finite number of 0 or more (it is added
 * to the run's cost, which the state file must hold), and for a usage
 * limit a reset time that os.date can show, as markdown.lua does with it.
 */
#include "luafuzz.h"

#include <string.h>

static const char driver[] =
"local claude = require('raymond.claude')\n"
"local kinds = { ok = true, transient = true, limit = true, session = true,\n"
"                fatal = true, budget = true }\n"
"local M = {}\n"
"-- The reader as markdown.lua makes it, with its progress callback.\n"
"function M.reader()\n"
"  return claude.reader(function(text)\n"
"    for line in text:gmatch('[^\\n]+') do local _ = string.format('[%s] %s', 'main', line) end\n"
"  end)\n"
"end\n"
"local function check(out, res)\n"
"  local function bad(what) error('outcome for exit ' .. res.exit .. ': ' .. what, 0) end\n"
"  if type(out) ~= 'table' then bad('not a table') end\n"
"  if not kinds[out.kind] then bad('kind ' .. tostring(out.kind)) end\n"
"  if type(out.text) ~= 'string' then bad('text is a ' .. type(out.text)) end\n"
"  if type(out.cost) ~= 'number' then bad('cost is a ' .. type(out.cost)) end\n"
"  if out.session ~= nil and type(out.session) ~= 'string' then bad('session is a ' .. type(out.session)) end\n"
"  if out.kind ~= 'ok' and type(out.msg) ~= 'string' then bad('msg is a ' .. type(out.msg)) end\n"
"  if out.reset ~= nil and type(out.reset) ~= 'number' then bad('reset is a ' .. type(out.reset)) end\n"
"  if out.cost ~= out.cost or out.cost < 0 or out.cost == math.huge then\n"
"    bad('cost is ' .. tostring(out.cost)) end\n"
"  if out.kind == 'limit' then\n"
"    -- markdown.lua: the reset, and the reset plus the margin, as dates.\n"
"    local reset = out.reset or (os.time() + 3600)\n"
"    local ok, err = pcall(function()\n"
"      os.date('!%Y-%m-%d %H:%M', math.floor(reset))\n"
"      os.date('!%Y-%m-%d %H:%M:%S', math.floor(reset + 300))\n"
"    end)\n"
"    if not ok then bad('reset ' .. tostring(reset) .. ' cannot be shown: ' .. tostring(err)) end\n"
"  end\n"
"end\n"
"function M.outcome(reader)\n"
"  local res = { exit = 0, duration = 0.5 }\n"
"  check(claude.outcome(res, reader), res)\n"
"  res = { exit = 1, duration = 0.5, stderr_tail = 'Error: something failed\\n' }\n"
"  check(claude.outcome(res, reader), res)\n"
"end\n"
"return M\n";

/* reader.line(s, unterminated) for one line, as call_line() in
 * lua_sched.c does it. */
static void
line(lua_State *L, int reader, const char *s, size_t n, int unterminated)
{
	if (n > 0 && s[n - 1] == '\r')
		n--;
	lua_getfield(L, reader, "line");
	lua_pushlstring(L, s, n);
	lua_pushboolean(L, unterminated);
	if (ray__pcall(L, 2, 0) != LUA_OK)
		luafuzz_fail(L, "reader.line");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lua_State *L = luafuzz_driver(driver, sizeof(driver) - 1, "=fuzz_claude",
	    "fuzz.claude");
	const char *s = (const char *)data, *nl;
	int top = lua_gettop(L), reader;
	static unsigned long runs;

	luafuzz_cover(L, 1);
	lua_getfield(L, LUA_REGISTRYINDEX, "fuzz.claude");
	lua_getfield(L, -1, "reader");
	if (ray__pcall(L, 0, 1) != LUA_OK)
		luafuzz_fail(L, "claude.reader");
	reader = lua_gettop(L);
	while ((nl = memchr(s, '\n', size)) != NULL) {
		line(L, reader, s, (size_t)(nl - s), 0);
		size -= (size_t)(nl - s) + 1;
		s = nl + 1;
	}
	if (size > 0)
		line(L, reader, s, size, 1);
	lua_getfield(L, -2, "outcome");
	lua_pushvalue(L, reader);
	if (ray__pcall(L, 1, 0) != LUA_OK)
		luafuzz_fail(L, "claude.outcome");
	luafuzz_cover(L, 0);
	lua_pop(L, 2);
	if (lua_gettop(L) != top) {
		fprintf(stderr, "Lua stack: %d slots before, %d after\n", top,
		    lua_gettop(L));
		abort();
	}
	if (++runs % 4096 == 0)
		lua_gc(L, LUA_GCCOLLECT);
	return 0;
}
