/*
 * frontmatter.c - the YAML frontmatter of markdown prompt files (see
 * frontmatter.h).
 *
 * The YAML is read in two passes.  The first collects libyaml's events
 * into an array, checks the nesting depth and the number of values, and
 * resolves each alias to the index of its anchored node's first event.
 * The second walks the array and pushes Lua values; an alias is pushed by
 * walking its anchored node's events again, which makes a fresh copy and
 * lets the value count stop alias bombs.  Keeping the events means every
 * error, in either pass, can name the line it is about.
 *
 * Any push may raise a Lua error (out of memory), so everything malloc'd
 * (the parser, the events, the line index) hangs off a to-be-closed
 * userdata: an error unwinding the stack frees it, and so does the
 * normal end.
 */
#include "frontmatter.h"

#include <lauxlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define MAX_DEPTH 64
#define MAX_NODES 100000

struct reader {
	lua_State *L;
	const char *yaml;	/* the text being parsed */
	size_t len;
	yaml_event_t *ev;	/* the events of the stream, in order */
	size_t *target;		/* for an alias event, its node's first event */
	size_t n, cap;
	size_t *lf;		/* the character index of each LF, ascending */
	size_t nlf;
	int lines_ready;	/* lf and nlf are filled in */
	long nodes;		/* values pushed so far, aliases expanded */
	int first_line;		/* the file line on which the YAML starts */
	int types;		/* stack index of the field types, or 0 */
	int lines;		/* stack index of the lines table, or 0 */
	const char *name;	/* the file's name in messages, or NULL for
				 * frontmatter */
	struct ray_err *err;
	yaml_parser_t parser;
	int parser_ready;	/* yaml_parser_initialize() succeeded */
};

/* The metatable of the userdata that holds a struct reader. */
#define READER_MT "raymond.frontmatter.reader"

/*
 * Index the character positions (as libyaml counts them: one per UTF-8
 * character) of the LFs, once, so each line lookup is a binary search
 * rather than a scan of the text.
 */
static void
index_lines(struct reader *r)
{
	size_t i, chars = 0, cap = 0;

	for (i = 0; i < r->len; i++) {
		unsigned char c = (unsigned char)r->yaml[i];

		if ((c & 0xC0) == 0x80)
			continue;	/* not the first byte of a character */
		if (c == '\n') {
			if (r->nlf == cap) {
				cap = cap ? cap * 2 : 256;
				r->lf = xrealloc(r->lf, cap * sizeof(*r->lf));
			}
			r->lf[r->nlf++] = chars;
		}
		chars++;
	}
	r->lines_ready = 1;
}

/*
 * The file line of the YAML's character number `index` (counted from 0, as
 * libyaml counts, in characters): one more for each LF before it.
 * libyaml's own line numbers also take a CR without LF, U+0085, U+2028 and
 * U+2029 as line breaks, which editors showing the file may not, so only
 * LF counts here.
 */
