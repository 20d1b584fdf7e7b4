/*
 * test_lease.c - the run's lease (lease.c): taking, expiry, renewal,
 * loss, release, a killed owner on this host, another host's lease, stale
 * claims, and many processes taking one lease at once, of which exactly
 * one wins.
 */
#include "lease.h"
#include "proc.h"
#include "ray.h"
#include "testlib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char dir[64];
static char path[128];
static int round_no;

/* A fresh lease path for each test. */
static void
fresh(void)
{
	snprintf(path, sizeof(path), "%s/run%d.lock", dir, ++round_no);
}

/* This process, as host `host`. */
static struct ray_lease_self
as(const char *host)
{
	struct ray_lease_self s;
	struct ray_proc_info info;

	memset(&s, 0, sizeof(s));
	snprintf(s.host, sizeof(s.host), "%s", host);
	s.pid = getpid();
	if (ray_proc_info((int)s.pid, &info) == 0)
		s.start = info.start;
	return s;
}

/* Write a lease by hand. */
static void
plant(const char *p, const char *host, long pid, double expires)
{
	FILE *f = fopen(p, "w");

	fprintf(f, "raymond lease\nhost %s\npid %ld\nstart 0\nexpires %.3f\n"
	    "gen 7\ntoken 0123456789abcdef0123456789abcdef\n", host, pid,
	    expires);
	fclose(f);
}

/* Write claim A of generation 0 by hand, made at `made`. */
static void
plant_claim(int a, const char *host, long pid, double made)
{
	char claim[256];
	FILE *f;

	snprintf(claim, sizeof(claim), "%s.claim.0.%d", path, a);
	f = fopen(claim, "w");
	fprintf(f, "raymond claim\nhost %s\npid %ld\nstart 0\nexpires %.3f\n"
	    "gen 0\ntoken 0123456789abcdef0123456789abcdef\n", host, pid, made);
	fclose(f);
}

/* The pid of a process that has ended (and was waited for). */
static long
dead_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

/* Count the files of `path` (the lease and its claims and tmps). */
static int
leftovers(void)
{
	char cmd[256];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -a '%s' | grep -c '^%s\\.'", dir,
	    strrchr(path, '/') + 1);
	if ((p = popen(cmd, "r")) != NULL) {
		if (fscanf(p, "%d", &n) != 1)
			n = -1;
		pclose(p);
	}
	return n;
}

TEST(take_write_read)
{
	struct ray_lease_self a = as("alpha");
	struct ray_lease mine, holder, got;
	struct ray_err err;

	fresh();
	ASSERT_EQ(ray_lease_take(path, &a, 30, &mine, &holder, &err), 1);
	ASSERT_EQ(ray_lease_read(path, &got, &err), 1);
	ASSERT_STREQ(got.host, "alpha");
	ASSERT_EQ(got.pid, getpid());
	ASSERT_EQ(got.start, a.start);
	ASSERT_STREQ(got.token, mine.token);
	ASSERT(got.expires > ray_lease_now() + 25);
	ASSERT(ray_lease_live(&got, &a, ray_lease_now()));
	/* Held, by this very process too: a second take is refused. */
	ASSERT_EQ(ray_lease_take(path, &a, 30, &got, &holder, &err), 0);
	ASSERT_EQ(leftovers(), 0);
}

TEST(other_host_refused_until_expiry)
{
	struct ray_lease_self a = as("alpha"), b = as("beta");
	struct ray_lease mine, theirs, holder;
	struct ray_err err;

	fresh();
	ASSERT_EQ(ray_lease_take(path, &a, 1, &mine, &holder, &err), 1);
	ASSERT_EQ(ray_lease_take(path, &b, 30, &theirs, &holder, &err), 0);
	ASSERT_STREQ(holder.host, "alpha");
	ASSERT_EQ(holder.pid, getpid());
	ASSERT(holder.expires > mine.expires - 0.01 &&
	    holder.expires < mine.expires + 0.01);
	/* Not renewed: once its second has passed, beta takes it. */
	while (ray_lease_now() <= mine.expires + 0.01) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	ASSERT_EQ(ray_lease_take(path, &b, 30, &theirs, &holder, &err), 1);
	/* alpha finds out at its renewal, and learns who has it. */
	ASSERT_EQ(ray_lease_renew(path, &a, 30, &mine, &holder, &err), 0);
	ASSERT_STREQ(holder.host, "beta");
	/* alpha's release leaves beta's lease alone. */
	ASSERT_EQ(ray_lease_release(path, &a, 30, &mine, &err), 0);
	ASSERT_EQ(ray_lease_read(path, &holder, &err), 1);
	ASSERT_STREQ(holder.token, theirs.token);
	ASSERT_EQ(ray_lease_release(path, &b, 30, &theirs, &err), 1);
	ASSERT_EQ(ray_lease_read(path, &holder, &err), 0);
	ASSERT_EQ(leftovers(), 0);
}

