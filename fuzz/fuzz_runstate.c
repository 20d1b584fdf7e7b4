/*
 * fuzz_runstate.c - loading a state file: runstate.decode() of
 * lua/raymond/runstate.lua, in the real Lua host.
 *
 * The input is the text of .raymond/state/<id>.json.  decode(text,
 * "fuzz.json") must return a record, or nil and a message naming the
 * file; it must never raise.  A record it accepts is written again with
 * raymond.json_encode (as runstate.save does, without the clock) and read
 * back: writing must succeed (a record that cannot be saved would fail the
 * resumed run at its first step), reading back too, and the text must
 * come out the same, so a resumed run keeps its state byte for byte, keys
 * with NUL bytes included.

 */
#include "luafuzz.h"

#include <string.h>

static const char driver[] =
"local raymond = require('raymond')\n"
"local runstate = require('raymond.runstate')\n"
"return function(text)\n"
"  local run, msg = runstate.decode(text, 'fuzz.json')\n"
"  if run == nil then\n"
"    if type(msg) ~= 'string' or not msg:find('fuzz.json', 1, true) then\n"
"      error('decode failed without a message naming the file: ' .. tostring(msg), 0)\n"
"    end\n"
"    return\n"
"  end\n"
"  if type(run) ~= 'table' then error('decode returned a ' .. type(run), 0) end\n"
"  local t1, err = raymond.json_encode(run)\n"
"  if not t1 then error('an accepted record cannot be saved again: ' .. tostring(err), 0) end\n"
"  local run2, msg2 = runstate.decode(t1, 'fuzz.json')\n"
"  if not run2 then error('a saved record does not load: ' .. tostring(msg2) .. '\\n' .. t1, 0) end\n"
"  local t2, err2 = raymond.json_encode(run2)\n"
"  if t2 ~= t1 then\n"
"    error('saving a loaded record changed it:\\n' .. t1 .. '\\n' .. tostring(t2 or err2), 0)\n"
"  end\n"
"end\n";

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lua_State *L = luafuzz_driver(driver, sizeof(driver) - 1, "=fuzz_runstate",
	    "fuzz.runstate");
	int top = lua_gettop(L);
	static unsigned long runs;

	luafuzz_cover(L, 1);
	lua_getfield(L, LUA_REGISTRYINDEX, "fuzz.runstate");
	lua_pushlstring(L, (const char *)data, size);
	if (ray__pcall(L, 1, 0) != LUA_OK)
		luafuzz_fail(L, "runstate.decode");
	luafuzz_cover(L, 0);
	if (lua_gettop(L) != top) {
		fprintf(stderr, "Lua stack: %d slots before, %d after\n", top,
		    lua_gettop(L));
		abort();
	}
	if (++runs % 4096 == 0)
		lua_gc(L, LUA_GCCOLLECT);
	return 0;
}
