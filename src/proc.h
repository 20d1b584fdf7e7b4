/*
 * proc.h - child processes on the libuv loop.
 *
 * A ray_proc runs one command with stdout/stderr read through pipes as the
 * bytes arrive.  Its stdin is /dev/null, or, when opts.input is given, a
 * pipe that the loop fills with those bytes and then closes, so the input
 * may be of any size (argv and environment strings are limited to 128 KiB
 * each by Linux) without blocking raymond.  The host must ignore SIGPIPE,
 * as a command may exit without reading its input.  The child gets a session, and
 * so a process group, of its own, so a kill reaches the command and
 * everything it started, and a Ctrl-C in the terminal reaches only
 * raymond, which forwards it.  It starts with every signal at its default
 * and none blocked.  Linux 5.3 or later is needed (pidfd_open).
 *
 * Calling sequence:
 *
 *	ray_proc_spawn(loop, &opts, &ops, ud, &proc, &err);
 *	... ops.out / ops.err called with each chunk of output ...
 *	... ray_proc_kill(proc) at any time, any number of times ...
 *	ops.done(ud, &result)   exactly once, then the proc frees itself
 *
 * done is called after the command has exited and both pipes reached end
 * of file.  When a background process it left behind holds a pipe open 2
 * seconds after the exit (or a stop comes first), the group is sent
 * SIGKILL and what it wrote is read, for 0.5 s at most.  Either way,
 * whatever is left in the command's process group is sent SIGKILL before
 * done: a background process outlives its state only if it left the group
 * on purpose (setsid).  Inactivity: with opts.timeout_ms > 0, a command that writes
 * nothing on either pipe for that long has its group sent SIGTERM, and
 * SIGKILL opts.grace_ms later (1 second when 0) if it is still there;
 * result.timed_out is set.  A command that needs longer to stop cleanly
 * (the follower of a cluster job, which cancels the job and waits for it
 * to end) is given a longer grace.
 *
 * Errors: ray_proc_spawn returns a negative errno value (which is also
 * the libuv code) and fills `err` when the command cannot be started;
 * done is then never called.  A command that started but whose input or
 * exit cannot be watched is killed with its group and reaped first; should
 * it not be stoppable, the return is RAY_PROC_ESTRAY and it may still run.
 *
 * Ownership: opts and its strings are borrowed only for the duration of
 * the call (the input is copied).  The chunks passed to out/err
 * are valid only during the callback.  The proc pointer is valid until
 * done returns.
 */
#ifndef RAY_PROC_H
#define RAY_PROC_H

#include <stdint.h>
#include <uv.h>

#include "ray.h"

struct ray_proc;

/* ray_proc_spawn: the command started, failed, and may still run. */
#define RAY_PROC_ESTRAY (-10000)

/*
 * A hold on the inactivity limit, owned by the caller and shared with the
 * commands it is given to.  While `held` is above 0 a command's silence is
 * not inactivity (raymond itself is deciding something the command waits
 * for: a hook of one of its tool calls), and `touched`, the uv_now() of
 * the last release, counts as output, so the limit starts afresh then.
 */
struct ray_proc_hold {
	int held;
	uint64_t touched;
};

struct ray_proc_opts {
	char **argv;		/* argv[0] is looked up on env's PATH */
	char **env;		/* NULL-terminated "K=V" list; NULL: ours */
	const char *cwd;	/* NULL: raymond's own */
	uint64_t timeout_ms;	/* inactivity limit, 0: none */
	uint64_t grace_ms;	/* SIGTERM to SIGKILL, 0: 1000 */
	const struct ray_proc_hold *hold;	/* NULL: none; outlives the command */
	const char *input;	/* bytes for stdin; NULL: /dev/null */
	size_t input_len;
};

struct ray_proc_result {
	int64_t exit_status;	/* valid when term_signal == 0 */
	int term_signal;	/* signal that ended the command, or 0 */
	int timed_out;		/* the inactivity limit killed it */
	int killed;		/* ray_proc_kill or ray_proc_kill_all ended it */
	uint64_t duration_ns;
};

struct ray_proc_ops {
	void (*out)(void *ud, const char *data, size_t len);
	void (*err)(void *ud, const char *data, size_t len);
	void (*done)(void *ud, const struct ray_proc_result *res);
};

int ray_proc_spawn(uv_loop_t *loop, const struct ray_proc_opts *opts,
    const struct ray_proc_ops *ops, void *ud, struct ray_proc **out,
    struct ray_err *err);
/*
 * SIGTERM the command's group now, SIGKILL it opts.grace_ms (1 second by
 * default) later; once the command has exited, SIGKILL what is left of
 * its group now.
 */
void ray_proc_kill(struct ray_proc *p);
/* ray_proc_kill every live proc; returns how many there were. */
int ray_proc_kill_all(void);
/* The command's pid, which is also its process group's id. */
int ray_proc_pid(const struct ray_proc *p);

/*
 * Any process, found through /proc, for children a killed raymond left
 * behind.  A pid can be reused; the start time (clock ticks after boot,
 * /proc/PID/stat field 22) tells one process of that pid from another.
 */
struct ray_proc_info {
	unsigned long long start;	/* start time, clock ticks after boot */
	int pgid;			/* process group */
	char state;			/* 'R', 'S', ..., 'Z' for a zombie */
};

/* What /proc says of `pid`: 0, or -ESRCH when there is no such process. */
int ray_proc_info(int pid, struct ray_proc_info *out);
/*
 * Send `sig` to process `pid` only if it is the one that started at
 * `start`, and with `group` to the process group it leads (whose id is
 * ours while it lives).  Returns 0, -ESRCH when that process is gone,
 * -EINVAL for a pid <= 1 (never signalled), or -EPERM when `group` is
 * asked of a process that leads no group.
 */
int ray_proc_signal(int pid, unsigned long long start, int sig, int group);

#endif
