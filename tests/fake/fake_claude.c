/*
 * fake_claude.c - a fast stand-in for the Claude Code CLI (`claude -p`), for
 * raymond's tests.  Built as build/tests/fake-claude.
 *
 *   fake-claude -p --output-format stream-json --verbose
 *       [--permission-mode M | --dangerously-skip-permissions] [--model M]
 *       [--effort E] [--session-id UUID] [--resume UUID [--fork-session]]
 *       [--max-budget-usd X] [--disallowed-tools LIST] -- PROMPT
 *
 * It behaves like the Claude Code CLI 2.1.197: the same flags, stream-json
 * lines, error texts and exit statuses, sessions keyed by id and cwd.  The reply is
 * scripted by a line `MOCK: STEP || STEP ...` in the prompt (tests/README.md):
 * the k-th invocation whose prompt holds the same line gets the k-th step.
 *
 * State lives in $FAKE_CLAUDE_DIR (required):
 *   sessions/<uuid>   line 1: the cwd; then one prompt per line (JSON-escaped)
 *   counters/<hash>   line 1: how many invocations saw a MOCK line; line 2: it
 *   log.jsonl         one JSON object per invocation that reached the model
 *
 *   spend             one line per answered API call: its cost in dollars
 *
 * --max-budget-usd is enforced as the CLI enforces it: checked after each
 * API call, so the call that reaches the cap is paid in full.
 *
 * As root, --dangerously-skip-permissions (or bypassPermissions) needs
 * IS_SANDBOX=1, as for the real CLI.  FAKE_CLAUDE_DELAY_MS sleeps that long
 * after the init line.  Exit status:
 * 0 success, 1 an error of the real CLI, 2 a misuse of the fake itself.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define VERSION "2.1.197"

/* ---- growing buffers -------------------------------------------------- */

typedef struct {
	char *p;
	size_t n, cap;
} Buf;

static void oom(void)
{
	fputs("fake-claude: out of memory\n", stderr);
	exit(2);
}

static void badd(Buf *b, const void *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t c = b->cap ? b->cap : 256;
		while (c < b->n + n + 1)
			c *= 2;
		char *q = realloc(b->p, c);
		if (!q)
			oom();
		b->p = q;
		b->cap = c;
	}
	if (n)
		memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void bs(Buf *b, const char *s) { badd(b, s, strlen(s)); }

static void bf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bf(Buf *b, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (k < 0)
		return;
	if ((size_t)k < sizeof tmp) {
		badd(b, tmp, (size_t)k);
		return;
	}
	char *big = malloc((size_t)k + 1);
	if (!big)
		oom();
	va_start(ap, fmt);
	vsnprintf(big, (size_t)k + 1, fmt, ap);
	va_end(ap);
	badd(b, big, (size_t)k);
	free(big);
}

/* ---- JSON output ------------------------------------------------------ */

/* Length of the valid UTF-8 sequence at p, or 0 when it is not one; then
 * *bad is how many bytes one U+FFFD replaces (the maximal subpart, as
 * Node decodes argv: a truncated sequence is one U+FFFD, a stray byte one). */
static size_t utf8_len(const unsigned char *p, size_t n, size_t *bad)
{
	unsigned c = p[0], lo = 0x80, hi = 0xBF;
	size_t len;
	if (c >= 0xC2 && c <= 0xDF)
		len = 2;
	else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		if (c == 0xE0) lo = 0xA0;
		if (c == 0xED) hi = 0x9F; /* no surrogates */
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		if (c == 0xF0) lo = 0x90;
		if (c == 0xF4) hi = 0x8F;
	} else {
		*bad = 1;
		return 0;
	}
	*bad = 1;
	if (n < 2 || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t k = 2; k < len; k++)
		if (k >= n || p[k] < 0x80 || p[k] > 0xBF) {
			*bad = k;
			return 0;
		}
	return len;
}

/* The body of a JSON string for bytes s[0..n): escapes like JSON.stringify;
 * UTF-8 passes through, an invalid byte becomes U+FFFD. */
static void bjraw(Buf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t st = 0, i = 0;
	while (i < n) {
		unsigned c = u[i];
		if (c < 0x80) {
			if (c >= 0x20 && c != '"' && c != '\\') {
				i++;
				continue;
			}
			badd(b, s + st, i - st);
			char e[8];
			switch (c) {
			case '"': strcpy(e, "\\\""); break;
			case '\\': strcpy(e, "\\\\"); break;
			case '\n': strcpy(e, "\\n"); break;
			case '\r': strcpy(e, "\\r"); break;
			case '\t': strcpy(e, "\\t"); break;
			case '\b': strcpy(e, "\\b"); break;
			case '\f': strcpy(e, "\\f"); break;
			default: snprintf(e, sizeof e, "\\u%04x", c);
			}
			bs(b, e);
			st = ++i;
			continue;
		}
		size_t bad, len = utf8_len(u + i, n - i, &bad);
		if (len) {
			i += len;
			continue;
		}
		badd(b, s + st, i - st);
		badd(b, "\xef\xbf\xbd", 3);
		st = i += bad;
	}
	badd(b, s + st, n - st);
}

static void bjn(Buf *b, const char *s, size_t n)
{
	badd(b, "\"", 1);
	bjraw(b, s, n);
	badd(b, "\"", 1);
}

static void bj(Buf *b, const char *s)
{
	if (s)
		bjn(b, s, strlen(s));
	else
		bs(b, "null");
}

static void bbool(Buf *b, bool v) { bs(b, v ? "true" : "false"); }

/* A number as JavaScript prints it: the shortest text that reads back as
 * the same double (0.0045000000000000005, 0.0075, 1e-7, 12). */
static void bnum(Buf *b, double d)
{
	if (d != d || d > 1.7976931348623157e308 || d < -1.7976931348623157e308) {
		bs(b, "null");
		return;
	}
	if (d == 0) {
		bs(b, "0");
		return;
	}
	char tmp[48];
	for (int p = 1; p <= 17; p++) {
		snprintf(tmp, sizeof tmp, "%.*e", p - 1, d);
		if (strtod(tmp, NULL) == d)
			break;
	}
	const char *q = tmp;
	if (*q == '-') {
		badd(b, "-", 1);
		q++;
	}
	char dg[24];
	int k = 0;
	for (; *q && *q != 'e'; q++)
		if (*q >= '0' && *q <= '9' && k < 20)
			dg[k++] = *q;
	int e = *q ? atoi(q + 1) : 0;
	while (k > 1 && dg[k - 1] == '0')
		k--;
	int n = e + 1; /* the decimal point sits after n digits */
	if (k <= n && n <= 21) {
		badd(b, dg, (size_t)k);
		for (int i = k; i < n; i++)
			badd(b, "0", 1);
	} else if (0 < n && n <= 21) {
		badd(b, dg, (size_t)n);
		badd(b, ".", 1);
		badd(b, dg + n, (size_t)(k - n));
	} else if (-6 < n && n <= 0) {
		bs(b, "0.");
		for (int i = n; i < 0; i++)
			badd(b, "0", 1);
		badd(b, dg, (size_t)k);
	} else {
		badd(b, dg, 1);
		if (k > 1) {
			badd(b, ".", 1);
			badd(b, dg + 1, (size_t)(k - 1));
		}
		bf(b, "e%c%d", n - 1 >= 0 ? '+' : '-', n - 1 >= 0 ? n - 1 : 1 - n);
	}
}

