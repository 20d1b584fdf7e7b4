/*
 * lua_bridge.c - the hook bridge's server (bridge.h) as Lua objects.
 *
 *	local srv, err = raymond.bridge_listen(path, handler)
 *	    handler(conn, token, body) runs as a new coroutine per complete
 *	    request, as raymond.go runs a function, so it may yield
 *	conn:reply(code, text)   code 0 or 2, once: true, or false when the
 *	                         peer is gone; a conn collected unanswered
 *	                         closes its connection (the client denies)
 *	srv:close()              stop listening, remove the socket file; also
 *	                         done by __gc and __close, and again is nothing
 *	raymond.exe_path()       the absolute path of the running binary
 *
 * Ownership: the server's userdata owns the C server and the registry
 * references to the handler and to raymond.go; a conn's userdata owns its
 * C connection from the moment it exists, so a raise while the handler's
 * arguments are made leaves the collector to close it.
 */
#include "lua_priv.h"
#include "bridge.h"

#include <errno.h>
#include <lauxlib.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define SERVER_MT "raymond.bridge"
#define CONN_MT "raymond.bridge_conn"

struct server {
	struct ray_bridge *b;
	lua_State *L;		/* the main thread */
	int handler_ref;
	int go_ref;
};

/* A request on its way into Lua: the protected part's arguments. */
struct request {
	struct server *s;
	struct ray_bridge_conn *c;
	const char *token;
	const char *body;
	size_t len;
	struct ray_bridge_conn **slot;	/* the conn userdata's, once made */
};

/* go(handler, conn, token, body), in protected mode. */
static int
start_handler(lua_State *L)
{
	struct request *r = lua_touserdata(L, 1);
	struct ray_bridge_conn **cu;

	lua_rawgeti(L, LUA_REGISTRYINDEX, r->s->go_ref);
	lua_rawgeti(L, LUA_REGISTRYINDEX, r->s->handler_ref);
	cu = lua_newuserdatauv(L, sizeof(*cu), 0);
	*cu = r->c;
	r->slot = cu;
	luaL_setmetatable(L, CONN_MT);
	lua_pushstring(L, r->token);
	lua_pushlstring(L, r->body, r->len);
	lua_call(L, 4, 0);
	return 0;
}

/*
 * A whole request arrived (a libuv callback).  What can raise before the
 * handler runs is a refused allocation (a 16 MiB event over the Lua
 * state's memory cap): that request is answered code 2, so the client
 * denies the call, and the run goes on.  An error of the handler itself
 * is raymond.go's to report, as an internal error.
 */
static void
on_request(void *ud, struct ray_bridge_conn *c, const char *token,
    const char *body, size_t len)
{
	struct server *s = ud;
	struct request r = { s, c, token, body, len, NULL };
	lua_State *L = s->L;
	char why[256];

	lua_pushcfunction(L, start_handler);
	lua_pushlightuserdata(L, &r);
	if (lua_pcall(L, 1, 0, 0) == LUA_OK)
		return;
	snprintf(why, sizeof(why), "raymond could not take the hook input: %s",
	    lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "error");
	lua_pop(L, 1);
	/* Taken back from a conn userdata that exists, so it is not dropped. */
	if (r.slot != NULL) {
		c = *r.slot;
		*r.slot = NULL;
	}
	if (c != NULL)
		ray_bridge_reply(c, 2, why, strlen(why));
}

static int
server_close(lua_State *L)
{
	struct server *s = luaL_checkudata(L, 1, SERVER_MT);

	ray_bridge_close(s->b);
	s->b = NULL;
	luaL_unref(L, LUA_REGISTRYINDEX, s->handler_ref);
	luaL_unref(L, LUA_REGISTRYINDEX, s->go_ref);
	s->handler_ref = s->go_ref = LUA_NOREF;
	return 0;
}

