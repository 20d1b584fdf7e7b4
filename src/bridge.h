/*
 * bridge.h - the hook bridge: the Unix socket through which
 * `raymond hook-bridge`, run by the Claude Code CLI as a command hook,
 * hands a tool event to the raymond that runs the turn and gets its
 * decision back (docs/architecture.md, "The hook bridge").
 *
 * The wire, version 1 (all lengths unsigned 32-bit big-endian):
 *
 *	request  "RAYB" | version 1 | 3 zero bytes | token: 64 hex digits |
 *	         body length | body (the event JSON, at most 16 MiB)
 *	answer   "RAYB" | version 1 | code (0 or 2) | 2 zero bytes |
 *	         text length | text (at most 16 MiB)
 *
 * One request and one answer per connection; the server closes it after
 * the answer.
 *
 * Server calling sequence (on a libuv loop, no threads):
 *
 *	ray_bridge_listen(loop, path, &limits, on_request, ud, &srv, &err);
 *	    on_request(ud, conn, token, body, len)    per complete request
 *	        ray_bridge_reply(conn, code, text, len)    once, or
 *	        ray_bridge_drop(conn)                  no answer (the client denies)
 *	ray_bridge_close(srv);                         stops listening, removes the file
 *
 * Client calling sequence (blocking, for `raymond hook-bridge`):
 *
 *	ray_bridge_connect(path, deadline_ms, &fd, &err);
 *	ray_bridge_request_header(hdr, token, len);   then write hdr and body
 *	ray_bridge_reader_init(&r, 1);  ray_bridge_read(&r, ...) until 1
 *
 * Errors: 0 or a negative code with `err` filled, as ray.h says.  The
 * reader returns RAY_EINVAL for a malformed frame and RAY_ETOOBIG for a
 * length over RAY_BRIDGE_BODY_MAX, with the reason in `err`.
 *
 * Ownership: the server owns its connections until it hands one to
 * on_request; from then on the caller owns it and gives it back with
 * exactly one ray_bridge_reply() or ray_bridge_drop().  Connections handed
 * out outlive ray_bridge_close(); those still being read are closed by it.
 * The listening handle does not keep the loop alive; a connection being
 * read or answered does.
 */
#ifndef RAY_BRIDGE_H
#define RAY_BRIDGE_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "buf.h"
#include "ray.h"

#define RAY_BRIDGE_VERSION 1
#define RAY_BRIDGE_TOKEN_LEN 64
#define RAY_BRIDGE_BODY_MAX (16u * 1024 * 1024)
#define RAY_BRIDGE_REQ_HDR (8 + RAY_BRIDGE_TOKEN_LEN + 4)
#define RAY_BRIDGE_ANS_HDR 12
/* What the server answers a request over the cap, without reading it. */
#define RAY_BRIDGE_TOO_BIG "hook input over 16 MiB"

/* ---- framing ------------------------------------------------------------ */

/* The request header for `token` (64 hex digits) and a body of len bytes. */
void ray_bridge_request_header(unsigned char hdr[RAY_BRIDGE_REQ_HDR],
    const char *token, uint32_t len);
/* The answer header for `code` and a text of len bytes. */
void ray_bridge_answer_header(unsigned char hdr[RAY_BRIDGE_ANS_HDR],
    int code, uint32_t len);
/* Whether s is exactly 64 hexadecimal digits. */
int ray_bridge_token_ok(const char *s);

/* A frame read as its bytes arrive, in any pieces. */
struct ray_bridge_reader {
	int answer;		/* reading an answer (1) or a request (0) */
	unsigned char hdr[RAY_BRIDGE_REQ_HDR];
	size_t have;		/* header bytes so far */
	uint32_t len;		/* the body's length, once the header is in */
	int code;		/* an answer's code */
	char token[RAY_BRIDGE_TOKEN_LEN + 1];	/* a request's token */
	struct ray_buf body;	/* the body so far */
	int done;		/* 1 complete, < 0 failed */
};

void ray_bridge_reader_init(struct ray_bridge_reader *r, int answer);
/*
 * Feed n bytes: returns 1 once the frame is complete (*used says how many
 * of these bytes it took), 0 when it needs more, RAY_EINVAL or RAY_ETOOBIG
 * (err says why) when the frame is bad; a finished reader takes nothing.
 */
int ray_bridge_read(struct ray_bridge_reader *r, const void *data, size_t n,
    size_t *used, struct ray_err *err);
void ray_bridge_reader_release(struct ray_bridge_reader *r);

/* ---- client ------------------------------------------------------------- */

/*
 * A connected stream socket to the bridge at `path` (any length), waiting
 * for room in the server's backlog until deadline_ms (ray_bridge_now_ms's
 * clock).  A missing socket is RAY_ENOTFOUND, a refused one -ECONNREFUSED.
 */
int ray_bridge_connect(const char *path, uint64_t deadline_ms, int *fd,
    struct ray_err *err);
/* A monotonic clock in milliseconds. */
uint64_t ray_bridge_now_ms(void);

/* ---- server ------------------------------------------------------------- */

struct ray_bridge;
struct ray_bridge_conn;

struct ray_bridge_limits {
	unsigned max_conns;	/* open at once; more wait in the backlog */
	uint64_t request_ms;	/* for a whole request to arrive */
};
/* 64 connections, 30 s. */
extern const struct ray_bridge_limits ray_bridge_default_limits;

typedef void (*ray_bridge_request_fn)(void *ud, struct ray_bridge_conn *c,
    const char *token, const char *body, size_t len);

/*
 * Listen at `path`: a Unix stream socket of mode 0600, created so (umask)
 * that no other user could ever connect; a path longer than sun_path is
 * bound through /proc/self/fd of its folder.  A socket already at `path`
 * (left by a killed raymond) is replaced; anything else there is an error.
 * Peers of another uid are closed at once.
 */
int ray_bridge_listen(uv_loop_t *loop, const char *path,
    const struct ray_bridge_limits *lim, ray_bridge_request_fn on_request,
    void *ud, struct ray_bridge **out, struct ray_err *err);
/*
 * Answer and close.  Returns 0, or a negative code when the peer is
 * already gone.  text is copied.
 */
int ray_bridge_reply(struct ray_bridge_conn *c, int code, const char *text,
    size_t len);
/* Close without an answer. */
void ray_bridge_drop(struct ray_bridge_conn *c);
/* Stop listening and remove the socket file, if it is still ours. */
void ray_bridge_close(struct ray_bridge *b);

#endif
