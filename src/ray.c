/*
 * ray.c - error structs, writing a whole buffer, and allocation helpers
 * shared by every module.
 */
#include "ray.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * POSIX leaves write(2) of more than SSIZE_MAX bytes undefined, and Linux
 * stops short of 2 GiB anyway, so large buffers go in pieces.
 */
#define WRITE_CHUNK ((size_t)1 << 30)

int
ray_err_set(struct ray_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return code;
	err->code = code;
	err->hint[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

int
ray_err_sys(struct ray_err *err, const char *fmt, ...)
{
	char what[RAY_ERR_MSG];
	va_list ap;
	int e = errno;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	ray_err_set(err, -e, "%s: %s", what, strerror(e));
	errno = e;
	return -e;
}

static volatile sig_atomic_t no_signals;
volatile sig_atomic_t *ray_signals = &no_signals;

int
ray_err_interrupted(struct ray_err *err, const char *fmt, ...)
{
	char what[RAY_ERR_MSG];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	ray_err_set(err, RAY_EINTR, "interrupted while %s", what);
	errno = EINTR;
	return RAY_EINTR;
}

int
ray_err_open(struct ray_err *err, const char *what, const char *path)
{
	struct stat st;
	int e = errno;

	/* With O_DIRECTORY a link is ENOTDIR rather than ELOOP. */
	if ((e != ELOOP && e != ENOTDIR) || lstat(path, &st) != 0 ||
	    !S_ISLNK(st.st_mode)) {
		errno = e;
		return ray_err_sys(err, "cannot open %s '%s'", what, path);
	}
	ray_err_set(err, -e, "cannot open %s '%s': it is a symbolic link, and "
	    "raymond does not write through links", what, path);
	ray_err_hint(err, "remove the link '%s'; raymond makes it again",
	    path);
	errno = e;
	return -e;
}

void
ray_err_hint(struct ray_err *err, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(err->hint, sizeof(err->hint), fmt, ap);
	va_end(ap);
}

int
ray_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	ssize_t n;

	while (len > 0) {
		n = write(fd, p, len < WRITE_CHUNK ? len : WRITE_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			errno = EIO;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Running out of memory leaves no sensible way to keep a run consistent,
 * and the state on disk is always the last good one, so we stop here.
 */
static void
oom(size_t n)
{
	fprintf(stderr, "raymond: error: out of memory allocating %zu bytes\n", n);
	exit(1);
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		oom(n);
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		oom(n * size);
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (q == NULL)
		oom(n);
	return q;
}

char *
xstrndup(const char *s, size_t n)
{
	char *d = xmalloc(n + 1);

	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}
