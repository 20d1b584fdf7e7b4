/*
 * proc.c - child processes on the libuv loop (see proc.h).
 *
 * Each proc owns four handles: the process, two pipes and one timer.  The
 * timer serves three purposes in turn, recorded in `tmode`:
 *
 *	spawn ──> WATCH ──(no output for timeout)──> GRACE ──(1 s)──> SIGKILL
 *	            │                                  │
 *	            └──────────(command exits)─────────┴──> DRAIN
 *	                                                      │
 *	      (both pipes at EOF, or 2 s passed) <────────────┘
 *	                         │
 *	                      FINISH: close all four handles; the last
 *	                      close callback calls done and frees the proc.
 *
 * WATCH does not restart the timer on every chunk: it keeps the time of
 * the last output and, when the timer fires early, re-arms it for the
 * remainder.  Everything runs on the loop's thread; signals reach us only
 * through uv_signal_t handlers elsewhere, which call ray_proc_kill_all().
 */
#include "proc.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define GRACE_MS 1000
#define DRAIN_MS 2000

enum tmode { T_OFF, T_WATCH, T_GRACE, T_DRAIN };

struct ray_proc {
	uv_process_t process;
	uv_pipe_t out;
	uv_pipe_t err;
	uv_timer_t timer;
	enum tmode tmode;
	int open_handles;
	int exited;
	int out_eof;
	int err_eof;
	int finishing;
	uint64_t timeout_ms;
	uint64_t last_output;	/* uv_now() of the last chunk */
	uint64_t start_ns;
	struct ray_proc_result res;
	const struct ray_proc_ops *ops;
	void *ud;
	struct ray_proc *prev;
	struct ray_proc *next;
};

/* All live procs, for ray_proc_kill_all(). */
static struct ray_proc *live_head;

/*
 * One read buffer serves every pipe: libuv calls alloc, reads, and hands
 * the bytes to the read callback before it reads anything else, and the
 * callbacks never keep the pointer.
 */
static char read_buf[64 * 1024];

static void finish(struct ray_proc *p);

static void
unlink_live(struct ray_proc *p)
{
	if (p->prev)
		p->prev->next = p->next;
	else
		live_head = p->next;
	if (p->next)
		p->next->prev = p->prev;
}

static void
on_close(uv_handle_t *h)
{
	struct ray_proc *p = h->data;

	if (--p->open_handles > 0)
		return;
	p->res.duration_ns = uv_hrtime() - p->start_ns;
	if (p->finishing) {
		unlink_live(p);
		p->ops->done(p->ud, &p->res);
	}
	free(p);
}

static void
close_all(struct ray_proc *p)
{
	uv_handle_t *hs[] = {
		(uv_handle_t *)&p->process, (uv_handle_t *)&p->out,
		(uv_handle_t *)&p->err, (uv_handle_t *)&p->timer,
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(hs); i++)
		if (hs[i]->data != NULL && !uv_is_closing(hs[i]))
			uv_close(hs[i], on_close);
}

static void
finish(struct ray_proc *p)
{
	if (p->finishing)
		return;
	p->finishing = 1;
	close_all(p);
}

static void
maybe_finish(struct ray_proc *p)
{
	if (p->exited && p->out_eof && p->err_eof)
		finish(p);
}

static void
signal_group(struct ray_proc *p, int sig)
{
	/* A negative pid names the process group the child leads. */
	if (p->process.pid > 0)
		uv_kill(-p->process.pid, sig);
}

static void
on_timer(uv_timer_t *t)
{
	struct ray_proc *p = t->data;
	uint64_t idle;

	switch (p->tmode) {
	case T_WATCH:
		idle = uv_now(t->loop) - p->last_output;
		if (idle < p->timeout_ms) {
			uv_timer_start(t, on_timer, p->timeout_ms - idle, 0);
			return;
		}
		p->res.timed_out = 1;
		signal_group(p, SIGTERM);
		p->tmode = T_GRACE;
		uv_timer_start(t, on_timer, GRACE_MS, 0);
		break;
	case T_GRACE:
		signal_group(p, SIGKILL);
		p->tmode = T_OFF;
		break;
	case T_DRAIN:
		finish(p);
		break;
	case T_OFF:
		break;
	}
}

