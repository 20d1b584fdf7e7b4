/*
 * test_bridge.c - the hook bridge's frames (src/bridge.h): a request or
 * an answer reads the same cut at every byte; the bytes after a frame are
 * left; each fault of a header is refused with its reason, and a length
 * over 16 MiB before a byte of the body is read.
 */
#include "testlib.h"
#include "bridge.h"

static const char TOKEN[] =
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/* A request for `body`, with `extra` bytes after it, in buf; its length. */
static size_t
request(unsigned char *buf, const char *body, const char *extra)
{
	size_t n = strlen(body);

	ray_bridge_request_header(buf, TOKEN, (uint32_t)n);
	memcpy(buf + RAY_BRIDGE_REQ_HDR, body, n);
	memcpy(buf + RAY_BRIDGE_REQ_HDR + n, extra, strlen(extra));
	return RAY_BRIDGE_REQ_HDR + n + strlen(extra);
}

/* Feed s[0..n) cut at `cut`: the result, and in *used what was taken. */
static int
read_cut(struct ray_bridge_reader *r, const unsigned char *s, size_t n,
    size_t cut, size_t *used, struct ray_err *err)
{
	size_t u1 = 0, u2 = 0;
	int rc;

	rc = ray_bridge_read(r, s, cut, &u1, err);
	if (rc == 0)
		rc = ray_bridge_read(r, s + cut, n - cut, &u2, err);
	*used = u1 + u2;
	return rc;
}

TEST(a_request_reads_the_same_cut_anywhere)
{
	unsigned char buf[256];
	size_t n = request(buf, "{\"tool_name\":\"Bash\"}", "after"), cut, used;
	struct ray_bridge_reader r;
	struct ray_err err;

	for (cut = 0; cut <= n; cut++) {
		ray_bridge_reader_init(&r, 0);
		ASSERT_EQ(read_cut(&r, buf, n, cut, &used, &err), 1);
		ASSERT_EQ(used, n - strlen("after"));
		ASSERT_STREQ(r.token, TOKEN);
		ASSERT_STREQ(ray_buf_str(&r.body), "{\"tool_name\":\"Bash\"}");
		ASSERT_EQ(ray_bridge_read(&r, buf, n, &used, &err), 1);
		ASSERT_EQ(used, 0);
		ray_bridge_reader_release(&r);
	}
}

TEST(an_answer_reads_the_same_cut_anywhere)
{
	unsigned char buf[64];
	size_t n = RAY_BRIDGE_ANS_HDR + 4, cut, used;
	struct ray_bridge_reader r;
	struct ray_err err;

	ray_bridge_answer_header(buf, 2, 4);
	memcpy(buf + RAY_BRIDGE_ANS_HDR, "deny", 4);
	for (cut = 0; cut <= n; cut++) {
		ray_bridge_reader_init(&r, 1);
		ASSERT_EQ(read_cut(&r, buf, n, cut, &used, &err), 1);
		ASSERT_EQ(used, n);
		ASSERT_EQ(r.code, 2);
		ASSERT_STREQ(ray_buf_str(&r.body), "deny");
		ray_bridge_reader_release(&r);
	}
}

TEST(an_empty_body_is_complete_with_the_header)
{
	unsigned char buf[128];
	size_t n = request(buf, "", ""), used;
	struct ray_bridge_reader r;
	struct ray_err err;

	ray_bridge_reader_init(&r, 0);
	ASSERT_EQ(ray_bridge_read(&r, buf, n - 1, &used, &err), 0);
	ASSERT_EQ(ray_bridge_read(&r, buf + n - 1, 1, &used, &err), 1);
	ASSERT_EQ(r.body.len, 0);
	ray_bridge_reader_release(&r);
}

/* The header `buf` (a request unless answer) is refused with `code`, `why`. */
static int
refused(const unsigned char *buf, int answer, int code, const char *why)
{
	struct ray_bridge_reader r;
	struct ray_err err;
	size_t used;
	int rc, ok;

	ray_bridge_reader_init(&r, answer);
	rc = ray_bridge_read(&r, buf, answer ? RAY_BRIDGE_ANS_HDR :
	    RAY_BRIDGE_REQ_HDR, &used, &err);
	/* Refused on the header alone: no byte of a body was taken. */
	ok = rc == code && strcmp(err.msg, why) == 0 && r.body.len == 0;
	ray_bridge_reader_release(&r);
	return ok;
}

TEST(each_fault_of_a_request_header_is_refused)
{
	unsigned char buf[128];

	request(buf, "", "");
	buf[0] = 'X';
	ASSERT(refused(buf, 0, RAY_EINVAL, "not a bridge frame"));
	request(buf, "", "");
	buf[4] = 2;
	ASSERT(refused(buf, 0, RAY_EINVAL, "a bridge frame of another version"));
	request(buf, "", "");
	buf[8 + 63] = 'g';
	ASSERT(refused(buf, 0, RAY_EINVAL,
	    "a token that is not 64 hexadecimal digits"));
	ray_bridge_request_header(buf, TOKEN, RAY_BRIDGE_BODY_MAX + 1);
	ASSERT(refused(buf, 0, RAY_ETOOBIG, "hook input over 16 MiB"));
}

TEST(each_fault_of_an_answer_header_is_refused)
{
	unsigned char buf[RAY_BRIDGE_ANS_HDR];

	ray_bridge_answer_header(buf, 1, 0);
	ASSERT(refused(buf, 1, RAY_EINVAL, "an answer code other than 0 or 2"));
	ray_bridge_answer_header(buf, 0, RAY_BRIDGE_BODY_MAX + 1);
	ASSERT(refused(buf, 1, RAY_ETOOBIG, "an answer over 16 MiB"));
	ray_bridge_answer_header(buf, 0, RAY_BRIDGE_BODY_MAX);
	ASSERT(!refused(buf, 1, RAY_ETOOBIG, "an answer over 16 MiB"));
}

TEST(tokens)
{
	ASSERT(ray_bridge_token_ok(TOKEN));
	ASSERT(ray_bridge_token_ok("ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789"));
	ASSERT(!ray_bridge_token_ok("0123"));
	ASSERT(!ray_bridge_token_ok(
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0"));
	ASSERT(!ray_bridge_token_ok(
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdeg"));
}

TESTS(T_CASE(a_request_reads_the_same_cut_anywhere),
    T_CASE(an_answer_reads_the_same_cut_anywhere),
    T_CASE(an_empty_body_is_complete_with_the_header),
    T_CASE(each_fault_of_a_request_header_is_refused),
    T_CASE(each_fault_of_an_answer_header_is_refused),
    T_CASE(tokens))
