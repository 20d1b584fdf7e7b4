/*
 * lease.c - the run's lease and its claims (the protocol is in lease.h).
 */
#include "lease.h"
#include "atomicfile.h"
#include "proc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Attempt numbers on one generation before giving up on stale claims. */
#define MAX_ATTEMPTS 64
/* Reads of the lease while another holds a claim: about five seconds. */
#define MAX_TRIES 400
/* A lease or claim file is far smaller than this. */
#define FILE_MAX 2048
/* The longest lease path: room is left for the suffixes of its files. */
#define PATH_ROOM 3800
/* A leftover ".tmp." file older than this is a killed writer's. */
#define TMP_STALE 60.0

double
ray_lease_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double
mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
valid_host(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n >= RAY_LEASE_HOST_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && strchr("._-", s[i]) == NULL)
			return 0;
	return 1;
}

int
ray_lease_self(struct ray_lease_self *self, struct ray_err *err)
{
	const char *env = getenv("RAYMOND_HOST");
	struct ray_proc_info info;
	size_t i;

	memset(self, 0, sizeof(*self));
	if (env != NULL && env[0] != '\0') {
		if (!valid_host(env))
			return ray_err_set(err, RAY_EINVAL, "RAYMOND_HOST "
			    "'%.64s' is not a host name: use 1 to 255 letters, "
			    "digits, '.', '_' or '-'", env);
		strcpy(self->host, env);
	} else {
		if (gethostname(self->host, sizeof(self->host) - 1) != 0 ||
		    self->host[0] == '\0')
			strcpy(self->host, "localhost");
		/* The lease file is parsed by words: keep the name one word. */
		for (i = 0; self->host[i] != '\0'; i++)
			if (!isalnum((unsigned char)self->host[i]) &&
			    strchr("._-", self->host[i]) == NULL)
				self->host[i] = '_';
	}
	self->pid = (long)getpid();
	if (ray_proc_info((int)self->pid, &info) == 0)
		self->start = info.start;
	return 0;
}

double
ray_lease_seconds(void)
{
	const char *s = getenv("RAYMOND_LEASE_SECONDS");
	char *end;
	double v;

	if (s == NULL || s[0] == '\0')
		return RAY_LEASE_SECONDS;
	v = strtod(s, &end);
	if (*end != '\0' || !(v >= 1 && v <= 86400))
		return RAY_LEASE_SECONDS;
	return v;
}

/* 32 hex digits, random. */
static void
new_token(char out[33])
{
	unsigned char b[16];
	size_t i;

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b)) {
		unsigned long long x = (unsigned long long)getpid() ^
		    (unsigned long long)(mono() * 1e9);

		for (i = 0; i < sizeof(b); i++, x = x * 6364136223846793005ULL + 1)
			b[i] = (unsigned char)(x >> 33);
	}
	for (i = 0; i < sizeof(b); i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

static int
alive(long pid, unsigned long long start)
{
	struct ray_proc_info info;

	if (pid <= 0 || ray_proc_info((int)pid, &info) < 0)
		return 0;
	if (info.state == 'Z' || info.state == 'X')
		return 0;
	return start == 0 || info.start == start;
}

int
ray_lease_live(const struct ray_lease *l, const struct ray_lease_self *self,
    double now)
{
	if (l->expires <= now)
		return 0;
	if (strcmp(l->host, self->host) == 0 && !alive(l->pid, l->start))
		return 0;
	return 1;
}

static void
format(char *buf, size_t n, const char *kind, const struct ray_lease *l)
{
	snprintf(buf, n, "raymond %s\nhost %s\npid %ld\nstart %llu\n"
	    "expires %.3f\ngen %llu\ntoken %s\n", kind, l->host, l->pid,
	    l->start, l->expires, l->gen, l->token);
}

/* 1 when `text` is a whole record of `kind`, with `out` filled. */
static int
parse(char *text, const char *kind, struct ray_lease *out)
{
	char *line, *save = NULL, *sp;
	int seen = 0, first = 1;

	memset(out, 0, sizeof(*out));
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save), first = 0) {
		if (first) {
			if (strncmp(line, "raymond ", 8) != 0 ||
			    strcmp(line + 8, kind) != 0)
				return 0;
			continue;
		}
		if ((sp = strchr(line, ' ')) == NULL)
			continue;
		*sp++ = '\0';
		if (strcmp(line, "host") == 0 && valid_host(sp)) {
			strcpy(out->host, sp);
			seen |= 1;
		} else if (strcmp(line, "pid") == 0) {
			out->pid = strtol(sp, NULL, 10);
			seen |= 2;
		} else if (strcmp(line, "start") == 0) {
			out->start = strtoull(sp, NULL, 10);
		} else if (strcmp(line, "expires") == 0) {
			out->expires = strtod(sp, NULL);
			seen |= 4;
		} else if (strcmp(line, "gen") == 0) {
			out->gen = strtoull(sp, NULL, 10);
		} else if (strcmp(line, "token") == 0 &&
		    strlen(sp) < sizeof(out->token)) {
			strcpy(out->token, sp);
			seen |= 8;
		}
	}
	return seen == 15;
}

