/*
 * test_tagparse.c - unit tests of the streaming tag parser: the grammar,
 * the rescan rule for tags that never close, <print> streaming, the
 * errors, and above all that the outcome never depends on how the input
 * was cut into chunks.
 */
#include "buf.h"
#include "ray.h"
#include "tagparse.h"
#include "testlib.h"

#include <stdint.h>

/* Print callback: collects the text and marks each end with "[END]". */
static void
record(void *ud, const char *text, size_t len, int end)
{
	struct ray_buf *b = ud;

	ray_buf_add(b, text, len);
	if (end)
		ray_buf_adds(b, len == 0 ? "[END]" : "[BADEND]");
}

/* A parser run over one whole input, for the tests that look at tags. */
struct fx {
	struct ray_tagparse *p;
	struct ray_buf out;
	struct ray_err err;
	int rc;
};

static void
fx_parse(struct fx *f, const char *in, size_t len)
{
	memset(f, 0, sizeof(*f));
	f->p = ray_tagparse_new(record, &f->out);
	f->rc = ray_tagparse_feed(f->p, in, len, &f->err);
	if (f->rc == 0)
		f->rc = ray_tagparse_finish(f->p, &f->err);
}

static void
fx_free(struct fx *f)
{
	ray_tagparse_free(f->p);
	ray_buf_release(&f->out);
}

/*
 * Control bytes, quotes and backslashes are escaped so that a description
 * is one unambiguous line per item.
 */
static void
add_escaped(struct ray_buf *b, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\n')
			ray_buf_adds(b, "\\n");
		else if (c == '\r')
			ray_buf_adds(b, "\\r");
		else if (c == '\0')
			ray_buf_adds(b, "\\0");
		else if (c == '"' || c == '\\')
			ray_buf_addf(b, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			ray_buf_addf(b, "\\x%02x", c);
		else
			ray_buf_addc(b, (char)c);
	}
}

/*
 * Everything a run produced, as text: one line per tag with its offset,
 * attributes and body, then all print output, then the error if any.
 */
