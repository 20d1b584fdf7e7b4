/*
 * test_interrupt.c - long work in C stops at a signal (ray.h): hashing a
 * file, reading a big file and unpacking an archive each look at the
 * signal count between slices and end with RAY_EINTR, "interrupted while
 * ...", leaving nothing half made.
 *
 * The binary is linked with -Wl,--wrap=read,--wrap=pread,--wrap=write, so
 * the calls made from the objects we link reach the __wrap_* functions
 * below, which count a "signal" in the test's own count after the N-th
 * call of the kind armed: a signal arriving in the middle of the work,
 * at a point the test chooses rather than at a time it hopes for.
 */
#include "archive.h"
#include "atomicfile.h"
#include "ray.h"
#include "sha256.h"
#include "testlib.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

ssize_t __real_read(int fd, void *buf, size_t n);
ssize_t __real_pread(int fd, void *buf, size_t n, off_t off);
ssize_t __real_write(int fd, const void *buf, size_t n);
ssize_t __wrap_read(int fd, void *buf, size_t n);
ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off);
ssize_t __wrap_write(int fd, const void *buf, size_t n);

static volatile sig_atomic_t signals;
static const char *armed;	/* "read", "pread" or "write" */
static int calls_left;		/* calls before the signal */
static int calls_after;		/* calls made after it */

static void
tick(const char *call)
{
	if (armed == NULL || strcmp(armed, call) != 0)
		return;
	if (calls_left == 0)
		calls_after++;
	else if (--calls_left == 0)
		signals++;
}

ssize_t
__wrap_read(int fd, void *buf, size_t n)
{
	tick("read");
	return __real_read(fd, buf, n);
}

ssize_t
__wrap_pread(int fd, void *buf, size_t n, off_t off)
{
	tick("pread");
	return __real_pread(fd, buf, n, off);
}

ssize_t
__wrap_write(int fd, const void *buf, size_t n)
{
	tick("write");
	return __real_write(fd, buf, n);
}

static void
arm(const char *call, int after)
{
	ray_signals = &signals;
	armed = call;
	calls_left = after;
	calls_after = 0;
}

static char tdir[64];

static const char *
tpath(char *out, size_t size, const char *name)
{
	if (tdir[0] == '\0') {
		snprintf(tdir, sizeof(tdir), "/tmp/ray-test-intr-XXXXXX");
		if (mkdtemp(tdir) == NULL)
			abort();
	}
	snprintf(out, size, "%s/%s", tdir, name);
	return out;
}

/* A file of `mib` MiB of zeros at `path`. */
static int
zeros(const char *path, size_t mib)
{
	static char block[1 << 20];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), ok = fd >= 0;
	size_t i;

	for (i = 0; ok && i < mib; i++)
		ok = ray_write_all(fd, block, sizeof(block)) == 0;
	return fd >= 0 && close(fd) == 0 && ok;
}

TEST(hashing_a_big_file_stops_at_a_signal)
{
	struct ray_err err = { 0 };
	char p[128], hex[65];

	ASSERT(zeros(tpath(p, sizeof(p), "big"), 64));
	arm("pread", 3);
	ASSERT_EQ(ray_sha256_file(p, hex, &err), RAY_EINTR);
	armed = NULL;
	ASSERT_EQ(calls_after, 0);
	ASSERT(strstr(err.msg, "interrupted while hashing '") != NULL);
	ASSERT_STREQ(hex, "");
	/* Work begun after the signal runs normally. */
	ASSERT_EQ(ray_sha256_file(p, hex, &err), 0);
	unlink(p);
}

TEST(reading_a_big_file_stops_at_a_signal)
{
	struct ray_err err = { 0 };
	char p[128], *data = (char *)&err;
	size_t len = 1;

	ASSERT(zeros(tpath(p, sizeof(p), "big"), 64));
	arm("read", 1);
	ASSERT_EQ(ray_atomicfile_read(p, &data, &len, &err), RAY_EINTR);
	armed = NULL;
	ASSERT_EQ(calls_after, 0);
	ASSERT(data == NULL);
	ASSERT(strstr(err.msg, "interrupted while reading '") != NULL);
	unlink(p);
}

TEST(unpacking_a_big_archive_stops_at_a_signal_and_takes_back_its_files)
{
	struct ray_archive_limits lim = RAY_ARCHIVE_LIMITS;
	struct ray_err err = { 0 };
	struct ray_archive *a = NULL;
	char z[128], p[128], d[128];
	zip_t *za;
	int ze, i;
	DIR *dir;

	ASSERT(zeros(tpath(p, sizeof(p), "zeros"), 40));
	za = zip_open(tpath(z, sizeof(z), "big.zip"), ZIP_CREATE | ZIP_TRUNCATE,
	    &ze);
	ASSERT(za != NULL);
	for (i = 0; i < 4; i++) {
		char name[32];

		snprintf(name, sizeof(name), "f%d.bin", i);
		ASSERT(zip_file_add(za, name, zip_source_file(za, p, 0, -1),
		    0) >= 0);
	}
	ASSERT_EQ(zip_close(za), 0);
	unlink(p);
	lim.max_total = (uint64_t)1 << 30;
	ASSERT_EQ(ray_archive_open_limited(z, &lim, &a, &err), 0);
	ASSERT_EQ(mkdir(tpath(d, sizeof(d), "out"), 0700), 0);

	/* The signal comes as the second file is written. */
	arm("write", 45);
	ASSERT_EQ(ray_archive_extract(a, d, &err), RAY_EINTR);
	armed = NULL;
	ASSERT_EQ(calls_after, 0);
	ASSERT(strstr(err.msg, "interrupted while unpacking 'f1.bin' from "
	    "archive '") != NULL);
	dir = opendir(d);
	ASSERT(dir != NULL);
	for (i = 0; readdir(dir) != NULL; i++)
		;
	closedir(dir);
	ASSERT_EQ(i, 2);	/* "." and "..": nothing left behind */
	ray_archive_close(a);
	unlink(z);
	rmdir(d);
	rmdir(tdir);
}

TESTS(T_CASE(hashing_a_big_file_stops_at_a_signal),
    T_CASE(reading_a_big_file_stops_at_a_signal),
    T_CASE(unpacking_a_big_archive_stops_at_a_signal_and_takes_back_its_files))
