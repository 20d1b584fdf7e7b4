/*
 * lua_limit.c - bounds on one hook call: an instruction budget, a
 * wall-clock deadline and the run's stop signals, enforced on the
 * coroutine that makes the call.
 *
 *	ok, value, why = raymond.limited_call(fn, arg, instructions, seconds)
 *	... = raymond.unlimited(fn, ...)
 *
 * calls fn(arg) in protected mode with a traceback; `why` is nil, or says
 * which limit was passed ("instruction budget", "time limit", "memory
 * limit (not enough memory)", "interrupt").  The call may yield
 * (raymond.exec inside a hook): it is made with lua_pcallk, whose
 * continuation finishes it, so the limit holds across yields and nothing of
 * the engine runs under it.
 *
 * The limit is a userdata owned by Lua, kept in a registry table with weak
 * keys under the coroutine it belongs to, and found quickly through the
 * coroutine's extra space (lua_getextraspace); hooks of different agents
 * that interleave across yields each keep their own, and a coroutine that
 * never ends its call (the run stopped while it waited) takes its limit
 * with it when it is collected.  A count hook runs every 1000
 * instructions; once the budget or the deadline is passed, or a SIGINT or
 * SIGTERM has arrived since the call began, it raises, and goes on raising
 * at every line, so the handler cannot swallow the error with pcall and
 * carry on.  C code that runs long without executing Lua instructions (the
 * pattern functions of lua_strlib.c) charges its own steps through
 * ray__limit_charge(), which checks and raises the same way.  The
 * continuation removes the hook first, then reports the trip even if the
 * handler did swallow the error, and also when the deadline passed or a
 * signal arrived during the handler's last wait, or when the Lua state
 * refused the call an allocation (the memory cap, lua_host.c).
 *
 *	call ──> RUNNING ──(budget, deadline or signal)──> TRIPPED (raises)
 *	            │                                        │
 *	            └───────── fn returns or raises ─────────┴──> finish:
 *	                                   hook removed, limit dropped
 *
 * Signals: the handler in lua_sched.c only counts the signal in
 * ray__signal_count (a volatile sig_atomic_t) and wakes the loop.  A limit
 * remembers the count at its start and trips when it has moved, so a hook
 * spinning in Lua stops within 1000 instructions of a Ctrl-C instead of
 * holding the run until its budget or deadline.  The limit that trips
 * first also does the loop side of the stop at once
 * (ray__sched_take_signals), since the loop gets control only after the
 * hook returns.  Hook calls made after the stop run normally, so the
 * engine's hooks on the way out (RunEnd) still work; a further signal
 * interrupts them too.
 *
 * Errors: limited_call and limit_left raise on misuse; the trip is an
 * ordinary Lua error raised in the hook's code.  Ownership: all of the
 * state is Lua's; nothing here allocates C memory.
 */
#include "lua_priv.h"

#include <lauxlib.h>
#include <signal.h>
#include <string.h>

#define STEP 1000

struct limit {
	lua_Integer used;
	lua_Integer budget;	/* instructions; 0: no budget */
	uint64_t deadline;	/* uv_hrtime(); 0: none */
	sig_atomic_t signals;	/* ray__signal_count when the call began */
	int signo;		/* the signal that interrupted the call */
	const char *tripped;	/* why, once the limit was hit */
};

static const char LIMITS[] = "raymond.limits";
static const char INTERRUPT[] = "interrupt";

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

/* A signal arrived since the call began: note it, and stop the run now. */
static int
interrupted(lua_State *L, struct limit *l)
{
	if (ray__signal_count == l->signals)
		return 0;
	l->signo = ray__signal_last;
	ray__sched_take_signals(ray__host_of(L));
	return 1;
}

/* Whether the limit has tripped, deciding why if it just did. */
static int
tripped(lua_State *L, struct limit *l)
{
	if (l->tripped)
		return 1;
	if (l->budget > 0 && l->used > l->budget)
		l->tripped = "instruction budget";
	else if (l->deadline && uv_hrtime() > l->deadline)
		l->tripped = "time limit";
	else if (interrupted(L, l))
		l->tripped = INTERRUPT;
	return l->tripped != NULL;
}

static int
raise_tripped(lua_State *L, const char *why, int signo)
{
	if (why == INTERRUPT)
		return luaL_error(L, "hook interrupted by %s",
		    signo == SIGTERM ? "SIGTERM" : "SIGINT");
	return luaL_error(L, "hook exceeded its %s", why);
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
		if (!tripped(L, l))
			return;
		/* From now on raise at every line, not only every STEP. */
		lua_sethook(L, count_hook, LUA_MASKCOUNT | LUA_MASKLINE, 1);
	}
	raise_tripped(L, l->tripped, l->signo);
}

