/*
 * fuzz_archive.c - workflow archives (src/archive.h).
 *
 * The input is a zip file.  It is written to /tmp/raymond-fuzz-<pid>.zip
 * (a name with no run of 64 hex digits, so no hash is checked) and opened
 * with ray_archive_open().  If it opens, the archive must keep what the
 * header promises: at least one file, names sorted, unique, without '/',
 * a SHA-256 of 64 lowercase hex digits.  Then every file is read with
 * ray_archive_read() and all are extracted with ray_archive_extract() into
 * a fresh temporary folder, which must then hold exactly those files, with
 * the bytes read and modes 0755 (.sh) or 0644, or, if extraction fails,
 * nothing at all; the folder is removed afterwards.  A failure to open or
 * read must come with a message naming the archive.
 */
#include "archive.h"
#include "ray.h"
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char path[64];

static void
remove_input(void)
{
	unlink(path);
}

static void
write_input(const uint8_t *data, size_t size)
{
	size_t off = 0;
	ssize_t n;
	int fd;

	if (path[0] == '\0') {
		snprintf(path, sizeof(path), "/tmp/raymond-fuzz-%ld.zip",
		    (long)getpid());
		atexit(remove_input);
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		bad("cannot create %s: %s", path, strerror(errno));
	while (off < size) {
		n = write(fd, data + off, size - off);
		if (n <= 0)
			bad("cannot write %s: %s", path, strerror(errno));
		off += (size_t)n;
	}
	close(fd);
}

static void
check_message(int rc, const struct ray_err *err, const char *what)
{
	if (rc >= 0)
		return;
	if (err->code != rc || strstr(err->msg, path) == NULL)
		bad("%s failed with the message '%s'", what, err->msg);
}

static size_t
count_files(const char *dir)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d = opendir(dir);

	if (d == NULL)
		bad("cannot open %s: %s", dir, strerror(errno));
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

/* Compare the extracted folder with what ray_archive_read() gave. */
static void
check_extracted(struct ray_archive *a, const char *dir, char **data,
    size_t *len)
{
	char file[4096];
	struct stat st;
	size_t i;
	char *got;
	FILE *fp;

	for (i = 0; i < ray_archive_count(a); i++) {
		const char *name = ray_archive_name(a, i);

		if (data[i] == NULL)
			continue;
		snprintf(file, sizeof(file), "%s/%s", dir, name);
		if (lstat(file, &st) < 0 || !S_ISREG(st.st_mode))
			bad("extract did not make %s (%s)", file,
			    strerror(errno));
		if ((st.st_mode & 07777) != (strlen(name) >= 3 &&
		    strcmp(name + strlen(name) - 3, ".sh") == 0 ? 0755 : 0644))
			bad("extract gave %s the wrong mode", file);
		if ((size_t)st.st_size != len[i])
			bad("extract wrote %s with a size other than read gave",
			    file);
		got = malloc(len[i] + 1);
		fp = fopen(file, "rb");
		if (got == NULL || fp == NULL ||
		    fread(got, 1, len[i], fp) != len[i] ||
		    memcmp(got, data[i], len[i]) != 0)
			bad("extract wrote %s with other bytes than read gave",
			    file);
		fclose(fp);
		free(got);
	}
	if (count_files(dir) != ray_archive_count(a))
		bad("extract left other files in %s than the archive lists",
		    dir);
}

/* Remove the extraction folder and what is in it (one level). */
static void
remove_dir(const char *dir)
{
	char file[4096];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(file, sizeof(file), "%s/%s", dir, de->d_name);
		unlink(file);
	}
	closedir(d);
	rmdir(dir);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ray_archive *a = NULL;
	struct ray_err err;
	char dir[] = "/tmp/raymond-fuzz-x.XXXXXX";
	const char *name, *prev = NULL, *sha;
	char **bytes, *none;
	size_t *lens, i, n;
	int rc, all_read = 1;

	write_input(data, size);
	memset(&err, 0, sizeof(err));
	rc = ray_archive_open(path, &a, &err);
	check_message(rc, &err, "ray_archive_open");
	if (rc < 0) {
		if (a != NULL)
			bad("ray_archive_open failed but gave an archive");
		return 0;
	}

	n = ray_archive_count(a);
	if (n == 0)
		bad("%s opened with no files", path);
	sha = ray_archive_sha256(a);
	if (strlen(sha) != 64 || strspn(sha, "0123456789abcdef") != 64)
		bad("the archive's SHA-256 is '%s'", sha);
	for (i = 0; i < n; i++) {
		name = ray_archive_name(a, i);
		if (name == NULL || name[0] == '\0' ||
		    strchr(name, '/') != NULL)
			bad("file name '%s' is empty or has a '/'",
			    name ? name : "(null)");
		if (prev != NULL && strcmp(prev, name) >= 0)
			bad("names '%s' and '%s' are not sorted and unique",
			    prev, name);
		prev = name;
	}
	if (ray_archive_name(a, n) != NULL)
		bad("ray_archive_name() past the end is not NULL");

	bytes = calloc(n, sizeof(*bytes));
	lens = calloc(n, sizeof(*lens));
	for (i = 0; i < n; i++) {
		rc = ray_archive_read(a, ray_archive_name(a, i), &bytes[i],
		    &lens[i], &err);
		check_message(rc, &err, "ray_archive_read");
		if (rc < 0)
			all_read = 0;
		else if (bytes[i][lens[i]] != '\0')
			bad("read '%s' gave data without a NUL after it",
			    ray_archive_name(a, i));
	}
	rc = ray_archive_read(a, "no such file", &none, NULL, &err);
	if (rc != -ENOENT || none != NULL)
		bad("reading a missing name did not give -ENOENT");

	if (mkdtemp(dir) == NULL)
		bad("cannot make %s: %s", dir, strerror(errno));
	rc = ray_archive_extract(a, dir, &err);
	if (rc == 0 && !all_read)
		bad("extract worked where a read failed");
	if (rc == 0)
		check_extracted(a, dir, bytes, lens);
	else if (err.code != rc || err.msg[0] == '\0' || count_files(dir) != 0)
		bad("extract failed ('%s') but left files in %s", err.msg, dir);
	remove_dir(dir);

	for (i = 0; i < n; i++)
		free(bytes[i]);
	free(bytes);
	free(lens);
	ray_archive_close(a);
	return 0;
}
