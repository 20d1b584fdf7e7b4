/*
 * sse-client.c - many event streams of raymond serve in one process, for
 * bench/serve.sh: how long a transition takes from the engine to a client.
 *
 *	sse-client PORT TOKEN STREAMS SECONDS WARMUP ID...
 *
 * Opens STREAMS connections to GET /api/runs/ID/events on 127.0.0.1:PORT,
 * the ids taken in turn, and reads them all with one epoll for SECONDS.
 * For every `transition` event it takes the time it arrived less its
 * `at` (the time the engine wrote the transition, UTC with microseconds).
 * A stream starts with the run's history: transitions from before it
 * connected are not counted.  At the end it prints one line:
 *
 *	streams N open M events E transitions T p50 MS p99 MS max MS
 *	    steady T p50 MS p99 MS max MS cpu MS
 *
 *	    wake T p50 MS p99 MS max MS
 *
 * first over every transition counted, then over those written WARMUP
 * seconds or more after the first connect (once every stream has read
 * its history); cpu: this process's own processor time; wake: how late
 * a timer of this process, due every 10 ms, woke it after the warm-up:
 * what the machine's load adds to any wake-up, the daemon's included.  It speaks just enough
 * HTTP/1.1 for this: a 200 answer, then a body either chunked or not.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define BUF 65536

struct stream {
	int fd;
	double since;		/* when it connected */
	int state;		/* 0 headers, 1 body */
	int chunked;
	long chunk_left;	/* bytes of the current chunk still to come */
	char in[BUF];		/* bytes read, not yet taken */
	size_t in_len;
	char event[64];		/* the current event's name and data */
	char data[16384];
	size_t data_len;
	char line[16384];	/* SSE text not yet a whole line */
	size_t line_len;
};

/* The timer's lateness at each wake-up after the warm-up, in ms. */
static double *wake;
static size_t nwake, capwake;

/* Each transition: its latency in ms and when it was written. */
static double *lat, *lat_at;
static size_t nlat, caplat;
static long events, open_streams;

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* "2026-11-28T01:46:03.440264Z" as microseconds since the epoch, or -1. */
static double
iso_us(const char *s)
{
	struct tm tm;
	double frac = 0;
	char *end;

	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (end == NULL)
		return -1;
	if (*end == '.')
		frac = strtod(end, NULL);
	return (double)timegm(&tm) * 1e6 + frac * 1e6;
}

static void
dispatch(struct stream *s)
{
	const char *at;
	double t;

	s->data[s->data_len] = '\0';
	if (s->event[0] != '\0' || s->data_len > 0)
		events++;
	if (strcmp(s->event, "transition") == 0 &&
	    (at = strstr(s->data, "\"at\":\"")) != NULL &&
	    (t = iso_us(at + 6)) >= s->since) {
		if (nlat == caplat) {
			caplat = caplat ? caplat * 2 : 4096;
			if ((lat = realloc(lat, caplat * sizeof(*lat))) == NULL ||
			    (lat_at = realloc(lat_at, caplat * sizeof(*lat))) == NULL) {
				perror("realloc");
				exit(1);
			}
		}
		lat_at[nlat] = t;
		lat[nlat++] = (now_us() - t) / 1000.0;
	}
	s->event[0] = '\0';
	s->data_len = 0;
}

/* One line of SSE text, without its newline. */
static void
sse_line(struct stream *s, const char *l, size_t n)
{
	if (n == 0) {
		dispatch(s);
	} else if (n > 7 && memcmp(l, "event: ", 7) == 0) {
		n -= 7;
		if (n >= sizeof(s->event))
			n = sizeof(s->event) - 1;
		memcpy(s->event, l + 7, n);
		s->event[n] = '\0';
	} else if (n > 6 && memcmp(l, "data: ", 6) == 0) {
		n -= 6;
		if (s->data_len + n + 1 < sizeof(s->data)) {
			memcpy(s->data + s->data_len, l + 6, n);
			s->data_len += n;
		}
	}
}

/* Body bytes: SSE text, cut into lines. */
static void
sse(struct stream *s, const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (p[i] == '\n') {
			sse_line(s, s->line, s->line_len);
			s->line_len = 0;
		} else if (s->line_len + 1 < sizeof(s->line)) {
			s->line[s->line_len++] = p[i];
		}
	}
}

/* Take what can be taken of s->in; 0, or -1 when the stream is unusable. */
static int
take(struct stream *s)
{
	size_t off = 0;
	char *end;

	if (s->state == 0) {
		s->in[s->in_len] = '\0';
		if ((end = strstr(s->in, "\r\n\r\n")) == NULL)
			return s->in_len + 1 < BUF ? 0 : -1;
		if (strncmp(s->in, "HTTP/1.1 200", 12) != 0) {
			fprintf(stderr, "sse-client: %.*s\n", (int)(strchr(s->in, '\r') - s->in), s->in);
			return -1;
		}
		s->chunked = strcasestr(s->in, "\r\nTransfer-Encoding: chunked") != NULL;
		s->state = 1;
		off = (size_t)(end + 4 - s->in);
	}
	while (off < s->in_len) {
		if (!s->chunked) {
			sse(s, s->in + off, s->in_len - off);
			off = s->in_len;
		} else if (s->chunk_left > 0) {
			size_t n = s->in_len - off;

			if ((long)n > s->chunk_left)
				n = (size_t)s->chunk_left;
			sse(s, s->in + off, n);
			off += n;
			s->chunk_left -= (long)n;
		} else {
			/* "\r\n" after a chunk, then "SIZE\r\n". */
			char *nl = memchr(s->in + off, '\n', s->in_len - off);
			char *p = s->in + off;

			if (nl == NULL)
				break;
			while (p < nl && (*p == '\r' || *p == ' '))
				p++;
			if (p == nl) {
				off = (size_t)(nl + 1 - s->in);
				continue;
			}
			s->chunk_left = strtol(p, NULL, 16);
			off = (size_t)(nl + 1 - s->in);
			if (s->chunk_left == 0)
				return -1;
		}
	}
	memmove(s->in, s->in + off, s->in_len - off);
	s->in_len -= off;
	return 0;
}

