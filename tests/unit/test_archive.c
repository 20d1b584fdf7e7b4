/*
 * test_archive.c - unit tests of archive.c: the two accepted layouts and
 * every layout and entry-name error, the hash in the file name, reading
 * and extracting files, and damaged or foreign files.
 *
 * The zip files are made with libzip in this run's temporary directory.
 * Names libzip would not write (a NUL byte, two equal names) are made by
 * patching the bytes of a written archive.
 */
#include "archive.h"
#include "le.h"
#include "ray.h"
#include "sha256.h"
#include "testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <dirent.h>
#include <unistd.h>
#include <zip.h>

/* One entry of a test archive; NULL data makes a directory entry. */
struct file {
	const char *name;
	const char *data;
};

static char tdir[64];

static void
rm_tdir(void)
{
	char cmd[128];

	if (tdir[0] == '\0')
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tdir);
}

/* The path of `name` in this run's temporary directory, made on first use. */
static void
tpath(char *out, size_t size, const char *name)
{
	char tmpl[] = "/tmp/ray-test-archive-XXXXXX";

	if (tdir[0] == '\0') {
		if (mkdtemp(tmpl) == NULL) {
			printf("FAIL setup: cannot make temporary directory: %s\n",
			    strerror(errno));
			exit(1);
		}
		snprintf(tdir, sizeof(tdir), "%s", tmpl);
		atexit(rm_tdir);
	}
	snprintf(out, size, "%s/%s", tdir, name);
}

/* Test paths are short: tdir plus a short name. */
#define TP 160

#define TPATH(var, name)                                                   \
	char var[TP];                                                      \
	tpath(var, sizeof(var), name)

/* Write `n` entries to a new zip file at `path`, deflated or stored. */
static int
make_zip_with(const char *path, const struct file *files, size_t n,
    int store)
{
	zip_source_t *src;
	zip_int64_t idx;
	zip_t *za;
	size_t i;
	int ze;

	unlink(path);
	za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &ze);
	if (za == NULL)
		return 0;
	for (i = 0; i < n; i++) {
		if (files[i].data == NULL) {
			idx = zip_dir_add(za, files[i].name, 0);
		} else {
			src = zip_source_buffer(za, files[i].data,
			    strlen(files[i].data), 0);
			if (src == NULL)
				goto fail;
			idx = zip_file_add(za, files[i].name, src, 0);
			if (idx < 0)
				zip_source_free(src);
		}
		if (idx < 0)
			goto fail;
		if (store && zip_set_file_compression(za, (zip_uint64_t)idx,
		    ZIP_CM_STORE, 0) < 0)
			goto fail;
	}
	return zip_close(za) == 0;

fail:
	printf("make_zip: %s: %s\n", path, zip_strerror(za));
	zip_discard(za);
	return 0;
}

static int
make_zip(const char *path, const struct file *files, size_t n)
{
	return make_zip_with(path, files, n, 0);
}

#define MAKE_ZIP(path, ...)                                                \
	do {                                                               \
		static const struct file f_[] = { __VA_ARGS__ };           \
		ASSERT(make_zip(path, f_, ARRAY_SIZE(f_)));                \
	} while (0)

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

/* Read a whole file; the caller frees.  NULL if it cannot. */
static char *
slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (fp == NULL)
		return NULL;
	if (fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) >= 0 &&
	    fseek(fp, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf != NULL && fread(buf, 1, (size_t)n, fp) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		if (buf != NULL) {
			buf[n] = '\0';
			*len = (size_t)n;
		}
	}
	fclose(fp);
	return buf;
}

/*
 * Replace, in the file's bytes, every occurrence of `from` by `to` (the
 * same length).  Returns how many were replaced.
 */
static int
patch(const char *path, const char *from, const char *to)
{
	size_t len, n = strlen(from), i;
	char *buf = slurp(path, &len);
	int count = 0;

	if (buf == NULL)
		return 0;
	for (i = 0; i + n <= len; i++) {
		if (memcmp(buf + i, from, n) == 0) {
			memcpy(buf + i, to, n);
			count++;
		}
	}
	if (!put(path, buf, len))
		count = 0;
	free(buf);
	return count;
}

/* Whether `err.msg` contains `want`; prints the message if not. */
static int
says(const struct ray_err *err, const char *want)
{
	if (strstr(err->msg, want) != NULL)
		return 1;
	printf("    message: %s\n    wanted:  %s\n", err->msg, want);
	return 0;
}

/* Open `path` expecting failure with a message containing `want`. */
static int
open_fails(const char *path, int code, const char *want)
{
	struct ray_err err = { 0 };
	struct ray_archive *a = (struct ray_archive *)&err;
	int rc = ray_archive_open(path, &a, &err);

	if (rc != code) {
		printf("    open returned %d, expected %d (%s)\n", rc, code,
		    err.msg);
		ray_archive_close(rc == 0 ? a : NULL);
		return 0;
	}
	if (a != NULL) {
		printf("    open failed but left an archive\n");
		return 0;
	}
	return says(&err, want);
}

