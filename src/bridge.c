/*
 * bridge.c - the hook bridge's wire, its server on the libuv loop and the
 * connect of its client (see bridge.h).
 *
 * A connection's life on the server:
 *
 *	accept ──(peer of another uid)──> closed
 *	   │
 *	READING ──(30 s, or a bad frame)──> closed, or answered code 2
 *	   │ whole request
 *	HANDED OUT (on_request; read and timer stopped)
 *	   │ ray_bridge_reply / ray_bridge_drop
 *	ANSWERED ──(written, or the peer gone)──> closed, freed
 *
 * Over max_conns, a new connection is left in the kernel's backlog
 * (libuv holds it and stops accepting) until one closes.
 */
#include "bridge.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const unsigned char MAGIC[4] = { 'R', 'A', 'Y', 'B' };

const struct ray_bridge_limits ray_bridge_default_limits = { 64, 30000 };

/* ---- framing ------------------------------------------------------------ */

static void
put_u32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static uint32_t
get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

int
ray_bridge_token_ok(const char *s)
{
	size_t i;

	for (i = 0; i < RAY_BRIDGE_TOKEN_LEN; i++) {
		char c = s[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
		    (c >= 'A' && c <= 'F')))
			return 0;
	}
	return s[i] == '\0';
}

void
ray_bridge_request_header(unsigned char hdr[RAY_BRIDGE_REQ_HDR],
    const char *token, uint32_t len)
{
	memset(hdr, 0, RAY_BRIDGE_REQ_HDR);
	memcpy(hdr, MAGIC, 4);
	hdr[4] = RAY_BRIDGE_VERSION;
	memcpy(hdr + 8, token, RAY_BRIDGE_TOKEN_LEN);
	put_u32(hdr + 8 + RAY_BRIDGE_TOKEN_LEN, len);
}

void
ray_bridge_answer_header(unsigned char hdr[RAY_BRIDGE_ANS_HDR], int code,
    uint32_t len)
{
	memset(hdr, 0, RAY_BRIDGE_ANS_HDR);
	memcpy(hdr, MAGIC, 4);
	hdr[4] = RAY_BRIDGE_VERSION;
	hdr[5] = (unsigned char)code;
	put_u32(hdr + 8, len);
}

void
ray_bridge_reader_init(struct ray_bridge_reader *r, int answer)
{
	memset(r, 0, sizeof(*r));
	r->answer = answer;
}

void
ray_bridge_reader_release(struct ray_bridge_reader *r)
{
	ray_buf_release(&r->body);
}

static int
reader_fail(struct ray_bridge_reader *r, int code, struct ray_err *err,
    const char *why)
{
	r->done = code;
	return ray_err_set(err, code, "%s", why);
}

/* The whole header is in: check it and take the length, code or token. */
static int
reader_header(struct ray_bridge_reader *r, struct ray_err *err)
{
	const unsigned char *h = r->hdr;
	size_t lenat = r->answer ? 8 : 8 + RAY_BRIDGE_TOKEN_LEN;

	if (memcmp(h, MAGIC, 4) != 0)
		return reader_fail(r, RAY_EINVAL, err, "not a bridge frame");
	if (h[4] != RAY_BRIDGE_VERSION)
		return reader_fail(r, RAY_EINVAL, err,
		    "a bridge frame of another version");
	if (r->answer) {
		if (h[5] != 0 && h[5] != 2)
			return reader_fail(r, RAY_EINVAL, err,
			    "an answer code other than 0 or 2");
		r->code = h[5];
	} else {
		memcpy(r->token, h + 8, RAY_BRIDGE_TOKEN_LEN);
		r->token[RAY_BRIDGE_TOKEN_LEN] = '\0';
		if (!ray_bridge_token_ok(r->token))
			return reader_fail(r, RAY_EINVAL, err,
			    "a token that is not 64 hexadecimal digits");
	}
	r->len = get_u32(h + lenat);
	if (r->len > RAY_BRIDGE_BODY_MAX)
		return reader_fail(r, RAY_ETOOBIG, err, r->answer ?
		    "an answer over 16 MiB" : RAY_BRIDGE_TOO_BIG);
	return 0;
}

