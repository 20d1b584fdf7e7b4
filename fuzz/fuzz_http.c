/*
 * fuzz_http.c - the bytes a client sends to `raymond serve`, through the
 * real server: libmicrohttpd on the libuv loop (src/http.c), the Lua
 * requests of src/lua_http.c and the API of lua/raymond/serve.lua, in
 * the real Lua host.
 *
 * Once per process the API is started as `raymond serve` starts it, on
 * 127.0.0.1, port 0, over an empty workspace in a temporary folder, with a
 * token and a one-time login code the dictionary knows (HOST, TOKEN and
 * CODE below; the API is told it listens on port 8420, so that a Host
 * header can name it).  Its roots do not exist, so no input can launch a
 * run.  The caps are smaller than the daemon's (a body of 1 KiB, a header
 * of 4 KiB) so that inputs of a few KiB reach them.
 *
 * Each input is sent on a fresh connection, in up to four writes, the
 * loop running between them until the server has read what was written.
 * Then the client either shuts its side down and reads until the server
 * closes, or closes at once without reading (a client that goes away mid
 * request).  The end is sent only once the server has read the rest:
 * libmicrohttpd reads once per readiness of a socket, and an end that came
 * with the last bytes is seen only at the idle timeout (60 s here), which
 * is slow but no bug.  Promises checked:
 *
 *   - no crash, leak or undefined behaviour (ASan, LSan, UBSan), and no
 *     Lua error in the handler (serve.lua answers bad input, never raises);
 *   - the server closes the connection within 5 s of the client's end;
 *   - what it sent is a sequence of whole HTTP/1.x responses, each a valid
 *     status line, headers, and the body its Content-Length or chunked
 *     framing says;
 *   - each 4xx or 5xx response of type application/json is UTF-8 and a
 *     JSON object with an "error" string;
 *   - the server keeps serving: a normal request on a new connection is
 *     answered 200 with the (empty) list of runs.
 *
 * Input layout: byte 0: bits 0-1 the number of cuts n, bit 2 close at
 * once instead of reading; bytes 1..n each a cut, as a fraction (/256) of
 * the rest; the rest is the stream.
 */
#include "fuzz.h"
#include "luafuzz.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define TOKEN "f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0"
#define CODE "c0dec0dec0dec0dec0dec0dec0dec0dec0dec0dec0dec0dec0dec0dec0dec0de"
#define HOST "127.0.0.1:8420"
#define MAX_ANSWER (1 << 20)
#define HANG_MS 5000

static const char driver[] =
"local raymond = require('raymond')\n"
"local serve = require('raymond.serve')\n"
"local workspace = require('raymond.workspace')\n"
"local M = {}\n"
"function M.start(dir, token, code)\n"
"  local api = serve.new{ ws = workspace.new(dir), cwd = dir, host = '127.0.0.1', port = 8420,\n"
"                         token = token, roots = { dir .. '/no-roots' } }\n"
"  M.api, M.code = api, code\n"
"  -- Kept here, so it is never collected (which would close it).\n"
"  M.srv = assert(raymond.http_listen{ host = '127.0.0.1', port = 0, max_body = 1024,\n"
"    max_header = 4096, max_stream = 4096, timeout = 60, handler = function(req)\n"
"      local ok, err = xpcall(api.handle, debug.traceback, api, req)\n"
"      if not ok then M.err = M.err or err end\n"
"    end })\n"
"  return M.srv:port()\n"
"end\n"
"-- Before each input: the login code is valid again.\n"
"function M.arm() M.api.logins[M.code] = true end\n"
"-- The handler's first error since the last call, or nil.\n"
"function M.error() local e = M.err; M.err = nil; return e end\n"
"-- Why an error answer's body is not {\"error\": TEXT, ...}, or nil.\n"
"function M.check_error(body)\n"
"  local ok, obj = pcall(raymond.cjson.decode, body)\n"
"  if not ok then return 'not JSON: ' .. tostring(obj) end\n"
"  if type(obj) ~= 'table' or type(obj.error) ~= 'string' then\n"
"    return 'no \"error\" string in it' end\n"
"end\n"
"return M\n";