static unsigned long long
line_of(struct reader *r, size_t index)
{
	size_t lo = 0, hi, mid;

	if (!r->lines_ready)
		index_lines(r);
	hi = r->nlf;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (r->lf[mid] < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (unsigned long long)lo + (unsigned long long)r->first_line;
}

/* The file line of a libyaml mark. */
static unsigned long long
file_line(struct reader *r, yaml_mark_t mark)
{
	return line_of(r, mark.index);
}

/* What the messages call the text: the file's name, or "frontmatter". */
static const char *
text_name(const struct reader *r)
{
	return r->name ? r->name : "frontmatter";
}

/*
 * Fail with a message about file line `line`: "frontmatter line N: ..."
 * for frontmatter, "NAME:N: ..." for a named file.
 */
static int
fail_line(struct reader *r, unsigned long long line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
fail_line(struct reader *r, unsigned long long line, const char *fmt, ...)
{
	char what[RAY_ERR_MSG];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (r->name)
		return ray_err_set(r->err, RAY_EINVAL, "%s:%llu: %s", r->name,
		    line, what);
	return ray_err_set(r->err, RAY_EINVAL, "frontmatter line %llu: %s",
	    line, what);
}

static int
fail_at(struct reader *r, yaml_mark_t mark, const char *what)
{
	return fail_line(r, file_line(r, mark), "%s", what);
}

static int
no_memory(const struct reader *r)
{
	return ray_err_set(r->err, RAY_EINVAL,
	    "%s: out of memory while parsing the YAML", text_name(r));
}

static int
too_large(const struct reader *r)
{
	return ray_err_set(r->err, RAY_ETOOBIG,
	    "%s is too large: more than %d values (aliases count "
	    "once for each use)", text_name(r), MAX_NODES);
}

static int
too_deep(struct reader *r, yaml_mark_t mark)
{
	char what[64];

	snprintf(what, sizeof(what), "nesting is deeper than %d levels", MAX_DEPTH);
	return fail_at(r, mark, what);
}

/* Report what libyaml could not parse. */
static int
parse_error(struct reader *r, const yaml_parser_t *p)
{
	yaml_mark_t mark = p->problem_mark;
	const char *problem = p->problem ? p->problem : "the YAML cannot be parsed";
	char value[32] = "";
	size_t i;

	if (p->error == YAML_MEMORY_ERROR)
		return no_memory(r);
	if (p->error == YAML_READER_ERROR) {
		/* The reader gives a byte offset rather than a mark. */
		mark.index = 0;
		for (i = 0; i < p->problem_offset && i < r->len; i++)
			if (((unsigned char)r->yaml[i] & 0xC0) != 0x80)
				mark.index++;
		if (p->problem_value != -1)
			snprintf(value, sizeof(value), " (byte 0x%02X)",
			    (unsigned)p->problem_value & 0xFFu);
	}
	if (p->context)
		return fail_line(r, file_line(r, mark), "%s%s (%s at line %llu)",
		    problem, value, p->context, file_line(r, p->context_mark));
	return fail_line(r, file_line(r, mark), "%s%s", problem, value);
}

static const char *
anchor_of(const yaml_event_t *e)
{
	switch (e->type) {
	case YAML_SCALAR_EVENT:
		return (const char *)e->data.scalar.anchor;
	case YAML_SEQUENCE_START_EVENT:
		return (const char *)e->data.sequence_start.anchor;
	case YAML_MAPPING_START_EVENT:
		return (const char *)e->data.mapping_start.anchor;
	default:
		return NULL;
	}
}

/*
 * First pass: read every event of the stream into r->ev.  The table at
 * the top of the Lua stack maps each anchor name to the index of its
 * node's first event; a name is entered when its node ends.
 */
static int
read_events(struct reader *r, yaml_parser_t *p)
{
	size_t open[MAX_DEPTH];
	const char *anchor;
	int depth = 0, docs = 0;
	yaml_event_t *e;

	for (;;) {
		if (r->n == r->cap) {
			r->cap = r->cap ? r->cap * 2 : 64;
			r->ev = xrealloc(r->ev, r->cap * sizeof(*r->ev));
			r->target = xrealloc(r->target, r->cap * sizeof(*r->target));
		}
		e = &r->ev[r->n];
		if (!yaml_parser_parse(p, e))
			return parse_error(r, p);
		r->target[r->n] = 0;
		r->n++;
		switch (e->type) {
		case YAML_STREAM_END_EVENT:
			return 0;
		case YAML_DOCUMENT_START_EVENT:
			if (++docs > 1)
				return fail_line(r, file_line(r, e->start_mark),
				    "the %s must be a single YAML document",
				    r->name ? "file" : "frontmatter");
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (depth == MAX_DEPTH)
				return too_deep(r, e->start_mark);
			open[depth++] = r->n - 1;
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			anchor = anchor_of(&r->ev[open[--depth]]);
			if (anchor) {
				lua_pushinteger(r->L, (lua_Integer)open[depth]);
				lua_setfield(r->L, -2, anchor);
			}
			break;
		case YAML_SCALAR_EVENT:
			anchor = anchor_of(e);
			if (anchor) {
				lua_pushinteger(r->L, (lua_Integer)(r->n - 1));
				lua_setfield(r->L, -2, anchor);
			}
			break;
		case YAML_ALIAS_EVENT:
			if (lua_getfield(r->L, -1, (const char *)e->data.alias.anchor) != LUA_TNUMBER) {
				lua_pop(r->L, 1);
				return fail_line(r, file_line(r, e->start_mark),
				    "alias *%s has no anchor &%s before it",
				    (const char *)e->data.alias.anchor,
				    (const char *)e->data.alias.anchor);
			}
			r->target[r->n - 1] = (size_t)lua_tointeger(r->L, -1);
			lua_pop(r->L, 1);
			break;
		default:
			break;
		}
		/* Each value starts with one event and ends with at most one. */
		if (r->n > 2 * (size_t)MAX_NODES + 8)
			return too_large(r);
	}
}

/* Whether s[0..n) equals the lowercase ASCII `word`, in any case. */
static int
word_is(const char *s, size_t n, const char *word)
{
	size_t i;

	if (strlen(word) != n)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != word[i])
			return 0;
	}
	return 1;
}

