/*
 * lease.h - who drives a run: a lease in a file, safe on shared storage.
 *
 * `.raymond/` may live on NFS, where fcntl and flock locks do not work
 * across machines, or do not hold.  So a run is owned through a lease: a
 * small file naming the owner (host, pid, the pid's start time) and a
 * wall-clock expiry, which the owner renews while it lives (lua_lease.c
 * does it on a timer) and removes when it ends.
 *
 * Files beside the lease L (".raymond/state/<id>.lock"):
 *
 *	L                the lease: written whole (tmp, fsync, rename)
 *	L.claim.G.A      a claim on generation G of L, attempt A: made with
 *	                 link(2), which is exclusive on NFS too, by whoever
 *	                 is about to replace or remove L
 *	L.tmp.TOKEN.N    a file being written, renamed or linked from there
 *
 * Each write of L raises its generation G by one (no file: G is 0).  Only
 * the process holding a claim on generation G may write generation G+1 or
 * remove L, and it re-reads L under the claim first: so two contenders
 * that read the same L can never both replace it.
 *
 *	            take: nothing, or a lease that is not live
 *	  (no L) ──────────────────────────────────────────────┐
 *	    ▲                                                  ▼
 *	    │ release: claim G, L still ours?          claim L.claim.G.A ──busy──> wait, read L again
 *	    │ remove L, drop claims                            │ (link: one winner)
 *	    │                                                  ▼
 *	  OWNED (gen G) <── renew: claim G, L still ours? ── re-read L: same G and token, still
 *	    │                write G+1 with a new expiry       not live?  no ──> drop claim, read again
 *	    │                                                  │ yes
 *	    │ L found with another token at renewal            ▼
 *	    ▼ (the lease expired and was taken)          write G+1 (ours), read back: ours?
 *	  LOST: the owner stops at once                        │ yes: drop claims ──> OWNED
 *
 * A lease is live while its expiry has not passed, unless its host is this
 * host and its pid is gone or is another process (another start time):
 * that owner was killed, and the run can be taken at once.  Another
 * host's lease is live until it expires; it is never taken before.
 *
 * A claim whose maker is gone (this host, dead pid), that cannot be read,
 * or older than the lease's length is stale: the next attempt number is
 * claimed instead, so a process killed while it held a claim never blocks
 * the run.  A contender holds a claim for milliseconds, and gives it up
 * unwritten when it held it for half the lease's length, before anyone
 * may call it stale.
 *
 * Hosts' clocks must agree to well within the lease's length (NTP).  An
 * owner stopped for longer than its lease (SIGSTOP, a suspended machine)
 * or whose clock jumps can lose its lease; it finds out at its next
 * renewal and stops.
 *
 * The host's name is gethostname(), or RAYMOND_HOST when set: a test seam
 * with which one machine plays two.  RAYMOND_LEASE_SECONDS sets the
 * lease's length (default 30; renewed every third of it).
 */
#ifndef RAY_LEASE_H
#define RAY_LEASE_H

#include "ray.h"

#define RAY_LEASE_HOST_MAX 256
#define RAY_LEASE_SECONDS 30.0

/* Who we are. */
struct ray_lease_self {
	char host[RAY_LEASE_HOST_MAX];
	long pid;
	unsigned long long start;	/* the pid's start time (proc.h) */
};

/* One lease as read from its file, or one claim (expires: its time). */
struct ray_lease {
	char host[RAY_LEASE_HOST_MAX];
	long pid;
	unsigned long long start;
	double expires;		/* wall clock, seconds since the epoch */
	unsigned long long gen;
	char token[33];		/* random, fresh at each take */
};

/*
 * This process: RAYMOND_HOST or the host's name, getpid() and its start
 * time.  Fails when RAYMOND_HOST is not a host name (letters, digits, '.',
 * '_' or '-', up to 255).
 */
int ray_lease_self(struct ray_lease_self *self, struct ray_err *err);

/* RAYMOND_LEASE_SECONDS when it is a number from 1 to 86400, else 30. */
double ray_lease_seconds(void);

/* The wall clock, in seconds. */
double ray_lease_now(void);

/*
 * Read the lease at `path`: 1 and `out` filled; 0 when there is none (no
 * file, or one that is no lease, which is taken as none); <0 when `path`
 * cannot be read or is not a regular file.  Never waits (a FIFO is
 * refused, not opened for a writer).
 */
int ray_lease_read(const char *path, struct ray_lease *out,
    struct ray_err *err);

/* Whether lease `l` holds the run at `now` as `self` sees it (above). */
int ray_lease_live(const struct ray_lease *l,
    const struct ray_lease_self *self, double now);

/*
 * Take the lease at `path` for `seconds`: 1 with `mine` filled; 0 when a
 * live lease (or a claim, a take under way) is there, with `holder` filled
 * from it; <0 on an I/O error.
 */
int ray_lease_take(const char *path, const struct ray_lease_self *self,
    double seconds, struct ray_lease *mine, struct ray_lease *holder,
    struct ray_err *err);

/*
 * Renew lease `mine` for `seconds` from now: 1 renewed (`mine` updated);
 * 0 lost: the file is gone or holds another lease (`holder`, pid 0 when
 * there is none); <0 not done this time (I/O error, a claim held by
 * another: try again).
 */
int ray_lease_renew(const char *path, const struct ray_lease_self *self,
    double seconds, struct ray_lease *mine, struct ray_lease *holder,
    struct ray_err *err);

/*
 * Give lease `mine` up: its file is removed if it is still ours.  1 when
 * removed, 0 when it was not ours any more, <0 on an error.
 */
int ray_lease_release(const char *path, const struct ray_lease_self *self,
    double seconds, const struct ray_lease *mine, struct ray_err *err);

#endif