static lua_State *L;
static int port;
static char dir[] = "/tmp/raymond-fuzz-http-XXXXXX";
static char raydir[sizeof(dir) + 16];

static void
remove_dir(void)
{
	rmdir(raydir);
	rmdir(dir);
}

static void
call(const char *fn, int nargs, int nres)
{
	lua_getfield(L, LUA_REGISTRYINDEX, "fuzz.http");
	lua_getfield(L, -1, fn);
	lua_remove(L, -2);
	lua_insert(L, -1 - nargs);
	if (ray__pcall(L, nargs, nres) != LUA_OK)
		luafuzz_fail(L, fn);
}

static void
start(void)
{
	L = luafuzz_driver(driver, sizeof(driver) - 1, "=fuzz_http", "fuzz.http");
	if (mkdtemp(dir) == NULL)
		bad("cannot make %s: %s", dir, strerror(errno));
	snprintf(raydir, sizeof(raydir), "%s/.raymond", dir);
	if (mkdir(raydir, 0700) < 0)
		bad("cannot make %s: %s", raydir, strerror(errno));
	atexit(remove_dir);
	lua_pushstring(L, dir);
	lua_pushliteral(L, TOKEN);
	lua_pushliteral(L, CODE);
	call("start", 3, 1);
	port = (int)lua_tointeger(L, -1);
	lua_pop(L, 1);
}

static uint64_t
now_ms(void)
{
	return uv_hrtime() / 1000000;
}

/* ---- the client's connection ------------------------------------------- */

struct conn {
	int fd;			/* the client's socket */
	int sfd;		/* the server's end of it, while found open */
	struct sockaddr_in me;
	char *in;		/* what the server sent */
	size_t len;
	int eof;
};

static int
port_of(const struct sockaddr_in *a)
{
	return ntohs(a->sin_port);
}

/* The server's end: the socket in this process whose peer is us. */
static int
find_server_end(const struct conn *c, int all)
{
	struct sockaddr_in a;
	socklen_t n;

	/* accept() takes the lowest free number: most often the next one. */
	for (int i = 0; i < (all ? 4096 : 1); i++) {
		int fd = i == 0 ? c->fd + 1 : i + 2;

		if (fd == c->fd || (i > 0 && fd == c->fd + 1))
			continue;
		n = sizeof(a);
		if (getpeername(fd, (struct sockaddr *)&a, &n) < 0 ||
		    a.sin_family != AF_INET || port_of(&a) != port_of(&c->me))
			continue;
		n = sizeof(a);
		if (getsockname(fd, (struct sockaddr *)&a, &n) == 0 &&
		    port_of(&a) == port)
			return fd;
	}
	return -1;
}

/* Bytes the server has not read yet, counting those still on their way
 * (not sent by our side); -1 once its end is closed. */
static int
unread(struct conn *c)
{
	int n, out = 0;

	if (c->sfd < 0 || ioctl(c->sfd, SIOCINQ, &n) < 0)
		return c->sfd = -1;
	if (ioctl(c->fd, SIOCOUTQNSD, &out) == 0)
		n += out;
	return n;
}

static void
conn_open(struct conn *c)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t n = sizeof(c->me);
	uint64_t until = now_ms() + HANG_MS;

	memset(c, 0, sizeof(*c));
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (c->fd < 0)
		bad("cannot make a socket: %s", strerror(errno));
	/* Non-blocking, so that libFuzzer's SIGALRM cannot cut it short. */
	if (connect(c->fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;

		if (e != EINPROGRESS && e != EINTR)
			bad("cannot connect to the server: %s", strerror(e));
		while (poll(&(struct pollfd){ .fd = c->fd, .events = POLLOUT }, 1, HANG_MS) < 0)
			;
		n = sizeof(e);
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &n) < 0 || e != 0)
			bad("cannot connect to the server: %s", strerror(e));
		n = sizeof(c->me);
	}
	/* Each write goes out at once, not held back for an ACK. */
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
	getsockname(c->fd, (struct sockaddr *)&c->me, &n);
	/* Until the server has accepted it. */
	for (int i = 1; (c->sfd = find_server_end(c, i % 64 == 0)) < 0; i++) {
		if (now_ms() > until)
			bad("the server did not accept a connection in %d ms", HANG_MS);
		uv_run(uv_default_loop(), UV_RUN_NOWAIT);
	}
}

