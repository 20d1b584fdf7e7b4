/*
 * cmd_follow.c - `raymond launch-follow`, the follower of a spool launch:
 * the one local process raymond spawns for a command a cluster runs
 * (docs/architecture.md, "Launchers: the follower and the spool").  It
 * submits the spool folder's
 * task.sh, or attaches to the job already submitted, copies the
 * task's output to its own stdout and stderr as it arrives, and ends as
 * the task ended, so raymond treats it as it treats a local child.
 *
 *	raymond launch-follow DIR --name JOB [--check S] [--grace S] [--new] \
 *	    --submit N ARG1..ARGN --cancel N ARG1..ARGN --status N ARG1..ARGN
 *
 * --new says raymond made DIR for this launch a moment ago, so no earlier
 * follower can have submitted its job: the status command is not asked
 * before the submit, which spares a launch one round trip to the cluster.
 *
 * The submit, status and cancel commands get the follower's environment
 * without RAYMOND_PROCESS_GROUP: that entry marks what a killed raymond
 * left running (raymond.leftovers), and a job started on this machine by
 * a launcher's command must not be taken for such a leftover and stopped
 * by a resume that means to attach to it.
 *
 * Calling sequence (ray_cmd_follow, the arguments after the command name):
 *
 *	parse        usage error: message on stderr, exit 2
 *	block TERM, INT, HUP; read them from a signalfd; SIGHUP on parent death
 *	watch DIR with inotify; fork a holder of that watch (hold_watch)
 *	DIR/exit exists                       -> replay out and err, end (below)
 *	DIR/job or DIR/started exists, or the status command prints something
 *	                                      -> attach
 *	otherwise run the submit command      -> DIR/job = first line it printed;
 *	    failing: DIR/launch-error = "submit failed (exit S): STDERR", exit 125
 *	follow: copy new bytes of DIR/out to fd 1 and DIR/err to fd 2, woken by
 *	    inotify on DIR and every 200 ms (NFS sends no inotify events)
 *	DIR/exit appears: drain out and err, then end with its status S:
 *	    exit S, or for S = 128+N (129..159) die of signal N (no core), so a
 *	    killed remote task reads as a killed local child
 *
 * The files of DIR are the spool protocol (docs/architecture.md): task.sh,
 * env and in are raymond's, started, out, err and exit the task's; the
 * follower writes only job and launch-error, each atomically (without
 * fsync: they must outlive the follower, not the machine).
 *
 * Signals, read from the signalfd between waits (all three stay blocked,
 * so none interrupts a write half done):
 *
 *	          ┌───────────── SIGHUP, in any state ─────────────> exit 129
 *	          │   (raymond died: the job goes on, no cancel; so does a
 *	          │    stdout whose reader is gone)
 *	SIGTERM/INT before the submit starts ──> exit 143, nothing submitted
 *	SUBMIT ──(job id)──> FOLLOW ──(exit file)──> DRAIN ──> end with S
 *	  │ SIGTERM/INT:       │ │
 *	  │ noted, the submit  │ └──(status: gone)──> RECHECK ──(1 s, no exit)──>
 *	  │ finishes first     │       launch-error "ended without an exit
 *	  v                    │       status", exit 125
 *	CANCEL <──SIGTERM/INT──┘
 *	  │ the cancel command runs once (its output to stderr)
 *	  v
 *	STOPPING ──(exit file)──> DRAIN ──> end with S
 *	  │  status every second; further SIGTERM/INT are ignored
 *	  └──(status: gone and still no exit 1 s later, or --grace passed)──>
 *	        exit 143
 *
 * Error contract: the follower's exit status is the task's (or its
 * signal); 125 with DIR/launch-error written when the launch failed (the
 * submit, or the job vanished without an exit status); 143 when a stop
 * ended it before the task did; 129 on SIGHUP; 2 for a usage error.  A
 * failing status command (the cluster unreachable) is reported once on
 * stderr and waited out.  The commands it runs get stdin /dev/null, every
 * signal at its default, and a process group of their own, so a stop sent
 * to the follower's group does not cut a submit or a cancel short.
 */
#include "atomicfile.h"
#include "buf.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define USAGE "usage: raymond launch-follow DIR --name JOB [--check SECONDS] " \
	"[--grace SECONDS] [--new] --submit N ARG... --cancel N ARG... --status N ARG..."

