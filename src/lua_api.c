/*
 * lua_api.c - the `raymond` module's functions that do not wait: tags,
 * files, clocks and the process environment (the run's lease is in
 * lua_lease.c).
 *
 * Convention (as in Lua's io library): misuse raises; an operational
 * failure returns nil and a message that names the path and the reason.
 * Scheduling functions (go, spawn, sleep, ...) live in lua_sched.c.
 *
 * Any Lua call may raise (out of memory, at the least), and a raise
 * unwinds past the C code without returning to it.  So no function here
 * holds malloc'd memory, a descriptor or a library handle across a Lua
 * call unless a userdata owns it: a box (below) that frees it when the
 * function returns or an error unwinds it, or an object such as a
 * journal or an archive whose __gc closes it.
 */
#include "lua_priv.h"
#include "archive.h"
#include "atomicfile.h"
#include "buf.h"
#include "embedded.h"
#include "frontmatter.h"
#include "journal.h"
#include "json.h"
#include "sha256.h"
#include "termsafe.h"
#include "tagparse.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int
fail(lua_State *L, const char *fmt, ...)
{
	va_list ap;

	lua_pushnil(L);
	va_start(ap, fmt);
	lua_pushvfstring(L, fmt, ap);
	va_end(ap);
	return 2;
}

static int
fail_errno(lua_State *L, const char *what, const char *path)
{
	int e = errno;

	return fail(L, "cannot %s '%s': %s", what, path, strerror(e));
}

/*
 * nil, the message of `err` with its hint on a second line, its code.
 * Work stopped by a signal (RAY_EINTR) first marks the run interrupted,
 * as the loop would once it got control, so the caller already sees
 * raymond.stopping() and ends without calling it a failure.  Only the
 * functions registered with the host as upvalue can stop that way.
 */
static int
fail_err(lua_State *L, const struct ray_err *err)
{
	struct ray_host *h;

	if (err->code == RAY_EINTR && (h = ray__host_from(L)) != NULL)
		ray__sched_take_signals(h);
	lua_pushnil(L);
	if (err->hint[0] != '\0')
		lua_pushfstring(L, "%s\nhint: %s", err->msg, err->hint);
	else
		lua_pushstring(L, err->msg);
	lua_pushinteger(L, err->code);
	return 3;
}

#define BOX_MT "raymond.box"

/*
 * A box owns one C resource for the length of a call: box_push() pushes
 * it as a to-be-closed userdata, the caller puts the resource in it, and
 * Lua frees it with the box's function when the C function returns or an
 * error unwinds its stack, whichever comes first.  The box is pushed
 * before the resource is made, so failing to push it leaks nothing.
 */
struct box {
	void *p;
	void (*free)(void *);
};

static struct box *
box_push(lua_State *L, void (*fn)(void *))
{
	struct box *b = lua_newuserdatauv(L, sizeof(*b), 0);

	b->p = NULL;
	b->free = fn;
	luaL_setmetatable(L, BOX_MT);
	lua_toclose(L, -1);
	return b;
}

/* The box's __close and __gc. */
static int
box_close(lua_State *L)
{
	struct box *b = luaL_checkudata(L, 1, BOX_MT);

	if (b->p != NULL)
		b->free(b->p);
	b->p = NULL;
	return 0;
}

static void
free_tagparse(void *p)
{
	ray_tagparse_free(p);
}

/* The <print> text of a parse, shown as a script's reaches stdout. */
struct printed {
	luaL_Buffer b;
	struct ray_termsafe_print pr;
};

static void
add_to_luabuf(void *ctx, const char *p, size_t n)
{
	luaL_addlstring(ctx, p, n);
}

static void
collect_print(void *ud, const char *text, size_t len, int end)
{
	struct printed *p = ud;

	ray_termsafe_print(&p->pr, text, len, end, add_to_luabuf, &p->b);
}

/*
 * raymond.parse_tags(text) -> tags, printed | nil, message.  `printed` is
 * the text of its <print> tags as a script's would reach stdout, control
 * characters shown rather than obeyed (ray_termsafe_print).  The
 * buffer is only added to while the parser runs, so the stack stays as
 * luaL_Buffer needs it.
 */
