/*
 * lua_strlib.c - string.find, string.match, string.gmatch, string.gsub and
 * string.rep for the raymond Lua state, in place of Lua's own.
 *
 * Lua's pattern matcher runs in C, where the count hook of a hook call
 * (lua_limit.c) never fires: string.find(string.rep("a", 30000),
 * ".-.-.-.-.-b") backtracks for minutes.  This matcher has the semantics of
 * Lua 5.4's patterns (the same classes, sets, quantifiers, anchors,
 * captures, %b, %f, back-references, the same nesting limit and the same
 * error messages), and counts its steps: every CHECK_EVERY steps it calls
 * ray__limit_charge(), which charges them to the calling coroutine's hook
 * call, if it has one, and raises the error of the count hook once the
 * call's instruction budget, deadline or interrupt has tripped.  Engine
 * code, which runs under no limit, sees the functions behave exactly like
 * Lua's.  string.rep refuses results over REP_MAX bytes, so one call cannot
 * spend its time filling the memory cap.
 *
 * Calling sequence: ray__strlib_install(L) once, after luaL_openlibs() and
 * before any module loads; it replaces the functions in the global string
 * table, which is also the __index of the string metatable, so method
 * calls ("x"):find(p) reach them too.
 *
 * Errors: malformed patterns and bad arguments raise Lua errors with Lua's
 * messages; a tripped limit raises from inside the match.  Nothing here
 * allocates C memory: the match state lives on the C stack and results are
 * built in Lua buffers, so any raise leaves nothing behind.
 *
 * The subject and the pattern are Lua strings, which always end in a NUL
 * byte; like Lua's matcher, this one reads that byte where the pattern or
 * the subject ends (a frontier at the end of the subject sees '\0').
 */
#include "lua_priv.h"

#include <ctype.h>
#include <lauxlib.h>
#include <string.h>

#define ESC '%'
#define SPECIALS "^$*+?.([%-"
#define MAX_CAPTURES 32	/* as Lua's LUA_MAXCAPTURES */
#define MAX_DEPTH 200		/* nested matches, as Lua's MAXCCALLS */
#define CHECK_EVERY 4096	/* steps between two looks at the limit */
#define REP_MAX ((size_t)64 << 20)

enum { CAP_OPEN = -1, CAP_POSITION = -2 };

struct capture {
	const char *at;
	ptrdiff_t len;		/* or CAP_OPEN, CAP_POSITION */
};

struct matcher {
	lua_State *L;
	const char *s0;		/* the subject */
	const char *s_end;
	const char *p_end;	/* the end of the pattern */
	int depth;		/* nested matches left */
	int ncap;
	long fuel;		/* steps left before the limit is looked at */
	struct capture cap[MAX_CAPTURES];
};

static const char *match(struct matcher *m, const char *s, const char *p);

static int
uc(char c)
{
	return (unsigned char)c;
}

/* Charge a batch of steps to the hook call, which raises if it tripped. */
static void
refuel(struct matcher *m)
{
	ray__limit_charge(m->L, CHECK_EVERY - m->fuel);
	m->fuel = CHECK_EVERY;
}

static void
spend(struct matcher *m, long steps)
{
	m->fuel -= steps;
	if (m->fuel <= 0)
		refuel(m);
}

static void
matcher_init(struct matcher *m, lua_State *L, const char *s, size_t ls,
    const char *p, size_t lp)
{
	m->L = L;
	m->s0 = s;
	m->s_end = s + ls;
	m->p_end = p + lp;
	m->depth = MAX_DEPTH;
	m->ncap = 0;
	m->fuel = CHECK_EVERY;
}

/* ---- single characters -------------------------------------------------- */

/* Whether c is in the class named by letter cl (%a, %D, ...). */
static int
in_class(int c, int cl)
{
	int r;

	switch (tolower(cl)) {
	case 'a': r = isalpha(c); break;
	case 'c': r = iscntrl(c); break;
	case 'd': r = isdigit(c); break;
	case 'g': r = isgraph(c); break;
	case 'l': r = islower(c); break;
	case 'p': r = ispunct(c); break;
	case 's': r = isspace(c); break;
	case 'u': r = isupper(c); break;
	case 'w': r = isalnum(c); break;
	case 'x': r = isxdigit(c); break;
	case 'z': r = c == 0; break;	/* deprecated in Lua, still there */
	default: return cl == c;	/* an escaped character stands for itself */
	}
	return isupper(cl) ? !r : r;
}