int
ray_bridge_read(struct ray_bridge_reader *r, const void *data, size_t n,
    size_t *used, struct ray_err *err)
{
	const unsigned char *p = data;
	size_t hlen = r->answer ? RAY_BRIDGE_ANS_HDR : RAY_BRIDGE_REQ_HDR;
	size_t k, took = 0;
	int rc;

	*used = 0;
	if (r->done != 0)
		return r->done;
	if (r->have < hlen) {
		k = hlen - r->have < n ? hlen - r->have : n;
		memcpy(r->hdr + r->have, p, k);
		r->have += k;
		took = k;
		if (r->have < hlen) {
			*used = took;
			return 0;
		}
		if ((rc = reader_header(r, err)) < 0) {
			*used = took;
			return rc;
		}
	}
	k = r->len - r->body.len < n - took ? r->len - r->body.len : n - took;
	ray_buf_add(&r->body, p + took, k);
	*used = took + k;
	if (r->body.len == r->len)
		r->done = 1;
	return r->done;
}

/* ---- the socket's address ---------------------------------------------- */

/*
 * Where `path` is reached: the folder, open O_PATH in *dirfd, and the name
 * in it; and the address to bind or connect, `path` itself, or through
 * /proc/self/fd/N/NAME when it is longer than sun_path allows.
 */
struct addr {
	int dirfd;
	const char *name;
	struct sockaddr_un sun;
};

static int
addr_open(struct addr *a, const char *path, struct ray_err *err)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int n;

	a->dirfd = -1;
	a->name = slash ? slash + 1 : path;
	if (*a->name == '\0')
		return ray_err_set(err, RAY_EINVAL,
		    "the bridge socket path '%s' names a folder", path);
	if (slash == NULL)
		dir = xstrdup(".");
	else if (slash == path)
		dir = xstrdup("/");
	else
		dir = xstrndup(path, (size_t)(slash - path));
	a->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (a->dirfd < 0)
		return errno == ENOENT ?
		    ray_err_set(err, RAY_ENOTFOUND, "no folder for the bridge "
		    "socket '%s'", path) :
		    ray_err_sys(err, "cannot open the folder of the bridge "
		    "socket '%s'", path);
	memset(&a->sun, 0, sizeof(a->sun));
	a->sun.sun_family = AF_UNIX;
	if (strlen(path) < sizeof(a->sun.sun_path))
		n = snprintf(a->sun.sun_path, sizeof(a->sun.sun_path), "%s", path);
	else
		n = snprintf(a->sun.sun_path, sizeof(a->sun.sun_path),
		    "/proc/self/fd/%d/%s", a->dirfd, a->name);
	if (n < 0 || (size_t)n >= sizeof(a->sun.sun_path)) {
		close(a->dirfd);
		a->dirfd = -1;
		return ray_err_set(err, RAY_EINVAL, "the bridge socket name "
		    "'%s' is too long for a Unix socket", a->name);
	}
	return 0;
}

uint64_t
ray_bridge_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * A blocking connect to a Unix stream socket waits for room in the
 * listener's backlog for at most SO_SNDTIMEO, which bounds it by the
 * deadline.
 */
int
ray_bridge_connect(const char *path, uint64_t deadline_ms, int *fd,
    struct ray_err *err)
{
	struct addr a;
	uint64_t now, left;
	struct timeval tv;
	int s = -1, rc, r;

