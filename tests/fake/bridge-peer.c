/*
 * bridge-peer.c - the other end of the hook bridge's socket, byte by byte,
 * for the tests of what raymond does with frames it would never make
 * itself (libc only; a fresh machine has no socat or nc -U).
 *
 *	bridge-peer serve PATH HEX|-
 *	    listen at PATH (short), print "listening", take one connection
 *	    (and remove PATH),
 *	    read the request's header and body, write the bytes HEX (or
 *	    nothing, for -), close and exit
 *	bridge-peer send PATH HEX
 *	    connect to PATH, write the bytes HEX, read until the server
 *	    closes and print the answer: "CODE TEXT" for a well-formed one,
 *	    "closed" for none, else "raw HEX"
 *	bridge-peer slow PATH HEX FLAG
 *	    the same, but write only the first 8 bytes, print "connected",
 *	    and the rest once the file FLAG exists (60 s at most)
 *	bridge-peer hold PATH N
 *	    open N connections that send nothing, print "held", and wait
 *	    until the server has closed them all; print "closed"
 *	bridge-peer noread PATH TOKEN BYTES
 *	    send one request with TOKEN and the event {"test":"allow",
 *	    "pad":"x..."} of about BYTES bytes, print "sent", never read the
 *	    answer, and print "closed" once the server has closed the
 *	    connection (60 s at most)
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void
die(const char *what)
{
	fprintf(stderr, "bridge-peer: %s: %s\n", what, strerror(errno));
	exit(1);
}

static struct sockaddr_un
addr(const char *path)
{
	struct sockaddr_un a;

	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a.sun_path)) {
		fprintf(stderr, "bridge-peer: path too long\n");
		exit(1);
	}
	strcpy(a.sun_path, path);
	return a;
}

static size_t
unhex(const char *hex, unsigned char *out)
{
	size_t n = 0;
	unsigned v;

	while (hex[0] && hex[1] && sscanf(hex, "%2x", &v) == 1) {
		out[n++] = (unsigned char)v;
		hex += 2;
	}
	return n;
}

static int
connect_to(const char *path)
{
	struct sockaddr_un a = addr(path);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		die("connect");
	return fd;
}

/* Read exactly n bytes, or fewer when the peer closes. */
static size_t
read_n(int fd, unsigned char *buf, size_t n)
{
	size_t have = 0;
	ssize_t k;

	while (have < n && (k = read(fd, buf + have, n - have)) > 0)
		have += (size_t)k;
	return have;
}

static int
serve(const char *path, const char *hex)
{
	struct sockaddr_un a = addr(path);
	unsigned char hdr[76], *body, *out;
	size_t len, n;
	int s = socket(AF_UNIX, SOCK_STREAM, 0), c;

	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(s, 4) < 0)
		die("listen");
	printf("listening\n");
	fflush(stdout);
	if ((c = accept(s, NULL, NULL)) < 0)
		die("accept");
	/* Gone before the answer: a test starts the next peer at the same
	 * path as soon as this answer is in, and a late unlink would take
	 * that peer's socket away. */
	unlink(path);
	close(s);
	if (read_n(c, hdr, sizeof(hdr)) == sizeof(hdr)) {
		len = (size_t)hdr[72] << 24 | (size_t)hdr[73] << 16 |
		    (size_t)hdr[74] << 8 | hdr[75];
		body = malloc(len + 1);
		read_n(c, body, len);
		free(body);
	}
	if (strcmp(hex, "-") != 0) {
		out = malloc(strlen(hex) / 2 + 1);
		n = unhex(hex, out);
		if (write(c, out, n) != (ssize_t)n)
			die("write");
		free(out);
	}
	close(c);
	return 0;
}

/* Wait until `path` exists, 60 s at most. */
static void
wait_for(const char *path)
{
	int i;

	for (i = 0; i < 6000 && access(path, F_OK) != 0; i++)
		usleep(10000);
}