/* Run the loop until the server has read all that was written (or closed
 * its end, or has not read it in a second: it may rightly wait). */
static void
settle(struct conn *c)
{
	uint64_t until = now_ms() + 1000;

	do
		uv_run(uv_default_loop(), UV_RUN_NOWAIT);
	while (unread(c) > 0 && now_ms() < until);
	uv_run(uv_default_loop(), UV_RUN_NOWAIT);
}

static void
take(struct conn *c)
{
	char buf[16384];
	ssize_t n;

	while (!c->eof) {
		n = recv(c->fd, buf, sizeof(buf), 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			/* A reset after the answer is the server closing with
			 * input left unread, which it may. */
			c->eof = 1;
			return;
		}
		if (c->len + (size_t)n > MAX_ANSWER)
			bad("the server sent more than %d bytes", MAX_ANSWER);
		c->in = realloc(c->in, c->len + (size_t)n);
		memcpy(c->in + c->len, buf, (size_t)n);
		c->len += (size_t)n;
	}
}

/* Write all of s, unless the server has gone. */
static void
put(struct conn *c, const uint8_t *s, size_t n)
{
	uint64_t until = now_ms() + HANG_MS;
	ssize_t k;

	while (n > 0) {
		k = send(c->fd, s, n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EAGAIN) {
			if (now_ms() > until)
				bad("the server read nothing for %d ms", HANG_MS);
			take(c);	/* it may wait for us to read */
			uv_run(uv_default_loop(), UV_RUN_NOWAIT);
			continue;
		}
		if (k < 0)
			return;		/* it closed: the rest is not wanted */
		s += k;
		n -= (size_t)k;
	}
}

/* Until the client's socket or the loop has something, at most 10 ms. */
static void
wait_either(const struct conn *c)
{
	uv_loop_t *loop = uv_default_loop();
	struct pollfd fds[2] = {
		{ .fd = c->fd, .events = POLLIN },
		{ .fd = uv_backend_fd(loop), .events = POLLIN },
	};
	int ms = uv_backend_timeout(loop);

	poll(fds, 2, ms < 0 || ms > 10 ? 10 : ms);
}

/* Shut our side, read until the server closes. */
static void
finish(struct conn *c)
{
	uint64_t until = now_ms() + HANG_MS;

	shutdown(c->fd, SHUT_WR);
	take(c);
	while (!c->eof) {
		if (now_ms() > until)
			bad("the server did not close the connection %d ms after the "
			    "client's end; it sent %zu bytes:\n%.*s", HANG_MS, c->len,
			    (int)(c->len > 2000 ? 2000 : c->len), c->in ? c->in : "");
		uv_run(uv_default_loop(), UV_RUN_NOWAIT);
		take(c);
		if (!c->eof)
			wait_either(c);
	}
}

static void
conn_close(struct conn *c)
{
	/* No TIME_WAIT left behind, whoever closed first. */
	struct linger lg = { 1, 0 };

	setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(c->fd);
	free(c->in);
	c->in = NULL;
}

/* ---- the answers -------------------------------------------------------- */

static const char *
find(const char *s, size_t n, const char *what)
{
	return memmem(s, n, what, strlen(what));
}

/* Header `name` of the head [s, e) (name given with its ':' and a leading
 * CRLF), its value's start, or NULL. */
static const char *
header(const char *s, const char *e, const char *name)
{
	size_t k = strlen(name);

	for (const char *p = s; p + k <= e; p++)
		if (strncasecmp(p, name, k) == 0) {
			p += k;
			while (p < e && *p == ' ')
				p++;
			return p;
		}
	return NULL;
}