/* Whether c is in the set [...] from p (at '[') to end (at ']'). */
static int
in_set(int c, const char *p, const char *end)
{
	int yes = 1;

	p++;
	if (*p == '^') {
		yes = 0;
		p++;
	}
	for (; p < end; p++) {
		if (*p == ESC) {
			p++;
			if (in_class(c, uc(*p)))
				return yes;
		} else if (p[1] == '-' && p + 2 < end) {
			if (uc(p[0]) <= c && c <= uc(p[2]))
				return yes;
			p += 2;
		} else if (uc(*p) == c) {
			return yes;
		}
	}
	return !yes;
}

/* The end of the single-character class at p. */
static const char *
class_end(struct matcher *m, const char *p)
{
	char c = *p++;

	if (c == ESC) {
		if (p >= m->p_end)
			luaL_error(m->L, "malformed pattern (ends with '%%')");
		return p + 1;
	}
	if (c == '[') {
		if (*p == '^')
			p++;
		/* The first character is in the set even if it is ']'. */
		do {
			if (p >= m->p_end)
				luaL_error(m->L, "malformed pattern (missing ']')");
			c = *p++;
			if (c == ESC && p < m->p_end)
				p++;
		} while (*p != ']');
		return p + 1;
	}
	return p;
}

/* Whether the character at s matches the class from p to ep. */
static int
single(struct matcher *m, const char *s, const char *p, const char *ep)
{
	int c;

	if (s >= m->s_end)
		return 0;
	c = uc(*s);
	switch (*p) {
	case '.': return 1;
	case ESC: return in_class(c, uc(p[1]));
	case '[': return in_set(c, p, ep - 1);
	default: return uc(*p) == c;
	}
}

/* ---- the matcher -------------------------------------------------------- */

/* The longest run of the class, then shorter ones, until the rest matches. */
static const char *
greedy(struct matcher *m, const char *s, const char *p, const char *ep)
{
	ptrdiff_t i = 0;
	const char *r;

	while (single(m, s + i, p, ep))
		i++;
	spend(m, (long)(i / 8));
	for (; i >= 0; i--) {
		r = match(m, s + i, ep + 1);
		if (r)
			return r;
	}
	return NULL;
}

/* The shortest run of the class after which the rest matches. */
static const char *
lazy(struct matcher *m, const char *s, const char *p, const char *ep)
{
	const char *r;

	for (;;) {
		r = match(m, s, ep + 1);
		if (r)
			return r;
		if (!single(m, s, p, ep))
			return NULL;
		s++;
	}
}

/* %bxy at p (pointing at x): a balanced run from x to its y. */
static const char *
balance(struct matcher *m, const char *s, const char *p)
{
	const char *start = s;
	int open, close, depth = 1;

	if (p >= m->p_end - 1)
		luaL_error(m->L, "malformed pattern (missing arguments to '%%b')");
	if (s >= m->s_end || *s != *p)
		return NULL;
	open = uc(p[0]);
	close = uc(p[1]);
	while (++s < m->s_end) {
		if (uc(*s) == close) {
			if (--depth == 0)
				break;
		} else if (uc(*s) == open) {
			depth++;
		}
	}
	spend(m, (long)((s - start) / 8));
	return s < m->s_end ? s + 1 : NULL;
}

static const char *
open_capture(struct matcher *m, const char *s, const char *p, ptrdiff_t what)
{
	const char *r;

	if (m->ncap >= MAX_CAPTURES)
		luaL_error(m->L, "too many captures");
	m->cap[m->ncap].at = s;
	m->cap[m->ncap].len = what;
	m->ncap++;
	r = match(m, s, p);
	if (r == NULL)
		m->ncap--;
	return r;
}

static const char *
close_capture(struct matcher *m, const char *s, const char *p)
{
	const char *r;
	int i;

	for (i = m->ncap - 1; i >= 0; i--)
		if (m->cap[i].len == CAP_OPEN)
			break;
	if (i < 0)
		luaL_error(m->L, "invalid pattern capture");
	m->cap[i].len = s - m->cap[i].at;
	r = match(m, s, p);
	if (r == NULL)
		m->cap[i].len = CAP_OPEN;
	return r;
}

/* %1-%9: the text of a closed capture again.  A position never matches. */
static const char *
back_reference(struct matcher *m, const char *s, int digit)
{
	int i = digit - '1';
	ptrdiff_t len;

	if (i < 0 || i >= m->ncap || m->cap[i].len == CAP_OPEN)
		luaL_error(m->L, "invalid capture index %%%d", i + 1);
	len = m->cap[i].len;
	if (len < 0 || m->s_end - s < len)
		return NULL;
	spend(m, (long)(len / 64));
	return memcmp(m->cap[i].at, s, (size_t)len) == 0 ? s + len : NULL;
}

