/*
 * test_termsafe.c - control characters in untrusted text are shown, not
 * obeyed, however the text is split; the rest passes unchanged.
 */
#include "testlib.h"
#include "buf.h"
#include "termsafe.h"

#include <time.h>

static void
to_buf(void *ctx, const char *p, size_t n)
{
	ray_buf_add(ctx, p, n);
}

/* The text shown for s[0..n), fed in pieces of `piece` bytes (0: one). */
static char *
shown(const char *s, size_t n, size_t piece)
{
	struct ray_termsafe ts = RAY_TERMSAFE_INIT;
	struct ray_buf b = RAY_BUF_INIT;
	size_t i, k;

	if (piece == 0)
		piece = n;
	for (i = 0; i < n; i += k) {
		k = n - i < piece ? n - i : piece;
		ray_termsafe_feed(&ts, s + i, k, 0, to_buf, &b);
	}
	ray_termsafe_feed(&ts, NULL, 0, 1, to_buf, &b);
	ray_buf_addc(&b, '\0');
	return ray_buf_detach(&b);
}

static int
check(const char *in, size_t n, const char *want)
{
	size_t piece;

	for (piece = 0; piece <= n + 1; piece++) {
		char *got = shown(in, n, piece);
		int same = strcmp(got, want) == 0;

		if (!same)
			printf("# piece %zu: got \"%s\", want \"%s\"\n", piece,
			    got, want);
		free(got);
		if (!same)
			return 0;
	}
	return 1;
}

#define CHECK(in, want) ASSERT(check(in, sizeof(in) - 1, want))

TEST(controls_are_shown_in_caret_notation)
{
	CHECK("a\033[2Jb", "a^[[2Jb");
	CHECK("\033]52;c;aGk=\007", "^[]52;c;aGk=^G");
	CHECK("bell\007 back\b\b over\rwrite", "bell^G back^H^H over^Mwrite");
	CHECK("nul\0del\177", "nul^@del^?");
	CHECK("end\r", "end^M");
}

TEST(newline_tab_and_crlf_pass)
{
	CHECK("line 1\r\nline 2\n\tindented\n", "line 1\r\nline 2\n\tindented\n");
}

TEST(utf8_passes_and_c1_controls_and_bad_bytes_are_shown)
{
	CHECK("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	CHECK("csi \xc2\x9b" "2J", "csi \\u009b2J");
	CHECK("raw \x9b" "2J", "raw \\x9b2J");
	CHECK("cut \xe2\x82", "cut \\xe2\\x82");
	CHECK("bad \xe2\x82" "A", "bad \\xe2\\x82A");
	CHECK("overlong \xc0\xaf surrogate \xed\xa0\x80", "overlong \\xc0\\xaf surrogate \\xed\\xa0\\x80");
	CHECK("\xff\xfe", "\\xff\\xfe");
}

TEST(linear_in_the_input)
{
	size_t n = 8 << 20, i;
	char *s = malloc(n);
	char *out;
	clock_t t0;
	double secs;

	for (i = 0; i < n; i++)
		s[i] = i % 3 == 0 ? '\033' : i % 3 == 1 ? (char)0xe2 : ' ';
	t0 = clock();
	out = shown(s, n, 4096);
	secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
	printf("# 8 MiB of controls and bad bytes shown in %.3f s\n", secs);
	ASSERT(strncmp(out, "^[\\xe2 ^[", 9) == 0);
	free(out);
	free(s);
	ASSERT(secs < 10);
}

/* Pieces of prints, each list ended by NULL; "" ends a print. */
static char *
printed(const char *const *pieces)
{
	struct ray_termsafe_print pr = RAY_TERMSAFE_PRINT_INIT;
	struct ray_buf b = RAY_BUF_INIT;

	for (; *pieces != NULL; pieces++)
		ray_termsafe_print(&pr, *pieces, strlen(*pieces), **pieces == '\0',
		    to_buf, &b);
	ray_buf_addc(&b, '\0');
	return ray_buf_detach(&b);
}

TEST(each_print_is_shown_and_ends_with_one_newline)
{
	static const char *const a[] = { "x\033[2J", "\007y", "", "done\n", "",
		"", "cut \r", "", NULL };
	char *got = printed(a);

	ASSERT_STREQ(got, "x^[[2J^Gy\ndone\ncut ^M\n");
	free(got);
}

TESTS(T_CASE(controls_are_shown_in_caret_notation),
    T_CASE(newline_tab_and_crlf_pass),
    T_CASE(utf8_passes_and_c1_controls_and_bad_bytes_are_shown),
    T_CASE(linear_in_the_input),
    T_CASE(each_print_is_shown_and_ends_with_one_newline))
