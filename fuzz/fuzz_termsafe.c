/*
 * fuzz_termsafe.c - untrusted text made safe to show (src/termsafe.h).
 *
 * Promises checked on every input: the text shown does not depend on
 * where the input was cut into feeds; it holds no control character but
 * newline, tab and CR before a newline, no DEL, no C1 control and only
 * valid UTF-8; and it is at most 6 times as long as the input.
 *
 * Input layout: byte 0 is the size of every feed but the last (0: one
 * feed of everything); the rest is the text.
 */
#include "buf.h"
#include "fuzz.h"
#include "termsafe.h"

#include <stdint.h>
#include <string.h>

static void
to_buf(void *ctx, const char *p, size_t n)
{
	ray_buf_add(ctx, p, n);
}

static void
shown(const char *s, size_t n, size_t piece, struct ray_buf *b)
{
	struct ray_termsafe ts = RAY_TERMSAFE_INIT;
	size_t i, k;

	if (piece == 0)
		piece = n > 0 ? n : 1;
	for (i = 0; i < n; i += k) {
		k = n - i < piece ? n - i : piece;
		ray_termsafe_feed(&ts, s + i, k, 0, to_buf, b);
	}
	ray_termsafe_feed(&ts, NULL, 0, 1, to_buf, b);
}

/* The length of the valid UTF-8 sequence at p, or 0. */
static size_t
valid(const unsigned char *p, size_t n)
{
	size_t len, i;
	uint32_t c;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, c = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, c = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, c = p[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff || (c >= 0x80 && c < 0xa0))
		return 0;
	return len;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ray_buf whole = RAY_BUF_INIT, cut = RAY_BUF_INIT;
	const unsigned char *o;
	size_t i, k;

	if (size == 0)
		return 0;
	shown((const char *)data + 1, size - 1, 0, &whole);
	shown((const char *)data + 1, size - 1, data[0], &cut);
	if (whole.len != cut.len || (whole.len > 0 &&
	    memcmp(whole.data, cut.data, whole.len) != 0))
		bad("fed in pieces of %u, the text shows differently", data[0]);
	if (whole.len > 6 * (size - 1))
		bad("%zu bytes show as %zu", size - 1, whole.len);
	o = (const unsigned char *)whole.data;
	for (i = 0; i < whole.len; i += k) {
		if (o[i] < 0x20 && o[i] != '\n' && o[i] != '\t' &&
		    !(o[i] == '\r' && i + 1 < whole.len && o[i + 1] == '\n'))
			bad("control 0x%02x shown at %zu", o[i], i);
		if (o[i] == 0x7f)
			bad("DEL shown at %zu", i);
		k = valid(o + i, whole.len - i);
		if (k == 0)
			bad("no valid UTF-8 (or a C1 control) at %zu", i);
	}
	ray_buf_release(&whole);
	ray_buf_release(&cut);
	return 0;
}
