/*
 * fuzz_bridge.c - the hook bridge's frames as they arrive on its socket
 * (src/bridge.h): requests from any local peer of the same user, and
 * answers as the client reads them.
 *
 * Promises checked on every input: the reader gives the same result, the
 * same number of bytes taken, the same token, code and body however the
 * input is cut into feeds; a complete frame's body is exactly the bytes
 * after its header, as long as the header says and at most 16 MiB; a
 * request's token is 64 hexadecimal digits and an answer's code 0 or 2;
 * a failed or finished reader takes nothing more and says the same again;
 * and a header made by ray_bridge_request_header or
 * ray_bridge_answer_header reads back as what was made.
 *
 * Input layout: byte 0 is the size of every feed but the last (0: one
 * feed of everything), byte 1 chooses a request (even) or an answer
 * (odd); the rest is the stream.
 */
#include "bridge.h"
#include "fuzz.h"

#include <stdint.h>
#include <string.h>

struct outcome {
	int rc;
	size_t used;
	struct ray_bridge_reader r;
};

static void
feed(struct outcome *o, const uint8_t *s, size_t n, size_t piece, int answer)
{
	struct ray_err err;
	size_t i, k, used;

	ray_bridge_reader_init(&o->r, answer);
	o->rc = 0;
	o->used = 0;
	if (piece == 0)
		piece = n > 0 ? n : 1;
	for (i = 0; i < n && o->rc == 0; i += k) {
		k = n - i < piece ? n - i : piece;
		o->rc = ray_bridge_read(&o->r, s + i, k, &used, &err);
		if (used > k)
			bad("took %zu of %zu bytes", used, k);
		o->used += used;
		if (o->rc == 0 && used != k)
			bad("wants more but left %zu bytes", k - used);
	}
	if (o->rc != 0) {
		int again = ray_bridge_read(&o->r, s, n, &used, &err);

		if (again != o->rc || used != 0)
			bad("a reader that ended with %d said %d, taking %zu",
			    o->rc, again, used);
	}
}

static void
check_complete(const struct outcome *o, const uint8_t *s, int answer)
{
	size_t hlen = answer ? RAY_BRIDGE_ANS_HDR : RAY_BRIDGE_REQ_HDR;

	if (o->r.len > RAY_BRIDGE_BODY_MAX)
		bad("a body of %u bytes", o->r.len);
	if (o->r.body.len != o->r.len || o->used != hlen + o->r.len)
		bad("body %zu of %u, used %zu", o->r.body.len, o->r.len, o->used);
	if (o->r.len > 0 && memcmp(o->r.body.data, s + hlen, o->r.len) != 0)
		bad("the body is not the bytes after the header");
	if (answer && o->r.code != 0 && o->r.code != 2)
		bad("answer code %d", o->r.code);
	if (!answer && !ray_bridge_token_ok(o->r.token))
		bad("token '%s'", o->r.token);
}

static void
round_trip(const uint8_t *s, size_t n)
{
	unsigned char hdr[RAY_BRIDGE_REQ_HDR];
	char token[RAY_BRIDGE_TOKEN_LEN + 1];
	struct ray_bridge_reader r;
	uint32_t len = 0;
	size_t i, used;
	int code;

	for (i = 0; i < RAY_BRIDGE_TOKEN_LEN; i++)
		token[i] = "0123456789abcdef"[i < n ? s[i] & 15 : 0];
	token[RAY_BRIDGE_TOKEN_LEN] = '\0';
	for (i = 0; i < 4 && i < n; i++)
		len = len << 8 | s[i];
	len %= RAY_BRIDGE_BODY_MAX + 1;
	ray_bridge_request_header(hdr, token, len);
	ray_bridge_reader_init(&r, 0);
	if (ray_bridge_read(&r, hdr, sizeof(hdr), &used, NULL) != (len == 0) ||
	    used != sizeof(hdr) || r.len != len || strcmp(r.token, token) != 0)
		bad("a request header made here does not read back");
	ray_bridge_reader_release(&r);
	code = n > 0 && (s[0] & 1) ? 2 : 0;
	ray_bridge_answer_header(hdr, code, len);
	ray_bridge_reader_init(&r, 1);
	if (ray_bridge_read(&r, hdr, RAY_BRIDGE_ANS_HDR, &used, NULL) != (len == 0) ||
	    r.len != len || r.code != code)
		bad("an answer header made here does not read back");
	ray_bridge_reader_release(&r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct outcome whole, split;
	const uint8_t *s;
	size_t n;
	int answer;

	if (size < 2)
		return 0;
	answer = data[1] & 1;
	s = data + 2;
	n = size - 2;
	feed(&whole, s, n, 0, answer);
	feed(&split, s, n, data[0], answer);
	if (whole.rc != split.rc || whole.used != split.used ||
	    whole.r.len != split.r.len || whole.r.code != split.r.code ||
	    strcmp(whole.r.token, split.r.token) != 0 ||
	    whole.r.body.len != split.r.body.len ||
	    (whole.r.body.len > 0 && memcmp(whole.r.body.data,
	    split.r.body.data, whole.r.body.len) != 0))
		bad("fed whole: %d after %zu bytes; in pieces of %u: %d after %zu",
		    whole.rc, whole.used, data[0], split.rc, split.used);
	if (whole.rc == 1)
		check_complete(&whole, s, answer);
	else if (whole.rc != 0 && whole.rc != RAY_EINVAL && whole.rc != RAY_ETOOBIG)
		bad("result %d", whole.rc);
	round_trip(s, n);
	ray_bridge_reader_release(&whole.r);
	ray_bridge_reader_release(&split.r);
	return 0;
}
