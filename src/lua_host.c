/*
 * lua_host.c - create the Lua state, load the engine's modules, and run
 * the engine's entry points (see lua_host.h).
 *
 * Modules come from the table compiled into the binary (embedded.h).  For
 * development, RAYMOND_LUA_DIR=dir makes `require "raymond.x"` read
 * dir/raymond/x.lua instead, so the engine can be edited without a rebuild.
 * Nothing else is ever loaded from the file system by `require`.
 */
#include "lua_priv.h"
#include "embedded.h"

#include <lauxlib.h>
#include <lua-cjson.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int
ray__traceback(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);

	if (msg == NULL) {
		if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
			return 1;
		msg = lua_pushfstring(L, "(error object is a %s value)",
		    luaL_typename(L, 1));
	}
	luaL_traceback(L, L, msg, 1);
	return 1;
}

int
ray__pcall(lua_State *L, int nargs, int nres)
{
	int base = lua_gettop(L) - nargs;
	int r;

	lua_pushcfunction(L, ray__traceback);
	lua_insert(L, base);
	r = lua_pcall(L, nargs, nres, base);
	lua_remove(L, base);
	return r;
}

/* Load dir/raymond/x.lua when RAYMOND_LUA_DIR is set and the file exists. */
static int
load_override(lua_State *L, const char *name)
{
	const char *dir = getenv("RAYMOND_LUA_DIR");
	luaL_Buffer b;
	struct stat st;
	const char *path;
	const char *c;

	if (dir == NULL || *dir == '\0')
		return 0;
	luaL_buffinit(L, &b);
	luaL_addstring(&b, dir);
	luaL_addchar(&b, '/');
	for (c = name; *c; c++)
		luaL_addchar(&b, *c == '.' ? '/' : *c);
	luaL_addstring(&b, ".lua");
	luaL_pushresult(&b);
	path = lua_tostring(L, -1);
	if (stat(path, &st) != 0) {
		lua_pop(L, 1);
		return 0;
	}
	if (luaL_loadfilex(L, path, "t") != LUA_OK)
		return lua_error(L);
	lua_remove(L, -2);
	return 1;
}

/* package.searchers entry: the embedded modules. */
static int
search_embedded(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	size_t i;

	if (load_override(L, name))
		return 1;
	for (i = 0; i < ray_embedded_count; i++) {
		const struct ray_embedded *e = &ray_embedded_files[i];
		char chunk[256];
		const char *c;
		size_t n = 0;

		if (strcmp(e->name, name) != 0)
			continue;
		/* Name the chunk after its source file for tracebacks; a
		 * module embedded as bytecode carries the same name. */
		n += (size_t)snprintf(chunk, sizeof(chunk), "@lua/");
		for (c = name; *c && n + 6 < sizeof(chunk); c++)
			chunk[n++] = *c == '.' ? '/' : *c;
		snprintf(chunk + n, sizeof(chunk) - n, ".lua");
		if (luaL_loadbufferx(L, e->data, e->len, chunk, "bt") != LUA_OK)
			return lua_error(L);
		return 1;
	}
	lua_pushfstring(L, "no embedded module '%s'", name);
	return 1;
}

static void
install_searcher(lua_State *L)
{
	lua_getglobal(L, "package");
	lua_createtable(L, 2, 0);
	lua_getfield(L, -2, "searchers");
	lua_rawgeti(L, -1, 1);	/* keep the preload searcher */
	lua_rawseti(L, -3, 1);
	lua_pop(L, 1);
	lua_pushcfunction(L, search_embedded);
	lua_rawseti(L, -2, 2);
	lua_setfield(L, -2, "searchers");
	lua_pushliteral(L, "");
	lua_setfield(L, -2, "path");
	lua_pushliteral(L, "");
	lua_setfield(L, -2, "cpath");
	lua_pop(L, 1);
}

/* Build the `raymond` table and make it requirable. */
static void
install_api(lua_State *L, struct ray_host *h)
{
	lua_newtable(L);
	ray__sched_register(L, h);
	ray__api_register(L, h);
	ray__limit_register(L, h);
	ray__record_register(L);
	ray__bridge_register(L);
	ray__http_register(L);
	ray__watch_register(L);
	ray__lease_register(L);
	luaL_requiref(L, "cjson", luaopen_cjson, 0);
	lua_setfield(L, -2, "cjson");
	lua_getglobal(L, "package");
	lua_getfield(L, -1, "loaded");
	lua_pushvalue(L, -3);
	lua_setfield(L, -2, "raymond");
	lua_pop(L, 3);
}

/*
 * The allocator of the Lua state: a realloc that keeps count and refuses
 * to grow past mem_limit.  Lua answers a refusal with an emergency
 * collection and then a "not enough memory" error, which stops the hook
 * (or engine step) that asked, not the process.
 */