/*
 * Match the pattern from p at s; returns the end of the match or NULL.
 * Each call is a step, and at most MAX_DEPTH calls nest; a single
 * character without a quantifier and the items that cannot fail later
 * loop here instead of nesting.
 */
static const char *
match(struct matcher *m, const char *s, const char *p)
{
	const char *ep, *r;
	int prev;

	if (m->depth-- == 0)
		luaL_error(m->L, "pattern too complex");
	if (--m->fuel <= 0)
		refuel(m);
	while (p != m->p_end) {
		switch (*p) {
		case '(':
			if (p[1] == ')')
				s = open_capture(m, s, p + 2, CAP_POSITION);
			else
				s = open_capture(m, s, p + 1, CAP_OPEN);
			goto done;
		case ')':
			s = close_capture(m, s, p + 1);
			goto done;
		case '$':
			if (p + 1 != m->p_end)
				break;	/* an ordinary '$' */
			if (s != m->s_end)
				s = NULL;
			goto done;
		case ESC:
			if (p[1] == 'b') {
				s = balance(m, s, p + 2);
				if (s == NULL)
					goto done;
				p += 4;
				continue;
			}
			if (p[1] == 'f') {
				p += 2;
				if (*p != '[')
					luaL_error(m->L, "missing '[' after '%%f' in pattern");
				ep = class_end(m, p);
				prev = s == m->s0 ? 0 : uc(s[-1]);
				if (!in_set(prev, p, ep - 1) && in_set(uc(*s), p, ep - 1)) {
					p = ep;
					continue;
				}
				s = NULL;
				goto done;
			}
			if (isdigit(uc(p[1]))) {
				s = back_reference(m, s, uc(p[1]));
				if (s == NULL)
					goto done;
				p += 2;
				continue;
			}
			break;	/* a class such as %a, or an escaped character */
		default:
			break;
		}
		ep = class_end(m, p);
		if (!single(m, s, p, ep)) {
			if (*ep == '*' || *ep == '?' || *ep == '-') {
				p = ep + 1;	/* zero repetitions will do */
				continue;
			}
			s = NULL;
			goto done;
		}
		switch (*ep) {
		case '?':
			r = match(m, s + 1, ep + 1);
			if (r) {
				s = r;
				goto done;
			}
			p = ep + 1;
			continue;
		case '+':
			s = greedy(m, s + 1, p, ep);
			goto done;
		case '*':
			s = greedy(m, s, p, ep);
			goto done;
		case '-':
			s = lazy(m, s, p, ep);
			goto done;
		default:
			s++;
			p = ep;
			continue;
		}
	}
done:
	m->depth++;
	return s;
}

/* ---- captures ----------------------------------------------------------- */

/*
 * Push capture i; without captures, capture 0 is the whole match s..e.
 * Returns CAP_POSITION when it pushed a position, else the length of the
 * text, which is also set in *text.
 */
static ptrdiff_t
get_capture(struct matcher *m, int i, const char *s, const char *e,
    const char **text)
{
	ptrdiff_t len;

	if (i >= m->ncap) {
		if (i != 0)
			luaL_error(m->L, "invalid capture index %%%d", i + 1);
		*text = s;
		return e - s;
	}
	len = m->cap[i].len;
	*text = m->cap[i].at;
	if (len == CAP_OPEN)
		luaL_error(m->L, "unfinished capture");
	if (len == CAP_POSITION)
		lua_pushinteger(m->L, (m->cap[i].at - m->s0) + 1);
	return len;
}

static void
push_capture(struct matcher *m, int i, const char *s, const char *e)
{
	const char *text;
	ptrdiff_t len = get_capture(m, i, s, e, &text);

	if (len != CAP_POSITION)
		lua_pushlstring(m->L, text, (size_t)len);
}

/* Push every capture, or the whole match when s is given and there are none. */
static int
push_captures(struct matcher *m, const char *s, const char *e)
{
	int i, n = (m->ncap == 0 && s) ? 1 : m->ncap;

	luaL_checkstack(m->L, n, "too many captures");
	for (i = 0; i < n; i++)
		push_capture(m, i, s, e);
	return n;
}

/* ---- string.find, string.match ------------------------------------------ */

/* A 1-based start position, as Lua reads negative and zero ones. */
static size_t
start_at(lua_Integer pos, size_t len)
{
	if (pos > 0)
		return (size_t)pos;
	if (pos == 0 || pos < -(lua_Integer)len)
		return 1;
	return len + (size_t)pos + 1;
}

