/*
 * fuzz_frontmatter.c - the frontmatter of markdown prompts
 * (src/frontmatter.h): ray_frontmatter_split() and ray_frontmatter_push().
 *
 * The input is a whole prompt file.  Checked:
 *
 *   - split: the offsets it gives lie inside the text and in order, and
 *     an unclosed or absent block gives what the header says;
 *   - push of the block it found (from line 2), or of the whole input as
 *     YAML (from line 1) when there is none, so libyaml and the mapping to
 *     Lua see every input: success leaves exactly one table on the stack,
 *     failure nothing, with a message beginning "frontmatter" and naming
 *     a line that exists; the table holds only strings, numbers, booleans
 *     and tables, with string keys in mappings and 1..n in lists, no
 *     deeper than the limit.
 *
 *   - ray_yaml_push of the whole input as a file: the same, with a
 *     message beginning with the file's name and naming a line that
 *     exists, and every line it records for a key or an element is a line
 *     of the input.
 *
 * push runs inside lua_pcall on a plain lua_State, as api_frontmatter does
 * inside the raymond host; a Lua error escaping it is a bug.
 */
#include "frontmatter.h"
#include "ray.h"
#include "fuzz.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64


struct job {
	const char *yaml;
	size_t len;
	int first_line;
	int rc;
	struct ray_err err;
};

/* Check the value at the top of the stack; depth counts tables around it. */
static void
walk(lua_State *L, int depth)
{
	lua_Integer n = 0;

	switch (lua_type(L, -1)) {
	case LUA_TSTRING:
	case LUA_TNUMBER:
	case LUA_TBOOLEAN:
		return;
	case LUA_TTABLE:
		break;
	default:
		bad("frontmatter gave a %s", luaL_typename(L, -1));
	}
	if (depth > MAX_DEPTH + 1)
		bad("frontmatter nests tables deeper than %d levels",
		    MAX_DEPTH + 1);
	/* Each level holds a key and a value; liblua does not check. */
	luaL_checkstack(L, 4, "walking the frontmatter");
	lua_pushnil(L);
	while (lua_next(L, -2) != 0) {
		if (lua_type(L, -2) == LUA_TNUMBER) {
			if (!lua_isinteger(L, -2) || lua_tointeger(L, -2) < 1)
				bad("frontmatter table has a number key "
				    "that is not 1..n");
			n++;
		} else if (lua_type(L, -2) != LUA_TSTRING) {
			bad("frontmatter table has a %s key",
			    luaL_typename(L, -2));
		}
		walk(L, depth + 1);
		lua_pop(L, 1);
	}
	if (n > 0 && (lua_Integer)lua_rawlen(L, -1) != n)
		bad("frontmatter list is not dense (1..n with holes)");
}

/*
 * After a push above stack index `top`: success left one sane table, a
 * failure nothing.
 */
static void
check_pushed(lua_State *L, const struct job *j, int top)
{
	if (j->rc == 0) {
		if (lua_gettop(L) != top + 1 || !lua_istable(L, -1))
			bad("push succeeded but left the stack %s",
			    lua_gettop(L) == top + 1 ? "with a non-table" :
			    "unbalanced");
		walk(L, 1);
	} else if (lua_gettop(L) != top) {
		bad("push failed but left the stack unbalanced");
	}
}

static int
push(lua_State *L)
{
	struct job *j = lua_touserdata(L, 1);
	int top;

	/* The types the engine asks for, so typed fields are fuzzed too. */
	lua_newtable(L);
	lua_pushliteral(L, "number");
	lua_setfield(L, -2, "timeout");
	lua_pushliteral(L, "boolean");
	lua_setfield(L, -2, "force_implicit");
	top = lua_gettop(L);
	j->rc = ray_frontmatter_push(L, j->yaml, j->len, j->first_line, top,
	    &j->err);
	check_pushed(L, j, top);
	return 0;
}

/* The last line a message or a lines table may name. */
static unsigned long long
last_line(const struct job *j)
{
	unsigned long long last = (unsigned long long)j->first_line;
	size_t i;

	for (i = 0; i < j->len; i++)
		if (j->yaml[i] == '\n')
			last++;
	if (j->len > 0 && j->yaml[j->len - 1] != '\n')
		last++;
	return last;
}

