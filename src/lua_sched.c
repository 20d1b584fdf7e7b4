/*
 * lua_sched.c - coroutines on the loop: raymond.go, raymond.spawn,
 * raymond.sleep, state flushing and signal handling (see lua_host.h).
 *
 * A job is one raymond.spawn call.  Its life:
 *
 *	spawn() ──> QUEUED ──(prepare: flush, then a free slot)──> RUNNING
 *	   │            │                                            │
 *	   │            └──(stop: error or signal)──> resumed with {killed=true}
 *	   │                                                         │
 *	   └── the calling coroutine is suspended until ───── done ──┘
 *	       the job resumes it with its result table
 *
 * The job is a userdata on the waiting coroutine's stack, with a __gc
 * that frees what it holds outside Lua (argv, env, cwd, files, buffers).
 * Everything raymond.spawn reads from its table is copied into the job only
 * after the job exists, so an argument that raises (a non-string argv entry,
 * a __tostring that errors, a refused allocation) leaves nothing behind:
 * the collector frees the job.  The result table is built by the spawn's
 * continuation, inside the coroutine, where a raise is an ordinary error
 * of the engine's code rather than one in a libuv callback.
 *
 * The prepare handle runs once per loop iteration while there is work for
 * it (a dirty state, a queued job, a stop to carry out) and is stopped
 * otherwise, so an idle loop can exit.  The signal wake-up handle is
 * unreferenced for the same reason.
 *
 * Stopping (raymond.stop(), an internal error or a signal): queued jobs are
 * resumed as killed, running ones get their process groups SIGTERMed
 * (SIGKILLed 1 s later), every raymond.sleep is woken returning false, a
 * sleep begun later returns false at once, and each coroutine then returns
 * without applying a transition, so the state on disk still names the
 * states that were running and --resume runs them again.
 *
 * Signals: libuv's uv_signal runs its callback only when the loop gets
 * control, and a hook spinning in Lua keeps it from doing so.  So the
 * handler is ours: it counts the signal in ray__signal_count, which the
 * limits of hook calls watch (lua_limit.c), and wakes the loop with
 * uv_async_send (async-signal-safe).  Whichever sees the new count first,
 * the wake-up callback or a hook's limit, carries out the stop:
 *
 *	SIGINT/SIGTERM ──> handler: ray__signal_last = signo,
 *	                   ray__signal_count++, uv_async_send
 *	                      │                          │
 *	    a hook call's limit sees the count        the loop runs
 *	    moved (count hook, strlib step check)     on_signal_async
 *	                      │                          │
 *	                      └──> ray__sched_take_signals(h): ──┘
 *	           count != signals_seen?  no: nothing (already done)
 *	                    yes: signals_seen = count; the first time mark the
 *	                    run interrupted and say so on stderr; stop_run()
 *
 * The first signal marks the run interrupted (exit status 130, decided by
 * the engine); every signal stops it again, which signals the children.
 */
#include "lua_priv.h"
#include "proc.h"
#include "record.h"
#include "termsafe.h"
#include "tagparse.h"
#include "buf.h"

#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TAIL_MAX 4096
#define CAPTURE_MAX (64 * 1024 * 1024)
#define LINE_MAX_DEFAULT (8 * 1024 * 1024)

static const char JOB[] = "raymond.job";
static const char HOLD[] = "raymond.hold";
static const char CANCEL[] = "raymond.canceller";

/*
 * raymond.canceller(): ends the commands of one agent without stopping
 * the run.  Given to raymond.spawn{..., cancel = c}, it knows the job that
 * runs under it (an agent runs one command at a time); c:cancel() kills
 * that job's process group, or takes it out of the queue, and every later
 * spawn under it ends at once as killed.
 */
struct ray_canceller {
	int cancelled;
	struct ray_job *job;	/* the job queued or running under it */
};

/*
 * Where one pipe's <print> text goes: made safe, then to stdout or, a line
 * at a time, to the job's `prints` function.  Each pipe has its own, so
 * a print on stdout and one on stderr never share a line.
 */
struct print_stream {
	struct ray_job *j;
	struct ray_termsafe_print safe;	/* <print> text is untrusted */
	struct ray_buf line;	/* the <print> line being assembled */
};

struct ray_job {
	struct ray_host *h;
	struct ray_job *next;
	lua_State *co;
	int co_ref;
	char **argv;
	char **env;
	char *cwd;
	uint64_t timeout_ms;
	uint64_t grace_ms;	/* SIGTERM to SIGKILL, 0: proc.c's default */
	struct ray_record **record;	/* the debug record's slot, or NULL */
	int record_ref;		/* keeps the record's userdata alive */
	unsigned long record_step;	/* the step its pieces belong to */
	struct ray_tagparse *tp;	/* NULL unless tags are wanted */
	struct ray_err tag_err;
	int tag_failed;
	struct print_stream out_print;
	/*
	 * With tags, stderr's <print> text is shown too; its other tags are
	 * not looked for: only stdout steers the workflow.
	 */
	struct ray_tagparse *err_prints;
	int err_prints_failed;	/* malformed <print ...>: no more looked for */
	struct print_stream err_print;
	struct ray_buf out_tail;
	struct ray_buf err_tail;
	char *spawn_error;
	int has_result;		/* the command ran; `result` says how it ended */
	struct ray_proc_result result;
	int capture;		/* keep all of stdout and stderr (raymond.exec) */
	struct ray_buf out_all;
	struct ray_buf err_all;
	int lines_ref;		/* function called per stdout line, or LUA_NOREF */
	struct ray_buf line;	/* the stdout line being assembled */
	int lines_failed;	/* the line function raised; no more calls */
	char *group_file;	/* where the command's group is recorded */
	size_t lines_max;	/* the longest line handed on, in bytes */
	int line_too_long;	/* a longer one came: no more calls, killed */
	struct ray_proc *proc;	/* while it runs, for that kill */
	int input_ref;		/* the string for stdin, or LUA_NOREF */
	int prints_ref;		/* function called per <print> line, or LUA_NOREF */
	const struct ray_proc_hold *hold;	/* raymond.hold() given, or NULL */
	int hold_ref;		/* keeps the hold's userdata alive */
	struct ray_canceller *cancel;	/* raymond.canceller() given, or NULL */
	int cancel_ref;		/* keeps the canceller's userdata alive */
	int prints_failed;	/* the prints function raised; no more calls */
};

struct ray_host *
ray__host_from(lua_State *L)
{
	return lua_touserdata(L, lua_upvalueindex(1));
}

static void schedule(struct ray_host *h);
static void on_prepare(uv_prepare_t *ph);
static int call_fn(struct ray_job *j, int ref, const char *s, size_t n,
    int unterminated);

/* A Lua error the engine did not catch: report it and stop everything. */
static void
crash(struct ray_host *h, const char *msg)
{
	ray__live_clear();
	fprintf(stderr, "raymond: internal error: %s\n", msg ? msg : "(no message)");
	h->crashed = 1;
	h->stopping = 1;
	ray_proc_kill_all();
	uv_prepare_start(&h->prepare, on_prepare);
}

