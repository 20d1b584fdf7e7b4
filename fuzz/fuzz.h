/*
 * fuzz.h - what every fuzz target shares: bad() reports a broken promise of
 * the code under test and aborts, so libFuzzer keeps the input.
 */
#ifndef RAY_FUZZ_H
#define RAY_FUZZ_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static void __attribute__((format(printf, 1, 2), noreturn, unused))
bad(const char *fmt, ...)
{
	va_list ap;

	fputs("==fuzz== ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

#endif