/* The expected message: `fmt` with the test path put in for its %s. */
static const char *
msg(const char *fmt, const char *path)
{
	static char buf[RAY_ERR_MSG];

	snprintf(buf, sizeof(buf), fmt, path);
	return buf;
}

TEST(flat_layout_lists_sorts_and_reads)
{
	struct ray_err err = { 0 };
	struct ray_archive *a = NULL;
	TPATH(p, "flat.zip");
	char *data, hex[65];
	size_t len;

	MAKE_ZIP(p, { "START.md", "# Start\n" }, { "run.sh", "echo hi\n" },
	    { "Notes.txt", "" });
	ASSERT_EQ(ray_archive_open(p, &a, &err), 0);
	ASSERT_EQ(ray_archive_count(a), 3);
	ASSERT_STREQ(ray_archive_name(a, 0), "Notes.txt");
	ASSERT_STREQ(ray_archive_name(a, 1), "START.md");
	ASSERT_STREQ(ray_archive_name(a, 2), "run.sh");
	ASSERT(ray_archive_name(a, 3) == NULL);

	ASSERT_EQ(ray_archive_read(a, "START.md", &data, &len, &err), 0);
	ASSERT_EQ(len, 8);
	ASSERT_STREQ(data, "# Start\n");
	free(data);
	ASSERT_EQ(ray_archive_read(a, "Notes.txt", &data, &len, &err), 0);
	ASSERT_EQ(len, 0);
	ASSERT_STREQ(data, "");
	free(data);

	ASSERT_EQ(ray_sha256_file(p, hex, &err), 0);
	ASSERT_STREQ(ray_archive_sha256(a), hex);
	ray_archive_close(a);
}

TEST(one_folder_layout_strips_the_folder)
{
	struct ray_err err = { 0 };
	struct ray_archive *a = NULL;
	TPATH(p, "folder.zip");
	TPATH(q, "folder-no-dir-entry.zip");
	char *data;
	size_t len;

	MAKE_ZIP(p, { "flow/", NULL }, { "flow/START.md", "start" },
	    { "flow/b.md", "bee" });
	ASSERT_EQ(ray_archive_open(p, &a, &err), 0);
	ASSERT_EQ(ray_archive_count(a), 2);
	ASSERT_STREQ(ray_archive_name(a, 0), "START.md");
	ASSERT_STREQ(ray_archive_name(a, 1), "b.md");
	ASSERT_EQ(ray_archive_read(a, "b.md", &data, &len, &err), 0);
	ASSERT_STREQ(data, "bee");
	free(data);
	/* Only the bare name is known. */
	ASSERT_EQ(ray_archive_read(a, "flow/b.md", &data, &len, &err), -ENOENT);
	ray_archive_close(a);

	MAKE_ZIP(q, { "flow/START.md", "start" });
	ASSERT_EQ(ray_archive_open(q, &a, &err), 0);
	ASSERT_EQ(ray_archive_count(a), 1);
	ASSERT_STREQ(ray_archive_name(a, 0), "START.md");
	ray_archive_close(a);
}

TEST(archive_without_files_is_an_error)
{
	/* libzip will not write an empty archive: this is its whole form. */
	static const char eocd[22] = "PK\5\6";
	TPATH(p, "empty.zip");
	TPATH(q, "dirs-only.zip");

	ASSERT(put(p, eocd, sizeof(eocd)));
	ASSERT(open_fails(p, RAY_EINVAL, msg("archive '%s' has no files", p)));

	MAKE_ZIP(q, { "flow/", NULL });
	ASSERT(open_fails(q, RAY_EINVAL, msg("archive '%s' has no files", q)));
}

TEST(several_top_level_folders_are_an_error)
{
	TPATH(p, "two-folders.zip");
	TPATH(q, "folder-and-dir.zip");

	MAKE_ZIP(p, { "a/START.md", "x" }, { "b/START.md", "y" });
	ASSERT(open_fails(p, RAY_EINVAL, msg("archive '%s' has several "
	    "top-level folders: 'a/' and 'b/'", p)));

	/* A directory entry counts as a folder. */
	MAKE_ZIP(q, { "flow/START.md", "x" }, { "empty/", NULL });
	ASSERT(open_fails(q, RAY_EINVAL, msg("archive '%s' has several "
	    "top-level folders: 'flow/' and 'empty/'", q)));
}

TEST(files_and_folders_mixed_at_the_top_are_an_error)
{
	TPATH(p, "mixed.zip");

	MAKE_ZIP(p, { "START.md", "x" }, { "sub/", NULL });
	ASSERT(open_fails(p, RAY_EINVAL, msg("archive '%s' mixes files and "
	    "folders at the top level: 'START.md' and 'sub/'", p)));
}