/* The traceback of the dead coroutine (argument 1), in protected mode. */
static int
traceback_of(lua_State *L)
{
	lua_State *co = lua_touserdata(L, 1);
	const char *msg = NULL;

	if (lua_type(co, -1) == LUA_TSTRING)
		msg = lua_tostring(co, -1);
	luaL_traceback(L, co, msg ? msg : "(error object is not a string)", 0);
	return 1;
}

/*
 * Resume `co` with the nargs values on its stack; `from` is the thread
 * doing it (the main thread in libuv callbacks).  Whoever waits on a
 * coroutine (raymond.go until the first yield, then each job or sleep)
 * holds one registry reference to it, released here after the resume; a
 * coroutine that yields again is referenced anew by what it waits on.  A
 * coroutine that raises is an internal error: the engine catches its own.
 * Its traceback is made in protected mode, since this runs outside any
 * Lua call; if even that fails, the bare message is reported.
 */
static void
resume(struct ray_host *h, lua_State *co, int ref, int nargs, lua_State *from)
{
	lua_State *L = h->L;
	int nres, r;

	r = lua_resume(co, from, nargs, &nres);
	if (r == LUA_YIELD) {
		lua_pop(co, nres);
	} else if (r != LUA_OK) {
		lua_pushcfunction(L, traceback_of);
		lua_pushlightuserdata(L, co);
		if (lua_pcall(L, 1, 1, 0) == LUA_OK)
			crash(h, lua_tostring(L, -1));
		else
			crash(h, lua_type(co, -1) == LUA_TSTRING ?
			    lua_tostring(co, -1) : "(no message)");
		lua_pop(L, 1);
	}
	luaL_unref(L, LUA_REGISTRYINDEX, ref);
}

/* raymond.go(fn, ...): run fn(...) as a new coroutine, now. */
static int
api_go(lua_State *L)
{
	struct ray_host *h = ray__host_from(L);
	int n = lua_gettop(L);
	lua_State *co;
	int ref;

	luaL_checktype(L, 1, LUA_TFUNCTION);
	co = lua_newthread(L);
	if (!lua_checkstack(co, n))
		return luaL_error(L, "raymond.go: too many arguments");
	lua_pushvalue(L, -1);
	ref = luaL_ref(L, LUA_REGISTRYINDEX);
	lua_pop(L, 1);
	lua_xmove(L, co, n);	/* fn and its arguments */
	resume(h, co, ref, n - 1, L);
	return 0;
}

/* ---- strings in and out of Lua tables ---------------------------------- */

/*
 * The array at idx as a NULL-terminated list, stored in *out as soon as it
 * exists: *out belongs to a job whose __gc frees it, so a raise half way
 * (an entry that is not a string) leaks nothing.
 */
static void
strv_from_array(lua_State *L, int idx, char ***out)
{
	size_t n = lua_rawlen(L, idx), i;
	const char *s;
	char **v;

	v = *out = xcalloc(n + 1, sizeof(char *));
	for (i = 0; i < n; i++) {
		lua_rawgeti(L, idx, (lua_Integer)i + 1);
		s = lua_tostring(L, -1);
		if (s == NULL)
			luaL_error(L, "raymond.spawn: argv[%d] is a %s, not a string",
			    (int)i + 1, luaL_typename(L, -1));
		v[i] = xstrdup(s);
		lua_pop(L, 1);
	}
}

/*
 * {K = V, ...} -> "K=V" list in *out, kept NULL-terminated as it grows,
 * for the same reason.  Each value is converted (luaL_tolstring, which
 * may raise) before its entry is allocated; a string, as nearly every
 * value of an environment is, is taken as it is, without the metatable
 * lookups of luaL_tolstring, since every spawn passes the whole
 * environment.
 */