#define POLL_MS 200		/* stat polling, for NFS */
#define RECHECK_MS 1000		/* NFS attribute caching, before "gone" */
#define STOP_CHECK_MS 1000	/* the status command's period while stopping */
#define CMD_MS 30000		/* bound on one status or cancel command */
#define ERR_MAX 4096		/* launch-error's cut of the submit's stderr */
#define CAPTURE_MAX 65536	/* bytes kept of a command's stdout or stderr */
#define LINGER_MS 2000		/* pipes held open after the command's exit */

struct follow {
	const char *dir;
	const char *name;
	uint64_t check_ms;
	uint64_t grace_ms;
	char **submit;		/* NULL-terminated, borrowed from argv */
	char **cancel;
	char **status;
	int sigfd;
	int inofd;		/* -1 when DIR cannot be watched */
	int outfd;		/* DIR/out, once it exists, else -1 */
	int errfd;
	int fresh;		/* --new: DIR was made for this launch */
	int stop;		/* a SIGTERM or SIGINT came */
	int cancelled;		/* the cancel command has run */
	int warned;		/* the status command's failure was reported */
};

/* What one command did; out and err hold up to CAPTURE_MAX bytes each. */
struct cmd_result {
	int started;		/* 0: posix_spawn failed, errno in `error` */
	int error;
	int timed_out;
	int wstatus;
	struct ray_buf out;
	struct ray_buf err;
};

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static char *
spool_path(const struct follow *f, const char *file)
{
	struct ray_buf b = RAY_BUF_INIT;

	ray_buf_addf(&b, "%s/%s", f->dir, file);
	return ray_buf_detach(&b);
}

static int
spool_exists(const struct follow *f, const char *file)
{
	char *p = spool_path(f, file);
	struct stat st;
	int r = stat(p, &st) == 0;

	free(p);
	return r;
}

/*
 * Write DIR/file atomically, mode 0600; 0 or -1 with a line on stderr.
 * job and launch-error must outlive the follower, not the machine:
 * should a power cut lose job, the status command still finds the job
 * by its name.  No fsync, then, which costs more than the rest of a
 * launch on a busy disk.
 */
static int
spool_write(const struct follow *f, const char *file, const char *text)
{
	char *p = spool_path(f, file);
	struct ray_err err;
	int r;

	r = ray_atomicfile_write_unsynced(p, text, strlen(text), 0600, &err);
	if (r < 0)
		fprintf(stderr, "raymond: %s\n", err.msg);
	free(p);
	return r < 0 ? -1 : 0;
}

/*
 * One signal from the signalfd.  SIGHUP ends the follower at once: its
 * raymond is gone, and the job is left to run for a resume to attach to.
 */
static void
take_signal(struct follow *f)
{
	struct signalfd_siginfo si;

	while (read(f->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGHUP)
			_exit(129);
		f->stop = 1;
	}
}

/* Read a pipe into `b`, keeping at most CAPTURE_MAX bytes; 1 at EOF. */
static int
drain_pipe(int fd, struct ray_buf *b)
{
	char chunk[4096];
	ssize_t n = read(fd, chunk, sizeof(chunk));

	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : 1;
	if (n == 0)
		return 1;
	if (b->len < CAPTURE_MAX)
		ray_buf_add(b, chunk, b->len + (size_t)n > CAPTURE_MAX ?
		    CAPTURE_MAX - b->len : (size_t)n);
	return 0;
}

/*
 * Run argv to its end, or for timeout_ms at most (0: no bound), then
 * SIGKILL its group.  capture: its stdout and stderr go to res;
 * otherwise both go to our stderr.  A process it left in the background
 * holding a pipe is not waited for more than LINGER_MS after its exit.
 * Signals are taken meanwhile.
 */
