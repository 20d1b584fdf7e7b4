/*
 * cmd_run.c - run, resume, --list and --status: hand the options to the
 * engine (lua/raymond/main.lua), drive the event loop until no work is
 * left, and return the engine's exit status.
 */
#include "cli.h"
#include "lua_host.h"

#include <fcntl.h>
#include <lauxlib.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

static const char *command_names[] = {
	[RAY_CMD_RUN] = "run",
	[RAY_CMD_RESUME] = "resume",
	[RAY_CMD_LIST] = "list",
	[RAY_CMD_STATUS] = "status",
	[RAY_CMD_HELP] = "help",
	[RAY_CMD_VERSION] = "version",
};

static void
set_str(lua_State *L, const char *k, const char *v)
{
	if (v == NULL)
		return;
	lua_pushstring(L, v);
	lua_setfield(L, -2, k);
}

/* Push the options as the table main.lua reads; unset ones stay nil. */
static int
push_opts(lua_State *L, void *ud)
{
	const struct ray_opts *o = ud;
	char cwd[PATH_MAX];

	lua_createtable(L, 0, 12);
	set_str(L, "command", command_names[o->command]);
	set_str(L, "workflow", o->workflow);
	set_str(L, "input", o->input);
	set_str(L, "resume", o->resume);
	set_str(L, "status", o->status);
	set_str(L, "workflow_id", o->workflow_id);
	set_str(L, "model", o->model);
	set_str(L, "effort", o->effort);
	set_str(L, "claude", o->claude);
	if (o->budget >= 0) {
		lua_pushnumber(L, o->budget);
		lua_setfield(L, -2, "budget");
	}
	if (o->skip_permissions) {
		lua_pushboolean(L, 1);
		lua_setfield(L, -2, "skip_permissions");
	}
	if (o->json) {
		lua_pushboolean(L, 1);
		lua_setfield(L, -2, "json");
	}
	if (o->no_wait) {
		lua_pushboolean(L, 1);
		lua_setfield(L, -2, "no_wait");
	}
	if (o->no_default_hooks) {
		lua_pushboolean(L, 1);
		lua_setfield(L, -2, "no_default_hooks");
	}
	if (o->nhooks > 0) {
		int i;

		lua_createtable(L, o->nhooks, 0);
		for (i = 0; i < o->nhooks; i++) {
			lua_pushstring(L, o->hooks[i]);
			lua_rawseti(L, -2, i + 1);
		}
		lua_setfield(L, -2, "hooks");
	}
	if (getcwd(cwd, sizeof(cwd)) != NULL)
		set_str(L, "cwd", cwd);
	if (o->timeout >= 0) {
		lua_pushnumber(L, o->timeout);
		lua_setfield(L, -2, "timeout");
	}
	if (o->max_parallel >= 0) {
		lua_pushinteger(L, o->max_parallel);
		lua_setfield(L, -2, "max_parallel");
	}
	lua_pushboolean(L, o->quiet);
	lua_setfield(L, -2, "quiet");
	if (o->no_debug) {
		lua_pushboolean(L, 0);
		lua_setfield(L, -2, "debug");
	}
	return 1;
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
ray_cmd_run(const struct ray_opts *o)
{
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
	    ray_host_start(h, "raymond.main", "main", push_opts, (void *)o, &err) < 0) {
		fprintf(stderr, "raymond: internal error: %s\n", err.msg);
		goto out;
	}
	uv_run(loop, UV_RUN_DEFAULT);
	code = ray_host_finish(h, "raymond.main", "finish");
out:
	ray_host_close(h);
	return code;
}