static void
strv_from_map(lua_State *L, int idx, char ***out)
{
	size_t n = 0, cap = 16, kl, vl;
	const char *key, *val;
	char *e;

	*out = xcalloc(cap, sizeof(char *));
	lua_pushnil(L);
	while (lua_next(L, idx) != 0) {
		if (lua_type(L, -2) == LUA_TSTRING) {
			if (lua_type(L, -1) == LUA_TSTRING) {
				lua_pushvalue(L, -1);
				val = lua_tolstring(L, -1, &vl);
			} else {
				val = luaL_tolstring(L, -1, &vl);
			}			/* key value str */
			key = lua_tolstring(L, -3, &kl);
			if (n + 2 > cap) {
				cap *= 2;
				*out = xrealloc(*out, cap * sizeof(char *));
			}
			e = xmalloc(kl + vl + 2);
			memcpy(e, key, kl);
			e[kl] = '=';
			memcpy(e + kl + 1, val, vl);
			e[kl + 1 + vl] = '\0';
			(*out)[n++] = e;
			(*out)[n] = NULL;
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
	}
}

static void
strv_free(char **v)
{
	char **p;

	if (v == NULL)
		return;
	for (p = v; *p; p++)
		free(*p);
	free(v);
}

/* ---- output handling --------------------------------------------------- */

static void
keep_tail(struct ray_buf *b, const char *data, size_t len)
{
	if (len >= TAIL_MAX) {
		ray_buf_reset(b);
		ray_buf_add(b, data + len - TAIL_MAX, TAIL_MAX);
		return;
	}
	ray_buf_add(b, data, len);
	if (b->len > 2 * TAIL_MAX)
		ray_buf_consume(b, b->len - TAIL_MAX);
}

/* A chunk of output into the debug record; keeping it is best effort. */
static void
record_chunk(struct ray_job *j, const char *piece, const char *data, size_t len)
{
	if (j->record != NULL && *j->record != NULL)
		ray_record_put(*j->record, j->record_step, piece, data, len);
}

/*
 * The longest <print> line handed to a `prints` function whole; a longer
 * one is handed on in pieces of about this size (a terminal shows its
 * start), each cut between characters.
 */
#define PRINT_LINE_MAX 65536

/*
 * How much of the `len` bytes at s (valid UTF-8, as termsafe makes it)
 * to hand on so that no character is split: all of them, or up to the
 * start of a last character they end inside.
 */
static size_t
utf8_cut(const char *s, size_t len)
{
	size_t i = len, need;
	unsigned char c;

	while (i > 0 && len - i < 3 && ((unsigned char)s[i - 1] & 0xC0) == 0x80)
		i--;
	if (i == 0)
		return len;
	c = (unsigned char)s[i - 1];
	need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
	return len - (i - 1) < need ? i - 1 : len;
}

/*
 * Hand the first n bytes of the <print> line to the `prints` function
 * and drop them.  A function that raised is reported once (call_fn) and
 * called no more, as the line function is.
 */
static void
print_line_out(struct print_stream *s, size_t n)
{
	struct ray_job *j = s->j;

	if (call_fn(j, j->prints_ref, s->line.data, n, 0) < 0)
		j->prints_failed = 1;
	ray_buf_consume(&s->line, n);
}

/*
 * Shown <print> text, to stdout; or, when the job has a `prints`
 * function, to it a line at a time (without the newline), so the caller
 * can put each line where it belongs on a terminal.
 */
static void
print_out(void *ud, const char *text, size_t len)
{
	struct print_stream *s = ud;
	struct ray_job *j = s->j;
	const char *nl;

	if (j->prints_ref == LUA_NOREF) {
		fwrite(text, 1, len, stdout);
		return;
	}
	while (len > 0 && !j->prints_failed) {
		size_t n, room = PRINT_LINE_MAX - s->line.len;

		nl = memchr(text, '\n', len);
		n = nl ? (size_t)(nl - text) : len;
		if (n > room)
			n = room;
		ray_buf_add(&s->line, text, n);
		text += n;
		len -= n;
		if (len > 0 && *text == '\n') {
			text++;
			len--;
			print_line_out(s, s->line.len);
		} else if (s->line.len == PRINT_LINE_MAX) {
			print_line_out(s, utf8_cut(s->line.data, s->line.len));
		}
	}
}

/*
 * <print> text goes to stdout as it arrives, one newline after each, with
 * its control characters shown rather than obeyed (termsafe.h): it is text
 * for people, on a terminal or in a log, and a child's to choose.
 */
static void
on_print(void *ud, const char *text, size_t len, int end)
{
	struct print_stream *s = ud;

	ray_termsafe_print(&s->safe, text, len, end, print_out, s);
	fflush(stdout);
}

/*
 * Hand one line (without its newline or a CR before it) to the job's line
 * function, which runs on the main Lua thread while the job's coroutine
 * waits; its second argument is true for a last line that had no newline
 * (output cut short).  A line function that raises is an internal error.
 */
static int
call_line_protected(lua_State *L)
{
	int ref = (int)lua_tointeger(L, 1);
	const char *s = lua_touserdata(L, 2);
	size_t n = (size_t)lua_tointeger(L, 3);
	int unterminated = lua_toboolean(L, 4);

	lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
	lua_pushlstring(L, s, n);
	lua_pushboolean(L, unterminated);
	lua_call(L, 2, 0);
	return 0;
}

/* Call function `ref` with a line; 0, or -1 when it raised (reported). */
static int
call_fn(struct ray_job *j, int ref, const char *s, size_t n, int unterminated)
{
	lua_State *L = j->h->L;

	/* Only pushes that cannot allocate happen outside protected mode. */
	lua_pushcfunction(L, call_line_protected);
	lua_pushinteger(L, ref);
	lua_pushlightuserdata(L, (void *)s);
	lua_pushinteger(L, (lua_Integer)n);
	lua_pushboolean(L, unterminated);
	if (ray__pcall(L, 4, 0) != LUA_OK) {
		crash(j->h, lua_tostring(L, -1));
		lua_pop(L, 1);
		return -1;
	}
	return 0;
}

static void
call_line(struct ray_job *j, const char *s, size_t n, int unterminated)
{
	if (j->lines_failed)
		return;
	if (n > 0 && s[n - 1] == '\r')
		n--;
	if (call_fn(j, j->lines_ref, s, n, unterminated) < 0)
		j->lines_failed = 1;
}

/*
 * A line longer than lines_max: the line function gets no more lines, the
 * command is killed (what follows could not be understood anyway), and the
 * result says line_too_long.
 */
static void
line_overflow(struct ray_job *j)
{
	j->line_too_long = 1;
	j->lines_failed = 1;
	ray_buf_release(&j->line);
	if (j->proc != NULL)
		ray_proc_kill(j->proc);
}

/*
 * Split output into lines.  Complete lines inside the chunk are handed on
 * straight from it; only a trailing partial line is copied, so memory is
 * bounded by lines_max.
 */
static void
feed_lines(struct ray_job *j, const char *data, size_t len)
{
	const char *nl;

	if (j->line_too_long)
		return;
	while ((nl = memchr(data, '\n', len)) != NULL) {
		size_t n = (size_t)(nl - data);

		if (j->line.len + n > j->lines_max) {
			line_overflow(j);
			return;
		}
		if (j->line.len > 0) {
			ray_buf_add(&j->line, data, n);
			call_line(j, j->line.data, j->line.len, 0);
			ray_buf_reset(&j->line);
		} else {
			call_line(j, data, n, 0);
		}
		data += n + 1;
		len -= n + 1;
	}
	if (j->line.len + len > j->lines_max)
		line_overflow(j);
	else if (len > 0)
		ray_buf_add(&j->line, data, len);
}

static void
on_out(void *ud, const char *data, size_t len)
{
	struct ray_job *j = ud;

	record_chunk(j, "stdout", data, len);
	keep_tail(&j->out_tail, data, len);
	if (j->capture && j->out_all.len < CAPTURE_MAX)
		ray_buf_add(&j->out_all, data, len);
	if (j->tp && !j->tag_failed &&
	    ray_tagparse_feed(j->tp, data, len, &j->tag_err) < 0)
		j->tag_failed = 1;
	if (j->lines_ref != LUA_NOREF)
		feed_lines(j, data, len);
}

static void
on_err(void *ud, const char *data, size_t len)
{
	struct ray_job *j = ud;

	record_chunk(j, "stderr", data, len);
	keep_tail(&j->err_tail, data, len);
	if (j->capture && j->err_all.len < CAPTURE_MAX)
		ray_buf_add(&j->err_all, data, len);
	if (j->err_prints && !j->err_prints_failed &&
	    ray_tagparse_feed(j->err_prints, data, len, NULL) < 0)
		j->err_prints_failed = 1;
}

/* ---- results ----------------------------------------------------------- */

void
ray__push_tags(lua_State *L, const struct ray_tagparse *tp)
{
	size_t i, k, n = ray_tagparse_count(tp);

	lua_createtable(L, (int)n, 0);
	for (i = 0; i < n; i++) {
		const struct ray_tag *t = ray_tagparse_tag(tp, i);

		lua_createtable(L, 0, 4);
		lua_pushstring(L, t->name);
		lua_setfield(L, -2, "name");
		lua_pushlstring(L, t->body, t->body_len);
		lua_setfield(L, -2, "body");
		lua_pushinteger(L, (lua_Integer)t->offset);
		lua_setfield(L, -2, "offset");
		lua_createtable(L, 0, (int)t->nattrs);
		for (k = 0; k < t->nattrs; k++) {
			lua_pushstring(L, t->attrs[k].value);
			lua_setfield(L, -2, t->attrs[k].key);
		}
		lua_setfield(L, -2, "attrs");
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
}

static void
push_result(lua_State *L, struct ray_job *j)
{
	const struct ray_proc_result *res = j->has_result ? &j->result : NULL;

	lua_createtable(L, 0, 10);
	if (j->spawn_error) {
		lua_pushstring(L, j->spawn_error);
		lua_setfield(L, -2, "spawn_error");
	}
	if (res) {
		if (res->term_signal) {
			lua_pushinteger(L, res->term_signal);
			lua_setfield(L, -2, "signal");
		} else {
			lua_pushinteger(L, res->exit_status);
			lua_setfield(L, -2, "exit");
		}
		lua_pushboolean(L, res->timed_out);
		lua_setfield(L, -2, "timed_out");
		lua_pushboolean(L, res->killed);
		lua_setfield(L, -2, "killed");
		lua_pushnumber(L, (double)res->duration_ns / 1e9);
		lua_setfield(L, -2, "duration");
		lua_pushboolean(L, j->line_too_long);
		lua_setfield(L, -2, "line_too_long");
	} else if (!j->spawn_error) {
		lua_pushboolean(L, 1);	/* stopped before it started */
		lua_setfield(L, -2, "killed");
	}
	lua_pushlstring(L, ray_buf_str(&j->out_tail), j->out_tail.len);
	lua_setfield(L, -2, "stdout_tail");
	lua_pushlstring(L, ray_buf_str(&j->err_tail), j->err_tail.len);
	lua_setfield(L, -2, "stderr_tail");
	if (j->capture) {
		lua_pushlstring(L, ray_buf_str(&j->out_all), j->out_all.len);
		lua_setfield(L, -2, "stdout");
		lua_pushlstring(L, ray_buf_str(&j->err_all), j->err_all.len);
		lua_setfield(L, -2, "stderr");
	}
	if (j->tp) {
		if (!j->tag_failed &&
		    ray_tagparse_finish(j->tp, &j->tag_err) < 0)
			j->tag_failed = 1;
		if (j->tag_failed) {
			lua_pushstring(L, j->tag_err.msg);
			lua_setfield(L, -2, "tag_error");
		} else {
			ray__push_tags(L, j->tp);
			lua_setfield(L, -2, "tags");
		}
	}
}

/* Free what the job holds outside Lua; a second call does nothing. */
static void
job_release(lua_State *L, struct ray_job *j)
{
	strv_free(j->argv);
	j->argv = NULL;
	strv_free(j->env);
	j->env = NULL;
	free(j->cwd);
	j->cwd = NULL;
	luaL_unref(L, LUA_REGISTRYINDEX, j->record_ref);
	j->record_ref = LUA_NOREF;
	j->record = NULL;
	if (j->tp)
		ray_tagparse_free(j->tp);
	j->tp = NULL;
	if (j->err_prints)
		ray_tagparse_free(j->err_prints);
	j->err_prints = NULL;
	ray_buf_release(&j->out_tail);
	ray_buf_release(&j->err_tail);
	ray_buf_release(&j->line);
	ray_buf_release(&j->out_print.line);
	ray_buf_release(&j->err_print.line);
	ray_buf_release(&j->out_all);
	ray_buf_release(&j->err_all);
	luaL_unref(L, LUA_REGISTRYINDEX, j->lines_ref);
	j->lines_ref = LUA_NOREF;
	luaL_unref(L, LUA_REGISTRYINDEX, j->prints_ref);
	j->prints_ref = LUA_NOREF;
	luaL_unref(L, LUA_REGISTRYINDEX, j->input_ref);
	j->input_ref = LUA_NOREF;
	luaL_unref(L, LUA_REGISTRYINDEX, j->hold_ref);
	j->hold_ref = LUA_NOREF;
	j->hold = NULL;
	if (j->cancel && j->cancel->job == j)
		j->cancel->job = NULL;
	luaL_unref(L, LUA_REGISTRYINDEX, j->cancel_ref);
	j->cancel_ref = LUA_NOREF;
	j->cancel = NULL;
	free(j->spawn_error);
	j->spawn_error = NULL;
	free(j->group_file);
	j->group_file = NULL;
}

static int
job_gc(lua_State *L)
{
	job_release(L, lua_touserdata(L, 1));
	return 0;
}

/*
 * Resume the job's coroutine; its continuation (spawn_resumed) builds the
 * result and releases the job.  The job may be collected during the
 * resume, so nothing here touches it afterwards.
 */
static void
job_complete(struct ray_job *j, const struct ray_proc_result *res)
{
	if (j->err_prints && !j->err_prints_failed)
		ray_tagparse_finish(j->err_prints, NULL);
	if (j->out_print.safe.open)
		on_print(&j->out_print, "", 0, 1);
	if (j->err_print.safe.open)
		on_print(&j->err_print, "", 0, 1);
	if (j->lines_ref != LUA_NOREF && j->line.len > 0 && !j->line_too_long)
		call_line(j, j->line.data, j->line.len, 1);
	if (res) {
		j->result = *res;
		j->has_result = 1;
	}
	if (j->cancel && j->cancel->job == j)
		j->cancel->job = NULL;
	resume(j->h, j->co, j->co_ref, 0, j->h->L);
}

static void
on_done(void *ud, const struct ray_proc_result *res)
{
	struct ray_job *j = ud;
	struct ray_host *h = j->h;

	h->running--;
	/* The group is gone (proc.c killed what was left of it). */
	if (j->group_file != NULL)
		unlink(j->group_file);
	j->proc = NULL;
	job_complete(j, res);
	schedule(h);
}

static const struct ray_proc_ops job_ops = { on_out, on_err, on_done };

/*
 * The job's group file, made before the command starts so that a raymond
 * killed at any instant leaves a record of it: empty until the command
 * runs, then "PID START" (ray_proc_info).  The command's environment
 * carries the file's name too (executor.lua), which finds it, and what it
 * started, should raymond die before the pid is written.  No fsync: the
 * record must outlive raymond, not the machine, and a power cut ends the
 * children too.  Returns the descriptor, or -1 with the job's error set.
 */
static int
group_file_open(struct ray_job *j)
{
	int fd = open(j->group_file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0644);

	struct ray_err err;

	if (fd < 0) {
		ray_err_sys(&err, "cannot record the process group in '%s'",
		    j->group_file);
		j->spawn_error = xstrdup(err.msg);
		free(j->group_file);
		j->group_file = NULL;
	}
	return fd;
}

static void
group_file_write(int fd, struct ray_proc *p)
{
	struct ray_proc_info info;
	char line[64];
	int n;

	if (ray_proc_info(ray_proc_pid(p), &info) < 0)
		info.start = 0;
	n = snprintf(line, sizeof(line), "%d %llu\n", ray_proc_pid(p),
	    info.start);
	/* Should this fail, the token in the child's environment finds it. */
	(void)ray_write_all(fd, line, (size_t)n);
	close(fd);
}

static void
launch(struct ray_host *h, struct ray_job *j)
{
	struct ray_proc_opts o;
	struct ray_proc *p;
	struct ray_err err;
	int gfd = -1, r;

	if (j->group_file != NULL && (gfd = group_file_open(j)) < 0) {
		job_complete(j, NULL);
		return;
	}
	o.argv = j->argv;
	o.env = j->env;
	o.cwd = j->cwd;
	o.timeout_ms = j->timeout_ms;
	o.grace_ms = j->grace_ms;
	o.hold = j->hold;
	o.input = NULL;
	o.input_len = 0;
	/* The registry reference keeps the string alive; proc.c copies it. */
	if (j->input_ref != LUA_NOREF) {
		lua_rawgeti(h->L, LUA_REGISTRYINDEX, j->input_ref);
		o.input = lua_tolstring(h->L, -1, &o.input_len);
		lua_pop(h->L, 1);
	}
	if ((r = ray_proc_spawn(h->loop, &o, &job_ops, j, &p, &err)) < 0) {
		if (gfd >= 0) {
			close(gfd);
			/* A command that may still run stays findable by --resume. */
			if (r != RAY_PROC_ESTRAY)
				unlink(j->group_file);
		}
		j->spawn_error = xstrdup(err.msg);
		job_complete(j, NULL);
		return;
	}
	if (gfd >= 0)
		group_file_write(gfd, p);
	j->proc = p;
	h->running++;
}

/* Call the engine's flush function; a failure stops the run. */
static void
flush(struct ray_host *h)
{
	lua_State *L = h->L;

	h->dirty = 0;
	if (h->flush_ref == LUA_NOREF)
		return;
	lua_rawgeti(L, LUA_REGISTRYINDEX, h->flush_ref);
	if (ray__pcall(L, 0, 0) != LUA_OK) {
		crash(h, lua_tostring(L, -1));
		lua_pop(L, 1);
	}
}

static struct ray_job *
dequeue(struct ray_host *h)
{
	struct ray_job *j = h->queue_head;

	h->queue_head = j->next;
	if (h->queue_head == NULL)
		h->queue_tail = NULL;
	return j;
}

/* Resume every queued coroutine as stopped before it started. */
static void
stop_queue(struct ray_host *h)
{
	while (h->queue_head)
		job_complete(dequeue(h), NULL);
}

/*
 * Resume every queued job whose canceller was cancelled as killed before
 * it started.  A resumed coroutine may queue more (appended at the tail,
 * which `pp` still reaches), and those are looked at too.
 */
static void
sweep_cancelled(struct ray_host *h)
{
	struct ray_job **pp = &h->queue_head, *j, *prev = NULL;

	h->cancel_pending = 0;
	while ((j = *pp) != NULL) {
		if (j->cancel != NULL && j->cancel->cancelled) {
			*pp = j->next;
			if (h->queue_tail == j)
				h->queue_tail = prev;
			j->next = NULL;
			job_complete(j, NULL);
		} else {
			prev = j;
			pp = &j->next;
		}
	}
}

static void wake_sleepers(struct ray_host *h);
static void wake_lines(struct ray_host *h);

static void
on_prepare(uv_prepare_t *ph)
{
	struct ray_host *h = ph->data;

	if (h->dirty)
		flush(h);
	if (h->cancel_pending)
		sweep_cancelled(h);
	while (h->queue_head && !h->stopping &&
	    (h->max_parallel <= 0 || h->running < h->max_parallel)) {
		launch(h, dequeue(h));
		/* A job that failed to start may have queued or dirtied more. */
		if (h->dirty)
			flush(h);
	}
	if (h->stopping) {
		wake_sleepers(h);
		wake_lines(h);
		stop_queue(h);
	}
	if (!h->dirty && !h->cancel_pending && (h->queue_head == NULL ||
	    (h->max_parallel > 0 && h->running >= h->max_parallel)))
		uv_prepare_stop(ph);
}

static void
schedule(struct ray_host *h)
{
	if (h->dirty || h->queue_head)
		uv_prepare_start(&h->prepare, on_prepare);
}

/* ---- raymond.spawn ----------------------------------------------------- */

/*
 * The continuation of raymond.spawn: the job (at stack index ctx) has
 * ended or was stopped before it started.  Returns its result table.
 */
static int
spawn_resumed(lua_State *L, int status, lua_KContext ctx)
{
	struct ray_job *j = lua_touserdata(L, (int)ctx);

	UNUSED(status);
	push_result(L, j);
	job_release(L, j);
	return 1;
}

/*
 * raymond.spawn{argv=, env=, cwd=, timeout=, grace=, input=, tags=,
 * lines=, lines_max=, prints=, capture=, record=, record_step=,
 * group_file=, cancel=} runs a
 * command and returns its result table when it ends.  `grace`, in
 * seconds, is how long a command sent SIGTERM (a stop, a cancel, the
 * inactivity `timeout`) has before SIGKILL; 1 s when absent or 0.  Must be called
 * from a coroutine started by raymond.go.  `input`, a string, is written
 * to the command's stdin (which is /dev/null without it).  `lines_max`
 * caps the length of a line for `lines` (default 8 MiB): a longer line
 * kills the command, and the result says line_too_long.  `group_file`
 * names the file that records the command's process group from before
 * it starts until it is gone (group_file_open).
 * `lines`, a function, is called with each line of stdout as it completes;
 * `prints`, a function, with each line of <print> text, shown safe,
 * instead of its going to stdout;
 * `capture` keeps all of stdout and stderr (up to 64 MiB each); `record`,
 * a debug record (lua_record.c), gets each chunk of stdout and stderr as
 * a piece of step `record_step`.  `cancel`, a raymond.canceller(), ends
 * the command early when it is cancelled.
 */
static int
api_spawn(lua_State *L)
{
	struct ray_host *h = ray__host_from(L);
	struct ray_job *j;
	const char *cwd;
	double timeout;

	luaL_checktype(L, 1, LUA_TTABLE);
	if (!lua_isyieldable(L))
		return luaL_error(L, "raymond.spawn must run inside raymond.go");
	lua_settop(L, 1);
	j = lua_newuserdatauv(L, sizeof(*j), 0);	/* at 2 until resumed */
	memset(j, 0, sizeof(*j));
	j->h = h;
	j->out_print.j = j;
	j->err_print.j = j;
	j->record_ref = LUA_NOREF;
	j->lines_ref = LUA_NOREF;
	j->prints_ref = LUA_NOREF;
	j->input_ref = LUA_NOREF;
	j->hold_ref = LUA_NOREF;
	j->cancel_ref = LUA_NOREF;
	luaL_setmetatable(L, JOB);	/* from now on __gc frees what j holds */

	lua_getfield(L, 1, "argv");
	luaL_checktype(L, -1, LUA_TTABLE);
	strv_from_array(L, lua_gettop(L), &j->argv);
	lua_pop(L, 1);
	if (j->argv[0] == NULL)
		return luaL_error(L, "raymond.spawn: empty argv");
	lua_getfield(L, 1, "env");
	if (lua_istable(L, -1))
		strv_from_map(L, lua_gettop(L), &j->env);
	lua_pop(L, 1);
	lua_getfield(L, 1, "cwd");
	if (lua_isstring(L, -1)) {
		cwd = lua_tostring(L, -1);
		j->cwd = xstrdup(cwd);
	}
	lua_pop(L, 1);
	lua_getfield(L, 1, "timeout");
	timeout = lua_tonumber(L, -1);
	j->timeout_ms = timeout > 0 ? (uint64_t)(timeout * 1000) : 0;
	lua_pop(L, 1);
	lua_getfield(L, 1, "grace");
	timeout = lua_tonumber(L, -1);
	j->grace_ms = timeout > 0 ? (uint64_t)(timeout * 1000) : 0;
	lua_pop(L, 1);
	lua_getfield(L, 1, "tags");
	if (lua_toboolean(L, -1)) {
		j->tp = ray_tagparse_new(on_print, &j->out_print);
		j->err_prints = ray_tagparse_new_prints(on_print,
		    &j->err_print);
	}
	lua_pop(L, 1);
	lua_getfield(L, 1, "capture");
	j->capture = lua_toboolean(L, -1);
	lua_pop(L, 1);
	if (lua_getfield(L, 1, "input") == LUA_TSTRING)
		j->input_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	else
		lua_pop(L, 1);
	lua_getfield(L, 1, "lines");
	if (lua_isfunction(L, -1))
		j->lines_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	else
		lua_pop(L, 1);
	lua_getfield(L, 1, "prints");
	if (lua_isfunction(L, -1))
		j->prints_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	else
		lua_pop(L, 1);
	lua_getfield(L, 1, "lines_max");
	j->lines_max = lua_tointeger(L, -1) > 0 ?
	    (size_t)lua_tointeger(L, -1) : LINE_MAX_DEFAULT;
	lua_pop(L, 1);
	if (lua_getfield(L, 1, "record") != LUA_TNIL) {
		j->record = ray__record_slot(L, -1);
		j->record_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	} else {
		lua_pop(L, 1);
	}
	lua_getfield(L, 1, "record_step");
	j->record_step = (unsigned long)lua_tointeger(L, -1);
	lua_pop(L, 1);
	lua_getfield(L, 1, "group_file");
	if (lua_isstring(L, -1))
		j->group_file = xstrdup(lua_tostring(L, -1));
	lua_pop(L, 1);
	if (lua_getfield(L, 1, "hold") != LUA_TNIL) {
		j->hold = luaL_checkudata(L, -1, HOLD);
		j->hold_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	} else {
		lua_pop(L, 1);
	}
	if (lua_getfield(L, 1, "cancel") != LUA_TNIL) {
		j->cancel = luaL_checkudata(L, -1, CANCEL);
		j->cancel_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	} else {
		lua_pop(L, 1);
	}
	lua_pushthread(L);
	j->co_ref = luaL_ref(L, LUA_REGISTRYINDEX);

	/* Nothing below raises: the job is queued exactly when we yield. */
	j->co = L;
	if (j->cancel != NULL) {
		j->cancel->job = j;
		if (j->cancel->cancelled)
			h->cancel_pending = 1;
	}
	if (h->queue_tail)
		h->queue_tail->next = j;
	else
		h->queue_head = j;
	h->queue_tail = j;
	schedule(h);
	return lua_yieldk(L, 0, 2, spawn_resumed);
}

/* ---- raymond.sleep ----------------------------------------------------- */

/*
 * A coroutine waiting in raymond.sleep.  It is on the host's list from the
 * yield until its timer fires or a stop wakes it (wake_sleepers), whichever
 * comes first; either takes it off the list, resumes the coroutine, and
 * closes the timer, whose close callback frees the sleeper.
 */
struct ray_sleeper {
	uv_timer_t timer;
	struct ray_host *h;
	struct ray_sleeper *next;
	struct ray_sleeper **prevp;	/* the pointer that points here */
	lua_State *co;
	int ref;
};

static void
on_sleeper_close(uv_handle_t *t)
{
	free(t->data);
}

/* Take s off the list and resume its coroutine with `ok`. */
static void
sleeper_end(struct ray_sleeper *s, int ok)
{
	struct ray_host *h = s->h;

	*s->prevp = s->next;
	if (s->next)
		s->next->prevp = s->prevp;
	uv_close((uv_handle_t *)&s->timer, on_sleeper_close);
	lua_pushboolean(s->co, ok);
	resume(h, s->co, s->ref, 1, h->L);
}

static void
on_sleep(uv_timer_t *t)
{
	struct ray_sleeper *s = t->data;

	sleeper_end(s, !s->h->stopping);
}

/* The run is stopping: every sleep ends now, returning false. */
static void
wake_sleepers(struct ray_host *h)
{
	while (h->sleepers)
		sleeper_end(h->sleepers, 0);
}

/*
 * raymond.sleep(seconds) -> true, or false if the run is stopping: a stop
 * ends the sleep at once, and a sleep begun after it does not wait.
 */
static int
api_sleep(lua_State *L)
{
	struct ray_host *h = ray__host_from(L);
	double sec = luaL_checknumber(L, 1);
	struct ray_sleeper *s;
	int ref;

	if (!lua_isyieldable(L))
		return luaL_error(L, "raymond.sleep must run inside raymond.go");
	if (h->stopping) {
		lua_pushboolean(L, 0);
		return 1;
	}
	lua_pushthread(L);
	ref = luaL_ref(L, LUA_REGISTRYINDEX);
	/* Nothing below raises. */
	s = xcalloc(1, sizeof(*s));
	s->h = h;
	s->co = L;
	s->ref = ref;
	s->next = h->sleepers;
	if (s->next)
		s->next->prevp = &s->next;
	s->prevp = &h->sleepers;
	h->sleepers = s;
	uv_timer_init(h->loop, &s->timer);
	s->timer.data = s;
	uv_timer_start(&s->timer, on_sleep,
	    sec <= 0 ? 0 : sec < 1e9 ? (uint64_t)(sec * 1000) : (uint64_t)1e12, 0);
	return lua_yield(L, 0);
}

/* ---- raymond.read_line ------------------------------------------------- */

/*
 * Lines typed on the terminal that is raymond's stdin, read through the
 * loop so that the agents go on while a person types.  One reader for the
 * process, made at the first call: a uv_tty on fd 0, which libuv reopens
 * so that the terminal's file description is not made non-blocking under
 * the shell.  It reads only while a coroutine waits for a line, so an idle
 * reader keeps nothing alive; bytes after the line returned stay in `buf`
 * for the next call.  The terminal keeps its own line editing (cooked
 * mode).  A line longer than RAY_LINE_MAX is cut there: the rest comes as
 * the next line.
 */
#define RAY_LINE_MAX 65536

struct ray_lines {
	uv_tty_t tty;
	uv_timer_t timer;
	struct ray_host *h;
	struct ray_buf buf;	/* read and not yet returned */
	int eof;		/* the terminal said end of input (Ctrl-D) */
	lua_State *co;		/* the coroutine waiting, or NULL */
	int ref;
};

/*
 * The line at the front of `buf`, without its newline, pushed on `co`
 * and taken out of the buffer; 0 when no whole line is there yet.
 */
static int
push_line(struct ray_lines *r, lua_State *co)
{
	char *nl = r->buf.len ? memchr(r->buf.data, '\n', r->buf.len) : NULL;
	size_t n;

	if (nl == NULL && r->buf.len < RAY_LINE_MAX && !(r->eof && r->buf.len))
		return 0;
	n = nl ? (size_t)(nl - r->buf.data) : (r->buf.len < RAY_LINE_MAX ? r->buf.len : RAY_LINE_MAX);
	lua_pushlstring(co, r->buf.data, n > 0 && r->buf.data[n - 1] == '\r' ? n - 1 : n);
	ray_buf_consume(&r->buf, nl ? n + 1 : n);
	return 1;
}

/*
 * Resume the waiting coroutine: how = 1 a line is in the buffer, 0 none
 * came in time (or the run is stopping), -1 end of input.
 */
static void
lines_end(struct ray_lines *r, int how)
{
	lua_State *co = r->co;
	int ref = r->ref;

	r->co = NULL;
	uv_read_stop((uv_stream_t *)&r->tty);
	uv_timer_stop(&r->timer);
	if (how > 0 && push_line(r, co))
		;
	else if (how < 0)
		lua_pushnil(co);
	else
		lua_pushboolean(co, 0);
	resume(r->h, co, ref, 1, r->h->L);
}

/* The run is stopping: a read_line waiting returns false at once. */
static void
wake_lines(struct ray_host *h)
{
	if (h->lines && h->lines->co)
		lines_end(h->lines, 0);
}

static void
on_lines_alloc(uv_handle_t *hd, size_t want, uv_buf_t *out)
{
	static char chunk[4096];

	(void)hd;
	(void)want;
	out->base = chunk;
	out->len = sizeof(chunk);
}

static void
on_lines_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct ray_lines *r = s->data;

	if (n > 0)
		ray_buf_add(&r->buf, b->base, (size_t)n);
	else if (n < 0)
		r->eof = 1;
	if (r->co == NULL)
		return;
	if (n > 0 && (memchr(b->base, '\n', (size_t)n) || r->buf.len >= RAY_LINE_MAX))
		lines_end(r, 1);
	else if (n < 0)
		lines_end(r, r->buf.len ? 1 : -1);
}

static void
on_lines_timeout(uv_timer_t *t)
{
	lines_end(t->data, 0);
}

/*
 * raymond.read_line(seconds) -> the next line typed on the terminal that
 * is stdin (without its newline); nil at end of input; false when none
 * came within `seconds`, when the run is stopping, or when stdin is not a
 * terminal.  Must run inside raymond.go; one caller at a time.
 */
static int
api_read_line(lua_State *L)
{
	struct ray_host *h = ray__host_from(L);
	double sec = luaL_checknumber(L, 1);
	struct ray_lines *r = h->lines;

	if (!lua_isyieldable(L))
		return luaL_error(L, "raymond.read_line must run inside raymond.go");
	if (r == NULL) {
		if (!isatty(0)) {
			lua_pushboolean(L, 0);
			return 1;
		}
		r = xcalloc(1, sizeof(*r));
		if (uv_tty_init(h->loop, &r->tty, 0, 1) < 0) {
			free(r);
			lua_pushboolean(L, 0);
			return 1;
		}
		r->h = h;
		r->tty.data = r;
		uv_timer_init(h->loop, &r->timer);
		r->timer.data = r;
		h->lines = r;
	}
	if (r->co)
		return luaL_error(L, "raymond.read_line is already waiting for a line");
	if (push_line(r, L))
		return 1;
	if (r->eof) {
		lua_pushnil(L);
		return 1;
	}
	if (h->stopping || uv_read_start((uv_stream_t *)&r->tty, on_lines_alloc, on_lines_read) < 0) {
		lua_pushboolean(L, 0);
		return 1;
	}
	lua_pushthread(L);
	r->ref = luaL_ref(L, LUA_REGISTRYINDEX);
	r->co = L;
	uv_timer_start(&r->timer, on_lines_timeout,
	    sec <= 0 ? 0 : sec < 1e9 ? (uint64_t)(sec * 1000) : (uint64_t)1e12, 0);
	return lua_yield(L, 0);
}

/* ---- flushing, limits, stopping ---------------------------------------- */

static int
api_set_flush(lua_State *L)
{
	struct ray_host *h = ray__host_from(L);

	int old = h->flush_ref;

	luaL_checktype(L, 1, LUA_TFUNCTION);
	/* The new reference first: luaL_ref may raise, and the old must stay. */
	lua_pushvalue(L, 1);
	h->flush_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	luaL_unref(L, LUA_REGISTRYINDEX, old);
	return 0;
}

/*
 * raymond.quiet_signals(): the command runs no states (raymond watch) and
 * says itself what a signal did, so the host does not say it stops them.
 */
static int
api_quiet_signals(lua_State *L)
{
	ray__host_from(L)->quiet_signals = 1;
	return 0;
}

static void
on_dirty_timer(uv_timer_t *t)
{
	struct ray_host *h = t->data;

	h->dirty = 1;
	schedule(h);
}

/*
 * raymond.flush(): what the prepare handle does before a state starts,
 * done now: call the engine's flush function if anything is unsaved.  For
 * a step that runs without a child (a test's scripted model), which
 * must not begin before the transition that led to it is on disk either.
 * It runs on the calling coroutine's stack, not the main thread's, which
 * is in the middle of resuming it.
 */
static int
api_flush(lua_State *L)
{
	struct ray_host *h = ray__host_from(L);

	if (!h->dirty)
		return 0;
	h->dirty = 0;
	if (h->flush_ref == LUA_NOREF)
		return 0;
	lua_rawgeti(L, LUA_REGISTRYINDEX, h->flush_ref);
	lua_call(L, 0, 0);
	return 0;
}

/*
 * raymond.mark_dirty([seconds]): flush before the next state starts, or
 * once the delay has passed.  A delayed mark never keeps the loop alive,
 * and a later one never postpones one already due sooner.
 */
static int
api_mark_dirty(lua_State *L)
{
	struct ray_host *h = ray__host_from(L);
	lua_Number sec = luaL_optnumber(L, 1, 0);
	uint64_t ms;

	if (sec <= 0) {
		h->dirty = 1;
		schedule(h);
		return 0;
	}
	ms = sec < 1e9 ? (uint64_t)(sec * 1000) : (uint64_t)1e12;
	if (!uv_is_active((uv_handle_t *)&h->dirty_timer) ||
	    ms < uv_timer_get_due_in(&h->dirty_timer))
		uv_timer_start(&h->dirty_timer, on_dirty_timer, ms, 0);
	return 0;
}

static int
api_set_max_parallel(lua_State *L)
{
	struct ray_host *h = ray__host_from(L);

	h->max_parallel = (int)luaL_checkinteger(L, 1);
	return 0;
}

static void
stop_run(struct ray_host *h)
{
	h->stopping = 1;
	ray_proc_kill_all();
	uv_prepare_start(&h->prepare, on_prepare);
}

/* raymond.stop(): start no more children and end the running ones. */
static int
api_stop(lua_State *L)
{
	stop_run(ray__host_from(L));
	return 0;
}

/* raymond.stopping() -> signal number, true (error), or false. */
static int
api_stopping(lua_State *L)
{
	struct ray_host *h = ray__host_from(L);

	if (h->interrupted)
		lua_pushinteger(L, h->interrupted);
	else
		lua_pushboolean(L, h->stopping);
	return 1;
}

/* ---- signals (see the diagram at the top) ------------------------------ */

volatile sig_atomic_t ray__signal_count;
volatile sig_atomic_t ray__signal_last;

/* The wake-up handle of the host that has the signals, or NULL. */
static uv_async_t *volatile signal_wake;

static void
on_os_signal(int signo)
{
	int saved = errno;
	uv_async_t *a = signal_wake;

	ray__signal_last = signo;
	ray__signal_count++;
	if (a)
		uv_async_send(a);
	errno = saved;
}

void
ray__sched_take_signals(struct ray_host *h)
{
	sig_atomic_t n = ray__signal_count;
	int signo = ray__signal_last;

	if (n == h->signals_seen)
		return;
	h->signals_seen = n;
	if (!h->interrupted) {
		h->interrupted = signo;
		if (!h->quiet_signals) {
			ray__live_clear();
			fprintf(stderr, "\nraymond: %s received; stopping "
			    "running states (the run stays resumable)\n",
			    signo == SIGINT ? "interrupt" : "termination request");
		}
	}
	stop_run(h);
}

static void
on_signal_async(uv_async_t *a)
{
	ray__sched_take_signals(a->data);
}

static void
catch_signals(struct ray_host *h)
{
	struct sigaction sa;

	uv_async_init(h->loop, &h->signal_async, on_signal_async);
	h->signal_async.data = h;
	uv_unref((uv_handle_t *)&h->signal_async);
	h->signals_seen = ray__signal_count;
	signal_wake = &h->signal_async;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_os_signal;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, &h->old_sigint);
	sigaction(SIGTERM, &sa, &h->old_sigterm);
}

