/*
 * proc.c - child processes on the libuv loop (see proc.h).
 *
 * The child is started with posix_spawn, which glibc implements with
 * clone(CLONE_VM | CLONE_VFORK): unlike fork it copies no page tables, so
 * starting a state costs the same however large raymond's heap has grown.
 * Its exit is watched through a pidfd polled on the loop; nothing else in
 * raymond reaps children, so the pid stays ours until we wait for it.
 *
 * Each proc owns four handles: the exit poll, two pipes and one timer;
 * a fifth, the stdin pipe, when it was given input.  That pipe is written
 * with one uv_write of a private copy of the input and closed when the
 * write ends (a child that exits unread cancels it).
 * The timer serves three purposes in turn, recorded in `tmode`:
 *
 *	spawn ──> WATCH ──(no output for timeout)──> GRACE ──(grace)──> SIGKILL
 *	            │                                  │
 *	            └──────────(command exits)─────────┴──> DRAIN
 *	                                                      │
 *	          (2 s passed, or a stop) ──> SIGKILL the group, LAST
 *	                                                      │
 *	      (both pipes at EOF, in DRAIN or LAST, or 0.5 s of LAST passed)
 *	                         │
 *	                      FINISH: SIGKILL what is left of the group,
 *	                      reap the command, close all four handles; the
 *	                      last close callback calls done and frees the
 *	                      proc.
 *
 * LAST reads what the group wrote before it was killed, so a stop never
 * loses the command's own last output; its bound covers a pipe held by a
 * process outside the group.
 *
 * The command is not reaped when it exits (waitid with WNOWAIT), only at
 * FINISH: while it is a zombie its pid, and so its process group's id,
 * cannot be reused, so the group can be signalled until then without
 * reaching an unrelated process.  Whatever the command left running in
 * its group (`sleep 1000 &`) is killed at FINISH, so it neither keeps
 * raymond waiting nor outlives its state; a process that left the group
 * on purpose (setsid) is not touched.
 *
 * WATCH does not restart the timer on every chunk: it keeps the time of
 * the last output and, when the timer fires early, re-arms it for the
 * remainder.  Everything runs on the loop's thread; a SIGINT or SIGTERM
 * reaches it through the scheduler's async handle (lua_sched.c), which
 * calls ray_proc_kill_all().
 */
#include "proc.h"
#include "buf.h"

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define GRACE_MS 1000		/* opts.grace_ms 0 */
#define DRAIN_MS 2000
#define LAST_MS 500

/* What execvp searches when the environment names no PATH. */
#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

enum tmode { T_OFF, T_WATCH, T_GRACE, T_DRAIN, T_LAST };

struct ray_proc {
	pid_t pid;
	int pidfd;
	uv_poll_t exitw;	/* the pidfd: readable once the child exits */
	uv_pipe_t out;
	uv_pipe_t err;
	uv_pipe_t in;		/* stdin, when there is input */
	uv_write_t in_req;
	char *input;		/* the bytes being written to `in` */
	uv_timer_t timer;
	enum tmode tmode;
	int open_handles;
	int exited;
	int out_eof;
	int err_eof;
	int finishing;
	uint64_t timeout_ms;
	uint64_t grace_ms;	/* SIGTERM to SIGKILL */
	uint64_t last_output;	/* uv_now() of the last chunk */
	const struct ray_proc_hold *hold;	/* see proc.h, or NULL */
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
static void on_timer(uv_timer_t *t);

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
	/* uv_poll_t watches the pidfd but leaves closing it to its owner. */
	if (p->pidfd >= 0)
		close(p->pidfd);
	p->res.duration_ns = uv_hrtime() - p->start_ns;
	if (p->finishing) {
		unlink_live(p);
		p->ops->done(p->ud, &p->res);
	}
	free(p->input);
	free(p);
}

