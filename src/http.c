/*
 * http.c - libmicrohttpd on the libuv loop (http.h).
 *
 * libmicrohttpd runs with MHD_USE_EPOLL and no thread of its own: its
 * epoll descriptor is watched by a uv_poll, and MHD_run is called when it
 * is readable, when MHD's timeout (a uv_timer) passes, and after a
 * suspended connection is resumed.  So every callback below runs on the
 * loop's thread, between other events.
 *
 * A request's life, as MHD calls the access handler:
 *
 *	first call            a struct ray_http_req is made (*con_cls)
 *	calls with data       the body is gathered, up to max_body
 *	call with no data     on_request(req); the caller may answer at once
 *	                      (queued now) or later: the connection is then
 *	                      suspended, and ray_http_respond resumes it, so
 *	                      MHD calls the handler once more, which queues it
 *	request completed     the req is freed (a stream's on_gone first)
 *
 * A stream is a response of unknown size whose reader copies what
 * ray_http_send buffered; with nothing buffered it suspends the
 * connection, and the next send resumes it.
 */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "buf.h"

struct ray_http {
	struct MHD_Daemon *d;
	uv_poll_t poll;
	uv_timer_t timer;
	int closing;
	int running;		/* inside MHD_run: its callbacks may close */
	int stop_pending;	/* closed meanwhile: stop once it returns */
	int open_handles;	/* the poll and the timer, until closed */
	struct ray_http_opts opts;
	ray_http_on_request on_request;
	void *ud;
	int port;
	struct ray_http_req *reqs;	/* every request not yet completed */
};

enum req_phase { READING, WAITING, ANSWERED, STREAMING, DONE };

struct ray_http_req {
	struct ray_http *srv;
	struct ray_http_req *next, **prevp;	/* on srv->reqs */
	struct MHD_Connection *c;
	enum req_phase phase;
	int suspended;
	int too_big;
	char *method, *path;
	struct ray_buf body;
	char peer[INET6_ADDRSTRLEN];
	/* An answer made while the connection was suspended. */
	struct MHD_Response *pending;
	int pending_status;
	/* A stream's buffer and its end. */
	struct ray_buf out;
	size_t out_off;
	int ended;
	ray_http_on_gone on_gone;
	void *gone_ud;
};

static const char TOO_BIG[] = "{\"error\":\"the request body is over the server's limit\"}";

static void drive(struct ray_http *srv);
static void stop(struct ray_http *srv);

static void
on_poll(uv_poll_t *p, int status, int events)
{
	(void)status;
	(void)events;
	drive(p->data);
}

static void
on_timer(uv_timer_t *t)
{
	drive(t->data);
}

/* Run MHD once and set the timer for its next deadline. */
static void
drive(struct ray_http *srv)
{
	MHD_UNSIGNED_LONG_LONG to;

	if (srv->closing)
		return;
	srv->running++;
	MHD_run(srv->d);
	srv->running--;
	if (srv->closing) {
		/* A callback closed the server: stop it now that MHD is out. */
		if (srv->stop_pending && srv->running == 0) {
			srv->stop_pending = 0;
			stop(srv);
		}
		return;
	}
	if (MHD_get_timeout(srv->d, &to) == MHD_YES)
		uv_timer_start(&srv->timer, on_timer, to, 0);
	else
		uv_timer_stop(&srv->timer);
}

/* Run MHD soon, from the loop: never from inside a caller that MHD's own
 * callbacks may have reached (a Lua handler, a finalizer). */
static void
kick(struct ray_http *srv)
{
	if (!srv->closing)
		uv_timer_start(&srv->timer, on_timer, 0, 0);
}

static void
resume(struct ray_http_req *req)
{
	if (req->suspended) {
		req->suspended = 0;
		MHD_resume_connection(req->c);
	}
}

/* ---- responses ------------------------------------------------------ */

static int
add_headers(struct MHD_Response *r, const char *const *headers)
{
	for (size_t i = 0; headers && headers[i] && headers[i + 1]; i += 2)
		if (MHD_add_response_header(r, headers[i], headers[i + 1]) != MHD_YES)
			return -1;
	return 0;
}