static void
describe(const struct ray_tagparse *p, int rc, const struct ray_err *err,
    const struct ray_buf *out, struct ray_buf *d)
{
	const struct ray_tag *t;
	size_t i, j;

	for (i = 0; i < ray_tagparse_count(p); i++) {
		t = ray_tagparse_tag(p, i);
		ray_buf_addf(d, "%s@%zu", t->name, t->offset);
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
	add_escaped(d, out->data ? out->data : "", out->len);
	ray_buf_adds(d, "\"\n");
	if (rc != 0)
		ray_buf_addf(d, "error %d: %s\n", rc, err->msg);
}

/*
 * Feed `in` cut at the `ncuts` ascending offsets in `cuts` (repeats make
 * empty chunks), finish, and describe the outcome in `d`.
 */
static void
run_cuts(const char *in, size_t len, const size_t *cuts, size_t ncuts,
    struct ray_buf *d)
{
	struct ray_buf out = RAY_BUF_INIT;
	struct ray_err err;
	struct ray_tagparse *p = ray_tagparse_new(record, &out);
	size_t i, prev = 0, end;
	int rc = 0;

	memset(&err, 0, sizeof(err));
	for (i = 0; i <= ncuts && rc == 0; i++) {
		end = i < ncuts ? cuts[i] : len;
		rc = ray_tagparse_feed(p, in + prev, end - prev, &err);
		prev = end;
	}
	if (rc == 0)
		rc = ray_tagparse_finish(p, &err);
	describe(p, rc, &err, &out, d);
	ray_tagparse_free(p);
	ray_buf_release(&out);
}

TEST(transition_tags)
{
	static const struct {
		const char *in;
		const char *name;
		const char *body;
		const char *k1, *v1, *k2, *v2;
	} cases[] = {
		{ "<goto>B</goto>", "goto", "B", NULL, NULL, NULL, NULL },
		{ "<reset> keep \n going </reset>", "reset",
		    " keep \n going ", NULL, NULL, NULL, NULL },
		{ "<call workflow=\"sub\" next='after'>do it</call>", "call",
		    "do it", "workflow", "sub", "next", "after" },
		{ "<function name='f' arg=\"x 'y' z\">\npayload\n</function>",
		    "function", "\npayload\n", "name", "f", "arg", "x 'y' z" },
		{ "<fork next=\"join\">\n- a\n- b\n</fork>", "fork",
		    "\n- a\n- b\n", "next", "join", NULL, NULL },
		{ "<result>\n  done  \n</result>", "result", "\n  done  \n",
		    NULL, NULL, NULL, NULL },
		{ "<result say='a \"quoted\" word'></result>", "result", "",
		    "say", "a \"quoted\" word", NULL, NULL },
	};
	const struct ray_tag *t;
	struct fx f;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		fx_parse(&f, cases[i].in, strlen(cases[i].in));
		ASSERT_EQ(f.rc, 0);
		ASSERT_EQ(ray_tagparse_count(f.p), 1);
		t = ray_tagparse_tag(f.p, 0);
		ASSERT_STREQ(t->name, cases[i].name);
		ASSERT_STREQ(t->body, cases[i].body);
		ASSERT_EQ(t->body_len, strlen(cases[i].body));
		ASSERT_EQ(t->offset, 0);
		ASSERT_EQ(t->nattrs,
		    (cases[i].k1 != NULL) + (cases[i].k2 != NULL));
		if (cases[i].k1 != NULL) {
			ASSERT_STREQ(t->attrs[0].key, cases[i].k1);
			ASSERT_STREQ(t->attrs[0].value, cases[i].v1);
			ASSERT_STREQ(ray_tag_attr(t, cases[i].k1), cases[i].v1);
		}
		if (cases[i].k2 != NULL) {
			ASSERT_STREQ(t->attrs[1].key, cases[i].k2);
			ASSERT_STREQ(ray_tag_attr(t, cases[i].k2), cases[i].v2);
		}
		ASSERT(ray_tag_attr(t, "missing") == NULL);
		ASSERT(ray_tagparse_tag(f.p, 1) == NULL);
		fx_free(&f);
	}
}

TEST(white_space_after_name)
{
	static const char in[] =
	    "<goto\tnext='a'\n>A</goto><reset\r\n>R</reset>";
	const struct ray_tag *t;
	struct fx f;

	fx_parse(&f, in, strlen(in));
	ASSERT_EQ(f.rc, 0);
	ASSERT_EQ(ray_tagparse_count(f.p), 2);
	t = ray_tagparse_tag(f.p, 0);
	ASSERT_STREQ(t->name, "goto");
	ASSERT_STREQ(ray_tag_attr(t, "next"), "a");
	ASSERT_STREQ(t->body, "A");
	t = ray_tagparse_tag(f.p, 1);
	ASSERT_STREQ(t->name, "reset");
	ASSERT_EQ(t->offset, 24);
	ASSERT_EQ(t->nattrs, 0);
	ASSERT_STREQ(t->body, "R");
	fx_free(&f);
}

TEST(near_names_are_text)
{
	static const char in[] =
	    "<results>a</results> <gotoX>b</gotoX> <Goto>c</Goto> "
	    "<goto/> < goto>d</goto> <go>e</go> <GOTO>f</GOTO> <>g</> "
	    "<call-work>h</call-work> <printer>i</printer>";
	struct fx f;

	fx_parse(&f, in, strlen(in));
	ASSERT_EQ(f.rc, 0);
	ASSERT_EQ(ray_tagparse_count(f.p), 0);
	ASSERT_EQ(f.out.len, 0);
	fx_free(&f);
}

