/*
 * tagparse.c - streaming parser that picks transition tags and <print>
 * text out of an agent's output (see tagparse.h for the grammar).  Every
 * byte goes through one small state machine, with fast paths only for
 * runs that cannot hold a '<', so everything the parser knows between two
 * feeds is its state and the result cannot depend on where the chunks
 * were cut.  The bytes of a tag that is still open are kept from its '<'
 * on, so that at end of input an opening tag that was never closed can be
 * demoted to prose and the bytes after it fed through the machine again.
 */
#include "tagparse.h"
#include "buf.h"
#include "ray.h"

#include <stdlib.h>
#include <string.h>

enum state {
	ST_TEXT,	/* outside any tag */
	ST_NAME,	/* after '<', reading what may be a tag name */
	ST_ATTR_WS,	/* after white space inside an opening tag */
	ST_ATTR_SEP,	/* after a closing quote: white space or '>' */
	ST_KEY,		/* inside an attribute key */
	ST_QUOTE,	/* after '=': an opening quote must follow */
	ST_VALUE,	/* inside a quoted attribute value */
	ST_BODY,	/* inside the body of any tag but print */
	ST_PRINT,	/* inside a print body */
};

static const char *const tag_names[] = {
	"goto", "reset", "call", "function", "fork", "result", "print",
	"ask", "await", "call-workflow", "function-workflow", "fork-workflow",
	"reset-workflow",
};

/*
 * Room for any recognised name plus its NUL; a longer name cannot match,
 * so the parser gives up on it as soon as it outgrows this.
 */
#define NAME_ROOM 32

/*
 * Print text is gathered and passed on at the end of each feed, or sooner
 * once this much is waiting, so a huge chunk does not pile up in memory.
 */
#define PRINT_FLUSH 65536

static const char malformed_hint[] =
    "write attributes as key=\"value\" or key='value', separated by white "
    "space, with no spaces around '='";

/* Where one attribute lies in the pending bytes. */
struct span {
	size_t key;
	size_t keylen;
	size_t val;
	size_t vallen;
};

struct ray_tagparse {
	ray_tagparse_print_fn print;
	void *ud;
	enum state state;
	size_t pos;		/* stream offset of the next byte */
	size_t tag_off;		/* stream offset of the pending tag's '<' */
	struct ray_buf pending;	/* the pending tag's bytes from its '<' */
	char name[NAME_ROOM];
	size_t namelen;
	char quote;		/* the quote that opened the current value */
	struct span *spans;
	size_t nspans;
	size_t capspans;
	size_t open_len;	/* bytes of the opening tag, '<' to '>' */
	char close[NAME_ROOM + 3];	/* "</NAME>" */
	size_t close_len;
	size_t match;		/* bytes of `close` matched so far */
	struct ray_buf out;	/* print text not yet passed on */
	struct ray_tag *tags;
	size_t ntags;
	size_t captags;
	int finished;
	int failed;
	unsigned never_closes;	/* bit i: tag_names[i] has no close from here on */
	int prints_only;	/* only <print> is a tag; every other name is text */
	struct ray_err err;	/* the error that stopped the parser */
};

static int
is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Explicit ranges, so that the grammar does not change with the locale. */
static int
is_key_start(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static int
is_key_char(unsigned char c)
{
	return is_key_start(c) || (c >= '0' && c <= '9');
}

static int
is_name_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || c == '-';
}

static int
known_name(const struct ray_tagparse *p, const char *name)
{
	size_t i;

	if (p->prints_only)
		return strcmp(name, "print") == 0;
	for (i = 0; i < ARRAY_SIZE(tag_names); i++)
		if (strcmp(name, tag_names[i]) == 0)
			return 1;
	return 0;
}

static void
flush(struct ray_tagparse *p)
{
	if (p->out.len > 0)
		p->print(p->ud, p->out.data, p->out.len, 0);
	ray_buf_reset(&p->out);
}

static void
emit(struct ray_tagparse *p, const char *s, size_t n)
{
	if (p->print == NULL || n == 0)
		return;
	ray_buf_add(&p->out, s, n);
	if (p->out.len >= PRINT_FLUSH)
		flush(p);
}

static void
end_print(struct ray_tagparse *p)
{
	if (p->print == NULL)
		return;
	flush(p);
	p->print(p->ud, "", 0, 1);
}