static enum MHD_Result
queue_plain(struct MHD_Connection *c, int status, const char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text),
	    (void *)text, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ok;

	if (r == NULL)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "application/json");
	ok = MHD_queue_response(c, (unsigned)status, r);
	MHD_destroy_response(r);
	return ok;
}

static enum MHD_Result
queue_pending(struct ray_http_req *req)
{
	enum MHD_Result ok = MHD_queue_response(req->c, (unsigned)req->pending_status, req->pending);

	MHD_destroy_response(req->pending);
	req->pending = NULL;
	return ok;
}

int
ray_http_respond(struct ray_http_req *req, int status, const char *const *headers,
    const char *body, size_t len)
{
	struct MHD_Response *r;

	if (req->phase != WAITING)
		return RAY_EINVAL;
	r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	if (r == NULL)
		return -ENOMEM;
	if (add_headers(r, headers) < 0) {
		MHD_destroy_response(r);
		return RAY_EINVAL;
	}
	req->pending = r;
	req->pending_status = status;
	req->phase = ANSWERED;
	/* The caller has let go of it. */
	req->on_gone = NULL;
	if (req->suspended) {
		resume(req);
		kick(req->srv);
	}
	return 0;
}

/* ---- streams -------------------------------------------------------- */

static ssize_t
stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct ray_http_req *req = cls;
	size_t left = req->out.len - req->out_off, n;

	(void)pos;
	if (left == 0) {
		if (req->ended)
			return MHD_CONTENT_READER_END_OF_STREAM;
		/* The server is closing: no connection may stay suspended. */
		if (req->srv->closing)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		/* Nothing to send: wait for ray_http_send to resume it. */
		req->suspended = 1;
		MHD_suspend_connection(req->c);
		return 0;
	}
	n = left < max ? left : max;
	memcpy(buf, req->out.data + req->out_off, n);
	req->out_off += n;
	if (req->out_off == req->out.len) {
		req->out.len = 0;
		req->out_off = 0;
	}
	return (ssize_t)n;
}

int
ray_http_stream(struct ray_http_req *req, int status, const char *const *headers,
    ray_http_on_gone on_gone, void *gone_ud)
{
	struct MHD_Response *r;

	if (req->phase != WAITING)
		return RAY_EINVAL;
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, stream_read, req, NULL);
	if (r == NULL)
		return -ENOMEM;
	if (add_headers(r, headers) < 0) {
		MHD_destroy_response(r);
		return RAY_EINVAL;
	}
	req->on_gone = on_gone;
	req->gone_ud = gone_ud;
	req->pending = r;
	req->pending_status = status;
	req->phase = STREAMING;
	if (req->suspended) {
		resume(req);
		kick(req->srv);
	}
	return 0;
}

int
ray_http_send(struct ray_http_req *req, const char *data, size_t len)
{
	if (req->phase != STREAMING || req->ended)
		return RAY_EINVAL;
	if (req->out.len - req->out_off + len > req->srv->opts.max_stream)
		return RAY_ETOOBIG;
	ray_buf_add(&req->out, data, len);
	if (req->suspended) {
		resume(req);
		kick(req->srv);
	}
	return 0;
}

void
ray_http_watch(struct ray_http_req *req, ray_http_on_gone on_gone, void *gone_ud)
{
	if (req->phase != WAITING)
		return;
	req->on_gone = on_gone;
	req->gone_ud = gone_ud;
}

void
ray_http_end(struct ray_http_req *req)
{
	if (req->phase != STREAMING || req->ended)
		return;
	req->ended = 1;
	/* The caller is done with it: on_gone is not called for it. */
	req->on_gone = NULL;
	if (req->suspended) {
		resume(req);
		kick(req->srv);
	}
}

/* ---- MHD's callbacks ------------------------------------------------ */