TEST(reserved_names_are_tags)
{
	static const char in[] =
	    "<ask next=\"A\">q</ask><await>w</await>"
	    "<call-workflow name=\"x\">y</call-workflow>"
	    "<function-workflow>f</function-workflow>"
	    "<fork-workflow>k</fork-workflow>"
	    "<reset-workflow>r</reset-workflow><call>c</call>";
	static const char *const names[] = {
		"ask", "await", "call-workflow", "function-workflow",
		"fork-workflow", "reset-workflow", "call",
	};
	static const char *const bodies[] = {
		"q", "w", "y", "f", "k", "r", "c",
	};
	const struct ray_tag *t;
	struct fx f;
	size_t i;

	fx_parse(&f, in, strlen(in));
	ASSERT_EQ(f.rc, 0);
	ASSERT_EQ(ray_tagparse_count(f.p), ARRAY_SIZE(names));
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		t = ray_tagparse_tag(f.p, i);
		ASSERT_STREQ(t->name, names[i]);
		ASSERT_STREQ(t->body, bodies[i]);
	}
	ASSERT_STREQ(ray_tag_attr(ray_tagparse_tag(f.p, 0), "next"), "A");
	ASSERT_STREQ(ray_tag_attr(ray_tagparse_tag(f.p, 2), "name"), "x");
	fx_free(&f);
}

TEST(several_tags_and_raw_bodies)
{
	static const char in[] =
	    "<result>use <goto>X</goto></result> and <reset>R</reset>"
	    "<goto>A</goto>";
	const struct ray_tag *t;
	struct fx f;

	fx_parse(&f, in, strlen(in));
	ASSERT_EQ(f.rc, 0);
	ASSERT_EQ(ray_tagparse_count(f.p), 3);
	t = ray_tagparse_tag(f.p, 0);
	ASSERT_STREQ(t->name, "result");
	ASSERT_STREQ(t->body, "use <goto>X</goto>");
	ASSERT_EQ(t->offset, 0);
	t = ray_tagparse_tag(f.p, 1);
	ASSERT_STREQ(t->name, "reset");
	ASSERT_STREQ(t->body, "R");
	ASSERT_EQ(t->offset, 40);
	t = ray_tagparse_tag(f.p, 2);
	ASSERT_STREQ(t->name, "goto");
	ASSERT_STREQ(t->body, "A");
	ASSERT_EQ(t->offset, 56);
	fx_free(&f);
}

TEST(nul_bytes_in_body)
{
	static const char in[] = "<result>a\0b</result>";
	const struct ray_tag *t;
	struct fx f;

	fx_parse(&f, in, sizeof(in) - 1);
	ASSERT_EQ(f.rc, 0);
	ASSERT_EQ(ray_tagparse_count(f.p), 1);
	t = ray_tagparse_tag(f.p, 0);
	ASSERT_EQ(t->body_len, 3);
	ASSERT(memcmp(t->body, "a\0b", 4) == 0);
	fx_free(&f);
}

TEST(unclosed_body_is_rescanned)
{
	static const char in[] = "I use <result> to end.\n<goto>B</goto>";
	const struct ray_tag *t;
	struct fx f;

	fx_parse(&f, in, strlen(in));
	ASSERT_EQ(f.rc, 0);
	ASSERT_EQ(ray_tagparse_count(f.p), 1);
	t = ray_tagparse_tag(f.p, 0);
	ASSERT_STREQ(t->name, "goto");
	ASSERT_STREQ(t->body, "B");
	ASSERT_EQ(t->offset, 23);
	fx_free(&f);
}

/*
 * A name whose body never closed cannot close later: thousands of such
 * opening tags are all prose, with or without attributes, and a tag of
 * another name after them still counts.
 */
TEST(many_unclosed_tags)
{
	struct ray_buf in = RAY_BUF_INIT;
	const struct ray_tag *t;
	struct fx f;
	int i;

	for (i = 0; i < 20000; i++)
		ray_buf_adds(&in, i % 2 ? "<result> " : "<result x='1'>");
	ray_buf_adds(&in, "<goto>B</goto> <result>");
	fx_parse(&f, in.data, in.len);
	ASSERT_EQ(f.rc, 0);
	ASSERT_EQ(ray_tagparse_count(f.p), 1);
	t = ray_tagparse_tag(f.p, 0);
	ASSERT_STREQ(t->name, "goto");
	ASSERT_STREQ(t->body, "B");
	ASSERT_EQ(t->offset, in.len - strlen("<goto>B</goto> <result>"));
	fx_free(&f);
	ray_buf_release(&in);
}