/* Every line in the lines table at the top of the stack is in the input. */
static void
check_lines(lua_State *L, const struct job *j)
{
	unsigned long long last = last_line(j);
	lua_Integer line;

	lua_pushnil(L);
	while (lua_next(L, -2) != 0) {
		if (!lua_istable(L, -2) || !lua_istable(L, -1))
			bad("the lines table holds a %s for a %s",
			    luaL_typename(L, -1), luaL_typename(L, -2));
		lua_pushnil(L);
		while (lua_next(L, -2) != 0) {
			line = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : 0;
			if (line < 1 || (unsigned long long)line > last)
				bad("the lines table names line %lld, not in "
				    "the input", (long long)line);
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
	}
}

static int
push_file(lua_State *L)
{
	struct job *j = lua_touserdata(L, 1);
	int top;

	lua_newtable(L);
	top = lua_gettop(L);
	j->rc = ray_yaml_push(L, j->yaml, j->len, "c.yaml", top, &j->err);
	check_pushed(L, j, top);
	if (j->rc == 0) {
		lua_pop(L, 1);
		check_lines(L, j);
	}
	return 0;
}

/*
 * A failure names a line of the file that the YAML covers.  At the end of
 * a last line without LF libyaml's mark moves on to the next line; a block
 * found by split always ends in LF, so that happens only for the whole
 * input parsed as YAML.
 *
 * Only LF counts: libyaml also takes a CR without LF, U+0085, U+2028 and
 * U+2029 as line breaks, but raymond names the file's lines.
 */
static void
check_error(const struct job *j, const char *prefix, const char *format)
{
	unsigned long long line, last = last_line(j);
	const char *m = j->err.msg;

	if (j->err.code != j->rc || strncmp(m, prefix, strlen(prefix)) != 0)
		bad("push failed with the message '%s'", m);
	if (sscanf(m, format, &line) == 1 &&
	    (line < (unsigned long long)j->first_line || line > last))
		bad("the message names a line outside the YAML: %s", m);
}

/*
 * Call `fn` on job `j` in protected mode, as the host does; a failure's
 * message begins with `prefix` and a line read by `format`.
 */
static void
run(lua_State *L, lua_CFunction fn, struct job *j, const char *prefix,
    const char *format)
{
	lua_pushcfunction(L, fn);
	lua_pushlightuserdata(L, j);
	if (lua_pcall(L, 1, 0, 0) != LUA_OK)
		bad("a Lua error escaped the push (%s): %s", prefix,
		    lua_tostring(L, -1));
	if (j->rc < 0)
		check_error(j, prefix, format);
	if (lua_gettop(L) != 0)
		bad("the Lua stack is not empty after the call");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static lua_State *L;
	const char *text = (const char *)data;
	size_t yaml_off, yaml_len, body_off;
	struct job j;
	int has, rc;

	if (L == NULL)
		L = luaL_newstate();

	rc = ray_frontmatter_split(text, size, &yaml_off, &yaml_len,
	    &body_off, &has);
	if (rc < 0 && (rc != RAY_EINVAL || has || body_off || yaml_off ||
	    yaml_len))
		bad("split failed (unclosed block) but set its outputs");
	if (rc == 0 && !has && (body_off || yaml_off || yaml_len))
		bad("split found no block but set offsets");
	if (rc == 0 && has && (yaml_off < 3 || yaml_off > size ||
	    yaml_len > body_off - yaml_off || body_off > size ||
	    body_off < yaml_off))
		bad("split gave offsets outside the text or out of order");
	if (rc == 0 && has && memcmp(text, "---", 3) != 0 &&
	    (size < 6 || memcmp(text, "\xEF\xBB\xBF---", 6) != 0))
		bad("split found a block without an opening fence");

	memset(&j, 0, sizeof(j));
	if (rc == 0 && has) {
		j.yaml = text + yaml_off;
		j.len = yaml_len;
		j.first_line = 2;
	} else {
		j.yaml = text;
		j.len = size;
		j.first_line = 1;
	}
	run(L, push, &j, "frontmatter", "frontmatter line %llu");

	memset(&j, 0, sizeof(j));
	j.yaml = text;
	j.len = size;
	j.first_line = 1;
	run(L, push_file, &j, "c.yaml", "c.yaml:%llu");
	return 0;
}