static int
malformed(struct ray_tagparse *p)
{
	ray_err_set(&p->err, RAY_EINVAL,
	    "malformed attribute in <%s> tag at byte %zu: expected key=\"value\"",
	    p->name, p->tag_off);
	ray_err_hint(&p->err, "%s", malformed_hint);
	return RAY_EINVAL;
}

static void
begin_tag(struct ray_tagparse *p)
{
	p->tag_off = p->pos;
	ray_buf_reset(&p->pending);
	ray_buf_addc(&p->pending, '<');
	p->namelen = 0;
	p->name[0] = '\0';
	p->nspans = 0;
	p->match = 0;
	p->state = ST_NAME;
}

/* The bit of the pending tag's name in never_closes. */
static unsigned
name_bit(const struct ray_tagparse *p)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tag_names); i++)
		if (strcmp(p->name, tag_names[i]) == 0)
			return 1u << i;
	return 0;
}

static void
open_done(struct ray_tagparse *p)
{
	/*
	 * While draining, a name whose earlier body ran to the end of input
	 * without its closing tag cannot be closed later either: this opening
	 * tag is prose now, as the next round of the drain would find, and
	 * going straight on keeps the drain linear however many there are.
	 */
	if (p->never_closes & name_bit(p)) {
		ray_buf_reset(&p->pending);
		p->state = ST_TEXT;
		return;
	}
	p->open_len = p->pending.len;
	p->close[0] = '<';
	p->close[1] = '/';
	memcpy(p->close + 2, p->name, p->namelen);
	p->close[p->namelen + 2] = '>';
	p->close_len = p->namelen + 3;
	p->match = 0;
	p->state = strcmp(p->name, "print") == 0 ? ST_PRINT : ST_BODY;
}

/*
 * The closing tag starts with the only '<' it contains, so no proper
 * suffix of a partial match can itself be a partial match: a mismatch
 * falls back to a fresh match of just this byte.
 */
static void
advance_match(struct ray_tagparse *p, char c)
{
	if (c == p->close[p->match])
		p->match++;
	else
		p->match = c == '<' ? 1 : 0;
}

static void
push_tag(struct ray_tagparse *p)
{
	const char *data = p->pending.data;
	struct ray_tag *t;
	size_t i;

	if (p->ntags == p->captags) {
		p->captags = p->captags ? p->captags * 2 : 8;
		p->tags = xrealloc(p->tags, p->captags * sizeof(*p->tags));
	}
	t = &p->tags[p->ntags++];
	t->name = xstrdup(p->name);
	t->body_len = p->pending.len - p->open_len - p->close_len;
	t->body = xstrndup(data + p->open_len, t->body_len);
	t->nattrs = p->nspans;
	t->attrs = NULL;
	if (p->nspans > 0)
		t->attrs = xcalloc(p->nspans, sizeof(*t->attrs));
	for (i = 0; i < p->nspans; i++) {
		t->attrs[i].key = xstrndup(data + p->spans[i].key,
		    p->spans[i].keylen);
		t->attrs[i].value = xstrndup(data + p->spans[i].val,
		    p->spans[i].vallen);
	}
	t->offset = p->tag_off;
}

static void
new_span(struct ray_tagparse *p, size_t key)
{
	if (p->nspans == p->capspans) {
		p->capspans = p->capspans ? p->capspans * 2 : 8;
		p->spans = xrealloc(p->spans, p->capspans * sizeof(*p->spans));
	}
	p->spans[p->nspans].key = key;
	p->spans[p->nspans].keylen = 1;
	p->spans[p->nspans].val = 0;
	p->spans[p->nspans].vallen = 0;
	p->nspans++;
}

/* Called when the key of the last span is complete. */
static int
check_duplicate(struct ray_tagparse *p)
{
	const struct span *last = &p->spans[p->nspans - 1];
	const char *data = p->pending.data;
	size_t i;

	for (i = 0; i + 1 < p->nspans; i++) {
		if (p->spans[i].keylen == last->keylen &&
		    memcmp(data + p->spans[i].key, data + last->key,
		    last->keylen) == 0)
			return ray_err_set(&p->err, RAY_EINVAL,
			    "duplicate attribute \"%.*s\" in <%s> tag at byte %zu",
			    (int)last->keylen, data + last->key, p->name,
			    p->tag_off);
	}
	return 0;
}

