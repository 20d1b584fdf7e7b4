/*
 * json.c - encode a Lua value as JSON, exactly (see json.h).
 */
#include "json.h"
#include "buf.h"

#include <lauxlib.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH RAY_JSON_MAX_DEPTH
/* The largest magnitude a double holds every whole number up to. */
#define MAX_EXACT ((lua_Integer)1 << 53)

/* The metatable of the userdata that holds the output buffer. */
#define BUF_MT "raymond.json.buf"

/* The path to the value being encoded, for error messages. */
struct path {
	const char *keys[MAX_DEPTH + 1];
	lua_Integer idx[MAX_DEPTH + 1];
	int depth;
};

static void
describe(const struct path *p, char *buf, size_t len)
{
	size_t n = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < p->depth && n < len; i++) {
		if (p->keys[i])
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "." : "", p->keys[i]);
		else
			n += (size_t)snprintf(buf + n, len - n, "[%lld]", (long long)p->idx[i]);
	}
	if (buf[0] == '\0')
		snprintf(buf, len, "the value");
}

static int
fail(const struct path *p, struct ray_err *err, const char *what)
{
	char where[512];

	describe(p, where, sizeof(where));
	return ray_err_set(err, RAY_EINVAL, "%s %s", where, what);
}

static void
put_string(struct ray_buf *out, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, start = 0;

	ray_buf_addc(out, '"');
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *esc = NULL;
		char u[7];

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		switch (c) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		default:
			memcpy(u, "\\u00", 4);
			u[4] = hex[c >> 4];
			u[5] = hex[c & 15];
			u[6] = '\0';
			esc = u;
		}
		ray_buf_add(out, s + start, i - start);
		ray_buf_adds(out, esc);
		start = i + 1;
	}
	ray_buf_add(out, s + start, len - start);
	ray_buf_addc(out, '"');
}

/*
 * Integer i, within 2^53, in decimal: a state holds a few of them and is
 * encoded at every step, where the general formatter costs ten times more.
 */
static void
put_integer(struct ray_buf *out, lua_Integer i)
{
	char num[24], *p = num + sizeof(num);
	unsigned long long u = i < 0 ? 0ULL - (unsigned long long)i : (unsigned long long)i;

	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (i < 0)
		*--p = '-';
	ray_buf_add(out, p, (size_t)(num + sizeof(num) - p));
}

static int
put_number(lua_State *L, int idx, struct ray_buf *out, const struct path *p,
    struct ray_err *err)
{
	char num[32];
	lua_Integer i;
	double d;

	if (lua_isinteger(L, idx)) {
		i = lua_tointeger(L, idx);
		/*
		 * cjson, which reads the state back, reads every number as a
		 * double, so a larger one would load as a neighbour.
		 */
		if (i > MAX_EXACT || i < -MAX_EXACT) {
			snprintf(num, sizeof(num), "%lld", (long long)i);
			return fail(p, err, lua_pushfstring(L, "is %s, a whole "
			    "number beyond 2^53 that cannot be read back exactly; "
			    "store it as a string", num));
		}
		put_integer(out, i);
		return 0;
	}
	d = lua_tonumber(L, idx);
	if (!isfinite(d))
		return fail(p, err, "is not a finite number");
	/* Integral floats keep a fraction so they read back as numbers alike. */
	snprintf(num, sizeof(num), "%.17g", d);
	ray_buf_adds(out, num);
	if (strspn(num, "-0123456789") == strlen(num))
		ray_buf_adds(out, ".0");
	return 0;
}

/* Whether string key `s` is the decimal form of integer key `*i`. */
static int
integer_text(const char *s, size_t len, lua_Integer *i)
{
	char buf[32];

	if (len == 0 || len >= sizeof(buf) || (s[0] == '0' && len > 1) ||
	    (s[0] == '-' && (len == 1 || s[1] == '0')))
		return 0;
	if (strspn(s + (s[0] == '-'), "0123456789") != len - (s[0] == '-'))
		return 0;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	*i = (lua_Integer)strtoll(buf, NULL, 10);
	return errno == 0;
}

/*
 * Whether the empty table at idx is an empty list: its metatable says
 * __jsontype = "array".  An empty table is an object otherwise, so a list
 * that may be empty (a run's agents once all have ended) is marked.
 */