static void *
limited_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	struct ray_host *h = ud;
	size_t old = ptr ? osize : 0;	/* without ptr, osize is a type tag */
	void *p;

	if (nsize == 0) {
		free(ptr);
		h->mem_used -= old;
		return NULL;
	}
	if (nsize > old && (h->fail_retry ||
	    (h->fail_countdown > 0 && --h->fail_countdown == 0))) {
		/* Lua retries once after an emergency collection: refuse that too. */
		h->fail_retry = !h->fail_retry;
		h->mem_refused = 1;
		return NULL;
	}
	if (h->mem_limit && nsize > old && h->mem_used + (nsize - old) > h->mem_limit) {
		h->mem_refused = 1;
		return NULL;
	}
	p = realloc(ptr, nsize);
	if (p == NULL)
		return NULL;
	h->mem_used = h->mem_used - old + nsize;
	return p;
}

static int
panic(lua_State *L)
{
	fprintf(stderr, "raymond: internal error: Lua panic: %s\n", lua_tostring(L, -1));
	return 0;	/* abort() follows */
}

/* RAYMOND_LUA_MEMORY_MB caps the Lua state; the default is 512 MiB. */
static size_t
memory_limit(void)
{
	const char *s = getenv("RAYMOND_LUA_MEMORY_MB");
	long mb = s ? strtol(s, NULL, 10) : 512;

	return mb > 0 ? (size_t)mb << 20 : 0;
}

int
ray_host_open(uv_loop_t *loop, struct ray_host **out, struct ray_err *err)
{
	struct ray_host *h = xcalloc(1, sizeof(*h));

	h->loop = loop;
	h->flush_ref = LUA_NOREF;
	h->mem_limit = memory_limit();
	h->L = lua_newstate(limited_alloc, h);
	if (h->L == NULL) {
		free(h);
		return ray_err_set(err, RAY_ELUA, "cannot create the Lua state");
	}
	/*
	 * Every coroutine starts with a copy of the main thread's extra space,
	 * where lua_limit.c keeps a hook call's limit; it must start empty.
	 */
	memset(lua_getextraspace(h->L), 0, LUA_EXTRASPACE);
	lua_atpanic(h->L, panic);
	luaL_openlibs(h->L);
	/* Before any module loads, so every caller gets the bounded ones. */
	ray__strlib_install(h->L);
	install_searcher(h->L);
	install_api(h->L, h);
	*out = h;
	return 0;
}

lua_State *
ray_host_lua(struct ray_host *h)
{
	return h->L;
}

/* Push module[fn] or fail with a message in err. */
static int
push_entry(struct ray_host *h, const char *module, const char *fn,
    struct ray_err *err)
{
	lua_State *L = h->L;

	lua_getglobal(L, "require");
	lua_pushstring(L, module);
	if (ray__pcall(L, 1, 1) != LUA_OK) {
		ray_err_set(err, RAY_ELUA, "cannot load %s: %s", module,
		    lua_tostring(L, -1));
		lua_pop(L, 1);
		return RAY_ELUA;
	}
	lua_getfield(L, -1, fn);
	lua_remove(L, -2);
	return 0;
}

int
ray_host_start(struct ray_host *h, const char *module, const char *fn,
    ray_host_push_fn push, void *ud, struct ray_err *err)
{
	lua_State *L = h->L;
	int r, nargs;

	r = push_entry(h, module, fn, err);
	if (r < 0)
		return r;
	/* raymond.go(fn, args...) runs the entry as the first coroutine. */
	lua_getglobal(L, "require");
	lua_pushliteral(L, "raymond");
	lua_call(L, 1, 1);
	lua_getfield(L, -1, "go");
	lua_remove(L, -2);
	lua_insert(L, -2);
	nargs = push ? push(L, ud) : 0;
	if (ray__pcall(L, 1 + nargs, 0) != LUA_OK) {
		ray_err_set(err, RAY_ELUA, "%s", lua_tostring(L, -1));
		lua_pop(L, 1);
		return RAY_ELUA;
	}
	return 0;
}

int
ray_host_finish(struct ray_host *h, const char *module, const char *fn)
{
	lua_State *L = h->L;
	struct ray_err err;
	int code;

	if (push_entry(h, module, fn, &err) < 0) {
		fprintf(stderr, "raymond: internal error: %s\n", err.msg);
		return 1;
	}
	lua_pushboolean(L, h->crashed);
	lua_pushinteger(L, h->interrupted);
	if (ray__pcall(L, 2, 1) != LUA_OK) {
		ray__live_clear();
		fprintf(stderr, "raymond: internal error: %s\n", lua_tostring(L, -1));
		lua_pop(L, 1);
		return 1;
	}
	code = (int)lua_tointeger(L, -1);
	lua_pop(L, 1);
	return code;
}

struct ray_host *
ray__host_of(lua_State *L)
{
	void *h;

	lua_getallocf(L, &h);
	return h;
}

void
ray_host_close(struct ray_host *h)
{
	if (h == NULL)
		return;
	ray__sched_close(h);
	lua_close(h->L);
	free(h);
}
