/*
 * record.c - the debug record of a run (see record.h).
 */
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

struct ray_record {
	int fd;
};

int
ray_record_open(const char *path, struct ray_record **out, struct ray_err *err)
{
	struct ray_record *r;
	struct stat st;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
	    0644);
	if (fd < 0)
		return ray_err_open(err, "the debug record", path);
	/* A resumed run appends to the record its first process began. */
	if (fstat(fd, &st) == 0 && st.st_size == 0 &&
	    write(fd, RAY_RECORD_MAGIC, strlen(RAY_RECORD_MAGIC)) < 0) {
		int r2 = ray_err_sys(err, "cannot write the debug record '%s'", path);

		close(fd);
		return r2;
	}
	r = xcalloc(1, sizeof(*r));
	r->fd = fd;
	*out = r;
	return 0;
}

/* A piece name keeps the header line parseable: one word, no spaces. */
static int
valid_piece(const char *piece)
{
	const char *c;

	if (*piece == '\0')
		return 0;
	for (c = piece; *c; c++)
		if (!(*c == '.' || *c == '_' || *c == '-' ||
		    (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		    (*c >= '0' && *c <= '9')))
			return 0;
	return 1;
}

int
ray_record_put(struct ray_record *r, unsigned long step, const char *piece,
    const void *data, size_t len)
{
	char head[128];
	struct iovec iov[3];
	size_t total, done = 0;
	int n, i = 0;

	if (!valid_piece(piece) || strlen(piece) > 64) {
		errno = EINVAL;
		return -1;
	}
	n = snprintf(head, sizeof(head), "@ %lu %s %zu\n", step, piece, len);
	iov[0].iov_base = head;
	iov[0].iov_len = (size_t)n;
	iov[1].iov_base = (void *)data;
	iov[1].iov_len = len;
	iov[2].iov_base = "\n";
	iov[2].iov_len = 1;
	total = (size_t)n + len + 1;
	/*
	 * One writev appends the whole piece at once in the usual case; a
	 * short write (a full disk, a signal) is finished from where it
	 * stopped, so the framing is never left half written by us.
	 */
	while (done < total) {
		ssize_t w = writev(r->fd, iov + i, 3 - i);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		done += (size_t)w;
		while (i < 3 && (size_t)w >= iov[i].iov_len) {
			w -= (ssize_t)iov[i].iov_len;
			i++;
		}
		if (i < 3) {
			iov[i].iov_base = (char *)iov[i].iov_base + w;
			iov[i].iov_len -= (size_t)w;
		}
	}
	return 0;
}

void
ray_record_close(struct ray_record *r)
{
	if (r == NULL)
		return;
	close(r->fd);
	free(r);
}