static int
empty_array(lua_State *L, int idx)
{
	int is;

	if (luaL_getmetafield(L, idx, "__jsontype") == LUA_TNIL)
		return 0;
	is = lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), "array") == 0;
	lua_pop(L, 1);
	return is;
}

/*
 * The shape of the table at idx: its length n > 0 if its keys are exactly
 * 1..n (an array), 0 if they are all strings (an object; also the empty
 * table), else RAY_EINVAL with `err` saying why.  JSON has nothing else,
 * and anything else would not read back as it was: cjson reads the object
 * {"1":"a","3":"c"} with string keys, and {1, "1"} has one key twice.
 */
static int
table_shape(lua_State *L, int idx, const struct path *p, lua_Integer *n,
    long *nkeys, struct ray_err *err)
{
	lua_Integer ints = 0, min = 0, max = 0, k;
	long strs = 0;
	const char *s;
	size_t len;
	char what[160];

	*n = 0;
	*nkeys = 0;
	lua_pushnil(L);
	while (lua_next(L, idx) != 0) {
		lua_pop(L, 1);
		if (lua_type(L, -1) == LUA_TSTRING) {
			strs++;
			continue;
		}
		if (!lua_isinteger(L, -1)) {
			lua_pop(L, 1);
			return fail(p, err, "has a key that is neither a string "
			    "nor a whole number");
		}
		k = lua_tointeger(L, -1);
		if (ints++ == 0)
			min = max = k;
		min = k < min ? k : min;
		max = k > max ? k : max;
	}
	*nkeys = strs;
	if (ints == 0)
		return 0;
	if (strs > 0) {
		lua_pushnil(L);
		while (lua_next(L, idx) != 0) {
			lua_pop(L, 1);
			if (lua_type(L, -1) != LUA_TSTRING)
				continue;
			s = lua_tolstring(L, -1, &len);
			if (!integer_text(s, len, &k))
				continue;
			if (lua_rawgeti(L, idx, k) != LUA_TNIL) {
				lua_pop(L, 2);
				snprintf(what, sizeof(what), "has both %lld and "
				    "\"%lld\" as keys, which JSON cannot tell "
				    "apart", (long long)k, (long long)k);
				return fail(p, err, what);
			}
			lua_pop(L, 1);
		}
		return fail(p, err, "mixes list entries (whole-number keys) with "
		    "named keys, which JSON cannot hold: use one or the other");
	}
	if (min != 1) {
		snprintf(what, sizeof(what), "is a list whose first key is %lld; "
		    "JSON lists start at 1", (long long)min);
		return fail(p, err, what);
	}
	if (max != ints) {
		for (k = 1; lua_rawgeti(L, idx, k) != LUA_TNIL; k++)
			lua_pop(L, 1);
		lua_pop(L, 1);
		snprintf(what, sizeof(what), "is a list with a hole: [%lld] is "
		    "nil but [%lld] is not, which JSON cannot hold", (long long)k,
		    (long long)max);
		return fail(p, err, what);
	}
	*n = ints;
	return 0;
}

/* An object key: its text (with its length: keys may hold NUL bytes). */
struct key {
	const char *s;
	size_t len;
};

static int
cmp_keys(const void *a, const void *b)
{
	const struct key *x = a, *y = b;
	int c = memcmp(x->s, y->s, x->len < y->len ? x->len : y->len);

	if (c != 0)
		return c;
	return (x->len > y->len) - (x->len < y->len);
}

static int encode(lua_State *L, int idx, struct ray_buf *out, struct path *p,
    struct ray_err *err);

/* The object at idx, whose `count` keys are all strings (table_shape). */
static int
put_object(lua_State *L, int idx, long count, struct ray_buf *out,
    struct path *p, struct ray_err *err)
{
	struct key *keys;
	size_t n = 0, i;
	int r = 0;