TEST(rescan_repeats)
{
	static const char in[] =
	    "<result>a <fork x='1'>b <print>P</print> <goto>C</goto>";
	const struct ray_tag *t;
	struct fx f;

	fx_parse(&f, in, strlen(in));
	ASSERT_EQ(f.rc, 0);
	ASSERT_EQ(ray_tagparse_count(f.p), 1);
	t = ray_tagparse_tag(f.p, 0);
	ASSERT_STREQ(t->name, "goto");
	ASSERT_STREQ(t->body, "C");
	ASSERT_EQ(t->offset, 41);
	ASSERT_STREQ(ray_buf_str(&f.out), "P[END]");
	fx_free(&f);
}

TEST(unfinished_open_tag_is_text)
{
	static const char in1[] = "see <goto next=\"x";
	static const char in2[] = "text <goto next=\"x<result>r</result>";
	const struct ray_tag *t;
	struct fx f;

	fx_parse(&f, in1, strlen(in1));
	ASSERT_EQ(f.rc, 0);
	ASSERT_EQ(ray_tagparse_count(f.p), 0);
	fx_free(&f);

	/* The bytes after the '<' are text, scanned like any other. */
	fx_parse(&f, in2, strlen(in2));
	ASSERT_EQ(f.rc, 0);
	ASSERT_EQ(ray_tagparse_count(f.p), 1);
	t = ray_tagparse_tag(f.p, 0);
	ASSERT_STREQ(t->name, "result");
	ASSERT_STREQ(t->body, "r");
	ASSERT_EQ(t->offset, 18);
	fx_free(&f);
}

TEST(print_streams_as_it_arrives)
{
	struct ray_buf out = RAY_BUF_INIT;
	struct ray_tagparse *p = ray_tagparse_new(record, &out);
	struct ray_err err;

	ASSERT_EQ(ray_tagparse_feed(p, "before <print>hel", 17, &err), 0);
	ASSERT_STREQ(ray_buf_str(&out), "hel");
	/* A possible start of </print> is held back, and only that. */
	ASSERT_EQ(ray_tagparse_feed(p, "lo </pr", 7, &err), 0);
	ASSERT_STREQ(ray_buf_str(&out), "hello ");
	ASSERT_EQ(ray_tagparse_feed(p, "e> x</print", 11, &err), 0);
	ASSERT_STREQ(ray_buf_str(&out), "hello </pre> x");
	ASSERT_EQ(ray_tagparse_feed(p, ">after<print>2</print>", 22, &err), 0);
	ASSERT_STREQ(ray_buf_str(&out), "hello </pre> x[END]2[END]");
	ASSERT_EQ(ray_tagparse_finish(p, &err), 0);
	ASSERT_STREQ(ray_buf_str(&out), "hello </pre> x[END]2[END]");
	ASSERT_EQ(ray_tagparse_count(p), 0);
	ray_tagparse_free(p);
	ray_buf_release(&out);
}

TEST(print_unclosed_at_end)
{
	static const char in[] = "<print>partial </pri";
	struct fx f;

	fx_parse(&f, in, strlen(in));
	ASSERT_EQ(f.rc, 0);
	ASSERT_STREQ(ray_buf_str(&f.out), "partial </pri[END]");
	fx_free(&f);
}

TEST(print_inside_result_is_not_printed)
{
	static const char in[] =
	    "<result><print>no</print></result><print>yes</print>";
	struct fx f;

	fx_parse(&f, in, strlen(in));
	ASSERT_EQ(f.rc, 0);
	ASSERT_STREQ(ray_buf_str(&f.out), "yes[END]");
	ASSERT_EQ(ray_tagparse_count(f.p), 1);
	ASSERT_STREQ(ray_tagparse_tag(f.p, 0)->body, "<print>no</print>");
	fx_free(&f);
}