static void
run_cmd(struct follow *f, char **argv, int capture, uint64_t timeout_ms,
    struct cmd_result *res)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	int outp[2] = { -1, -1 }, errp[2] = { -1, -1 };
	int pidfd = -1, exited = 0;
	uint64_t deadline = timeout_ms ? now_ms() + timeout_ms : 0, linger = 0;
	pid_t pid = -1;

	memset(res, 0, sizeof(*res));
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	if (capture && (pipe2(outp, O_CLOEXEC) < 0 ||
	    pipe2(errp, O_CLOEXEC) < 0)) {
		res->error = errno;
		goto out;
	}
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, capture ? outp[1] : 2, 1);
	if (capture)
		posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK |
	    POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
	res->error = posix_spawnp(&pid, argv[0], &fa, &attr, argv, environ);
	if (res->error != 0)
		goto out;
	res->started = 1;
	if (capture) {
		close(outp[1]);
		close(errp[1]);
		outp[1] = errp[1] = -1;
	}
	pidfd = (int)pidfd_open(pid, 0);
	while (!exited || outp[0] >= 0 || errp[0] >= 0) {
		struct pollfd p[4] = {
			{ f->sigfd, POLLIN, 0 }, { pidfd, POLLIN, 0 },
			{ outp[0], POLLIN, 0 }, { errp[0], POLLIN, 0 },
		};
		int ms = POLL_MS;

		if (deadline) {
			uint64_t t = now_ms();

			if (t >= deadline) {
				res->timed_out = 1;
				kill(-pid, SIGKILL);
				break;
			}
			if (deadline - t < (uint64_t)ms)
				ms = (int)(deadline - t);
		}
		if (exited) {
			p[1].fd = -1;
			if (now_ms() >= linger)
				break;
		}
		if (poll(p, 4, ms) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			take_signal(f);
		if (p[2].revents && drain_pipe(outp[0], &res->out)) {
			close(outp[0]);
			outp[0] = -1;
		}
		if (p[3].revents && drain_pipe(errp[0], &res->err)) {
			close(errp[0]);
			errp[0] = -1;
		}
		/* Without a pidfd the exit is found by polling waitpid. */
		if (!exited && waitpid(pid, &res->wstatus, WNOHANG) == pid) {
			exited = 1;
			linger = now_ms() + LINGER_MS;
		}
	}
	if (!exited)
		waitpid(pid, &res->wstatus, 0);
out:
	if (pidfd >= 0)
		close(pidfd);
	for (int i = 0; i < 2; i++) {
		if (outp[i] >= 0)
			close(outp[i]);
		if (errp[i] >= 0)
			close(errp[i]);
	}
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
}

static void
cmd_result_release(struct cmd_result *res)
{
	ray_buf_release(&res->out);
	ray_buf_release(&res->err);
}

/* 1 when the command ran and exited 0. */
static int
cmd_ok(const struct cmd_result *res)
{
	return res->started && !res->timed_out && WIFEXITED(res->wstatus) &&
	    WEXITSTATUS(res->wstatus) == 0;
}

/* "exit S", "signal N", "timed out" or the spawn error, into b. */
static void
cmd_how(const struct cmd_result *res, const char *what, struct ray_buf *b)
{
	if (!res->started)
		ray_buf_addf(b, "cannot run '%s': %s", what,
		    strerror(res->error));
	else if (res->timed_out)
		ray_buf_addf(b, "no answer within %d s", CMD_MS / 1000);
	else if (WIFSIGNALED(res->wstatus))
		ray_buf_addf(b, "signal %d", WTERMSIG(res->wstatus));
	else
		ray_buf_addf(b, "exit %d", WEXITSTATUS(res->wstatus));
}

/* `s` without leading and trailing white space, in a new string. */
static char *
trimmed(const char *s, size_t len)
{
	while (len > 0 && strchr(" \t\r\n", s[0]) != NULL) {
		s++;
		len--;
	}
	while (len > 0 && strchr(" \t\r\n", s[len - 1]) != NULL)
		len--;
	return xstrndup(s, len);
}

/*
 * Ask the status command about the job: 1 it is there, 0 it is gone, -1
 * the command failed (reported on stderr the first time).
 */
static int
job_status(struct follow *f)
{
	struct cmd_result res;
	struct ray_buf why = RAY_BUF_INIT;
	char *text;
	int r;

	run_cmd(f, f->status, 1, CMD_MS, &res);
	if (cmd_ok(&res)) {
		text = trimmed(ray_buf_str(&res.out), res.out.len);
		r = text[0] != '\0';
		free(text);
		goto out;
	}
	r = -1;
	if (f->warned)
		goto out;
	f->warned = 1;
	text = trimmed(ray_buf_str(&res.err), res.err.len);
	cmd_how(&res, f->status[0], &why);
	fprintf(stderr, "raymond: cannot ask the cluster about job %s: %s%s%s\n",
	    f->name, ray_buf_str(&why), text[0] ? ": " : "", text);
	free(text);
out:
	ray_buf_release(&why);
	cmd_result_release(&res);
	return r;
}

/*
 * Submit task.sh: 0 with DIR/job written (and what the submit said on
 * stderr passed on to ours), or -1 with DIR/launch-error written.
 */
