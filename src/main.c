/*
 * main.c - the raymond command.
 *
 * `raymond --version` and `raymond version` are answered here, without
 * starting Lua, so they stay instant, and `raymond hook-bridge`, which runs
 * for every tool call of a turn with tool hooks, goes to cmd_bridge.c, and
 * `raymond launch-follow`, the follower of a cluster job, to cmd_follow.c;
 * every other command line goes to the Lua side through cmd_run.c, which
 * reads it (lua/raymond/cli.lua).
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

int
main(int argc, char **argv)
{
	/* As before, --version first ends the reading: what follows is ignored. */
	if ((argc >= 2 && strcmp(argv[1], "--version") == 0) ||
	    (argc == 2 && strcmp(argv[1], "version") == 0)) {
		printf("raymond %s\n", RAY_VERSION);
		return 0;
	}
	if (argc >= 2 && strcmp(argv[1], "hook-bridge") == 0)
		return ray_cmd_bridge(argc - 2, argv + 2);
	if (argc >= 2 && strcmp(argv[1], "launch-follow") == 0)
		return ray_cmd_follow(argc - 2, argv + 2);
	return ray_cmd_run(argc - 1, argv + 1);
}