/*
 * The dispositions go back first, so no handler can run with a wake-up
 * handle that is about to be freed with the host.  The handles stay in the
 * loop, which is not run again.
 */
void
ray__sched_close(struct ray_host *h)
{
	sigaction(SIGINT, &h->old_sigint, NULL);
	sigaction(SIGTERM, &h->old_sigterm, NULL);
	if (signal_wake == &h->signal_async)
		signal_wake = NULL;
}

/* ---- processes a killed raymond left behind --------------------------- */

/*
 * The pid argument at `arg`, or 0 when it is no pid at all (<= 0, or too
 * large for a pid_t, which a cast would wrap onto another process).
 */
static pid_t
check_pid(lua_State *L, int arg)
{
	lua_Integer v = luaL_checkinteger(L, arg);

	return v > 0 && v <= INT_MAX ? (pid_t)v : 0;
}

/* raymond.process(pid) -> {start=, pgid=, zombie=} | nil */
static int
api_process(lua_State *L)
{
	struct ray_proc_info info;
	pid_t pid = check_pid(L, 1);

	if (pid == 0 || ray_proc_info(pid, &info) < 0)
		return 0;
	lua_createtable(L, 0, 3);
	lua_pushinteger(L, (lua_Integer)info.start);
	lua_setfield(L, -2, "start");
	lua_pushinteger(L, info.pgid);
	lua_setfield(L, -2, "pgid");
	lua_pushboolean(L, info.state == 'Z' || info.state == 'X');
	lua_setfield(L, -2, "zombie");
	return 1;
}