static int
submit(struct follow *f)
{
	struct cmd_result res;
	struct ray_buf msg = RAY_BUF_INIT;
	char *text = NULL;
	size_t nl;
	int r = -1;

	run_cmd(f, f->submit, 1, 0, &res);
	if (!cmd_ok(&res)) {
		text = trimmed(ray_buf_str(&res.err), res.err.len);
		if (strlen(text) > ERR_MAX)
			text[ERR_MAX] = '\0';
		ray_buf_adds(&msg, "submit failed (");
		cmd_how(&res, f->submit[0], &msg);
		ray_buf_addf(&msg, ")%s%s\n", text[0] ? ": " : "", text);
		spool_write(f, "launch-error", ray_buf_str(&msg));
		goto out;
	}
	/* A warning of a submit that worked is the step's to show. */
	(void)ray_write_all(2, res.err.data, res.err.len);
	nl = strcspn(ray_buf_str(&res.out), "\n");
	text = trimmed(ray_buf_str(&res.out), nl);
	ray_buf_addf(&msg, "%s\n", text);
	if (spool_write(f, "job", ray_buf_str(&msg)) < 0)
		goto out;
	r = 0;
out:
	free(text);
	ray_buf_release(&msg);
	cmd_result_release(&res);
	return r;
}

/* Open DIR/file for reading once it exists; its fd, or -1. */
static int
open_spool(const struct follow *f, const char *file)
{
	char *p = spool_path(f, file);
	int fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	free(p);
	return fd;
}

/*
 * Copy what DIR/out and DIR/err have gained to fd 1 and fd 2.  A reader
 * gone (raymond died) ends the follower as SIGHUP does.
 */
static void
copy_new(struct follow *f)
{
	char chunk[65536];
	int *fds[2] = { &f->outfd, &f->errfd };
	const char *names[2] = { "out", "err" };
	ssize_t n;

	for (int i = 0; i < 2; i++) {
		if (*fds[i] < 0 && (*fds[i] = open_spool(f, names[i])) < 0)
			continue;
		while ((n = read(*fds[i], chunk, sizeof(chunk))) > 0)
			if (ray_write_all(i + 1, chunk, (size_t)n) < 0)
				_exit(129);
	}
}

/*
 * The task's status from DIR/exit: 0..255, or -1 when there is no exit
 * file yet, -2 when it holds no status.
 */
static int
read_exit(const struct follow *f)
{
	char buf[32], *end;
	int fd = open_spool(f, "exit");
	ssize_t n;
	long s;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	s = strtol(buf, &end, 10);
	if (end == buf || (*end != '\0' && *end != '\n') || s < 0 || s > 255)
		return -2;
	return (int)s;
}

/* Whether signal n's default action ends the process. */
static int
kills(int n)
{
	switch (n) {
	case SIGCHLD: case SIGCONT: case SIGSTOP: case SIGTSTP:
	case SIGTTIN: case SIGTTOU: case SIGURG: case SIGWINCH:
		return 0;
	}
	return 1;
}

/*
 * End as the task ended (status s, from DIR/exit): 128+N for a signal N
 * that ends a process dies of N, without a core; anything else is the
 * exit status.
 */
static void
end_as(int s)
{
	struct rlimit no_core = { 0, 0 };
	sigset_t one;
	int n = s - 128;

	if (n >= 1 && n <= 31 && kills(n)) {
		setrlimit(RLIMIT_CORE, &no_core);
		signal(n, SIG_DFL);
		sigemptyset(&one);
		sigaddset(&one, n);
		sigprocmask(SIG_UNBLOCK, &one, NULL);
		raise(n);
	}
	_exit(s);
}

/* The exit file is there: the rest of the output, then end with it. */
static void
finish(struct follow *f, int s)
{
	copy_new(f);
	if (s == -2) {
		struct ray_buf msg = RAY_BUF_INIT;

		ray_buf_addf(&msg, "job %s wrote no exit status that can be "
		    "read in its exit file\n", f->name);
		spool_write(f, "launch-error", ray_buf_str(&msg));
		ray_buf_release(&msg);
		_exit(125);
	}
	end_as(s);
}

/* The job is gone and left no exit file: say so, and end. */
static void
vanished(struct follow *f)
{
	struct ray_buf msg = RAY_BUF_INIT;

	if (f->stop)
		_exit(143);
	if (!spool_exists(f, "launch-error")) {
		ray_buf_addf(&msg, "job %s ended without an exit status "
		    "(cancelled, over its time limit, or its node was lost)\n",
		    f->name);
		spool_write(f, "launch-error", ray_buf_str(&msg));
		ray_buf_release(&msg);
	}
	_exit(125);
}