TEST(renewal_moves_expiry_and_keeps_others_out)
{
	struct ray_lease_self a = as("alpha"), b = as("beta");
	struct ray_lease mine, before, holder, got;
	struct ray_err err;
	int i;

	fresh();
	ASSERT_EQ(ray_lease_take(path, &a, 2, &mine, &holder, &err), 1);
	/* Renewed past its first expiry: never takeable. */
	for (i = 0; i < 3; i++) {
		struct timespec ts = { 1, 0 };

		before = mine;
		ASSERT_EQ(ray_lease_renew(path, &a, 2, &mine, &holder, &err), 1);
		ASSERT(mine.expires > before.expires);
		ASSERT_EQ(mine.gen, before.gen + 1);
		ASSERT_STREQ(mine.token, before.token);
		ASSERT_EQ(ray_lease_take(path, &b, 2, &got, &holder, &err), 0);
		ASSERT_STREQ(holder.host, "alpha");
		nanosleep(&ts, NULL);
	}
	ASSERT_EQ(ray_lease_release(path, &a, 2, &mine, &err), 1);
	ASSERT_EQ(ray_lease_take(path, &b, 2, &got, &holder, &err), 1);
}

TEST(same_host_dead_pid_taken_at_once)
{
	struct ray_lease_self a = as("alpha");
	struct ray_lease mine, holder;
	struct ray_err err;

	fresh();
	plant(path, "alpha", dead_pid(), ray_lease_now() + 600);
	ASSERT_EQ(ray_lease_take(path, &a, 30, &mine, &holder, &err), 1);
	ASSERT_EQ(mine.gen, 8);
}

TEST(same_host_other_start_time_taken_at_once)
{
	struct ray_lease_self a = as("alpha");
	struct ray_lease mine, holder;
	struct ray_err err;
	FILE *f;

	fresh();
	/* Our own pid, but another process's start: the pid was reused. */
	f = fopen(path, "w");
	fprintf(f, "raymond lease\nhost alpha\npid %ld\nstart %llu\n"
	    "expires %.3f\ngen 3\ntoken %s\n", (long)getpid(), a.start + 1,
	    ray_lease_now() + 600, "00000000000000000000000000000000");
	fclose(f);
	ASSERT_EQ(ray_lease_take(path, &a, 30, &mine, &holder, &err), 1);
}

TEST(other_host_dead_pid_still_waits_for_expiry)
{
	struct ray_lease_self b = as("beta");
	struct ray_lease mine, holder;
	struct ray_err err;

	fresh();
	/* A pid of another host says nothing here. */
	plant(path, "alpha", dead_pid(), ray_lease_now() + 600);
	ASSERT_EQ(ray_lease_take(path, &b, 30, &mine, &holder, &err), 0);
	ASSERT_STREQ(holder.host, "alpha");
	plant(path, "alpha", getpid(), ray_lease_now() - 1);
	ASSERT_EQ(ray_lease_take(path, &b, 30, &mine, &holder, &err), 1);
}

TEST(removed_lease_is_lost)
{
	struct ray_lease_self a = as("alpha");
	struct ray_lease mine, holder;
	struct ray_err err;

	fresh();
	ASSERT_EQ(ray_lease_take(path, &a, 30, &mine, &holder, &err), 1);
	unlink(path);
	ASSERT_EQ(ray_lease_renew(path, &a, 30, &mine, &holder, &err), 0);
	ASSERT_EQ(holder.pid, 0);
}

TEST(stale_claims_do_not_block)
{
	struct ray_lease_self a = as("alpha");
	struct ray_lease mine, holder;
	struct ray_err err;

	fresh();
	/* A killed taker of this host, and one of another host long ago. */
	plant_claim(0, "alpha", dead_pid(), ray_lease_now());
	plant_claim(1, "gamma", 1, ray_lease_now() - 60);
	ASSERT_EQ(ray_lease_take(path, &a, 30, &mine, &holder, &err), 1);
	ASSERT_EQ(ray_lease_release(path, &a, 30, &mine, &err), 1);
	ASSERT_EQ(leftovers(), 0);
}

TEST(live_claim_of_another_host_refuses)
{
	struct ray_lease_self a = as("alpha");
	struct ray_lease mine, holder;
	struct ray_err err;

	fresh();
	/* gamma is taking the run right now (and takes its time). */
	plant_claim(0, "gamma", 1, ray_lease_now());
	ASSERT_EQ(ray_lease_take(path, &a, 30, &mine, &holder, &err), 0);
	ASSERT_STREQ(holder.host, "gamma");
	ASSERT_EQ(ray_lease_read(path, &holder, &err), 0);
}

