/*
 * atomicfile.c - crash-safe replacement and whole-file reading of the
 * files raymond keeps its state in (see atomicfile.h for the protocol).
 */
#include "atomicfile.h"
#include "ray.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/*
 * Large files are read in slices, with a look for a signal between two
 * (see ray.h); a slice is also far below the SSIZE_MAX bytes past which
 * POSIX leaves read(2) undefined.
 */
#define READ_SLICE ((size_t)16 << 20)

/* A buffer to start from when fstat cannot tell the size (pipes, /proc). */
#define READ_START 4096

static char *
lock_path(const char *path)
{
	size_t n = strlen(path);
	char *p = xmalloc(n + sizeof(".lock"));

	memcpy(p, path, n);
	memcpy(p + n, ".lock", sizeof(".lock"));
	return p;
}

/*
 * The directory whose entry the rename changes: "." for a bare name, "/"
 * for a file in the root.
 */
static char *
dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xstrndup(path, (size_t)(slash - path));
}

/* Whether writes are synced (atomicfile.h): set once, before any write. */
static int sync_on = 1;

int
ray_atomicfile_write(const char *path, const void *data, size_t len,
    struct ray_err *err)
{
	return ray_atomicfile_write_mode(path, data, len, 0644, err);
}

/* Steps 1 to 5 of atomicfile.h; without `sync`, no fsync at all. */
static int
write_file(const char *path, const void *data, size_t len, int mode, int sync,
    struct ray_err *err)
{
	char *lock = lock_path(path);
	int fd = -1, created = 0, rc = 0, saved, n;

	fd = open(lock, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (fd < 0) {
		if (errno != EEXIST) {
			rc = ray_err_sys(err, "cannot create '%s'", lock);
			goto out;
		}
		rc = ray_err_set(err, RAY_ELOCKED, "'%s' exists: another "
		    "raymond process is writing '%s', or one was killed while "
		    "writing it", lock, path);
		ray_err_hint(err, "if no other raymond process is working on "
		    "this run, the lock is stale: remove '%s' and try again",
		    lock);
		goto out;
	}
	/* From here on a failure must not leave our lock file behind. */
	created = 1;

	if (ray_write_all(fd, data, len) < 0) {
		rc = ray_err_sys(err, "cannot write '%s'", lock);
		goto out;
	}

	/* Without this the rename could reach the disk before the data. */
	if (sync && fsync(fd) < 0) {
		rc = ray_err_sys(err, "cannot fsync '%s'", lock);
		goto out;
	}

	/*
	 * Some file systems (NFS, quotas) report write errors only at close,
	 * and Linux releases the descriptor even when close fails, so it is
	 * never retried.
	 */
	n = close(fd);
	fd = -1;
	if (n < 0) {
		rc = ray_err_sys(err, "cannot close '%s'", lock);
		goto out;
	}

	if (rename(lock, path) < 0) {
		rc = ray_err_sys(err, "cannot rename '%s' to '%s'", lock, path);
		goto out;
	}
	/* The lock file is now the target; there is nothing to unlink. */
	created = 0;

	/*
	 * The new contents are in place, so a failure here is reported only
	 * because a power cut could still bring back the old file.
	 */
	if (sync)
		rc = ray_atomicfile_sync_dir(path, "replacing", err);

out:
	saved = errno;
	/*
	 * Close errors here are not reported: the descriptor is released
	 * either way, and the step that failed first is the one to report.
	 */
	if (fd >= 0)
		close(fd);
	if (created)
		unlink(lock);
	free(lock);
	errno = saved;
	return rc;
}

int
ray_atomicfile_write_mode(const char *path, const void *data, size_t len,
    int mode, struct ray_err *err)
{
	return write_file(path, data, len, mode, sync_on, err);
}

int
ray_atomicfile_write_unsynced(const char *path, const void *data, size_t len,
    int mode, struct ray_err *err)
{
	return write_file(path, data, len, mode, 0, err);
}

void
ray_atomicfile_set_sync(int on)
{
	sync_on = on;
}

int
ray_atomicfile_sync(void)
{
	return sync_on;
}

int
ray_atomicfile_sync_dir(const char *path, const char *doing,
    struct ray_err *err)
{
	char *dir = dir_of(path);
	int dfd = -1, rc = 0, saved;

