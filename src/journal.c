/*
 * journal.c - the append-only state log (see journal.h for the format and
 * the contract).
 */
#include "journal.h"
#include "atomicfile.h"
#include "le.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define REC_HEAD RAY_JOURNAL_RECORD_HEAD
#define MAGIC "RAYJRNL1"
#define REC_MAGIC "RAYR"
#define ZERO_CHUNK (64 * 1024)

struct ray_journal {
	int fd;
	char *path;
	uint64_t gen;
	uint32_t seq;		/* the next record's number */
	size_t off;		/* where the next record goes */
	size_t cap;		/* the file's size, all of it written */
	unsigned char *buf;	/* a record being written */
	size_t buf_cap;
};

static uint32_t crc_table[256];

uint32_t
ray_crc32c(uint32_t crc, const void *data, size_t len)
{
	const unsigned char *p = data;
	uint32_t c;
	int i, k;

	if (crc_table[1] == 0) {
		for (i = 0; i < 256; i++) {
			c = (uint32_t)i;
			for (k = 0; k < 8; k++)
				c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
			crc_table[i] = c;
		}
	}
	crc = ~crc;
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static size_t
align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Write all of buf at off, retrying short writes and EINTR. */
static int
pwrite_all(int fd, const void *buf, size_t len, size_t off)
{
	const char *p = buf;
	ssize_t n;

	while (len > 0) {
		n = pwrite(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* A regular file never takes zero bytes of a write. */
			if (n == 0)
				errno = EIO;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
		off += (size_t)n;
	}
	return 0;
}

/*
 * Lay down zeros from `from` to `to`.  The space is reserved first where
 * the file system can (fallocate), so a disk without room for the journal
 * says so at once rather than after filling up what room it had; the
 * zeros are still written, since blocks that were only reserved would
 * make the first write to each a metadata change for fdatasync.
 */
static int
zero_fill(int fd, size_t from, size_t to)
{
	static const char zeros[ZERO_CHUNK];
	size_t n;

	if (from < to && fallocate(fd, 0, (off_t)from, (off_t)(to - from)) < 0 &&
	    errno != EOPNOTSUPP && errno != ENOSYS && errno != EINVAL)
		return -errno;
	if (from < to && lseek(fd, (off_t)from, SEEK_SET) < 0)
		return -errno;
	for (; from < to; from += n) {
		n = to - from < ZERO_CHUNK ? to - from : ZERO_CHUNK;
		if (ray_write_all(fd, zeros, n) < 0)
			return -errno;
	}
	return 0;
}

/*
 * A generation no earlier journal in this file can have had: random, or
 * failing that the time and our pid, which differ from any earlier open.
 */
static uint64_t
new_generation(void)
{
	struct timespec ts;
	uint64_t g;

	if (getrandom(&g, sizeof(g), GRND_NONBLOCK) == (ssize_t)sizeof(g))
		return g;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^
	    (uint64_t)getpid() << 40;
}

int
ray_journal_open(const char *path, size_t min_record,
    struct ray_journal **out, struct ray_err *err)
{
	struct ray_journal *j = xcalloc(1, sizeof(*j));
	unsigned char head[RAY_JOURNAL_HEADER] = { 0 };
	struct stat st;
	size_t want;
	int rc, fresh;

	*out = NULL;
	j->path = xstrdup(path);
	j->fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (j->fd < 0 || fstat(j->fd, &st) < 0) {
		rc = ray_err_open(err, "the journal", path);
		goto fail;
	}
	fresh = st.st_size == 0;
	want = align8(REC_HEAD + min_record);
	want = want > (SIZE_MAX - RAY_JOURNAL_HEADER) / 8 ? SIZE_MAX :
	    RAY_JOURNAL_HEADER + 8 * want;
	if (want < RAY_JOURNAL_MIN_CAPACITY)
		want = RAY_JOURNAL_MIN_CAPACITY;
	j->cap = (size_t)st.st_size > want ? (size_t)st.st_size : want;
	if ((rc = zero_fill(j->fd, (size_t)st.st_size, j->cap)) < 0) {
		rc = ray_err_set(err, rc, "cannot write the journal '%s': %s",
		    path, strerror(-rc));
		goto fail;
	}

	j->gen = new_generation();
	memcpy(head, MAGIC, 8);
	ray_put_le64(head + 8, j->gen);
	ray_put_le32(head + 16, ray_crc32c(0, head, 16));
	if ((rc = pwrite_all(j->fd, head, sizeof(head), 0)) < 0) {
		rc = ray_err_set(err, rc, "cannot write the journal '%s': %s",
		    path, strerror(-rc));
		goto fail;
	}
	/* fsync, not fdatasync: the size may have changed. */
	if (ray_atomicfile_sync() && fsync(j->fd) < 0) {
		rc = ray_err_sys(err, "cannot fsync the journal '%s'", path);
		goto fail;
	}
	if (fresh && (rc = ray_atomicfile_sync_dir(path, "creating", err)) < 0)
		goto fail;
	j->off = RAY_JOURNAL_HEADER;
	j->seq = 1;
	*out = j;
	return 0;

fail:
	/*
	 * A journal that could not be laid down would only hold the disk
	 * space it took (all of it, on a full disk, which the state file
	 * then needs), and its old records are retired anyway.
	 */
	if (j->fd >= 0)
		unlink(path);
	ray_journal_close(j);
	return rc;
}

int
ray_journal_append(struct ray_journal *j, const void *data, size_t len,
    struct ray_err *err)
{
	static const unsigned char zeros[REC_HEAD];
	size_t total;
	int rc;

	if (len > UINT32_MAX || REC_HEAD + len > j->cap - j->off)
		return ray_err_set(err, RAY_EFULL, "the journal '%s' has no "
		    "room for %zu more bytes", j->path, len);
	total = align8(REC_HEAD + len);
	if (total > j->cap - j->off)
		total = j->cap - j->off;
	if (j->buf_cap < total) {
		j->buf = xrealloc(j->buf, total);
		j->buf_cap = total;
	}
	memcpy(j->buf, REC_MAGIC, 4);
	ray_put_le32(j->buf + 4, (uint32_t)len);
	ray_put_le64(j->buf + 8, j->gen);
	ray_put_le32(j->buf + 16, j->seq);
	ray_put_le32(j->buf + 20, ray_crc32c(ray_crc32c(0, j->buf, 20), data, len));
	memcpy(j->buf + REC_HEAD, data, len);
	memset(j->buf + REC_HEAD + len, 0, total - REC_HEAD - len);

	if ((rc = pwrite_all(j->fd, j->buf, total, j->off)) < 0) {
		rc = ray_err_set(err, rc, "cannot write the journal '%s': %s",
		    j->path, strerror(-rc));
		goto undo;
	}
	if (ray_atomicfile_sync() && fdatasync(j->fd) < 0) {
		rc = ray_err_sys(err, "cannot fdatasync the journal '%s'",
		    j->path);
		goto undo;
	}
	j->off += total;
	j->seq++;
	return 0;

undo:
	/*
	 * The record may be whole in the page cache even though it failed;
	 * readers must not take it for a saved state.
	 */
	pwrite_all(j->fd, zeros, sizeof(zeros), j->off);
	return rc;
}

void
ray_journal_close(struct ray_journal *j)
{
	if (j == NULL)
		return;
	/* Every record that counted was fdatasync'ed already. */
	if (j->fd >= 0)
		close(j->fd);
	free(j->buf);
	free(j->path);
	free(j);
}

int
ray_journal_last(const unsigned char *img, size_t len, size_t *off,
    size_t *plen)
{
	const unsigned char *r;
	size_t pos = RAY_JOURNAL_HEADER, n;
	uint64_t gen;
	uint32_t seq = 1;
	int found = 0;

	if (len < RAY_JOURNAL_HEADER || memcmp(img, MAGIC, 8) != 0 ||
	    ray_le32(img + 16) != ray_crc32c(0, img, 16))
		return 0;
	gen = ray_le64(img + 8);
	while (len - pos >= REC_HEAD) {
		r = img + pos;
		n = ray_le32(r + 4);
		if (memcmp(r, REC_MAGIC, 4) != 0 || ray_le64(r + 8) != gen ||
		    ray_le32(r + 16) != seq || n > len - pos - REC_HEAD)
			break;
		if (ray_le32(r + 20) !=
		    ray_crc32c(ray_crc32c(0, r, 20), r + REC_HEAD, n))
			break;
		*off = pos + REC_HEAD;
		*plen = n;
		found = 1;
		if (align8(REC_HEAD + n) >= len - pos)
			break;
		pos += align8(REC_HEAD + n);
		seq++;
	}
	return found;
}

int
ray_journal_read(const char *path, char **data, size_t *len,
    struct ray_err *err)
{
	char *img;
	size_t n, off, plen;
	int rc;

	*data = NULL;
	*len = 0;
	rc = ray_atomicfile_read(path, &img, &n, err);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	if (ray_journal_last((const unsigned char *)img, n, &off, &plen)) {
		memmove(img, img + off, plen);
		img[plen] = '\0';
		*data = img;
		*len = plen;
		return 0;
	}
	free(img);
	return 0;
}