/* ---- small helpers ---------------------------------------------------- */

static void write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			exit(2);
		}
		p += w;
		n -= (size_t)w;
	}
}

static void rnd(void *p, size_t n)
{
	static uint64_t x;
	if (getrandom(p, n, 0) == (ssize_t)n)
		return;
	if (!x)
		x = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid();
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		((unsigned char *)p)[i] = (unsigned char)x;
	}
}

static void uuid4(char out[37])
{
	unsigned char r[16];
	rnd(r, sizeof r);
	r[6] = (r[6] & 0x0f) | 0x40;
	r[8] = (r[8] & 0x3f) | 0x80;
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12],
		 r[13], r[14], r[15]);
}

/* prefix + 24 random hex digits */
static void rid(char *out, size_t cap, const char *prefix)
{
	unsigned char r[12];
	rnd(r, sizeof r);
	int k = snprintf(out, cap, "%s", prefix);
	for (int i = 0; i < 12 && (size_t)k + 3 <= cap; i++)
		k += snprintf(out + k, cap - (size_t)k, "%02x", r[i]);
}

static bool is_uuid(const char *s)
{
	for (int i = 0; i < 36; i++) {
		char c = s[i];
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (c != '-')
				return false;
		} else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
			return false;
	}
	return s[36] == 0;
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_s(double s)
{
	if (!(s > 0))
		return;
	if (s > 1e9)
		s = 1e9;
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Whole file at path, NUL-terminated; NULL with errno on failure. */
static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	Buf b = {0};
	char tmp[65536];
	ssize_t r;
	while ((r = read(fd, tmp, sizeof tmp)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			free(b.p);
			errno = e;
			return NULL;
		}
		badd(&b, tmp, (size_t)r);
	}
	close(fd);
	badd(&b, "", 0);
	*len = b.n;
	return b.p;
}

static bool ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static void trim(const char **s, size_t *n)
{
	while (*n && ws(**s))
		(*s)++, (*n)--;
	while (*n && ws((*s)[*n - 1]))
		(*n)--;
}

/* ---- options ---------------------------------------------------------- */

enum { F_FLAG, F_VAL, F_OPTVAL, F_LIST, F_NOTEMU_FLAG, F_NOTEMU_VAL };
enum {
	O_IGNORE, O_PRINT, O_VERBOSE, O_FMT, O_PERM, O_SKIP, O_MODEL, O_EFFORT, O_SID,
	O_RESUME, O_FORK, O_BUDGET, O_DISALLOW, O_VERSION, O_HELP, O_NOTEMU
};

struct opt {
	const char *lng;
	char sht;
	int kind, id;
	const char *spec; /* as commander names it in errors */
};

static const struct opt OPTS[] = {
	{"--print", 'p', F_FLAG, O_PRINT, "-p, --print"},
	{"--verbose", 0, F_FLAG, O_VERBOSE, "--verbose"},
	{"--output-format", 0, F_VAL, O_FMT, "--output-format <format>"},
	{"--permission-mode", 0, F_VAL, O_PERM, "--permission-mode <mode>"},
	{"--dangerously-skip-permissions", 0, F_FLAG, O_SKIP, "--dangerously-skip-permissions"},
	{"--model", 0, F_VAL, O_MODEL, "--model <model>"},
	{"--effort", 0, F_VAL, O_EFFORT, "--effort <level>"},
	{"--session-id", 0, F_VAL, O_SID, "--session-id <uuid>"},
	{"--resume", 'r', F_OPTVAL, O_RESUME, "-r, --resume [value]"},
	{"--fork-session", 0, F_FLAG, O_FORK, "--fork-session"},
	{"--max-budget-usd", 0, F_VAL, O_BUDGET, "--max-budget-usd <amount>"},
	{"--disallowed-tools", 0, F_LIST, O_DISALLOW, "--disallowed-tools, --disallowedTools <tools...>"},
	{"--disallowedTools", 0, F_LIST, O_DISALLOW, "--disallowed-tools, --disallowedTools <tools...>"},
	{"--version", 'v', F_FLAG, O_VERSION, "-v, --version"},
	{"--help", 'h', F_FLAG, O_HELP, "-h, --help"},
	/* accepted and ignored: they change nothing the fake emulates */
	{"--allowed-tools", 0, F_LIST, O_IGNORE, "--allowed-tools, --allowedTools <tools...>"},
	{"--allowedTools", 0, F_LIST, O_IGNORE, "--allowed-tools, --allowedTools <tools...>"},
	{"--add-dir", 0, F_LIST, O_IGNORE, "--add-dir <directories...>"},
	{"--mcp-config", 0, F_LIST, O_IGNORE, "--mcp-config <configs...>"},
	{"--strict-mcp-config", 0, F_FLAG, O_IGNORE, "--strict-mcp-config"},
	{"--append-system-prompt", 0, F_VAL, O_IGNORE, "--append-system-prompt <prompt>"},
	{"--system-prompt", 0, F_VAL, O_IGNORE, "--system-prompt <prompt>"},
	{"--fallback-model", 0, F_VAL, O_IGNORE, "--fallback-model <model>"},
	{"--settings", 0, F_VAL, O_IGNORE, "--settings <file-or-json>"},
	{"--setting-sources", 0, F_VAL, O_IGNORE, "--setting-sources <sources>"},
	{"--max-turns", 0, F_VAL, O_IGNORE, "--max-turns <turns>"},
	/* real options the fake does not emulate: a loud failure, not a silent pass */
	{"--continue", 'c', F_NOTEMU_FLAG, O_NOTEMU, "-c, --continue"},
	{"--input-format", 0, F_NOTEMU_VAL, O_NOTEMU, "--input-format <format>"},
	{"--include-partial-messages", 0, F_NOTEMU_FLAG, O_NOTEMU, "--include-partial-messages"},
	{"--replay-user-messages", 0, F_NOTEMU_FLAG, O_NOTEMU, "--replay-user-messages"},
	{"--json-schema", 0, F_NOTEMU_VAL, O_NOTEMU, "--json-schema <schema>"},
	{"--tools", 0, F_NOTEMU_VAL, O_NOTEMU, "--tools <tools...>"},
	{"--agents", 0, F_NOTEMU_VAL, O_NOTEMU, "--agents <json>"},
	{"--no-session-persistence", 0, F_NOTEMU_FLAG, O_NOTEMU, "--no-session-persistence"},
	{"--debug", 'd', F_NOTEMU_FLAG, O_NOTEMU, "-d, --debug [filter]"},
};

static struct {
	bool print, verbose, skip, fork, resume_given, no_bash;
	const char *fmt, *perm, *model, *effort, *sid, *resume, *budget;
	const char *prompt;
	int nprompt;
} o;

static int ac;
static char **av;

