/*
 * test_atomicfile.c - unit tests of atomicfile.c: contents after success,
 * the old file intact after every kind of failure, and the lock.
 *
 * The binary is linked with -Wl,--wrap=write,--wrap=fsync,--wrap=rename,
 * --wrap=close, so calls made from the objects we link reach the
 * __wrap_* functions below.  They pass every call straight through unless
 * a test has armed them, and even then touch only descriptors and paths
 * inside this run's temporary directory, so the harness's own output and
 * the sanitizers' are never disturbed.
 */
#include "atomicfile.h"
#include "ray.h"
#include "testlib.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

ssize_t __real_write(int fd, const void *buf, size_t n);
int __real_fsync(int fd);
int __real_rename(const char *from, const char *to);
int __real_close(int fd);
ssize_t __wrap_write(int fd, const void *buf, size_t n);
int __wrap_fsync(int fd);
int __wrap_rename(const char *from, const char *to);
int __wrap_close(int fd);

/* Fail the nth intercepted call (counting from 1) with errno `err`. */
struct fault {
	int nth;
	int err;
};

struct faults {
	size_t write_max;	/* most bytes one write may take; 0: no limit */
	struct fault write, fsync, rename, close;
};

/*
 * What the wraps do and saw while armed.  The log lists intercepted calls
 * as "call:file" with the file relative to the temporary directory ("."
 * for the directory itself); a run of writes is logged once.
 */
static struct {
	int armed;
	struct faults f;
	int writes, fsyncs, renames, closes;
	char log[1024];
	char last[PATH_MAX + 16];
} w;

static char tdir[PATH_MAX];
static size_t tdir_len;

static void
arm(const struct faults *f)
{
	memset(&w, 0, sizeof(w));
	if (f != NULL)
		w.f = *f;
	w.armed = 1;
}

static void
disarm(void)
{
	w.armed = 0;
}

/*
 * Whether `path` lies in the temporary directory; if so, `rel` is set to
 * its name relative to it.  Relative paths are the bare-name test's.
 */
static int
path_under_test(const char *path, const char **rel)
{
	if (path[0] != '/') {
		*rel = path;
		return 1;
	}
	if (tdir_len == 0 || strncmp(path, tdir, tdir_len) != 0)
		return 0;
	if (path[tdir_len] == '\0') {
		*rel = ".";
		return 1;
	}
	if (path[tdir_len] != '/')
		return 0;
	*rel = path + tdir_len + 1;
	return 1;
}

/* Whether `fd` is open on something in the temporary directory. */
static int
fd_under_test(int fd, char *buf, size_t size, const char **rel)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, size - 1);
	if (n < 0)
		return 0;
	buf[n] = '\0';
	return path_under_test(buf, rel);
}

static void
log_call(const char *call, const char *rel)
{
	char entry[sizeof(w.last)];
	size_t used = strlen(w.log);

	snprintf(entry, sizeof(entry), "%s:%s", call, rel);
	if (strcmp(call, "write") == 0 && strcmp(entry, w.last) == 0)
		return;
	snprintf(w.last, sizeof(w.last), "%s", entry);
	snprintf(w.log + used, sizeof(w.log) - used, "%s%s",
	    used ? " " : "", entry);
}

static int
hit(const struct fault *f, int calls)
{
	if (f->nth == 0 || calls != f->nth)
		return 0;
	errno = f->err;
	return 1;
}

ssize_t
__wrap_write(int fd, const void *buf, size_t n)
{
	char path[PATH_MAX];
	const char *rel;

	if (!w.armed || !fd_under_test(fd, path, sizeof(path), &rel))
		return __real_write(fd, buf, n);
	log_call("write", rel);
	if (hit(&w.f.write, ++w.writes))
		return -1;
	if (w.f.write_max != 0 && n > w.f.write_max)
		n = w.f.write_max;
	return __real_write(fd, buf, n);
}