void
ray__limit_charge(lua_State *L, long steps)
{
	struct limit *l = *slot(L);

	if (l == NULL)
		return;
	l->used += steps;
	if (tripped(L, l))
		raise_tripped(L, l->tripped, l->signo);
}

/* Drop the coroutine's limit; returns why it tripped, or NULL. */
static const char *
drop(lua_State *L, int *signo)
{
	struct limit *l = *slot(L);
	const char *why;

	lua_sethook(L, NULL, 0, 0);
	if (l == NULL)
		return NULL;
	/* The deadline or a signal may have come during the last wait. */
	why = tripped(L, l) ? l->tripped : NULL;
	*signo = l->signo;
	/* Catching "not enough memory" does not give the memory back. */
	if (why == NULL && ray__host_from(L)->mem_refused)
		why = "memory limit (not enough memory)";
	*slot(L) = NULL;
	push_limits(L);			/* limits */
	lua_pushthread(L);		/* limits thread */
	lua_pushnil(L);
	lua_rawset(L, -3);		/* limits */
	lua_pop(L, 1);
	return why;
}

/*
 * The continuation of raymond.limited_call, and its end when fn did not
 * yield.  The stack holds, above `base`, the message handler and fn's
 * result or error; it returns ok, value, why.
 */
static int
finish_call(lua_State *L, int status, lua_KContext base)
{
	int signo = 0;
	const char *why = drop(L, &signo);
	int ran = status == LUA_OK || status == LUA_YIELD;

	lua_remove(L, (int)base + 1);		/* result */
	lua_pushboolean(L, ran && why == NULL);	/* result ok */
	lua_insert(L, -2);			/* ok result */
	if (why && ran) {
		/* fn swallowed the error, or its last wait ran past the limit. */
		lua_pop(L, 1);
		if (why == INTERRUPT)
			lua_pushfstring(L, "hook interrupted by %s",
			    signo == SIGTERM ? "SIGTERM" : "SIGINT");
		else
			lua_pushfstring(L, "hook exceeded its %s", why);
	}
	if (why)
		lua_pushstring(L, why);
	else
		lua_pushnil(L);			/* ok value why */
	return 3;
}

/*
 * raymond.limited_call(fn, arg, instructions, seconds) -> ok, value, why
 * (0 means no such limit).  On success value is fn's first result; on an
 * error or a passed limit it is the message, with a traceback.
 */
static int
api_limited_call(lua_State *L)
{
	lua_Integer budget = luaL_checkinteger(L, 3);
	lua_Number seconds = luaL_checknumber(L, 4);
	struct limit *l;
	int base;

	luaL_checktype(L, 1, LUA_TFUNCTION);
	lua_settop(L, 2);		/* fn arg */
	base = lua_gettop(L) - 2;
	lua_pushcfunction(L, ray__traceback);	/* fn arg msgh */
	lua_insert(L, 1);		/* msgh fn arg */
	push_limits(L);			/* msgh fn arg limits */
	lua_pushthread(L);
	l = lua_newuserdatauv(L, sizeof(*l), 0);
	memset(l, 0, sizeof(*l));
	lua_rawset(L, -3);
	lua_pop(L, 1);			/* msgh fn arg */
	l->budget = budget;
	l->deadline = seconds > 0 ? uv_hrtime() + (uint64_t)(seconds * 1e9) : 0;
	l->signals = ray__signal_count;
	*slot(L) = l;
	ray__host_from(L)->mem_refused = 0;
	lua_sethook(L, count_hook, LUA_MASKCOUNT, STEP);
	return finish_call(L, lua_pcallk(L, 1, 1, base + 1, base, finish_call), base);
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

/*
 * raymond.unlimited(fn, ...) -> fn's results: calls fn(...) outside the
 * limit of the hook call running in this coroutine, so engine bookkeeping
 * that such a call runs (closing a Claude turn raymond.evaluate opened) is
 * done whole or not at all.  fn must not yield; its error is raised again
 * once the limit is back.
 */
static int
api_unlimited(lua_State *L)
{
	struct limit *l = *slot(L);
	int status;

	luaL_checktype(L, 1, LUA_TFUNCTION);
	*slot(L) = NULL;
	status = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
	*slot(L) = l;
	if (status != LUA_OK)
		return lua_error(L);
	return lua_gettop(L);
}

static const luaL_Reg limit_funcs[] = {
	{ "limited_call", api_limited_call },
	{ "limit_left", api_limit_left },
	{ "unlimited", api_unlimited },
	{ NULL, NULL },
};

void
ray__limit_register(lua_State *L, struct ray_host *h)
{
	lua_pushlightuserdata(L, h);
	luaL_setfuncs(L, limit_funcs, 1);
}