static void fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void fail(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

static bool one_of(const char *v, const char *const *set)
{
	for (; *set; set++)
		if (!strcmp(v, *set))
			return true;
	return false;
}

static void check_choice(const struct opt *op, const char *v, const char *const *set, const char *list)
{
	if (!one_of(v, set))
		fail(1, "error: option '%s' argument '%s' is invalid. Allowed choices are %s.", op->spec, v, list);
}

static void usage(void)
{
	fputs("Usage: claude [options] [command] [prompt]\n\n"
	      "fake-claude: a stand-in for Claude Code " VERSION " in raymond's tests.\n"
	      "Emulated: -p, --output-format, --verbose, --permission-mode,\n"
	      "--dangerously-skip-permissions, --model, --effort, --session-id, --resume,\n"
	      "--fork-session, --max-budget-usd, --disallowed-tools, --version.\n"
	      "The reply is scripted by a `MOCK: STEP || ...` line in the prompt\n"
	      "(tests/README.md); state lives in $FAKE_CLAUDE_DIR.\n",
	      stdout);
}

/* One value of --disallowed-tools may list several tools: "Bash,Edit". */
static void scan_tools(const char *p)
{
	while (*p) {
		size_t n = strcspn(p, ", ");
		if (n == 4 && !strncmp(p, "Bash", 4))
			o.no_bash = true;
		p += n;
		p += strspn(p, ", ");
	}
}

static void parse_args(void)
{
	static const char *const fmts[] = {"text", "json", "stream-json", NULL};
	static const char *const modes[] = {"acceptEdits", "bypassPermissions", "default", "dontAsk", "plan", NULL};
	bool dashdash = false;
	for (int i = 1; i < ac; i++) {
		const char *a = av[i];
		if (dashdash || a[0] != '-' || a[1] == 0) {
			if (o.nprompt++ == 0)
				o.prompt = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			dashdash = true;
			continue;
		}
		const struct opt *op = NULL;
		const char *val = NULL;
		size_t nl = strlen(a);
		if (a[1] == '-') {
			const char *eq = strchr(a, '=');
			if (eq) {
				nl = (size_t)(eq - a);
				val = eq + 1;
			}
			for (size_t k = 0; k < sizeof OPTS / sizeof *OPTS; k++)
				if (strlen(OPTS[k].lng) == nl && !strncmp(OPTS[k].lng, a, nl))
					op = &OPTS[k];
		} else if (a[2] == 0) {
			for (size_t k = 0; k < sizeof OPTS / sizeof *OPTS; k++)
				if (OPTS[k].sht == a[1])
					op = &OPTS[k];
		}
		if (!op)
			fail(1, "error: unknown option '%s'", a);
		if (op->kind == F_NOTEMU_FLAG || op->kind == F_NOTEMU_VAL)
			fail(2, "fake-claude: option '%s' is not emulated", op->lng);
		if (op->kind == F_FLAG && val)
			fail(1, "error: option '%s' does not take an argument", op->spec);
		if (op->kind == F_VAL && !val) {
			if (i + 1 >= ac)
				fail(1, "error: option '%s' argument missing", op->spec);
			val = av[++i];
		}
		if (op->kind == F_OPTVAL && !val && i + 1 < ac && av[i + 1][0] != '-')
			val = av[++i];
		if (op->kind == F_LIST) {
			int nv = 0;
			if (val) {
				nv++;
				if (op->id == O_DISALLOW)
					scan_tools(val);
			}
			while (i + 1 < ac && av[i + 1][0] != '-') {
				nv++;
				if (op->id == O_DISALLOW)
					scan_tools(av[i + 1]);
				i++;
			}
			if (!nv)
				fail(1, "error: option '%s' argument missing", op->spec);
			continue;
		}
		switch (op->id) {
		case O_PRINT: o.print = true; break;
		case O_VERBOSE: o.verbose = true; break;
		case O_FMT: check_choice(op, val, fmts, "text, json, stream-json"); o.fmt = val; break;
		case O_PERM:
			check_choice(op, val, modes, "acceptEdits, bypassPermissions, default, dontAsk, plan");
			o.perm = val;
			break;
		case O_SKIP: o.skip = true; break;
		case O_MODEL: o.model = val; break;
		case O_EFFORT: o.effort = val; break;
		case O_SID: o.sid = val; break;
		case O_RESUME: o.resume_given = true; o.resume = val; break;
		case O_FORK: o.fork = true; break;
		case O_BUDGET: o.budget = val; break;
		case O_VERSION: fputs(VERSION " (Claude Code)\n", stdout); exit(0);
		case O_HELP: usage(); exit(0);
		default: break;
		}
	}
}

/* ---- the run ---------------------------------------------------------- */

enum { FMT_TEXT, FMT_JSON, FMT_STREAM };
enum { S_NONE, S_REPLY, S_BASH, S_ERROR, S_LIMIT, S_HANG, S_LONG, S_UNKNOWN, S_CALLS };
/* as the mock API logs them (`calls` is the fake's own) */
static const char *const STEP_NAMES[] = {"default", "reply", "bash", "error", "limit", "hang", "long", "unknown", "calls"};

static struct {
	int fmt;
	int64_t t0;
	const char *dir;
	char cwd[4096];
	char sid[64];
	const char *model_wire;
	Buf model_init;
	bool one_m;
	double price_in, price_out;
	const char *effort; /* as sent: NULL for haiku */
	bool resumed, forked;
	long n_history;
	const char *mock; /* the MOCK line's steps (after "MOCK:") */
	size_t mock_len;
	long index;       /* this invocation is the index-th with that line */
	int step;
	Buf text, cmd; /* reply text, bash command */
	int status;
	double secs;
	char claim[32]; /* limit: five_hour, seven_day, ... */
	long long in_tok, out_tok;
	long calls;          /* calls: how many API calls the turn makes */
	double cap, spent;   /* --max-budget-usd (0: none); spent so far */
	int answered;        /* API calls answered */
	Buf line, result; /* the line being written; the result text */
	size_t long_n;    /* long: how many "x" stand for LONG_MARK */
} r;

/* The text of a `long` reply until out_line writes it: JSON escapes it to
 * LONG_MARK_JSON, which out_line replaces by long_n "x" written in pieces,
 * so the fake's memory stays small however long the line. */
#define LONG_MARK "\001long\001"
#define LONG_MARK_JSON "\\u0001long\\u0001"

static void write_x(size_t n)
{
	static char xs[65536];
	if (!xs[0])
		memset(xs, 'x', sizeof xs);
	while (n > 0) {
		size_t k = n < sizeof xs ? n : sizeof xs;
		write_all(1, xs, k);
		n -= k;
	}
}

static void out_line(bool is_result)
{
	if (r.fmt == FMT_STREAM || (r.fmt == FMT_JSON && is_result)) {
		badd(&r.line, "\n", 1);
		const char *m = r.long_n ? strstr(r.line.p, LONG_MARK_JSON) : NULL;
		if (m) {
			size_t at = (size_t)(m - r.line.p), ml = strlen(LONG_MARK_JSON);
			write_all(1, r.line.p, at);
			write_x(r.long_n);
			write_all(1, m + ml, r.line.n - at - ml);
		} else {
			write_all(1, r.line.p, r.line.n);
		}
	}
	r.line.n = 0;
}

static void resolve_model(void)
{
	static const char *const alias[][2] = {
		{"haiku", "claude-haiku-4-5-20251001"}, {"sonnet", "claude-sonnet-5"},
		{"opus", "claude-opus-4-8"},            {"best", "claude-opus-4-8"},
		{"fable", "claude-fable-5"},            {"opusplan", "claude-sonnet-5"},
		{"claude-opus-4-1", "claude-opus-4-8"},
	};
	static char base[256];
	const char *m = o.model;
	if (!m || !*m) {
		r.model_wire = "claude-opus-4-8";
		r.one_m = true;
	} else {
		size_t n = strlen(m);
		if (n >= 4 && !strcmp(m + n - 4, "[1m]")) {
			r.one_m = true;
			n -= 4;
		}
		if (n >= sizeof base)
			n = sizeof base - 1;
		memcpy(base, m, n);
		base[n] = 0;
		r.model_wire = base;
		for (size_t k = 0; k < sizeof alias / sizeof *alias; k++)
			if (!strcmp(base, alias[k][0]))
				r.model_wire = alias[k][1];
	}
	bs(&r.model_init, r.model_wire);
	if (r.one_m)
		bs(&r.model_init, "[1m]");
	const char *w = r.model_wire;
	if (strstr(w, "claude-3-5-haiku"))
		r.price_in = 0.8, r.price_out = 4;
	else if (strstr(w, "haiku"))
		r.price_in = 1, r.price_out = 5;
	else if (strstr(w, "sonnet"))
		r.price_in = 3, r.price_out = 15;
	else if (strstr(w, "fable"))
		r.price_in = 10, r.price_out = 50;
	else
		r.price_in = 5, r.price_out = 25;
}

static double call_cost(void)
{
	return (double)r.in_tok / 1e6 * r.price_in + (double)r.out_tok / 1e6 * r.price_out;
}

static void path(Buf *b, const char *sub, const char *name)
{
	b->n = 0;
	bf(b, "%s/%s%s%s", r.dir, sub, name ? "/" : "", name ? name : "");
}

static void mkdir_p(const char *p)
{
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		fail(2, "fake-claude: cannot create %s: %s", p, strerror(errno));
}

/* The first line of the prompt that starts (after blanks) with prefix,
 * trimmed; false when there is none. */
static bool find_line(const char *p, const char *prefix, const char **ls, size_t *ll)
{
	size_t pn = strlen(prefix);
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		const char *s = p;
		trim(&s, &n);
		if (n >= pn && !strncmp(s, prefix, pn)) {
			*ls = s;
			*ll = n;
			return true;
		}
		if (!e)
			break;
		p = e + 1;
	}
	return false;
}