	*fd = -1;
	if ((rc = addr_open(&a, path, err)) < 0)
		return rc;
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		rc = ray_err_sys(err, "cannot make a socket");
		goto out;
	}
	/* A stop and continue of the process (Ctrl-Z, fg) interrupts the
	 * wait; a Unix connect is simply made again, within the deadline. */
	do {
		now = ray_bridge_now_ms();
		left = deadline_ms > now ? deadline_ms - now : 1;
		tv.tv_sec = (time_t)(left / 1000);
		tv.tv_usec = (suseconds_t)(left % 1000 * 1000);
		setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		r = connect(s, (struct sockaddr *)&a.sun, sizeof(a.sun));
	} while (r < 0 && errno == EINTR && ray_bridge_now_ms() < deadline_ms);
	if (r < 0) {
		if (errno == ENOENT)
			rc = ray_err_set(err, RAY_ENOTFOUND, "no bridge at '%s'",
			    path);
		else if (errno == ECONNREFUSED)
			rc = ray_err_set(err, -ECONNREFUSED, "the bridge at '%s' "
			    "refused the connection", path);
		else if (errno == EAGAIN || errno == EINPROGRESS)
			rc = ray_err_set(err, -ETIMEDOUT, "the bridge at '%s' "
			    "did not take the connection in time", path);
		else
			rc = ray_err_sys(err, "cannot connect to the bridge at "
			    "'%s'", path);
		goto out;
	}
	*fd = s;
	s = -1;
	rc = 0;
out:
	if (s >= 0)
		close(s);
	close(a.dirfd);
	return rc;
}

/* ---- server ------------------------------------------------------------- */

enum { READING, HANDED_OUT, ANSWERED };

struct ray_bridge {
	uv_loop_t *loop;
	uv_pipe_t listener;
	struct ray_bridge_limits lim;
	ray_bridge_request_fn on_request;
	void *ud;
	int dirfd;		/* the socket's folder, O_PATH */
	char *name;		/* the socket's name in it */
	dev_t dev;		/* the socket file bound, to remove only it */
	ino_t ino;
	unsigned nconns;	/* open connections counted against lim */
	struct ray_bridge_conn *conns;	/* those, to drop them at close */
	int pending;		/* a connection waits in the backlog */
	int closing;		/* ray_bridge_close was called */
};

struct ray_bridge_conn {
	uv_pipe_t pipe;
	uv_timer_t timer;
	struct ray_bridge *srv;	/* NULL once the server is closed */
	struct ray_bridge_conn *next, **prevp;
	int phase;
	int open_handles;	/* freed when both are closed */
	struct ray_bridge_reader rd;
	uv_write_t wr;
	char *out;		/* the answer being written */
	uint64_t limit_ms;	/* for the request, then for the answer */
};

/* Every read goes through here and is copied at once. */
static char read_buf[64 * 1024];

static void accept_one(struct ray_bridge *b);

static void
conn_unlink(struct ray_bridge_conn *c)
{
	if (c->srv == NULL)
		return;
	*c->prevp = c->next;
	if (c->next)
		c->next->prevp = c->prevp;
	c->srv = NULL;
}

static void
on_conn_handle_closed(uv_handle_t *hd)
{
	struct ray_bridge_conn *c = hd->data;

	if (--c->open_handles > 0)
		return;
	ray_bridge_reader_release(&c->rd);
	free(c->out);
	free(c);
}

/* Close the connection; a slot is free for one waiting in the backlog. */
static void
conn_close(struct ray_bridge_conn *c)
{
	struct ray_bridge *b = c->srv;

	if (b != NULL) {
		conn_unlink(c);
		b->nconns--;
		if (b->pending && !b->closing && b->nconns < b->lim.max_conns) {
			b->pending = 0;
			accept_one(b);
		}
	}
	uv_close((uv_handle_t *)&c->pipe, on_conn_handle_closed);
	uv_close((uv_handle_t *)&c->timer, on_conn_handle_closed);
}

static void
on_written(uv_write_t *w, int status)
{
	struct ray_bridge_conn *c = w->data;

	UNUSED(status);
	/* A write the answer's deadline cancelled: closed already. */
	if (!uv_is_closing((uv_handle_t *)&c->pipe))
		conn_close(c);
}

/*
 * A peer that does not read its answer would hold its place, and keep
 * the loop (so a stopped raymond) alive, for as long as it likes: the
 * answer gets the request's time limit too.
 */
static void
on_write_timeout(uv_timer_t *t)
{
	struct ray_bridge_conn *c = t->data;

	if (!uv_is_closing((uv_handle_t *)&c->pipe))
		conn_close(c);
}

