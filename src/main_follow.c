/*
 * main_follow.c - raymond-launch-follow, the follower of a cluster job
 * (cmd_follow.c) as a program of its own, linked with libc alone.
 *
 *	raymond-launch-follow DIR --name JOB ...   as raymond launch-follow
 *	raymond-launch-follow --version
 *
 * raymond's launchers start one follower per cluster job.  The raymond
 * binary links Lua, libuv, libyaml, libzip, libmicrohttpd and what they
 * pull in, 22 libraries whose loading costs 4 to 5 ms of every start
 * (bench/README.md, "Launchers"); this one starts in about 1 ms.  The
 * launchers use it when it is installed beside the raymond binary and
 * `raymond launch-follow` otherwise (lua/raymond/launchers/spool.lua), so
 * a lone copy of raymond still works, only with slower launches.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

int
main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("raymond-launch-follow %s\n", RAY_VERSION);
		return 0;
	}
	return ray_cmd_follow(argc - 1, argv + 1);
}
