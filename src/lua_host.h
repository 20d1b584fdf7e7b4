/*
 * lua_host.h - the Lua state of a raymond process and the scheduler that
 * runs Lua coroutines on the libuv loop.
 *
 * The engine (lua/raymond/NAME.lua) and hooks run as coroutines.  A coroutine
 * that calls a waiting primitive (raymond.spawn, raymond.sleep) yields;
 * the libuv callback that completes the wait resumes it with the result.
 * Nothing in Lua ever blocks the loop, so agents progress independently.
 *
 * Calling sequence:
 *
 *	ray_host_open(loop, &h, &err);
 *	ray_host_start(h, "raymond.main", "main", push_args, ud, &err);
 *	uv_run(loop, UV_RUN_DEFAULT);     returns when no work is left
 *	code = ray_host_finish(h, "raymond.main", "finish");
 *	ray_host_close(h);
 *
 * Durable state before side effects: Lua marks the run dirty after every
 * transition (raymond.mark_dirty).  Once per loop iteration, before any
 * queued child process is started, the host calls the flush function the
 * engine registered (raymond.set_flush), which writes the state file.  So
 * a state never starts before the transition that led to it is on disk,
 * and many transitions completing together cost one write.
 *
 * Errors: functions return 0 or a negative code and fill `err`.  A Lua
 * error escaping a coroutine is an internal error: it is printed with its
 * traceback, every child is stopped, and ray_host_finish() returns 1.
 *
 * Ownership: the host owns the lua_State; close it with ray_host_close().
 */
#ifndef RAY_LUA_HOST_H
#define RAY_LUA_HOST_H

#include <lua.h>
#include <uv.h>

#include "ray.h"

struct ray_host;

/* Pushes the arguments for the start function; returns how many. */
typedef int (*ray_host_push_fn)(lua_State *L, void *ud);

int ray_host_open(uv_loop_t *loop, struct ray_host **out, struct ray_err *err);
int ray_host_start(struct ray_host *h, const char *module, const char *fn,
    ray_host_push_fn push, void *ud, struct ray_err *err);
int ray_host_finish(struct ray_host *h, const char *module, const char *fn);
lua_State *ray_host_lua(struct ray_host *h);
void ray_host_close(struct ray_host *h);

/* Used by lua_api.c: the host stored as the raymond functions' upvalue. */
struct ray_host *ray__host_from(lua_State *L);
/* Register the scheduling functions (go, spawn, sleep, ...) on the table at -1. */
void ray__sched_register(lua_State *L, struct ray_host *h);
/* Register the other raymond functions on the table at -1. */
void ray__api_register(lua_State *L, struct ray_host *h);
/* Register the hook-call limits (lua_limit.c) on the table at -1. */
void ray__limit_register(lua_State *L, struct ray_host *h);
/* Call f (at -1-nargs) with a traceback handler; on error leave the message. */
int ray__pcall(lua_State *L, int nargs, int nres);
/* A message handler adding a traceback to an error message. */
int ray__traceback(lua_State *L);

#endif
