/*
 * lua_lease.c - the run's lease for Lua (raymond.lock, unlock, lock_held,
 * lock_owner, lease), and the thread that renews the leases this process
 * holds.  The protocol is in lease.h.
 *
 * Renewal runs on a libuv timer in a loop of its own, in a thread of its
 * own: the main loop does not get control while Lua is busy (a long hook,
 * a big file hashed), and a lease that is not renewed expires.  The
 * thread blocks every signal, so SIGINT and SIGTERM still reach the main
 * thread's handler.
 *
 *	raymond.lock(path) ──take──> held list ──every third of the lease──>
 *	    renew each: renewed ─> on; taken by another, or not renewable
 *	    before it expires ─> lost list, error on stderr, SIGTERM to
 *	    ourselves: the run stops as on Ctrl-C
 *	raymond.lock_check(path), before each save ──> refused once the lease
 *	    is lost (or found taken there): the new owner's state is never
 *	    overwritten; the run stays resumable by the new owner
 *	raymond.unlock(path), or the process's exit ──> release: the file
 *	    goes if it is still ours
 *
 * A process killed with SIGKILL leaves its lease: on this host it holds
 * nothing once its pid is gone; on another it holds until it expires.
 */
#include "lua_priv.h"
#include "lease.h"

#include <errno.h>
#include <lauxlib.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct held {
	struct held *next;
	char *path;
	struct ray_lease mine;
	int warned;		/* a renewal failed and it was said */
	char *lost;		/* why the lease is lost, once it is */
};

static struct {
	uv_mutex_t mu;		/* the lists, against the renewing thread */
	struct held *list;
	struct held *lost;	/* leases lost, for raymond.lock_check */
	int have_self;
	struct ray_lease_self self;
	double seconds;
	int started;		/* the thread runs */
	uv_loop_t loop;
	uv_timer_t timer;
	uv_async_t quit;
	uv_thread_t thread;
} S;

static uv_once_t once = UV_ONCE_INIT;

static void
init_once(void)
{
	uv_mutex_init(&S.mu);
}