int
__wrap_fsync(int fd)
{
	char path[PATH_MAX];
	const char *rel;

	if (!w.armed || !fd_under_test(fd, path, sizeof(path), &rel))
		return __real_fsync(fd);
	log_call("fsync", rel);
	if (hit(&w.f.fsync, ++w.fsyncs))
		return -1;
	return __real_fsync(fd);
}

int
__wrap_rename(const char *from, const char *to)
{
	const char *rel;

	if (!w.armed || !path_under_test(from, &rel))
		return __real_rename(from, to);
	log_call("rename", rel);
	if (hit(&w.f.rename, ++w.renames))
		return -1;
	return __real_rename(from, to);
}

int
__wrap_close(int fd)
{
	char path[PATH_MAX];
	const char *rel;

	if (!w.armed || !fd_under_test(fd, path, sizeof(path), &rel))
		return __real_close(fd);
	log_call("close", rel);
	if (hit(&w.f.close, ++w.closes)) {
		/* Linux releases the descriptor even when close fails. */
		int e = errno;

		__real_close(fd);
		errno = e;
		return -1;
	}
	return __real_close(fd);
}

static void
rm_tdir(void)
{
	struct dirent *de;
	DIR *d;

	if (tdir_len == 0)
		return;
	d = opendir(tdir);
	if (d != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (strcmp(de->d_name, ".") == 0 ||
			    strcmp(de->d_name, "..") == 0)
				continue;
			unlinkat(dirfd(d), de->d_name, 0);
		}
		closedir(d);
	}
	rmdir(tdir);
}

/* The path of `name` in this run's temporary directory, made on first use. */
static void
tpath(char *out, size_t size, const char *name)
{
	char tmpl[] = "/tmp/ray-test-atomicfile-XXXXXX";

	if (tdir_len == 0) {
		/* The wraps compare against what /proc reports: no symlinks. */
		if (mkdtemp(tmpl) == NULL || realpath(tmpl, tdir) == NULL) {
			printf("FAIL setup: cannot make temporary directory: %s\n",
			    strerror(errno));
			exit(1);
		}
		tdir_len = strlen(tdir);
		atexit(rm_tdir);
	}
	snprintf(out, size, "%s/%s", tdir, name);
}

#define TPATH(var, name)                                                   \
	char var[PATH_MAX];                                                \
	tpath(var, sizeof(var), name)

/* Write a file without the module under test. */
static int
put(const char *path, const void *data, size_t len)
{
	FILE *fp = fopen(path, "wb");
	int ok;

	if (fp == NULL)
		return 0;
	ok = fwrite(data, 1, len, fp) == len;
	return fclose(fp) == 0 && ok;
}

/* Whether `path` holds exactly `len` bytes equal to `data`. */
static int
holds(const char *path, const void *data, size_t len)
{
	char *buf = malloc(len + 1);
	FILE *fp = fopen(path, "rb");
	int same = 0;

	if (fp != NULL && buf != NULL)
		same = fread(buf, 1, len + 1, fp) == len &&
		    memcmp(buf, data, len) == 0;
	if (fp != NULL)
		fclose(fp);
	free(buf);
	return same;
}

static int
exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static void
lock_of(char *out, size_t size, const char *path)
{
	snprintf(out, size, "%s.lock", path);
}

/* The previous contents, with a NUL so comparisons are byte for byte. */
static const char old[] = "{\"old\":\0\"state\"}\n";
static const char new[] = "{\"new\":\"state, longer than the old one\"}\n";

TEST(write_creates_file_with_exact_contents)
{
	struct ray_err err = { 0 };
	TPATH(p, "create.json");
	char lock[PATH_MAX + 8];

	lock_of(lock, sizeof(lock), p);
	ASSERT_EQ(ray_atomicfile_write(p, new, sizeof(new), &err), 0);
	ASSERT(holds(p, new, sizeof(new)));
	ASSERT(!exists(lock));
}