TEST(print_without_callback)
{
	static const char in[] = "<print>x</pr</print><goto>A</goto><print>y";
	struct ray_tagparse *p = ray_tagparse_new(NULL, NULL);
	struct ray_err err;

	ASSERT_EQ(ray_tagparse_feed(p, in, strlen(in), &err), 0);
	ASSERT_EQ(ray_tagparse_finish(p, &err), 0);
	ASSERT_EQ(ray_tagparse_count(p), 1);
	ASSERT_STREQ(ray_tagparse_tag(p, 0)->body, "A");
	ray_tagparse_free(p);
}

TEST(prints_only_finds_no_tags)
{
	static const char in[] = "<goto>A</goto> <result><print>in</print>"
	    "</result> <ask next=\"N\">q</ask><print>out</print>";
	struct ray_buf out = RAY_BUF_INIT;
	struct ray_tagparse *p = ray_tagparse_new_prints(record, &out);
	struct ray_err err;
	size_t i;

	/* One byte at a time: a <print> straddling reads is still found. */
	for (i = 0; i < strlen(in); i++)
		ASSERT_EQ(ray_tagparse_feed(p, in + i, 1, &err), 0);
	ASSERT_EQ(ray_tagparse_finish(p, &err), 0);
	ASSERT_EQ(ray_tagparse_count(p), 0);
	ASSERT_STREQ(ray_buf_str(&out), "in[END]out[END]");
	ray_tagparse_free(p);
	ray_buf_release(&out);
}

TEST(malformed_attributes)
{
	static const char *const bad[] = {
		"<goto next=A>x</goto>",
		"<goto next = \"A\">x</goto>",
		"<goto next =\"A\">x</goto>",
		"<goto next= \"A\">x</goto>",
		"<goto !>x</goto>",
		"<goto next=\"a\"other=\"b\">x</goto>",
		"<goto 1a=\"b\">x</goto>",
		"<goto next>x</goto>",
		"<goto next=\"a\" />",
		"<goto next='a\">x</goto>' other>",
		"<goto <goto>x</goto>",
	};
	struct fx f;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		fx_parse(&f, bad[i], strlen(bad[i]));
		if (f.rc != RAY_EINVAL)
			T_FAIL("input %zu: rc %d, expected RAY_EINVAL", i,
			    f.rc);
		ASSERT_STREQ(f.err.msg, "malformed attribute in <goto> tag at "
		    "byte 0: expected key=\"value\"");
		ASSERT_EQ(ray_tagparse_count(f.p), 0);
		fx_free(&f);
	}
	fx_parse(&f, "Hello there <fork x=y>", 22);
	ASSERT_EQ(f.rc, RAY_EINVAL);
	ASSERT_STREQ(f.err.msg, "malformed attribute in <fork> tag at byte "
	    "12: expected key=\"value\"");
	fx_free(&f);
}

TEST(duplicate_attribute)
{
	static const char in[] = "abc<fork next=\"a\" next='b'>x</fork>";
	struct fx f;

	fx_parse(&f, in, strlen(in));
	ASSERT_EQ(f.rc, RAY_EINVAL);
	ASSERT_STREQ(f.err.msg,
	    "duplicate attribute \"next\" in <fork> tag at byte 3");
	ASSERT_EQ(ray_tagparse_count(f.p), 0);
	fx_free(&f);

	/* Keys that only share a prefix are different keys. */
	fx_parse(&f, "<fork n='1' next='2' nex='3'>x</fork>", 37);
	ASSERT_EQ(f.rc, 0);
	ASSERT_EQ(ray_tagparse_tag(f.p, 0)->nattrs, 3);
	fx_free(&f);
}

TEST(error_is_sticky)
{
	struct ray_buf out = RAY_BUF_INIT;
	struct ray_tagparse *p = ray_tagparse_new(record, &out);
	struct ray_err err, again;

	ASSERT_EQ(ray_tagparse_feed(p, "<goto a='1' a=", 14, &err), RAY_EINVAL);
	/* This would complete the tag if the parser went on. */
	memset(&again, 0, sizeof(again));
	ASSERT_EQ(ray_tagparse_feed(p, "'2'>A</goto>", 12, &again), RAY_EINVAL);
	ASSERT_EQ(again.code, RAY_EINVAL);
	ASSERT_STREQ(again.msg, err.msg);
	ASSERT_EQ(ray_tagparse_feed(p, "<print>x</print>", 16, NULL),
	    RAY_EINVAL);
	memset(&again, 0, sizeof(again));
	ASSERT_EQ(ray_tagparse_finish(p, &again), RAY_EINVAL);
	ASSERT_STREQ(again.msg, err.msg);
	ASSERT_EQ(ray_tagparse_count(p), 0);
	ASSERT_EQ(out.len, 0);
	ray_tagparse_free(p);
	ray_buf_release(&out);
}

