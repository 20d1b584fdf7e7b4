/*
 * main.c - the raymond command: parse the command line, run the command.
 *
 * --help and --version are answered here without starting Lua, so they
 * stay instant; everything else goes through cmd_run.c.
 */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
ray_cli_usage(void)
{
	fputs(
"usage: raymond WORKFLOW [options]\n"
"       raymond --resume ID [options]\n"
"       raymond --list | --status ID [--json]\n"
"\n"
"Runs a workflow: a folder of states, each a markdown prompt (.md) or a\n"
"bash script (.sh), that ends by printing one transition tag:\n"
"\n"
"  <goto>NEXT</goto>                      go on to NEXT (same session)\n"
"  <reset cd=\"DIR\" input=\"X\">NEXT</reset>  go on to NEXT with a fresh session\n"
"  <call return=\"BACK\">SUB</call>         run SUB; its <result> resumes BACK\n"
"  <function return=\"BACK\">SUB</function> the same, SUB starting fresh\n"
"  <fork next=\"NEXT\" item=\"x\">WORKER</fork> start a parallel agent at WORKER\n"
"  <result>TEXT</result>                  return TEXT to the caller, or end\n"
"\n"
"<print>TEXT</print> shows TEXT as it arrives and is not a transition.\n"
"WORKFLOW is a folder (entry state 1_START or START) or one state file.\n"
"A script sees RAYMOND_INPUT/RAYMOND_RESULT (the payload handed to it),\n"
"RAYMOND_WORKFLOW_ID, RAYMOND_AGENT_ID, RAYMOND_STATE_DIR and\n"
"RAYMOND_STATE_FILE, plus a fork's extra attributes as variables.\n"
"\n"
"options:\n"
"  --input TEXT         payload for the first state ({{input}}, $RAYMOND_INPUT)\n"
"  --resume ID          continue a run that failed, stopped or was killed\n"
"  --workflow-id ID     name the new run (letters, digits, _ and -)\n"
"  --list               list runs with their status\n"
"  --status ID          show a run's agents, stacks and hooks\n"
"  --json               with --status: print the run's whole state as JSON,\n"
"                       as a resume would read it\n"
"  --timeout SECONDS    stop a state that prints nothing for this long\n"
"                       (default 600, 0 = no limit)\n"
"  --max-parallel N     run at most N states at once (default 32, 0 = no limit)\n"
"\n"
"markdown states (the Claude Code CLI):\n"
"  --budget USD         stop the run once it has spent this much (default 10.00,\n"
"                       0 = no limit); each turn also gets the rest as its cap\n"
"  --model NAME         model for states whose frontmatter names none (haiku,\n"
"                       sonnet, opus or a full model id)\n"
"  --effort LEVEL       low, medium, high, xhigh or max, likewise\n"
"  --claude PATH        the claude executable (default: RAYMOND_CLAUDE, else\n"
"                       claude on PATH)\n"
"  --dangerously-skip-permissions\n"
"                       let Claude run any tool without asking (default: it may\n"
"                       edit files, see --permission-mode acceptEdits)\n"
"  --no-wait            stop at a usage limit instead of waiting for its reset\n"
"\n"
"hooks (Lua files returning handlers by event; see docs/hooks.md):\n"
"  --hooks FILE         load FILE after the default hooks and the workflow's\n"
"                       hooks.lua and hooks/*.lua; may be given again\n"
"  --no-default-hooks   leave out the built-in hooks (budget, max_visits,\n"
"                       evaluate, loop detection)\n"
"  --quiet              print no progress, only errors and the workflow's output\n"
"  --no-debug           keep no per-step record in .raymond/debug/\n"
"  --version            print the version\n"
"  --help               print this help\n"
"\n"
"Progress goes to stderr; stdout carries <print> text and the final result.\n"
"State lives in .raymond/ at the project root; a killed run loses nothing:\n"
"raymond --resume ID runs again the states that were running.\n"
"\n"
"exit status: 0 completed (or stopped by a hook), 1 error, 130 interrupted\n"
"\n"
"example:\n"
"  raymond workflows/hello --input world\n",
	    stdout);
}

