/*
 * tagparse.h - streaming parser for transition tags and <print> text.
 *
 * A pure function over bytes: it does no I/O.  The caller feeds output in
 * chunks of any size as it arrives; tags and <print> may straddle chunks
 * anywhere, and the result never depends on where the chunks were cut.
 *
 * Calling sequence:
 *
 *	p = ray_tagparse_new(print_cb, ud);     (or ray_tagparse_new_prints)
 *	ray_tagparse_feed(p, chunk, n, &err);   (any number of times)
 *	ray_tagparse_finish(p, &err);
 *	for (i = 0; i < ray_tagparse_count(p); i++)
 *		t = ray_tagparse_tag(p, i);
 *	ray_tagparse_free(p);
 *
 * Grammar.  A tag is `<NAME ATTRS>BODY</NAME>` where NAME is one of the
 * recognised names below.  After `<NAME` must come `>` or white space;
 * otherwise (`<results>`, `<gotoX>`) the `<` is ordinary text.  ATTRS is a
 * white-space separated list of `key="value"` or `key='value'`, with keys
 * matching [A-Za-z_][A-Za-z0-9_]*, no spaces around `=`, no escapes.  BODY
 * is every byte up to the first `</NAME>`; it is raw, so a <result> payload
 * may contain tag-like text without it being counted.
 *
 * Recognised names: the transitions goto, reset, call, function, fork,
 * result; the non-transition print; and names of the wider protocol that
 * this implementation does not run (ask, await, call-workflow,
 * function-workflow, fork-workflow, reset-workflow), which are reported as
 * tags so the engine can reject them by name.
 *
 * <print>: the body is passed to the print callback as it arrives (only a
 * trailing fragment that may be the start of `</print>` is held back), and
 * the callback is called once more with `end` set when `</print>` is seen.
 * Print tags are not added to the tag list.
 *
 * ray_tagparse_new_prints() makes a parser that recognises <print> alone:
 * every other name is ordinary text, so it finds no tags, and a <print>
 * inside what would be another tag's body is printed.  It is for output
 * whose prints are shown but whose tags must not steer anything (a
 * script's stderr).
 *
 * End of input inside an open tag's BODY (no closing tag ever came): the
 * opening `<NAME...>` is taken to be prose, not a tag, and the bytes after
 * it are scanned again, so "use <result> when done ... <goto>X</goto>"
 * yields the goto.  End of input inside `<NAME ...` before `>` is text.
 *
 * Errors (return RAY_EINVAL / RAY_ETOOBIG and fill `err`): a malformed
 * attribute list, a duplicate attribute key, an open tag longer than
 * RAY_TAG_MAX_OPEN bytes, a body longer than RAY_TAG_MAX_BODY bytes.  The
 * message names the tag and the byte offset of its `<` in the stream.
 * After an error the parser accepts no more input (feed returns the same
 * error).
 *
 * Ownership: tags and their strings belong to the parser and live until
 * ray_tagparse_free().  Strings are NUL-terminated; bodies may also contain
 * NUL bytes, so use body_len.
 */
#ifndef RAY_TAGPARSE_H
#define RAY_TAGPARSE_H

#include <stddef.h>

#include "ray.h"

#define RAY_TAG_MAX_OPEN (64 * 1024)
#define RAY_TAG_MAX_BODY (16 * 1024 * 1024)

struct ray_attr {
	char *key;
	char *value;
};

struct ray_tag {
	char *name;
	char *body;
	size_t body_len;
	struct ray_attr *attrs;
	size_t nattrs;
	size_t offset;		/* byte offset of the opening '<' */
};

/* Called with <print> text as it arrives; `end` is 1 once, at `</print>`. */
typedef void (*ray_tagparse_print_fn)(void *ud, const char *text, size_t len,
    int end);

struct ray_tagparse;

/* `print` may be NULL, in which case print text is discarded. */
struct ray_tagparse *ray_tagparse_new(ray_tagparse_print_fn print, void *ud);
struct ray_tagparse *ray_tagparse_new_prints(ray_tagparse_print_fn print,
    void *ud);
int ray_tagparse_feed(struct ray_tagparse *p, const char *data, size_t len,
    struct ray_err *err);
int ray_tagparse_finish(struct ray_tagparse *p, struct ray_err *err);
size_t ray_tagparse_count(const struct ray_tagparse *p);
const struct ray_tag *ray_tagparse_tag(const struct ray_tagparse *p, size_t i);
/* The value of attribute `key` of `t`, or NULL. */
const char *ray_tag_attr(const struct ray_tag *t, const char *key);
void ray_tagparse_free(struct ray_tagparse *p);

#endif