TEST(not_a_regular_file)
{
	struct ray_lease_self a = as("alpha");
	struct ray_lease mine, holder;
	struct ray_err err;

	fresh();
	ASSERT_EQ(mkfifo(path, 0600), 0);
	ASSERT(ray_lease_read(path, &holder, &err) < 0);
	ASSERT(strstr(err.msg, "not a regular file") != NULL);
	ASSERT(ray_lease_take(path, &a, 30, &mine, &holder, &err) < 0);
}

TEST(host_from_environment)
{
	struct ray_lease_self s;
	struct ray_err err;

	setenv("RAYMOND_HOST", "node-7.cluster", 1);
	ASSERT_EQ(ray_lease_self(&s, &err), 0);
	ASSERT_STREQ(s.host, "node-7.cluster");
	ASSERT_EQ(s.pid, getpid());
	setenv("RAYMOND_HOST", "bad host", 1);
	ASSERT(ray_lease_self(&s, &err) < 0);
	ASSERT(strstr(err.msg, "RAYMOND_HOST") != NULL);
	unsetenv("RAYMOND_HOST");
	ASSERT_EQ(ray_lease_self(&s, &err), 0);
	ASSERT(s.host[0] != '\0');
	setenv("RAYMOND_LEASE_SECONDS", "2", 1);
	ASSERT(ray_lease_seconds() == 2);
	setenv("RAYMOND_LEASE_SECONDS", "soon", 1);
	ASSERT(ray_lease_seconds() == 30);
	unsetenv("RAYMOND_LEASE_SECONDS");
}

/*
 * `n` processes, each its own host, take the lease at `path` at the same
 * moment (they wait on a pipe the parent closes): the number that won.
 */
static int
contend(int n)
{
	int go[2], i, status, won = 0;
	pid_t pids[64];

	if (pipe(go) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if ((pids[i] = fork()) == 0) {
			char host[32], c;
			struct ray_lease_self s;
			struct ray_lease mine, holder;
			struct ray_err err;
			int r;

			close(go[1]);
			snprintf(host, sizeof(host), "host%d", i);
			s = as(host);
			(void)!read(go[0], &c, 1);
			r = ray_lease_take(path, &s, 30, &mine, &holder, &err);
			if (r < 0)
				fprintf(stderr, "contender %d: %s\n", i, err.msg);
			_exit(r == 1 ? 1 : r == 0 ? 0 : 2);
		}
	}
	close(go[0]);
	close(go[1]);
	for (i = 0; i < n; i++) {
		waitpid(pids[i], &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status) == 2)
			return -1;
		won += WEXITSTATUS(status);
	}
	return won;
}

TEST(many_contenders_one_winner)
{
	struct ray_lease got;
	struct ray_err err;
	int round;

	for (round = 0; round < 10; round++) {
		/* No lease at all. */
		fresh();
		ASSERT_EQ(contend(16), 1);
		ASSERT_EQ(ray_lease_read(path, &got, &err), 1);
		ASSERT(strncmp(got.host, "host", 4) == 0);
		/* An expired lease, which all of them see as takeable. */
		fresh();
		plant(path, "gone", 1, ray_lease_now() - 5);
		ASSERT_EQ(contend(16), 1);
		ASSERT_EQ(ray_lease_read(path, &got, &err), 1);
		ASSERT(strncmp(got.host, "host", 4) == 0);
		ASSERT_EQ(got.gen, 8);
	}
}

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/raymond-lease-XXXXXX");
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		exit(1);
	}
	unsetenv("RAYMOND_HOST");
}

static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	(void)!system(cmd);
}

int
main(void)
{
	static const struct t_case cases[] = {
		T_CASE(take_write_read),
		T_CASE(other_host_refused_until_expiry),
		T_CASE(renewal_moves_expiry_and_keeps_others_out),
		T_CASE(same_host_dead_pid_taken_at_once),
		T_CASE(same_host_other_start_time_taken_at_once),
		T_CASE(other_host_dead_pid_still_waits_for_expiry),
		T_CASE(removed_lease_is_lost),
		T_CASE(stale_claims_do_not_block),
		T_CASE(live_claim_of_another_host_refuses),
		T_CASE(not_a_regular_file),
		T_CASE(host_from_environment),
		T_CASE(many_contenders_one_winner),
	};
	int rc;

	setup();
	rc = t_run(cases, sizeof(cases) / sizeof(cases[0]));
	teardown();
	return rc;
}