/* The first stop: run the cancel command, once. */
static void
cancel(struct follow *f)
{
	struct cmd_result res;

	f->cancelled = 1;
	run_cmd(f, f->cancel, 0, CMD_MS, &res);
	if (!cmd_ok(&res)) {
		struct ray_buf why = RAY_BUF_INIT;

		cmd_how(&res, f->cancel[0], &why);
		fprintf(stderr, "raymond: cannot cancel job %s: %s\n", f->name,
		    ray_buf_str(&why));
		ray_buf_release(&why);
	}
	cmd_result_release(&res);
}

/* Empty the inotify queue: the events only wake the loop. */
static void
take_events(struct follow *f)
{
	char buf[4096];

	while (read(f->inofd, buf, sizeof(buf)) > 0)
		;
}

/*
 * Follow the job until it ends one way or another; never returns.  Each
 * round copies new output and looks for the exit file; the status
 * command runs every check_ms (every second while stopping).
 */
static void
follow(struct follow *f)
{
	uint64_t next_check = now_ms() + f->check_ms;
	uint64_t stop_deadline = 0, gone_at = 0;
	int s;

	for (;;) {
		struct pollfd p[2] = { { f->sigfd, POLLIN, 0 },
			{ f->inofd, POLLIN, 0 } };
		uint64_t t, wake;

		copy_new(f);
		if ((s = read_exit(f)) != -1)
			finish(f, s);
		if (f->stop && !f->cancelled) {
			cancel(f);
			stop_deadline = now_ms() + f->grace_ms;
			next_check = now_ms() + STOP_CHECK_MS;
			continue;
		}
		t = now_ms();
		if (f->stop && t >= stop_deadline)
			_exit(143);
		if (gone_at != 0 && t >= gone_at + RECHECK_MS)
			vanished(f);
		if (gone_at == 0 && t >= next_check) {
			if (job_status(f) == 0)
				gone_at = now_ms();
			next_check = now_ms() + (f->stop ? STOP_CHECK_MS :
			    f->check_ms);
			continue;
		}
		wake = gone_at ? gone_at + RECHECK_MS : next_check;
		if (f->stop && stop_deadline < wake)
			wake = stop_deadline;
		if (wake > t + POLL_MS)
			wake = t + POLL_MS;
		if (poll(p, 2, (int)(wake - t)) < 0 && errno != EINTR)
			continue;
		if (p[0].revents)
			take_signal(f);
		if (f->inofd >= 0 && p[1].revents)
			take_events(f);
	}
}

/*
 * Fork a child that holds a copy of the inotify descriptor until the
 * follower is gone.  Closing the last descriptor of an inotify instance
 * waits for the kernel to retire its watch (an SRCU grace period, 4 to
 * 15 ms measured on a 2-core virtual machine), and a process's parent
 * learns of its exit only after its descriptors are closed: without the
 * holder, every launch would end that much later than its task.  The
 * holder has nothing else open, dies of SIGKILL when the follower ends
 * (PDEATHSIG), and pays the wait on its own, reaped by init.  Should the
 * fork fail, the follower simply ends later.
 */
static void
hold_watch(int inofd)
{
	pid_t follower = getpid();

	if (fork() != 0)
		return;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != follower)
		_exit(0);
	if (inofd > 0)
		close_range(0, (unsigned)inofd - 1, 0);
	close_range((unsigned)inofd + 1, ~0U, 0);
	for (;;)
		pause();
}

/* A whole non-negative number of seconds (fractions allowed), in ms. */
static int
parse_seconds(const char *s, uint64_t *ms)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end != '\0' || errno != 0 || !(v >= 0) || v > 1e9)
		return -1;
	*ms = (uint64_t)(v * 1000);
	return 0;
}

static int
usage(const char *fmt, const char *arg)
{
	fputs("raymond launch-follow: ", stderr);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s\n", USAGE);
	return 2;
}

/*
 * --submit N ARG1..ARGN at argv[*i]: *cmd is a new NULL-terminated copy
 * of the N argument pointers, kept in slots[] to be freed.  Returns 0,
 * or the usage error's exit status.
 */