enum { OPT_INPUT = 256, OPT_RESUME, OPT_WFID, OPT_LIST, OPT_STATUS,
	OPT_TIMEOUT, OPT_MAXPAR, OPT_QUIET, OPT_NODEBUG, OPT_VERSION, OPT_HELP,
	OPT_BUDGET, OPT_MODEL, OPT_EFFORT, OPT_CLAUDE, OPT_SKIP, OPT_NOWAIT,
	OPT_HOOKS, OPT_NODEFHOOKS, OPT_JSON };

static const struct option longopts[] = {
	{ "input", required_argument, NULL, OPT_INPUT },
	{ "resume", required_argument, NULL, OPT_RESUME },
	{ "workflow-id", required_argument, NULL, OPT_WFID },
	{ "list", no_argument, NULL, OPT_LIST },
	{ "status", required_argument, NULL, OPT_STATUS },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "max-parallel", required_argument, NULL, OPT_MAXPAR },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "no-debug", no_argument, NULL, OPT_NODEBUG },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "budget", required_argument, NULL, OPT_BUDGET },
	{ "model", required_argument, NULL, OPT_MODEL },
	{ "effort", required_argument, NULL, OPT_EFFORT },
	{ "claude", required_argument, NULL, OPT_CLAUDE },
	{ "dangerously-skip-permissions", no_argument, NULL, OPT_SKIP },
	{ "no-wait", no_argument, NULL, OPT_NOWAIT },
	{ "hooks", required_argument, NULL, OPT_HOOKS },
	{ "no-default-hooks", no_argument, NULL, OPT_NODEFHOOKS },
	{ NULL, 0, NULL, 0 },
};

/* A number from 0 to `max` (which also keeps out infinities and NaN). */
static int
parse_number(const char *s, const char *opt, double max, double *out, struct ray_err *err)
{
	char *end;
	double v = strtod(s, &end);

	if (*s == '\0' || *end != '\0' || !(v >= 0 && v <= max)) {
		ray_err_set(err, RAY_EINVAL, "%s needs a number from 0 to %g, got '%s'", opt, max, s);
		ray_err_hint(err, "for example: %s 300", opt);
		return RAY_EINVAL;
	}
	*out = v;
	return 0;
}

static int
check_effort(const char *s, struct ray_err *err)
{
	static const char *levels[] = { "low", "medium", "high", "xhigh", "max" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(levels); i++)
		if (strcmp(s, levels[i]) == 0)
			return 0;
	ray_err_set(err, RAY_EINVAL, "--effort must be low, medium, high, xhigh or max, not '%s'", s);
	return RAY_EINVAL;
}

