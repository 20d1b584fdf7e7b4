/*
 * lua_http.c - the HTTP server (http.h) as Lua objects, for raymond serve.
 *
 *	local srv, err = raymond.http_listen{ host =, port =, max_body =,
 *	    max_header =, max_stream =, timeout =, max_connections =,
 *	    handler = fn }
 *	    handler(req) runs as a new coroutine per request, as raymond.go
 *	    runs a function, so it may yield before it answers
 *	srv:port()                 the port it listens on
 *	srv:close()                stop; also __gc and __close
 *	req:method(), req:path(), req:peer(), req:body()
 *	req:header(name), req:arg(name)     nil when absent
 *	req:respond(status, headers, body)  once; headers a table name -> value
 *	req:stream(status, headers [, on_gone])
 *	    both: true, or nil and "gone"
 *	req:send(text)             true, or nil and "gone" / "full"
 *	req:finish()               end the stream
 *
 * A request is gone when its client went away or the server closed while
 * the handler still held it: then respond and stream return nil, "gone"
 * and the getters nil, so that a handler that waited (a launch, a stream)
 * ends quietly.  Using a request after answering it is an error.
 *
 * Ownership: a request's userdata points at the C request while it may be
 * used, and is cleared when the answer is given, when a stream ends, or
 * when the request goes (on_gone).  A request collected without an answer
 * is answered 500, so no client waits for ever.  A stream's userdata is
 * kept in the registry while it streams, so the collector cannot end it.
 */
#include "lua_priv.h"
#include "http.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SERVER_MT "raymond.http"
#define REQ_MT "raymond.http_req"
#define MAX_HEADERS 32

struct server {
	struct ray_http *h;
	lua_State *L;		/* the main thread */
	int handler_ref;
	int go_ref;
};

struct req {
	struct ray_http_req *r;
	struct server *s;
	int self_ref;		/* held while it streams */
	int gone_ref;		/* the stream's on_gone */
	int gone;		/* the client or the server went first */
};

static const char NO_ANSWER[] = "{\"error\":\"the server gave no answer\"}";

static void on_gone(void *ud, struct ray_http_req *r);

/* A request on its way into Lua. */
struct arrival {
	struct server *s;
	struct ray_http_req *r;
	int made;		/* its userdata exists, and answers if collected */
};

static const char *const JSON[] = { "Content-Type", "application/json", NULL };

/* After the handler returned: a request it left unanswered (and not a
 * stream) is answered 500 now, rather than when it is collected. */
static int
handler_done(lua_State *L, int status, lua_KContext ctx)
{
	struct req *u = luaL_checkudata(L, 2, REQ_MT);

	(void)status;
	(void)ctx;
	if (u->r != NULL && u->self_ref == LUA_NOREF) {
		ray_http_respond(u->r, 500, JSON, NO_ANSWER, sizeof(NO_ANSWER) - 1);
		u->r = NULL;
	}
	return 0;
}

/* The coroutine of one request: handler(req), then handler_done. */
static int
run_handler(lua_State *L)
{
	lua_pushvalue(L, 1);
	lua_pushvalue(L, 2);
	lua_callk(L, 1, 0, 0, handler_done);
	return handler_done(L, LUA_OK, 0);
}

/* go(run_handler, handler, req), in protected mode. */
static int
start_handler(lua_State *L)
{
	struct arrival *a = lua_touserdata(L, 1);
	struct req *u;

	lua_rawgeti(L, LUA_REGISTRYINDEX, a->s->go_ref);
	lua_pushcfunction(L, run_handler);
	lua_rawgeti(L, LUA_REGISTRYINDEX, a->s->handler_ref);
	u = lua_newuserdatauv(L, sizeof(*u), 0);
	u->r = a->r;
	u->s = a->s;
	u->self_ref = u->gone_ref = LUA_NOREF;
	u->gone = 0;
	luaL_setmetatable(L, REQ_MT);
	a->made = 1;
	ray_http_watch(a->r, on_gone, u);
	lua_call(L, 3, 0);
	return 0;
}

static void
on_request(void *ud, struct ray_http_req *r)
{
	struct arrival a = { ud, r, 0 };
	lua_State *L = a.s->L;

	lua_pushcfunction(L, start_handler);
	lua_pushlightuserdata(L, &a);
	if (lua_pcall(L, 1, 0, 0) == LUA_OK)
		return;
	lua_pop(L, 1);
	if (!a.made)
		ray_http_respond(r, 500, JSON, NO_ANSWER, sizeof(NO_ANSWER) - 1);
}

static struct req *
check_req(lua_State *L)
{
	struct req *u = luaL_checkudata(L, 1, REQ_MT);

	return u;
}

/* The C request, or NULL if it is gone; an error once answered. */
static struct ray_http_req *
live(lua_State *L, struct req *u, const char *what)
{
	if (u->r == NULL && !u->gone)
		luaL_error(L, "req:%s: the request is answered", what);
	return u->r;
}

static int
push_gone(lua_State *L)
{
	lua_pushnil(L);
	lua_pushliteral(L, "gone");
	return 2;
}