static int
api_parse_tags(lua_State *L)
{
	size_t len;
	const char *text = luaL_checklstring(L, 1, &len);
	struct box *b = box_push(L, free_tagparse);
	struct printed pr;
	struct ray_tagparse *tp;
	struct ray_err err;

	pr.pr = (struct ray_termsafe_print)RAY_TERMSAFE_PRINT_INIT;
	luaL_buffinit(L, &pr.b);
	tp = ray_tagparse_new(collect_print, &pr);
	b->p = tp;
	if (ray_tagparse_feed(tp, text, len, &err) < 0 ||
	    ray_tagparse_finish(tp, &err) < 0)
		return fail(L, "%s", err.msg);
	luaL_pushresult(&pr.b);
	ray__push_tags(L, tp);
	lua_insert(L, -2);
	return 2;
}

/* raymond.json_encode(value) -> text | nil, message (see json.h) */
static int
api_json_encode(lua_State *L)
{
	struct ray_err err;

	luaL_checkany(L, 1);
	if (ray_json_encode(L, 1, &err) < 0)
		return fail(L, "%s", err.msg);
	return 1;
}

/*
 * raymond.read_file(path [, max]) -> data | nil, message, code; a file
 * over `max` bytes is refused unread (RAY_ETOOBIG)
 */
static int
api_read_file(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	lua_Integer max = luaL_optinteger(L, 2, -1);
	struct box *b = box_push(L, free);
	struct ray_err err;
	char *data;
	size_t len;

	if (ray_atomicfile_read_max(path, max < 0 ? SIZE_MAX : (size_t)max,
	    &data, &len, &err) < 0)
		return fail_err(L, &err);
	b->p = data;
	lua_pushlstring(L, data, len);
	return 1;
}

/*
 * raymond.read_range(path, offset, max) -> data | nil, message, code: at
 * most `max` bytes of the file from byte `offset` on; "" at or past its
 * end.  A follower of a file that only grows (a run's debug record)
 * reads what came since it last looked, never the whole file again.
 */
static int
api_read_range(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	lua_Integer off = luaL_checkinteger(L, 2);
	lua_Integer max = luaL_checkinteger(L, 3);
	luaL_Buffer b;
	ssize_t n;
	char *p;
	int fd;

	luaL_argcheck(L, off >= 0, 2, "offset must be 0 or more");
	luaL_argcheck(L, max >= 0 && max <= (lua_Integer)1 << 30, 3, "max out of range");
	p = luaL_buffinitsize(L, &b, (size_t)max);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail_errno(L, "open", path);
	do
		n = pread(fd, p, (size_t)max, (off_t)off);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return fail_errno(L, "read", path);
	}
	close(fd);
	luaL_pushresultsize(&b, (size_t)n);
	return 1;
}

/*
 * raymond.frontmatter(text [, types]) -> meta, body | nil, message (see
 * frontmatter.h; `types` maps fields to "number", "boolean", ...)
 */
static int
api_frontmatter(lua_State *L)
{
	size_t len, yaml_off, yaml_len, body_off;
	const char *text = luaL_checklstring(L, 1, &len);
	struct ray_err err;
	int has, types = 0;

	if (!lua_isnoneornil(L, 2)) {
		luaL_checktype(L, 2, LUA_TTABLE);
		types = 2;
	}
	if (ray_frontmatter_split(text, len, &yaml_off, &yaml_len, &body_off, &has) < 0)
		return fail(L, "frontmatter is not closed: line 1 is '---' but no later line is");
	if (!has)
		lua_newtable(L);
	else if (ray_frontmatter_push(L, text + yaml_off, yaml_len, 2, types, &err) < 0)
		return fail(L, "%s", err.msg);
	lua_pushlstring(L, text + body_off, len - body_off);
	return 2;
}

/*
 * raymond.yaml(text, name) -> doc, lines | nil, message: a whole YAML file,
 * every value a string, and where each key and element is (see
 * ray_yaml_push in frontmatter.h).
 */
static int
api_yaml(lua_State *L)
{
	size_t len;
	const char *text = luaL_checklstring(L, 1, &len);
	struct ray_err err;

	luaL_checkstring(L, 2);
	lua_settop(L, 2);
	lua_newtable(L);
	if (ray_yaml_push(L, text, len, lua_tostring(L, 2), 3, &err) < 0)
		return fail(L, "%s", err.msg);
	lua_pushvalue(L, 3);
	return 2;
}

/*
 * raymond.write_atomic(path, data [, "private" | "private unsynced"])
 *     -> true | nil, message, code
 * "private" makes the file 0600; "unsynced" leaves out the fsyncs (see
 * ray_atomicfile_write_unsynced), for a file written again after a crash.
 */
