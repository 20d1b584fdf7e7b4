/*
 * lua_limit.c - bounds on one hook call: an instruction budget and a
 * wall-clock deadline, enforced on the coroutine that makes the call.
 *
 *	raymond.limit_begin(instructions, seconds)
 *	... the hook's handler runs, and may yield (raymond.exec) ...
 *	why = raymond.limit_end()    -- nil, or why the limit was hit
 *
 * The limit is a userdata owned by Lua, kept in a registry table with weak
 * keys under the coroutine it belongs to, and found quickly through the
 * coroutine's extra space (lua_getextraspace); hooks of different agents
 * that interleave across yields each keep their own, and a coroutine that
 * never ends its call (the run stopped while it waited) takes its limit
 * with it when it is collected.  A count hook runs every 1000 instructions; once the budget or the
 * deadline is passed it raises, and it goes on raising at every line, so a
 * handler cannot swallow the error with pcall and carry on.  limit_end
 * reports the trip even if the handler did swallow it, and removes the hook.
 *
 *	begin ──> RUNNING ──(budget or deadline passed)──> TRIPPED (raises)
 *	             │                                        │
 *	             └──────────────── end ───────────────────┘──> removed
 */
#include "lua_priv.h"

#include <lauxlib.h>

#define STEP 1000

struct limit {
	lua_Integer used;
	lua_Integer budget;	/* instructions; 0: no budget */
	uint64_t deadline;	/* uv_hrtime(); 0: none */
	const char *tripped;	/* why, once the limit was hit */
};

static const char LIMITS[] = "raymond.limits";

static struct limit **
slot(lua_State *L)
{
	return (struct limit **)lua_getextraspace(L);
}

/* The registry's weak-keyed table of limits by coroutine, pushed. */
static void
push_limits(lua_State *L)
{
	if (lua_getfield(L, LUA_REGISTRYINDEX, LIMITS) == LUA_TTABLE)
		return;
	lua_pop(L, 1);
	lua_newtable(L);
	lua_createtable(L, 0, 1);
	lua_pushliteral(L, "k");
	lua_setfield(L, -2, "__mode");
	lua_setmetatable(L, -2);
	lua_pushvalue(L, -1);
	lua_setfield(L, LUA_REGISTRYINDEX, LIMITS);
}

static void
count_hook(lua_State *L, lua_Debug *ar)
{
	struct limit *l = *slot(L);

	UNUSED(ar);
	if (l == NULL)
		return;
	if (l->tripped == NULL) {
		l->used += STEP;
		if (l->budget > 0 && l->used > l->budget)
			l->tripped = "instruction budget";
		else if (l->deadline && uv_hrtime() > l->deadline)
			l->tripped = "time limit";
		else
			return;
		/* From now on raise at every line, not only every STEP. */
		lua_sethook(L, count_hook, LUA_MASKCOUNT | LUA_MASKLINE, 1);
	}
	luaL_error(L, "hook exceeded its %s", l->tripped);
}

/* raymond.limit_begin(instructions, seconds); 0 means no such limit. */
static int
api_limit_begin(lua_State *L)
{
	lua_Integer budget = luaL_checkinteger(L, 1);
	lua_Number seconds = luaL_checknumber(L, 2);
	struct limit *l = *slot(L);

	if (l == NULL) {
		push_limits(L);			/* limits */
		lua_pushthread(L);		/* limits thread */
		l = lua_newuserdatauv(L, sizeof(*l), 0);	/* limits thread ud */
		lua_rawset(L, -3);		/* limits */
		lua_pop(L, 1);
		*slot(L) = l;
	}
	l->used = 0;
	l->budget = budget;
	l->deadline = seconds > 0 ? uv_hrtime() + (uint64_t)(seconds * 1e9) : 0;
	l->tripped = NULL;
	lua_sethook(L, count_hook, LUA_MASKCOUNT, STEP);
	return 0;
}

/* raymond.limit_end() -> nil, or "instruction budget" / "time limit". */
static int
api_limit_end(lua_State *L)
{
	struct limit *l = *slot(L);

	lua_sethook(L, NULL, 0, 0);
	if (l == NULL) {
		lua_pushnil(L);
		return 1;
	}
	*slot(L) = NULL;
	push_limits(L);			/* limits */
	lua_pushthread(L);		/* limits thread */
	lua_pushnil(L);
	lua_rawset(L, -3);		/* limits */
	lua_pop(L, 1);
	if (l->tripped)
		lua_pushstring(L, l->tripped);
	else
		lua_pushnil(L);
	return 1;
}

/* raymond.limit_left() -> seconds until the current call's deadline, or nil. */
static int
api_limit_left(lua_State *L)
{
	struct limit *l = *slot(L);
	uint64_t now = uv_hrtime();

	if (l == NULL || l->deadline == 0) {
		lua_pushnil(L);
		return 1;
	}
	lua_pushnumber(L, l->deadline > now ? (double)(l->deadline - now) / 1e9 : 0);
	return 1;
}

/* raymond.memory() -> bytes the Lua state holds, and its limit (0: none). */
static int
api_memory(lua_State *L)
{
	struct ray_host *h = ray__host_from(L);

	lua_pushinteger(L, (lua_Integer)h->mem_used);
	lua_pushinteger(L, (lua_Integer)h->mem_limit);
	return 2;
}

static const luaL_Reg limit_funcs[] = {
	{ "limit_begin", api_limit_begin },
	{ "limit_end", api_limit_end },
	{ "limit_left", api_limit_left },
	{ "memory", api_memory },
	{ NULL, NULL },
};

void
ray__limit_register(lua_State *L, struct ray_host *h)
{
	lua_pushlightuserdata(L, h);
	luaL_setfuncs(L, limit_funcs, 1);
}