/* ray_lease_read for records of `kind` ("lease" or "claim"). */
static int
read_record(const char *path, const char *kind, struct ray_lease *out,
    struct ray_err *err)
{
	char text[FILE_MAX];
	struct stat st;
	ssize_t n;
	int fd, rc = 0, saved;

	memset(out, 0, sizeof(*out));
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return ray_err_open(err, strcmp(kind, "lease") == 0 ? "lock" :
		    "lock claim", path);
	}
	if (fstat(fd, &st) < 0) {
		rc = ray_err_sys(err, "cannot read '%s'", path);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = ray_err_set(err, RAY_EINVAL, "'%s' is not a regular file, "
		    "and raymond keeps its locks only in regular files", path);
		goto out;
	}
	n = pread(fd, text, sizeof(text) - 1, 0);
	if (n < 0) {
		rc = ray_err_sys(err, "cannot read '%s'", path);
		goto out;
	}
	text[n] = '\0';
	rc = parse(text, kind, out);
out:
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

int
ray_lease_read(const char *path, struct ray_lease *out, struct ray_err *err)
{
	return read_record(path, "lease", out, err);
}

/*
 * Write `l` as a record of `kind` to a fresh "PATH.tmp.TOKEN.N", synced;
 * its name goes to `tmp`.
 */
static int
write_tmp(const char *path, const char *kind, const struct ray_lease *l,
    char *tmp, size_t tmpsize, struct ray_err *err)
{
	/* Per thread: the renewal's thread writes beside the main one. */
	static _Thread_local char token[33];
	static _Thread_local unsigned seq;
	static _Thread_local pid_t made_by;
	char text[FILE_MAX];
	int fd, rc = 0;

	/* A forked child must not pick its parent's names. */
	if (made_by != getpid()) {
		new_token(token);
		seq = 0;
		made_by = getpid();
	}
	snprintf(tmp, tmpsize, "%s.tmp.%s.%u", path, token, seq++);
	format(text, sizeof(text), kind, l);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0644);
	if (fd < 0)
		return ray_err_open(err, kind, tmp);
	if (ray_write_all(fd, text, strlen(text)) < 0 ||
	    (ray_atomicfile_sync() && fsync(fd) < 0))
		rc = ray_err_sys(err, "cannot write '%s'", tmp);
	if (close(fd) < 0 && rc == 0)
		rc = ray_err_sys(err, "cannot write '%s'", tmp);
	if (rc < 0)
		unlink(tmp);
	return rc;
}

static void
claim_path(char *buf, size_t n, const char *path, unsigned long long gen,
    int attempt)
{
	snprintf(buf, n, "%s.claim.%llu.%d", path, gen, attempt);
}

/*
 * Claim generation `gen` of the lease at `path`: 1 with the attempt
 * number in `*attempt`; 0 when a live claim is there (`holder` filled,
 * its expires: when it turns stale); <0 on an error.
 */
static int
claim(const char *path, unsigned long long gen,
    const struct ray_lease_self *self, double seconds, int *attempt,
    struct ray_lease *holder, struct ray_err *err)
{
	char tmp[4096], name[4096];
	struct ray_lease mine, other;
	struct stat st;
	int a, linked, e, r;
	double now;