static uint64_t fnv1a(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

/* How many invocations (this one included) have seen this MOCK line. */
static long bump_counter(const char *line, size_t n)
{
	static Buf p, c;
	char name[32];
	snprintf(name, sizeof name, "%016llx", (unsigned long long)fnv1a(line, n));
	path(&p, "counters", name);
	int fd = open(p.p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		fail(2, "fake-claude: cannot open %s: %s", p.p, strerror(errno));
	while (flock(fd, LOCK_EX) < 0 && errno == EINTR)
		;
	char tmp[32];
	ssize_t got = pread(fd, tmp, sizeof tmp - 1, 0);
	tmp[got > 0 ? got : 0] = 0;
	long k = strtol(tmp, NULL, 10) + 1;
	bf(&c, "%ld\n", k);
	bjraw(&c, line, n);
	bs(&c, "\n");
	if (ftruncate(fd, 0) < 0 || pwrite(fd, c.p, c.n, 0) != (ssize_t)c.n)
		fail(2, "fake-claude: cannot write %s: %s", p.p, strerror(errno));
	close(fd);
	return k;
}

/* TEXT of a step: `\n` is a newline. */
static void unescape_nl(Buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n && s[i + 1] == 'n') {
			badd(b, "\n", 1);
			i++;
		} else
			badd(b, s + i, 1);
	}
}

/* The number at the start of s[0..n), like JavaScript's parseInt
 * (integer) or parseFloat; 0 when there is none. */
static double lead_number(const char *s, size_t n, bool integer)
{
	char tmp[64];
	if (n >= sizeof tmp)
		n = sizeof tmp - 1;
	memcpy(tmp, s, n);
	tmp[n] = 0;
	double v = integer ? (double)strtol(tmp, NULL, 10) : strtod(tmp, NULL);
	return v == v && v > -1e9 && v < 1e9 ? v : 0;
}

static void choose_step(void)
{
	const char *ml;
	size_t mn;
	r.in_tok = 1000;
	r.out_tok = 100;
	/* the first line that is exactly MOCK-USAGE: DIGITS DIGITS, as the
	 * mock API reads it; a malformed one is ignored */
	for (const char *p = o.prompt; find_line(p, "MOCK-USAGE:", &ml, &mn); p = ml + mn) {
		const char *q = ml + 11, *e = ml + mn;
		long long v[2];
		int got = 0;
		while (got < 2) {
			const char *d = q;
			while (q < e && ws(*q))
				q++;
			if (got && q == d)
				break; /* the two numbers need a blank between them */
			d = q;
			v[got] = 0;
			while (q < e && *q >= '0' && *q <= '9' && v[got] < 1000000000000LL)
				v[got] = v[got] * 10 + (*q++ - '0');
			if (q == d)
				break;
			got++;
		}
		if (got == 2 && q == e) {
			r.in_tok = v[0];
			r.out_tok = v[1];
			break;
		}
	}
	if (!find_line(o.prompt, "MOCK:", &ml, &mn)) {
		r.step = S_NONE;
		bs(&r.text, "ok");
		return;
	}
	r.mock = ml + 5;
	r.mock_len = mn - 5;
	trim(&r.mock, &r.mock_len);
	long k = r.index = bump_counter(ml, mn);
	/* the k-th step, the last one repeating */
	const char *t = r.mock, *end = r.mock + r.mock_len;
	size_t n;
	for (long i = 1;; i++) {
		const char *bar = NULL;
		for (const char *q = t; q + 1 < end; q++)
			if (q[0] == '|' && q[1] == '|') {
				bar = q;
				break;
			}
		if (!bar || i == k) {
			n = (size_t)((bar ? bar : end) - t);
			break;
		}
		t = bar + 2;
	}
	trim(&t, &n);
	size_t w = 0;
	while (w < n && !ws(t[w]))
		w++;
	const char *rest = t + w;
	size_t rn = n - w;
	trim(&rest, &rn);
	/* parsed as the mock API parses it (tests/e2e/mockapi.js) */
	if (w == 5 && !strncmp(t, "reply", 5)) {
		r.step = S_REPLY;
		unescape_nl(&r.text, rest, rn);
	} else if (w == 4 && !strncmp(t, "bash", 4)) {
		r.step = S_BASH;
		const char *arrow = NULL;
		for (size_t i = 0; i + 1 < rn; i++)
			if (rest[i] == '=' && rest[i + 1] == '>') {
				arrow = rest + i;
				break;
			}
		const char *c = rest, *x = arrow ? arrow + 2 : rest + rn;
		size_t cn = (size_t)((arrow ? arrow : rest + rn) - rest), xn = (size_t)(rest + rn - x);
		trim(&c, &cn);
		trim(&x, &xn);
		badd(&r.cmd, c, cn);
		unescape_nl(&r.text, x, xn);
	} else if (w == 5 && !strncmp(t, "error", 5)) {
		r.step = S_ERROR;
		r.status = (int)lead_number(rest, rn, true);
		if (!r.status)
			r.status = 500;
	} else if (w == 5 && !strncmp(t, "limit", 5)) {
		/* limit SECONDS [CLAIM] */
		r.step = S_LIMIT;
		r.secs = lead_number(rest, rn, true);
		size_t w1 = 0;
		while (w1 < rn && !ws(rest[w1]))
			w1++;
		const char *cl = rest + w1;
		size_t cln = rn - w1;
		trim(&cl, &cln);
		size_t cw = 0;
		while (cw < cln && !ws(cl[cw]))
			cw++;
		bool ok = cw > 0 && cw < sizeof r.claim && cl[0] >= 'a' && cl[0] <= 'z';
		for (size_t i = 0; ok && i < cw; i++)
			ok = (cl[i] >= 'a' && cl[i] <= 'z') || (cl[i] >= '0' && cl[i] <= '9') || cl[i] == '_';
		snprintf(r.claim, sizeof r.claim, "%.*s", ok ? (int)cw : 9, ok ? cl : "five_hour");
	} else if (w == 5 && !strncmp(t, "calls", 5)) {
		/* calls N => TEXT */
		r.step = S_CALLS;
		r.calls = (long)lead_number(rest, rn, true);
		const char *x = strstr(rest, "=>");
		if (x && x < rest + rn) {
			const char *tx = x + 2;
			size_t tn = (size_t)(rest + rn - tx);
			trim(&tx, &tn);
			unescape_nl(&r.text, tx, tn);
		}
	} else if (w == 4 && !strncmp(t, "hang", 4)) {
		r.step = S_HANG;
		r.secs = lead_number(rest, rn, false);
	} else if (w == 4 && !strncmp(t, "long", 4)) {
		/* long BYTES: a reply of BYTES "x", written as it goes (out_line) */
		r.step = S_LONG;
		double v = lead_number(rest, rn, true);
		r.long_n = v > 0 ? (size_t)v : 0;
		bs(&r.text, LONG_MARK);
	} else {
		/* like the mock: a reply saying so, and a word on stderr */
		r.step = S_UNKNOWN;
		bs(&r.text, "fake-claude: unknown step: ");
		badd(&r.text, t, n);
		fprintf(stderr, "%s\n", r.text.p);
	}
}

