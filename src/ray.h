/*
 * ray.h - definitions shared by every module of the raymond core.
 *
 * Error contract used throughout src/: a function returns 0 on success and
 * a negative code on failure, either -errno or one of the RAY_E* codes
 * below.  A function whose failure the user must read also takes a
 * `struct ray_err *`; it fills it with one line saying what failed and
 * where, and optionally a hint saying how to fix it.  Callers that do not
 * care may pass NULL.
 *
 * Memory exhaustion is not an error a caller can handle: the x*alloc
 * helpers print a message and exit, so their results are never NULL.
 */
#ifndef RAY_H
#define RAY_H

#include <signal.h>
#include <stddef.h>

#define RAY_VERSION "0.1.0"

enum {
	RAY_EINVAL = -1001,	/* malformed input (tag, YAML, state file) */
	RAY_ENOTFOUND = -1002,	/* a named thing does not exist */
	RAY_ELOCKED = -1003,	/* another process holds the lock */
	RAY_ETOOBIG = -1004,	/* input exceeds a documented limit */
	RAY_EIO = -1005,	/* an I/O step failed; errno text in the message */
	RAY_ELUA = -1006,	/* a Lua error; message holds file:line */
	RAY_EFULL = -1007,	/* a store of fixed size has no room left */
	RAY_EINTR = -1008,	/* stopped by SIGINT or SIGTERM; nothing is lost */
};

#define RAY_ERR_MSG 1024

struct ray_err {
	int code;
	char msg[RAY_ERR_MSG];
	char hint[RAY_ERR_MSG];
};

/* Fill `err` (if not NULL) with a formatted message; returns `code`. */
int ray_err_set(struct ray_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * Fill `err` with the formatted message, ": ", and the text of the current
 * errno; return -errno, leaving errno as it was so the caller's cleanup
 * can save and restore it.
 */
int ray_err_sys(struct ray_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * ray_err_sys for an open(2) of `path` with O_NOFOLLOW that failed: when
 * `path` is a symbolic link (ELOOP, or ENOTDIR with O_DIRECTORY) that is
 * said plainly, with a hint to remove it; any other failure as
 * ray_err_sys says it.  The message
 * is "cannot open WHAT 'PATH': ...".
 */
int ray_err_open(struct ray_err *err, const char *what, const char *path);
/* Set the hint line of `err` (if not NULL). */
void ray_err_hint(struct ray_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Signals during long work in C.  raymond's SIGINT/SIGTERM handler counts
 * each signal in a volatile sig_atomic_t (src/lua_sched.c); ray_signals
 * points at that count once the host is up (at a count that never moves
 * before, and in the unit tests).  A loop that may run for long (hashing,
 * unpacking, reading a big file, removing a tree) takes a mark before it
 * starts and stops when the count has moved, with RAY_EINTR:
 *
 *	unsigned long mark = ray_signal_mark();
 *	for (...) {
 *		if (ray_interrupted(mark))
 *			return ray_err_interrupted(err, "hashing '%s'", path);
 *		...
 *	}
 *
 * Reading the count is one load, so it is done at every chunk.  Work begun
 * after a signal runs normally, as the rest of the way out must.
 */
extern volatile sig_atomic_t *ray_signals;

static inline unsigned long
ray_signal_mark(void)
{
	return (unsigned long)*ray_signals;
}

static inline int
ray_interrupted(unsigned long mark)
{
	return (unsigned long)*ray_signals != mark;
}

/*
 * Fill `err` with "interrupted while DOING" and return RAY_EINTR; errno is
 * set to EINTR for callers that report through it.
 */
int ray_err_interrupted(struct ray_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Write all `len` bytes of `data` to `fd`, retrying after EINTR and short
 * writes, in pieces small enough for write(2) on any size.  Returns 0, or
 * -1 with errno set; a write that takes no bytes is reported as EIO,
 * since retrying it would spin.
 */
int ray_write_all(int fd, const void *data, size_t len);

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define UNUSED(x) ((void)(x))

#endif
