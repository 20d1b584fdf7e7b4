/*
 * luafuzz.h - the real raymond Lua host for the fuzz targets that drive
 * engine modules (fuzz_claude.c, fuzz_runstate.c).
 *
 *	lua_State *L = luafuzz_host();	created once, on first use
 *	L = luafuzz_driver(src, len, "=name", "fuzz.name");  with a driver
 *	luafuzz_cover(L, 1);		... call into Lua ...
 *	luafuzz_cover(L, 0);
 *	luafuzz_fail(L, "what");	a Lua error is a bug: report, abort
 *
 * The host is the one raymond runs (ray_host_open): the embedded engine
 * modules, the `raymond` module and lua-cjson.  Its SIGINT and SIGTERM
 * handlers are taken back out, so that Ctrl-C still stops libFuzzer.
 *
 * Coverage of Lua code.  liblua is not instrumented, so libFuzzer would see
 * none of the branches taken in a .lua file.  While luafuzz_cover(L, 1) is
 * on, a line hook marks each pair (previous line, this line) of Lua code
 * in libFuzzer's extra counters, the way AFL marks edges, so inputs that
 * take new paths through the engine's Lua code are kept.
 */
#ifndef RAY_LUAFUZZ_H
#define RAY_LUAFUZZ_H

#include "lua_host.h"

#include <lauxlib.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <uv.h>

#define LUAFUZZ_EDGES (1u << 14)

__attribute__((section("__libfuzzer_extra_counters"), used))
static uint8_t luafuzz_edges[LUAFUZZ_EDGES];
static uintptr_t luafuzz_prev;

static inline void
luafuzz_line(lua_State *L, lua_Debug *ar)
{
	uintptr_t here;

	if (!lua_getinfo(L, "S", ar))
		return;
	/* The source string lives as long as the loaded module. */
	here = ((uintptr_t)ar->source >> 4) * 2654435761u +
	    (uintptr_t)ar->currentline;
	here ^= here >> 15;
	luafuzz_edges[(here ^ luafuzz_prev) & (LUAFUZZ_EDGES - 1)]++;
	luafuzz_prev = here >> 1;
}

static inline void
luafuzz_cover(lua_State *L, int on)
{
	luafuzz_prev = 0;
	lua_sethook(L, on ? luafuzz_line : NULL, on ? LUA_MASKLINE : 0, 0);
}

static inline lua_State *
luafuzz_host(void)
{
	static struct ray_host *h;
	struct sigaction oint, oterm;
	struct ray_err err;

	if (h != NULL)
		return ray_host_lua(h);
	sigaction(SIGINT, NULL, &oint);
	sigaction(SIGTERM, NULL, &oterm);
	if (ray_host_open(uv_default_loop(), &h, &err) < 0) {
		fprintf(stderr, "fuzz: cannot open the Lua host: %s\n",
		    err.msg);
		abort();
	}
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGTERM, &oterm, NULL);
	return ray_host_lua(h);
}

/* A Lua error while handling an input is a bug: report it and abort. */
static inline void
luafuzz_fail(lua_State *L, const char *what)
{
	fprintf(stderr, "==fuzz== %s raised a Lua error:\n%s\n", what,
	    lua_tostring(L, -1) ? lua_tostring(L, -1) : "(not a string)");
	abort();
}

/*
 * Load the target's Lua driver (a chunk returning its table) once, keep it
 * in the registry under `key`, and return the host with the driver there.
 */
static inline lua_State *
luafuzz_driver(const char *driver, size_t len, const char *chunk, const char *key)
{
	static lua_State *L;

	if (L != NULL)
		return L;
	L = luafuzz_host();
	if (luaL_loadbufferx(L, driver, len, chunk, "t") != LUA_OK)
		luafuzz_fail(L, "loading the driver");
	if (ray__pcall(L, 0, 1) != LUA_OK)
		luafuzz_fail(L, "the driver");
	lua_setfield(L, LUA_REGISTRYINDEX, key);
	return L;
}

#endif