TEST(write_overwrite_replaces_contents)
{
	struct ray_err err = { 0 };
	TPATH(p, "overwrite.json");
	char lock[PATH_MAX + 8];

	lock_of(lock, sizeof(lock), p);
	ASSERT(put(p, new, sizeof(new)));
	/* Shorter than before: no tail of the old contents may remain. */
	ASSERT_EQ(ray_atomicfile_write(p, old, sizeof(old), &err), 0);
	ASSERT(holds(p, old, sizeof(old)));
	ASSERT(!exists(lock));
}

TEST(write_empty_contents)
{
	struct ray_err err = { 0 };
	TPATH(p, "empty.json");

	ASSERT(put(p, old, sizeof(old)));
	ASSERT_EQ(ray_atomicfile_write(p, NULL, 0, &err), 0);
	ASSERT(holds(p, "", 0));
}

/*
 * The durability argument rests on this order: data synced before the
 * rename publishes it, and the directory synced after the rename.
 */
TEST(write_syncs_file_then_renames_then_syncs_directory)
{
	struct ray_err err = { 0 };
	TPATH(p, "order.json");
	int rc;

	arm(NULL);
	rc = ray_atomicfile_write(p, new, sizeof(new), &err);
	disarm();
	ASSERT_EQ(rc, 0);
	ASSERT_STREQ(w.log, "write:order.json.lock fsync:order.json.lock "
	    "close:order.json.lock rename:order.json.lock fsync:. close:.");
}

/*
 * Unsynced: the same steps without an fsync, the file whole and private
 * (a spool folder's files, written again after a crash).
 */
TEST(write_unsynced_renames_without_fsync)
{
	struct ray_err err = { 0 };
	TPATH(p, "spool-env");
	struct stat st;
	int rc;

	arm(NULL);
	rc = ray_atomicfile_write_unsynced(p, new, sizeof(new), 0600, &err);
	disarm();
	ASSERT_EQ(rc, 0);
	ASSERT_STREQ(w.log, "write:spool-env.lock close:spool-env.lock "
	    "rename:spool-env.lock");
	ASSERT(holds(p, new, sizeof(new)));
	ASSERT_EQ(stat(p, &st), 0);
	ASSERT_EQ(st.st_mode & 0777, 0600);
}

/* A bare file name lives in the current directory, so "." is synced. */
TEST(write_bare_name_syncs_current_directory)
{
	struct ray_err err = { 0 };
	char cwd[PATH_MAX];
	TPATH(p, "bare.json");
	int rc;

	ASSERT(getcwd(cwd, sizeof(cwd)) != NULL);
	ASSERT_EQ(chdir(tdir), 0);
	arm(NULL);
	rc = ray_atomicfile_write("bare.json", new, sizeof(new), &err);
	disarm();
	ASSERT_EQ(chdir(cwd), 0);
	ASSERT_EQ(rc, 0);
	ASSERT(holds(p, new, sizeof(new)));
	ASSERT_STREQ(w.log, "write:bare.json.lock fsync:bare.json.lock "
	    "close:bare.json.lock rename:bare.json.lock fsync:. close:.");
}

TEST(write_survives_short_writes)
{
	struct faults f = { .write_max = 1 };
	struct ray_err err = { 0 };
	char data[1000];
	TPATH(p, "short.json");
	size_t i;
	int rc;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (char)(i * 7);
	arm(&f);
	rc = ray_atomicfile_write(p, data, sizeof(data), &err);
	disarm();
	ASSERT_EQ(rc, 0);
	ASSERT_EQ(w.writes, sizeof(data));
	ASSERT(holds(p, data, sizeof(data)));
}

TEST(write_retries_eintr)
{
	struct faults f = { .write = { 1, EINTR } };
	struct ray_err err = { 0 };
	TPATH(p, "eintr.json");
	int rc;

	arm(&f);
	rc = ray_atomicfile_write(p, new, sizeof(new), &err);
	disarm();
	ASSERT_EQ(rc, 0);
	ASSERT_EQ(w.writes, 2);
	ASSERT(holds(p, new, sizeof(new)));
}

