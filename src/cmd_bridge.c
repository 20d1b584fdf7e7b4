/*
 * cmd_bridge.c - `raymond hook-bridge [--warn] [--timeout S]`, the command
 * hook raymond gives the Claude Code CLI: it hands the event on stdin to
 * the raymond that runs the turn, through the socket RAYMOND_BRIDGE with
 * the secret RAYMOND_BRIDGE_TOKEN (bridge.h), and relays the decision.
 *
 *	answer (0, TEXT)  TEXT on stdout, exit 0
 *	answer (2, TEXT)  TEXT on stderr, exit 2
 *	anything else     "raymond hook-bridge: WHAT; the tool call is denied"
 *	                  on stderr, exit 2; with --warn "...; allowed because
 *	                  the hook says on_error = "warn"", exit 0
 *
 * The CLI lets a tool run when a hook exits with any status but 0 and 2,
 * or is killed, or outlives its timeout; so every failure here ends in an
 * exit 2 the command chose, and the whole exchange, reading stdin
 * included, keeps to one deadline, S seconds from the start, which the
 * CLI's own timeout for the hook exceeds.  Answered in C before Lua
 * starts: it runs for every tool call.
 */
#include "bridge.h"
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* RAYMOND_HOOK_SECONDS' default, 600, and the 15 s raymond adds. */
#define DEFAULT_SECONDS 615.0

struct bridge_call {
	int warn;
	double seconds;
	uint64_t deadline;
	struct ray_buf input;
	int fd;
	struct ray_bridge_reader answer;
};

/* Milliseconds left before the deadline, for poll; 0 once it has passed. */
static int
left_ms(const struct bridge_call *b)
{
	uint64_t now = ray_bridge_now_ms();

	if (now >= b->deadline)
		return 0;
	return b->deadline - now > INT32_MAX ? INT32_MAX :
	    (int)(b->deadline - now);
}

