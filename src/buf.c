/*
 * buf.c - growable byte buffer (see buf.h).
 */
#include "buf.h"
#include "ray.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
grow(struct ray_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;

	if (need <= b->cap)
		return;
	if (b->cap == 0)
		b->cap = 64;
	while (b->cap < need)
		b->cap *= 2;
	b->data = xrealloc(b->data, b->cap);
}

void
ray_buf_add(struct ray_buf *b, const void *p, size_t n)
{
	grow(b, n);
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void
ray_buf_addc(struct ray_buf *b, char c)
{
	ray_buf_add(b, &c, 1);
}

void
ray_buf_adds(struct ray_buf *b, const char *s)
{
	ray_buf_add(b, s, strlen(s));
}

void
ray_buf_addf(struct ray_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	grow(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void
ray_buf_consume(struct ray_buf *b, size_t n)
{
	if (n >= b->len) {
		ray_buf_reset(b);
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
	b->data[b->len] = '\0';
}

void
ray_buf_reset(struct ray_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

const char *
ray_buf_str(const struct ray_buf *b)
{
	return b->data ? b->data : "";
}

char *
ray_buf_detach(struct ray_buf *b)
{
	char *p = b->data ? b->data : xstrdup("");

	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}

void
ray_buf_release(struct ray_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}
