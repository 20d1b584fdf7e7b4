/*
 * termsafe.c - untrusted text made safe to show on a terminal (see
 * termsafe.h).
 */
#include "termsafe.h"

#include <stdio.h>
#include <string.h>

struct out {
	ray_termsafe_emit *emit;
	void *ctx;
};

/* Whether `b` passes as it is: printable ASCII, newline or tab. */
static int
plain(unsigned char b)
{
	return (b >= 0x20 && b < 0x7f) || b == '\n' || b == '\t';
}

static void
show_byte(const struct out *o, unsigned char b)
{
	char s[8];

	snprintf(s, sizeof(s), "\\x%02x", b);
	o->emit(o->ctx, s, 4);
}

/*
 * The length of the UTF-8 sequence at p (n > 0 bytes, p[0] >= 0x80): its
 * length when valid, -1 when p[0] starts no valid sequence or a byte after
 * it is wrong, 0 when the n bytes are a valid but incomplete start.
 */
static int
utf8_len(const unsigned char *p, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	int len, i;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4;
	else
		return -1;
	/* No overlong forms, no surrogates, nothing past U+10FFFF. */
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	for (i = 1; i < len; i++) {
		if ((size_t)i >= n)
			return 0;
		if (p[i] < lo || p[i] > hi)
			return -1;
		lo = 0x80;
		hi = 0xbf;
	}
	return len;
}

/*
 * Show the one byte or sequence at p (n > 0 bytes, not plain).  Returns
 * how many bytes it took, or 0 when it needs bytes the next feed may
 * bring (only when not final).
 */
static size_t
step(const unsigned char *p, size_t n, int final, const struct out *o)
{
	char s[8];
	int len;

	if (p[0] == '\r') {
		if (n >= 2 && p[1] == '\n') {
			o->emit(o->ctx, "\r\n", 2);
			return 2;
		}
		if (n == 1 && !final)
			return 0;
	}
	if (p[0] < 0x20 || p[0] == 0x7f) {
		s[0] = '^';
		s[1] = (char)(p[0] == 0x7f ? '?' : p[0] + 0x40);
		o->emit(o->ctx, s, 2);
		return 1;
	}
	len = utf8_len(p, n);
	if (len == 0 && !final)
		return 0;
	if (len <= 0) {
		show_byte(o, p[0]);
		return 1;
	}
	if (p[0] == 0xc2 && p[1] < 0xa0) {
		/* A C1 control: U+0080..U+009F. */
		snprintf(s, sizeof(s), "\\u%04x", p[1]);
		o->emit(o->ctx, s, 6);
	} else {
		o->emit(o->ctx, (const char *)p, (size_t)len);
	}
	return (size_t)len;
}

/* Show p[0..n), holding an incomplete end unless final; returns bytes taken. */
static size_t
run(const unsigned char *p, size_t n, int final, const struct out *o)
{
	size_t i = 0, start, took;

	while (i < n) {
		start = i;
		while (i < n && plain(p[i]))
			i++;
		if (i > start)
			o->emit(o->ctx, (const char *)p + start, i - start);
		if (i == n)
			break;
		took = step(p + i, n - i, final, o);
		if (took == 0)
			break;
		i += took;
	}
	return i;
}

void
ray_termsafe_feed(struct ray_termsafe *ts, const char *data, size_t len,
    int final, ray_termsafe_emit *emit, void *ctx)
{
	const unsigned char *p = (const unsigned char *)data;
	unsigned char tmp[8];
	struct out o = { emit, ctx };
	size_t k, total, took;

	if (ts->nheld > 0) {
		/* The held start, completed from the new bytes: at most 4 more. */
		k = len < sizeof(tmp) - ts->nheld ? len : sizeof(tmp) - ts->nheld;
		memcpy(tmp, ts->held, ts->nheld);
		if (k > 0)
			memcpy(tmp + ts->nheld, p, k);
		total = ts->nheld + k;
		took = 0;
		while (took < ts->nheld) {
			size_t t = step(tmp + took, total - took, final, &o);

			if (t == 0) {
				/* Still incomplete: then all of data is in tmp. */
				ts->nheld = total - took;
				memmove(ts->held, tmp + took, ts->nheld);
				return;
			}
			took += t;
		}
		if (took > ts->nheld) {
			p += took - ts->nheld;
			len -= took - ts->nheld;
		}
		ts->nheld = 0;
	}
	if (len == 0)
		return;
	took = run(p, len, final, &o);
	ts->nheld = len - took;
	if (ts->nheld > 0)
		memcpy(ts->held, p + took, ts->nheld);
}

struct print_out {
	struct ray_termsafe_print *pr;
	ray_termsafe_emit *emit;
	void *ctx;
};

static void
print_shown(void *ctx, const char *p, size_t n)
{
	struct print_out *po = ctx;

	if (n == 0)
		return;
	po->emit(po->ctx, p, n);
	po->pr->last = p[n - 1];
}

void
ray_termsafe_print(struct ray_termsafe_print *pr, const char *text,
    size_t len, int end, ray_termsafe_emit *emit, void *ctx)
{
	struct print_out po = { pr, emit, ctx };

	if (end) {
		ray_termsafe_feed(&pr->ts, NULL, 0, 1, print_shown, &po);
		if (pr->open && pr->last != '\n')
			emit(ctx, "\n", 1);
		pr->open = 0;
		return;
	}
	if (len == 0)
		return;
	ray_termsafe_feed(&pr->ts, text, len, 0, print_shown, &po);
	pr->open = 1;
}
