/*
 * test_strlib.c - lua_strlib.c against Lua's own string functions.
 *
 * A plain Lua state (no host, so no hook call and no limit) keeps Lua's
 * string.find, match, gmatch, gsub and rep in the global `lua_string`,
 * then gets ours installed in `string` as the host does, and runs
 * tests/lua/strlib_diff.lua (under $TESTS_TOP, or the current directory),
 * which compares the two over generated and hand-picked subjects and
 * patterns and prints PASS/FAIL lines.  Lua's originals exist only here.
 */
#include "lua_priv.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main(void)
{
	const char *top = getenv("TESTS_TOP");
	const char *names[] = { "find", "match", "gmatch", "gsub", "rep", NULL };
	char path[4096];
	lua_State *L = luaL_newstate();
	int i, r;

	memset(lua_getextraspace(L), 0, LUA_EXTRASPACE);
	luaL_openlibs(L);
	lua_newtable(L);
	lua_getglobal(L, "string");
	for (i = 0; names[i]; i++) {
		lua_getfield(L, -1, names[i]);
		lua_setfield(L, -3, names[i]);
	}
	lua_pop(L, 1);
	lua_setglobal(L, "lua_string");
	ray__strlib_install(L);
	snprintf(path, sizeof(path), "%s/tests/lua/strlib_diff.lua", top ? top : ".");
	r = luaL_dofile(L, path);
	if (r != LUA_OK)
		printf("FAIL strlib_diff.lua: %s\n", lua_tostring(L, -1));
	lua_close(L);
	return r == LUA_OK ? 0 : 1;
}
