/*
 * testlib.h - the smallest unit-test harness that does the job.
 *
 * A test file defines tests with TEST(name) { ... } and lists them once in
 * a `TESTS(...)` line at the bottom, which provides main().  Each test
 * prints "PASS name" or "FAIL name: file:line: what", which tests/run.sh
 * counts.  An ASSERT failure ends only the current test.
 */
#ifndef RAY_TESTLIB_H
#define RAY_TESTLIB_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_failed;
static const char *t_name;

#define TEST(name) static void test_##name(void)

#define T_FAIL(...)                                                        \
	do {                                                               \
		if (!t_failed) {                                           \
			printf("FAIL %s: %s:%d: ", t_name, __FILE__, __LINE__); \
			printf(__VA_ARGS__);                               \
			printf("\n");                                      \
		}                                                          \
		t_failed = 1;                                              \
		return;                                                    \
	} while (0)

#define ASSERT(c)                                                          \
	do {                                                               \
		if (!(c))                                                  \
			T_FAIL("assertion failed: %s", #c);                \
	} while (0)

#define ASSERT_EQ(a, b)                                                    \
	do {                                                               \
		long long a_ = (long long)(a), b_ = (long long)(b);       \
		if (a_ != b_)                                              \
			T_FAIL("%s == %lld, expected %s == %lld", #a, a_, #b, b_); \
	} while (0)

#define ASSERT_STREQ(a, b)                                                 \
	do {                                                               \
		const char *a_ = (a), *b_ = (b);                           \
		if (a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0)       \
			T_FAIL("%s is \"%s\", expected \"%s\"", #a,       \
			    a_ ? a_ : "(null)", b_ ? b_ : "(null)");       \
	} while (0)

struct t_case {
	const char *name;
	void (*fn)(void);
};

static int
t_run(const struct t_case *cases, size_t n)
{
	size_t i;
	int bad = 0;

	for (i = 0; i < n; i++) {
		t_failed = 0;
		t_name = cases[i].name;
		cases[i].fn();
		if (!t_failed)
			printf("PASS %s\n", cases[i].name);
		bad |= t_failed;
		fflush(stdout);
	}
	return bad;
}

#define T_CASE(name) { #name, test_##name }
#define TESTS(...)                                                         \
	int main(void)                                                     \
	{                                                                  \
		static const struct t_case cases[] = { __VA_ARGS__ };      \
		return t_run(cases, sizeof(cases) / sizeof(cases[0]));     \
	}

#endif
