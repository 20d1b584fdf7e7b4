/*
 * cli.h - the parsed command line and the commands that act on it.
 *
 * main.c parses argv into a struct ray_opts (ray_cli_parse), then calls
 * the command it names.  Options that were not given stay unset (NULL or
 * -1) so a resumed run can tell "not given" from "given as the default".
 *
 * Errors: ray_cli_parse returns 0, or a negative code with `err` saying
 * which argument is wrong and how to write it.
 */
#ifndef RAY_CLI_H
#define RAY_CLI_H

#include "ray.h"

enum ray_command {
	RAY_CMD_RUN,
	RAY_CMD_RESUME,
	RAY_CMD_LIST,
	RAY_CMD_STATUS,
	RAY_CMD_HELP,
	RAY_CMD_VERSION,
};

#define RAY_MAX_HOOKS 64

struct ray_opts {
	enum ray_command command;
	const char *workflow;	/* WORKFLOW argument */
	const char *input;	/* --input, NULL if not given */
	const char *resume;	/* --resume ID */
	const char *status;	/* --status ID */
	int json;		/* --json, with --status */
	const char *workflow_id;	/* --workflow-id ID */
	double timeout;		/* --timeout, -1 if not given */
	long max_parallel;	/* --max-parallel, -1 if not given */
	double budget;		/* --budget, -1 if not given */
	const char *model;	/* --model */
	const char *effort;	/* --effort */
	const char *claude;	/* --claude PATH */
	int skip_permissions;	/* --dangerously-skip-permissions */
	const char *hooks[RAY_MAX_HOOKS];	/* --hooks FILE, in order */
	int nhooks;
	int no_default_hooks;	/* --no-default-hooks */
	int no_wait;		/* --no-wait */
	int quiet;
	int no_debug;
};

int ray_cli_parse(int argc, char **argv, struct ray_opts *o, struct ray_err *err);
void ray_cli_usage(void);

/* cmd_run.c: a run, a resume, --list and --status all go through the engine. */
int ray_cmd_run(const struct ray_opts *o);

#endif