/*
 * raymond.signal(pid, start, "TERM" | "KILL", group) -> true | nil: the
 * process `pid` that started at `start`, or the group it leads; nil when
 * that process is gone, or `pid` is no pid ray_proc_signal would signal.
 */
static int
api_signal(lua_State *L)
{
	static const char *const names[] = { "TERM", "KILL", NULL };
	static const int sigs[] = { SIGTERM, SIGKILL };
	pid_t pid = check_pid(L, 1);
	lua_Integer start = luaL_checkinteger(L, 2);
	int sig = sigs[luaL_checkoption(L, 3, NULL, names)];

	if (pid == 0 || ray_proc_signal(pid, (unsigned long long)start, sig,
	    lua_toboolean(L, 4)) < 0)
		return 0;
	lua_pushboolean(L, 1);
	return 1;
}

/* ---- raymond.hold ------------------------------------------------------ */

/*
 * raymond.hold() -> a hold on the inactivity limit of the commands it is
 * given to (raymond.spawn{..., hold = h}): between h:hold() and
 * h:release() their silence is not inactivity (proc.h).  Holds nest.
 */
static int
api_hold(lua_State *L)
{
	struct ray_proc_hold *hd = lua_newuserdatauv(L, sizeof(*hd), 0);

	memset(hd, 0, sizeof(*hd));
	luaL_setmetatable(L, HOLD);
	return 1;
}