TEST(feed_after_finish_fails)
{
	struct ray_tagparse *p = ray_tagparse_new(NULL, NULL);
	struct ray_err err;

	ASSERT_EQ(ray_tagparse_finish(p, &err), 0);
	ASSERT_EQ(ray_tagparse_feed(p, "<goto>A</goto>", 14, &err), RAY_EINVAL);
	ASSERT_EQ(ray_tagparse_count(p), 0);
	ray_tagparse_free(p);
}

/* An opening tag `<goto a="xxx...">` that is exactly `total` bytes. */
static char *
open_tag_of(size_t total)
{
	char *s = xmalloc(total + sizeof("B</goto>"));

	memset(s, 'x', total);
	memcpy(s, "<goto a=\"", 9);
	memcpy(s + total - 2, "\">B</goto>", sizeof("\">B</goto>"));
	return s;
}

TEST(open_tag_limit)
{
	char *s;
	struct fx f;

	s = open_tag_of(RAY_TAG_MAX_OPEN);
	fx_parse(&f, s, strlen(s));
	free(s);
	ASSERT_EQ(f.rc, 0);
	ASSERT_EQ(ray_tagparse_count(f.p), 1);
	ASSERT_EQ(strlen(ray_tag_attr(ray_tagparse_tag(f.p, 0), "a")),
	    RAY_TAG_MAX_OPEN - 11);
	fx_free(&f);

	s = open_tag_of(RAY_TAG_MAX_OPEN + 1);
	fx_parse(&f, s, strlen(s));
	free(s);
	ASSERT_EQ(f.rc, RAY_ETOOBIG);
	ASSERT_STREQ(f.err.msg,
	    "opening <goto> tag at byte 0 is longer than 65536 bytes");
	ASSERT_EQ(ray_tagparse_count(f.p), 0);
	fx_free(&f);
}

/* `<result>` followed by `n` bytes of body, then `</result>` if `close`. */
static void
run_body_of(struct fx *f, size_t n, int close, size_t chunk)
{
	size_t len = 8 + n + (close ? 9 : 0), i;
	char *s = xmalloc(len);

	memset(s, 'x', len);
	memcpy(s, "<result>", 8);
	if (close)
		memcpy(s + 8 + n, "</result>", 9);
	memset(f, 0, sizeof(*f));
	f->p = ray_tagparse_new(record, &f->out);
	for (i = 0; i < len && f->rc == 0; i += chunk)
		f->rc = ray_tagparse_feed(f->p, s + i,
		    len - i < chunk ? len - i : chunk, &f->err);
	if (f->rc == 0)
		f->rc = ray_tagparse_finish(f->p, &f->err);
	free(s);
}

TEST(body_limit)
{
	struct fx f;

	run_body_of(&f, RAY_TAG_MAX_BODY, 1, 1 << 20);
	ASSERT_EQ(f.rc, 0);
	ASSERT_EQ(ray_tagparse_count(f.p), 1);
	ASSERT_EQ(ray_tagparse_tag(f.p, 0)->body_len, RAY_TAG_MAX_BODY);
	fx_free(&f);

	run_body_of(&f, RAY_TAG_MAX_BODY + 1, 1, 1 << 20);
	ASSERT_EQ(f.rc, RAY_ETOOBIG);
	ASSERT_STREQ(f.err.msg,
	    "<result> tag at byte 0 is longer than 16777216 bytes");
	fx_free(&f);

	/* Unclosed, fed whole: the limit holds before any rescan. */
	run_body_of(&f, RAY_TAG_MAX_BODY + 1, 0, SIZE_MAX);
	ASSERT_EQ(f.rc, RAY_ETOOBIG);
	fx_free(&f);
}

