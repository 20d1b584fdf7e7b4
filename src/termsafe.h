/*
 * termsafe.h - untrusted text made safe to show on a terminal.
 *
 * Text a model or a child process printed may hold control sequences: ESC
 * starts CSI (clear the screen, move the cursor) and OSC (set the window
 * title, write the clipboard: OSC 52), BEL rings, backspace and a lone CR
 * overwrite what was shown, and on some terminals the C1 controls
 * (U+0080..U+009F) and stray bytes 0x80..0x9F act as ESC sequences.  This
 * module shows each such byte visibly instead:
 *
 *	C0 controls and DEL	caret notation: ESC ^[, BEL ^G, BS ^H, CR ^M, DEL ^?
 *	C1 controls		\u0080 .. \u009f
 *	bytes not valid UTF-8	\xNN, one per byte
 *
 * and keeps newline, tab, CR LF, and valid UTF-8 as they are.  The output
 * depends only on the bytes, not on how they were split: a sequence cut
 * by the end of one feed is held until the next, or shown byte by byte by
 * the final one.  Linear in the input, with no allocation.
 *
 * Calling sequence:
 *
 *	struct ray_termsafe ts = RAY_TERMSAFE_INIT;
 *	ray_termsafe_feed(&ts, data, len, 0, emit, ctx);   any number of times
 *	ray_termsafe_feed(&ts, NULL, 0, 1, emit, ctx);     at the end
 *
 * emit(ctx, p, n) is called with each piece of the result, in order; the
 * pieces are valid only during the call.  No errors.
 *
 * <print> text, from a script's output or a model's reply, reaches stdout
 * through one function so both are shown alike: each print made safe as
 * above and ended by a newline unless its text ends with one.  It takes
 * the calls of a tag parser's print callback (tagparse.h) as they come:
 *
 *	struct ray_termsafe_print pr = RAY_TERMSAFE_PRINT_INIT;
 *	ray_termsafe_print(&pr, text, len, 0, emit, ctx);   a piece of a print
 *	ray_termsafe_print(&pr, NULL, 0, 1, emit, ctx);     its end
 */
#ifndef RAY_TERMSAFE_H
#define RAY_TERMSAFE_H

#include <stddef.h>

struct ray_termsafe {
	unsigned char held[4];	/* the start of a sequence cut by a feed */
	size_t nheld;
};

#define RAY_TERMSAFE_INIT { { 0 }, 0 }

typedef void ray_termsafe_emit(void *ctx, const char *p, size_t n);

void ray_termsafe_feed(struct ray_termsafe *ts, const char *data, size_t len,
    int final, ray_termsafe_emit *emit, void *ctx);

struct ray_termsafe_print {
	struct ray_termsafe ts;
	int open;	/* the current print has text */
	char last;	/* the last byte shown, for the closing newline */
};

#define RAY_TERMSAFE_PRINT_INIT { RAY_TERMSAFE_INIT, 0, '\0' }

void ray_termsafe_print(struct ray_termsafe_print *pr, const char *text,
    size_t len, int end, ray_termsafe_emit *emit, void *ctx);

#endif
