/*
 * test_boundary.c - run tests/lua/test_boundary.lua in a Lua state whose
 * refused allocations surface as errors.
 *
 * When an allocation fails, Lua runs an emergency collection and tries
 * once more.  The host's fail_alloc (luarun) refuses only the first try,
 * so the retry succeeds and the call goes on as if nothing happened.
 * Here fail_alloc(n) refuses the n-th allocation that grows memory and
 * the one right after it, which is that retry, so each refusal raises
 * "not enough memory" at the point the C function made it.  The state
 * holds just the raymond module of lua_api.c (no scheduler), which is
 * all the test calls; lua_close() at the end runs every finalizer, so
 * what LeakSanitizer reports was lost when an error unwound past it.
 */
#include "lua_host.h"
#include "ray.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>

/* Growing allocations left before the refusal; 0: none planned. */
static long countdown;
/* Refusals still to make: the planned one and Lua's retry of it. */
static int refusing;

static void *
alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	size_t old = ptr ? osize : 0;

	UNUSED(ud);
	if (nsize == 0) {
		free(ptr);
		return NULL;
	}
	if (nsize > old && refusing > 0) {
		refusing--;
		return NULL;
	}
	if (nsize > old && countdown > 0 && --countdown == 0) {
		refusing = 1;
		return NULL;
	}
	return realloc(ptr, nsize);
}

/* fail_alloc(n) as luarun has it: returns the countdown that was left. */
static int
fail_alloc(lua_State *L)
{
	long left = countdown;

	countdown = (long)luaL_checkinteger(L, 1);
	refusing = 0;
	lua_pushinteger(L, left);
	return 1;
}

static int
traceback(lua_State *L)
{
	luaL_traceback(L, L, lua_tostring(L, 1), 1);
	return 1;
}

int
main(void)
{
	const char *top = getenv("TESTS_TOP");
	char harness[4096], file[4096];
	lua_State *L = lua_newstate(alloc, NULL);
	int rc = 1;

	if (L == NULL) {
		printf("FAIL test_boundary: cannot make a Lua state\n");
		return 1;
	}
	if (top == NULL)
		top = ".";
	snprintf(harness, sizeof(harness), "%s/tests/lua/testing.lua", top);
	snprintf(file, sizeof(file), "%s/tests/lua/test_boundary.lua", top);
	luaL_openlibs(L);
	lua_register(L, "fail_alloc", fail_alloc);
	lua_pushboolean(L, 1);
	lua_setglobal(L, "REFUSALS_RAISE");

	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
	lua_newtable(L);
	ray__api_register(L, NULL);
	lua_setfield(L, -2, "raymond");
	if (luaL_dofile(L, harness) != LUA_OK) {
		printf("FAIL test_boundary: %s\n", lua_tostring(L, -1));
		goto out;
	}
	lua_setfield(L, -2, "testing");
	lua_pop(L, 1);

	lua_pushcfunction(L, traceback);
	if (luaL_loadfile(L, file) != LUA_OK ||
	    lua_pcall(L, 0, 0, -2) != LUA_OK) {
		printf("FAIL test_boundary: %s\n", lua_tostring(L, -1));
		goto out;
	}
	lua_settop(L, 0);
	lua_getglobal(L, "require");
	lua_pushliteral(L, "testing");
	lua_call(L, 1, 1);
	lua_getfield(L, -1, "finish");
	lua_call(L, 0, 1);
	rc = (int)lua_tointeger(L, -1);

out:
	lua_close(L);
	return rc;
}