static void
close_all(struct ray_proc *p)
{
	uv_handle_t *hs[] = {
		(uv_handle_t *)&p->exitw, (uv_handle_t *)&p->out,
		(uv_handle_t *)&p->err, (uv_handle_t *)&p->timer,
		(uv_handle_t *)&p->in,
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
	/* Only an exited command is finished, and it is still a zombie. */
	kill(-p->pid, SIGKILL);
	while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
		;
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
	/*
	 * A negative pid names the process group the child leads.  The child
	 * is reaped only in finish(), after which nothing signals it, so the
	 * group's id is still ours here.
	 */
	kill(-p->pid, sig);
}

/* The command has exited: kill what is left of its group, read the rest. */
static void
last_read(struct ray_proc *p)
{
	signal_group(p, SIGKILL);
	p->tmode = T_LAST;
	uv_timer_start(&p->timer, on_timer, LAST_MS, 0);
}

static void
on_timer(uv_timer_t *t)
{
	struct ray_proc *p = t->data;
	uint64_t idle;

	switch (p->tmode) {
	case T_WATCH:
		if (p->hold != NULL && p->hold->held > 0)
			p->last_output = uv_now(t->loop);
		else if (p->hold != NULL && p->hold->touched > p->last_output)
			p->last_output = p->hold->touched;
		idle = uv_now(t->loop) - p->last_output;
		if (idle < p->timeout_ms) {
			uv_timer_start(t, on_timer, p->timeout_ms - idle, 0);
			return;
		}
		p->res.timed_out = 1;
		signal_group(p, SIGTERM);
		p->tmode = T_GRACE;
		uv_timer_start(t, on_timer, p->grace_ms, 0);
		break;
	case T_GRACE:
		signal_group(p, SIGKILL);
		p->tmode = T_OFF;
		break;
	case T_DRAIN:
		last_read(p);
		break;
	case T_LAST:
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
on_exit_ready(uv_poll_t *w, int status, int events)
{
	struct ray_proc *p = w->data;
	siginfo_t si;
	int r;

	UNUSED(status);
	UNUSED(events);
	/* WNOWAIT: the zombie keeps the group's id ours until finish(). */
	memset(&si, 0, sizeof(si));
	do
		r = waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOHANG | WNOWAIT);
	while (r < 0 && errno == EINTR);
	if (r == 0 && si.si_pid == 0)
		return;	/* not yet: the poll fires again */
	uv_poll_stop(w);
	p->exited = 1;
	if (r == 0 && (si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED))
		p->res.term_signal = si.si_status;
	else if (r == 0)
		p->res.exit_status = si.si_status;
	else
		p->res.exit_status = 127;
	if (p->out_eof && p->err_eof) {
		finish(p);
		return;
	}
	p->tmode = T_DRAIN;
	uv_timer_start(&p->timer, on_timer, DRAIN_MS, 0);
}

/*
 * Where execvp would find argv[0]: the name itself when it holds a '/',
 * else the first executable regular file of that name in the child's
 * PATH.  The search happens here, before the child exists, so a relative
 * PATH entry is taken from the child's working directory as it would be
 * there.  Returns a malloc'd path, or NULL with errno set; *cacheable
 * tells whether only absolute entries were searched, so that the answer
 * holds in any working directory.
 */
static char *
search_path(const char *name, const char *path, const char *cwd,
    int *cacheable)
{
	const char *dir, *end;
	struct ray_buf b = RAY_BUF_INIT;
	struct stat st;
	int denied = 0;

	*cacheable = 1;
	for (dir = path; ; dir = end + 1) {
		end = strchrnul(dir, ':');
		ray_buf_reset(&b);
		if (dir[0] != '/') {
			*cacheable = 0;
			if (cwd != NULL) {
				ray_buf_adds(&b, cwd);
				ray_buf_addc(&b, '/');
			}
		}
		/* An empty entry means the current directory. */
		if (end > dir)
			ray_buf_add(&b, dir, (size_t)(end - dir));
		else
			ray_buf_addc(&b, '.');
		ray_buf_addc(&b, '/');
		ray_buf_adds(&b, name);
		if (stat(ray_buf_str(&b), &st) == 0 && S_ISREG(st.st_mode)) {
			if (access(ray_buf_str(&b), X_OK) == 0)
				return ray_buf_detach(&b);
			denied = 1;
		}
		if (*end == '\0')
			break;
	}
	ray_buf_release(&b);
	errno = denied ? EACCES : ENOENT;
	return NULL;
}

/*
 * The last few answers of search_path, by name and PATH: a chain of
 * states starts the same bash thousands of times, and a long PATH costs a
 * failed stat per entry.  An answer that has gone stale shows as a failed
 * spawn, which forgets it (forget_program) and searches again.
 */
#define PROG_CACHE 4

static struct {
	char *name;
	char *path;
	char *prog;
} prog_cache[PROG_CACHE];
static unsigned prog_next;

static char *
find_program(const char *name, char **env, const char *cwd, int *cached)
{
	const char *path = DEFAULT_PATH;
	char **e, *prog;
	int cacheable;
	unsigned i;

	*cached = 0;
	if (strchr(name, '/') != NULL)
		return xstrdup(name);
	for (e = env; *e != NULL; e++)
		if (strncmp(*e, "PATH=", 5) == 0) {
			path = *e + 5;
			break;
		}
	for (i = 0; i < PROG_CACHE; i++)
		if (prog_cache[i].name != NULL &&
		    strcmp(prog_cache[i].name, name) == 0 &&
		    strcmp(prog_cache[i].path, path) == 0) {
			*cached = 1;
			return xstrdup(prog_cache[i].prog);
		}
	prog = search_path(name, path, cwd, &cacheable);
	if (prog != NULL && cacheable) {
		i = prog_next++ % PROG_CACHE;
		free(prog_cache[i].name);
		free(prog_cache[i].path);
		free(prog_cache[i].prog);
		prog_cache[i].name = xstrdup(name);
		prog_cache[i].path = xstrdup(path);
		prog_cache[i].prog = xstrdup(prog);
	}
	return prog;
}

static void
forget_program(const char *prog)
{
	unsigned i;

	for (i = 0; i < PROG_CACHE; i++)
		if (prog_cache[i].prog != NULL &&
		    strcmp(prog_cache[i].prog, prog) == 0) {
			free(prog_cache[i].name);
			free(prog_cache[i].path);
			free(prog_cache[i].prog);
			memset(&prog_cache[i], 0, sizeof(prog_cache[i]));
		}
}

/*
 * Start the command with stdin from inr (or /dev/null when it is -1),
 * stdout and stderr on the given pipe ends, in a session (and so a process group) of its own, with
 * every signal at its default and none blocked: what a shell would give
 * it, whatever raymond ignores or blocks itself.
 */
static int
start(struct ray_proc *p, const struct ray_proc_opts *opts, int inr,
    int outw, int errw)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t all, none;
	char **env = opts->env != NULL ? opts->env : environ;
	char **sh_argv = NULL;
	char *prog;
	size_t argc;
	int r, cached;

	prog = find_program(opts->argv[0], env, opts->cwd, &cached);
	if (prog == NULL)
		return -errno;
	posix_spawn_file_actions_init(&fa);
	if (inr >= 0)
		posix_spawn_file_actions_adddup2(&fa, inr, 0);
	else
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY,
		    0);
	posix_spawn_file_actions_adddup2(&fa, outw, 1);
	posix_spawn_file_actions_adddup2(&fa, errw, 2);
	if (opts->cwd != NULL)
		posix_spawn_file_actions_addchdir_np(&fa, opts->cwd);
	posix_spawnattr_init(&at);
	/*
	 * Not sigfillset: glibc leaves its two internal signals out of that,
	 * and the spawned child would then start with them ignored.
	 */
	memset(&all, 0xff, sizeof(all));
	sigemptyset(&none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID |
	    POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

	r = posix_spawn(&p->pid, prog, &fa, &at, opts->argv, env);
	if (cached && (r == ENOENT || r == EACCES)) {
		/* The program moved since it was found: look again. */
		forget_program(prog);
		free(prog);
		prog = find_program(opts->argv[0], env, opts->cwd, &cached);
		r = prog != NULL ? posix_spawn(&p->pid, prog, &fa, &at,
		    opts->argv, env) : errno;
	}
	if (r == ENOEXEC) {
		/* A script without "#!": execvp hands it to /bin/sh. */
		for (argc = 0; opts->argv[argc] != NULL; argc++)
			;
		sh_argv = xcalloc(argc + 2, sizeof(*sh_argv));
		sh_argv[0] = "/bin/sh";
		sh_argv[1] = prog;
		memcpy(sh_argv + 2, opts->argv + 1, argc * sizeof(*sh_argv));
		r = posix_spawn(&p->pid, "/bin/sh", &fa, &at, sh_argv, env);
	}
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	free(sh_argv);
	free(prog);
	return -r;
}

/*
 * Kill the group of a child that started but that raymond cannot see
 * through (its input or its exit cannot be watched), and reap it: a
 * command raymond cannot wait for must not run on.  Returns 0 once it is
 * gone, or -errno when it could not be signalled and may still run.
 */
static int
stop_started(struct ray_proc *p)
{
	if (kill(-p->pid, SIGKILL) < 0)
		return -errno;
	/* ECHILD: something reaped it already, so it is gone as well. */
	while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
		;
	return 0;
}

/* Watch for the child's exit. */
static int
watch_exit(uv_loop_t *loop, struct ray_proc *p)
{
	int r;

	p->pidfd = pidfd_open(p->pid, 0);
	if (p->pidfd < 0)
		return -errno;
	r = uv_poll_init(loop, &p->exitw, p->pidfd);
	if (r < 0)
		return r;
	p->exitw.data = p;
	p->open_handles++;
	return uv_poll_start(&p->exitw, UV_READABLE, on_exit_ready);
}

/* The input is written, or the write failed or was cancelled. */
static void
on_input_written(uv_write_t *req, int status)
{
	struct ray_proc *p = req->data;

	UNUSED(status);
	free(p->input);
	p->input = NULL;
	if (!uv_is_closing((uv_handle_t *)&p->in))
		uv_close((uv_handle_t *)&p->in, on_close);
}

/*
 * Hand the write end of the stdin pipe to the loop and start writing the
 * input; with no bytes to write it is simply closed (end of file).
 */
static int
feed_input(uv_loop_t *loop, struct ray_proc *p,
    const struct ray_proc_opts *opts, int inw)
{
	uv_buf_t b;
	int r;

	if (opts->input_len == 0 || opts->input_len > UINT_MAX) {
		close(inw);
		return opts->input_len == 0 ? 0 : UV_E2BIG;
	}
	uv_pipe_init(loop, &p->in, 0);
	p->in.data = p;
	p->open_handles++;
	if ((r = uv_pipe_open(&p->in, inw)) < 0) {
		close(inw);
		return r;
	}
	p->input = xmalloc(opts->input_len);
	memcpy(p->input, opts->input, opts->input_len);
	b = uv_buf_init(p->input, (unsigned int)opts->input_len);
	p->in_req.data = p;
	return uv_write(&p->in_req, (uv_stream_t *)&p->in, &b, 1,
	    on_input_written);
}

int
ray_proc_spawn(uv_loop_t *loop, const struct ray_proc_opts *opts,
    const struct ray_proc_ops *ops, void *ud, struct ray_proc **out,
    struct ray_err *err)
{
	struct ray_proc *p = xcalloc(1, sizeof(*p));
	int outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, inp[2] = { -1, -1 };
	const char *doing = "start";
	int r, started = 0;

	p->ops = ops;
	p->ud = ud;
	p->pidfd = -1;
	p->timeout_ms = opts->timeout_ms;
	p->grace_ms = opts->grace_ms > 0 ? opts->grace_ms : GRACE_MS;
	p->hold = opts->hold;
	p->start_ns = uv_hrtime();
	uv_pipe_init(loop, &p->out, 0);
	uv_pipe_init(loop, &p->err, 0);
	uv_timer_init(loop, &p->timer);
	p->out.data = p->err.data = p->timer.data = p;
	p->open_handles = 3;

	/* Read ends belong to their handles at once; uv_close closes them. */
	if (pipe2(outp, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0 ||
	    (opts->input != NULL && pipe2(inp, O_CLOEXEC) < 0)) {
		r = -errno;
		goto fail;
	}
	if ((r = uv_pipe_open(&p->out, outp[0])) < 0)
		goto fail;
	outp[0] = -1;
	if ((r = uv_pipe_open(&p->err, errp[0])) < 0)
		goto fail;
	errp[0] = -1;
	r = start(p, opts, inp[0], outp[1], errp[1]);
	if (r < 0)
		goto fail;
	started = 1;
	if (inp[0] >= 0) {
		close(inp[0]);
		inp[0] = -1;
		r = feed_input(loop, p, opts, inp[1]);
		inp[1] = -1;
		if (r < 0) {
			doing = "write the input of";
			goto fail;
		}
	}
	doing = "watch";
	r = watch_exit(loop, p);
	if (r < 0)
		goto fail;
	close(outp[1]);
	close(errp[1]);
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
	if (outp[0] >= 0)
		close(outp[0]);
	if (errp[0] >= 0)
		close(errp[0]);
	if (outp[1] >= 0)
		close(outp[1]);
	if (errp[1] >= 0)
		close(errp[1]);
	if (inp[0] >= 0)
		close(inp[0]);
	if (inp[1] >= 0)
		close(inp[1]);
	ray_err_set(err, r, "cannot %s '%s'%s%s: %s", doing, opts->argv[0],
	    opts->cwd ? " in " : "", opts->cwd ? opts->cwd : "",
	    uv_strerror(r));
	if (r == UV_ENOSYS)
		ray_err_hint(err, "raymond needs Linux 5.3 or later to watch "
		    "the processes it starts");
	if (started && stop_started(p) < 0) {
		ray_err_set(err, RAY_PROC_ESTRAY, "cannot %s '%s': %s, and its "
		    "process group %d may still run (kill -9 -%d stops it)",
		    doing, opts->argv[0], uv_strerror(r), (int)p->pid,
		    (int)p->pid);
		r = RAY_PROC_ESTRAY;
	}
	/* finishing stays 0, so the close callbacks free p without done. */
	close_all(p);
	return r;
}

void
ray_proc_kill(struct ray_proc *p)
{
	if (p->finishing)
		return;
	if (p->exited) {
		/* Draining: what is left of the group goes now. */
		if (p->tmode == T_DRAIN)
			last_read(p);
		return;
	}
	p->res.killed = 1;
	signal_group(p, SIGTERM);
	p->tmode = T_GRACE;
	uv_timer_start(&p->timer, on_timer, p->grace_ms, 0);
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

int
ray_proc_pid(const struct ray_proc *p)
{
	return (int)p->pid;
}

int
ray_proc_info(int pid, struct ray_proc_info *out)
{
	char path[64], buf[1024], *s;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ESRCH;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = '\0';
	/* The command name (field 2) may hold spaces and ')': skip to its end. */
	s = strrchr(buf, ')');
	if (s == NULL || s[1] != ' ')
		return -ESRCH;
	s += 2;
	out->state = *s;
	for (field = 3; field < 22 && s != NULL; field++) {
		if (field == 5)
			out->pgid = atoi(s);
		s = strchr(s, ' ');
		if (s != NULL)
			s++;
	}
	if (s == NULL)
		return -ESRCH;
	out->start = strtoull(s, NULL, 10);
	return 0;
}

int
ray_proc_signal(int pid, unsigned long long start, int sig, int group)
{
	struct ray_proc_info info;
	int fd, r = 0;

	/*
	 * kill(-1) would signal every process of the user, and pid 0 or a
	 * negative one a whole group of raymond's own choosing.
	 */
	if (pid <= 1)
		return -EINVAL;
	/* The pidfd pins the process: checked and signalled, it is one. */
	fd = pidfd_open(pid, 0);
	if (fd < 0)
		return -ESRCH;
	if (ray_proc_info(pid, &info) < 0 || info.start != start)
		r = -ESRCH;
	else if (group && info.pgid != pid)
		/* Not a leader: -pid would name another group, or none. */
		r = -EPERM;
	else if (group)
		r = kill(-pid, sig) < 0 ? -errno : 0;
	else
		r = pidfd_send_signal(fd, sig, NULL, 0) < 0 ? -errno : 0;
	close(fd);
	return r;
}