/*
 * Write the bytes HEX, the first `first` of them at once and the rest
 * once `flag` exists (flag NULL: all at once), and print the answer.
 */
static int
send_raw(const char *path, const char *hex, size_t first, const char *flag)
{
	unsigned char *out = malloc(strlen(hex) / 2 + 1), buf[65536];
	size_t n = unhex(hex, out), have, i;
	int fd = connect_to(path);

	if (flag != NULL) {
		first = first < n ? first : n;
		if (write(fd, out, first) != (ssize_t)first)
			die("write");
		printf("connected\n");
		fflush(stdout);
		wait_for(flag);
	} else {
		first = 0;
	}
	/* The server may answer and close before it takes everything. */
	if (send(fd, out + first, n - first, MSG_NOSIGNAL) < 0 &&
	    errno != EPIPE && errno != ECONNRESET)
		die("send");
	have = read_n(fd, buf, sizeof(buf));
	if (have == 0) {
		printf("closed\n");
	} else if (have >= 12 && memcmp(buf, "RAYB\1", 5) == 0) {
		printf("%d %.*s\n", buf[5], (int)(have - 12), buf + 12);
	} else {
		printf("raw ");
		for (i = 0; i < have; i++)
			printf("%02x", buf[i]);
		printf("\n");
	}
	free(out);
	return 0;
}

static int
hold(const char *path, int n)
{
	int *fds = calloc((size_t)n, sizeof(int)), i;
	char c;

	for (i = 0; i < n; i++)
		fds[i] = connect_to(path);
	printf("held\n");
	fflush(stdout);
	for (i = 0; i < n; i++)
		while (read(fds[i], &c, 1) > 0)
			;
	printf("closed\n");
	free(fds);
	return 0;
}

static int
noread(const char *path, const char *token, size_t bytes)
{
	const char *head = "{\"test\":\"allow\",\"pad\":\"", *tail = "\"}";
	size_t hl = strlen(head), tl = strlen(tail), len = hl + bytes + tl;
	unsigned char *req = malloc(76 + len);
	struct pollfd p;
	int fd = connect_to(path), i;

	memcpy(req, "RAYB\1\0\0\0", 8);
	memcpy(req + 8, token, 64);
	req[72] = (unsigned char)(len >> 24);
	req[73] = (unsigned char)(len >> 16);
	req[74] = (unsigned char)(len >> 8);
	req[75] = (unsigned char)len;
	memcpy(req + 76, head, hl);
	memset(req + 76 + hl, 'x', bytes);
	memcpy(req + 76 + hl + bytes, tail, tl);
	if (send(fd, req, 76 + len, MSG_NOSIGNAL) != (ssize_t)(76 + len))
		die("send");
	printf("sent\n");
	fflush(stdout);
	/* The answer stays unread: only the server's close is waited for. */
	p.fd = fd;
	p.events = POLLRDHUP;
	for (i = 0; i < 600; i++) {
		if (poll(&p, 1, 100) > 0 && (p.revents & (POLLRDHUP | POLLHUP))) {
			printf("closed\n");
			break;
		}
	}
	free(req);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "noread") == 0 && strlen(argv[3]) == 64)
		return noread(argv[2], argv[3], (size_t)atol(argv[4]));
	if (argc == 4 && strcmp(argv[1], "serve") == 0)
		return serve(argv[2], argv[3]);
	if (argc == 4 && strcmp(argv[1], "send") == 0)
		return send_raw(argv[2], argv[3], 0, NULL);
	if (argc == 5 && strcmp(argv[1], "slow") == 0)
		return send_raw(argv[2], argv[3], 8, argv[4]);
	if (argc == 4 && strcmp(argv[1], "hold") == 0)
		return hold(argv[2], atoi(argv[3]));
	fprintf(stderr, "usage: bridge-peer serve PATH HEX|- | send PATH HEX | "
	    "slow PATH HEX FLAG | hold PATH N\n");
	return 2;
}