static int
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* 1 if s[0..n) is a decimal integer, 2 if a float (see the table in
 * frontmatter.h), else 0. */
static int
number_kind(const char *s, size_t n)
{
	size_t i = 0, digits = 0;
	int kind = 1;

	if (i < n && (s[i] == '+' || s[i] == '-'))
		i++;
	for (; i < n && is_digit(s[i]); i++)
		digits++;
	if (i < n && s[i] == '.') {
		kind = 2;
		for (i++; i < n && is_digit(s[i]); i++)
			digits++;
	}
	if (digits == 0)
		return 0;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		kind = 2;
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i == n || !is_digit(s[i]))
			return 0;
		while (i < n && is_digit(s[i]))
			i++;
	}
	return i == n ? kind : 0;
}

/* What a plain scalar becomes: the type of the field it is the value of. */
enum want { AS_STRING, AS_NUMBER, AS_BOOLEAN };

/*
 * Push a scalar.  *null is set for a plain null, for which nothing is
 * pushed.
 */
static void
push_scalar(lua_State *L, const yaml_event_t *e, int *null, enum want want)
{
	const char *s = (const char *)e->data.scalar.value;
	const char *tag = (const char *)e->data.scalar.tag;
	size_t n = e->data.scalar.length;

	*null = 0;
	if (e->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
	    (tag && (strcmp(tag, YAML_STR_TAG) == 0 || strcmp(tag, "!") == 0))) {
		lua_pushlstring(L, s, n);
		return;
	}
	if (n == 0 || word_is(s, n, "~") || word_is(s, n, "null")) {
		*null = 1;
	} else if (want == AS_BOOLEAN && (word_is(s, n, "true") ||
	    word_is(s, n, "yes") || word_is(s, n, "on"))) {
		lua_pushboolean(L, 1);
	} else if (want == AS_BOOLEAN && (word_is(s, n, "false") ||
	    word_is(s, n, "no") || word_is(s, n, "off"))) {
		lua_pushboolean(L, 0);
	} else if (want != AS_NUMBER || number_kind(s, n) == 0 ||
	    strlen(s) != n || lua_stringtonumber(L, s) == 0) {
		/* lua_stringtonumber() reads integers exactly and floats in
		 * any locale; an integer too big for 64 bits becomes a float. */
		lua_pushlstring(L, s, n);
	}
}

static int push_node(struct reader *r, size_t *i, int depth, int *null,
    enum want want);

/*
 * With a lines table, record the table of lines on top of the stack as
 * the one of the collection just below it, and pop it.
 */
static void
keep_lines(struct reader *r)
{
	lua_pushvalue(r->L, -2);
	lua_insert(r->L, -2);
	lua_rawset(r->L, r->lines);
}

/* Push the sequence whose start event is at *i. */
static int
push_sequence(struct reader *r, size_t *i, int depth)
{
	lua_Integer n = 0;
	unsigned long long line;
	int rc, null;

	lua_newtable(r->L);
	if (r->lines)
		lua_newtable(r->L);	/* the line of each element */
	for ((*i)++; r->ev[*i].type != YAML_SEQUENCE_END_EVENT;) {
		line = file_line(r, r->ev[*i].start_mark);
		rc = push_node(r, i, depth, &null, AS_STRING);
		if (rc < 0)
			return rc;
		/* A null element becomes "" so the list stays dense. */
		if (null)
			lua_pushliteral(r->L, "");
		lua_rawseti(r->L, r->lines ? -3 : -2, ++n);
		if (r->lines) {
			lua_pushinteger(r->L, (lua_Integer)line);
			lua_rawseti(r->L, -2, n);
		}
	}
	if (r->lines)
		keep_lines(r);
	(*i)++;
	return 0;
}

/*
 * The type the root mapping's key (on top of the stack) asks of its
 * value: a field the types table names "number" or "boolean".
 */
static enum want
field_want(struct reader *r, int depth)
{
	enum want want = AS_STRING;
	const char *ty;

	if (depth != 1 || r->types == 0)
		return AS_STRING;
	lua_pushvalue(r->L, -1);
	lua_rawget(r->L, r->types);
	ty = lua_type(r->L, -1) == LUA_TSTRING ? lua_tostring(r->L, -1) : "";
	if (strcmp(ty, "number") == 0)
		want = AS_NUMBER;
	else if (strcmp(ty, "boolean") == 0)
		want = AS_BOOLEAN;
	lua_pop(r->L, 1);
	return want;
}