	memset(&mine, 0, sizeof(mine));
	strcpy(mine.host, self->host);
	mine.pid = self->pid;
	mine.start = self->start;
	mine.gen = gen;
	new_token(mine.token);
	for (a = 0; a < MAX_ATTEMPTS; a++) {
		claim_path(name, sizeof(name), path, gen, a);
		mine.expires = ray_lease_now();
		if ((r = write_tmp(path, "claim", &mine, tmp, sizeof(tmp),
		    err)) < 0)
			return r;
		/*
		 * link(2) fails if the name exists, on NFS too; a reply lost
		 * and the call sent again says EEXIST for a link that was
		 * made, which the link count of our own file tells.
		 */
		linked = link(tmp, name) == 0;
		e = errno;
		if (!linked && stat(tmp, &st) == 0 && st.st_nlink == 2)
			linked = 1;
		unlink(tmp);
		if (linked) {
			*attempt = a;
			return 1;
		}
		if (e != EEXIST) {
			errno = e;
			return ray_err_sys(err, "cannot claim the lease '%s' "
			    "(link to '%s')", path, name);
		}
		if ((r = read_record(name, "claim", &other, err)) < 0)
			return r;
		now = ray_lease_now();
		if (r == 0 || other.expires + seconds <= now ||
		    (strcmp(other.host, self->host) == 0 &&
		    !alive(other.pid, other.start)))
			continue;
		*holder = other;
		holder->expires = other.expires + seconds;
		return 0;
	}
	return ray_err_set(err, RAY_EIO, "%d stale claims on the lease '%s': "
	    "remove its .claim. files by hand", MAX_ATTEMPTS, path);
}

/* Remove the claims of generation `gen`, attempts 0 to `attempt`. */
static void
unclaim(const char *path, unsigned long long gen, int attempt)
{
	char name[4096];
	int a;

	for (a = 0; a <= attempt; a++) {
		claim_path(name, sizeof(name), path, gen, a);
		unlink(name);
	}
}

/*
 * Remove the claims of generations lo to hi-1, and ".tmp." files a
 * killed writer left: what a crash in the middle of a take leaves.
 */
static void
sweep(const char *path, unsigned long long lo, unsigned long long hi)
{
	const char *slash = strrchr(path, '/');
	char dir[4096], claims[512], tmps[512];
	unsigned long long gen;
	struct dirent *d;
	struct stat st;
	DIR *dp;
	double now = ray_lease_now();

	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	snprintf(claims, sizeof(claims), "%s.claim.", slash ? slash + 1 : path);
	snprintf(tmps, sizeof(tmps), "%s.tmp.", slash ? slash + 1 : path);
	if ((dp = opendir(dir)) == NULL)
		return;
	while ((d = readdir(dp)) != NULL) {
		if (strncmp(d->d_name, claims, strlen(claims)) == 0) {
			gen = strtoull(d->d_name + strlen(claims), NULL, 10);
			if (gen >= lo && gen < hi)
				unlinkat(dirfd(dp), d->d_name, 0);
		} else if (strncmp(d->d_name, tmps, strlen(tmps)) == 0 &&
		    fstatat(dirfd(dp), d->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) == 0 &&
		    (double)st.st_mtime + TMP_STALE < now) {
			unlinkat(dirfd(dp), d->d_name, 0);
		}
	}
	closedir(dp);
}

/* Write lease `l` over `path` whole: tmp, fsync, rename, fsync the folder. */
static int
write_lease(const char *path, const struct ray_lease *l, struct ray_err *err)
{
	char tmp[4096];
	int r;

	if ((r = write_tmp(path, "lease", l, tmp, sizeof(tmp), err)) < 0)
		return r;
	if (rename(tmp, path) < 0) {
		r = ray_err_sys(err, "cannot rename '%s' to '%s'", tmp, path);
		unlink(tmp);
		return r;
	}
	return ray_atomicfile_sync_dir(path, "writing", err);
}