TEST(deeper_nesting_is_an_error)
{
	TPATH(p, "deep.zip");
	TPATH(q, "deep-dir.zip");
	TPATH(r, "flat-with-sub.zip");

	MAKE_ZIP(p, { "flow/START.md", "x" }, { "flow/sub/x.md", "y" });
	ASSERT(open_fails(p, RAY_EINVAL, msg("archive '%s' nests "
	    "'flow/sub/x.md' too deeply: files must be at the top level or in "
	    "one folder", p)));

	MAKE_ZIP(q, { "flow/START.md", "x" }, { "flow/sub/", NULL });
	ASSERT(open_fails(q, RAY_EINVAL, msg("archive '%s' nests 'flow/sub/' "
	    "too deeply", q)));

	/* In a flat archive, a folder at all is one level too deep. */
	MAKE_ZIP(r, { "START.md", "x" }, { "sub/x", "y" });
	ASSERT(open_fails(r, RAY_EINVAL, msg("archive '%s' nests 'sub/x' too "
	    "deeply: 'START.md' is at the top level, so every file must be",
	    r)));
}

TEST(unsafe_entry_names_are_errors)
{
	static const struct {
		const char *name, *what;
	} cases[] = {
		{ "../evil", "a '..' segment: '../evil'" },
		{ "flow/../x", "a '..' segment: 'flow/../x'" },
		{ "..", "a '..' segment: '..'" },
		{ "/etc/passwd", "an absolute name: '/etc/passwd'" },
		{ "C:/x.md", "an absolute name (a drive letter): 'C:/x.md'" },
		{ "c:x.md", "an absolute name (a drive letter): 'c:x.md'" },
		{ "flow\\x.md", "a backslash in its name: 'flow\\x.md'" },
		{ "a\001b", "a control character in its name: 'a\\x01b'" },
		{ "tab\there", "a control character in its name: 'tab\\x09here'" },
		{ "del\177", "a control character in its name: 'del\\x7f'" },
		{ "./x.md", "a '.' segment: './x.md'" },
		{ "a//b", "an empty segment in its name: 'a//b'" },
	};
	char want[RAY_ERR_MSG];
	TPATH(p, "unsafe.zip");
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct file f[2] = { { "START.md", "x" }, { cases[i].name, "y" } };

		ASSERT(make_zip(p, f, 2));
		snprintf(want, sizeof(want), "archive '%s' has an entry with %s",
		    p, cases[i].what);
		if (!open_fails(p, RAY_EINVAL, want))
			T_FAIL("case %zu (%s)", i, cases[i].what);
	}
}

/* libzip reads a NUL in a name as a space; the raw bytes still show it. */
TEST(nul_byte_in_a_name_is_an_error)
{
	TPATH(p, "nul.zip");
	static const struct file f[] = { { "START.md", "x" },
		{ "evilNUL@MARK.md", "y" } };

	ASSERT(make_zip_with(p, f, 2, 1));
	ASSERT_EQ(patch(p, "NUL@MARK", "NUL\0MARK"), 2);
	ASSERT(open_fails(p, RAY_EINVAL, msg("archive '%s' has an entry with "
	    "a NUL byte in its name: 'evilNUL\\x00MARK.md'", p)));
}

TEST(two_files_with_one_name_are_an_error)
{
	TPATH(p, "dup.zip");
	static const struct file f[] = { { "dupA.md", "x" }, { "dupB.md", "y" } };

	ASSERT(make_zip_with(p, f, 2, 1));
	ASSERT_EQ(patch(p, "dupB.md", "dupA.md"), 2);
	ASSERT(open_fails(p, RAY_EINVAL, msg("archive '%s' has two entries "
	    "with the same name", p)));
}

/* A file in `tdir` named `prefix`<hash>`suffix`, holding a copy of `from`. */
static void
named_copy(char *out, size_t size, const char *from, const char *prefix,
    const char *hash, const char *suffix)
{
	char name[256], *data;
	size_t len;

	snprintf(name, sizeof(name), "%s%s%s", prefix, hash, suffix);
	tpath(out, size, name);
	data = slurp(from, &len);
	if (data == NULL || !put(out, data, len))
		out[0] = '\0';
	free(data);
}