static int
hold_hold(lua_State *L)
{
	struct ray_proc_hold *hd = luaL_checkudata(L, 1, HOLD);

	hd->held++;
	return 0;
}

static int
hold_release(lua_State *L)
{
	struct ray_proc_hold *hd = luaL_checkudata(L, 1, HOLD);
	struct ray_host *h = ray__host_from(L);

	if (hd->held > 0)
		hd->held--;
	/* The loop's time is that of its iteration's start, and a hook that
	 * never yields runs within one iteration. */
	uv_update_time(h->loop);
	hd->touched = uv_now(h->loop);
	return 0;
}

/* ---- raymond.canceller ------------------------------------------------- */

static int
api_canceller(lua_State *L)
{
	struct ray_canceller *c = lua_newuserdatauv(L, sizeof(*c), 0);

	memset(c, 0, sizeof(*c));
	luaL_setmetatable(L, CANCEL);
	return 1;
}

/*
 * c:cancel(): the job under c ends as killed: a running one has its group
 * sent SIGTERM (SIGKILL a second later, proc.c), a queued one is resumed
 * from the next loop iteration, never from inside this call.
 */
static int
canceller_cancel(lua_State *L)
{
	struct ray_canceller *c = luaL_checkudata(L, 1, CANCEL);
	struct ray_host *h = ray__host_from(L);

	c->cancelled = 1;
	if (c->job == NULL)
		return 0;
	if (c->job->proc != NULL) {
		ray_proc_kill(c->job->proc);
	} else {
		h->cancel_pending = 1;
		uv_prepare_start(&h->prepare, on_prepare);
	}
	return 0;
}