/* The headers table at `idx` as name, value pairs ending with NULL. */
static void
headers_of(lua_State *L, int idx, const char **out)
{
	int n = 0;

	if (!lua_isnoneornil(L, idx)) {
		luaL_checktype(L, idx, LUA_TTABLE);
		lua_pushnil(L);
		while (lua_next(L, idx) != 0) {
			if (n >= 2 * MAX_HEADERS)
				luaL_error(L, "more than %d headers", MAX_HEADERS);
			if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
				luaL_error(L, "headers are a table of name = text");
			/* Both stay on the table, which the caller holds. */
			out[n++] = lua_tostring(L, -2);
			out[n++] = lua_tostring(L, -1);
			lua_pop(L, 1);
		}
	}
	out[n] = NULL;
}

static int
status_of(lua_State *L, int idx)
{
	lua_Integer st = luaL_checkinteger(L, idx);

	luaL_argcheck(L, st >= 100 && st <= 599, idx, "a status from 100 to 599");
	return (int)st;
}

static int
req_respond(lua_State *L)
{
	struct req *u = check_req(L);
	struct ray_http_req *r = live(L, u, "respond");
	int status = status_of(L, 2);
	const char *hdrs[2 * MAX_HEADERS + 1];
	size_t len;
	const char *body = luaL_optlstring(L, 4, "", &len);

	headers_of(L, 3, hdrs);
	if (r == NULL)
		return push_gone(L);
	if (ray_http_respond(r, status, hdrs, body, len) < 0)
		return luaL_error(L, "req:respond: the request cannot be answered now");
	u->r = NULL;
	lua_pushboolean(L, 1);
	return 1;
}

static void
on_gone(void *ud, struct ray_http_req *r)
{
	struct req *u = ud;
	struct server *s = u->s;
	lua_State *L = s->L;

	(void)r;
	u->r = NULL;
	u->gone = 1;
	if (u->gone_ref != LUA_NOREF) {
		lua_rawgeti(L, LUA_REGISTRYINDEX, s->go_ref);
		lua_rawgeti(L, LUA_REGISTRYINDEX, u->gone_ref);
		if (lua_pcall(L, 1, 0, 0) != LUA_OK)
			lua_pop(L, 1);
	}
	luaL_unref(L, LUA_REGISTRYINDEX, u->gone_ref);
	u->gone_ref = LUA_NOREF;
	/* Last: this may free the userdata once nothing else holds it. */
	luaL_unref(L, LUA_REGISTRYINDEX, u->self_ref);
	u->self_ref = LUA_NOREF;
}

static int
req_stream(lua_State *L)
{
	struct req *u = check_req(L);
	struct ray_http_req *r = live(L, u, "stream");
	int status = status_of(L, 2);
	const char *hdrs[2 * MAX_HEADERS + 1];

	headers_of(L, 3, hdrs);
	if (r == NULL)
		return push_gone(L);
	if (!lua_isnoneornil(L, 4)) {
		luaL_checktype(L, 4, LUA_TFUNCTION);
		lua_pushvalue(L, 4);
		u->gone_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	}
	if (ray_http_stream(r, status, hdrs, on_gone, u) < 0)
		return luaL_error(L, "req:stream: the request cannot be answered now");
	lua_pushvalue(L, 1);
	u->self_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	lua_pushboolean(L, 1);
	return 1;
}

static int
req_send(lua_State *L)
{
	struct req *u = check_req(L);
	size_t len;
	const char *text = luaL_checklstring(L, 2, &len);
	int rc;

	if (u->r == NULL)
		return push_gone(L);
	rc = ray_http_send(u->r, text, len);
	if (rc == RAY_ETOOBIG) {
		lua_pushnil(L);
		lua_pushliteral(L, "full");
		return 2;
	}
	if (rc < 0)
		return luaL_error(L, "req:send: the request is not a stream");
	lua_pushboolean(L, 1);
	return 1;
}

static int
req_finish(lua_State *L)
{
	struct req *u = check_req(L);

	if (u->r != NULL) {
		ray_http_end(u->r);
		u->r = NULL;
		luaL_unref(L, LUA_REGISTRYINDEX, u->gone_ref);
		u->gone_ref = LUA_NOREF;
		luaL_unref(L, LUA_REGISTRYINDEX, u->self_ref);
		u->self_ref = LUA_NOREF;
	}
	return 0;
}

static int
req_gc(lua_State *L)
{
	struct req *u = check_req(L);

	if (u->r != NULL)
		ray_http_respond(u->r, 500, JSON, NO_ANSWER, sizeof(NO_ANSWER) - 1);
	u->r = NULL;
	return 0;
}

static int
push_or_nil(lua_State *L, const char *s)
{
	if (s == NULL)
		lua_pushnil(L);
	else
		lua_pushstring(L, s);
	return 1;
}

/* Each getter gives nil for a request that is gone. */
static int
req_method(lua_State *L)
{
	struct ray_http_req *r = live(L, check_req(L), "method");

	return push_or_nil(L, r ? ray_http_method(r) : NULL);
}