int
ray_cli_parse(int argc, char **argv, struct ray_opts *o, struct ray_err *err)
{
	int c, r;
	double v;

	memset(o, 0, sizeof(*o));
	o->timeout = -1;
	o->max_parallel = -1;
	o->budget = -1;
	o->command = RAY_CMD_RUN;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_INPUT: o->input = optarg; break;
		case OPT_RESUME: o->resume = optarg; o->command = RAY_CMD_RESUME; break;
		case OPT_WFID: o->workflow_id = optarg; break;
		case OPT_LIST: o->command = RAY_CMD_LIST; break;
		case OPT_STATUS: o->status = optarg; o->command = RAY_CMD_STATUS; break;
		case OPT_JSON: o->json = 1; break;
		case OPT_QUIET: o->quiet = 1; break;
		case OPT_MODEL: o->model = optarg; break;
		case OPT_CLAUDE: o->claude = optarg; break;
		case OPT_SKIP: o->skip_permissions = 1; break;
		case OPT_NOWAIT: o->no_wait = 1; break;
		case OPT_NODEFHOOKS: o->no_default_hooks = 1; break;
		case OPT_HOOKS:
			if (o->nhooks == RAY_MAX_HOOKS) {
				ray_err_set(err, RAY_EINVAL, "more than %d --hooks files", RAY_MAX_HOOKS);
				ray_err_hint(err, "put hook files in the workflow's hooks/ folder instead");
				return RAY_EINVAL;
			}
			o->hooks[o->nhooks++] = optarg;
			break;
		case OPT_EFFORT:
			if ((r = check_effort(optarg, err)) < 0)
				return r;
			o->effort = optarg;
			break;
		case OPT_BUDGET:
			if ((r = parse_number(optarg, "--budget", 1e6, &o->budget, err)) < 0)
				return r;
			break;
		case OPT_NODEBUG: o->no_debug = 1; break;
		case OPT_VERSION: o->command = RAY_CMD_VERSION; return 0;
		case 'h':
		case OPT_HELP: o->command = RAY_CMD_HELP; return 0;
		case OPT_TIMEOUT:
			if ((r = parse_number(optarg, "--timeout", 1e7, &o->timeout, err)) < 0)
				return r;
			break;
		case OPT_MAXPAR:
			if ((r = parse_number(optarg, "--max-parallel", 1e6, &v, err)) < 0)
				return r;
			if (v != (long)v) {
				ray_err_set(err, RAY_EINVAL, "--max-parallel needs a whole number, got '%s'", optarg);
				return RAY_EINVAL;
			}
			o->max_parallel = (long)v;
			break;
		case ':':
			ray_err_set(err, RAY_EINVAL, "option '%s' needs a value", argv[optind - 1]);
			ray_err_hint(err, "see: raymond --help");
			return RAY_EINVAL;
		default:
			ray_err_set(err, RAY_EINVAL, "unknown option '%s'", argv[optind - 1]);
			ray_err_hint(err, "see: raymond --help");
			return RAY_EINVAL;
		}
	}
	if (optind < argc)
		o->workflow = argv[optind++];
	if (optind < argc) {
		ray_err_set(err, RAY_EINVAL, "unexpected argument '%s'", argv[optind]);
		ray_err_hint(err, "give one WORKFLOW; quote --input text that has spaces");
		return RAY_EINVAL;
	}
	if (o->command == RAY_CMD_RUN && o->workflow == NULL) {
		ray_err_set(err, RAY_EINVAL, "no workflow given");
		ray_err_hint(err, "raymond WORKFLOW (a folder or a state file), or raymond --resume ID; see raymond --help");
		return RAY_EINVAL;
	}
	if (o->command != RAY_CMD_RUN && o->workflow != NULL) {
		ray_err_set(err, RAY_EINVAL, "a WORKFLOW argument ('%s') cannot go with --resume, --list or --status",
		    o->workflow);
		return RAY_EINVAL;
	}
	if (o->json && o->command != RAY_CMD_STATUS) {
		ray_err_set(err, RAY_EINVAL, "--json goes with --status");
		ray_err_hint(err, "raymond --status ID --json");
		return RAY_EINVAL;
	}
	if (o->command == RAY_CMD_RESUME && o->input != NULL) {
		ray_err_set(err, RAY_EINVAL, "--input cannot go with --resume: a resumed state keeps its own input");
		return RAY_EINVAL;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct ray_opts o;
	struct ray_err err;

	if (ray_cli_parse(argc, argv, &o, &err) < 0) {
		fprintf(stderr, "raymond: error: %s\n", err.msg);
		if (err.hint[0])
			fprintf(stderr, "hint: %s\n", err.hint);
		return 1;
	}
	switch (o.command) {
	case RAY_CMD_HELP:
		ray_cli_usage();
		return 0;
	case RAY_CMD_VERSION:
		printf("raymond %s\n", RAY_VERSION);
		return 0;
	default:
		return ray_cmd_run(&o);
	}
}