/* Push the mapping whose start event is at *i. */
static int
push_mapping(struct reader *r, size_t *i, int depth)
{
	const yaml_event_t *key;
	int rc, null;

	lua_newtable(r->L);
	/* Keys seen so far, with their lines: a key whose value is null is
	 * not in the result, but a second one is still a duplicate. */
	lua_newtable(r->L);
	for ((*i)++; r->ev[*i].type != YAML_MAPPING_END_EVENT;) {
		key = &r->ev[*i];
		if (key->type == YAML_ALIAS_EVENT)
			key = &r->ev[r->target[*i]];
		if (key->type != YAML_SCALAR_EVENT)
			return fail_at(r, r->ev[*i].start_mark,
			    "a key must be a single value, not a list or mapping");
		if (++r->nodes > MAX_NODES)
			return too_large(r);
		lua_pushlstring(r->L, (const char *)key->data.scalar.value,
		    key->data.scalar.length);
		if (lua_rawget(r->L, -2) != LUA_TNIL)
			return fail_line(r, file_line(r, r->ev[*i].start_mark),
			    "duplicate key '%s' (first on line %lld)",
			    (const char *)key->data.scalar.value,
			    (long long)lua_tointeger(r->L, -1));
		lua_pop(r->L, 1);
		lua_pushlstring(r->L, (const char *)key->data.scalar.value,
		    key->data.scalar.length);
		lua_pushinteger(r->L, (lua_Integer)file_line(r, r->ev[*i].start_mark));
		lua_rawset(r->L, -3);

		(*i)++;
		lua_pushlstring(r->L, (const char *)key->data.scalar.value,
		    key->data.scalar.length);
		rc = push_node(r, i, depth, &null, field_want(r, depth));
		if (rc < 0)
			return rc;
		if (null)
			lua_pop(r->L, 1);
		else
			lua_rawset(r->L, -4);
	}
	/* The keys with their lines are the mapping's lines table. */
	if (r->lines)
		keep_lines(r);
	else
		lua_pop(r->L, 1);
	(*i)++;
	return 0;
}

/*
 * Second pass: push the node whose first event is at *i and move *i past
 * it.  `depth` is the number of collections around it.  On error the
 * caller resets the Lua stack.
 */
static int
push_node(struct reader *r, size_t *i, int depth, int *null, enum want want)
{
	const yaml_event_t *e = &r->ev[*i];
	size_t j;
	int rc;

	*null = 0;
	if (!lua_checkstack(r->L, 8))
		return too_deep(r, e->start_mark);
	switch (e->type) {
	case YAML_ALIAS_EVENT:
		j = r->target[*i];
		rc = push_node(r, &j, depth, null, want);
		(*i)++;
		return rc;
	case YAML_SCALAR_EVENT:
		if (++r->nodes > MAX_NODES)
			return too_large(r);
		push_scalar(r->L, e, null, want);
		(*i)++;
		return 0;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if (++r->nodes > MAX_NODES)
			return too_large(r);
		if (depth == MAX_DEPTH)
			return too_deep(r, e->start_mark);
		if (e->type == YAML_SEQUENCE_START_EVENT)
			return push_sequence(r, i, depth + 1);
		return push_mapping(r, i, depth + 1);
	default:
		/* libyaml gives only the events above inside a document. */
		return fail_at(r, e->start_mark, "unexpected YAML event");
	}
}

/* Push the document's root, which must be a mapping, null or absent. */
static int
push_root(struct reader *r)
{
	size_t i = 0;
	const yaml_event_t *e;
	const char *what;
	int null;

	while (i < r->n && r->ev[i].type != YAML_DOCUMENT_START_EVENT)
		i++;
	if (i == r->n) {
		lua_newtable(r->L);	/* only blanks and comments */
		return 0;
	}
	i++;
	e = &r->ev[i];
	if (e->type == YAML_MAPPING_START_EVENT)
		return push_node(r, &i, 0, &null, AS_STRING);
	if (e->type == YAML_SCALAR_EVENT) {
		push_scalar(r->L, e, &null, AS_STRING);
		if (null) {
			lua_newtable(r->L);
			return 0;
		}
		lua_pop(r->L, 1);
	}
	what = e->type == YAML_SEQUENCE_START_EVENT ? "a list" : "a single value";
	if (r->name)
		return fail_line(r, file_line(r, e->start_mark), "the file must "
		    "be a mapping of key: value, but this line starts %s", what);
	return ray_err_set(r->err, RAY_EINVAL,
	    "frontmatter must be a mapping of field: value, but line %llu "
	    "starts %s", file_line(r, e->start_mark), what);
}