/*
 * Inputs for the chunking tests, with what feeding each whole must give.
 * Between them they cover prints (also cut off and with near-miss closing
 * tags), several tags, both quote styles, rescans, CRLF, NUL bytes and
 * errors.
 */
#define CASE(in, want) { in, sizeof(in) - 1, want }
static const struct {
	const char *in;
	size_t len;
	const char *want;
} inputs[] = {
	CASE("Plan:\n<print>Working on it</print>\n<print>step </pr 2</print>\n"
	    "<goto>next</goto>\n",
	    "goto@62 body=\"next\"\n"
	    "print=\"Working on it[END]step </pr 2[END]\"\n"),
	CASE("<fork next=\"join\" mode='all'>\n<result>x</result>\n</fork>\n"
	    "<call workflow='w' with=\"a'b\">go</call>",
	    "fork@0 next=\"join\" mode=\"all\" "
	    "body=\"\\n<result>x</result>\\n\"\n"
	    "call@57 workflow=\"w\" with=\"a'b\" body=\"go\"\n"
	    "print=\"\"\n"),
	CASE("I use <result> to end.\n<goto>B</goto>",
	    "goto@23 body=\"B\"\nprint=\"\"\n"),
	CASE("<call\r\n  workflow=\"w\"\r\n>body\r\nline</call>\r\n"
	    "<print>line1\r\nline2\r\n</print>\r\n<result>ok\r\n</result>",
	    "call@0 workflow=\"w\" body=\"body\\r\\nline\"\n"
	    "result@74 body=\"ok\\r\\n\"\n"
	    "print=\"line1\\r\\nline2\\r\\n[END]\"\n"),
	CASE("<print>a</print</print><print><</</p</print></print>x"
	    "<print>tail </pri",
	    "print=\"a</print[END]<</</p[END]tail </pri[END]\"\n"),
	CASE("<result>use <goto>X</goto></result> and <reset>R</reset>",
	    "result@0 body=\"use <goto>X</goto>\"\nreset@40 body=\"R\"\n"
	    "print=\"\"\n"),
	CASE("<result>a <fork>b <print>P</print> <goto>C</goto>",
	    "goto@35 body=\"C\"\nprint=\"P[END]\"\n"),
	CASE("text <goto next=\"x<result>r</result>",
	    "result@18 body=\"r\"\nprint=\"\"\n"),
	CASE("<results>no</results> <gotoX>no</gotoX> <<goto>Y</goto> "
	    "<call-workflow name=\"n\">cw</call-workflow><call>c</call>",
	    "goto@41 body=\"Y\"\ncall-workflow@56 name=\"n\" body=\"cw\"\n"
	    "call@98 body=\"c\"\nprint=\"\"\n"),
	CASE("<result>a\0b</result><goto>\0</goto>",
	    "result@0 body=\"a\\0b\"\ngoto@20 body=\"\\0\"\nprint=\"\"\n"),
	CASE("ok <goto>A</goto> <fork a=\"1\" a='2'>x</fork>",
	    "goto@3 body=\"A\"\nprint=\"\"\n"
	    "error -1001: duplicate attribute \"a\" in <fork> tag at byte 18\n"),
	CASE("<print>x</print><fork next=oops>",
	    "print=\"x[END]\"\n"
	    "error -1001: malformed attribute in <fork> tag at byte 16: "
	    "expected key=\"value\"\n"),
	CASE("<goto></goto><print></print>",
	    "goto@0 body=\"\"\nprint=\"[END]\"\n"),
	CASE("<goto\tnext='a'\n>A</goto><reset >R</reset>",
	    "goto@0 next=\"a\" body=\"A\"\nreset@24 body=\"R\"\nprint=\"\"\n"),
	CASE("<result><goto>A</goto>",
	    "goto@8 body=\"A\"\nprint=\"\"\n"),
	CASE("<goto><</goto><result></resul</result>",
	    "goto@0 body=\"<\"\nresult@14 body=\"</resul\"\nprint=\"\"\n"),
};