static void
on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
	UNUSED(h);
	UNUSED(hint);
	buf->base = read_buf;
	buf->len = sizeof(read_buf);
}

static void
on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct ray_proc *p = s->data;
	int is_out = s == (uv_stream_t *)&p->out;

	if (n > 0) {
		p->last_output = uv_now(s->loop);
		if (is_out && p->ops->out)
			p->ops->out(p->ud, buf->base, (size_t)n);
		else if (!is_out && p->ops->err)
			p->ops->err(p->ud, buf->base, (size_t)n);
		return;
	}
	if (n == 0)
		return;
	/* EOF or a read error: either way this pipe is done. */
	uv_read_stop(s);
	if (is_out)
		p->out_eof = 1;
	else
		p->err_eof = 1;
	maybe_finish(p);
}

static void
on_proc_exit(uv_process_t *proc, int64_t status, int sig)
{
	struct ray_proc *p = proc->data;

	p->exited = 1;
	p->res.exit_status = status;
	p->res.term_signal = sig;
	if (p->out_eof && p->err_eof) {
		finish(p);
		return;
	}
	p->tmode = T_DRAIN;
	uv_timer_start(&p->timer, on_timer, DRAIN_MS, 0);
}

int
ray_proc_spawn(uv_loop_t *loop, const struct ray_proc_opts *opts,
    const struct ray_proc_ops *ops, void *ud, struct ray_proc **out,
    struct ray_err *err)
{
	struct ray_proc *p = xcalloc(1, sizeof(*p));
	uv_process_options_t po;
	uv_stdio_container_t stdio[3];
	int r;

	p->ops = ops;
	p->ud = ud;
	p->timeout_ms = opts->timeout_ms;
	p->start_ns = uv_hrtime();
	uv_pipe_init(loop, &p->out, 0);
	uv_pipe_init(loop, &p->err, 0);
	uv_timer_init(loop, &p->timer);
	p->out.data = p->err.data = p->timer.data = p;
	p->open_handles = 3;

	memset(&po, 0, sizeof(po));
	memset(stdio, 0, sizeof(stdio));
	stdio[0].flags = UV_IGNORE;	/* libuv opens /dev/null for it */
	stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	stdio[1].data.stream = (uv_stream_t *)&p->out;
	stdio[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	stdio[2].data.stream = (uv_stream_t *)&p->err;
	po.file = opts->argv[0];
	po.args = opts->argv;
	po.env = opts->env;
	po.cwd = opts->cwd;
	po.flags = UV_PROCESS_DETACHED;
	po.stdio = stdio;
	po.stdio_count = 3;
	po.exit_cb = on_proc_exit;

	p->process.data = p;
	r = uv_spawn(loop, &p->process, &po);
	p->open_handles++;	/* uv_spawn initialised the handle either way */
	if (r < 0) {
		ray_err_set(err, r, "cannot start '%s'%s%s: %s", opts->argv[0],
		    opts->cwd ? " in " : "", opts->cwd ? opts->cwd : "",
		    uv_strerror(r));
		goto fail;
	}
	uv_read_start((uv_stream_t *)&p->out, on_alloc, on_read);
	uv_read_start((uv_stream_t *)&p->err, on_alloc, on_read);
	p->last_output = uv_now(loop);
	if (p->timeout_ms > 0) {
		p->tmode = T_WATCH;
		uv_timer_start(&p->timer, on_timer, p->timeout_ms, 0);
	}
	p->next = live_head;
	if (live_head)
		live_head->prev = p;
	live_head = p;
	*out = p;
	return 0;

fail:
	/* finishing stays 0, so the close callbacks free p without done. */
	close_all(p);
	return r;
}

void
ray_proc_kill(struct ray_proc *p)
{
	if (p->finishing || p->exited)
		return;
	p->res.killed = 1;
	signal_group(p, SIGTERM);
	p->tmode = T_GRACE;
	uv_timer_start(&p->timer, on_timer, GRACE_MS, 0);
}

int
ray_proc_kill_all(void)
{
	struct ray_proc *p;
	int n = 0;

	for (p = live_head; p; p = p->next, n++)
		ray_proc_kill(p);
	return n;
}

