/*
 * fuzz_tagparse.c - the streaming tag parser (src/tagparse.h).
 *
 * The parser promises that its outcome never depends on where the input
 * was cut into chunks.  Each input is parsed twice, whole in one feed and
 * in chunks, and the two outcomes (every tag with its offset, attributes
 * and body, all <print> text with its ends, the error code, message and
 * hint) must be identical.  After an error every further feed, and
 * finish, must report that same error.
 *
 * Input layout:
 *
 *	byte 0		low 3 bits: n, the number of chunk-size bytes;
 *			high 5 bits: r; r == 31 repeats the payload's last
 *			byte until the stream is 68 KiB long, to reach the
 *			64 KiB limit of an opening tag
 *	bytes 1..n	chunk sizes, used in turn (0 is an empty feed);
 *			with n == 0 the chunks are single bytes (after a
 *			whole round of empty feeds, one byte is fed)
 *	the rest	the payload: the agent's output
 */
#include "buf.h"
#include "ray.h"
#include "fuzz.h"
#include "tagparse.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How far a repeated last byte fills: just above the opening-tag limit. */
#define STREAM_MAX (RAY_TAG_MAX_OPEN + 4096)


static const char *const names[] = {
	"goto", "reset", "call", "function", "fork", "result",
	"ask", "await", "call-workflow", "function-workflow", "fork-workflow",
	"reset-workflow",
};

static void
record(void *ud, const char *text, size_t len, int end)
{
	struct ray_buf *b = ud;

	ray_buf_add(b, text, len);
	if (end)
		ray_buf_adds(b, len == 0 ? "[END]" : "[BADEND]");
}

static void
add_escaped(struct ray_buf *b, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			ray_buf_addf(b, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			ray_buf_addf(b, "\\x%02x", c);
		else
			ray_buf_addc(b, (char)c);
	}
}

/* Check what the header promises of each tag. */
static void
check_tags(const struct ray_tagparse *p, size_t streamlen)
{
	const struct ray_tag *t;
	size_t i, j, k;
	int known;

	for (i = 0; i < ray_tagparse_count(p); i++) {
		t = ray_tagparse_tag(p, i);
		known = 0;
		for (k = 0; k < ARRAY_SIZE(names); k++)
			if (strcmp(t->name, names[k]) == 0)
				known = 1;
		if (!known)
			bad("tag %zu has name '%s'", i, t->name);
		if (t->offset >= streamlen || t->body_len > streamlen ||
		    t->body[t->body_len] != '\0' ||
		    (i > 0 &&
		    t->offset <= ray_tagparse_tag(p, i - 1)->offset))
			bad("tag %zu (<%s> at %zu, body %zu bytes) does not "
			    "fit a stream of %zu bytes", i, t->name,
			    t->offset, t->body_len, streamlen);
		for (j = 0; j < t->nattrs; j++)
			for (k = 0; k < j; k++)
				if (strcmp(t->attrs[j].key,
				    t->attrs[k].key) == 0)
					bad("tag %zu has attribute '%s' twice",
					    i, t->attrs[j].key);
	}
	if (ray_tagparse_tag(p, ray_tagparse_count(p)) != NULL)
		bad("ray_tagparse_tag() past the end is not NULL");
}

/* The whole outcome of one parse, as text. */
static void
describe(const struct ray_tagparse *p, int rc, const struct ray_err *err,
    const struct ray_buf *out, struct ray_buf *d)
{
	const struct ray_tag *t;
	size_t i, j;

	for (i = 0; i < ray_tagparse_count(p); i++) {
		t = ray_tagparse_tag(p, i);
		ray_buf_addf(d, "<%s>@%zu", t->name, t->offset);
		for (j = 0; j < t->nattrs; j++) {
			ray_buf_addf(d, " %s=\"", t->attrs[j].key);
			add_escaped(d, t->attrs[j].value,
			    strlen(t->attrs[j].value));
			ray_buf_addc(d, '"');
		}
		ray_buf_adds(d, " body=\"");
		add_escaped(d, t->body, t->body_len);
		ray_buf_adds(d, "\"\n");
	}
	ray_buf_adds(d, "print=\"");
	add_escaped(d, ray_buf_str(out), out->len);
	ray_buf_adds(d, "\"\n");
	if (rc != 0)
		ray_buf_addf(d, "error %d: %s\nhint: %s\n", rc, err->msg,
		    err->hint);
}