static int
api_write_atomic(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	size_t len;
	const char *data = luaL_checklstring(L, 2, &len);
	const char *how = luaL_optstring(L, 3, "");
	int unsynced = strcmp(how, "private unsynced") == 0;
	int mode = how[0] == '\0' ? 0644 : 0600;
	struct ray_err err;

	luaL_argcheck(L, how[0] == '\0' || unsynced || strcmp(how, "private") == 0, 3,
	    "\"private\", \"private unsynced\" or nothing");
	if ((unsynced ? ray_atomicfile_write_unsynced(path, data, len, mode, &err) :
	    ray_atomicfile_write_mode(path, data, len, mode, &err)) < 0)
		return fail_err(L, &err);
	lua_pushboolean(L, 1);
	return 1;
}

void *
ray__check_open(lua_State *L, int idx, const char *mt, const char *what)
{
	void **slot = luaL_checkudata(L, idx, mt);

	if (*slot == NULL)
		luaL_argerror(L, idx, lua_pushfstring(L, "the %s is closed", what));
	return slot;
}

#define JOURNAL_MT "raymond.journal"

static struct ray_journal **
check_journal(lua_State *L)
{
	return ray__check_open(L, 1, JOURNAL_MT, "journal");
}

/*
 * raymond.journal_open(path, min_record) -> journal | nil, message
 * Starts the journal afresh (see src/journal.h).
 */
static int
api_journal_open(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	lua_Integer min = luaL_optinteger(L, 2, 0);
	struct ray_journal **jp = lua_newuserdatauv(L, sizeof(*jp), 0);
	struct ray_err err;

	*jp = NULL;
	luaL_setmetatable(L, JOURNAL_MT);
	if (ray_journal_open(path, min > 0 ? (size_t)min : 0, jp, &err) < 0)
		return fail_err(L, &err);
	return 1;
}

/* journal:append(data) -> true | nil, message, code (RAY_EFULL: no room) */
static int
api_journal_append(lua_State *L)
{
	struct ray_journal **jp = check_journal(L);
	size_t len;
	const char *data = luaL_checklstring(L, 2, &len);
	struct ray_err err;

	if (ray_journal_append(*jp, data, len, &err) < 0)
		return fail_err(L, &err);
	lua_pushboolean(L, 1);
	return 1;
}

/* journal:close(); also the journal's __close and __gc */
static int
api_journal_close(lua_State *L)
{
	struct ray_journal **jp = luaL_checkudata(L, 1, JOURNAL_MT);

	ray_journal_close(*jp);
	*jp = NULL;
	return 0;
}

/* raymond.journal_read(path) -> last record | false (none) | nil, message */
static int
api_journal_read(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	struct box *b = box_push(L, free);
	struct ray_err err;
	char *data;
	size_t len;

	if (ray_journal_read(path, &data, &len, &err) < 0)
		return fail_err(L, &err);
	b->p = data;
	if (data == NULL)
		lua_pushboolean(L, 0);
	else
		lua_pushlstring(L, data, len);
	return 1;
}

static const luaL_Reg journal_methods[] = {
	{ "append", api_journal_append },
	{ "close", api_journal_close },
	{ "__close", api_journal_close },
	{ "__gc", api_journal_close },
	{ NULL, NULL },
};

/* raymond.clear_stale(path) -> true if a stale "<path>.lock" was removed */
static int
api_clear_stale(lua_State *L)
{
	lua_pushboolean(L, ray_atomicfile_clear_stale(luaL_checkstring(L, 1)));
	return 1;
}

/* raymond.append_file(path, data) -> true | nil, message */
static int
api_append_file(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	size_t len;
	const char *data = luaL_checklstring(L, 2, &len);
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	int e;

	if (fd < 0)
		return fail_errno(L, "open", path);
	if (ray_write_all(fd, data, len) < 0) {
		e = errno;
		close(fd);
		errno = e;
		return fail_errno(L, "append to", path);
	}
	close(fd);
	lua_pushboolean(L, 1);
	return 1;
}

/*
 * raymond.stat(path [, nofollow]) -> "file" | "dir" | "link" | "other" | nil,
 * then the bytes it takes on disk (its blocks), its modification time in
 * seconds since the epoch, and its permission bits (07777, e.g. for lint's
 * check of a script's run bit), its size in bytes and its inode number
 * (a file replaced by a rename has another).  Symbolic links are followed
 * unless `nofollow` is true; then a link is "link".
 */