/* One byte of an opening tag after its name. */
static int
attr_byte(struct ray_tagparse *p, char c)
{
	unsigned char u = (unsigned char)c;
	struct span *s = p->nspans ? &p->spans[p->nspans - 1] : NULL;

	ray_buf_addc(&p->pending, c);
	if (p->pending.len > RAY_TAG_MAX_OPEN)
		return ray_err_set(&p->err, RAY_ETOOBIG,
		    "opening <%s> tag at byte %zu is longer than %d bytes",
		    p->name, p->tag_off, RAY_TAG_MAX_OPEN);
	switch (p->state) {
	case ST_ATTR_SEP:
		if (c == '>') {
			open_done(p);
			return 0;
		}
		if (!is_ws(u))
			return malformed(p);
		p->state = ST_ATTR_WS;
		return 0;
	case ST_ATTR_WS:
		if (c == '>') {
			open_done(p);
			return 0;
		}
		if (is_ws(u))
			return 0;
		if (!is_key_start(u))
			return malformed(p);
		new_span(p, p->pending.len - 1);
		p->state = ST_KEY;
		return 0;
	case ST_KEY:
		if (is_key_char(u)) {
			s->keylen++;
			return 0;
		}
		if (c != '=')
			return malformed(p);
		p->state = ST_QUOTE;
		return check_duplicate(p);
	case ST_QUOTE:
		if (c != '"' && c != '\'')
			return malformed(p);
		p->quote = c;
		s->val = p->pending.len;
		p->state = ST_VALUE;
		return 0;
	case ST_VALUE:
		if (c == p->quote)
			p->state = ST_ATTR_SEP;
		else
			s->vallen++;
		return 0;
	default:
		abort();
	}
}

/*
 * One byte in any state.  Returns 0 when the byte was consumed, 1 when it
 * must be looked at again (the state changed under it), or a negative
 * code.
 */
static int
one_byte(struct ray_tagparse *p, char c)
{
	unsigned char u = (unsigned char)c;

	switch (p->state) {
	case ST_TEXT:
		if (c == '<')
			begin_tag(p);
		return 0;
	case ST_NAME:
		if ((c == '>' || is_ws(u)) && known_name(p, p->name)) {
			ray_buf_addc(&p->pending, c);
			if (c == '>')
				open_done(p);
			else
				p->state = ST_ATTR_WS;
			return 0;
		}
		if (is_name_char(u) && p->namelen + 1 < sizeof(p->name)) {
			p->name[p->namelen++] = c;
			p->name[p->namelen] = '\0';
			ray_buf_addc(&p->pending, c);
			return 0;
		}
		/*
		 * Not a tag after all.  The name so far holds no '<', so this
		 * byte is the first that can start something new.
		 */
		p->state = ST_TEXT;
		return 1;
	case ST_BODY:
		ray_buf_addc(&p->pending, c);
		advance_match(p, c);
		if (p->match == p->close_len) {
			push_tag(p);
			p->state = ST_TEXT;
			return 0;
		}
		if (p->pending.len - p->open_len - p->match > RAY_TAG_MAX_BODY)
			return ray_err_set(&p->err, RAY_ETOOBIG,
			    "<%s> tag at byte %zu is longer than %d bytes",
			    p->name, p->tag_off, RAY_TAG_MAX_BODY);
		return 0;
	case ST_PRINT:
		if (c == p->close[p->match]) {
			if (++p->match == p->close_len) {
				end_print(p);
				p->state = ST_TEXT;
			}
			return 0;
		}
		/* The held-back bytes were text after all. */
		emit(p, p->close, p->match);
		p->match = c == '<' ? 1 : 0;
		if (!p->match)
			emit(p, &c, 1);
		return 0;
	default:
		return attr_byte(p, c);
	}
}

/*
 * A run of bytes with no '<' in it, in a state where such bytes can only
 * be text, body or print text.  It has the same effect as feeding them one
 * at a time, including when the body limit is hit: the bytes of a body
 * that are not part of a partial closing tag only ever grow.
 */
static int
take_run(struct ray_tagparse *p, const char *s, size_t n)
{
	switch (p->state) {
	case ST_BODY:
		if (p->pending.len - p->open_len + n > RAY_TAG_MAX_BODY)
			return ray_err_set(&p->err, RAY_ETOOBIG,
			    "<%s> tag at byte %zu is longer than %d bytes",
			    p->name, p->tag_off, RAY_TAG_MAX_BODY);
		ray_buf_add(&p->pending, s, n);
		return 0;
	case ST_PRINT:
		emit(p, s, n);
		return 0;
	default:
		return 0;
	}
}