static void read_prompt(void)
{
	static Buf in;
	if (o.nprompt > 1)
		fail(1, "error: too many arguments. Expected 1 argument but got %d.", o.nprompt);
	if (o.prompt && *o.prompt)
		return;
	if (!isatty(0)) {
		char tmp[65536];
		ssize_t n;
		while ((n = read(0, tmp, sizeof tmp)) != 0) {
			if (n < 0) {
				if (errno == EINTR)
					continue;
				break;
			}
			badd(&in, tmp, (size_t)n);
		}
	}
	const char *s = in.p ? in.p : "";
	size_t n = in.n;
	trim(&s, &n);
	if (!n)
		fail(1, "Error: Input must be provided either through stdin or as a prompt argument when "
			"using --print");
	badd(&in, "", 0);
	o.prompt = in.p;
}

static void no_conversation(void) __attribute__((noreturn));
static void no_conversation(void)
{
	char id[37];
	const char *sid = o.sid;
	if (!sid) {
		uuid4(id);
		sid = id;
	}
	fprintf(stderr, "No conversation found with session ID: %s\n", o.resume);
	static Buf msg;
	bf(&msg, "No conversation found with session ID: %s", o.resume);
	char u[37];
	uuid4(u);
	bs(&r.line, "{\"type\":\"result\",\"subtype\":\"error_during_execution\",\"duration_ms\":0,"
		    "\"duration_api_ms\":0,\"is_error\":true,\"num_turns\":0,\"stop_reason\":null,\"session_id\":");
	bj(&r.line, sid);
	bs(&r.line, ",\"total_cost_usd\":0,\"usage\":{\"input_tokens\":0,\"cache_creation_input_tokens\":0,"
		    "\"cache_read_input_tokens\":0,\"output_tokens\":0,\"server_tool_use\":{\"web_search_requests\":0,"
		    "\"web_fetch_requests\":0},\"service_tier\":\"standard\"},\"modelUsage\":{},"
		    "\"permission_denials\":[],\"uuid\":");
	bj(&r.line, u);
	bs(&r.line, ",\"errors\":[");
	bjn(&r.line, msg.p, msg.n);
	bs(&r.line, "]}");
	out_line(true);
	exit(1);
}

static void in_use(const char *id) __attribute__((noreturn));
static void in_use(const char *id)
{
	fail(1, "Error: Session ID %s is already in use.", id);
}