static int
api_stat(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	struct stat st;
	int r = lua_toboolean(L, 2) ? lstat(path, &st) : stat(path, &st);

	if (r != 0) {
		lua_pushnil(L);
		return 1;
	}
	if (S_ISLNK(st.st_mode))
		lua_pushliteral(L, "link");
	else if (S_ISREG(st.st_mode))
		lua_pushliteral(L, "file");
	else if (S_ISDIR(st.st_mode))
		lua_pushliteral(L, "dir");
	else
		lua_pushliteral(L, "other");
	lua_pushinteger(L, (lua_Integer)st.st_blocks * 512);
	lua_pushnumber(L, (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9);
	lua_pushinteger(L, (lua_Integer)(st.st_mode & 07777));
	lua_pushinteger(L, (lua_Integer)st.st_size);
	lua_pushinteger(L, (lua_Integer)st.st_ino);
	return 6;
}

/* raymond.realpath(path) -> absolute path | nil, message */
static int
api_realpath(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	struct box *b = box_push(L, free);
	char *r = realpath(path, NULL);

	if (r == NULL)
		return fail_errno(L, "resolve", path);
	b->p = r;
	lua_pushstring(L, r);
	return 1;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names listdir() collects, owned by a box while they are pushed. */
struct names {
	char **v;
	size_t n, cap;
};

static void
free_names(void *p)
{
	struct names *ns = p;
	size_t i;

	for (i = 0; i < ns->n; i++)
		free(ns->v[i]);
	free(ns->v);
	free(ns);
}

/* raymond.listdir(path) -> sorted names (no . or ..) | nil, message */
static int
api_listdir(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	struct box *b = box_push(L, free_names);
	struct names *ns;
	struct dirent *e;
	DIR *d;
	size_t i;

	d = opendir(path);
	if (d == NULL)
		return fail_errno(L, "list", path);
	ns = xcalloc(1, sizeof(*ns));
	b->p = ns;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (ns->n == ns->cap) {
			ns->cap = ns->cap ? ns->cap * 2 : 32;
			ns->v = xrealloc(ns->v, ns->cap * sizeof(*ns->v));
		}
		ns->v[ns->n++] = xstrdup(e->d_name);
	}
	closedir(d);
	if (ns->n)
		qsort(ns->v, ns->n, sizeof(*ns->v), cmp_str);
	lua_createtable(L, (int)ns->n, 0);
	for (i = 0; i < ns->n; i++) {
		lua_pushstring(L, ns->v[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

/* raymond.mkdir_p(path [, mode of the last folder]) -> true | nil, message */
static int
api_mkdir_p(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	mode_t leaf = (mode_t)luaL_optinteger(L, 2, 0755);
	char *p = xstrdup(path), *s;
	struct stat st;

	for (s = p + 1; ; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;

		*s = '\0';
		if (mkdir(p, c == '\0' ? leaf : 0755) != 0 && errno != EEXIST) {
			free(p);
			return fail_errno(L, "create directory", path);
		}
		*s = c;
		if (c == '\0')
			break;
	}
	free(p);
	/* The folder asked for is made or found, never reached through a link. */
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
		return fail(L, "cannot create directory '%s': it is a symbolic "
		    "link, and raymond does not write through links", path);
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return fail_errno(L, "create directory", path);
	}
	lua_pushboolean(L, 1);
	return 1;
}

/* raymond.hash(s) -> 16 hex digits of FNV-1a 64: a cheap fingerprint */
static int
api_hash(lua_State *L)
{
	size_t len, i;
	const unsigned char *s = (const unsigned char *)luaL_checklstring(L, 1, &len);
	uint64_t h = 14695981039346656037ULL;
	char out[17];

	for (i = 0; i < len; i++) {
		h ^= s[i];
		h *= 1099511628211ULL;
	}
	snprintf(out, sizeof(out), "%016llx", (unsigned long long)h);
	lua_pushstring(L, out);
	return 1;
}

static unsigned
be16(const unsigned char *b)
{
	return (unsigned)b[0] << 8 | (unsigned)b[1];
}

static unsigned
be32(const unsigned char *b)
{
	return (unsigned)b[0] << 24 | (unsigned)b[1] << 16 | (unsigned)b[2] << 8 | (unsigned)b[3];
}

/* raymond.uuid() -> a random (version 4) UUID, for Claude session ids */
static int
api_uuid(lua_State *L)
{
	unsigned char b[16];
	char out[40];
	size_t got = 0;

	while (got < sizeof(b)) {
		ssize_t n = getrandom(b + got, sizeof(b) - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return luaL_error(L, "cannot read random bytes: %s", strerror(errno));
		got += (size_t)n;
	}
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(out, sizeof(out), "%08x-%04x-%04x-%04x-%04x%08x",
	    be32(b), be16(b + 4), be16(b + 6), be16(b + 8), be16(b + 10), be32(b + 12));
	lua_pushstring(L, out);
	return 1;
}

/* raymond.now() -> seconds since the epoch, with microseconds */
static int
api_now(lua_State *L)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	lua_pushnumber(L, (double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
	return 1;
}

/*
 * raymond.set_sync(on): whether state files and journals are synced to
 * disk (atomicfile.h); off only for the runs of raymond test.
 */
static int
api_set_sync(lua_State *L)
{
	ray_atomicfile_set_sync(lua_toboolean(L, 1));
	return 0;
}

/* raymond.clock() -> monotonic seconds, for durations */
static int
api_clock(lua_State *L)
{
	lua_pushnumber(L, (double)uv_hrtime() / 1e9);
	return 1;
}

static int
api_getcwd(lua_State *L)
{
	char buf[PATH_MAX];

	if (getcwd(buf, sizeof(buf)) == NULL)
		return fail_errno(L, "get", "current directory");
	lua_pushstring(L, buf);
	return 1;
}

/* raymond.environ() -> {NAME = value, ...} of raymond's own environment */
static int
api_environ(lua_State *L)
{
	char **e;

	lua_newtable(L);
	for (e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');

		if (eq == NULL)
			continue;
		lua_pushlstring(L, *e, (size_t)(eq - *e));
		lua_pushstring(L, eq + 1);
		lua_rawset(L, -3);
	}
	return 1;
}

static int
write_stream(lua_State *L, FILE *f)
{
	size_t len;
	const char *s = luaL_checklstring(L, 1, &len);

	fwrite(s, 1, len, f);
	fflush(f);
	return 0;
}

static int
api_stdout(lua_State *L)
{
	return write_stream(L, stdout);
}

static int
api_stderr(lua_State *L)
{
	return write_stream(L, stderr);
}

/*
 * raymond.printable(s) -> s with its control characters shown, not obeyed
 * (termsafe.h), for untrusted text on a terminal or in a log.
 */
static int
api_printable(lua_State *L)
{
	size_t len;
	const char *s = luaL_checklstring(L, 1, &len);
	struct ray_termsafe ts = RAY_TERMSAFE_INIT;
	luaL_Buffer b;

	luaL_buffinit(L, &b);
	ray_termsafe_feed(&ts, s, len, 1, add_to_luabuf, &b);
	luaL_pushresult(&b);
	return 1;
}

/* raymond.isatty("stdin" | "stdout" | "stderr") -> whether it is a terminal */
static int
api_isatty(lua_State *L)
{
	static const char *const names[] = { "stdin", "stdout", "stderr", NULL };

	lua_pushboolean(L, isatty(luaL_checkoption(L, 1, NULL, names)));
	return 1;
}

/*
 * raymond.term_size() -> columns, rows of the terminal stderr is on; nil
 * when it is not a terminal or says no size.
 */
static int
api_term_size(lua_State *L)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) < 0 || ws.ws_col == 0) {
		lua_pushnil(L);
		return 1;
	}
	lua_pushinteger(L, ws.ws_col);
	lua_pushinteger(L, ws.ws_row);
	return 2;
}

/*
 * The live view (console.lua) has its block on stderr: the cursor hidden
 * and parked at the block's first line.  A message C writes itself
 * clears the block first (ray__live_clear), and the cursor is shown again
 * at exit, however the process ends its Lua side.
 */
int ray__live_block;

void
ray__live_clear(void)
{
	if (ray__live_block)
		fputs("\r\033[J", stderr);
}

static void
live_restore(void)
{
	if (!ray__live_block)
		return;
	ray__live_block = 0;
	fputs("\r\033[J\033[?25h", stderr);
	fflush(stderr);
}

/* raymond.set_live(on): whether a live view's block is on stderr now */
static int
api_set_live(lua_State *L)
{
	static int registered;

	ray__live_block = lua_toboolean(L, 1);
	if (ray__live_block && !registered)
		registered = atexit(live_restore) == 0;
	return 0;
}

/* raymond.embedded(prefix) -> {name = text, ...} of compiled-in files: source
 * for the hooks, what load() takes (bytecode or source) for the modules */
static int
api_embedded(lua_State *L)
{
	const char *prefix = luaL_optstring(L, 1, "");
	size_t i, n = strlen(prefix);

	lua_newtable(L);
	for (i = 0; i < ray_embedded_count; i++) {
		const struct ray_embedded *e = &ray_embedded_files[i];

		if (strncmp(e->name, prefix, n) != 0)
			continue;
		lua_pushlstring(L, e->data, e->len);
		lua_setfield(L, -2, e->name);
	}
	return 1;
}

/* raymond.sha256_file(path) -> 64 lowercase hex digits | nil, message */
static int
api_sha256_file(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	struct ray_err err;
	char hex[65];

	if (ray_sha256_file(path, hex, &err) < 0)
		return fail_err(L, &err);
	lua_pushstring(L, hex);
	return 1;
}

/* raymond.sha256(text) -> 64 lowercase hex digits of the text's SHA-256 */
static int
api_sha256(lua_State *L)
{
	size_t len;
	const char *s = luaL_checklstring(L, 1, &len);
	unsigned char digest[RAY_SHA256_LEN];
	char hex[65];

	ray_sha256(s, len, digest);
	ray_sha256_hex(digest, hex);
	lua_pushstring(L, hex);
	return 1;
}

#define ARCHIVE_MT "raymond.archive"

static struct ray_archive **
check_archive(lua_State *L)
{
	return ray__check_open(L, 1, ARCHIVE_MT, "archive");
}

/* The unsigned whole number in field `k` of the table at `idx`, if any. */
static void
opt_limit(lua_State *L, int idx, const char *k, uint64_t *v)
{
	lua_Integer n;

	if (lua_getfield(L, idx, k) != LUA_TNIL) {
		n = luaL_checkinteger(L, -1);
		luaL_argcheck(L, n >= 0, idx, "archive limits are not negative");
		*v = (uint64_t)n;
	}
	lua_pop(L, 1);
}

/*
 * raymond.zip_open(path [, limits]) -> archive | nil, message, code
 *
 * Opens, hashes and validates the archive once (hash in the name, entry
 * names, layout, and the caps of `limits` = {max_total, max_files,
 * max_file}, each defaulting to archive.h's: see archive.h).  The object
 * keeps the open descriptor
 * and has the fields `path`, `sha256` (64 hex digits) and `files`
 * ({NAME = true, ...} by bare name), and the methods below.  The
 * archive is owned by the userdata from the moment it is opened, so an
 * error while the fields are made cannot leak it.
 */
static int
api_zip_open(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	struct ray_archive_limits lim = RAY_ARCHIVE_LIMITS;
	struct ray_archive **ap;
	struct ray_err err;
	size_t i, n;

	if (!lua_isnoneornil(L, 2)) {
		luaL_checktype(L, 2, LUA_TTABLE);
		opt_limit(L, 2, "max_total", &lim.max_total);
		opt_limit(L, 2, "max_files", &lim.max_files);
		opt_limit(L, 2, "max_file", &lim.max_file);
	}
	ap = lua_newuserdatauv(L, sizeof(*ap), 1);
	*ap = NULL;
	luaL_setmetatable(L, ARCHIVE_MT);
	if (ray_archive_open_limited(path, &lim, ap, &err) < 0)
		return fail_err(L, &err);

	n = ray_archive_count(*ap);
	lua_createtable(L, 0, 3);
	lua_pushstring(L, path);
	lua_setfield(L, -2, "path");
	lua_pushstring(L, ray_archive_sha256(*ap));
	lua_setfield(L, -2, "sha256");
	lua_createtable(L, 0, (int)n);
	for (i = 0; i < n; i++) {
		lua_pushboolean(L, 1);
		lua_setfield(L, -2, ray_archive_name(*ap, i));
	}
	lua_setfield(L, -2, "files");
	lua_setiuservalue(L, -2, 1);
	return 1;
}

/*
 * archive.path, archive.sha256, archive.files: from the table kept with
 * the userdata; the methods from the metatable's `methods`.  Both stay
 * readable after close().
 */
static int
api_archive_index(lua_State *L)
{
	luaL_checkudata(L, 1, ARCHIVE_MT);
	lua_getiuservalue(L, 1, 1);
	if (lua_istable(L, -1)) {
		lua_pushvalue(L, 2);
		if (lua_rawget(L, -2) != LUA_TNIL)
			return 1;
	}
	lua_settop(L, 2);
	lua_getmetatable(L, 1);
	lua_getfield(L, -1, "methods");
	lua_pushvalue(L, 2);
	lua_rawget(L, -2);
	return 1;
}

/* archive:read(name) -> data | nil, message, code (name is bare) */
static int
api_archive_read(lua_State *L)
{
	struct ray_archive **ap = check_archive(L);
	const char *name = luaL_checkstring(L, 2);
	struct box *b = box_push(L, free);
	struct ray_err err;
	char *data;
	size_t len;

	if (ray_archive_read(*ap, name, &data, &len, &err) < 0)
		return fail_err(L, &err);
	b->p = data;
	lua_pushlstring(L, data, len);
	return 1;
}

/* archive:extract(dir) -> true | nil, message, code (dir must exist) */
static int
api_archive_extract(lua_State *L)
{
	struct ray_archive **ap = check_archive(L);
	const char *dir = luaL_checkstring(L, 2);
	struct ray_err err;

	if (ray_archive_extract(*ap, dir, &err) < 0)
		return fail_err(L, &err);
	lua_pushboolean(L, 1);
	return 1;
}

/* archive:close(); also the archive's __close and __gc; closing twice is
 * harmless. */
static int
api_archive_close(lua_State *L)
{
	struct ray_archive **ap = luaL_checkudata(L, 1, ARCHIVE_MT);

	ray_archive_close(*ap);
	*ap = NULL;
	return 0;
}

static const luaL_Reg archive_methods[] = {
	{ "read", api_archive_read },
	{ "extract", api_archive_extract },
	{ "close", api_archive_close },
	{ NULL, NULL },
};

static const luaL_Reg archive_meta[] = {
	{ "__index", api_archive_index },
	{ "__close", api_archive_close },
	{ "__gc", api_archive_close },
	{ NULL, NULL },
};

/*
 * raymond.mkdtemp(prefix) -> path | nil, message
 *
 * Creates a new directory "$TMPDIR/<prefix>XXXXXX" (TMPDIR defaults to
 * /tmp) that only its owner may enter (mode 0700), and returns its path.
 */
static int
api_mkdtemp(lua_State *L)
{
	const char *prefix = luaL_checkstring(L, 1);
	const char *tmp = getenv("TMPDIR");
	char path[PATH_MAX];
	size_t n;
	int len;

	luaL_argcheck(L, strchr(prefix, '/') == NULL, 1,
	    "a name prefix may not contain '/'");
	if (tmp == NULL || tmp[0] == '\0')
		tmp = "/tmp";
	n = strlen(tmp);
	while (n > 1 && tmp[n - 1] == '/')
		n--;
	len = snprintf(path, sizeof(path), "%.*s%s%sXXXXXX", (int)n, tmp,
	    tmp[n - 1] == '/' ? "" : "/", prefix);
	if (len < 0 || (size_t)len >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return fail(L, "cannot create a temporary directory in '%.*s': "
		    "%s", (int)n, tmp, strerror(errno));
	}
	if (mkdtemp(path) == NULL)
		return fail(L, "cannot create a temporary directory in '%.*s': "
		    "%s", (int)n, tmp, strerror(errno));
	lua_pushstring(L, path);
	return 1;
}

/*
 * Remove `name` (relative to `dfd`) and, if it is a directory, all it
 * holds.  A symlink is removed itself, never followed, and a directory is
 * opened with O_NOFOLLOW, so nothing outside the tree is touched even if
 * it changes meanwhile.  `path` holds the path of `name` for messages;
 * on failure it names what could not be removed, and errno says why; a
 * signal counted since `mark` stops it with EINTR (see ray.h).
 */
static int
rm_at(int dfd, const char *name, struct ray_buf *path, unsigned long mark)
{
	size_t len = path->len;
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd, rc = 0, e;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dfd, name, 0);
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	d = fdopendir(fd);
	if (d == NULL) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (de == NULL) {
			rc = errno != 0 ? -1 : 0;
			break;
		}
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		/* A tree of many files takes seconds; a signal must not wait. */
		if (ray_interrupted(mark)) {
			errno = EINTR;
			rc = -1;
			break;
		}
		ray_buf_addc(path, '/');
		ray_buf_adds(path, de->d_name);
		rc = rm_at(dirfd(d), de->d_name, path, mark);
		if (rc < 0)
			break;
		path->len = len;
		path->data[len] = '\0';
	}
	e = errno;
	closedir(d);
	errno = e;
	if (rc < 0)
		return -1;
	return unlinkat(dfd, name, AT_REMOVEDIR);
}

/*
 * raymond.rmtree(path) -> true | nil, message
 *
 * Removes a file, a symlink, or a directory and everything in it, without
 * following symlinks.  Refuses (raises) for "", "/", "." and "..".
 */
static int
api_rmtree(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	struct ray_buf b = RAY_BUF_INIT;
	struct ray_err err;
	char *real, *top;
	const char *base;
	int root, rc, e;

	luaL_argcheck(L, path[0] != '\0', 1, "refusing to remove an empty path");
	real = realpath(path, NULL);
	root = real != NULL && strcmp(real, "/") == 0;
	free(real);
	luaL_argcheck(L, !root, 1, "refusing to remove '/'");

	/* A trailing '/' would make the kernel follow a symlink. */
	ray_buf_adds(&b, path);
	while (b.len > 1 && b.data[b.len - 1] == '/')
		b.data[--b.len] = '\0';
	base = strrchr(b.data, '/');
	base = base != NULL ? base + 1 : b.data;
	if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		ray_buf_release(&b);
		return luaL_argerror(L, 1, "refusing to remove '.' or '..'");
	}

	/* rm_at() grows `b` as it descends, so the name is a copy. */
	top = xstrdup(b.data);
	rc = rm_at(AT_FDCWD, top, &b, ray_signal_mark());
	e = errno;
	if (rc < 0 && e == EINTR)
		ray_err_interrupted(&err, "removing '%s'", top);
	else if (rc < 0)
		ray_err_set(&err, -e, "cannot remove '%s': %s", b.data,
		    strerror(e));
	free(top);
	ray_buf_release(&b);
	if (rc < 0)
		return fail_err(L, &err);
	lua_pushboolean(L, 1);
	return 1;
}