/* Free what the reader holds; safe to call again. */
static void
reader_free(struct reader *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		yaml_event_delete(&r->ev[i]);
	r->n = 0;
	free(r->ev);
	r->ev = NULL;
	free(r->target);
	r->target = NULL;
	free(r->lf);
	r->lf = NULL;
	if (r->parser_ready)
		yaml_parser_delete(&r->parser);
	r->parser_ready = 0;
}

/* __gc and __close of the reader's userdata. */
static int
reader_gc(lua_State *L)
{
	reader_free(luaL_checkudata(L, 1, READER_MT));
	return 0;
}

/*
 * Push the YAML as ray_frontmatter_push() and ray_yaml_push() describe;
 * `name` and `lines` are the latter's, NULL and 0 for frontmatter.
 */
static int
push_yaml(lua_State *L, const char *yaml, size_t len, int first_line,
    int types, const char *name, int lines, struct ray_err *err)
{
	struct reader *r;
	int top = lua_gettop(L), box;
	int rc = 0;

	if (!lua_checkstack(L, 8))
		return ray_err_set(err, RAY_EINVAL, "%s: the Lua stack is full",
		    name ? name : "frontmatter");
	/* Before the box is pushed, so relative indexes still count. */
	types = types ? lua_absindex(L, types) : 0;
	lines = lines ? lua_absindex(L, lines) : 0;
	r = lua_newuserdatauv(L, sizeof(*r), 0);
	memset(r, 0, sizeof(*r));
	if (luaL_newmetatable(L, READER_MT)) {
		lua_pushcfunction(L, reader_gc);
		lua_setfield(L, -2, "__gc");
		lua_pushcfunction(L, reader_gc);
		lua_setfield(L, -2, "__close");
	}
	lua_setmetatable(L, -2);
	box = lua_gettop(L);
	lua_toclose(L, box);

	r->L = L;
	r->yaml = yaml;
	r->len = len;
	r->first_line = first_line;
	r->types = types;
	r->lines = lines;
	r->name = name;
	r->err = err;
	if (!yaml_parser_initialize(&r->parser)) {
		rc = no_memory(r);
		goto out;
	}
	r->parser_ready = 1;
	yaml_parser_set_input_string(&r->parser, (const unsigned char *)yaml, len);

	lua_newtable(L);	/* anchors, for the first pass */
	rc = read_events(r, &r->parser);
	lua_settop(L, box);
	if (rc < 0)
		goto out;
	rc = push_root(r);

out:
	/* The result, if any, is above the box: free, then drop the box. */
	lua_closeslot(L, box);
	if (rc < 0)
		lua_settop(L, top);
	else
		lua_remove(L, box);
	return rc;
}

int
ray_frontmatter_push(lua_State *L, const char *yaml, size_t len,
    int first_line, int types, struct ray_err *err)
{
	return push_yaml(L, yaml, len, first_line, types, NULL, 0, err);
}

int
ray_yaml_push(lua_State *L, const char *yaml, size_t len, const char *name,
    int lines, struct ray_err *err)
{
	return push_yaml(L, yaml, len, 1, 0, name, lines, err);
}

/*
 * Whether the line starting at text[i] is a fence; if so *next is where
 * the following line starts (len if there is none).
 */
static int
is_fence(const char *text, size_t len, size_t i, size_t *next)
{
	if (len - i < 3 || memcmp(text + i, "---", 3) != 0)
		return 0;
	for (i += 3; i < len && (text[i] == ' ' || text[i] == '\t'); i++)
		;
	if (i < len && text[i] == '\r')
		i++;
	if (i < len && text[i] != '\n')
		return 0;
	*next = i < len ? i + 1 : len;
	return 1;
}

int
ray_frontmatter_split(const char *text, size_t len, size_t *yaml_off,
    size_t *yaml_len, size_t *body_off, int *has)
{
	size_t start = 0, line, next;
	const char *nl;

	*yaml_off = *yaml_len = *body_off = 0;
	*has = 0;
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
		start = 3;	/* a UTF-8 byte order mark */
	if (!is_fence(text, len, start, &line))
		return 0;
	start = line;
	while (line < len) {
		if (is_fence(text, len, line, &next)) {
			*yaml_off = start;
			*yaml_len = line - start;
			*body_off = next;
			*has = 1;
			return 0;
		}
		nl = memchr(text + line, '\n', len - line);
		line = nl ? (size_t)(nl - text) + 1 : len;
	}
	return RAY_EINVAL;
}