/*
 * Replace a file holding `old` while `f` is injected, and check what a
 * user relies on: a negative return, errno kept, the old file intact byte
 * for byte, no lock left, and a message starting with `step` that names
 * the file and gives the system's reason.
 */
static void
expect_write_fails(const char *name, const struct faults *f,
    const char *step, int e)
{
	struct ray_err err = { 0 };
	TPATH(p, name);
	char lock[PATH_MAX + 8];
	int rc, saved;

	lock_of(lock, sizeof(lock), p);
	ASSERT(put(p, old, sizeof(old)));
	arm(f);
	rc = ray_atomicfile_write(p, new, sizeof(new), &err);
	saved = errno;
	disarm();
	ASSERT_EQ(rc, -e);
	ASSERT_EQ(saved, e);
	ASSERT_EQ(err.code, -e);
	ASSERT(holds(p, old, sizeof(old)));
	ASSERT(!exists(lock));
	if (strncmp(err.msg, step, strlen(step)) != 0)
		T_FAIL("message \"%s\" does not start with \"%s\"", err.msg,
		    step);
	if (strstr(err.msg, p) == NULL)
		T_FAIL("message \"%s\" does not name '%s'", err.msg, p);
	if (strstr(err.msg, strerror(e)) == NULL)
		T_FAIL("message \"%s\" lacks \"%s\"", err.msg, strerror(e));
}

TEST(write_fails_on_first_write_enospc)
{
	struct faults f = { .write = { 1, ENOSPC } };

	expect_write_fails("enospc1.json", &f, "cannot write '", ENOSPC);
}

/* Part of the new contents already sits in the lock file here. */
TEST(write_fails_on_later_write_enospc)
{
	struct faults f = { .write_max = 4, .write = { 3, ENOSPC } };

	expect_write_fails("enospc3.json", &f, "cannot write '", ENOSPC);
	ASSERT_EQ(w.writes, 3);
}

TEST(write_fails_on_file_fsync_eio)
{
	struct faults f = { .fsync = { 1, EIO } };

	expect_write_fails("fsync.json", &f, "cannot fsync '", EIO);
	ASSERT_EQ(w.renames, 0);
}

TEST(write_fails_on_close_eio)
{
	struct faults f = { .close = { 1, EIO } };

	expect_write_fails("close.json", &f, "cannot close '", EIO);
	ASSERT_EQ(w.renames, 0);
}

TEST(write_fails_on_rename_exdev)
{
	struct faults f = { .rename = { 1, EXDEV } };

	expect_write_fails("exdev.json", &f, "cannot rename '", EXDEV);
}

TEST(write_fails_on_rename_enospc)
{
	struct faults f = { .rename = { 1, ENOSPC } };

	expect_write_fails("renamenospc.json", &f, "cannot rename '", ENOSPC);
}

TEST(write_fails_on_missing_directory)
{
	struct ray_err err = { 0 };
	TPATH(p, "no-such-dir/state.json");
	int rc;

	rc = ray_atomicfile_write(p, new, sizeof(new), &err);
	ASSERT_EQ(rc, -ENOENT);
	ASSERT(strncmp(err.msg, "cannot create '", 15) == 0);
	ASSERT(strstr(err.msg, p) != NULL);
	ASSERT(strstr(err.msg, strerror(ENOENT)) != NULL);
}

/* File systems that cannot fsync a directory say EINVAL or EBADF. */
TEST(write_ignores_directory_fsync_einval_ebadf)
{
	static const int errs[] = { EINVAL, EBADF };
	struct ray_err err = { 0 };
	TPATH(p, "dirsync.json");
	char lock[PATH_MAX + 8];
	size_t i;
	int rc;

	lock_of(lock, sizeof(lock), p);
	for (i = 0; i < ARRAY_SIZE(errs); i++) {
		struct faults f = { .fsync = { 2, errs[i] } };

		ASSERT(put(p, old, sizeof(old)));
		arm(&f);
		rc = ray_atomicfile_write(p, new, sizeof(new), &err);
		disarm();
		ASSERT_EQ(rc, 0);
		ASSERT_EQ(w.fsyncs, 2);
		ASSERT(holds(p, new, sizeof(new)));
		ASSERT(!exists(lock));
	}
}