TEST(hash_in_the_name_must_match)
{
	struct ray_err err = { 0 };
	struct ray_archive *a = NULL;
	TPATH(p, "src.zip");
	char hex[65], upper[65], q[TP], want[RAY_ERR_MSG];
	static const char wrong[] =
	    "0000000000000000000000000000000000000000000000000000000000000000";
	size_t i;

	MAKE_ZIP(p, { "START.md", "hello" });
	ASSERT_EQ(ray_sha256_file(p, hex, &err), 0);

	named_copy(q, sizeof(q), p, "flow-", hex, ".zip");
	ASSERT_EQ(ray_archive_open(q, &a, &err), 0);
	ASSERT_STREQ(ray_archive_sha256(a), hex);
	ray_archive_close(a);

	/* Case does not matter. */
	for (i = 0; i < 65; i++)
		upper[i] = hex[i] >= 'a' && hex[i] <= 'f' ?
		    (char)(hex[i] - 'a' + 'A') : hex[i];
	named_copy(q, sizeof(q), p, "FLOW_", upper, ".ZIP");
	ASSERT_EQ(ray_archive_open(q, &a, &err), 0);
	ray_archive_close(a);

	named_copy(q, sizeof(q), p, "flow-", wrong, ".zip");
	snprintf(want, sizeof(want), "archive '%s' has hash %s in its name but "
	    "its SHA-256 is %s", q, wrong, hex);
	ASSERT(open_fails(q, RAY_EINVAL, want));
}

TEST(ambiguous_hash_in_the_name_is_an_error)
{
	TPATH(p, "src.zip");
	char hex[65], q[TP], longer[80];
	struct ray_err err = { 0 };
	struct ray_archive *a = NULL;

	MAKE_ZIP(p, { "START.md", "hello" });
	ASSERT_EQ(ray_sha256_file(p, hex, &err), 0);

	/* 65 digits: which 64 would be meant? */
	snprintf(longer, sizeof(longer), "%sa", hex);
	named_copy(q, sizeof(q), p, "flow-", longer, ".zip");
	ASSERT(open_fails(q, RAY_EINVAL, msg("archive '%s' has an ambiguous "
	    "hash in the name: a run of 65 hex digits, where a SHA-256 has 64",
	    q)));

	snprintf(longer, sizeof(longer), "%s-", hex);
	named_copy(q, sizeof(q), p, longer, hex, ".zip");
	ASSERT(open_fails(q, RAY_EINVAL, msg("archive '%s' has an ambiguous "
	    "hash in the name: two runs of 64 hex digits", q)));

	/* Shorter runs are just words. */
	named_copy(q, sizeof(q), p, "deadbeef-cafe-", "", ".zip");
	ASSERT_EQ(ray_archive_open(q, &a, &err), 0);
	ray_archive_close(a);
}

TEST(read_unknown_name_is_enoent)
{
	struct ray_err err = { 0 };
	struct ray_archive *a = NULL;
	TPATH(p, "read.zip");
	char *data = (char *)&err;
	size_t len = 7;

	MAKE_ZIP(p, { "START.md", "x" });
	ASSERT_EQ(ray_archive_open(p, &a, &err), 0);
	ASSERT_EQ(ray_archive_read(a, "missing.md", &data, &len, &err), -ENOENT);
	ASSERT(data == NULL);
	ASSERT_EQ(len, 0);
	ASSERT_STREQ(err.msg, msg("archive '%s' has no file named 'missing.md'",
	    p));
	ray_archive_close(a);
}

TEST(read_keeps_every_byte)
{
	struct ray_err err = { 0 };
	struct ray_archive *a = NULL;
	TPATH(p, "binary.zip");
	char bin[300], *data;
	zip_source_t *src;
	zip_t *za;
	size_t i, len;
	int ze;

	for (i = 0; i < sizeof(bin); i++)
		bin[i] = (char)(i * 7);
	za = zip_open(p, ZIP_CREATE | ZIP_TRUNCATE, &ze);
	ASSERT(za != NULL);
	src = zip_source_buffer(za, bin, sizeof(bin), 0);
	ASSERT(src != NULL);
	ASSERT(zip_file_add(za, "bin.dat", src, 0) >= 0);
	ASSERT_EQ(zip_close(za), 0);

	ASSERT_EQ(ray_archive_open(p, &a, &err), 0);
	ASSERT_EQ(ray_archive_read(a, "bin.dat", &data, &len, &err), 0);
	ASSERT_EQ(len, sizeof(bin));
	ASSERT(memcmp(data, bin, len) == 0);
	ASSERT_EQ(data[len], '\0');
	free(data);
	ray_archive_close(a);
}

/*
 * A file over the per-file cap is refused when the archive is opened;
 * with the cap raised, extraction streams it, while a read, which holds
 * the file in memory, still stops at 64 MiB.
 */
