/*
 * cmd_run.c - the driver of every command but --version: start the Lua
 * side with the command line, drive the event loop until no work is left,
 * and return the exit status the command chose.
 *
 *	ray_cmd_run(argc, argv)
 *	    ray_host_start(h, "raymond.main", "main", argv as a list, cwd)
 *	    uv_run(loop)                 until no work is left
 *	    ray_host_finish(h, "raymond.main", "finish")
 *
 * Lua reads the command line (lua/raymond/cli.lua) and runs the command;
 * a run's agents keep the loop busy after main() has returned.
 */
#include "cli.h"
#include "lua_host.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

struct args {
	int argc;
	char **argv;
};

/* Push the arguments of main.lua's main(): argv as a list, and the cwd. */
static int
push_args(lua_State *L, void *ud)
{
	const struct args *a = ud;
	char cwd[PATH_MAX];
	int i;

	lua_createtable(L, a->argc, 0);
	for (i = 0; i < a->argc; i++) {
		lua_pushstring(L, a->argv[i]);
		lua_rawseti(L, -2, i + 1);
	}
	if (getcwd(cwd, sizeof(cwd)) != NULL)
		lua_pushstring(L, cwd);
	else
		lua_pushnil(L);
	return 2;
}

/*
 * Every running state holds two pipes, so a wide fan-out needs more
 * descriptors than the usual soft limit of 1024; take what we may.
 */
static void
raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/*
 * Started with stdin, stdout or stderr closed, raymond's next open would
 * take that number, and a state file or a child's pipe would then be
 * written where the terminal's output belongs.  /dev/null fills the gap.
 */
static void
fill_std_fds(void)
{
	int fd;

	while ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0 && fd <= 2)
		fcntl(fd, F_SETFD, 0);
	if (fd > 2)
		close(fd);
}

int
ray_cmd_run(int argc, char **argv)
{
	struct args a = { argc, argv };
	uv_loop_t *loop;
	struct ray_host *h = NULL;
	struct ray_err err;
	int code = 1;

	/* Before the loop opens its own descriptors. */
	fill_std_fds();
	loop = uv_default_loop();
	/* A child that dies with unread output must not kill us. */
	signal(SIGPIPE, SIG_IGN);
	raise_fd_limit();
	if (ray_host_open(loop, &h, &err) < 0 ||
	    ray_host_start(h, "raymond.main", "main", push_args, &a, &err) < 0) {
		fprintf(stderr, "raymond: internal error: %s\n", err.msg);
		goto out;
	}
	uv_run(loop, UV_RUN_DEFAULT);
	code = ray_host_finish(h, "raymond.main", "finish");
out:
	ray_host_close(h);
	return code;
}
