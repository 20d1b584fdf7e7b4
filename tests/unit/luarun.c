/*
 * luarun.c - run a Lua test file inside the raymond host.
 *
 * usage: luarun HARNESS.lua FILE.lua
 *
 * HARNESS (tests/lua/testing.lua) is loaded as the module "testing".  The
 * file then runs as a coroutine with the `raymond` module and the engine's
 * modules available (require "raymond.transition"), on a real event loop,
 * so it can spawn processes.  It reports with PASS/FAIL lines like the C
 * tests; a Lua error escaping the file counts as a failure of the file.
 * The global fail_alloc(n) makes the n-th allocation from now fail, for
 * tests of the C functions' error paths.
 */
#include "lua_priv.h"

#include <lauxlib.h>
#include <signal.h>
#include <stdio.h>

static struct ray_host *host;

/*
 * fail_alloc(n): refuse the n-th allocation from now (0 turns it off);
 * returns how many were left to go before the call, so a test can tell
 * whether the refusal happened.
 */
static int
fail_alloc(lua_State *L)
{
	long left = host->fail_countdown;

	host->fail_countdown = (long)luaL_checkinteger(L, 1);
	lua_pushinteger(L, left);
	return 1;
}

int
main(int argc, char **argv)
{
	uv_loop_t *loop = uv_default_loop();
	struct ray_host *h;
	struct ray_err err;
	lua_State *L;

	if (argc != 3) {
		fprintf(stderr, "usage: luarun HARNESS.lua FILE.lua\n");
		return 2;
	}
	/* As raymond: a child that leaves its input unread must not kill us. */
	signal(SIGPIPE, SIG_IGN);
	if (ray_host_open(loop, &h, &err) < 0) {
		fprintf(stderr, "luarun: %s\n", err.msg);
		return 2;
	}
	L = ray_host_lua(h);
	host = h;
	lua_register(L, "fail_alloc", fail_alloc);
	if (luaL_dofile(L, argv[1]) != LUA_OK) {
		printf("FAIL %s: %s\n", argv[1], lua_tostring(L, -1));
		return 1;
	}
	lua_getglobal(L, "package");
	lua_getfield(L, -1, "loaded");
	lua_pushvalue(L, -3);
	lua_setfield(L, -2, "testing");
	lua_pop(L, 3);
	lua_getglobal(L, "require");
	lua_pushliteral(L, "raymond");
	lua_call(L, 1, 1);
	lua_getfield(L, -1, "go");
	if (luaL_loadfile(L, argv[2]) != LUA_OK) {
		printf("FAIL %s: %s\n", argv[2], lua_tostring(L, -1));
		return 1;
	}
	if (ray__pcall(L, 1, 0) != LUA_OK) {
		printf("FAIL %s: %s\n", argv[2], lua_tostring(L, -1));
		return 1;
	}
	uv_run(loop, UV_RUN_DEFAULT);
	return ray_host_finish(h, "testing", "finish");
}