/*
 * A real directory fsync failure comes after the rename, so it cannot
 * leave the old file: the new contents are in place and the lock is gone.
 * It is still reported, because a power cut could bring the old file
 * back, and the message says the file was replaced.
 */
TEST(write_reports_directory_fsync_eio_after_replacing)
{
	struct faults f = { .fsync = { 2, EIO } };
	struct ray_err err = { 0 };
	TPATH(p, "dirsyncio.json");
	char lock[PATH_MAX + 8], want[2 * PATH_MAX + 128];
	int rc;

	lock_of(lock, sizeof(lock), p);
	ASSERT(put(p, old, sizeof(old)));
	arm(&f);
	rc = ray_atomicfile_write(p, new, sizeof(new), &err);
	disarm();
	ASSERT_EQ(rc, -EIO);
	ASSERT_EQ(err.code, -EIO);
	ASSERT(holds(p, new, sizeof(new)));
	ASSERT(!exists(lock));
	snprintf(want, sizeof(want), "cannot fsync directory '%s' after "
	    "replacing '%s': %s", tdir, p, strerror(EIO));
	ASSERT_STREQ(err.msg, want);
}

TEST(write_refuses_existing_lock)
{
	static const char theirs[] = "half of another writer's state";
	struct ray_err err = { 0 };
	TPATH(p, "locked.json");
	char lock[PATH_MAX + 8], want[2 * PATH_MAX + 128];
	int rc;

	lock_of(lock, sizeof(lock), p);
	ASSERT(put(p, old, sizeof(old)));
	ASSERT(put(lock, theirs, sizeof(theirs)));
	arm(NULL);
	rc = ray_atomicfile_write(p, new, sizeof(new), &err);
	disarm();
	ASSERT_EQ(rc, RAY_ELOCKED);
	ASSERT_EQ(err.code, RAY_ELOCKED);
	snprintf(want, sizeof(want), "'%s' exists: another raymond process "
	    "is writing '%s', or one was killed while writing it", lock, p);
	ASSERT_STREQ(err.msg, want);
	ASSERT(strstr(err.hint, lock) != NULL);
	/* Nothing was written, synced, closed or renamed on their behalf. */
	ASSERT_STREQ(w.log, "");
	ASSERT(holds(lock, theirs, sizeof(theirs)));
	ASSERT(holds(p, old, sizeof(old)));
}

TEST(clear_stale_removes_lock_once)
{
	struct ray_err err = { 0 };
	TPATH(p, "stale.json");
	char lock[PATH_MAX + 8];

	lock_of(lock, sizeof(lock), p);
	ASSERT(put(p, old, sizeof(old)));
	ASSERT(put(lock, "x", 1));
	ASSERT_EQ(ray_atomicfile_clear_stale(p), 1);
	ASSERT(!exists(lock));
	ASSERT(holds(p, old, sizeof(old)));
	ASSERT_EQ(ray_atomicfile_clear_stale(p), 0);
	/* With the stale lock gone, writing works again. */
	ASSERT_EQ(ray_atomicfile_write(p, new, sizeof(new), &err), 0);
	ASSERT(holds(p, new, sizeof(new)));
}

TEST(read_missing_file)
{
	struct ray_err err = { 0 };
	TPATH(p, "missing.json");
	char want[PATH_MAX + 64];
	char *out = (char *)1;
	size_t len = 99;

	ASSERT_EQ(ray_atomicfile_read(p, &out, &len, &err), -ENOENT);
	ASSERT_EQ(err.code, -ENOENT);
	ASSERT(out == NULL);
	snprintf(want, sizeof(want),
	    "cannot read '%s': No such file or directory", p);
	ASSERT_STREQ(err.msg, want);
}