TEST(files_over_64_mib_are_too_big)
{
	struct ray_archive_limits lim = RAY_ARCHIVE_LIMITS;
	struct ray_err err = { 0 };
	struct ray_archive *a = NULL;
	size_t big = RAY_ARCHIVE_MAX_FILE + 1;
	char *zeros = calloc(1, big), *data;
	TPATH(p, "big.zip");
	TPATH(d, "big-out");
	TPATH(out, "big-out/big.bin");
	zip_source_t *src;
	struct stat st;
	zip_t *za;
	size_t len;
	int ze;

	ASSERT(zeros != NULL);
	za = zip_open(p, ZIP_CREATE | ZIP_TRUNCATE, &ze);
	ASSERT(za != NULL);
	src = zip_source_buffer(za, zeros, big, 0);
	ASSERT(src != NULL);
	ASSERT(zip_file_add(za, "big.bin", src, 0) >= 0);
	ASSERT(zip_file_add(za, "small.md", zip_source_buffer(za, "s", 1, 0),
	    0) >= 0);
	ASSERT_EQ(zip_close(za), 0);
	free(zeros);

	ASSERT(open_fails(p, RAY_ETOOBIG, msg("archive '%s' has 'big.bin' of "
	    "67108865 bytes uncompressed, more than the limit of 67108864 "
	    "bytes per file", p)));

	lim.max_file = (uint64_t)1 << 30;
	ASSERT_EQ(ray_archive_open_limited(p, &lim, &a, &err), 0);
	ASSERT_EQ(ray_archive_read(a, "big.bin", &data, &len, &err),
	    RAY_ETOOBIG);
	ASSERT_STREQ(err.msg, msg("'big.bin' in archive '%s' is 67108865 "
	    "bytes, more than the limit of 64 MiB", p));
	ASSERT(data == NULL);
	ASSERT_EQ(ray_archive_read(a, "small.md", &data, &len, &err), 0);
	free(data);

	ASSERT_EQ(mkdir(d, 0755), 0);
	ASSERT_EQ(ray_archive_extract(a, d, &err), 0);
	ray_archive_close(a);
	ASSERT_EQ(stat(out, &st), 0);
	ASSERT_EQ(st.st_size, big);
}

/* Open `path` under `lim` expecting RAY_ETOOBIG with message `want`. */
static int
over_limit(const char *path, const struct ray_archive_limits *lim,
    const char *want)
{
	struct ray_err err = { 0 };
	struct ray_archive *a = NULL;
	int rc = ray_archive_open_limited(path, lim, &a, &err);

	ray_archive_close(a);
	if (rc != RAY_ETOOBIG || a != NULL) {
		printf("    open returned %d (%s)\n", rc, err.msg);
		return 0;
	}
	return says(&err, want);
}

/* The caps on files and on the total refuse an archive at open. */
TEST(limits_refuse_an_archive_before_anything_is_unpacked)
{
	struct ray_archive_limits lim = RAY_ARCHIVE_LIMITS;
	struct ray_archive *a = NULL;
	struct ray_err err = { 0 };
	TPATH(p, "three.zip");

	MAKE_ZIP(p, { "a.md", "0123456789" }, { "b.md", "0123456789" },
	    { "c.md", "0123456789" });
	lim.max_files = 2;
	ASSERT(over_limit(p, &lim, msg("archive '%s' has 3 files, more than "
	    "the limit of 2 files", p)));
	lim.max_files = 3;
	lim.max_total = 29;
	ASSERT(over_limit(p, &lim, msg("archive '%s' holds more than 29 bytes "
	    "uncompressed, the limit for all its files together", p)));
	lim.max_total = 30;
	lim.max_file = 9;
	ASSERT(over_limit(p, &lim, msg("archive '%s' has 'a.md' of 10 bytes "
	    "uncompressed, more than the limit of 9 bytes per file", p)));
	lim.max_file = 10;
	ASSERT_EQ(ray_archive_open_limited(p, &lim, &a, &err), 0);
	ray_archive_close(a);
}

/* Replace `len` bytes `from` by `to` in the file at `path`, in place. */
static int
patch_bytes(const char *path, const void *from, const void *to, size_t len)
{
	size_t n;
	char *buf = slurp(path, &n), *at;
	int ok;

	if (buf == NULL)
		return 0;
	at = memmem(buf, n, from, len);
	if (at != NULL)
		memcpy(at, to, len);
	ok = at != NULL && put(path, buf, n);
	free(buf);
	return ok;
}

/*
 * A central directory and local header that declare a size other than
 * what the data inflates to: both reading and extraction count the bytes
 * as they inflate them and stop, whatever the directory said.
 */
TEST(declared_sizes_are_not_trusted)
{
	struct ray_err err = { 0 };
	struct ray_archive *a = NULL;
	unsigned char real[4], fake[4];
	char *data, *zeros = calloc(1, 100000);
	struct file files[1] = { { "big.md", zeros } };
	TPATH(p, "liar.zip");
	TPATH(d, "liar-out");
	size_t len;

	ASSERT(zeros != NULL);
	memset(zeros, 'z', 99999);
	ASSERT(make_zip(p, files, 1));
	free(zeros);
	ray_put_le32(real, 99999);
	ray_put_le32(fake, 1000);
	/* The local header and the central directory both say 1000. */
	ASSERT(patch_bytes(p, real, fake, 4));
	ASSERT(patch_bytes(p, real, fake, 4));

	ASSERT_EQ(ray_archive_open(p, &a, &err), 0);
	ASSERT_EQ(ray_archive_read(a, "big.md", &data, &len, &err), RAY_EIO);
	ASSERT(says(&err, "does not have the size recorded for it"));
	ASSERT_EQ(mkdir(d, 0755), 0);
	ASSERT_EQ(ray_archive_extract(a, d, &err), RAY_EIO);
	ASSERT(says(&err, "does not have the size recorded for it"));
	ray_archive_close(a);
	ASSERT_EQ(rmdir(d), 0);
}