static int
step(struct ray_tagparse *p, const char *data, size_t len)
{
	const char *lt;
	size_t i = 0, run;
	int rc;

	while (i < len) {
		run = 0;
		if (p->state == ST_TEXT || ((p->state == ST_BODY ||
		    p->state == ST_PRINT) && p->match == 0)) {
			lt = memchr(data + i, '<', len - i);
			run = (lt ? (size_t)(lt - data) : len) - i;
		}
		if (run > 0) {
			rc = take_run(p, data + i, run);
			if (rc < 0)
				return rc;
			i += run;
			p->pos += run;
			continue;
		}
		rc = one_byte(p, data[i]);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			i++;
			p->pos++;
		}
	}
	return 0;
}

/*
 * End of input.  A tag still open is prose: its '<' (for an unfinished
 * opening tag) or its whole opening tag (for a body that never closed) is
 * dropped as text and the bytes after it go through the machine again,
 * which may leave another tag open, so this repeats.  Each round starts
 * further on, so it ends; and a body that never closed marks its name, so
 * later tags of that name are prose at once (see open_done) and the whole
 * drain stays linear.
 */
static int
drain(struct ray_tagparse *p)
{
	struct ray_buf rest;
	size_t from;
	int rc;

	while (p->state != ST_TEXT && p->state != ST_PRINT) {
		if (p->state == ST_BODY)
			p->never_closes |= name_bit(p);
		from = p->state == ST_BODY ? p->open_len : 1;
		rest = p->pending;
		p->pending = (struct ray_buf)RAY_BUF_INIT;
		p->state = ST_TEXT;
		p->pos = p->tag_off + from;
		rc = step(p, rest.data + from, rest.len - from);
		ray_buf_release(&rest);
		if (rc < 0)
			return rc;
	}
	if (p->state == ST_PRINT) {
		emit(p, p->close, p->match);
		end_print(p);
		p->state = ST_TEXT;
	}
	return 0;
}

static int
report(const struct ray_tagparse *p, struct ray_err *err)
{
	if (err != NULL)
		*err = p->err;
	return p->err.code;
}

struct ray_tagparse *
ray_tagparse_new(ray_tagparse_print_fn print, void *ud)
{
	struct ray_tagparse *p = xcalloc(1, sizeof(*p));

	p->print = print;
	p->ud = ud;
	p->state = ST_TEXT;
	return p;
}

struct ray_tagparse *
ray_tagparse_new_prints(ray_tagparse_print_fn print, void *ud)
{
	struct ray_tagparse *p = ray_tagparse_new(print, ud);

	p->prints_only = 1;
	return p;
}

int
ray_tagparse_feed(struct ray_tagparse *p, const char *data, size_t len,
    struct ray_err *err)
{
	int rc;

	if (p->failed)
		return report(p, err);
	if (p->finished)
		return ray_err_set(err, RAY_EINVAL,
		    "tag parser fed after ray_tagparse_finish()");
	rc = step(p, data, len);
	flush(p);
	if (rc < 0) {
		p->failed = 1;
		return report(p, err);
	}
	return 0;
}

int
ray_tagparse_finish(struct ray_tagparse *p, struct ray_err *err)
{
	int rc;

	if (p->failed)
		return report(p, err);
	p->finished = 1;
	rc = drain(p);
	flush(p);
	if (rc < 0) {
		p->failed = 1;
		return report(p, err);
	}
	return 0;
}

size_t
ray_tagparse_count(const struct ray_tagparse *p)
{
	return p->ntags;
}

const struct ray_tag *
ray_tagparse_tag(const struct ray_tagparse *p, size_t i)
{
	return i < p->ntags ? &p->tags[i] : NULL;
}

const char *
ray_tag_attr(const struct ray_tag *t, const char *key)
{
	size_t i;

	for (i = 0; i < t->nattrs; i++)
		if (strcmp(t->attrs[i].key, key) == 0)
			return t->attrs[i].value;
	return NULL;
}

void
ray_tagparse_free(struct ray_tagparse *p)
{
	size_t i, j;

	if (p == NULL)
		return;
	for (i = 0; i < p->ntags; i++) {
		for (j = 0; j < p->tags[i].nattrs; j++) {
			free(p->tags[i].attrs[j].key);
			free(p->tags[i].attrs[j].value);
		}
		free(p->tags[i].attrs);
		free(p->tags[i].name);
		free(p->tags[i].body);
	}
	free(p->tags);
	free(p->spans);
	ray_buf_release(&p->pending);
	ray_buf_release(&p->out);
	free(p);
}
