/*
 * lua_priv.h - the host structure and the internal functions shared by
 * lua_host.c, lua_sched.c, lua_limit.c, lua_strlib.c and lua_api.c (and
 * the test runner).  Nothing else includes it.
 */
#ifndef RAY_LUA_PRIV_H
#define RAY_LUA_PRIV_H

#include <lua.h>
#include <lauxlib.h>
#include <signal.h>
#include <uv.h>

#include "lua_host.h"

struct ray_job;
struct ray_sleeper;

struct ray_host {
	lua_State *L;
	uv_loop_t *loop;

	/* Scheduler (lua_sched.c). */
	uv_prepare_t prepare;	/* flushes state, then launches jobs */
	uv_async_t signal_async;	/* woken by the signal handler */
	struct sigaction old_sigint;	/* restored by ray_host_close() */
	struct sigaction old_sigterm;
	sig_atomic_t signals_seen;	/* ray__signal_count last acted on */
	struct ray_sleeper *sleepers;	/* raymond.sleep calls waiting */
	struct ray_lines *lines;	/* raymond.read_line's terminal, or NULL */
	struct ray_job *queue_head;	/* spawns waiting for a slot */
	struct ray_job *queue_tail;
	int running;		/* children started and not yet done */
	int max_parallel;	/* 0: no limit */
	int dirty;		/* the engine asked for a flush */
	int cancel_pending;	/* a queued job's canceller was cancelled */
	uv_timer_t dirty_timer;	/* a flush asked for later */
	int flush_ref;		/* registry ref of the flush function */
	int interrupted;	/* the signal number that stopped the run */
	int quiet_signals;	/* raymond.quiet_signals() was called */
	int stopping;		/* no more launches: error or signal */
	int crashed;		/* a Lua error escaped a coroutine */

	/* Memory (lua_host.c): the whole Lua state, engine and hooks. */
	size_t mem_used;
	size_t mem_limit;	/* 0: no limit */
	int mem_refused;	/* an allocation was refused since this was reset */
	/*
	 * Tests only (tests/unit/luarun.c): when positive, counted down by
	 * every allocation that grows memory; the one that brings it to zero
	 * is refused, and so is the retry Lua makes of it after an emergency
	 * collection, so that the refusal surfaces as an error.  It lets a
	 * test make each raising point of a C function fail in turn.
	 */
	long fail_countdown;
	int fail_retry;		/* the next growing allocation is that retry */
};

/*
 * Signals (lua_sched.c): the handler counts each SIGINT or SIGTERM here and
 * records its number; the loop side of the stop happens in
 * ray__sched_take_signals(), called from the loop or by a hook's limit.
 */
extern volatile sig_atomic_t ray__signal_count;
extern volatile sig_atomic_t ray__signal_last;
/* Act on signals counted since the last call: mark the run, stop it. */
void ray__sched_take_signals(struct ray_host *h);
/* Restore the signal dispositions and close the handles of the scheduler. */
void ray__sched_close(struct ray_host *h);

/* The host of a Lua state, from any C code (the allocator's userdata). */
struct ray_host *ray__host_of(lua_State *L);

/*
 * Charge `steps` units of work done in C to the current hook call of the
 * coroutine L (lua_limit.c), as instructions; raises the error of the
 * count hook ("hook exceeded its ...", "hook interrupted by ...") once the
 * call's budget, deadline or interrupt has tripped.  Without a hook call
 * on L it does nothing.  Code that loops in C on behalf of Lua calls it
 * every few thousand steps.
 */
void ray__limit_charge(lua_State *L, long steps);

/* Replace string.find, match, gmatch, gsub and rep (lua_strlib.c). */
void ray__strlib_install(lua_State *L);

/*
 * lua_api.c: the slot of the userdata at idx, an object of metatable mt
 * holding a C handle (a journal, an archive, a record); raises "the WHAT
 * is closed" once its handle was closed.
 */
void *ray__check_open(lua_State *L, int idx, const char *mt, const char *what);

struct ray_record;
/*
 * lua_record.c: the slot of the debug record at idx (raises if it is not
 * one, or closed); it reads NULL once the record is closed.  And the
 * registration of raymond.record_open on the table at -1.
 */
struct ray_record **ray__record_slot(lua_State *L, int idx);
void ray__record_register(lua_State *L);

/* lua_bridge.c: raymond.bridge_listen and exe_path on the table at -1. */
void ray__bridge_register(lua_State *L);
void ray__http_register(lua_State *L);
void ray__watch_register(lua_State *L);
/* lua_lease.c: raymond.lock, unlock, lock_check, lock_held, lock_owner,
 * lease and host: the run's lease (lease.h). */
void ray__lease_register(lua_State *L);
void ray__new_class(lua_State *L, const char *name, const luaL_Reg *methods);

struct ray_tagparse;
/* Push the tags of `tp` as a list of {name, body, attrs, offset}. */
void ray__push_tags(lua_State *L, const struct ray_tagparse *tp);

/* A live view's block is on stderr (lua_api.c): clear it before writing. */
extern int ray__live_block;
void ray__live_clear(void);

#endif