/* CRC-32 as zip records it (IEEE 802.3, reflected). */
static uint32_t crc_tab[256];

static uint32_t
crc_step(uint32_t state, const unsigned char *p, size_t n)
{
	uint32_t c;
	int i, k;

	if (crc_tab[1] == 0) {
		for (i = 0; i < 256; i++) {
			c = (uint32_t)i;
			for (k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			crc_tab[i] = c;
		}
	}
	while (n--)
		state = crc_tab[(state ^ *p++) & 0xff] ^ (state >> 8);
	return state;
}

/*
 * Make the last 4 of the `n` bytes of `data` such that the whole has the
 * CRC-32 `want`, by running the CRC backwards from the state it must end
 * in.
 */
static void
forge_crc(unsigned char *data, size_t n, uint32_t want)
{
	uint32_t from = crc_step(0xffffffffu, data, n - 4);
	uint32_t v = want ^ 0xffffffffu;
	int i, j;

	for (i = 0; i < 4; i++) {
		for (j = 0; j < 256 && crc_tab[j] >> 24 != v >> 24; j++)
			;
		v = ((v ^ crc_tab[j]) << 8) | (uint32_t)j;
	}
	v ^= from;
	for (i = 0; i < 4; i++)
		data[n - 4 + i] = (unsigned char)(v >> (8 * i));
}

/*
 * The run is pinned to the SHA-256 it hashed: a file rewritten in place
 * after it was opened is refused, even with new bytes of the same size
 * and CRC-32, which the entry's own checks would pass.
 */
TEST(rewritten_in_place_with_the_same_crc_is_refused)
{
	static const char orig[] = "echo original step here";
	struct file files[1] = { { "run.sh", orig } };
	unsigned char forged[sizeof(orig) - 1];
	struct ray_err err = { 0 };
	struct ray_archive *a = NULL;
	struct stat before, now;
	TPATH(p, "pinned.zip");
	TPATH(probe, "pinned.probe");
	char *data;
	size_t len;

	ASSERT(make_zip_with(p, files, 1, 1));
	memcpy(forged, "echo something else!XXX", sizeof(forged));
	forge_crc(forged, sizeof(forged), (uint32_t)(crc_step(0xffffffffu,
	    (const unsigned char *)orig, sizeof(orig) - 1) ^ 0xffffffffu));
	ASSERT_EQ(crc_step(0xffffffffu, forged, sizeof(forged)),
	    crc_step(0xffffffffu, (const unsigned char *)orig,
	    sizeof(orig) - 1));

	ASSERT_EQ(ray_archive_open(p, &a, &err), 0);
	/*
	 * File times are kept in clock ticks; wait for the next tick, so the
	 * rewrite below gets a ctime of its own (a later one, as any real
	 * change after a run began would).
	 */
	ASSERT_EQ(stat(p, &before), 0);
	do {
		ASSERT(put(probe, "x", 1));
		ASSERT_EQ(stat(probe, &now), 0);
	} while (now.st_ctim.tv_sec == before.st_ctim.tv_sec &&
	    now.st_ctim.tv_nsec == before.st_ctim.tv_nsec);
	ASSERT(patch_bytes(p, orig, forged, sizeof(forged)));

	ASSERT_EQ(ray_archive_read(a, "run.sh", &data, &len, &err), RAY_EINVAL);
	ASSERT(says(&err, msg("archive '%s' was rewritten after it was opened, "
	    "so its SHA-256 ", p)));
	ASSERT(says(&err, " no longer vouches for what would be read"));
	ray_archive_close(a);
}

static int
mode_of(const char *dir, const char *name)
{
	char p[PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (lstat(p, &st) != 0)
		return -1;
	return (int)(st.st_mode & 07777);
}

static int
holds(const char *dir, const char *name, const char *want)
{
	char p[PATH_MAX], *data;
	size_t len;
	int same;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	data = slurp(p, &len);
	same = data != NULL && len == strlen(want) && memcmp(data, want, len) == 0;
	free(data);
	return same;
}

TEST(extract_writes_contents_and_modes_whatever_the_umask)
{
	struct ray_err err = { 0 };
	struct ray_archive *a = NULL;
	TPATH(p, "extract.zip");
	TPATH(d, "out");
	mode_t old;
	int rc;

	MAKE_ZIP(p, { "flow/", NULL }, { "flow/START.md", "# hi\n" },
	    { "flow/check.sh", "#!/bin/sh\nexit 0\n" },
	    { "flow/data.json", "{}" }, { "flow/sh", "not a script" });
	ASSERT_EQ(ray_archive_open(p, &a, &err), 0);
	ASSERT_EQ(mkdir(d, 0755), 0);
	old = umask(077);
	rc = ray_archive_extract(a, d, &err);
	umask(old);
	ray_archive_close(a);
	ASSERT_EQ(rc, 0);
	ASSERT(holds(d, "START.md", "# hi\n"));
	ASSERT(holds(d, "check.sh", "#!/bin/sh\nexit 0\n"));
	ASSERT(holds(d, "data.json", "{}"));
	ASSERT_EQ(mode_of(d, "START.md"), 0644);
	ASSERT_EQ(mode_of(d, "check.sh"), 0755);
	ASSERT_EQ(mode_of(d, "data.json"), 0644);
	ASSERT_EQ(mode_of(d, "sh"), 0644);
	ASSERT_EQ(mode_of(d, "flow"), -1);
}

/*
 * An existing file, or a symlink planted where a file would go, stops the
 * extraction; the link's target is untouched and what this call wrote is
 * taken back.
 */
TEST(extract_never_overwrites_or_follows_symlinks)
{
	struct ray_err err = { 0 };
	struct ray_archive *a = NULL;
	TPATH(p, "clash.zip");
	TPATH(d, "clash");
	TPATH(target, "victim.txt");
	char link[TP + 16], want[RAY_ERR_MSG];
	int rc;

	MAKE_ZIP(p, { "a.md", "aaa" }, { "b.md", "bbb" }, { "c.md", "ccc" });
	ASSERT(put(target, "precious", 8));
	ASSERT_EQ(mkdir(d, 0755), 0);
	snprintf(link, sizeof(link), "%s/b.md", d);
	ASSERT_EQ(symlink(target, link), 0);

	ASSERT_EQ(ray_archive_open(p, &a, &err), 0);
	rc = ray_archive_extract(a, d, &err);
	ASSERT_EQ(rc, -EEXIST);
	snprintf(want, sizeof(want), "cannot create '%s/b.md': %s", d,
	    strerror(EEXIST));
	ASSERT_STREQ(err.msg, want);
	ASSERT(holds(tdir, "victim.txt", "precious"));
	ASSERT_EQ(mode_of(d, "a.md"), -1);
	ASSERT_EQ(mode_of(d, "c.md"), -1);

	/* With the way clear, the same archive extracts. */
	ASSERT_EQ(unlink(link), 0);
	ASSERT_EQ(ray_archive_extract(a, d, &err), 0);
	ASSERT(holds(d, "b.md", "bbb"));
	/* A second time everything exists already. */
	ASSERT_EQ(ray_archive_extract(a, d, &err), -EEXIST);
	ASSERT(holds(d, "a.md", "aaa"));
	ray_archive_close(a);
}

TEST(extract_into_missing_directory_names_it)
{
	struct ray_err err = { 0 };
	struct ray_archive *a = NULL;
	TPATH(p, "nodir.zip");
	TPATH(d, "no-such-dir");
	char want[RAY_ERR_MSG];

	MAKE_ZIP(p, { "START.md", "x" });
	ASSERT_EQ(ray_archive_open(p, &a, &err), 0);
	ASSERT_EQ(ray_archive_extract(a, d, &err), -ENOENT);
	snprintf(want, sizeof(want), "cannot open directory '%s': %s", d,
	    strerror(ENOENT));
	ASSERT_STREQ(err.msg, want);
	ray_archive_close(a);
}

TEST(foreign_and_damaged_files_are_not_readable_zips)
{
	static const char text[] = "this is not a zip archive, just some text\n";
	TPATH(p, "text.zip");
	TPATH(q, "truncated.zip");
	TPATH(z, "zero.zip");
	char *data;
	size_t len;

	ASSERT(put(p, text, sizeof(text) - 1));
	ASSERT(open_fails(p, RAY_EINVAL, msg("'%s' is not a readable zip "
	    "archive: Not a zip archive", p)));

	ASSERT(put(z, "", 0));
	ASSERT(open_fails(z, RAY_EINVAL, msg("'%s' is not a readable zip "
	    "archive: ", z)));

	MAKE_ZIP(q, { "START.md", "some text that is long enough to matter" });
	data = slurp(q, &len);
	ASSERT(data != NULL);
	ASSERT(put(q, data, len - 30));
	free(data);
	ASSERT(open_fails(q, RAY_EINVAL, msg("'%s' is not a readable zip "
	    "archive: ", q)));
}

/* A flipped byte in the data passes open and fails the read's CRC check. */
TEST(damaged_data_fails_the_read)
{
	struct ray_err err = { 0 };
	struct ray_archive *a = NULL;
	static const struct file f[] = { { "START.md", "PAYLOADPAYLOAD" } };
	TPATH(p, "crc.zip");
	TPATH(d, "crc-out");
	char *data;
	size_t len;

	ASSERT(make_zip_with(p, f, 1, 1));
	ASSERT_EQ(patch(p, "PAYLOADPAYLOAD", "PAYLOADPAYLOAX"), 1);
	ASSERT_EQ(ray_archive_open(p, &a, &err), 0);
	ASSERT_EQ(ray_archive_read(a, "START.md", &data, &len, &err), RAY_EIO);
	ASSERT(data == NULL);
	ASSERT(says(&err, msg("cannot read 'START.md' from archive '%s': ", p)));
	ASSERT(says(&err, "CRC"));
	ASSERT_EQ(mkdir(d, 0755), 0);
	ASSERT_EQ(ray_archive_extract(a, d, &err), RAY_EIO);
	ASSERT_EQ(mode_of(d, "START.md"), -1);
	ray_archive_close(a);
}

TEST(missing_file_and_directory_are_errors)
{
	char want[RAY_ERR_MSG];
	TPATH(p, "missing.zip");

	snprintf(want, sizeof(want), "cannot open archive '%s': %s", p,
	    strerror(ENOENT));
	ASSERT(open_fails(p, -ENOENT, want));
	ASSERT(open_fails(tdir, RAY_EINVAL, msg("archive '%s' is not a regular "
	    "file", tdir)));
}

/* How many descriptors this process has open. */
static int
open_fds(void)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * Opening, failing to open, reading and extracting leave no descriptor
 * behind, and the one an open archive holds is not passed to children.
 */
TEST(descriptors_are_closed_and_close_on_exec)
{
	struct ray_err err = { 0 };
	struct ray_archive *a = NULL;
	TPATH(p, "fds.zip");
	TPATH(bad, "fds-bad.zip");
	TPATH(text, "fds-text.zip");
	TPATH(d, "fds-out");
	char link[64], target[PATH_MAX], *data;
	int before, fd, seen = 0;
	ssize_t n;
	size_t len;

	MAKE_ZIP(p, { "START.md", "x" }, { "run.sh", "y" });
	MAKE_ZIP(bad, { "a/x", "1" }, { "b/y", "2" });
	ASSERT(put(text, "not a zip", 9));
	ASSERT_EQ(mkdir(d, 0755), 0);
	before = open_fds();
	ASSERT(before > 0);

	ASSERT_EQ(ray_archive_open(p, &a, &err), 0);
	for (fd = 0; fd < 1024; fd++) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, p) != 0)
			continue;
		seen++;
		ASSERT(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	}
	ASSERT_EQ(seen, 1);
	ASSERT_EQ(ray_archive_read(a, "START.md", &data, &len, &err), 0);
	free(data);
	ASSERT_EQ(ray_archive_extract(a, d, &err), 0);
	ASSERT_EQ(ray_archive_extract(a, d, &err), -EEXIST);
	ray_archive_close(a);
	ASSERT_EQ(open_fds(), before);

	ASSERT_EQ(ray_archive_open(bad, &a, &err), RAY_EINVAL);
	ASSERT_EQ(ray_archive_open(text, &a, &err), RAY_EINVAL);
	ASSERT_EQ(ray_archive_open(tdir, &a, &err), RAY_EINVAL);
	ASSERT_EQ(open_fds(), before);
}