static int
parse_cmd(int argc, char **argv, int *i, char ***cmd, char ***slots,
    int *nslots)
{
	const char *opt = argv[*i];
	char *end;
	long n;
	char **v;

	if (*cmd != NULL)
		return usage("%s given twice", opt);
	if (*i + 1 >= argc)
		return usage("%s needs a count and the command", opt);
	n = strtol(argv[*i + 1], &end, 10);
	if (end == argv[*i + 1] || *end != '\0' || n < 1 || n > argc - *i - 2)
		return usage("%s needs a count N of 1 or more and N arguments",
		    opt);
	v = xcalloc((size_t)n + 1, sizeof(*v));
	memcpy(v, argv + *i + 2, (size_t)n * sizeof(*v));
	slots[(*nslots)++] = v;
	*cmd = v;
	*i += 1 + (int)n;
	return 0;
}

int
ray_cmd_follow(int argc, char **argv)
{
	struct follow f = { .check_ms = 10000, .grace_ms = 20000, .sigfd = -1,
		.inofd = -1, .outfd = -1, .errfd = -1 };
	char **slots[3];
	int nslots = 0, rc, attach, s;
	sigset_t mask;
	struct stat st;

	/* Blocked before anything else, so no stop is ever missed. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	/* An ignored signal never reaches a signalfd (a shell's `&` ignores INT). */
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_PDEATHSIG, SIGHUP);
	if (getppid() == 1) {
		rc = 129;
		goto out;
	}
	rc = 0;
	for (int i = 0; i < argc && rc == 0; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--submit") == 0)
			rc = parse_cmd(argc, argv, &i, &f.submit, slots, &nslots);
		else if (strcmp(a, "--cancel") == 0)
			rc = parse_cmd(argc, argv, &i, &f.cancel, slots, &nslots);
		else if (strcmp(a, "--status") == 0)
			rc = parse_cmd(argc, argv, &i, &f.status, slots, &nslots);
		else if (strcmp(a, "--new") == 0)
			f.fresh = 1;
		else if (strcmp(a, "--name") == 0 && i + 1 < argc)
			f.name = argv[++i];
		else if (strcmp(a, "--check") == 0 && i + 1 < argc) {
			if (parse_seconds(argv[++i], &f.check_ms) < 0 ||
			    f.check_ms == 0)
				rc = usage("--check needs a number of seconds "
				    "above 0, not '%s'", argv[i]);
		} else if (strcmp(a, "--grace") == 0 && i + 1 < argc) {
			if (parse_seconds(argv[++i], &f.grace_ms) < 0)
				rc = usage("--grace needs a number of seconds, "
				    "not '%s'", argv[i]);
		} else if (a[0] == '-')
			rc = usage("unknown option or missing value: %s", a);
		else if (f.dir == NULL)
			f.dir = a;
		else
			rc = usage("one spool folder only, not also '%s'", a);
	}
	if (rc != 0)
		goto out;
	if (f.dir == NULL)
		rc = usage("%s", "no spool folder");
	else if (f.name == NULL || f.name[0] == '\0')
		rc = usage("%s", "no --name");
	else if (f.submit == NULL || f.cancel == NULL || f.status == NULL)
		rc = usage("%s", "--submit, --cancel and --status are all "
		    "needed");
	else if (stat(f.dir, &st) < 0 || !S_ISDIR(st.st_mode))
		rc = usage("no spool folder '%s'", f.dir);
	if (rc != 0)
		goto out;

	unsetenv("RAYMOND_PROCESS_GROUP");
	f.sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (f.sigfd < 0) {
		perror("raymond launch-follow: signalfd");
		rc = 125;
		goto out;
	}
	f.inofd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (f.inofd >= 0 && inotify_add_watch(f.inofd, f.dir, IN_CREATE |
	    IN_MODIFY | IN_MOVED_TO | IN_CLOSE_WRITE) < 0) {
		close(f.inofd);
		f.inofd = -1;
	}
	if (f.inofd >= 0)
		hold_watch(f.inofd);
	if ((s = read_exit(&f)) != -1)
		finish(&f, s);
	attach = spool_exists(&f, "job") || spool_exists(&f, "started") ||
	    (!f.fresh && job_status(&f) == 1);
	take_signal(&f);
	if (!attach && f.stop) {
		rc = 143;
		goto out;
	}
	if (!attach && submit(&f) < 0) {
		rc = 125;
		goto out;
	}
	follow(&f);
out:
	if (f.sigfd >= 0)
		close(f.sigfd);
	if (f.inofd >= 0)
		close(f.inofd);
	for (int i = 0; i < nslots; i++)
		free(slots[i]);
	return rc;
}