int
ray_bridge_reply(struct ray_bridge_conn *c, int code, const char *text,
    size_t len)
{
	uv_buf_t buf;
	int n;

	c->phase = ANSWERED;
	c->out = xmalloc(RAY_BRIDGE_ANS_HDR + len);
	ray_bridge_answer_header((unsigned char *)c->out, code, (uint32_t)len);
	memcpy(c->out + RAY_BRIDGE_ANS_HDR, text, len);
	buf = uv_buf_init(c->out, (unsigned)(RAY_BRIDGE_ANS_HDR + len));
	/* Most answers fit the socket's buffer: no write request at all. */
	n = uv_try_write((uv_stream_t *)&c->pipe, &buf, 1);
	if (n == (int)buf.len) {
		conn_close(c);
		return 0;
	}
	if (n < 0 && n != UV_EAGAIN) {
		conn_close(c);
		return n;
	}
	if (n > 0) {
		buf.base += n;
		buf.len -= (unsigned)n;
	}
	c->wr.data = c;
	if ((n = uv_write(&c->wr, (uv_stream_t *)&c->pipe, &buf, 1,
	    on_written)) < 0) {
		conn_close(c);
		return n;
	}
	uv_timer_start(&c->timer, on_write_timeout, c->limit_ms, 0);
	return 0;
}

void
ray_bridge_drop(struct ray_bridge_conn *c)
{
	c->phase = ANSWERED;
	conn_close(c);
}

static void
on_request_timeout(uv_timer_t *t)
{
	struct ray_bridge_conn *c = t->data;

	if (c->phase == READING)
		ray_bridge_drop(c);
}

static void
on_alloc(uv_handle_t *hd, size_t suggested, uv_buf_t *buf)
{
	UNUSED(hd);
	UNUSED(suggested);
	*buf = uv_buf_init(read_buf, sizeof(read_buf));
}

/* The whole request is in: stop reading and hand it out. */
static void
hand_out(struct ray_bridge_conn *c)
{
	struct ray_bridge *b = c->srv;

	uv_read_stop((uv_stream_t *)&c->pipe);
	uv_timer_stop(&c->timer);
	c->phase = HANDED_OUT;
	b->on_request(b->ud, c, c->rd.token, ray_buf_str(&c->rd.body),
	    c->rd.body.len);
}

static void
on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct ray_bridge_conn *c = s->data;
	struct ray_err err;
	size_t used;
	int rc;

	if (c->phase != READING)
		return;
	if (n < 0) {
		ray_bridge_drop(c);
		return;
	}
	rc = ray_bridge_read(&c->rd, buf->base, (size_t)n, &used, &err);
	if (rc == 1)
		hand_out(c);
	else if (rc < 0)
		ray_bridge_reply(c, 2, err.msg, strlen(err.msg));
}

/* Only the user raymond runs as may talk to it (root included). */
static int
peer_is_us(uv_pipe_t *p)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	uv_os_fd_t fd;

	if (uv_fileno((uv_handle_t *)p, &fd) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return 0;
	return cred.uid == geteuid();
}

static void
accept_one(struct ray_bridge *b)
{
	struct ray_bridge_conn *c = xcalloc(1, sizeof(*c));

	c->srv = b;
	c->phase = READING;
	ray_bridge_reader_init(&c->rd, 0);
	uv_pipe_init(b->loop, &c->pipe, 0);
	uv_timer_init(b->loop, &c->timer);
	c->pipe.data = c->timer.data = c;
	c->open_handles = 2;
	c->next = b->conns;
	if (c->next)
		c->next->prevp = &c->next;
	c->prevp = &b->conns;
	b->conns = c;
	b->nconns++;
	if (uv_accept((uv_stream_t *)&b->listener, (uv_stream_t *)&c->pipe) < 0 ||
	    !peer_is_us(&c->pipe) ||
	    uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read) < 0) {
		ray_bridge_drop(c);
		return;
	}
	c->limit_ms = b->lim.request_ms;
	uv_timer_start(&c->timer, on_request_timeout, c->limit_ms, 0);
}

static void
on_connection(uv_stream_t *s, int status)
{
	struct ray_bridge *b = s->data;

	if (status < 0)
		return;
	if (b->nconns >= b->lim.max_conns) {
		/* libuv keeps it and accepts no more until uv_accept. */
		b->pending = 1;
		return;
	}
	accept_one(b);
}

