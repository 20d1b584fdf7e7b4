/*
 * lua_priv.h - the host structure shared by lua_host.c, lua_sched.c and
 * lua_api.c.  Nothing outside those three files includes it.
 */
#ifndef RAY_LUA_PRIV_H
#define RAY_LUA_PRIV_H

#include <lua.h>
#include <uv.h>

#include "lua_host.h"

struct ray_job;

struct ray_host {
	lua_State *L;
	uv_loop_t *loop;

	/* Scheduler (lua_sched.c). */
	uv_prepare_t prepare;	/* flushes state, then launches jobs */
	uv_signal_t sigint;
	uv_signal_t sigterm;
	struct ray_job *queue_head;	/* spawns waiting for a slot */
	struct ray_job *queue_tail;
	int running;		/* children started and not yet done */
	int max_parallel;	/* 0: no limit */
	int dirty;		/* the engine asked for a flush */
	uv_timer_t dirty_timer;	/* a flush asked for later */
	int flush_ref;		/* registry ref of the flush function */
	int interrupted;	/* the signal number that stopped the run */
	int stopping;		/* no more launches: error or signal */
	int crashed;		/* a Lua error escaped a coroutine */

	/* Memory (lua_host.c): the whole Lua state, engine and hooks. */
	size_t mem_used;
	size_t mem_limit;	/* 0: no limit */
	int mem_refused;	/* an allocation was refused since this was reset */
	/*
	 * Tests only (tests/unit/luarun.c): when positive, counted down by
	 * every allocation that grows memory; the one that brings it to zero
	 * is refused.  It lets a test make each raising point of a C function
	 * fail in turn.
	 */
	long fail_countdown;
};

struct ray_tagparse;
/* Push the tags of `tp` as a list of {name, body, attrs, offset}. */
void ray__push_tags(lua_State *L, const struct ray_tagparse *tp);

#endif
