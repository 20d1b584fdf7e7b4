/*
 * buf.h - a growable byte buffer, always NUL-terminated.
 *
 * Calling sequence: `struct ray_buf b = RAY_BUF_INIT;` then any number of
 * ray_buf_add*() calls, then ray_buf_release() (contents only) or
 * ray_buf_detach() (you now own b.data and must free(3) it).
 *
 * Growth never fails (see xrealloc in ray.h).  `data` is NULL only while
 * nothing was ever added; ray_buf_str() returns "" in that case.
 */
#ifndef RAY_BUF_H
#define RAY_BUF_H

#include <stddef.h>

struct ray_buf {
	char *data;
	size_t len;
	size_t cap;
};

#define RAY_BUF_INIT { NULL, 0, 0 }

void ray_buf_add(struct ray_buf *b, const void *p, size_t n);
void ray_buf_addc(struct ray_buf *b, char c);
void ray_buf_adds(struct ray_buf *b, const char *s);
void ray_buf_addf(struct ray_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Drop the first `n` bytes, keeping the rest. */
void ray_buf_consume(struct ray_buf *b, size_t n);
void ray_buf_reset(struct ray_buf *b);
const char *ray_buf_str(const struct ray_buf *b);
char *ray_buf_detach(struct ray_buf *b);
void ray_buf_release(struct ray_buf *b);

#endif
