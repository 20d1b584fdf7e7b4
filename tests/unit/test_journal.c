/*
 * test_journal.c - unit tests of journal.c: records read back, a torn
 * record never read, records of an earlier opening retired, a full
 * journal refusing, and the CRC against its published check value.
 */
#include "journal.h"
#include "ray.h"
#include "testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tdir[PATH_MAX];
static char jpath[PATH_MAX + 16];

static void
setup_dir(void)
{
	snprintf(tdir, sizeof(tdir), "%s/ray-journal-XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tdir) == NULL) {
		perror("mkdtemp");
		exit(1);
	}
	snprintf(jpath, sizeof(jpath), "%s/run.journal", tdir);
}

/* The last record as a string, "" when there is none. */
static char *
last(void)
{
	char *data;
	size_t len;
	struct ray_err err;

	if (ray_journal_read(jpath, &data, &len, &err) < 0)
		return strdup("(error)");
	if (data == NULL)
		return strdup("");
	if (strlen(data) != len) {
		free(data);
		return strdup("(embedded NUL)");
	}
	return data;
}

static unsigned char *
image(size_t *len)
{
	FILE *f = fopen(jpath, "rb");
	unsigned char *img;
	long n;

	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	img = malloc((size_t)n);
	if (fread(img, 1, (size_t)n, f) != (size_t)n) {
		free(img);
		img = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return img;
}

TEST(crc32c_check_value)
{
	ASSERT_EQ(ray_crc32c(0, "123456789", 9), 0xe3069283u);
	/* Chained calls give the CRC of the concatenation. */
	ASSERT_EQ(ray_crc32c(ray_crc32c(0, "1234", 4), "56789", 5),
	    0xe3069283u);
}

TEST(missing_file_has_no_record)
{
	char *s;

	unlink(jpath);
	s = last();
	ASSERT_STREQ(s, "");
	free(s);
}

TEST(appends_read_back_last)
{
	struct ray_journal *j;
	struct ray_err err;
	struct stat st;
	char rec[64], *s;
	int i;

	ASSERT_EQ(ray_journal_open(jpath, 0, &j, &err), 0);
	s = last();
	ASSERT_STREQ(s, "");
	free(s);
	for (i = 1; i <= 100; i++) {
		snprintf(rec, sizeof(rec), "{\"revision\":%d}", i);
		ASSERT_EQ(ray_journal_append(j, rec, strlen(rec), &err), 0);
	}
	ray_journal_close(j);
	s = last();
	ASSERT_STREQ(s, "{\"revision\":100}");
	free(s);
	/* Appends overwrite the zeros written at open; the size stays. */
	ASSERT_EQ(stat(jpath, &st), 0);
	ASSERT_EQ(st.st_size, RAY_JOURNAL_MIN_CAPACITY);
}

TEST(reopening_retires_every_record)
{
	struct ray_journal *j;
	struct ray_err err;
	char *s;

	ASSERT_EQ(ray_journal_open(jpath, 0, &j, &err), 0);
	ASSERT_EQ(ray_journal_append(j, "one", 3, &err), 0);
	ASSERT_EQ(ray_journal_append(j, "two", 3, &err), 0);
	ray_journal_close(j);
	ASSERT_EQ(ray_journal_open(jpath, 0, &j, &err), 0);
	s = last();
	ASSERT_STREQ(s, "");
	free(s);
	/* A new record of the same size as an old one is read, not the old. */
	ASSERT_EQ(ray_journal_append(j, "new", 3, &err), 0);
	ray_journal_close(j);
	s = last();
	ASSERT_STREQ(s, "new");
	free(s);
}

/*
 * A crash can leave any prefix of a record on disk: cutting the file, or
 * zeroing the record from any byte on, must give the record before it.
 */
TEST(torn_record_is_never_read)
{
	struct ray_journal *j;
	struct ray_err err;
	unsigned char *img, *copy;
	size_t len, off, plen, start, cut;
	const char *second = "the second record, longer than the first";

	ASSERT_EQ(ray_journal_open(jpath, 0, &j, &err), 0);
	ASSERT_EQ(ray_journal_append(j, "first", 5, &err), 0);
	ASSERT_EQ(ray_journal_append(j, second, strlen(second), &err), 0);
	ray_journal_close(j);
	img = image(&len);
	ASSERT(img != NULL);
	ASSERT_EQ(ray_journal_last(img, len, &off, &plen), 1);
	ASSERT_EQ(plen, strlen(second));
	ASSERT(memcmp(img + off, second, plen) == 0);
	/* The second record's head comes right before its payload. */
	start = off - RAY_JOURNAL_RECORD_HEAD;
	copy = malloc(len);
	for (cut = start; cut < off + plen; cut++) {
		memcpy(copy, img, len);
		memset(copy + cut, 0, len - cut);
		if (ray_journal_last(copy, len, &off, &plen) != 1 ||
		    plen != 5 || memcmp(copy + off, "first", 5) != 0) {
			free(copy);
			free(img);
			T_FAIL("zeroed from byte %zu: the first record is lost", cut);
		}
		if (ray_journal_last(copy, cut, &off, &plen) != 1 || plen != 5) {
			free(copy);
			free(img);
			T_FAIL("cut at byte %zu: the first record is lost", cut);
		}
	}
	/* One flipped bit anywhere in the second record hides it. */
	for (cut = start; cut < off + strlen(second); cut++) {
		memcpy(copy, img, len);
		copy[cut] ^= 0x10;
		if (ray_journal_last(copy, len, &off, &plen) != 1 || plen != 5) {
			free(copy);
			free(img);
			T_FAIL("bit flipped at byte %zu: the record was read", cut);
		}
	}
	free(copy);
	free(img);
}

TEST(damaged_header_means_no_records)
{
	struct ray_journal *j;
	struct ray_err err;
	unsigned char *img;
	size_t len, off, plen;

	ASSERT_EQ(ray_journal_open(jpath, 0, &j, &err), 0);
	ASSERT_EQ(ray_journal_append(j, "rec", 3, &err), 0);
	ray_journal_close(j);
	img = image(&len);
	ASSERT(img != NULL);
	img[9] ^= 1;	/* the generation */
	ASSERT_EQ(ray_journal_last(img, len, &off, &plen), 0);
	ASSERT_EQ(ray_journal_last(img, 10, &off, &plen), 0);
	ASSERT_EQ(ray_journal_last(img, 0, &off, &plen), 0);
	free(img);
}

TEST(full_journal_refuses_and_writes_nothing)
{
	struct ray_journal *j;
	struct ray_err err;
	size_t big = RAY_JOURNAL_MIN_CAPACITY / 3;
	char *rec = malloc(big), *s;
	int i, rc = 0;

	memset(rec, 'x', big);
	ASSERT_EQ(ray_journal_open(jpath, 0, &j, &err), 0);
	ASSERT_EQ(ray_journal_append(j, "small", 5, &err), 0);
	for (i = 0; i < 3 && rc == 0; i++)
		rc = ray_journal_append(j, rec, big, &err);
	ASSERT_EQ(rc, RAY_EFULL);
	ASSERT(strstr(err.msg, "no room") != NULL);
	ray_journal_close(j);
	s = last();
	ASSERT_EQ(strlen(s), big);
	free(s);
	/* Opened for records that large, it holds eight of them. */
	ASSERT_EQ(ray_journal_open(jpath, big, &j, &err), 0);
	for (i = 0; i < 8; i++)
		ASSERT_EQ(ray_journal_append(j, rec, big, &err), 0);
	ray_journal_close(j);
	free(rec);
}

TEST(open_fails_with_the_path_named)
{
	struct ray_journal *j;
	struct ray_err err;
	char bad[PATH_MAX + 32];

	snprintf(bad, sizeof(bad), "%s/no/such/dir/run.journal", tdir);
	ASSERT(ray_journal_open(bad, 0, &j, &err) < 0);
	ASSERT(j == NULL);
	ASSERT(strstr(err.msg, bad) != NULL);
	ASSERT(strstr(err.msg, "No such file") != NULL);
}

static void
cleanup(void)
{
	unlink(jpath);
	rmdir(tdir);
}

int
main(void)
{
	static const struct t_case cases[] = {
		T_CASE(crc32c_check_value), T_CASE(missing_file_has_no_record),
		T_CASE(appends_read_back_last),
		T_CASE(reopening_retires_every_record),
		T_CASE(torn_record_is_never_read),
		T_CASE(damaged_header_means_no_records),
		T_CASE(full_journal_refuses_and_writes_nothing),
		T_CASE(open_fails_with_the_path_named),
	};
	int rc;

	setup_dir();
	rc = t_run(cases, ARRAY_SIZE(cases));
	cleanup();
	return rc;
}