/* After an error, the parser must keep reporting exactly that error. */
static void
check_same_error(int rc, const struct ray_err *e, int rc0,
    const struct ray_err *e0, const char *when)
{
	if (rc != rc0 || strcmp(e->msg, e0->msg) != 0 ||
	    strcmp(e->hint, e0->hint) != 0)
		bad("after error %d (%s), %s gave %d (%s)", rc0, e0->msg, when,
		    rc, e->msg);
}

static void
parse(const char *s, size_t len, const uint8_t *sizes, size_t nsizes,
    struct ray_buf *d)
{
	struct ray_buf out = RAY_BUF_INIT;
	struct ray_tagparse *p = ray_tagparse_new(record, &out);
	struct ray_err err, first;
	size_t off = 0, n, k = 0, zeros = 0;
	int rc = 0, r;

	memset(&err, 0, sizeof(err));
	memset(&first, 0, sizeof(first));
	if (sizes == NULL) {
		rc = ray_tagparse_feed(p, s, len, &err);
	} else {
		/* Every chunk is fed, even after an error. */
		do {
			n = nsizes ? sizes[k++ % nsizes] : 1;
			/* A whole round of empty feeds: move on by a byte. */
			zeros = n == 0 ? zeros + 1 : 0;
			if (zeros > nsizes)
				n = 1, zeros = 0;
			if (n > len - off)
				n = len - off;
			r = ray_tagparse_feed(p, s + off, n, &err);
			if (rc != 0)
				check_same_error(r, &err, rc, &first,
				    "a later feed");
			else if (r != 0) {
				rc = r;
				first = err;
			}
			off += n;
		} while (off < len);
	}
	if (rc == 0) {
		rc = ray_tagparse_finish(p, &err);
	} else {
		first = err;
		r = ray_tagparse_finish(p, &err);
		check_same_error(r, &err, rc, &first, "finish");
	}
	if (rc != 0 && (err.code != rc || err.msg[0] == '\0'))
		bad("error %d with code %d and message '%s'", rc, err.code,
		    err.msg);
	check_tags(p, len);
	describe(p, rc, &err, &out, d);
	ray_tagparse_free(p);
	ray_buf_release(&out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ray_buf stream = RAY_BUF_INIT, whole = RAY_BUF_INIT,
	    chunked = RAY_BUF_INIT;
	const uint8_t *sizes;
	size_t nsizes, plen;
	int repeat;
	const char *payload;

	if (size < 1)
		return 0;
	nsizes = data[0] & 7;
	repeat = (data[0] >> 3) == 31;
	if (size < 1 + nsizes)
		return 0;
	sizes = data + 1;
	payload = (const char *)data + 1 + nsizes;
	plen = size - 1 - nsizes;
	ray_buf_add(&stream, payload, plen);
	while (repeat && plen > 0 && stream.len < STREAM_MAX)
		ray_buf_addc(&stream, payload[plen - 1]);

	parse(ray_buf_str(&stream), stream.len, NULL, 0, &whole);
	parse(ray_buf_str(&stream), stream.len, sizes, nsizes, &chunked);
	if (whole.len != chunked.len || memcmp(ray_buf_str(&whole),
	    ray_buf_str(&chunked), whole.len) != 0)
		bad("chunked parse differs from the whole one\n--- whole:\n%s"
		    "--- chunked:\n%s", ray_buf_str(&whole),
		    ray_buf_str(&chunked));
	ray_buf_release(&stream);
	ray_buf_release(&whole);
	ray_buf_release(&chunked);
	return 0;
}