static const luaL_Reg api_funcs[] = {
	{ "parse_tags", api_parse_tags },
	{ "json_encode", api_json_encode },
	{ "read_file", api_read_file },
	{ "read_range", api_read_range },
	{ "frontmatter", api_frontmatter },
	{ "yaml", api_yaml },
	{ "write_atomic", api_write_atomic },
	{ "clear_stale", api_clear_stale },
	{ "journal_open", api_journal_open },
	{ "journal_read", api_journal_read },
	{ "append_file", api_append_file },
	{ "stat", api_stat },
	{ "realpath", api_realpath },
	{ "listdir", api_listdir },
	{ "mkdir_p", api_mkdir_p },
	{ "now", api_now },
	{ "uuid", api_uuid },
	{ "hash", api_hash },
	{ "clock", api_clock },
	{ "getcwd", api_getcwd },
	{ "environ", api_environ },
	{ "stdout", api_stdout },
	{ "stderr", api_stderr },
	{ "printable", api_printable },
	{ "isatty", api_isatty },
	{ "term_size", api_term_size },
	{ "set_live", api_set_live },
	{ "embedded", api_embedded },
	{ "sha256_file", api_sha256_file },
	{ "set_sync", api_set_sync },
	{ "sha256", api_sha256 },
	{ "zip_open", api_zip_open },
	{ "mkdtemp", api_mkdtemp },
	{ "rmtree", api_rmtree },
	{ NULL, NULL },
};