/* Find, create or fork the session; record the prompt in its history. */
static void open_session(void)
{
	/* static: still reachable when an error exits from here */
	static Buf p, cwdline, add, c;
	static char *old;
	bjraw(&cwdline, r.cwd, strlen(r.cwd));
	bjraw(&add, o.prompt, strlen(o.prompt));
	badd(&add, "\n", 1);
	if (!o.resume_given) {
		if (o.sid)
			snprintf(r.sid, sizeof r.sid, "%s", o.sid);
		else
			uuid4(r.sid);
		path(&p, "sessions", r.sid);
		int fd = open(p.p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0 && errno == EEXIST)
			in_use(r.sid);
		if (fd < 0)
			fail(2, "fake-claude: cannot create %s: %s", p.p, strerror(errno));
		badd(&c, cwdline.p, cwdline.n);
		badd(&c, "\n", 1);
		badd(&c, add.p, add.n);
		write_all(fd, c.p, c.n);
		close(fd);
	} else {
		size_t len;
		path(&p, "sessions", o.resume);
		old = slurp(p.p, &len);
		char *nl = old ? strchr(old, '\n') : NULL;
		if (!nl || (size_t)(nl - old) != cwdline.n || memcmp(old, cwdline.p, cwdline.n))
			no_conversation();
		r.resumed = true;
		for (char *q = nl + 1; (q = strchr(q, '\n')); q++)
			r.n_history++;
		if (o.fork) {
			r.forked = true;
			if (o.sid)
				snprintf(r.sid, sizeof r.sid, "%s", o.sid);
			else
				uuid4(r.sid);
			path(&p, "sessions", r.sid);
			int fd = open(p.p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
			if (fd < 0 && errno == EEXIST)
				in_use(r.sid);
			if (fd < 0)
				fail(2, "fake-claude: cannot create %s: %s", p.p, strerror(errno));
			badd(&c, old, len);
			badd(&c, add.p, add.n);
			write_all(fd, c.p, c.n);
			close(fd);
		} else {
			snprintf(r.sid, sizeof r.sid, "%s", o.resume);
			int fd = open(p.p, O_WRONLY | O_APPEND | O_CLOEXEC);
			if (fd < 0)
				fail(2, "fake-claude: cannot open %s: %s", p.p, strerror(errno));
			write_all(fd, add.p, add.n);
			close(fd);
		}
	}
}

static bool stdin_is_devnull(void)
{
	struct stat a, b;
	return fstat(0, &a) == 0 && stat("/dev/null", &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

static void write_log(void)
{
	static Buf l, p;
	bs(&l, "{\"argv\":[");
	for (int i = 1; i < ac; i++) {
		if (i > 1)
			bs(&l, ",");
		bj(&l, av[i]);
	}
	bs(&l, "],\"cwd\":");
	bj(&l, r.cwd);
	bs(&l, ",\"session\":");
	bj(&l, r.sid);
	bs(&l, ",\"resumed\":");
	bbool(&l, r.resumed);
	bs(&l, ",\"forked\":");
	bbool(&l, r.forked);
	bf(&l, ",\"n_history\":%ld,\"prompt\":", r.n_history);
	bj(&l, o.prompt);
	bs(&l, ",\"model\":");
	bj(&l, r.model_wire);
	bs(&l, ",\"effort\":");
	bj(&l, r.effort);
	bs(&l, ",\"permission\":");
	bj(&l, o.skip ? "skip" : o.perm);
	bs(&l, ",\"max_budget_usd\":");
	if (o.budget)
		bnum(&l, strtod(o.budget, NULL));
	else
		bs(&l, "null");
	bs(&l, ",\"stdin_is_devnull\":");
	bbool(&l, stdin_is_devnull());
	bs(&l, ",\"claudecode_env\":");
	bbool(&l, getenv("CLAUDECODE") != NULL);
	bs(&l, ",\"step\":");
	bj(&l, STEP_NAMES[r.step]);
	bs(&l, ",\"mock\":");
	if (r.mock)
		bjn(&l, r.mock, r.mock_len);
	else
		bs(&l, "null");
	if (r.index)
		bf(&l, ",\"index\":%ld", r.index);
	else
		bs(&l, ",\"index\":null");
	bf(&l, ",\"input_tokens\":%lld,\"output_tokens\":%lld", r.in_tok, r.out_tok);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	bf(&l, ",\"time_ms\":%lld}\n", (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
	path(&p, "log.jsonl", NULL);
	int fd = open(p.p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		fail(2, "fake-claude: cannot open %s: %s", p.p, strerror(errno));
	write_all(fd, l.p, l.n); /* one write: lines of parallel runs never interleave */
	close(fd);
}

/* ---- stream-json lines ------------------------------------------------ */

static void tail(void)
{
	char u[37];
	uuid4(u);
	bs(&r.line, ",\"parent_tool_use_id\":null,\"session_id\":");
	bj(&r.line, r.sid);
	bs(&r.line, ",\"uuid\":");
	bj(&r.line, u);
}

static void emit_init(void)
{
	char u[37];
	uuid4(u);
	Buf *b = &r.line;
	bs(b, "{\"type\":\"system\",\"subtype\":\"init\",\"cwd\":");
	bj(b, r.cwd);
	bs(b, ",\"session_id\":");
	bj(b, r.sid);
	bs(b, o.no_bash ? ",\"tools\":[]" : ",\"tools\":[\"Bash\"]");
	bs(b, ",\"mcp_servers\":[],\"model\":");
	bj(b, r.model_init.p);
	bs(b, ",\"permissionMode\":");
	bj(b, o.skip ? "bypassPermissions" : o.perm ? o.perm : "default");
	bs(b, ",\"slash_commands\":[],\"apiKeySource\":");
	bj(b, getenv("ANTHROPIC_API_KEY") ? "ANTHROPIC_API_KEY" : "none");
	bs(b, ",\"claude_code_version\":\"" VERSION "\",\"output_style\":\"default\",\"agents\":[],"
	      "\"skills\":[],\"plugins\":[],\"uuid\":");
	bj(b, u);
	bs(b, ",\"fast_mode_state\":\"off\"}");
	out_line(false);
}

static void msg_usage(Buf *b, long long in, long long out)
{
	bf(b, "{\"input_tokens\":%lld,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,"
	      "\"output_tokens\":%lld,\"service_tier\":\"standard\"}", in, out);
}

/* An API call was answered: it is paid for (a line in
 * $FAKE_CLAUDE_DIR/spend) before its message reaches the stream. */
static void pay(void)
{
	static Buf p;
	char line[64];
	double c = call_cost();
	r.answered++;
	r.spent += c;
	path(&p, "spend", NULL);
	int fd = open(p.p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	int n = snprintf(line, sizeof line, "%.17g\n", c);
	if (fd < 0 || write(fd, line, (size_t)n) != n)
		fail(2, "fake-claude: cannot write %s: %s", p.p, strerror(errno));
	close(fd);
}

/* An assistant message with one content block (JSON text in block): one
 * API call, paid for. */
static void emit_assistant(const char *block, const char *stop)
{
	char id[48];
	pay();
	rid(id, sizeof id, "msg_fake_");
	Buf *b = &r.line;
	bs(b, "{\"type\":\"assistant\",\"message\":{\"id\":");
	bj(b, id);
	bs(b, ",\"type\":\"message\",\"role\":\"assistant\",\"model\":");
	bj(b, r.model_wire);
	bs(b, ",\"content\":[");
	bs(b, block);
	bs(b, "],\"stop_reason\":");
	bj(b, stop);
	bs(b, ",\"stop_sequence\":null,\"usage\":");
	msg_usage(b, r.in_tok, r.out_tok);
	bs(b, "}");
	tail();
	bs(b, "}");
	out_line(false);
}

static void emit_text(const char *text, size_t n)
{
	Buf blk = {0};
	bs(&blk, "{\"type\":\"text\",\"text\":");
	bjn(&blk, text, n);
	bs(&blk, "}");
	emit_assistant(blk.p, "end_turn");
	free(blk.p);
}

static void emit_result(bool is_error, int api_status, int turns, double cost, long long in,
			long long out)
{
	int64_t dur = mono_ms() - r.t0;
	char u[37];
	uuid4(u);
	Buf *b = &r.line;
	bf(b, "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":%s,\"api_error_status\":",
	   is_error ? "true" : "false");
	if (api_status)
		bf(b, "%d", api_status);
	else
		bs(b, "null");
	bf(b, ",\"duration_ms\":%lld,\"duration_api_ms\":%lld,\"num_turns\":%d,\"result\":",
	   (long long)dur, (long long)(turns && !is_error ? dur / 2 : 0), turns);
	bjn(b, r.result.p ? r.result.p : "", r.result.n);
	bs(b, ",\"stop_reason\":");
	bj(b, is_error ? "stop_sequence" : "end_turn");
	bs(b, ",\"session_id\":");
	bj(b, r.sid);
	bs(b, ",\"total_cost_usd\":");
	bnum(b, cost);
	bf(b, ",\"usage\":{\"input_tokens\":%lld,\"cache_creation_input_tokens\":0,"
	      "\"cache_read_input_tokens\":0,\"output_tokens\":%lld,\"server_tool_use\":"
	      "{\"web_search_requests\":0,\"web_fetch_requests\":0},\"service_tier\":\"standard\"},"
	      "\"modelUsage\":{", in, out);
	if (in || out) {
		bj(b, r.model_init.p);
		bf(b, ":{\"inputTokens\":%lld,\"outputTokens\":%lld,\"cacheReadInputTokens\":0,"
		      "\"cacheCreationInputTokens\":0,\"webSearchRequests\":0,\"costUSD\":", in, out);
		bnum(b, cost);
		bf(b, ",\"contextWindow\":%d,\"maxOutputTokens\":64000}", r.one_m ? 1000000 : 200000);
	}
	bs(b, "},\"permission_denials\":[],\"terminal_reason\":\"completed\",\"fast_mode_state\":\"off\","
	      "\"uuid\":");
	bj(b, u);
	bs(b, "}");
	out_line(true);
	if (r.fmt == FMT_TEXT) {
		badd(&r.result, "\n", 1);
		write_all(1, r.result.p, r.result.n);
	}
}

/* The synthetic assistant message and the result of a failed API call. */
static void api_failure(int status, const char *kind)
{
	char id[37];
	uuid4(id);
	Buf *b = &r.line;
	bs(b, "{\"type\":\"assistant\",\"message\":{\"id\":");
	bj(b, id);
	bs(b, ",\"container\":null,\"model\":\"<synthetic>\",\"role\":\"assistant\",\"stop_reason\":"
	      "\"stop_sequence\",\"stop_sequence\":\"\",\"type\":\"message\",\"usage\":");
	msg_usage(b, 0, 0);
	bs(b, ",\"content\":[{\"type\":\"text\",\"text\":");
	bjn(b, r.result.p, r.result.n);
	bs(b, "}]}");
	tail();
	bs(b, ",\"error\":");
	bj(b, kind);
	bs(b, "}");
	out_line(false);
	emit_result(true, status, 1, 0, 0, 0);
	exit(1);
}

/* The result of a turn stopped by --max-budget-usd, as the CLI 2.1.197
 * writes it: no result text, the cost of every call answered, the cap in
 * `errors`. */
static void budget_result(void)
{
	char u[37];
	uuid4(u);
	Buf *b = &r.line;
	bf(b, "{\"type\":\"result\",\"subtype\":\"error_max_budget_usd\",\"duration_ms\":%lld,"
	      "\"duration_api_ms\":0,\"is_error\":true,\"num_turns\":%d,\"stop_reason\":\"end_turn\","
	      "\"session_id\":", (long long)(mono_ms() - r.t0), r.answered);
	bj(b, r.sid);
	bs(b, ",\"total_cost_usd\":");
	bnum(b, r.spent);
	bs(b, ",\"usage\":{\"input_tokens\":0,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,"
	      "\"output_tokens\":0},\"modelUsage\":{},\"permission_denials\":[],\"fast_mode_state\":\"off\","
	      "\"uuid\":");
	bj(b, u);
	bf(b, ",\"errors\":[\"Reached maximum budget ($%.15g)\"]}", r.cap);
	out_line(true);
}

/* After an API call's message was printed: once the turn's cost reached
 * --max-budget-usd, end it as the CLI does, with exit status 1. */
static void call_done(void)
{
	if (r.cap > 0 && r.spent >= r.cap) {
		budget_result();
		exit(1);
	}
}

static void step_error(void)
{
	/* the mock API's error bodies, as the real CLI words them */
	int s = r.status;
	const char *kind = "unknown";
	if (s == 429) {
		kind = "rate_limit";
		bs(&r.result, "API Error: Request rejected (429) · Rate limited");
	} else if (s == 401) {
		kind = "authentication_failed";
		bs(&r.result, "Invalid API key · Fix external API key");
	} else if (s == 404) {
		kind = "invalid_request";
		bf(&r.result, "There's an issue with the selected model (%s). It may not exist or you may "
			      "not have access to it. Run --model to pick a different model.", r.model_wire);
	} else if (s >= 500) {
		kind = "server_error";
		bf(&r.result, "API Error: %d %s. This is a server-side issue, usually temporary — try again "
			      "in a moment.", s, s == 529 ? "Overloaded" : "Internal server error");
	} else {
		const char *m = s == 400 ? "Invalid request" : s == 403 ? "Permission denied"
			      : s == 413 ? "Request too large" : "Internal server error";
		kind = s == 403 ? "authentication_failed" : s == 400 || s == 413 ? "invalid_request" : "unknown";
		bf(&r.result, "API Error: %d %s", s, m);
	}
	api_failure(s, kind);
}

static void step_limit(void)
{
	static const char *const mon[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
					  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	time_t now = time(NULL), at = now + (time_t)r.secs;
	char u[37];
	uuid4(u);
	bf(&r.line, "{\"type\":\"rate_limit_event\",\"rate_limit_info\":{\"status\":\"rejected\","
		    "\"resetsAt\":%lld,\"rateLimitType\":\"%s\",\"isUsingOverage\":false},\"uuid\":",
	   (long long)at, r.claim);
	bj(&r.line, u);
	bs(&r.line, ",\"session_id\":");
	bj(&r.line, r.sid);
	bs(&r.line, "}");
	out_line(false);
	struct tm tm;
	gmtime_r(&at, &tm);
	int h = tm.tm_hour % 12 ? tm.tm_hour % 12 : 12;
	const char *what = !strcmp(r.claim, "five_hour")	   ? "session limit"
			   : !strcmp(r.claim, "seven_day")	   ? "weekly limit"
			   : !strcmp(r.claim, "seven_day_opus")   ? "Opus limit"
			   : !strcmp(r.claim, "seven_day_sonnet") ? "Sonnet limit"
								  : "limit";
	bf(&r.result, "You've hit your %s · resets ", what);
	if (at - now > 24 * 3600)
		bf(&r.result, "%s %d, ", mon[tm.tm_mon], tm.tm_mday);
	if (tm.tm_min)
		bf(&r.result, "%d:%02d", h, tm.tm_min);
	else
		bf(&r.result, "%d", h);
	bs(&r.result, tm.tm_hour < 12 ? "am (UTC)" : "pm (UTC)");
	api_failure(429, "rate_limit");
}

/* Run cmd with /bin/sh -c in the cwd, stdin from /dev/null. */
static int run_sh(const char *cmd, Buf *out, Buf *err)
{
	int po[2], pe[2];
	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0)
		fail(2, "fake-claude: pipe: %s", strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		fail(2, "fake-claude: fork: %s", strerror(errno));
	if (pid == 0) {
		int dn = open("/dev/null", O_RDONLY);
		if (dn >= 0)
			dup2(dn, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		setenv("CLAUDECODE", "1", 1); /* as the real CLI's Bash tool does */
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
	Buf *dst[2] = {out, err};
	int open_fds = 2;
	char tmp[65536];
	while (open_fds) {
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !fds[i].revents)
				continue;
			ssize_t n = read(fds[i].fd, tmp, sizeof tmp);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
			} else
				badd(dst[i], tmp, (size_t)n);
		}
	}
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void chomp(Buf *b)
{
	while (b->n && (b->p[b->n - 1] == '\n' || b->p[b->n - 1] == '\r'))
		b->p[--b->n] = 0;
}

static void step_reply(void);

static void step_bash(void)
{
	char tid[48];
	rid(tid, sizeof tid, "toolu_fake_");
	Buf blk = {0}, so = {0}, se = {0}, content = {0};
	bs(&blk, "{\"type\":\"tool_use\",\"id\":");
	bj(&blk, tid);
	bs(&blk, ",\"name\":\"Bash\",\"input\":{\"command\":");
	bjn(&blk, r.cmd.p, r.cmd.n);
	bs(&blk, ",\"description\":\"Run the command\"}}");
	emit_assistant(blk.p, "tool_use");
	call_done();

	bool is_error;
	if (o.no_bash) {
		is_error = true;
		bs(&content, "<tool_use_error>Error: No such tool available: Bash</tool_use_error>");
	} else {
		int code = run_sh(r.cmd.p, &so, &se);
		chomp(&so);
		chomp(&se);
		is_error = code != 0;
		if (is_error)
			bf(&content, "Exit code %d", code);
		Buf *parts[2] = {&so, &se};
		for (int i = 0; i < 2; i++) {
			if (!parts[i]->n)
				continue;
			if (content.n)
				badd(&content, "\n", 1);
			badd(&content, parts[i]->p, parts[i]->n);
		}
		if (!content.n)
			bs(&content, "(Bash completed with no output)");
	}
	char u[37];
	uuid4(u);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	char stamp[96];
	snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
	Buf *b = &r.line;
	bs(b, "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"tool_use_id\":");
	bj(b, tid);
	bs(b, ",\"type\":\"tool_result\",\"content\":");
	bjn(b, content.p, content.n);
	bf(b, ",\"is_error\":%s}]},\"parent_tool_use_id\":null,\"session_id\":", is_error ? "true" : "false");
	bj(b, r.sid);
	bs(b, ",\"uuid\":");
	bj(b, u);
	bs(b, ",\"timestamp\":");
	bj(b, stamp);
	bs(b, ",\"tool_use_result\":");
	if (o.no_bash)
		bj(b, "Error: No such tool available: Bash");
	else {
		bs(b, "{\"stdout\":");
		bjn(b, so.p ? so.p : "", so.n);
		bs(b, ",\"stderr\":");
		bjn(b, se.p ? se.p : "", se.n);
		bs(b, ",\"interrupted\":false,\"isImage\":false}");
	}
	bs(b, "}");
	out_line(false);
	free(blk.p);
	free(so.p);
	free(se.p);
	free(content.p);

	step_reply();
}

/* The last call of a turn: the text, then the result. */
static void step_reply(void)
{
	emit_text(r.text.p ? r.text.p : "", r.text.n);
	call_done();
	badd(&r.result, r.text.p ? r.text.p : "", r.text.n);
	emit_result(false, 0, r.answered, r.spent, r.answered * r.in_tok, r.answered * r.out_tok);
}

/* calls N => TEXT: N-1 tool calls that do nothing, then TEXT; each call
 * is paid as one API call. */
static void step_calls(void)
{
	for (long i = 1; i < r.calls; i++) {
		char tid[48];
		rid(tid, sizeof tid, "toolu_fake_");
		Buf blk = {0};
		bs(&blk, "{\"type\":\"tool_use\",\"id\":");
		bj(&blk, tid);
		bs(&blk, ",\"name\":\"Bash\",\"input\":{\"command\":\"true\",\"description\":\"Nothing\"}}");
		emit_assistant(blk.p, "tool_use");
		free(blk.p);
		call_done();
		Buf *b = &r.line;
		bs(b, "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"tool_use_id\":");
		bj(b, tid);
		bs(b, ",\"type\":\"tool_result\",\"content\":\"(Bash completed with no output)\",\"is_error\":false}]}");
		tail();
		bs(b, "}");
		out_line(false);
	}
	step_reply();
}

int main(int argc, char **argv)
{
	ac = argc;
	av = argv;
	r.t0 = mono_ms();
	parse_args();

	/* as the real CLI: no bypass of permissions as root outside a sandbox */
	const char *sandbox = getenv("IS_SANDBOX");
	if (geteuid() == 0 && (o.skip || (o.perm && !strcmp(o.perm, "bypassPermissions"))) &&
	    !(sandbox && (!strcmp(sandbox, "1") || !strcasecmp(sandbox, "true"))))
		fail(1, "--dangerously-skip-permissions cannot be used with root/sudo privileges for security "
			"reasons");
	if (!o.print)
		fail(2, "fake-claude: only print mode (-p) is emulated");
	r.fmt = !o.fmt || !strcmp(o.fmt, "text") ? FMT_TEXT : !strcmp(o.fmt, "json") ? FMT_JSON : FMT_STREAM;
	if (r.fmt == FMT_STREAM && !o.verbose)
		fail(1, "Error: When using --print, --output-format=stream-json requires --verbose");
	if (o.sid && !is_uuid(o.sid))
		fail(1, "Error: Invalid session ID. Must be a valid UUID.");
	if (o.sid && o.resume_given && !o.fork)
		fail(1, "Error: --session-id can only be used with --continue or --resume if "
			"--fork-session is also specified.");
	if (o.resume_given && (!o.resume || !is_uuid(o.resume)))
		fail(1, "Error: --resume requires a valid session ID or session title when used with --print. "
			"Usage: claude -p --resume <session-id|title>. \"%s\" is not a UUID and does not match "
			"any session title.", o.resume ? o.resume : "");
	if (o.budget) {
		char *end;
		double v = strtod(o.budget, &end);
		if (!*o.budget || *end || !(v > 0))
			fail(1, "Error: --max-budget-usd must be a positive number");
		r.cap = v;
	}
	resolve_model();
	static const char *const efforts[] = {"low", "medium", "high", "xhigh", "max", NULL};
	r.effort = "high";
	if (o.effort && !one_of(o.effort, efforts))
		fprintf(stderr, "Warning: Unknown --effort value '%s' — ignoring it. Valid values: low, "
				"medium, high, xhigh, max.\n", o.effort);
	else if (o.effort)
		r.effort = o.effort;
	if (strstr(r.model_wire, "haiku"))
		r.effort = NULL;

	r.dir = getenv("FAKE_CLAUDE_DIR");
	if (!r.dir || !*r.dir)
		fail(2, "fake-claude: FAKE_CLAUDE_DIR must name the fake's state folder");
	if (!getcwd(r.cwd, sizeof r.cwd))
		fail(2, "fake-claude: getcwd: %s", strerror(errno));
	read_prompt();

	Buf p = {0};
	mkdir_p(r.dir);
	path(&p, "sessions", NULL);
	mkdir_p(p.p);
	path(&p, "counters", NULL);
	mkdir_p(p.p);
	free(p.p);

	open_session();
	choose_step();
	write_log();

	emit_init();
	const char *delay = getenv("FAKE_CLAUDE_DELAY_MS");
	if (delay && *delay)
		sleep_s(strtod(delay, NULL) / 1000);
	switch (r.step) {
	case S_ERROR: step_error(); break;
	case S_LIMIT: step_limit(); break;
	case S_BASH: step_bash(); break;
	case S_CALLS: step_calls(); break;
	case S_HANG:
		sleep_s(r.secs);
		r.text.n = 0;
		step_reply();
		break;
	default: step_reply(); break;
	}
	return 0;
}