static int
req_path(lua_State *L)
{
	struct ray_http_req *r = live(L, check_req(L), "path");

	return push_or_nil(L, r ? ray_http_path(r) : NULL);
}

static int
req_peer(lua_State *L)
{
	struct ray_http_req *r = live(L, check_req(L), "peer");

	return push_or_nil(L, r ? ray_http_peer(r) : NULL);
}

static int
req_header(lua_State *L)
{
	struct ray_http_req *r = live(L, check_req(L), "header");
	const char *name = luaL_checkstring(L, 2);

	return push_or_nil(L, r ? ray_http_header(r, name) : NULL);
}

static int
req_arg(lua_State *L)
{
	struct ray_http_req *r = live(L, check_req(L), "arg");
	const char *name = luaL_checkstring(L, 2);

	return push_or_nil(L, r ? ray_http_arg(r, name) : NULL);
}

static int
req_body(lua_State *L)
{
	struct ray_http_req *r = live(L, check_req(L), "body");
	size_t len;
	const char *b;

	if (r == NULL)
		return push_or_nil(L, NULL);
	b = ray_http_body(r, &len);
	lua_pushlstring(L, b, len);
	return 1;
}

/* ---- the server ------------------------------------------------------ */

static int
server_close(lua_State *L)
{
	struct server *s = luaL_checkudata(L, 1, SERVER_MT);

	ray_http_close(s->h);
	s->h = NULL;
	luaL_unref(L, LUA_REGISTRYINDEX, s->handler_ref);
	luaL_unref(L, LUA_REGISTRYINDEX, s->go_ref);
	s->handler_ref = s->go_ref = LUA_NOREF;
	return 0;
}

static int
server_port(lua_State *L)
{
	struct server *s = luaL_checkudata(L, 1, SERVER_MT);

	if (s->h == NULL)
		return luaL_error(L, "srv:port: the server is closed");
	lua_pushinteger(L, ray_http_port(s->h));
	return 1;
}

static lua_Integer
opt_field(lua_State *L, const char *name, lua_Integer def, lua_Integer max)
{
	lua_Integer v;

	lua_getfield(L, 1, name);
	v = luaL_optinteger(L, -1, def);
	lua_pop(L, 1);
	if (v < 0 || v > max)
		luaL_error(L, "raymond.http_listen: %s must be from 0 to %I", name, max);
	return v;
}

/* raymond.http_listen{...} -> server | nil, message */
static int
api_http_listen(lua_State *L)
{
	struct ray_http_opts o;
	struct server *s;
	struct ray_err err;

	luaL_checktype(L, 1, LUA_TTABLE);
	lua_getfield(L, 1, "host");
	o.host = luaL_optstring(L, -1, "127.0.0.1");
	o.port = (int)opt_field(L, "port", 0, 65535);
	o.max_body = (size_t)opt_field(L, "max_body", 1024 * 1024, (lua_Integer)1 << 30);
	o.max_header = (size_t)opt_field(L, "max_header", 32 * 1024, (lua_Integer)1 << 20);
	o.max_stream = (size_t)opt_field(L, "max_stream", 1024 * 1024, (lua_Integer)1 << 30);
	o.timeout_s = (unsigned)opt_field(L, "timeout", 60, 86400);
	o.max_conn = (unsigned)opt_field(L, "max_connections", 256, 4096);
	lua_getfield(L, 1, "handler");
	luaL_checktype(L, -1, LUA_TFUNCTION);
	s = lua_newuserdatauv(L, sizeof(*s), 0);
	s->h = NULL;
	s->handler_ref = s->go_ref = LUA_NOREF;
	luaL_setmetatable(L, SERVER_MT);
	lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
	s->L = lua_tothread(L, -1);
	lua_pop(L, 1);
	lua_pushvalue(L, -2);
	s->handler_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	lua_pushvalue(L, lua_upvalueindex(1));
	s->go_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	if (ray_http_listen(ray__host_of(L)->loop, &o, on_request, s, &s->h, &err) < 0) {
		lua_pushnil(L);
		lua_pushstring(L, err.msg);
		return 2;
	}
	return 1;
}

static const luaL_Reg server_methods[] = {
	{ "close", server_close },
	{ "port", server_port },
	{ "__gc", server_close },
	{ "__close", server_close },
	{ NULL, NULL },
};

static const luaL_Reg req_methods[] = {
	{ "method", req_method },
	{ "path", req_path },
	{ "peer", req_peer },
	{ "header", req_header },
	{ "arg", req_arg },
	{ "body", req_body },
	{ "respond", req_respond },
	{ "stream", req_stream },
	{ "send", req_send },
	{ "finish", req_finish },
	{ "__gc", req_gc },
	{ NULL, NULL },
};

/* On the raymond table at -1, which has raymond.go already. */
void
ray__http_register(lua_State *L)
{
	ray__new_class(L, SERVER_MT, server_methods);
	ray__new_class(L, REQ_MT, req_methods);
	lua_getfield(L, -1, "go");
	lua_pushcclosure(L, api_http_listen, 1);
	lua_setfield(L, -2, "http_listen");
}