static int
has_specials(const char *p, size_t lp)
{
	size_t i;

	for (i = 0; i < lp; i++)
		if (p[i] != '\0' && strchr(SPECIALS, p[i]))
			return 1;
	return 0;
}

/* The first occurrence of p in s, as plain text; counts a step per try. */
static const char *
find_plain(struct matcher *m, const char *s, size_t ls, const char *p, size_t lp)
{
	const char *at, *end;

	if (lp == 0)
		return s;
	if (lp > ls)
		return NULL;
	end = s + (ls - lp) + 1;	/* the last start that fits, plus one */
	while (s < end && (at = memchr(s, p[0], (size_t)(end - s))) != NULL) {
		spend(m, 1 + (long)(lp / 64));
		if (memcmp(at + 1, p + 1, lp - 1) == 0)
			return at;
		s = at + 1;
	}
	return NULL;
}

static int
find_or_match(lua_State *L, int find)
{
	size_t ls, lp;
	const char *s = luaL_checklstring(L, 1, &ls);
	const char *p = luaL_checklstring(L, 2, &lp);
	size_t init = start_at(luaL_optinteger(L, 3, 1), ls) - 1;
	struct matcher m;
	const char *at, *e;
	int anchor;

	if (init > ls) {
		luaL_pushfail(L);
		return 1;
	}
	if (find && (lua_toboolean(L, 4) || !has_specials(p, lp))) {
		matcher_init(&m, L, s, ls, p, lp);
		at = find_plain(&m, s + init, ls - init, p, lp);
		if (at) {
			lua_pushinteger(L, (at - s) + 1);
			lua_pushinteger(L, (lua_Integer)((size_t)(at - s) + lp));
			return 2;
		}
		luaL_pushfail(L);
		return 1;
	}
	anchor = *p == '^';
	if (anchor) {
		p++;
		lp--;
	}
	matcher_init(&m, L, s, ls, p, lp);
	at = s + init;
	do {
		m.ncap = 0;
		e = match(&m, at, p);
		if (e) {
			if (!find)
				return push_captures(&m, at, e);
			lua_pushinteger(L, (at - s) + 1);
			lua_pushinteger(L, e - s);
			return push_captures(&m, NULL, NULL) + 2;
		}
	} while (at++ < m.s_end && !anchor);
	luaL_pushfail(L);
	return 1;
}

static int
str_find(lua_State *L)
{
	return find_or_match(L, 1);
}

static int
str_match(lua_State *L)
{
	return find_or_match(L, 0);
}

/* ---- string.gmatch ------------------------------------------------------ */

struct gmatch {
	struct matcher m;
	const char *at;		/* where the next search starts */
	const char *p;
	const char *last;	/* the end of the last match, never matched again */
};

/* The iterator; its upvalues are the subject, the pattern and the state. */
static int
gmatch_next(lua_State *L)
{
	struct gmatch *g = lua_touserdata(L, lua_upvalueindex(3));
	const char *at, *e;

	g->m.L = L;
	g->m.fuel = CHECK_EVERY;
	for (at = g->at; at <= g->m.s_end; at++) {
		g->m.ncap = 0;
		e = match(&g->m, at, g->p);
		if (e && e != g->last) {
			g->at = g->last = e;
			return push_captures(&g->m, at, e);
		}
	}
	return 0;
}

static int
str_gmatch(lua_State *L)
{
	size_t ls, lp;
	const char *s = luaL_checklstring(L, 1, &ls);
	const char *p = luaL_checklstring(L, 2, &lp);
	size_t init = start_at(luaL_optinteger(L, 3, 1), ls) - 1;
	struct gmatch *g;

	lua_settop(L, 2);	/* the iterator keeps both strings alive */
	g = lua_newuserdatauv(L, sizeof(*g), 0);
	if (init > ls)
		init = ls + 1;	/* past the end: nothing to find */
	matcher_init(&g->m, L, s, ls, p, lp);
	g->at = s + init;
	g->p = p;
	g->last = NULL;
	lua_pushcclosure(L, gmatch_next, 3);
	return 1;
}

/* ---- string.gsub -------------------------------------------------------- */