void
ray__api_register(lua_State *L, struct ray_host *h)
{
	luaL_newmetatable(L, JOURNAL_MT);
	lua_pushvalue(L, -1);
	lua_setfield(L, -2, "__index");
	luaL_setfuncs(L, journal_methods, 0);
	lua_pop(L, 1);
	luaL_newmetatable(L, ARCHIVE_MT);
	luaL_setfuncs(L, archive_meta, 0);
	/* With the host, so a read or extraction a signal stops marks it. */
	luaL_newlibtable(L, archive_methods);
	lua_pushlightuserdata(L, h);
	luaL_setfuncs(L, archive_methods, 1);
	lua_setfield(L, -2, "methods");
	/* So the engine sees the signals the scheduler counts (ray.h). */
	ray_signals = &ray__signal_count;
	lua_pop(L, 1);
	luaL_newmetatable(L, BOX_MT);
	lua_pushcfunction(L, box_close);
	lua_setfield(L, -2, "__close");
	lua_pushcfunction(L, box_close);
	lua_setfield(L, -2, "__gc");
	lua_pop(L, 1);
	lua_pushlightuserdata(L, h);
	luaL_setfuncs(L, api_funcs, 1);
	lua_pushstring(L, RAY_VERSION);
	lua_setfield(L, -2, "version");
	lua_pushinteger(L, RAY_EFULL);
	lua_setfield(L, -2, "EFULL");
	lua_pushinteger(L, RAY_ETOOBIG);
	lua_setfield(L, -2, "ETOOBIG");
	lua_pushinteger(L, RAY_JSON_MAX_DEPTH);
	lua_setfield(L, -2, "JSON_MAX_DEPTH");
}