	/*
	 * The keys live in Lua memory, so an error raised while they are in
	 * use leaves nothing to free; each key's text stays alive in the
	 * table.
	 */
	keys = lua_newuserdatauv(L, (size_t)count * sizeof(*keys), 0);
	lua_pushnil(L);
	while (lua_next(L, idx) != 0) {
		lua_pop(L, 1);
		keys[n].s = lua_tolstring(L, -1, &keys[n].len);
		n++;
	}
	ray_buf_addc(out, '{');
	if (n > 1)
		qsort(keys, n, sizeof(*keys), cmp_keys);
	for (i = 0; i < n && r == 0; i++) {
		if (i)
			ray_buf_addc(out, ',');
		put_string(out, keys[i].s, keys[i].len);
		ray_buf_addc(out, ':');
		lua_pushlstring(L, keys[i].s, keys[i].len);
		lua_rawget(L, idx);
		p->keys[p->depth] = keys[i].s;
		p->depth++;
		r = encode(L, lua_gettop(L), out, p, err);
		p->depth--;
		lua_pop(L, 1);
	}
	lua_pop(L, 1);		/* keys */
	ray_buf_addc(out, '}');
	return r;
}

static int
put_array(lua_State *L, int idx, lua_Integer n, struct ray_buf *out,
    struct path *p, struct ray_err *err)
{
	lua_Integer i;
	int r = 0;

	ray_buf_addc(out, '[');
	for (i = 1; i <= n && r == 0; i++) {
		if (i > 1)
			ray_buf_addc(out, ',');
		lua_rawgeti(L, idx, i);
		p->keys[p->depth] = NULL;
		p->idx[p->depth] = i;
		p->depth++;
		r = encode(L, lua_gettop(L), out, p, err);
		p->depth--;
		lua_pop(L, 1);
	}
	ray_buf_addc(out, ']');
	return r;
}

static int
encode(lua_State *L, int idx, struct ray_buf *out, struct path *p,
    struct ray_err *err)
{
	lua_Integer n;
	long nkeys;
	size_t len;
	const char *s;

	switch (lua_type(L, idx)) {
	case LUA_TNIL:
		ray_buf_adds(out, "null");
		return 0;
	case LUA_TBOOLEAN:
		ray_buf_adds(out, lua_toboolean(L, idx) ? "true" : "false");
		return 0;
	case LUA_TNUMBER:
		return put_number(L, idx, out, p, err);
	case LUA_TSTRING:
		s = lua_tolstring(L, idx, &len);
		put_string(out, s, len);
		return 0;
	case LUA_TLIGHTUSERDATA:
		if (lua_touserdata(L, idx) == NULL) {	/* cjson.null */
			ray_buf_adds(out, "null");
			return 0;
		}
		break;
	case LUA_TTABLE:
		if (p->depth >= MAX_DEPTH)
			return fail(p, err, "is nested too deeply (or contains itself)");
		luaL_checkstack(L, 8, "json");
		if (table_shape(L, idx, p, &n, &nkeys, err) < 0)
			return RAY_EINVAL;
		if (n > 0)
			return put_array(L, idx, n, out, p, err);
		if (nkeys == 0 && empty_array(L, idx)) {
			ray_buf_adds(out, "[]");
			return 0;
		}
		return put_object(L, idx, nkeys, out, p, err);
	}
	return fail(p, err, lua_pushfstring(L, "is a %s, which JSON cannot hold",
	    luaL_typename(L, idx)));
}

/* __gc and __close of the userdata holding the output buffer. */
static int
buf_gc(lua_State *L)
{
	ray_buf_release(luaL_checkudata(L, 1, BUF_MT));
	return 0;
}

int
ray_json_encode(lua_State *L, int idx, struct ray_err *err)
{
	struct ray_buf *out;
	struct path p;
	int top, box, r;

	idx = lua_absindex(L, idx);
	top = lua_gettop(L);
	/*
	 * The buffer grows with malloc, and any Lua call below may raise, so
	 * it hangs off a to-be-closed userdata that an error unwinding the
	 * stack frees.
	 */
	out = lua_newuserdatauv(L, sizeof(*out), 0);
	memset(out, 0, sizeof(*out));
	if (luaL_newmetatable(L, BUF_MT)) {
		lua_pushcfunction(L, buf_gc);
		lua_setfield(L, -2, "__gc");
		lua_pushcfunction(L, buf_gc);
		lua_setfield(L, -2, "__close");
	}
	lua_setmetatable(L, -2);
	box = lua_gettop(L);
	lua_toclose(L, box);

	p.depth = 0;
	r = encode(L, idx, out, &p, err);
	lua_settop(L, box);
	if (r == 0)
		lua_pushlstring(L, ray_buf_str(out), out->len);
	lua_closeslot(L, box);
	if (r == 0)
		lua_remove(L, box);
	else
		lua_settop(L, top);
	return r;
}