static struct ray_http_req *
new_req(struct ray_http *srv, struct MHD_Connection *c, const char *url, const char *method)
{
	struct ray_http_req *req = calloc(1, sizeof(*req));
	const union MHD_ConnectionInfo *ci;

	if (req == NULL)
		return NULL;
	req->srv = srv;
	req->c = c;
	req->method = strdup(method);
	req->path = strdup(url);
	if (req->method == NULL || req->path == NULL) {
		free(req->method);
		free(req->path);
		free(req);
		return NULL;
	}
	req->next = srv->reqs;
	if (req->next)
		req->next->prevp = &req->next;
	req->prevp = &srv->reqs;
	srv->reqs = req;
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci && ci->client_addr) {
		const struct sockaddr *sa = ci->client_addr;
		if (sa->sa_family == AF_INET)
			inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, req->peer, sizeof(req->peer));
		else if (sa->sa_family == AF_INET6)
			inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, req->peer, sizeof(req->peer));
	}
	return req;
}

/* A body the client says is over the limit (Content-Length, unless the
 * body is chunked, when the length counts only as it comes). */
static int
declared_too_big(struct MHD_Connection *c, size_t max)
{
	const char *len = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_CONTENT_LENGTH);
	char *end;
	unsigned long long n;

	if (len == NULL || MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL)
		return 0;
	errno = 0;
	n = strtoull(len, &end, 10);
	return end != len && (errno == ERANGE || n > max);
}

static enum MHD_Result
on_access(void *cls, struct MHD_Connection *c, const char *url, const char *method,
    const char *version, const char *data, size_t *size, void **con_cls)
{
	struct ray_http *srv = cls;
	struct ray_http_req *req = *con_cls;

	(void)version;
	if (req == NULL) {
		req = new_req(srv, c, url, method);
		if (req == NULL)
			return MHD_NO;
		*con_cls = req;
		/* Answered before the body is read: MHD then closes the
		 * connection instead of reading a body nobody wants. */
		if (declared_too_big(c, srv->opts.max_body)) {
			req->phase = DONE;
			return queue_plain(c, 413, TOO_BIG);
		}
		return MHD_YES;
	}
	if (req->phase == READING && *size > 0) {
		if (!req->too_big && req->body.len + *size > srv->opts.max_body)
			req->too_big = 1;
		if (!req->too_big)
			ray_buf_add(&req->body, data, *size);
		*size = 0;
		return MHD_YES;
	}
	if (req->phase == READING) {
		if (req->too_big) {
			req->phase = DONE;
			return queue_plain(c, 413, TOO_BIG);
		}
		req->phase = WAITING;
		srv->on_request(srv->ud, req);
	}
	if (req->phase == ANSWERED || req->phase == STREAMING) {
		if (req->pending)
			return queue_pending(req);
		return MHD_YES;
	}
	/* No answer yet: wait for it without holding the loop; unless the
	 * server is closing, which drops the connection (and calls on_gone). */
	if (srv->closing)
		return MHD_NO;
	if (!req->suspended) {
		req->suspended = 1;
		MHD_suspend_connection(c);
	}
	return MHD_YES;
}

static void
on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct ray_http_req *req = *con_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (req == NULL)
		return;
	*con_cls = NULL;
	*req->prevp = req->next;
	if (req->next)
		req->next->prevp = req->prevp;
	if (req->on_gone)
		req->on_gone(req->gone_ud, req);
	if (req->pending)
		MHD_destroy_response(req->pending);
	ray_buf_release(&req->body);
	ray_buf_release(&req->out);
	free(req->method);
	free(req->path);
	free(req);
}

/* ---- the server ----------------------------------------------------- */