/* Strict UTF-8, as JSON exchanged between systems must be (RFC 8259):
 * no overlong forms, no surrogates, nothing past U+10FFFF.  The offset of
 * the first bad byte, or n. */
static size_t
utf8_bad_at(const unsigned char *s, size_t n)
{
	size_t i = 0, k;
	uint32_t cp;

	while (i < n) {
		unsigned char b = s[i];

		if (b < 0x80) {
			i++;
			continue;
		}
		if (b >= 0xc2 && b <= 0xdf)
			k = 1, cp = b & 0x1f;
		else if (b >= 0xe0 && b <= 0xef)
			k = 2, cp = b & 0x0f;
		else if (b >= 0xf0 && b <= 0xf4)
			k = 3, cp = b & 0x07;
		else
			return i;
		if (n - i <= k)
			return i;
		for (size_t j = 1; j <= k; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return i;
			cp = cp << 6 | (s[i + j] & 0x3f);
		}
		if ((k == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
		    (k == 3 && (cp < 0x10000 || cp > 0x10ffff)))
			return i;
		i += k + 1;
	}
	return n;
}

static void
check_error_body(const char *body, size_t n, int status)
{
	size_t at = utf8_bad_at((const unsigned char *)body, n);

	if (at < n)
		bad("a %d answer's JSON body is not UTF-8 at byte %zu: %.*s", status,
		    at, (int)(n > 300 ? 300 : n), body);
	lua_pushlstring(L, body, n);
	call("check_error", 1, 1);
	if (!lua_isnil(L, -1))
		bad("a %d answer's JSON body: %s: %.*s", status,
		    lua_tostring(L, -1), (int)(n > 300 ? 300 : n), body);
	lua_pop(L, 1);
}

/* A chunked body at s (n bytes); its length, or bad(). */
static size_t
chunked(const char *s, size_t n)
{
	size_t at = 0, size;
	char *end;

	for (;;) {
		const char *eol = find(s + at, n - at, "\r\n");

		if (eol == NULL)
			bad("a chunked body cut short");
		size = strtoul(s + at, &end, 16);
		if (end == s + at)
			bad("a chunk without its size");
		at = (size_t)(eol - s) + 2;
		if (size == 0)
			break;
		if (n - at < size + 2 || memcmp(s + at + size, "\r\n", 2) != 0)
			bad("a chunk not as long as it says");
		at += size + 2;
	}
	if (n - at < 2 || memcmp(s + at, "\r\n", 2) != 0)
		bad("a chunked body without its last CRLF");
	return at + 2;
}

/*
 * Every answer in what the server sent: its count.  A response to HEAD
 * has a Content-Length but no body; the next answer starts right after
 * its head (no body of this API starts with "HTTP/1.").
 */
static int
check_answers(const char *s, size_t n, const char **first_body, size_t *first_len)
{
	size_t at = 0;
	int count = 0;

	while (at < n) {
		const char *head = s + at, *head_end, *eol, *v, *p;
		size_t left = n - at, body;
		int status, to_head = 0;

		if (left < 13 || (memcmp(head, "HTTP/1.1 ", 9) != 0 &&
		    memcmp(head, "HTTP/1.0 ", 9) != 0))
			bad("answer %d does not start with HTTP/1.x: '%.*s'", count + 1,
			    (int)(left > 40 ? 40 : left), head);
		if (head[9] < '1' || head[9] > '5' || head[10] < '0' || head[10] > '9' ||
		    head[11] < '0' || head[11] > '9' || head[12] != ' ')
			bad("answer %d has a bad status: '%.13s'", count + 1, head);
		status = (head[9] - '0') * 100 + (head[10] - '0') * 10 + (head[11] - '0');
		head_end = find(head, left, "\r\n\r\n");
		if (head_end == NULL)
			bad("answer %d's head is cut short", count + 1);
		head_end += 2;	/* the last header's CRLF is in the head */
		eol = find(head, left, "\r\n");
		for (const char *q = head + 13; q < eol; q++)
			if ((unsigned char)*q < 0x20 || *q == 0x7f)
				bad("answer %d's status line holds byte %d", count + 1, *q);
		p = head_end + 2;
		at = (size_t)(p - s);
		left = n - at;
		if (status < 200) {
			count++;
			continue;
		}
		v = header(head, head_end, "\r\nTransfer-Encoding:");
		if (v && strncasecmp(v, "chunked", 7) == 0) {
			body = chunked(p, left);
		} else if ((v = header(head, head_end, "\r\nContent-Length:")) != NULL) {
			body = strtoul(v, NULL, 10);
			if (left == 0 || (left >= 7 && memcmp(p, "HTTP/1.", 7) == 0))
				body = 0, to_head = 1;
			else if (body > left)
				bad("answer %d is cut short: %zu of its %zu bytes",
				    count + 1, left, body);
		} else {
			body = left;
		}
		v = header(head, head_end, "\r\nContent-Type:");
		if (status >= 400 && !to_head && v && strncasecmp(v, "application/json", 16) == 0)
			check_error_body(p, body, status);
		if (count == 0) {
			*first_body = p;
			*first_len = body;
		}
		at += body;
		count++;
	}
	return count;
}

/* ---- one input ---------------------------------------------------------- */

/* A normal request on a new connection is answered 200 with no runs. */
static void
check_serving(void)
{
	static const char ask[] = "GET /api/runs HTTP/1.1\r\nHost: " HOST "\r\n"
	    "Authorization: Bearer " TOKEN "\r\nConnection: close\r\n\r\n";
	struct conn c;
	const char *body = NULL;
	size_t len = 0;

	conn_open(&c);
	put(&c, (const uint8_t *)ask, sizeof(ask) - 1);
	settle(&c);
	finish(&c);
	if (check_answers(c.in, c.len, &body, &len) != 1 ||
	    memcmp(c.in, "HTTP/1.1 200 ", 13) != 0 || len != 3 ||
	    memcmp(body, "[]\n", 3) != 0)
		bad("after the input, a normal request got: '%.*s'",
		    (int)(c.len > 400 ? 400 : c.len), c.in ? c.in : "");
	conn_close(&c);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t cuts[4], ncuts, n, from;
	const uint8_t *s;
	const char *body;
	size_t len;
	struct conn c;
	int top, leave;

	if (size < 1)
		return 0;
	ncuts = data[0] & 3;
	leave = data[0] & 4;
	if (size < 1 + ncuts)
		return 0;
	s = data + 1 + ncuts;
	n = size - 1 - ncuts;
	for (size_t i = 0; i < ncuts; i++)
		cuts[i] = n * data[1 + i] / 256;
	cuts[ncuts] = n;
	if (L == NULL)
		start();
	top = lua_gettop(L);
	call("arm", 0, 0);
	luafuzz_cover(L, 1);

	conn_open(&c);
	from = 0;
	for (size_t i = 0; i <= ncuts; i++) {
		if (cuts[i] > from) {
			put(&c, s + from, cuts[i] - from);
			from = cuts[i];
		}
		settle(&c);
	}
	if (!leave) {
		finish(&c);
		if (getenv("FUZZ_HTTP_SHOW"))
			fprintf(stderr, "---- the server sent %zu bytes:\n%.*s\n----\n",
			    c.len, (int)c.len, c.in ? c.in : "");
		check_answers(c.in, c.len, &body, &len);
	}
	conn_close(&c);
	settle(&c);

	call("error", 0, 1);
	if (!lua_isnil(L, -1))
		luafuzz_fail(L, "the API's handler");
	lua_pop(L, 1);
	check_serving();
	luafuzz_cover(L, 0);
	if (lua_gettop(L) != top)
		bad("Lua stack: %d slots before, %d after", top, lua_gettop(L));
	return 0;
}