/* "2026-11-28T04:00:00Z" */
static void
utc(double t, char *buf, size_t n)
{
	time_t s = (time_t)t;
	struct tm tm;

	gmtime_r(&s, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int
ensure_self(struct ray_err *err)
{
	uv_once(&once, init_once);
	if (S.have_self)
		return 0;
	if (ray_lease_self(&S.self, err) < 0)
		return -1;
	S.seconds = ray_lease_seconds();
	S.have_self = 1;
	return 0;
}

/*
 * Move `h` (unlinked by the caller) to the lost leases, saying why: taken
 * by `holder` (pid not 0), or `why`.
 */
static void
lose(struct held *h, const struct ray_lease *holder, const char *why)
{
	char text[RAY_ERR_MSG + 512], when[32];

	if (holder != NULL && holder->pid != 0) {
		utc(holder->expires, when, sizeof(when));
		snprintf(text, sizeof(text), "the lease '%s' of this run was "
		    "taken by raymond pid %ld on host %s (lease until %s)",
		    h->path, holder->pid, holder->host, when);
	} else {
		snprintf(text, sizeof(text), "the lease '%s' of this run %s",
		    h->path, why);
	}
	h->lost = xstrdup(text);
	h->next = S.lost;
	S.lost = h;
}

static void
on_tick(uv_timer_t *t)
{
	struct held **pp, *h;
	struct ray_lease holder;
	struct ray_err err;
	char msg[RAY_ERR_MSG + 64];
	double period = S.seconds / 3;
	int r;

	(void)t;
	uv_mutex_lock(&S.mu);
	for (pp = &S.list; (h = *pp) != NULL;) {
		r = ray_lease_renew(h->path, &S.self, S.seconds, &h->mine,
		    &holder, &err);
		if (r == 1) {
			h->warned = 0;
		} else if (r == 0 || ray_lease_now() >= h->mine.expires - period) {
			*pp = h->next;
			snprintf(msg, sizeof(msg), r == 0 ? "was removed by "
			    "someone else" : "could not be renewed before it "
			    "expired (%s)", err.msg);
			lose(h, r == 0 ? &holder : NULL, msg);
			fprintf(stderr, "raymond: error: %s; this raymond stops "
			    "at once and saves nothing more, so that two never "
			    "drive one run\n", h->lost);
			/* The run stops as on Ctrl-C, in the main thread. */
			kill(getpid(), SIGTERM);
			continue;
		} else if (!h->warned) {
			fprintf(stderr, "raymond: warning: cannot renew the "
			    "lease '%s' (trying again): %s\n", h->path, err.msg);
			h->warned = 1;
		}
		pp = &h->next;
	}
	uv_mutex_unlock(&S.mu);
}

static void
on_quit(uv_async_t *a)
{
	uv_timer_stop(&S.timer);
	uv_close((uv_handle_t *)&S.timer, NULL);
	uv_close((uv_handle_t *)a, NULL);
}

static void
run_thread(void *arg)
{
	(void)arg;
	uv_run(&S.loop, UV_RUN_DEFAULT);
	uv_loop_close(&S.loop);
}

/* Give up every lease still held: the process ends. */
static void
at_exit(void)
{
	struct held *h, *next;
	struct ray_err err;

	if (S.started) {
		uv_async_send(&S.quit);
		uv_thread_join(&S.thread);
		S.started = 0;
	}
	uv_mutex_lock(&S.mu);
	for (h = S.list; h != NULL; h = next) {
		next = h->next;
		ray_lease_release(h->path, &S.self, S.seconds, &h->mine, &err);
		free(h->path);
		free(h);
	}
	S.list = NULL;
	uv_mutex_unlock(&S.mu);
}

static int
start_thread(struct ray_err *err)
{
	sigset_t all, old;
	uint64_t ms = (uint64_t)(S.seconds * 1000 / 3);
	int r;

	if (S.started)
		return 0;
	if ((r = uv_loop_init(&S.loop)) < 0)
		return ray_err_set(err, RAY_EIO, "cannot start the lease's "
		    "renewal: %s", uv_strerror(r));
	uv_timer_init(&S.loop, &S.timer);
	uv_async_init(&S.loop, &S.quit, on_quit);
	uv_timer_start(&S.timer, on_tick, ms, ms);
	/* The thread inherits the mask: every signal goes to the others. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = uv_thread_create(&S.thread, run_thread, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		uv_close((uv_handle_t *)&S.timer, NULL);
		uv_close((uv_handle_t *)&S.quit, NULL);
		uv_run(&S.loop, UV_RUN_DEFAULT);
		uv_loop_close(&S.loop);
		return ray_err_set(err, RAY_EIO, "cannot start the lease's "
		    "renewal: %s", uv_strerror(r));
	}
	S.started = 1;
	atexit(at_exit);
	return 0;
}

static int
fail_with(lua_State *L, const struct ray_err *err)
{
	lua_pushnil(L);
	lua_pushstring(L, err->msg);
	return 2;
}

/* {host=, pid=, expires=, live=, here=} for lease `l`. */
static void
push_lease(lua_State *L, const struct ray_lease *l)
{
	lua_createtable(L, 0, 5);
	lua_pushstring(L, l->host);
	lua_setfield(L, -2, "host");
	lua_pushinteger(L, l->pid);
	lua_setfield(L, -2, "pid");
	lua_pushnumber(L, l->expires);
	lua_setfield(L, -2, "expires");
	lua_pushboolean(L, ray_lease_live(l, &S.self, ray_lease_now()));
	lua_setfield(L, -2, "live");
	lua_pushboolean(L, strcmp(l->host, S.self.host) == 0);
	lua_setfield(L, -2, "here");
}

/*
 * raymond.lock(path) -> true | nil, message, "locked", holder
 *
 * Takes the lease at `path` and renews it until raymond.unlock(path) or
 * the end of the process.  Refused ("locked") while another process's
 * lease is live; `holder` is raymond.lease's table of it.
 */
static int
api_lock(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	struct ray_lease mine, holder;
	struct ray_err err;
	struct held *h;
	char when[32];
	int r;

	if (ensure_self(&err) < 0)
		return fail_with(L, &err);
	r = ray_lease_take(path, &S.self, S.seconds, &mine, &holder, &err);
	if (r < 0)
		return fail_with(L, &err);
	if (r == 0) {
		utc(holder.expires, when, sizeof(when));
		lua_pushnil(L);
		lua_pushfstring(L, "'%s' is held by raymond pid %d on host %s "
		    "until %s, unless renewed", path, (int)holder.pid,
		    holder.host, when);
		lua_pushliteral(L, "locked");
		push_lease(L, &holder);
		return 4;
	}
	h = xmalloc(sizeof(*h));
	memset(h, 0, sizeof(*h));
	h->path = xstrdup(path);
	h->mine = mine;
	uv_mutex_lock(&S.mu);
	h->next = S.list;
	S.list = h;
	r = start_thread(&err);
	uv_mutex_unlock(&S.mu);
	if (r < 0)
		return fail_with(L, &err);
	lua_pushboolean(L, 1);
	return 1;
}

/* raymond.unlock(path): give up the lease taken with raymond.lock(path). */
static int
api_unlock(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	struct held **pp, *h = NULL;
	struct ray_err err;

	uv_once(&once, init_once);
	uv_mutex_lock(&S.mu);
	for (pp = &S.list; *pp != NULL; pp = &(*pp)->next) {
		if (strcmp((*pp)->path, path) == 0) {
			h = *pp;
			*pp = h->next;
			break;
		}
	}
	uv_mutex_unlock(&S.mu);
	if (h == NULL)
		return 0;
	ray_lease_release(h->path, &S.self, S.seconds, &h->mine, &err);
	free(h->path);
	free(h);
	return 0;
}

/*
 * raymond.lock_check(path) -> true | nil, message: whether this process
 * may still write the run whose lease is `path`.  nil once the lease is
 * lost: taken by another, gone, or not renewed in time.  A save asks
 * first, so a raymond that stalled past its lease never overwrites what
 * the new owner saved.  A path this process never locked passes.
 */
static int
api_lock_check(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	struct held **pp, *h;
	struct ray_lease cur;
	struct ray_err err;
	char why[RAY_ERR_MSG + 512] = "";
	int r;

	uv_once(&once, init_once);
	uv_mutex_lock(&S.mu);
	for (h = S.lost; h != NULL && why[0] == '\0'; h = h->next)
		if (strcmp(h->path, path) == 0)
			snprintf(why, sizeof(why), "%s", h->lost);
	for (pp = &S.list; why[0] == '\0' && (h = *pp) != NULL; pp = &h->next) {
		if (strcmp(h->path, path) != 0)
			continue;
		/* An error reading it is left to the renewal to judge. */
		r = ray_lease_read(path, &cur, &err);
		if (r == 0 || (r == 1 && strcmp(cur.token, h->mine.token) != 0)) {
			*pp = h->next;
			lose(h, &cur, "was removed by someone else");
			snprintf(why, sizeof(why), "%s", h->lost);
		}
		break;
	}
	uv_mutex_unlock(&S.mu);
	if (why[0] == '\0') {
		lua_pushboolean(L, 1);
		return 1;
	}
	lua_pushnil(L);
	lua_pushstring(L, why);
	return 2;
}

/*
 * Read the lease at the path argument: 1 and `l` filled, 0 none, or -1
 * with nil and the message pushed.
 */
static int
read_arg(lua_State *L, struct ray_lease *l)
{
	const char *path = luaL_checkstring(L, 1);
	struct ray_err err;
	int r;

	if (ensure_self(&err) < 0 || (r = ray_lease_read(path, l, &err)) < 0) {
		fail_with(L, &err);
		return -1;
	}
	return r;
}

/*
 * raymond.lock_held(path) -> true while a live lease is there (lease.h):
 * a raymond drives the run.  nil and a message when `path` is not a
 * regular file.
 */
static int
api_lock_held(lua_State *L)
{
	struct ray_lease l;
	int r = read_arg(L, &l);

	if (r < 0)
		return 2;
	lua_pushboolean(L, r == 1 && ray_lease_live(&l, &S.self,
	    ray_lease_now()));
	return 1;
}

/*
 * raymond.lock_owner(path) -> pid | nil: the process of this host that
 * holds the lease `path` now; nil when none does, or when the holder is
 * on another host (a pid there means nothing here).
 */
static int
api_lock_owner(lua_State *L)
{
	struct ray_lease l;
	int r = read_arg(L, &l);

	if (r < 0)
		return 2;
	if (r == 1 && ray_lease_live(&l, &S.self, ray_lease_now()) &&
	    strcmp(l.host, S.self.host) == 0 && l.pid > 1)
		lua_pushinteger(L, l.pid);
	else
		lua_pushnil(L);
	return 1;
}

/*
 * raymond.lease(path) -> {host=, pid=, expires=, live=, here=} | false |
 * nil, message: the lease there, whether it holds the run now and
 * whether its host is this one; false when there is none.
 */
static int
api_lease(lua_State *L)
{
	struct ray_lease l;
	int r = read_arg(L, &l);

	if (r < 0)
		return 2;
	if (r == 0)
		lua_pushboolean(L, 0);
	else
		push_lease(L, &l);
	return 1;
}

/* raymond.host() -> the name this host goes by in leases (lease.h). */
static int
api_host(lua_State *L)
{
	struct ray_err err;

	if (ensure_self(&err) < 0)
		return fail_with(L, &err);
	lua_pushstring(L, S.self.host);
	return 1;
}

static const luaL_Reg lease_funcs[] = {
	{ "lock", api_lock },
	{ "unlock", api_unlock },
	{ "lock_check", api_lock_check },
	{ "lock_held", api_lock_held },
	{ "lock_owner", api_lock_owner },
	{ "lease", api_lease },
	{ "host", api_host },
	{ NULL, NULL },
};

void
ray__lease_register(lua_State *L)
{
	luaL_setfuncs(L, lease_funcs, 0);
}