static int
connect_stream(struct stream *s, int port, const char *token, const char *id)
{
	struct sockaddr_in a;
	char req[1024];
	int n;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((unsigned short)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->since = now_us();
	if ((s->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(s->fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		return -1;
	n = snprintf(req, sizeof(req), "GET /api/runs/%s/events HTTP/1.1\r\n"
	    "Host: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n"
	    "Accept: text/event-stream\r\n\r\n", id, port, token);
	if (n <= 0 || (size_t)n >= sizeof(req) || write(s->fd, req, (size_t)n) != n)
		return -1;
	return 0;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* " T p50 MS p99 MS max MS" of the n latencies in v, sorted in place. */
static void
summary(double *v, size_t n)
{
	if (n == 0) {
		printf(" 0 p50 0 p99 0 max 0");
		return;
	}
	qsort(v, n, sizeof(*v), cmp);
	printf(" %zu p50 %.1f p99 %.1f max %.1f", n, v[n / 2],
	    v[(size_t)((double)(n - 1) * 0.99)], v[n - 1]);
}

int
main(int argc, char **argv)
{
	struct epoll_event ev, got[64];
	struct stream *streams;
	struct rusage ru;
	double start = now_us(), until, warm, *steady;
	struct itimerspec every = { { 0, 10000000 }, { 0, 10000000 } };
	struct timespec t0, tn;
	uint64_t fired, ticks = 0;
	size_t nsteady = 0, j;
	int port, n, ep, i, k, tfd;

	if (argc < 7) {
		fprintf(stderr, "usage: sse-client PORT TOKEN STREAMS SECONDS WARMUP ID...\n");
		return 2;
	}
	port = atoi(argv[1]);
	n = atoi(argv[3]);
	until = start + atof(argv[4]) * 1e6;
	warm = start + atof(argv[5]) * 1e6;
	if ((streams = calloc((size_t)n, sizeof(*streams))) == NULL ||
	    (ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		perror("sse-client");
		return 1;
	}
	if ((tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC)) < 0 ||
	    timerfd_settime(tfd, 0, &every, NULL) < 0) {
		perror("sse-client: timerfd");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ev.events = EPOLLIN;
	ev.data.ptr = NULL;
	epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
	for (i = 0; i < n; i++) {
		if (connect_stream(&streams[i], port, argv[2], argv[6 + i % (argc - 6)]) < 0) {
			perror("sse-client: connect");
			return 1;
		}
		ev.events = EPOLLIN;
		ev.data.ptr = &streams[i];
		epoll_ctl(ep, EPOLL_CTL_ADD, streams[i].fd, &ev);
		open_streams++;
	}
	while (now_us() < until && open_streams > 0) {
		int left = (int)((until - now_us()) / 1000) + 1;

		k = epoll_wait(ep, got, 64, left);
		if (k < 0 && errno == EINTR)
			continue;
		for (i = 0; i < k; i++) {
			struct stream *s = got[i].data.ptr;
			ssize_t r;

			if (s == NULL) {
				if (read(tfd, &fired, sizeof(fired)) != sizeof(fired))
					continue;
				clock_gettime(CLOCK_MONOTONIC, &tn);
				ticks += fired;
				if (now_us() < warm)
					continue;
				if (nwake == capwake) {
					capwake = capwake ? capwake * 2 : 4096;
					if ((wake = realloc(wake, capwake * sizeof(*wake))) == NULL) {
						perror("realloc");
						return 1;
					}
				}
				/* Now less when the first expiry it missed was due. */
				wake[nwake++] = ((tn.tv_sec - t0.tv_sec) * 1e3 + (tn.tv_nsec - t0.tv_nsec) / 1e6) -
				    (double)(ticks - fired + 1) * 10.0;
				continue;
			}
			r = read(s->fd, s->in + s->in_len, BUF - 1 - s->in_len);

			if (r > 0) {
				s->in_len += (size_t)r;
				if (take(s) == 0)
					continue;
			} else if (r < 0 && errno == EINTR) {
				continue;
			}
			epoll_ctl(ep, EPOLL_CTL_DEL, s->fd, NULL);
			close(s->fd);
			open_streams--;
		}
	}
	if ((steady = malloc((nlat + 1) * sizeof(*steady))) == NULL) {
		perror("sse-client");
		return 1;
	}
	for (j = 0; j < nlat; j++)
		if (lat_at[j] >= warm)
			steady[nsteady++] = lat[j];
	getrusage(RUSAGE_SELF, &ru);
	printf("streams %d open %ld events %ld transitions", n, open_streams, events);
	summary(lat, nlat);
	printf(" steady");
	summary(steady, nsteady);
	printf(" cpu %.0f wake", (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3);
	summary(wake, nwake);
	printf("\n");
	return 0;
}
