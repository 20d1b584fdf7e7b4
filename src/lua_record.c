/*
 * lua_record.c - the debug record (record.h) as a Lua object.
 *
 *	local rec = raymond.record_open(path)   -> record | nil, message
 *	rec:put(step, piece, data)              -> true | nil, message
 *	rec:close()                             also done by __gc and __close
 *
 * raymond.spawn takes a record and a step number and puts each chunk of
 * the child's stdout and stderr into it as it arrives (lua_sched.c).
 */
#include "lua_priv.h"
#include "record.h"

#include <errno.h>
#include <lauxlib.h>
#include <string.h>

#define RECORD_MT "raymond.record"

struct ray_record **
ray__record_slot(lua_State *L, int idx)
{
	return ray__check_open(L, idx, RECORD_MT, "record");
}

static int
api_record_open(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	struct ray_record **rp = lua_newuserdatauv(L, sizeof(*rp), 0);
	struct ray_err err;

	*rp = NULL;
	luaL_setmetatable(L, RECORD_MT);
	if (ray_record_open(path, rp, &err) < 0) {
		lua_pushnil(L);
		lua_pushstring(L, err.msg);
		return 2;
	}
	return 1;
}

static int
api_record_put(lua_State *L)
{
	struct ray_record *r = *ray__record_slot(L, 1);
	lua_Integer step = luaL_checkinteger(L, 2);
	const char *piece = luaL_checkstring(L, 3);
	size_t len;
	const char *data = luaL_checklstring(L, 4, &len);

	luaL_argcheck(L, step >= 0, 2, "a step is 0 or more");
	if (ray_record_put(r, (unsigned long)step, piece, data, len) < 0) {
		lua_pushnil(L);
		lua_pushfstring(L, "cannot write the debug record: %s", strerror(errno));
		return 2;
	}
	lua_pushboolean(L, 1);
	return 1;
}

static int
api_record_close(lua_State *L)
{
	struct ray_record **rp = luaL_checkudata(L, 1, RECORD_MT);

	ray_record_close(*rp);
	*rp = NULL;
	return 0;
}

static const luaL_Reg record_methods[] = {
	{ "put", api_record_put },
	{ "close", api_record_close },
	{ "__gc", api_record_close },
	{ "__close", api_record_close },
	{ NULL, NULL },
};

void
ray__record_register(lua_State *L)
{
	luaL_newmetatable(L, RECORD_MT);
	lua_pushvalue(L, -1);
	lua_setfield(L, -2, "__index");
	luaL_setfuncs(L, record_methods, 0);
	lua_pop(L, 1);
	lua_pushcfunction(L, api_record_open);
	lua_setfield(L, -2, "record_open");
}
