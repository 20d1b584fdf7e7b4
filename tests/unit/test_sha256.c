/*
 * test_sha256.c - unit tests of sha256.c: the FIPS 180-4 / NIST example
 * vectors, every way of splitting an input into updates, the padding
 * boundaries against sha256sum(1), and file hashing with its errors.
 */
#include "ray.h"
#include "sha256.h"
#include "testlib.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tdir[64];

static void
rm_tdir(void)
{
	char cmd[PATH_MAX + 32];

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
	char tmpl[] = "/tmp/ray-test-sha256-XXXXXX";

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

static void
hex_of(const void *data, size_t len, char hex[65])
{
	unsigned char d[32];

	ray_sha256(data, len, d);
	ray_sha256_hex(d, hex);
}

/* What sha256sum(1) prints for `path`, or "" if it could not be run. */
static void
sha256sum(const char *path, char hex[65])
{
	char cmd[PATH_MAX + 32], line[128];
	FILE *p;

	hex[0] = '\0';
	snprintf(cmd, sizeof(cmd), "sha256sum '%s'", path);
	p = popen(cmd, "r");
	if (p == NULL)
		return;
	if (fgets(line, sizeof(line), p) != NULL && strlen(line) > 64) {
		memcpy(hex, line, 64);
		hex[64] = '\0';
	}
	pclose(p);
}

TEST(empty_message)
{
	char hex[65];

	hex_of("", 0, hex);
	ASSERT_STREQ(hex, "e3b0c44298fc1c149afbf4c8996fb924"
	    "27ae41e4649b934ca495991b7852b855");
}

TEST(abc)
{
	char hex[65];

	hex_of("abc", 3, hex);
	ASSERT_STREQ(hex, "ba7816bf8f01cfea414140de5dae2223"
	    "b00361a396177a9cb410ff61f20015ad");
}

/* 56 bytes: the length no longer fits in the first block's padding. */
TEST(message_of_448_bits)
{
	static const char m[] =
	    "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	char hex[65];

	ASSERT_EQ(strlen(m), 56);
	hex_of(m, strlen(m), hex);
	ASSERT_STREQ(hex, "248d6a61d20638b8e5c026930c3e6039"
	    "a33ce45964ff2167f6ecedd419db06c1");
}

TEST(message_of_896_bits)
{
	static const char m[] =
	    "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
	    "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
	char hex[65];

	hex_of(m, strlen(m), hex);
	ASSERT_STREQ(hex, "cf5b16a778af8380036ce59e7b049237"
	    "0b249b11e8f07a51afac45037afee9d1");
}

TEST(one_million_a)
{
	static const char *want = "cdc76e5c9914fb9281a1c7e284d73e67"
	    "f1809a48a497200e046d39ccc7112cd0";
	struct ray_sha256_ctx c;
	unsigned char d[32];
	char *m = malloc(1000000), hex[65], chunk[1000];
	int i;

	ASSERT(m != NULL);
	memset(m, 'a', 1000000);
	hex_of(m, 1000000, hex);
	free(m);
	ASSERT_STREQ(hex, want);

	/* The same through a thousand updates of 1000 bytes each. */
	memset(chunk, 'a', sizeof(chunk));
	ray_sha256_init(&c);
	for (i = 0; i < 1000; i++)
		ray_sha256_update(&c, chunk, sizeof(chunk));
	ray_sha256_final(&c, d);
	ray_sha256_hex(d, hex);
	ASSERT_STREQ(hex, want);
}

/* Two updates, split at every position, and then byte by byte. */
TEST(incremental_equals_one_shot_at_every_split)
{
	unsigned char in[200], one[32], d[32];
	struct ray_sha256_ctx c;
	size_t i, cut;

	for (i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 31 + 7);
	ray_sha256(in, sizeof(in), one);
	for (cut = 0; cut <= sizeof(in); cut++) {
		ray_sha256_init(&c);
		ray_sha256_update(&c, in, cut);
		ray_sha256_update(&c, in + cut, sizeof(in) - cut);
		ray_sha256_final(&c, d);
		if (memcmp(d, one, 32) != 0)
			T_FAIL("split at %zu differs", cut);
	}
	ray_sha256_init(&c);
	for (i = 0; i < sizeof(in); i++)
		ray_sha256_update(&c, in + i, 1);
	ray_sha256_final(&c, d);
	ASSERT(memcmp(d, one, 32) == 0);
}

/*
 * Every length from 0 to 130 bytes crosses each padding case (the length
 * fits, it spills into another block, the input fills blocks exactly);
 * sha256sum(1) is an independent implementation to compare with.
 */
TEST(file_digest_matches_sha256sum_at_every_padding_length)
{
	struct ray_err err = { 0 };
	char p[PATH_MAX], ours[65], theirs[65];
	unsigned char in[130];
	size_t len;

	tpath(p, sizeof(p), "len.bin");
	for (len = 0; len < sizeof(in); len++)
		in[len] = (unsigned char)(len ^ 0x5a);
	for (len = 0; len <= sizeof(in); len++) {
		ASSERT(put(p, in, len));
		ASSERT_EQ(ray_sha256_file(p, ours, &err), 0);
		sha256sum(p, theirs);
		if (strcmp(ours, theirs) != 0)
			T_FAIL("length %zu: ours %s, sha256sum \"%s\"", len,
			    ours, theirs);
	}
}

/* Larger than the streaming buffer, and not a multiple of it. */
TEST(file_digest_streams_large_files)
{
	struct ray_err err = { 0 };
	char p[PATH_MAX], ours[65], want[65];
	size_t n = 3 * 65536 + 1234, i;
	unsigned char *m = malloc(n);

	ASSERT(m != NULL);
	for (i = 0; i < n; i++)
		m[i] = (unsigned char)(i * 2654435761u >> 13);
	tpath(p, sizeof(p), "large.bin");
	if (!put(p, m, n)) {
		free(m);
		T_FAIL("cannot write %s", p);
	}
	hex_of(m, n, want);
	free(m);
	ASSERT_EQ(ray_sha256_file(p, ours, &err), 0);
	ASSERT_STREQ(ours, want);
	sha256sum(p, want);
	ASSERT_STREQ(ours, want);
}

TEST(file_errors_name_the_path)
{
	struct ray_err err = { 0 };
	char p[PATH_MAX], hex[65], want[PATH_MAX + 64];

	tpath(p, sizeof(p), "missing.bin");
	ASSERT_EQ(ray_sha256_file(p, hex, &err), -ENOENT);
	ASSERT_EQ(err.code, -ENOENT);
	snprintf(want, sizeof(want), "cannot open '%s': %s", p, strerror(ENOENT));
	ASSERT_STREQ(err.msg, want);
	ASSERT_STREQ(hex, "");

	ASSERT_EQ(ray_sha256_file(tdir, hex, &err), -EISDIR);
	snprintf(want, sizeof(want), "cannot read '%s': %s", tdir, strerror(EISDIR));
	ASSERT_STREQ(err.msg, want);

	/* A NULL err is allowed. */
	ASSERT_EQ(ray_sha256_file(p, hex, NULL), -ENOENT);
}

TESTS(T_CASE(empty_message), T_CASE(abc), T_CASE(message_of_448_bits),
    T_CASE(message_of_896_bits), T_CASE(one_million_a),
    T_CASE(incremental_equals_one_shot_at_every_split),
    T_CASE(file_digest_matches_sha256sum_at_every_padding_length),
    T_CASE(file_digest_streams_large_files),
    T_CASE(file_errors_name_the_path))