/* Wait until fd is ready for `events`: 0, or -ETIMEDOUT at the deadline. */
static int
wait_fd(const struct bridge_call *b, int fd, short events)
{
	struct pollfd p = { fd, events, 0 };
	int n;

	for (;;) {
		int ms = left_ms(b);

		if (ms == 0)
			return -ETIMEDOUT;
		n = poll(&p, 1, ms);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

static int
timed_out(const struct bridge_call *b, struct ray_err *err)
{
	return ray_err_set(err, -ETIMEDOUT, "no answer from the bridge within "
	    "%g seconds", b->seconds);
}

/* The event JSON on stdin, at most RAY_BRIDGE_BODY_MAX bytes. */
static int
read_input(struct bridge_call *b, struct ray_err *err)
{
	char chunk[65536];
	ssize_t n;

	for (;;) {
		if (wait_fd(b, 0, POLLIN) < 0)
			return ray_err_set(err, -ETIMEDOUT, "the hook input did "
			    "not end within %g seconds", b->seconds);
		n = read(0, chunk, sizeof(chunk));
		if (n == 0)
			return 0;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return ray_err_sys(err, "cannot read the hook input");
		}
		if (b->input.len + (size_t)n > RAY_BRIDGE_BODY_MAX)
			return ray_err_set(err, RAY_ETOOBIG, "%s",
			    RAY_BRIDGE_TOO_BIG);
		ray_buf_add(&b->input, chunk, (size_t)n);
	}
}

/*
 * Send the header and the event.  A server that answers early (an input
 * over its cap) may close before taking it all: the answer is read anyway.
 */
static int
send_request(struct bridge_call *b, const char *token, struct ray_err *err)
{
	unsigned char hdr[RAY_BRIDGE_REQ_HDR];
	struct ray_buf out = RAY_BUF_INIT;
	size_t off = 0;
	ssize_t n;
	int rc = 0;

	ray_bridge_request_header(hdr, token, (uint32_t)b->input.len);
	ray_buf_add(&out, hdr, sizeof(hdr));
	ray_buf_add(&out, b->input.data, b->input.len);
	while (off < out.len) {
		if (wait_fd(b, b->fd, POLLOUT) < 0) {
			rc = timed_out(b, err);
			break;
		}
		n = send(b->fd, out.data + off, out.len - off,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			break;
		off += (size_t)n;
	}
	ray_buf_release(&out);
	return rc;
}

static int
read_answer(struct bridge_call *b, struct ray_err *err)
{
	char chunk[65536];
	struct ray_err why;
	size_t used;
	ssize_t n;
	int rc;

	for (;;) {
		if (wait_fd(b, b->fd, POLLIN) < 0)
			return timed_out(b, err);
		n = recv(b->fd, chunk, sizeof(chunk), MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0 && b->answer.have > 0)
			return ray_err_set(err, RAY_EIO, "the bridge closed the "
			    "connection in the middle of its answer");
		if (n <= 0)
			return ray_err_set(err, RAY_EIO, "the bridge closed the "
			    "connection without an answer");
		rc = ray_bridge_read(&b->answer, chunk, (size_t)n, &used, &why);
		if (rc == 1)
			return 0;
		if (rc < 0)
			return ray_err_set(err, RAY_EINVAL, "malformed answer from "
			    "the bridge: %s", why.msg);
	}
}

/* "--timeout S" and "--warn", in any order; the last --timeout counts. */
static int
parse_args(struct bridge_call *b, int argc, char **argv, struct ray_err *err)
{
	int i, rc = 0;
	char *end;

	for (i = 0; i < argc; i++)
		if (strcmp(argv[i], "--warn") == 0)
			b->warn = 1;
	for (i = 0; i < argc && rc == 0; i++) {
		if (strcmp(argv[i], "--warn") == 0)
			continue;
		if (strcmp(argv[i], "--timeout") != 0) {
			rc = ray_err_set(err, RAY_EINVAL, "unknown argument '%s' "
			    "(usage: raymond hook-bridge [--warn] [--timeout S])",
			    argv[i]);
		} else if (++i == argc) {
			rc = ray_err_set(err, RAY_EINVAL, "--timeout wants a "
			    "number of seconds");
		} else {
			errno = 0;
			b->seconds = strtod(argv[i], &end);
			if (end == argv[i] || *end != '\0' || errno != 0 ||
			    !isfinite(b->seconds) || b->seconds <= 0 ||
			    b->seconds > 1e6)
				rc = ray_err_set(err, RAY_EINVAL, "--timeout wants "
				    "a number of seconds above 0, not '%s'",
				    argv[i]);
		}
	}
	return rc;
}

static int
call(struct bridge_call *b, int argc, char **argv, struct ray_err *err)
{
	const char *path, *token;
	int rc;

	if ((rc = parse_args(b, argc, argv, err)) < 0)
		return rc;
	b->deadline = ray_bridge_now_ms() + (uint64_t)(b->seconds * 1000);
	path = getenv("RAYMOND_BRIDGE");
	token = getenv("RAYMOND_BRIDGE_TOKEN");
	if (path == NULL || *path == '\0')
		return ray_err_set(err, RAY_EINVAL, "RAYMOND_BRIDGE is not set");
	if (token == NULL || *token == '\0')
		return ray_err_set(err, RAY_EINVAL, "RAYMOND_BRIDGE_TOKEN is not "
		    "set");
	if (!ray_bridge_token_ok(token))
		return ray_err_set(err, RAY_EINVAL, "RAYMOND_BRIDGE_TOKEN is not "
		    "64 hexadecimal digits");
	if ((rc = read_input(b, err)) < 0 ||
	    (rc = ray_bridge_connect(path, b->deadline, &b->fd, err)) < 0 ||
	    (rc = send_request(b, token, err)) < 0)
		return rc;
	return read_answer(b, err);
}

int
ray_cmd_bridge(int argc, char **argv)
{
	struct bridge_call b = { 0, DEFAULT_SECONDS, 0, RAY_BUF_INIT, -1, { 0 } };
	struct ray_err err;
	int code;

	ray_bridge_reader_init(&b.answer, 1);
	if (call(&b, argc, argv, &err) == 0) {
		code = b.answer.code;
		if (ray_write_all(code == 0 ? 1 : 2, ray_buf_str(&b.answer.body),
		    b.answer.body.len) == 0)
			goto out;
		/* The hooks answered: half an answer is no allow, --warn or
		 * not (a deny cut short could read as one). */
		ray_err_sys(&err, "cannot write the answer");
		fprintf(stderr, "raymond hook-bridge: %s; the tool call is "
		    "denied\n", err.msg);
		code = 2;
		goto out;
	}
	code = b.warn ? 0 : 2;
	fprintf(stderr, "raymond hook-bridge: %s; %s\n", err.msg, b.warn ?
	    "allowed because the hook says on_error = \"warn\"" :
	    "the tool call is denied");
out:
	if (b.fd >= 0)
		close(b.fd);
	ray_bridge_reader_release(&b.answer);
	ray_buf_release(&b.input);
	return code;
}