	if (!sync_on)
		goto out;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		rc = ray_err_sys(err, "cannot open directory '%s' after %s "
		    "'%s'", dir, doing, path);
		goto out;
	}
	if (fsync(dfd) < 0 && errno != EINVAL && errno != EBADF)
		rc = ray_err_sys(err, "cannot fsync directory '%s' after %s "
		    "'%s'", dir, doing, path);

out:
	saved = errno;
	/* A read-only directory descriptor has nothing left to flush. */
	if (dfd >= 0)
		close(dfd);
	free(dir);
	errno = saved;
	return rc;
}

int
ray_atomicfile_read(const char *path, char **out, size_t *len,
    struct ray_err *err)
{
	return ray_atomicfile_read_max(path, SIZE_MAX, out, len, err);
}

static int
too_big(struct ray_err *err, const char *path, size_t max)
{
	return ray_err_set(err, RAY_ETOOBIG, "cannot read '%s': it is larger "
	    "than %zu bytes", path, max);
}

int
ray_atomicfile_read_max(const char *path, size_t max, char **out,
    size_t *len, struct ray_err *err)
{
	struct stat st;
	char *buf = NULL;
	size_t cap, used = 0, chunk;
	unsigned long mark = ray_signal_mark();
	ssize_t n;
	int fd, rc = 0, saved;

	*out = NULL;
	if (len != NULL)
		*len = 0;

	/* O_NONBLOCK: opening a FIFO planted in its place must not hang. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = ray_err_sys(err, "cannot read '%s'", path);
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		rc = ray_err_sys(err, "cannot read '%s'", path);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = ray_err_set(err, RAY_EINVAL, "cannot read '%s': it is not "
		    "a regular file (a %s)", path, S_ISDIR(st.st_mode) ?
		    "folder" : S_ISFIFO(st.st_mode) ? "FIFO" : "device or socket");
		goto out;
	}
	if (st.st_size >= 0 && (uintmax_t)st.st_size > max) {
		rc = too_big(err, path, max);
		goto out;
	}
	if (st.st_size < 0 || (uintmax_t)st.st_size >= SIZE_MAX / 2) {
		errno = EFBIG;
		rc = ray_err_sys(err, "cannot read '%s'", path);
		goto out;
	}

	/*
	 * Size the buffer from fstat so a large file is read with one
	 * allocation, but keep reading to end of file: the size may change
	 * under us, and some files report 0.  One byte more than the size
	 * lets the loop see end of file without growing the buffer.
	 */
	cap = st.st_size > 0 ? (size_t)st.st_size + 1 : READ_START;
	buf = xmalloc(cap);
	for (;;) {
		if (used == cap) {
			if (cap > SIZE_MAX / 2) {
				errno = EFBIG;
				rc = ray_err_sys(err, "cannot read '%s'", path);
				goto out;
			}
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		if (ray_interrupted(mark)) {
			rc = ray_err_interrupted(err, "reading '%s'", path);
			goto out;
		}
		chunk = cap - used < READ_SLICE ? cap - used : READ_SLICE;
		n = read(fd, buf + used, chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = ray_err_sys(err, "cannot read '%s'", path);
			goto out;
		}
		if (n == 0)
			break;
		used += (size_t)n;
		/* The size may have grown since fstat. */
		if (used > max) {
			rc = too_big(err, path, max);
			goto out;
		}
	}

	/* The loop grows the buffer before it is full, so this fits. */
	buf[used] = '\0';
	*out = buf;
	buf = NULL;
	if (len != NULL)
		*len = used;

out:
	saved = errno;
	/* Nothing was written through this descriptor; close cannot lose data. */
	if (fd >= 0)
		close(fd);
	free(buf);
	errno = saved;
	return rc;
}

int
ray_atomicfile_clear_stale(const char *path)
{
	char *lock = lock_path(path);
	int removed = unlink(lock) == 0;

	free(lock);
	return removed;
}