/* A short pause, different in each process, before reading again. */
static void
pause_a_little(int tries)
{
	struct timespec ts = { 0, (long)(5 + (getpid() + tries) % 15) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The same lease: same generation and token, or both none. */
static int
same(int had, const struct ray_lease *a, int has, const struct ray_lease *b)
{
	if (had != has)
		return 0;
	return !had || (a->gen == b->gen && strcmp(a->token, b->token) == 0);
}

enum mode { TAKE, RENEW, DROP };

/*
 * Whether `mode` may act on the lease read (`had`: there is one): a take
 * on none or one that is not live, a renewal or release on our own.
 */
static int
may_act(enum mode mode, int had, const struct ray_lease *cur,
    const struct ray_lease *mine, const struct ray_lease_self *self)
{
	if (mode == TAKE)
		return !had || !ray_lease_live(cur, self, ray_lease_now());
	return had && strcmp(cur->token, mine->token) == 0;
}

/*
 * The write itself, under the claim on `cur`'s generation: 1 done, 0 to
 * be tried again, <0 an error.
 */
static int
apply(const char *path, const struct ray_lease_self *self, double seconds,
    enum mode mode, const struct ray_lease *cur, struct ray_lease *mine,
    double claimed_at, struct ray_err *err)
{
	struct ray_lease next, back;
	int r;

	if (mode == DROP) {
		if (unlink(path) < 0 && errno != ENOENT)
			return ray_err_sys(err, "cannot remove '%s'", path);
		return 1;
	}
	if (mode == TAKE) {
		memset(&next, 0, sizeof(next));
		strcpy(next.host, self->host);
		next.pid = self->pid;
		next.start = self->start;
		new_token(next.token);
	} else {
		next = *mine;
	}
	next.gen = cur->gen + 1;
	next.expires = ray_lease_now() + seconds;
	/* Held this long, the claim may be called stale: start again. */
	if (mono() - claimed_at > seconds / 2)
		return 0;
	if ((r = write_lease(path, &next, err)) < 0)
		return r;
	if ((r = ray_lease_read(path, &back, err)) < 0)
		return r;
	if (r == 0 || !same(1, &back, 1, &next))
		return 0;
	*mine = next;
	return 1;
}

/*
 * Take, renew or release the lease at `path` (lease.h): read it, claim
 * its generation, read it again under the claim, act.
 */
static int
act(const char *path, const struct ray_lease_self *self, double seconds,
    enum mode mode, struct ray_lease *mine, struct ray_lease *holder,
    struct ray_err *err)
{
	struct ray_lease cur, again;
	int tries, r, r2, c, attempt;
	double t0;

	memset(holder, 0, sizeof(*holder));
	if (strlen(path) > PATH_ROOM)
		return ray_err_set(err, RAY_EINVAL, "the lease path '%.64s...' "
		    "is too long", path);
	for (tries = 0; tries < MAX_TRIES; tries++) {
		if ((r = ray_lease_read(path, &cur, err)) < 0)
			return r;
		if (!may_act(mode, r, &cur, mine, self)) {
			if (r == 1)
				*holder = cur;
			return 0;
		}
		c = claim(path, cur.gen, self, seconds, &attempt, holder, err);
		if (c < 0)
			return c;
		if (c == 0) {
			pause_a_little(tries);
			continue;
		}
		t0 = mono();
		/* Under the claim: is it still the lease we judged? */
		r2 = ray_lease_read(path, &again, err);
		if (r2 < 0 || !same(r, &cur, r2, &again) ||
		    !may_act(mode, r2, &again, mine, self)) {
			unclaim(path, cur.gen, attempt);
			if (r2 < 0)
				return r2;
			continue;
		}
		r = apply(path, self, seconds, mode, &cur, mine, t0, err);
		unclaim(path, cur.gen, attempt);
		if (r < 0)
			return r;
		if (r == 0)
			continue;
		if (mode == TAKE)
			sweep(path, 0, cur.gen);
		else if (mode == DROP)
			sweep(path, 1, cur.gen);
		return 1;
	}
	if (mode == TAKE)
		return 0;
	return ray_err_set(err, RAY_ELOCKED, "the lease '%s' stayed claimed by "
	    "%s pid %ld", path, holder->host, holder->pid);
}

int
ray_lease_take(const char *path, const struct ray_lease_self *self,
    double seconds, struct ray_lease *mine, struct ray_lease *holder,
    struct ray_err *err)
{
	memset(mine, 0, sizeof(*mine));
	return act(path, self, seconds, TAKE, mine, holder, err);
}

int
ray_lease_renew(const char *path, const struct ray_lease_self *self,
    double seconds, struct ray_lease *mine, struct ray_lease *holder,
    struct ray_err *err)
{
	return act(path, self, seconds, RENEW, mine, holder, err);
}

int
ray_lease_release(const char *path, const struct ray_lease_self *self,
    double seconds, const struct ray_lease *mine, struct ray_err *err)
{
	struct ray_lease copy = *mine, holder;

	return act(path, self, seconds, DROP, &copy, &holder, err);
}
