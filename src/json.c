/*
 * json.c - encode a Lua value as JSON, exactly (see json.h).
 */
#include "json.h"
#include "buf.h"

#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

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

static int
put_number(lua_State *L, int idx, struct ray_buf *out, const struct path *p,
    struct ray_err *err)
{
	char num[32];
	double d;

	if (lua_isinteger(L, idx)) {
		ray_buf_addf(out, "%lld", (long long)lua_tointeger(L, idx));
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

/* Length n if the table at idx is a list 1..n (n > 0), else 0. */
static lua_Integer
list_length(lua_State *L, int idx)
{
	lua_Integer n = (lua_Integer)lua_rawlen(L, idx), count = 0;

	if (n == 0)
		return 0;
	lua_pushnil(L);
	while (lua_next(L, idx) != 0) {
		lua_pop(L, 1);
		if (!lua_isinteger(L, -1)) {
			lua_pop(L, 1);
			return 0;
		}
		count++;
	}
	return count == n ? n : 0;
}

/* An object key: its text (with its length: keys may hold NUL bytes). */
struct key {
	const char *s;
	size_t len;
	int is_int;		/* an integer key, written as its digits */
	lua_Integer ival;
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

/*
 * Check the keys of the table at idx and count them; returns the count, or
 * -1 after filling `err` if one is neither a string nor a whole number.
 */
static long
count_keys(lua_State *L, int idx, const struct path *p, struct ray_err *err)
{
	long n = 0;

	lua_pushnil(L);
	while (lua_next(L, idx) != 0) {
		lua_pop(L, 1);
		if (lua_type(L, -1) != LUA_TSTRING && !lua_isinteger(L, -1)) {
			lua_pop(L, 1);
			fail(p, err, "has a key that is neither a string nor a whole number");
			return -1;
		}
		n++;
	}
	return n;
}

static int
put_object(lua_State *L, int idx, struct ray_buf *out, struct path *p,
    struct ray_err *err)
{
	long count = count_keys(L, idx, p, err);
	struct key *keys;
	size_t n = 0, i;
	int r = 0;

	if (count < 0)
		return RAY_EINVAL;
	/*
	 * The keys live in Lua memory, so an error raised while they are in
	 * use leaves nothing to free.  A string key's text stays alive in the
	 * table; an integer key's digits are made on a copy kept in a holder
	 * table.
	 */
	keys = lua_newuserdatauv(L, (size_t)count * sizeof(*keys), 0);
	lua_newtable(L);	/* holder */
	lua_pushnil(L);
	while (lua_next(L, idx) != 0) {
		lua_pop(L, 1);
		keys[n].is_int = lua_type(L, -1) != LUA_TSTRING;
		if (keys[n].is_int) {
			keys[n].ival = lua_tointeger(L, -1);
			lua_pushvalue(L, -1);
			keys[n].s = lua_tolstring(L, -1, &keys[n].len);
			lua_rawseti(L, -3, (lua_Integer)n + 1);
		} else {
			keys[n].s = lua_tolstring(L, -1, &keys[n].len);
		}
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
		if (keys[i].is_int)
			lua_pushinteger(L, keys[i].ival);
		else
			lua_pushlstring(L, keys[i].s, keys[i].len);
		lua_rawget(L, idx);
		p->keys[p->depth] = keys[i].s;
		p->depth++;
		r = encode(L, lua_gettop(L), out, p, err);
		p->depth--;
		lua_pop(L, 1);
	}
	lua_pop(L, 2);		/* holder, keys */
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
		n = list_length(L, idx);
		if (n > 0)
			return put_array(L, idx, n, out, p, err);
		return put_object(L, idx, out, p, err);
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
