/*
 * cli.h - the way from the command line into raymond.
 *
 *	main(argc, argv)
 *	    -> ray_cmd_bridge(argc - 2, argv + 2)  raymond hook-bridge ...
 *	    -> ray_cmd_follow(argc - 2, argv + 2)  raymond launch-follow ...
 *	    -> ray_cmd_run(argc - 1, argv + 1)    every command but --version
 *	        -> raymond.main.main(argv, cwd)   in Lua: parse, run the command
 *
 * The command line is read in Lua (lua/raymond/cli.lua), from a table of
 * commands and options; C answers only `raymond --version`,
 * `raymond hook-bridge` and `raymond launch-follow`, which must not wait
 * for Lua to start.
 */
#ifndef RAY_CLI_H
#define RAY_CLI_H

#include "ray.h"

/*
 * cmd_run.c: hand the arguments (without the program name) to the Lua
 * side, drive the event loop until no work is left, and return the exit
 * status the command chose.
 */
int ray_cmd_run(int argc, char **argv);

/*
 * cmd_bridge.c: `raymond hook-bridge [--warn] [--timeout S]`, the command
 * hook of a Claude turn (the arguments after the command's name); returns
 * the exit status, 0 or 2.
 */
int ray_cmd_bridge(int argc, char **argv);

/*
 * cmd_follow.c: `raymond launch-follow DIR --name JOB ...`, the follower
 * of a job a cluster runs from a spool folder (the arguments after the
 * command's name); returns the exit status, or ends by the signal that
 * ended the remote task.
 */
int ray_cmd_follow(int argc, char **argv);

#endif