TEST(read_round_trips_binary)
{
	struct ray_err err = { 0 };
	TPATH(p, "binary.dat");
	char data[3 * 256], *out = NULL;
	size_t i, len = 0;
	int same;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (char)(i % 256);
	ASSERT_EQ(ray_atomicfile_write(p, data, sizeof(data), &err), 0);
	ASSERT_EQ(ray_atomicfile_read(p, &out, &len, &err), 0);
	same = len == sizeof(data) && memcmp(out, data, len) == 0 &&
	    out[len] == '\0';
	free(out);
	ASSERT(same);
}

TEST(read_empty_file)
{
	struct ray_err err = { 0 };
	TPATH(p, "empty.dat");
	char *out = NULL;
	size_t len = 99;
	int empty;

	ASSERT(put(p, "", 0));
	ASSERT_EQ(ray_atomicfile_read(p, &out, &len, &err), 0);
	empty = out != NULL && len == 0 && out[0] == '\0';
	free(out);
	ASSERT(empty);
}

/* A file over the cap is refused, with the cap named; one at it is read. */
TEST(read_max_refuses_a_larger_file)
{
	struct ray_err err = { 0 };
	TPATH(p, "ten.dat");
	char *out = NULL;
	size_t len = 0;
	int whole;

	ASSERT(put(p, "0123456789", 10));
	ASSERT_EQ(ray_atomicfile_read_max(p, 9, &out, &len, &err), RAY_ETOOBIG);
	ASSERT(out == NULL);
	ASSERT(strstr(err.msg, "it is larger than 9 bytes") != NULL);
	ASSERT_EQ(ray_atomicfile_read_max(p, 10, &out, &len, &err), 0);
	whole = len == 10 && memcmp(out, "0123456789", 10) == 0;
	free(out);
	ASSERT(whole);
}

/* Large state files must load; a sparse file costs no disk space. */
TEST(read_256_mib)
{
	const size_t size = ((size_t)256 << 20) + 1;
	struct ray_err err = { 0 };
	TPATH(p, "large.dat");
	char *out = NULL;
	size_t len = 0;
	int fd, ok;

	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ASSERT(fd >= 0);
	ok = pwrite(fd, "A", 1, 0) == 1 &&
	    pwrite(fd, "Z", 1, (off_t)size - 1) == 1;
	close(fd);
	ASSERT(ok);
	ASSERT_EQ(ray_atomicfile_read(p, &out, &len, &err), 0);
	ok = len == size && out[0] == 'A' && out[1] == '\0' &&
	    out[size / 2] == '\0' && out[size - 1] == 'Z' && out[size] == '\0';
	free(out);
	unlink(p);
	ASSERT(ok);
}

TESTS(
	T_CASE(write_creates_file_with_exact_contents),
	T_CASE(write_overwrite_replaces_contents),
	T_CASE(write_empty_contents),
	T_CASE(write_syncs_file_then_renames_then_syncs_directory),
	T_CASE(write_unsynced_renames_without_fsync),
	T_CASE(write_bare_name_syncs_current_directory),
	T_CASE(write_survives_short_writes),
	T_CASE(write_retries_eintr),
	T_CASE(write_fails_on_first_write_enospc),
	T_CASE(write_fails_on_later_write_enospc),
	T_CASE(write_fails_on_file_fsync_eio),
	T_CASE(write_fails_on_close_eio),
	T_CASE(write_fails_on_rename_exdev),
	T_CASE(write_fails_on_rename_enospc),
	T_CASE(write_fails_on_missing_directory),
	T_CASE(write_ignores_directory_fsync_einval_ebadf),
	T_CASE(write_reports_directory_fsync_eio_after_replacing),
	T_CASE(write_refuses_existing_lock),
	T_CASE(clear_stale_removes_lock_once),
	T_CASE(read_missing_file),
	T_CASE(read_round_trips_binary),
	T_CASE(read_empty_file),
	T_CASE(read_max_refuses_a_larger_file),
	T_CASE(read_256_mib))