int
ray_http_listen(uv_loop_t *loop, const struct ray_http_opts *opts,
    ray_http_on_request on_request, void *ud, struct ray_http **out,
    struct ray_err *err)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME;
	struct ray_http *srv;
	const union MHD_DaemonInfo *di;
	int rc = 0;

	memset(&ss, 0, sizeof(ss));
	if (opts->port < 0 || opts->port > 65535)
		return ray_err_set(err, RAY_EINVAL, "port %d is not one from 0 to 65535", opts->port);
	if (inet_pton(AF_INET, opts->host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)opts->port);
	} else if (inet_pton(AF_INET6, opts->host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)opts->port);
		flags |= MHD_USE_IPv6;
	} else {
		return ray_err_set(err, RAY_EINVAL, "'%s' is not an IPv4 or IPv6 address", opts->host);
	}
	srv = calloc(1, sizeof(*srv));
	if (srv == NULL)
		return ray_err_set(err, -ENOMEM, "out of memory");
	srv->opts = *opts;
	srv->on_request = on_request;
	srv->ud = ud;
	srv->d = MHD_start_daemon(flags, (uint16_t)opts->port, NULL, NULL, on_access, srv,
	    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
	    MHD_OPTION_CONNECTION_TIMEOUT, opts->timeout_s,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, opts->max_header,
	    MHD_OPTION_CONNECTION_LIMIT, opts->max_conn > 0 ? opts->max_conn : 256u,
	    MHD_OPTION_END);
	if (srv->d == NULL) {
		rc = ray_err_set(err, RAY_EIO, "cannot listen on %s port %d: %s", opts->host, opts->port,
		    errno ? strerror(errno) : "the HTTP server did not start");
		free(srv);
		return rc;
	}
	di = MHD_get_daemon_info(srv->d, MHD_DAEMON_INFO_BIND_PORT);
	srv->port = di ? di->port : opts->port;
	di = MHD_get_daemon_info(srv->d, MHD_DAEMON_INFO_EPOLL_FD);
	uv_poll_init(loop, &srv->poll, di->epoll_fd);
	srv->poll.data = srv;
	uv_timer_init(loop, &srv->timer);
	srv->timer.data = srv;
	srv->open_handles = 2;
	uv_poll_start(&srv->poll, UV_READABLE, on_poll);
	drive(srv);
	*out = srv;
	return 0;
}

int
ray_http_port(const struct ray_http *srv)
{
	return srv->port;
}

static void
on_closed(uv_handle_t *h)
{
	struct ray_http *srv = h->data;

	/* The second of the two handles to close frees the server, in
	 * whichever order libuv closes them. */
	if (--srv->open_handles == 0)
		free(srv);
}

/*
 * MHD may not be stopped with a connection suspended (it aborts the
 * process), and a resumed one leaves MHD's list of suspended ones only in
 * MHD_run.  A request waiting for its answer, or a stream for more to
 * send, is resumed and run once more; with `closing` set, neither
 * suspends again: each connection is dropped.
 */
static void
stop(struct ray_http *srv)
{
	for (struct ray_http_req *req = srv->reqs; req != NULL; req = req->next)
		resume(req);
	srv->running++;
	MHD_run(srv->d);
	/* Every request is completed (its on_gone called) here. */
	MHD_stop_daemon(srv->d);
	srv->running--;
}

void
ray_http_close(struct ray_http *srv)
{
	if (srv == NULL || srv->closing)
		return;
	srv->closing = 1;
	uv_poll_stop(&srv->poll);
	/* The handles' close callbacks, which free srv, come from the loop,
	 * after any MHD_run under way has returned. */
	uv_close((uv_handle_t *)&srv->poll, on_closed);
	uv_close((uv_handle_t *)&srv->timer, on_closed);
	/* Closed by a handler or a finalizer that MHD_run reached: MHD is
	 * still using the connection, so it stops when MHD_run returns. */
	if (srv->running > 0)
		srv->stop_pending = 1;
	else
		stop(srv);
}

/* ---- reading a request ---------------------------------------------- */

const char *
ray_http_method(const struct ray_http_req *req)
{
	return req->method;
}

const char *
ray_http_path(const struct ray_http_req *req)
{
	return req->path;
}

const char *
ray_http_header(const struct ray_http_req *req, const char *name)
{
	return MHD_lookup_connection_value(req->c, MHD_HEADER_KIND, name);
}

const char *
ray_http_arg(const struct ray_http_req *req, const char *name)
{
	return MHD_lookup_connection_value(req->c, MHD_GET_ARGUMENT_KIND, name);
}

const char *
ray_http_body(const struct ray_http_req *req, size_t *len)
{
	*len = req->body.len;
	return req->body.len ? req->body.data : "";
}

const char *
ray_http_peer(const struct ray_http_req *req)
{
	return req->peer;
}
