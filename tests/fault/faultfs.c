/*
 * faultfs.c - an LD_PRELOAD library that makes the file system fail on
 * demand, so tests can show what raymond does when a disk fills up or a
 * rename fails while it writes its state.
 *
 *	RAYMOND_FAULT=CALL:MATCH:N[:ERRNO]
 *
 * makes the N-th and every later CALL (write, pwrite, fsync, fdatasync,
 * rename or fallocate) on a path containing MATCH fail with ERRNO (default
 * ENOSPC).  Calls on a descriptor are matched through the path of their
 * file; rename through its destination.
 *
 *	RAYMOND_FAULT=space:MATCH:BYTES[:ERRNO]
 *
 * is a nearly full disk: writes (write, pwrite) and reservations
 * (fallocate, posix_fallocate) on files whose path contains MATCH succeed
 * while their bytes add up to at most BYTES, and any one that would go
 * beyond fails with ERRNO (default ENOSPC) and takes nothing.  Space is
 * never given back (removing a file does not free it).
 *
 * Without RAYMOND_FAULT everything passes straight through.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char call[16];
static char match[256];
static long nth;
static int err_no = ENOSPC;
static long seen;
static int ready;
/* The "space" form: bytes left, or -1 without it. */
static long long space = -1;

static void
setup(void)
{
	const char *spec = getenv("RAYMOND_FAULT");
	char buf[300];
	char *a, *b, *c, *d;

	ready = 1;
	if (spec == NULL || strlen(spec) >= sizeof(buf))
		return;
	strcpy(buf, spec);
	a = strtok(buf, ":");
	b = strtok(NULL, ":");
	c = strtok(NULL, ":");
	d = strtok(NULL, ":");
	if (a == NULL || b == NULL || c == NULL)
		return;
	snprintf(call, sizeof(call), "%s", a);
	snprintf(match, sizeof(match), "%s", b);
	nth = strtol(c, NULL, 10);
	if (d)
		err_no = (int)strtol(d, NULL, 10);
	if (strcmp(call, "space") == 0)
		space = strtoll(c, NULL, 10);
}

/* The path of descriptor fd, or "" when it cannot be told. */
static const char *
fd_path(int fd, char *path, size_t size)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, size - 1);
	path[n < 0 ? 0 : n] = '\0';
	return path;
}

/*
 * Whether this call of `name` is to fail: on the file at `path`, or when
 * path is NULL on descriptor fd.
 */
static int
trip(const char *name, int fd, const char *path)
{
	char buf[PATH_MAX];

	if (!ready)
		setup();
	if (call[0] == '\0' || strcmp(call, name) != 0)
		return 0;
	if (path == NULL)
		path = fd_path(fd, buf, sizeof(buf));
	if (strstr(path, match) == NULL)
		return 0;
	return ++seen >= nth;
}

/* Whether `len` bytes on descriptor fd exceed the "space" left. */
static int
full(int fd, size_t len)
{
	char buf[PATH_MAX];

	if (!ready)
		setup();
	if (space < 0 || strstr(fd_path(fd, buf, sizeof(buf)), match) == NULL)
		return 0;
	if ((long long)len > space)
		return 1;
	space -= (long long)len;
	return 0;
}

ssize_t
write(int fd, const void *buf, size_t len)
{
	static ssize_t (*real)(int, const void *, size_t);

	if (real == NULL)
		real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	if (fd > 2 && (trip("write", fd, NULL) || full(fd, len))) {
		errno = err_no;
		return -1;
	}
	return real(fd, buf, len);
}

ssize_t
pwrite64(int fd, const void *buf, size_t len, off_t off)
{
	static ssize_t (*real)(int, const void *, size_t, off_t);

	if (real == NULL)
		real = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite64");
	if (trip("pwrite", fd, NULL) || full(fd, len)) {
		errno = err_no;
		return -1;
	}
	return real(fd, buf, len, off);
}

ssize_t
pwrite(int fd, const void *buf, size_t len, off_t off)
{
	return pwrite64(fd, buf, len, off);
}

int
fdatasync(int fd)
{
	static int (*real)(int);

	if (real == NULL)
		real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
	if (trip("fdatasync", fd, NULL)) {
		errno = err_no;
		return -1;
	}
	return real(fd);
}

int
fsync(int fd)
{
	static int (*real)(int);

	if (real == NULL)
		real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	if (trip("fsync", fd, NULL)) {
		errno = err_no;
		return -1;
	}
	return real(fd);
}

int
rename(const char *from, const char *to)
{
	static int (*real)(const char *, const char *);

	if (real == NULL)
		real = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
	if (trip("rename", -1, to)) {
		errno = err_no;
		return -1;
	}
	return real(from, to);
}

int
fallocate64(int fd, int mode, off_t off, off_t len)
{
	static int (*real)(int, int, off_t, off_t);

	if (real == NULL)
		real = (int (*)(int, int, off_t, off_t))dlsym(RTLD_NEXT, "fallocate64");
	if (trip("fallocate", fd, NULL) || full(fd, (size_t)len)) {
		errno = err_no;
		return -1;
	}
	return real(fd, mode, off, len);
}

int
fallocate(int fd, int mode, off_t off, off_t len)
{
	return fallocate64(fd, mode, off, len);
}

/* posix_fallocate returns the error rather than setting errno. */
int
posix_fallocate64(int fd, off_t off, off_t len)
{
	static int (*real)(int, off_t, off_t);

	if (real == NULL)
		real = (int (*)(int, off_t, off_t))dlsym(RTLD_NEXT, "posix_fallocate64");
	if (trip("fallocate", fd, NULL) || full(fd, (size_t)len))
		return err_no;
	return real(fd, off, len);
}

int
posix_fallocate(int fd, off_t off, off_t len)
{
	return posix_fallocate64(fd, off, len);
}