TESTS(T_CASE(flat_layout_lists_sorts_and_reads),
    T_CASE(one_folder_layout_strips_the_folder),
    T_CASE(archive_without_files_is_an_error),
    T_CASE(several_top_level_folders_are_an_error),
    T_CASE(files_and_folders_mixed_at_the_top_are_an_error),
    T_CASE(deeper_nesting_is_an_error),
    T_CASE(unsafe_entry_names_are_errors),
    T_CASE(nul_byte_in_a_name_is_an_error),
    T_CASE(two_files_with_one_name_are_an_error),
    T_CASE(hash_in_the_name_must_match),
    T_CASE(ambiguous_hash_in_the_name_is_an_error),
    T_CASE(read_unknown_name_is_enoent),
    T_CASE(read_keeps_every_byte),
    T_CASE(files_over_64_mib_are_too_big),
    T_CASE(limits_refuse_an_archive_before_anything_is_unpacked),
    T_CASE(declared_sizes_are_not_trusted),
    T_CASE(rewritten_in_place_with_the_same_crc_is_refused),
    T_CASE(extract_writes_contents_and_modes_whatever_the_umask),
    T_CASE(extract_never_overwrites_or_follows_symlinks),
    T_CASE(extract_into_missing_directory_names_it),
    T_CASE(foreign_and_damaged_files_are_not_readable_zips),
    T_CASE(damaged_data_fails_the_read),
    T_CASE(missing_file_and_directory_are_errors),
    T_CASE(descriptors_are_closed_and_close_on_exec))