/* Add the replacement string (argument 3) with its %0-%9 filled in. */
static void
add_string(struct matcher *m, luaL_Buffer *b, const char *s, const char *e)
{
	lua_State *L = m->L;
	size_t l;
	const char *r = lua_tolstring(L, 3, &l);
	const char *pc, *text;
	ptrdiff_t len;

	while ((pc = memchr(r, ESC, l)) != NULL) {
		luaL_addlstring(b, r, (size_t)(pc - r));
		pc++;		/* the character after '%', or the final NUL */
		if (*pc == ESC) {
			luaL_addchar(b, ESC);
		} else if (*pc == '0') {
			luaL_addlstring(b, s, (size_t)(e - s));
		} else if (isdigit(uc(*pc))) {
			len = get_capture(m, *pc - '1', s, e, &text);
			if (len == CAP_POSITION)
				luaL_addvalue(b);	/* the position pushed */
			else
				luaL_addlstring(b, text, (size_t)len);
		} else {
			luaL_error(L, "invalid use of '%c' in replacement string", ESC);
		}
		l -= (size_t)(pc + 1 - r);
		r = pc + 1;
	}
	luaL_addlstring(b, r, l);
}

/*
 * Add the replacement of the match s..e; returns whether it differs from
 * the match (a false or nil from a table or function keeps the match).
 */
static int
add_replacement(struct matcher *m, luaL_Buffer *b, const char *s,
    const char *e, int type)
{
	lua_State *L = m->L;

	if (type == LUA_TFUNCTION) {
		int n;

		lua_pushvalue(L, 3);
		n = push_captures(m, s, e);
		lua_call(L, n, 1);
	} else if (type == LUA_TTABLE) {
		push_capture(m, 0, s, e);
		lua_gettable(L, 3);
	} else {
		add_string(m, b, s, e);
		return 1;
	}
	if (!lua_toboolean(L, -1)) {
		lua_pop(L, 1);
		luaL_addlstring(b, s, (size_t)(e - s));
		return 0;
	}
	if (!lua_isstring(L, -1))
		return luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
	luaL_addvalue(b);
	return 1;
}

static int
str_gsub(lua_State *L)
{
	size_t ls, lp;
	const char *src = luaL_checklstring(L, 1, &ls);
	const char *p = luaL_checklstring(L, 2, &lp);
	int type = lua_type(L, 3);
	lua_Integer max = luaL_optinteger(L, 4, (lua_Integer)ls + 1);
	const char *last = NULL, *e;
	lua_Integer n = 0;
	int anchor = *p == '^', changed = 0;
	struct matcher m;
	luaL_Buffer b;

	luaL_argexpected(L, type == LUA_TNUMBER || type == LUA_TSTRING ||
	    type == LUA_TFUNCTION || type == LUA_TTABLE, 3, "string/function/table");
	luaL_buffinit(L, &b);
	if (anchor) {
		p++;
		lp--;
	}
	matcher_init(&m, L, src, ls, p, lp);
	while (n < max) {
		m.ncap = 0;
		e = match(&m, src, p);
		if (e && e != last) {
			n++;
			changed |= add_replacement(&m, &b, src, e, type);
			src = last = e;
		} else if (src < m.s_end) {
			luaL_addchar(&b, *src++);
		} else {
			break;
		}
		if (anchor)
			break;
	}
	if (changed) {
		luaL_addlstring(&b, src, (size_t)(m.s_end - src));
		luaL_pushresult(&b);
	} else {
		lua_pushvalue(L, 1);
	}
	lua_pushinteger(L, n);
	return 2;
}

/* ---- string.rep --------------------------------------------------------- */

static int
str_rep(lua_State *L)
{
	size_t l, lsep, total;
	const char *s = luaL_checklstring(L, 1, &l);
	lua_Integer n = luaL_checkinteger(L, 2);
	const char *sep = luaL_optlstring(L, 3, "", &lsep);
	luaL_Buffer b;
	char *out;

	if (n <= 0 || l + lsep == 0) {
		lua_pushliteral(L, "");
		return 1;
	}
	if (l + lsep < l || (size_t)n > (REP_MAX + lsep) / (l + lsep))
		return luaL_error(L, "resulting string too large "
		    "(string.rep makes at most %d MiB)", (int)(REP_MAX >> 20));
	total = (size_t)n * l + (size_t)(n - 1) * lsep;
	out = luaL_buffinitsize(L, &b, total);
	while (n-- > 0) {
		memcpy(out, s, l);
		out += l;
		if (n > 0 && lsep > 0) {
			memcpy(out, sep, lsep);
			out += lsep;
		}
	}
	luaL_pushresultsize(&b, total);
	return 1;
}

static const luaL_Reg strlib_funcs[] = {
	{ "find", str_find },
	{ "match", str_match },
	{ "gmatch", str_gmatch },
	{ "gsub", str_gsub },
	{ "rep", str_rep },
	{ NULL, NULL },
};

void
ray__strlib_install(lua_State *L)
{
	lua_getglobal(L, "string");
	luaL_setfuncs(L, strlib_funcs, 0);
	lua_pop(L, 1);
}