/* raymond.bridge_listen(path, handler) -> server | nil, message */
static int
api_bridge_listen(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	struct server *s;
	struct ray_err err;

	luaL_checktype(L, 2, LUA_TFUNCTION);
	s = lua_newuserdatauv(L, sizeof(*s), 0);
	s->b = NULL;
	s->handler_ref = s->go_ref = LUA_NOREF;
	luaL_setmetatable(L, SERVER_MT);
	lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
	s->L = lua_tothread(L, -1);
	lua_pop(L, 1);
	lua_pushvalue(L, 2);
	s->handler_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	lua_pushvalue(L, lua_upvalueindex(1));
	s->go_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	if (ray_bridge_listen(ray__host_of(L)->loop, path,
	    &ray_bridge_default_limits, on_request, s, &s->b, &err) < 0) {
		lua_pushnil(L);
		if (err.hint[0] != '\0')
			lua_pushfstring(L, "%s (%s)", err.msg, err.hint);
		else
			lua_pushstring(L, err.msg);
		return 2;
	}
	return 1;
}

/* conn:reply(code, text) -> true | false (the peer is gone) */
static int
conn_reply(lua_State *L)
{
	struct ray_bridge_conn **cu = luaL_checkudata(L, 1, CONN_MT);
	lua_Integer code = luaL_checkinteger(L, 2);
	size_t len;
	const char *text = luaL_checklstring(L, 3, &len);
	struct ray_bridge_conn *c = *cu;

	luaL_argcheck(L, code == 0 || code == 2, 2, "the code is 0 or 2");
	luaL_argcheck(L, len <= RAY_BRIDGE_BODY_MAX, 3, "text over 16 MiB");
	if (c == NULL)
		return luaL_error(L, "conn:reply: this request has its answer "
		    "already");
	*cu = NULL;
	lua_pushboolean(L, ray_bridge_reply(c, (int)code, text, len) == 0);
	return 1;
}

static int
conn_gc(lua_State *L)
{
	struct ray_bridge_conn **cu = luaL_checkudata(L, 1, CONN_MT);

	if (*cu != NULL)
		ray_bridge_drop(*cu);
	*cu = NULL;
	return 0;
}

/* raymond.exe_path() -> the absolute path of this binary | nil, message */
static int
api_exe_path(lua_State *L)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	static const char deleted[] = " (deleted)";
	size_t dl = sizeof(deleted) - 1;

	if (n < 0 || n == (ssize_t)sizeof(path) - 1) {
		lua_pushnil(L);
		lua_pushfstring(L, "cannot find raymond's own path: %s",
		    n < 0 ? strerror(errno) : "the path is too long");
		return 2;
	}
	/* A binary replaced while it runs (make install, an upgrade) reads
	 * as "PATH (deleted)": the hook runs the new one at PATH, which
	 * speaks the same wire or refuses it by its version. */
	if ((size_t)n > dl && memcmp(path + n - dl, deleted, dl) == 0)
		n -= (ssize_t)dl;
	lua_pushlstring(L, path, (size_t)n);
	return 1;
}

static const luaL_Reg server_methods[] = {
	{ "close", server_close },
	{ "__gc", server_close },
	{ "__close", server_close },
	{ NULL, NULL },
};

static const luaL_Reg conn_methods[] = {
	{ "reply", conn_reply },
	{ "__gc", conn_gc },
	{ NULL, NULL },
};

/* A metatable `name` whose __index is itself, holding `methods`. */
void
ray__new_class(lua_State *L, const char *name, const luaL_Reg *methods)
{
	luaL_newmetatable(L, name);
	lua_pushvalue(L, -1);
	lua_setfield(L, -2, "__index");
	luaL_setfuncs(L, methods, 0);
	lua_pop(L, 1);
}

/* On the raymond table at -1, which has raymond.go already. */
void
ray__bridge_register(lua_State *L)
{
	ray__new_class(L, SERVER_MT, server_methods);
	ray__new_class(L, CONN_MT, conn_methods);
	lua_getfield(L, -1, "go");
	lua_pushcclosure(L, api_bridge_listen, 1);
	lua_setfield(L, -2, "bridge_listen");
	lua_pushcfunction(L, api_exe_path);
	lua_setfield(L, -2, "exe_path");
}
