/*
 * http.h - an HTTP/1.1 server on the libuv loop, for `raymond serve`:
 * the adapter of GNU libmicrohttpd, run in its external-loop mode so that
 * every callback comes on the loop's thread and nothing needs a lock.
 *
 * Calling sequence (on a libuv loop, no threads):
 *
 *	ray_http_listen(loop, &opts, on_request, ud, &srv, &err);
 *	    on_request(ud, req)                 per request whose body has arrived
 *	        ray_http_method(req), ..._path, ..._arg, ..._header, ..._body
 *	        ray_http_watch(req, on_gone, gone_ud)   to answer later (below)
 *	        ray_http_respond(req, status, headers, body, len)   once, now or later
 *	    or  ray_http_stream(req, status, headers, on_gone, gone_ud)
 *	        ray_http_send(req, data, len)   any number of times
 *	        ray_http_end(req)               the stream is over
 *	ray_http_port(srv)                      the port it listens on (given 0: chosen)
 *	ray_http_close(srv)                     stops listening, drops every connection
 *	                                        (also from on_request or on_gone: then
 *	                                        once the connection in hand is let go)
 *
 * A request whose body is over opts.max_body, or whose header is over
 * opts.max_header, is answered 413 or 431 by the adapter without reaching
 * on_request (413 before the body is read when Content-Length says so).  `headers` given to respond and stream are name, value pairs
 * ending with NULL.
 *
 * Ownership: the server owns each request.  The caller may use `req` from
 * on_request until it has responded, or, for a stream, until it calls
 * ray_http_end; either way only until on_gone is called (the client went
 * away or the server closed), after which `req` is gone.  A caller that
 * answers later than on_request names its on_gone with ray_http_watch:
 * the server drops a request waiting for its answer when it closes (the
 * client going away is seen only when the answer is sent).  A stream
 * buffers what is sent while the client reads slowly, up to
 * opts.max_stream bytes: past that ray_http_send returns RAY_ETOOBIG and
 * the stream should be ended.
 *
 * Errors: 0 or a negative code with `err` filled, as ray.h says.
 */
#ifndef RAY_HTTP_H
#define RAY_HTTP_H

#include <stddef.h>
#include <uv.h>

#include "ray.h"

struct ray_http;
struct ray_http_req;

struct ray_http_opts {
	const char *host;	/* an IPv4 or IPv6 address to bind */
	int port;		/* 0: any free port */
	size_t max_body;
	size_t max_header;
	size_t max_stream;
	unsigned timeout_s;	/* an idle connection is closed after this */
	unsigned max_conn;	/* connections at once (0: 256); more are refused */
};

typedef void (*ray_http_on_request)(void *ud, struct ray_http_req *req);
typedef void (*ray_http_on_gone)(void *ud, struct ray_http_req *req);

int ray_http_listen(uv_loop_t *loop, const struct ray_http_opts *opts,
    ray_http_on_request on_request, void *ud, struct ray_http **out,
    struct ray_err *err);
int ray_http_port(const struct ray_http *srv);
void ray_http_close(struct ray_http *srv);

const char *ray_http_method(const struct ray_http_req *req);
const char *ray_http_path(const struct ray_http_req *req);
/* The value of query argument `name` (decoded), or NULL. */
const char *ray_http_arg(const struct ray_http_req *req, const char *name);
/* The value of header `name` (any case), or NULL. */
const char *ray_http_header(const struct ray_http_req *req, const char *name);
const char *ray_http_body(const struct ray_http_req *req, size_t *len);
/* The peer's address as text. */
const char *ray_http_peer(const struct ray_http_req *req);

int ray_http_respond(struct ray_http_req *req, int status,
    const char *const *headers, const char *body, size_t len);
int ray_http_stream(struct ray_http_req *req, int status,
    const char *const *headers, ray_http_on_gone on_gone, void *gone_ud);
int ray_http_send(struct ray_http_req *req, const char *data, size_t len);
void ray_http_end(struct ray_http_req *req);
/* on_gone(gone_ud, req) if req goes before it is answered or its stream
 * ended; ray_http_stream sets it anew. */
void ray_http_watch(struct ray_http_req *req, ray_http_on_gone on_gone, void *gone_ud);

#endif