static int
canceller_cancelled(lua_State *L)
{
	struct ray_canceller *c = luaL_checkudata(L, 1, CANCEL);

	lua_pushboolean(L, c->cancelled);
	return 1;
}

static const luaL_Reg sched_funcs[] = {
	{ "process", api_process },
	{ "signal", api_signal },
	{ "go", api_go },
	{ "spawn", api_spawn },
	{ "sleep", api_sleep },
	{ "read_line", api_read_line },
	{ "set_flush", api_set_flush },
	{ "quiet_signals", api_quiet_signals },
	{ "mark_dirty", api_mark_dirty },
	{ "flush", api_flush },
	{ "set_max_parallel", api_set_max_parallel },
	{ "stop", api_stop },
	{ "stopping", api_stopping },
	{ "hold", api_hold },
	{ "canceller", api_canceller },
	{ NULL, NULL },
};

static const luaL_Reg cancel_methods[] = {
	{ "cancel", canceller_cancel },
	{ "cancelled", canceller_cancelled },
	{ NULL, NULL },
};

static const luaL_Reg hold_methods[] = {
	{ "hold", hold_hold },
	{ "release", hold_release },
	{ NULL, NULL },
};

void
ray__sched_register(lua_State *L, struct ray_host *h)
{
	uv_prepare_init(h->loop, &h->prepare);
	h->prepare.data = h;
	uv_timer_init(h->loop, &h->dirty_timer);
	h->dirty_timer.data = h;
	uv_unref((uv_handle_t *)&h->dirty_timer);
	catch_signals(h);
	luaL_newmetatable(L, JOB);
	lua_pushcfunction(L, job_gc);
	lua_setfield(L, -2, "__gc");
	lua_pop(L, 1);
	luaL_newmetatable(L, HOLD);
	lua_newtable(L);
	lua_pushlightuserdata(L, h);
	luaL_setfuncs(L, hold_methods, 1);
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
	luaL_newmetatable(L, CANCEL);
	lua_newtable(L);
	lua_pushlightuserdata(L, h);
	luaL_setfuncs(L, cancel_methods, 1);
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
	lua_pushlightuserdata(L, h);
	luaL_setfuncs(L, sched_funcs, 1);
}