/* Bind `fd` at the address with mode 0600 from the first instant. */
static int
bind_private(int fd, const struct sockaddr_un *sun)
{
	mode_t old = umask(0177);
	int rc = bind(fd, (const struct sockaddr *)sun, sizeof(*sun));

	umask(old);
	return rc;
}

/* Remove a socket a killed raymond left at the name; refuse anything else. */
static int
clear_stale(const struct addr *a, const char *path, struct ray_err *err)
{
	struct stat st;

	if (fstatat(a->dirfd, a->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 :
		    ray_err_sys(err, "cannot look at '%s'", path);
	if (!S_ISSOCK(st.st_mode)) {
		ray_err_set(err, RAY_EINVAL, "cannot make the bridge socket "
		    "'%s': something that is not a socket is in the way", path);
		ray_err_hint(err, "remove it");
		return RAY_EINVAL;
	}
	if (unlinkat(a->dirfd, a->name, 0) < 0 && errno != ENOENT)
		return ray_err_sys(err, "cannot remove the old bridge socket "
		    "'%s'", path);
	return 0;
}

int
ray_bridge_listen(uv_loop_t *loop, const char *path,
    const struct ray_bridge_limits *lim, ray_bridge_request_fn on_request,
    void *ud, struct ray_bridge **out, struct ray_err *err)
{
	struct ray_bridge *b = NULL;
	struct addr a;
	struct stat st;
	int fd = -1, rc;

	*out = NULL;
	if ((rc = addr_open(&a, path, err)) < 0)
		return rc;
	if ((rc = clear_stale(&a, path, err)) < 0)
		goto fail;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		rc = ray_err_sys(err, "cannot make a socket");
		goto fail;
	}
	if (bind_private(fd, &a.sun) < 0) {
		rc = ray_err_sys(err, "cannot make the bridge socket '%s'", path);
		goto fail;
	}
	if (fstatat(a.dirfd, a.name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		rc = ray_err_sys(err, "cannot look at '%s'", path);
		goto fail;
	}
	b = xcalloc(1, sizeof(*b));
	b->loop = loop;
	b->lim = *lim;
	b->on_request = on_request;
	b->ud = ud;
	b->dirfd = a.dirfd;
	b->name = xstrdup(a.name);
	b->dev = st.st_dev;
	b->ino = st.st_ino;
	/* Our own bind: libuv 1.44's uv_pipe_bind cuts a long path short. */
	uv_pipe_init(loop, &b->listener, 0);
	b->listener.data = b;
	a.dirfd = -1;		/* b owns it now */
	if ((rc = uv_pipe_open(&b->listener, fd)) == 0) {
		fd = -1;	/* and the handle this */
		rc = uv_listen((uv_stream_t *)&b->listener, 128, on_connection);
	}
	if (rc < 0) {
		rc = ray_err_set(err, RAY_EIO, "cannot listen at '%s': %s",
		    path, uv_strerror(rc));
		ray_bridge_close(b);
		goto fail;
	}
	uv_unref((uv_handle_t *)&b->listener);
	*out = b;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	if (a.dirfd >= 0)
		close(a.dirfd);
	return rc;
}

static void
on_listener_closed(uv_handle_t *hd)
{
	struct ray_bridge *b = hd->data;

	free(b->name);
	free(b);
}

void
ray_bridge_close(struct ray_bridge *b)
{
	struct stat st;

	struct ray_bridge_conn *c, *next;

	if (b == NULL)
		return;
	/*
	 * Requests still arriving are dropped; those handed out stay open
	 * until answered, no longer counted by the server, which goes.
	 */
	b->closing = 1;
	for (c = b->conns; c != NULL; c = next) {
		next = c->next;
		if (c->phase == READING)
			ray_bridge_drop(c);
		else
			conn_unlink(c);
	}
	if (fstatat(b->dirfd, b->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    st.st_dev == b->dev && st.st_ino == b->ino)
		unlinkat(b->dirfd, b->name, 0);
	close(b->dirfd);
	uv_close((uv_handle_t *)&b->listener, on_listener_closed);
}