/* Assert that feeding input `k` cut at `cuts` matches feeding it whole. */
static void
check_cuts(size_t k, const size_t *cuts, size_t ncuts, const char *how)
{
	struct ray_buf d = RAY_BUF_INIT;

	run_cuts(inputs[k].in, inputs[k].len, cuts, ncuts, &d);
	if (strcmp(ray_buf_str(&d), inputs[k].want) != 0) {
		printf("got:\n%s", ray_buf_str(&d));
		ray_buf_release(&d);
		T_FAIL("input %zu differs when %s", k, how);
	}
	ray_buf_release(&d);
}

TEST(whole_inputs)
{
	struct ray_buf d = RAY_BUF_INIT;
	size_t k;

	for (k = 0; k < ARRAY_SIZE(inputs); k++) {
		ray_buf_reset(&d);
		run_cuts(inputs[k].in, inputs[k].len, NULL, 0, &d);
		if (strcmp(ray_buf_str(&d), inputs[k].want) != 0) {
			printf("got:\n%swant:\n%s", ray_buf_str(&d),
			    inputs[k].want);
			ray_buf_release(&d);
			T_FAIL("input %zu fed whole", k);
		}
	}
	ray_buf_release(&d);
}

TEST(every_split_point)
{
	char how[64];
	size_t k, cut;

	for (k = 0; k < ARRAY_SIZE(inputs); k++) {
		for (cut = 0; cut <= inputs[k].len; cut++) {
			snprintf(how, sizeof(how), "cut at %zu", cut);
			check_cuts(k, &cut, 1, how);
			if (t_failed)
				return;
		}
	}
}

TEST(one_byte_at_a_time)
{
	size_t k, i, cuts[256];

	for (k = 0; k < ARRAY_SIZE(inputs); k++) {
		ASSERT(inputs[k].len <= ARRAY_SIZE(cuts));
		for (i = 0; i + 1 < inputs[k].len; i++)
			cuts[i] = i + 1;
		check_cuts(k, cuts, inputs[k].len ? inputs[k].len - 1 : 0,
		    "fed one byte at a time");
		if (t_failed)
			return;
	}
}

static uint64_t
xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int
cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

TEST(random_chunkings)
{
	uint64_t seed = 0x9e3779b97f4a7c15u;
	size_t iter, k, n, i, cuts[19];
	char how[64];

	for (iter = 0; iter < 1000; iter++) {
		k = xorshift(&seed) % ARRAY_SIZE(inputs);
		n = 2 + xorshift(&seed) % 18;
		for (i = 0; i < n; i++)
			cuts[i] = xorshift(&seed) % (inputs[k].len + 1);
		qsort(cuts, n, sizeof(cuts[0]), cmp_size);
		snprintf(how, sizeof(how), "cut at random (iteration %zu)",
		    iter);
		check_cuts(k, cuts, n, how);
		if (t_failed)
			return;
	}
}

TESTS(T_CASE(transition_tags), T_CASE(white_space_after_name),
    T_CASE(near_names_are_text), T_CASE(reserved_names_are_tags),
    T_CASE(several_tags_and_raw_bodies), T_CASE(nul_bytes_in_body),
    T_CASE(unclosed_body_is_rescanned), T_CASE(many_unclosed_tags),
    T_CASE(rescan_repeats),
    T_CASE(unfinished_open_tag_is_text), T_CASE(print_streams_as_it_arrives),
    T_CASE(print_unclosed_at_end), T_CASE(print_inside_result_is_not_printed),
    T_CASE(print_without_callback), T_CASE(prints_only_finds_no_tags),
    T_CASE(malformed_attributes),
    T_CASE(duplicate_attribute), T_CASE(error_is_sticky),
    T_CASE(feed_after_finish_fails), T_CASE(open_tag_limit),
    T_CASE(body_limit), T_CASE(whole_inputs), T_CASE(every_split_point),
    T_CASE(one_byte_at_a_time), T_CASE(random_chunkings))
