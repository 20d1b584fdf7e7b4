/*
 * fake_claude.c - a fast stand-in for the Claude Code CLI (`claude -p`), for
 * raymond's tests.  Built as build/tests/fake-claude.
 *
 *   fake-claude -p --output-format stream-json --verbose
 *       [--permission-mode M | --dangerously-skip-permissions] [--model M]
 *       [--effort E] [--session-id UUID] [--resume UUID [--fork-session]]
 *       [--max-budget-usd X] [--disallowed-tools LIST] [--allowed-tools LIST]
 *       [--settings FILE-OR-JSON] [--mcp-config FILE...] [--max-turns N]
 *       [--tools LIST] [--append-system-prompt TEXT] -- PROMPT
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
 *   events.jsonl      one JSON object per hook run, tool result and text
 *                     added to the model's context, as each happens
 *   spend             one line per answered API call: its cost in dollars
 *
 * Tools act for real (Bash, Write, Edit, Read; others answer "ok"), and
 * the command hooks of --settings run around them as the CLI runs them
 * (tests/README.md, "Tools and hooks in the fake"): PreToolUse,
 * PostToolUse, PostToolUseFailure, UserPromptSubmit and Stop.  --max-turns
 * is enforced before each API call.
 *
 * --max-budget-usd is enforced as the CLI enforces it: checked after each
 * API call, so the call that reaches the cap is paid in full.
 *
 * As root, --dangerously-skip-permissions (or bypassPermissions) needs
 * IS_SANDBOX=1, as for the real CLI.  FAKE_CLAUDE_DELAY_MS sleeps that long
 * after the init line; FAKE_CLAUDE_NO_HOOKS=1 runs no hook of --settings,
 * as under a managed policy that disables them.  Exit status:
 * 0 success, 1 an error of the real CLI, 2 a misuse of the fake itself.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
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

/* ---- JSON input ------------------------------------------------------- */

/* A parsed JSON value.  Strings hold their decoded UTF-8 bytes; numbers
 * keep their text, so a value written back reads as it came. */
enum { J_NULL, J_FALSE, J_TRUE, J_NUM, J_STR, J_ARR, J_OBJ };
typedef struct J {
	int t;
	char *s; /* J_STR: the bytes; J_NUM: the text */
	size_t sn;
	struct J **kid; /* J_ARR, J_OBJ: the values */
	char **key;     /* J_OBJ: the keys */
	size_t n;
} J;

static void jfree(J *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		jfree(v->kid[i]);
		if (v->key)
			free(v->key[i]);
	}
	free(v->kid);
	free(v->key);
	free(v->s);
	free(v);
}

static J *jnew(int t)
{
	J *v = calloc(1, sizeof *v);
	if (!v)
		oom();
	v->t = t;
	return v;
}

static void jskip(const char **p, const char *e)
{
	while (*p < e && ws(**p))
		(*p)++;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
		: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static bool jhex4(const char **p, const char *e, unsigned *u)
{
	*u = 0;
	for (int i = 0; i < 4; i++) {
		int h = *p < e ? hexval(**p) : -1;
		if (h < 0)
			return false;
		*u = *u * 16 + (unsigned)h;
		(*p)++;
	}
	return true;
}

static void utf8_put(Buf *b, unsigned c)
{
	char o[4];
	size_t n;
	if (c < 0x80)
		o[0] = (char)c, n = 1;
	else if (c < 0x800)
		o[0] = (char)(0xC0 | c >> 6), o[1] = (char)(0x80 | (c & 63)), n = 2;
	else if (c < 0x10000)
		o[0] = (char)(0xE0 | c >> 12), o[1] = (char)(0x80 | (c >> 6 & 63)),
		o[2] = (char)(0x80 | (c & 63)), n = 3;
	else
		o[0] = (char)(0xF0 | c >> 18), o[1] = (char)(0x80 | (c >> 12 & 63)),
		o[2] = (char)(0x80 | (c >> 6 & 63)), o[3] = (char)(0x80 | (c & 63)), n = 4;
	badd(b, o, n);
}

/* A string at *p (on its opening quote) into b; false when malformed. */
static bool jstring(const char **p, const char *e, Buf *b)
{
	(*p)++;
	while (*p < e && **p != '"') {
		unsigned char c = (unsigned char)**p;
		if (c < 0x20)
			return false;
		if (c != '\\') {
			badd(b, *p, 1);
			(*p)++;
			continue;
		}
		if (++*p >= e)
			return false;
		char x = *(*p)++;
		unsigned u, lo;
		switch (x) {
		case '"': case '\\': case '/': badd(b, &x, 1); break;
		case 'b': bs(b, "\b"); break;
		case 'f': bs(b, "\f"); break;
		case 'n': bs(b, "\n"); break;
		case 'r': bs(b, "\r"); break;
		case 't': bs(b, "\t"); break;
		case 'u':
			if (!jhex4(p, e, &u))
				return false;
			if (u >= 0xD800 && u < 0xDC00 && *p + 1 < e && (*p)[0] == '\\' && (*p)[1] == 'u') {
				const char *q = *p + 2;
				if (jhex4(&q, e, &lo) && lo >= 0xDC00 && lo < 0xE000) {
					u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
					*p = q;
				}
			}
			utf8_put(b, u >= 0xD800 && u < 0xE000 ? 0xFFFD : u);
			break;
		default: return false;
		}
	}
	if (*p >= e)
		return false;
	(*p)++;
	badd(b, "", 0);
	return true;
}

/* The value at *p, which moves past it; NULL when malformed. */
static J *jvalue(const char **p, const char *e, int depth)
{
	jskip(p, e);
	if (*p >= e || depth > 200)
		return NULL;
	char c = **p;
	if (c == '"') {
		Buf b = {0};
		if (!jstring(p, e, &b)) {
			free(b.p);
			return NULL;
		}
		J *v = jnew(J_STR);
		v->s = b.p ? b.p : strdup("");
		v->sn = b.n;
		return v;
	}
	if (c == '{' || c == '[') {
		J *v = jnew(c == '{' ? J_OBJ : J_ARR);
		size_t cap = 0;
		(*p)++;
		jskip(p, e);
		if (*p < e && **p == (c == '{' ? '}' : ']')) {
			(*p)++;
			return v;
		}
		for (;;) {
			char *k = NULL;
			if (c == '{') {
				Buf kb = {0};
				jskip(p, e);
				if (*p >= e || **p != '"' || !jstring(p, e, &kb)) {
					free(kb.p);
					goto bad;
				}
				k = kb.p ? kb.p : strdup("");
				jskip(p, e);
				if (*p >= e || **p != ':') {
					free(k);
					goto bad;
				}
				(*p)++;
			}
			J *x = jvalue(p, e, depth + 1);
			if (!x) {
				free(k);
				goto bad;
			}
			if (v->n == cap) {
				cap = cap ? cap * 2 : 4;
				J **nk = realloc(v->kid, cap * sizeof *nk);
				char **nkey = c == '{' ? realloc(v->key, cap * sizeof *nkey) : NULL;
				if (!nk || (c == '{' && !nkey))
					oom();
				v->kid = nk;
				if (c == '{')
					v->key = nkey;
			}
			if (c == '{')
				v->key[v->n] = k;
			v->kid[v->n++] = x;
			jskip(p, e);
			if (*p < e && **p == ',') {
				(*p)++;
				continue;
			}
			if (*p < e && **p == (c == '{' ? '}' : ']')) {
				(*p)++;
				return v;
			}
			goto bad;
		}
	bad:
		jfree(v);
		return NULL;
	}
	static const char *const lits[] = {"null", "false", "true"};
	for (int i = 0; i < 3; i++) {
		size_t ln = strlen(lits[i]);
		if ((size_t)(e - *p) >= ln && !strncmp(*p, lits[i], ln)) {
			*p += ln;
			return jnew(J_NULL + i);
		}
	}
	const char *s = *p;
	if (*p < e && **p == '-')
		(*p)++;
	bool digits = false;
	while (*p < e && ((**p >= '0' && **p <= '9') || **p == '.' || **p == 'e' || **p == 'E' ||
			  ((**p == '+' || **p == '-') && *p > s && ((*p)[-1] | 32) == 'e'))) {
		digits |= **p >= '0' && **p <= '9';
		(*p)++;
	}
	if (!digits)
		return NULL;
	J *v = jnew(J_NUM);
	v->s = strndup(s, (size_t)(*p - s));
	if (!v->s)
		oom();
	v->sn = (size_t)(*p - s);
	return v;
}

/* The whole of s[0..n) as one JSON value; NULL when it is not one. */
static J *jparse(const char *s, size_t n)
{
	const char *p = s, *e = s + n;
	J *v = jvalue(&p, e, 0);
	jskip(&p, e);
	if (v && p != e) {
		jfree(v);
		return NULL;
	}
	return v;
}

static J *jget(const J *o, const char *key)
{
	if (!o || o->t != J_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->key[i], key))
			return o->kid[i];
	return NULL;
}

/* A member's string value, or NULL. */
static const char *jgets(const J *o, const char *key)
{
	const J *v = jget(o, key);
	return v && v->t == J_STR ? v->s : NULL;
}

static void jdump(Buf *b, const J *v)
{
	switch (v->t) {
	case J_NULL: bs(b, "null"); break;
	case J_FALSE: bs(b, "false"); break;
	case J_TRUE: bs(b, "true"); break;
	case J_NUM: badd(b, v->s, v->sn); break;
	case J_STR: bjn(b, v->s, v->sn); break;
	default:
		bs(b, v->t == J_OBJ ? "{" : "[");
		for (size_t i = 0; i < v->n; i++) {
			if (i)
				bs(b, ",");
			if (v->t == J_OBJ) {
				bj(b, v->key[i]);
				bs(b, ":");
			}
			jdump(b, v->kid[i]);
		}
		bs(b, v->t == J_OBJ ? "}" : "]");
	}
}

/* ---- options ---------------------------------------------------------- */

enum { F_FLAG, F_VAL, F_OPTVAL, F_LIST, F_NOTEMU_FLAG, F_NOTEMU_VAL };
enum {
	O_IGNORE, O_PRINT, O_VERBOSE, O_FMT, O_PERM, O_SKIP, O_MODEL, O_EFFORT, O_SID,
	O_RESUME, O_FORK, O_BUDGET, O_DISALLOW, O_VERSION, O_HELP, O_NOTEMU, O_ALLOW, O_MCP, O_TOOLS,
	O_SYSPROMPT, O_SETTINGS, O_MAX_TURNS
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
	{"--allowed-tools", 0, F_LIST, O_ALLOW, "--allowed-tools, --allowedTools <tools...>"},
	{"--allowedTools", 0, F_LIST, O_ALLOW, "--allowed-tools, --allowedTools <tools...>"},
	{"--mcp-config", 0, F_LIST, O_MCP, "--mcp-config <configs...>"},
	{"--append-system-prompt", 0, F_VAL, O_SYSPROMPT, "--append-system-prompt <prompt>"},
	{"--settings", 0, F_VAL, O_SETTINGS, "--settings <file-or-json>"},
	{"--max-turns", 0, F_VAL, O_MAX_TURNS, "--max-turns <turns>"},
	{"--tools", 0, F_LIST, O_TOOLS, "--tools <tools...>"},
	{"--version", 'v', F_FLAG, O_VERSION, "-v, --version"},
	{"--help", 'h', F_FLAG, O_HELP, "-h, --help"},
	/* accepted and ignored: they change nothing the fake emulates */
	{"--add-dir", 0, F_LIST, O_IGNORE, "--add-dir <directories...>"},
	{"--strict-mcp-config", 0, F_FLAG, O_IGNORE, "--strict-mcp-config"},
	{"--system-prompt", 0, F_VAL, O_IGNORE, "--system-prompt <prompt>"},
	{"--fallback-model", 0, F_VAL, O_IGNORE, "--fallback-model <model>"},
	{"--setting-sources", 0, F_VAL, O_IGNORE, "--setting-sources <sources>"},
	{"--max-turns", 0, F_VAL, O_IGNORE, "--max-turns <turns>"},
	/* real options the fake does not emulate: a loud failure, not a silent pass */
	{"--continue", 'c', F_NOTEMU_FLAG, O_NOTEMU, "-c, --continue"},
	{"--input-format", 0, F_NOTEMU_VAL, O_NOTEMU, "--input-format <format>"},
	{"--include-partial-messages", 0, F_NOTEMU_FLAG, O_NOTEMU, "--include-partial-messages"},
	{"--replay-user-messages", 0, F_NOTEMU_FLAG, O_NOTEMU, "--replay-user-messages"},
	{"--json-schema", 0, F_NOTEMU_VAL, O_NOTEMU, "--json-schema <schema>"},
	{"--agents", 0, F_NOTEMU_VAL, O_NOTEMU, "--agents <json>"},
	{"--no-session-persistence", 0, F_NOTEMU_FLAG, O_NOTEMU, "--no-session-persistence"},
	{"--debug", 'd', F_NOTEMU_FLAG, O_NOTEMU, "-d, --debug [filter]"},
};

static struct {
	bool print, verbose, skip, fork, resume_given, no_bash, tools_given;
	const char *fmt, *perm, *model, *effort, *sid, *resume, *budget;
	const char *append, *settings, *max_turns;
	/* the values given, as the bodies of JSON arrays (log.jsonl) */
	Buf allowed, disallowed, mcp;
	Buf tools; /* --tools: the only built-in tools offered ("" none) */
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
	      "--fork-session, --max-budget-usd, --disallowed-tools, --allowed-tools,\n"
	      "--settings (command hooks), --mcp-config, --max-turns, --tools,\n"
	      "--append-system-prompt, --version.\n"
	      "The reply is scripted by a `MOCK: STEP || ...` line in the prompt\n"
	      "(tests/README.md); state lives in $FAKE_CLAUDE_DIR.\n",
	      stdout);
}

/* One value of --allowed-tools or --disallowed-tools may list several
 * tools, "Bash,Edit" or "Bash Edit"; a rule with a pattern, "Bash(git
 * push:*)", is one entry. */
static void scan_tools(Buf *list, const char *p)
{
	while (*p) {
		size_t n = 0;
		int depth = 0;
		while (p[n] && (depth || (p[n] != ',' && p[n] != ' '))) {
			depth += p[n] == '(' ? 1 : p[n] == ')' && depth ? -1 : 0;
			n++;
		}
		if (list == &o.disallowed && n == 4 && !strncmp(p, "Bash", 4))
			o.no_bash = true;
		if (n) {
			if (list->n)
				bs(list, ",");
			bjn(list, p, n);
		}
		p += n;
		p += strspn(p, ", ");
	}
}

/* An --mcp-config value is inline JSON or a file, which must exist; the
 * CLI names a missing one by its absolute path. */
static void check_mcp_config(const char *f)
{
	const char *s = f;
	size_t n = strlen(s);
	trim(&s, &n);
	struct stat st;
	if ((n && s[0] == '{') || stat(f, &st) == 0)
		return;
	char cwd[4096];
	bool rel = f[0] != '/' && getcwd(cwd, sizeof cwd);
	fail(1, "Error: Invalid MCP configuration:\nMCP config file not found: %s%s%s", rel ? cwd : "",
	     rel ? "/" : "", f);
}

static bool in_list(const Buf *list, const char *name);

/* A value of a list option: tool lists are split, others kept whole. */
static void list_value(int id, const char *v)
{
	if (id == O_DISALLOW || id == O_ALLOW) {
		scan_tools(id == O_ALLOW ? &o.allowed : &o.disallowed, v);
	} else if (id == O_TOOLS) {
		o.tools_given = true;
		scan_tools(&o.tools, v);
	} else if (id == O_MCP) {
		check_mcp_config(v);
		if (o.mcp.n)
			bs(&o.mcp, ",");
		bj(&o.mcp, v);
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
			/* the first entry wins, so an emulated option stays so
			 * if a later line also lists it as accepted and ignored */
			for (size_t k = 0; !op && k < sizeof OPTS / sizeof *OPTS; k++)
				if (strlen(OPTS[k].lng) == nl && !strncmp(OPTS[k].lng, a, nl))
					op = &OPTS[k];
		} else if (a[2] == 0) {
			for (size_t k = 0; !op && k < sizeof OPTS / sizeof *OPTS; k++)
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
				list_value(op->id, val);
			}
			while (i + 1 < ac && av[i + 1][0] != '-') {
				nv++;
				list_value(op->id, av[i + 1]);
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
		case O_SYSPROMPT: o.append = val; break;
		case O_SETTINGS: o.settings = val; break;
		case O_MAX_TURNS: o.max_turns = val; break;
		case O_VERSION: fputs(VERSION " (Claude Code)\n", stdout); exit(0);
		case O_HELP: usage(); exit(0);
		default: break;
		}
	}
}

/* ---- the run ---------------------------------------------------------- */

enum { FMT_TEXT, FMT_JSON, FMT_STREAM };
enum { S_NONE, S_REPLY, S_BASH, S_ERROR, S_LIMIT, S_HANG, S_LONG, S_UNKNOWN, S_CALLS, S_TOOL };
/* as the mock API logs them (`calls` is the fake's own) */
static const char *const STEP_NAMES[] = {"default", "reply", "bash", "error", "limit", "hang", "long", "unknown", "calls",
					 "tool"};

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
	char inv[48];     /* this invocation's id, in log.jsonl and events.jsonl */
	Buf tool;         /* tool: the tool's name */
	struct J *tool_input; /* tool: its input */
	Buf denials;      /* the body of the result's permission_denials */
	const char *stop_reason, *terminal; /* the result's, when not the usual ("": none) */
	long max_turns;   /* --max-turns (0: none) */
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

/* tool NAME JSON => TEXT: NAME, the input object, the reply after it. */
static bool parse_tool(const char *s, size_t n)
{
	size_t w = 0;
	while (w < n && !ws(s[w]))
		w++;
	const char *p = s + w, *e = s + n;
	J *in = jvalue(&p, e, 0);
	if (!w || !in || in->t != J_OBJ) {
		jfree(in);
		return false;
	}
	jskip(&p, e);
	if (p < e && !(e - p >= 2 && p[0] == '=' && p[1] == '>')) {
		jfree(in);
		return false;
	}
	badd(&r.tool, s, w);
	r.tool_input = in;
	if (p < e) {
		const char *x = p + 2;
		size_t xn = (size_t)(e - x);
		trim(&x, &xn);
		unescape_nl(&r.text, x, xn);
	}
	return true;
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
	} else if (w == 4 && !strncmp(t, "tool", 4) && parse_tool(rest, rn)) {
		r.step = S_TOOL;
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
	Buf *lists[3] = {&o.allowed, &o.disallowed, &o.mcp};
	static const char *const names[3] = {"allowed_tools", "disallowed_tools", "mcp_config"};
	for (int i = 0; i < 3; i++) {
		bf(&l, ",\"%s\":[", names[i]);
		if (lists[i]->n)
			badd(&l, lists[i]->p, lists[i]->n);
		bs(&l, "]");
	}
	bs(&l, ",\"append_system_prompt\":");
	bj(&l, o.append);
	bs(&l, ",\"settings\":");
	bj(&l, o.settings);
	rid(r.inv, sizeof r.inv, "inv_");
	bs(&l, ",\"invocation\":");
	bj(&l, r.inv);
	bs(&l, ",\"max_turns\":");
	if (r.max_turns)
		bf(&l, "%ld", r.max_turns);
	else
		bs(&l, "null");
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
	bool bash = !o.no_bash && (!o.tools_given || in_list(&o.tools, "Bash"));
	bs(b, bash ? ",\"tools\":[\"Bash\"]" : ",\"tools\":[]");
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
static void turn_limit(void);

static void emit_assistant(const char *block, const char *stop)
{
	char id[48];
	turn_limit();
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
	if (r.stop_reason && !*r.stop_reason)
		bs(b, "null");
	else
		bj(b, r.stop_reason ? r.stop_reason : is_error ? "stop_sequence" : "end_turn");
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
	bs(b, "},\"permission_denials\":[");
	if (r.denials.n)
		badd(b, r.denials.p, r.denials.n);
	bs(b, "]");
	if (!r.terminal || *r.terminal) {
		bs(b, ",\"terminal_reason\":");
		bj(b, r.terminal ? r.terminal : "completed");
	}
	bs(b, ",\"fast_mode_state\":\"off\",\"uuid\":");
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

/* Before each API call: a turn that would need more calls than
 * --max-turns ends as the CLI 2.1.197 ends it, with exit status 1 (the
 * call it would make counts in num_turns, not in the cost). */
static void turn_limit(void)
{
	if (!r.max_turns || r.answered < r.max_turns)
		return;
	char u[37];
	uuid4(u);
	Buf *b = &r.line;
	bf(b, "{\"type\":\"result\",\"subtype\":\"error_max_turns\",\"duration_ms\":%lld,"
	      "\"duration_api_ms\":0,\"is_error\":true,\"num_turns\":%d,\"stop_reason\":\"tool_use\","
	      "\"session_id\":", (long long)(mono_ms() - r.t0), r.answered + 1);
	bj(b, r.sid);
	bs(b, ",\"total_cost_usd\":");
	bnum(b, r.spent);
	bf(b, ",\"usage\":{\"input_tokens\":%lld,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,"
	      "\"output_tokens\":%lld},\"modelUsage\":{},\"permission_denials\":[", r.answered * r.in_tok,
	   r.answered * r.out_tok);
	if (r.denials.n)
		badd(b, r.denials.p, r.denials.n);
	bs(b, "],\"terminal_reason\":\"max_turns\",\"fast_mode_state\":\"off\",\"uuid\":");
	bj(b, u);
	bf(b, ",\"errors\":[\"Reached maximum number of turns (%ld)\"]}", r.max_turns);
	out_line(true);
	exit(1);
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

/* The process group of the hook running now, or 0.  A hook runs in a
 * group of its own (so its timeout ends all of it); when the fake is told
 * to stop, that group goes with it. */
static volatile sig_atomic_t hook_group;

static void on_stop(int sig)
{
	if (hook_group)
		kill(-(pid_t)hook_group, SIGKILL);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Run cmd with /bin/sh -c in the cwd; its output into out and err.  The
 * Bash tool gives no input (stdin /dev/null) and no time limit; a hook
 * gets `in` on stdin, runs in a process group of its own, and is killed
 * with that group once `seconds` passed (then *timed_out, and the status
 * is -1).  Returns the exit status, or 128 + the signal that ended it. */
static int run_cmd(const char *cmd, const Buf *in, double seconds, Buf *out, Buf *err, bool *timed_out)
{
	int po[2], pe[2], pi[2] = {-1, -1};
	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0 || (in && pipe2(pi, O_CLOEXEC) < 0))
		fail(2, "fake-claude: pipe: %s", strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		fail(2, "fake-claude: fork: %s", strerror(errno));
	if (pid == 0) {
		int dn = in ? pi[0] : open("/dev/null", O_RDONLY);
		if (in)
			setpgid(0, 0);
		if (dn >= 0)
			dup2(dn, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		signal(SIGPIPE, SIG_DFL);
		if (in)
			setenv("CLAUDE_PROJECT_DIR", r.cwd, 1);
		else
			setenv("CLAUDECODE", "1", 1); /* as the real CLI's Bash tool does */
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	size_t sent = 0;
	if (in) {
		hook_group = pid;
		close(pi[0]);
		fcntl(pi[1], F_SETFL, O_NONBLOCK);
	}
	/* a hook that exits without reading its input must not kill us */
	void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
	struct pollfd fds[3] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}, {in ? pi[1] : -1, POLLOUT, 0}};
	Buf *dst[2] = {out, err};
	int64_t deadline = seconds > 0 ? mono_ms() + (int64_t)(seconds * 1000) : -1;
	*timed_out = false;
	char tmp[65536];
	while (fds[0].fd >= 0 || fds[1].fd >= 0) {
		if (fds[2].fd >= 0 && sent == in->n) {
			close(fds[2].fd);
			fds[2].fd = -1;
		}
		int wait = -1;
		if (deadline >= 0) {
			int64_t left = deadline - mono_ms();
			if (left <= 0) {
				*timed_out = true;
				kill(-pid, SIGKILL);
				break;
			}
			wait = (int)left;
		}
		int k = poll(fds, 3, wait);
		if (k < 0 && errno != EINTR)
			break;
		if (k <= 0)
			continue;
		if (fds[2].fd >= 0 && fds[2].revents) {
			ssize_t w = write(fds[2].fd, in->p + sent, in->n - sent);
			if (w > 0)
				sent += (size_t)w;
			else if (w < 0 && errno != EAGAIN && errno != EINTR)
				sent = in->n; /* the hook does not read its input */
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
			} else
				badd(dst[i], tmp, (size_t)n);
		}
	}
	for (int i = 0; i < 3; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	signal(SIGPIPE, old_pipe);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	hook_group = 0;
	if (*timed_out)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void chomp(Buf *b)
{
	while (b->n && (b->p[b->n - 1] == '\n' || b->p[b->n - 1] == '\r'))
		b->p[--b->n] = 0;
}

/* ---- settings hooks --------------------------------------------------- */

/* One command hook of --settings, as Claude Code reads it. */
typedef struct {
	const char *event, *matcher, *command;
	double timeout;
} Hook;

static struct {
	J *root; /* the settings document, which owns the strings below */
	Hook *v;
	size_t n;
} hk;

/* What the hooks of one event decided, all of them together. */
typedef struct {
	bool deny, block, exit2, stop;
	Buf reason;      /* deny: permissionDecisionReason */
	Buf said, text;  /* block: "[CMD]: STDERR" after exit 2, else the reason; and STDERR or the reason */
	const char *cmd; /* block: the hook's command */
	J *updated;      /* updatedInput of an allow */
} Outcome;

static void load_settings(void)
{
	if (!o.settings)
		return;
	const char *s = o.settings;
	size_t n = strlen(s);
	trim(&s, &n);
	if (n >= 2 && s[0] == '{' && s[n - 1] == '}') {
		/* as the CLI tells JSON from a file name */
		hk.root = jparse(s, n);
		if (!hk.root)
			fail(1, "Error: Invalid JSON provided to --settings");
	} else {
		size_t len;
		char *text = slurp(o.settings, &len);
		if (!text)
			fail(1, "Error: Settings file not found: %s", o.settings);
		hk.root = jparse(text, len);
		free(text);
		if (!hk.root)
			fail(1, "Error: Invalid JSON in settings file: %s", o.settings);
	}
	/* A managed policy that turns every hook off (disableAllHooks in
	 * managed settings, which no other settings override): the hooks
	 * are read and never run. */
	const char *off = getenv("FAKE_CLAUDE_NO_HOOKS");
	J *hooks = jget(hk.root, "hooks");
	if (!hooks || hooks->t != J_OBJ || (off && *off))
		return;
	for (size_t e = 0; e < hooks->n; e++) {
		J *groups = hooks->kid[e];
		for (size_t g = 0; groups->t == J_ARR && g < groups->n; g++) {
			J *cmds = jget(groups->kid[g], "hooks");
			for (size_t c = 0; cmds && cmds->t == J_ARR && c < cmds->n; c++) {
				const char *type = jgets(cmds->kid[c], "type"), *cmd = jgets(cmds->kid[c], "command");
				if (!type || strcmp(type, "command") || !cmd)
					continue;
				Hook *nv = realloc(hk.v, (hk.n + 1) * sizeof *nv);
				if (!nv)
					oom();
				hk.v = nv;
				J *t = jget(cmds->kid[c], "timeout");
				hk.v[hk.n++] = (Hook){hooks->key[e], jgets(groups->kid[g], "matcher"), cmd,
						      t && t->t == J_NUM && strtod(t->s, NULL) > 0 ? strtod(t->s, NULL) : 600};
			}
		}
	}
}

/* Claude Code's matcher: none, "" or "*" match every tool; letters, digits,
 * _ and | name tools exactly; anything else is a regular expression. */
static bool matcher_matches(const char *m, const char *tool)
{
	if (!m || !*m || !strcmp(m, "*"))
		return true;
	if (!tool)
		return false;
	if (m[strspn(m, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_|")] == 0) {
		size_t tn = strlen(tool);
		for (const char *p = m; *p;) {
			size_t n = strcspn(p, "|");
			if (n == tn && !strncmp(p, tool, n))
				return true;
			p += n + (p[n] == '|');
		}
		return false;
	}
	regex_t re;
	if (regcomp(&re, m, REG_EXTENDED | REG_NOSUB))
		return false;
	bool hit = regexec(&re, tool, 0, NULL, 0) == 0;
	regfree(&re);
	return hit;
}

/* One line in $FAKE_CLAUDE_DIR/events.jsonl, written at once so the lines
 * of parallel invocations never interleave.  body is the JSON object's
 * members after "invocation" and "session". */
static void record(const char *body)
{
	static Buf l, p;
	l.n = 0;
	bs(&l, "{\"invocation\":");
	bj(&l, r.inv);
	bs(&l, ",\"session\":");
	bj(&l, r.sid);
	bs(&l, body);
	bs(&l, "}\n");
	path(&p, "events.jsonl", NULL);
	int fd = open(p.p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		fail(2, "fake-claude: cannot open %s: %s", p.p, strerror(errno));
	write_all(fd, l.p, l.n);
	close(fd);
}

/* A text the model would see beside a tool result (a system reminder). */
static void record_context(const char *text)
{
	Buf b = {0};
	bs(&b, ",\"kind\":\"context\",\"text\":");
	bj(&b, text);
	record(b.p);
	free(b.p);
}

static const char *perm_mode(void)
{
	return o.skip ? "bypassPermissions" : o.perm ? o.perm : "default";
}

/* Run the command hooks of `event` that match `tool` (NULL for events
 * without a tool), each with the event JSON on stdin: the common fields
 * and `extra` (members starting with a comma).  A hook that times out, is
 * killed, exits with a status other than 0 and 2, or prints something
 * that is not a JSON object lets things proceed, as for the real CLI. */
static void run_hooks(const char *event, const char *tool, const char *extra, Outcome *oc)
{
	for (size_t i = 0; i < hk.n; i++) {
		const Hook *h = &hk.v[i];
		if (strcmp(h->event, event) || (tool && !matcher_matches(h->matcher, tool)))
			continue;
		Buf in = {0}, out = {0}, err = {0}, rec = {0};
		bs(&in, "{\"session_id\":");
		bj(&in, r.sid);
		bs(&in, ",\"transcript_path\":");
		const char *home = getenv("HOME");
		Buf tp = {0};
		bf(&tp, "%s/.claude/projects/", home ? home : "");
		for (const char *c = r.cwd; *c; c++)
			badd(&tp, (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ? c : "-", 1);
		bf(&tp, "/%s.jsonl", r.sid);
		bjn(&in, tp.p, tp.n);
		free(tp.p);
		bs(&in, ",\"cwd\":");
		bj(&in, r.cwd);
		bs(&in, ",\"permission_mode\":");
		bj(&in, perm_mode());
		bs(&in, ",\"hook_event_name\":");
		bj(&in, event);
		bs(&in, extra);
		bs(&in, "}");
		bool timed_out;
		int code = run_cmd(h->command, &in, h->timeout, &out, &err, &timed_out);
		bs(&rec, ",\"kind\":\"hook\",\"event\":");
		bj(&rec, event);
		bs(&rec, ",\"tool\":");
		bj(&rec, tool);
		bs(&rec, ",\"command\":");
		bj(&rec, h->command);
		if (timed_out)
			bs(&rec, ",\"exit\":null");
		else
			bf(&rec, ",\"exit\":%d", code);
		bs(&rec, ",\"timed_out\":");
		bbool(&rec, timed_out);
		bs(&rec, ",\"stdout\":");
		bjn(&rec, out.p ? out.p : "", out.n);
		bs(&rec, ",\"stderr\":");
		bjn(&rec, err.p ? err.p : "", err.n);
		record(rec.p);
		if (code == 2 && !oc->block) {
			oc->block = oc->exit2 = true;
			oc->cmd = h->command;
			bf(&oc->said, "[%s]: ", h->command);
			badd(&oc->said, err.p ? err.p : "", err.n);
			badd(&oc->text, err.p ? err.p : "", err.n);
		}
		J *j = code == 0 && out.n ? jparse(out.p, out.n) : NULL;
		if (j && j->t == J_OBJ) {
			J *so = jget(j, "hookSpecificOutput");
			const char *dec = jgets(so, "permissionDecision"), *ctx = jgets(so, "additionalContext");
			J *cont = jget(j, "continue");
			if (cont && cont->t == J_FALSE)
				oc->stop = true;
			if (dec && !strcmp(dec, "deny") && !oc->deny) {
				oc->deny = true;
				oc->reason.n = 0;
				bs(&oc->reason, jgets(so, "permissionDecisionReason") ? jgets(so, "permissionDecisionReason") : "");
			} else if (dec && !strcmp(dec, "allow") && jget(so, "updatedInput") &&
				   jget(so, "updatedInput")->t == J_OBJ) {
				Buf t = {0};
				jdump(&t, jget(so, "updatedInput"));
				jfree(oc->updated);
				oc->updated = jparse(t.p, t.n);
				free(t.p);
			}
			const char *d = jgets(j, "decision"), *why = jgets(j, "reason");
			if (d && !strcmp(d, "block") && !oc->block) {
				oc->block = true;
				oc->cmd = h->command;
				bs(&oc->said, why ? why : "");
				bs(&oc->text, why ? why : "");
			}
			if (ctx) {
				Buf c = {0};
				bf(&c, "%s%s%s hook additional context: %s", event, tool ? ":" : "", tool ? tool : "", ctx);
				record_context(c.p);
				free(c.p);
			}
		}
		jfree(j);
		free(in.p);
		free(out.p);
		free(err.p);
		free(rec.p);
	}
}

static void outcome_free(Outcome *oc)
{
	free(oc->reason.p);
	free(oc->said.p);
	free(oc->text.p);
	jfree(oc->updated);
}

/* ---- tools ------------------------------------------------------------ */

/* The tools of Claude Code 2.1.197 and of versions around it. */
static const char *const TOOLS[] = {
	"Agent", "Bash", "CronCreate", "CronDelete", "CronList", "Edit", "EnterWorktree", "ExitWorktree",
	"Glob", "Grep", "LS", "MultiEdit", "NotebookEdit", "NotebookRead", "Read", "ReportFindings",
	"ScheduleWakeup", "SendMessage", "Skill", "Task", "TaskCreate", "TaskGet", "TaskList",
	"TaskOutput", "TaskStop", "TaskUpdate", "TodoWrite", "WebFetch", "WebSearch", "Workflow",
	"Write", NULL};

static bool in_list(const Buf *list, const char *name)
{
	Buf want = {0};
	bj(&want, name);
	bool hit = false;
	for (const char *p = list->p; p && (p = strstr(p, want.p)); p += want.n)
		if ((p == list->p || p[-1] == ',') && (p[want.n] == ',' || p[want.n] == 0))
			hit = true;
	free(want.p);
	return hit;
}

/* The error of a call to a tool the CLI does not offer, into why; nothing
 * for a tool it offers. */
static void tool_missing(const char *name, Buf *why)
{
	bool known = one_of(name, TOOLS) || !strncmp(name, "mcp__", 5);
	bool offered = !o.tools_given || in_list(&o.tools, name) || !strncmp(name, "mcp__", 5);
	if (known && offered && !in_list(&o.disallowed, name))
		return;
	bf(why, "Error: No such tool available: %s", name);
	if (known)
		bf(why, ". %s exists but is not enabled in this context. Use one of the available tools "
			"instead.", name);
}

/* A tool's failure: content `<tool_use_error>TEXT</tool_use_error>`,
 * tool_use_result "Error: TEXT", as the CLI words input errors. */
static void tool_error(Buf *content, Buf *resp, const char *text, bool tagged)
{
	if (tagged)
		bs(content, "<tool_use_error>");
	bs(content, text);
	if (tagged)
		bs(content, "</tool_use_error>");
	bs(resp, "\"Error: ");
	bjraw(resp, text, strlen(text));
	bs(resp, "\"");
}

static bool write_file(const char *p, const char *data, size_t n)
{
	for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		mkdir(p, 0755); /* the CLI makes missing parents */
		*s = '/';
	}
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return false;
	write_all(fd, data, n);
	return close(fd) == 0;
}

static void tool_bash(const J *in, Buf *content, Buf *resp, bool *is_error)
{
	Buf so = {0}, se = {0};
	const char *cmd = jgets(in, "command");
	bool timed_out;
	int code = run_cmd(cmd ? cmd : "", NULL, 0, &so, &se, &timed_out);
	chomp(&so);
	chomp(&se);
	*is_error = code != 0;
	if (*is_error)
		bf(content, "Exit code %d", code);
	Buf *parts[2] = {&so, &se};
	for (int i = 0; i < 2; i++) {
		if (!parts[i]->n)
			continue;
		if (content->n)
			badd(content, "\n", 1);
		badd(content, parts[i]->p, parts[i]->n);
	}
	if (!content->n)
		bs(content, "(Bash completed with no output)");
	bs(resp, "{\"stdout\":");
	bjn(resp, so.p ? so.p : "", so.n);
	bs(resp, ",\"stderr\":");
	bjn(resp, se.p ? se.p : "", se.n);
	bs(resp, ",\"interrupted\":false,\"isImage\":false}");
	free(so.p);
	free(se.p);
}

static void tool_write(J *in, Buf *content, Buf *resp, bool *is_error)
{
	const char *p = jgets(in, "file_path");
	J *c = jget(in, "content");
	if (!p || !c || c->t != J_STR) {
		*is_error = true;
		tool_error(content, resp, "InputValidationError: Write needs file_path and content", true);
		return;
	}
	struct stat st;
	bool existed = stat(p, &st) == 0;
	char *path_copy = strdup(p);
	if (!path_copy)
		oom();
	bool ok = write_file(path_copy, c->s, c->sn);
	free(path_copy);
	if (!ok) {
		Buf e = {0};
		bf(&e, "%s: %s", p, strerror(errno));
		*is_error = true;
		tool_error(content, resp, e.p, true);
		free(e.p);
		return;
	}
	if (existed)
		bf(content, "The file %s has been updated successfully.", p);
	else
		bf(content, "File created successfully at: %s (file state is current in your context — no need "
			    "to Read it back)", p);
	bs(resp, existed ? "{\"type\":\"update\",\"filePath\":" : "{\"type\":\"create\",\"filePath\":");
	bj(resp, p);
	bs(resp, ",\"content\":");
	bjn(resp, c->s, c->sn);
	bs(resp, "}");
}

static void tool_edit(J *in, Buf *content, Buf *resp, bool *is_error)
{
	const char *p = jgets(in, "file_path");
	J *old = jget(in, "old_string"), *new = jget(in, "new_string"), *all = jget(in, "replace_all");
	size_t len;
	char *text = p ? slurp(p, &len) : NULL;
	Buf e = {0}, out = {0};
	*is_error = true;
	if (!p || !old || old->t != J_STR || !new || new->t != J_STR || !old->sn) {
		tool_error(content, resp, "InputValidationError: Edit needs file_path, old_string and new_string", true);
		goto done;
	}
	if (!text) {
		tool_error(content, resp, "File does not exist.", true);
		goto done;
	}
	size_t hits = 0;
	for (char *q = text; (q = memmem(q, len - (size_t)(q - text), old->s, old->sn)); q += old->sn)
		hits++;
	if (!hits) {
		bf(&e, "String to replace not found in file.\nString: %s", old->s);
		tool_error(content, resp, e.p, true);
		goto done;
	}
	if (hits > 1 && !(all && all->t == J_TRUE)) {
		bf(&e, "Found %zu matches of the string to replace, but replace_all is false. To replace all "
		       "occurrences, set replace_all to true. To replace only one occurrence, please provide more "
		       "context to uniquely identify the instance.\nString: %s", hits, old->s);
		tool_error(content, resp, e.p, true);
		goto done;
	}
	char *at = text, *q;
	while ((q = memmem(at, len - (size_t)(at - text), old->s, old->sn))) {
		badd(&out, at, (size_t)(q - at));
		badd(&out, new->s, new->sn);
		at = q + old->sn;
	}
	badd(&out, at, len - (size_t)(at - text));
	char *path_copy = strdup(p);
	if (!path_copy)
		oom();
	bool ok = write_file(path_copy, out.p, out.n);
	free(path_copy);
	if (!ok) {
		bf(&e, "%s: %s", p, strerror(errno));
		tool_error(content, resp, e.p, true);
		goto done;
	}
	*is_error = false;
	bf(content, "The file %s has been updated successfully.", p);
	bs(resp, "{\"filePath\":");
	bj(resp, p);
	bs(resp, ",\"oldString\":");
	bjn(resp, old->s, old->sn);
	bs(resp, ",\"newString\":");
	bjn(resp, new->s, new->sn);
	bs(resp, ",\"replaceAll\":");
	bbool(resp, all && all->t == J_TRUE);
	bs(resp, "}");
done:
	free(text);
	free(e.p);
	free(out.p);
}

/* Read: the file's lines numbered from 1, "N\tLINE", as the CLI shows them. */
static void tool_read(J *in, Buf *content, Buf *resp, bool *is_error)
{
	const char *p = jgets(in, "file_path");
	size_t len;
	char *text = p ? slurp(p, &len) : NULL;
	if (!text) {
		Buf e = {0};
		bf(&e, "File does not exist. Note: your current working directory is %s.", r.cwd);
		*is_error = true;
		tool_error(content, resp, e.p, false);
		free(e.p);
		return;
	}
	long lines = 1;
	const char *s = text;
	for (const char *nl; (nl = memchr(s, '\n', len - (size_t)(s - text))); s = nl + 1) {
		bf(content, "%ld\t", lines++);
		badd(content, s, (size_t)(nl - s + 1));
	}
	bf(content, "%ld\t", lines);
	badd(content, s, len - (size_t)(s - text));
	bs(resp, "{\"type\":\"text\",\"file\":{\"filePath\":");
	bj(resp, p);
	bs(resp, ",\"content\":");
	bjn(resp, text, len);
	bf(resp, ",\"numLines\":%ld,\"startLine\":1,\"totalLines\":%ld}}", lines, lines);
	free(text);
}

/* Run the tool for real: Bash, Write, Edit and Read act; any other tool
 * answers "ok". */
static void run_tool(const char *name, J *in, Buf *content, Buf *resp, bool *is_error)
{
	*is_error = false;
	if (!strcmp(name, "Bash"))
		tool_bash(in, content, resp, is_error);
	else if (!strcmp(name, "Write"))
		tool_write(in, content, resp, is_error);
	else if (!strcmp(name, "Edit"))
		tool_edit(in, content, resp, is_error);
	else if (!strcmp(name, "Read"))
		tool_read(in, content, resp, is_error);
	else {
		bs(content, "ok");
		bs(resp, "\"ok\"");
	}
}

static void timestamp(char *out, size_t cap)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(out, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
}

/* The turn ends after a hook said continue: false: the result is empty. */
static void hook_stopped(void) __attribute__((noreturn));
static void hook_stopped(void)
{
	r.result.n = 0;
	r.stop_reason = "tool_use";
	r.terminal = "hook_stopped";
	emit_result(false, 0, r.answered + 1, r.spent, r.answered * r.in_tok, r.answered * r.out_tok);
	exit(0);
}

/* A tool call's name, id and input as members of a JSON object (each
 * after a comma), under the keys and in the order the line at hand gives
 * them: `keys` is "KEY=n,KEY=i,KEY=x" for the name, id and input. */
static void call_fields(Buf *b, const char *keys, const char *name, const char *tid, const J *in)
{
	for (const char *k = keys; *k;) {
		size_t n = strcspn(k, "=");
		bs(b, ",\"");
		badd(b, k, n);
		bs(b, "\":");
		if (k[n + 1] == 'n')
			bj(b, name);
		else if (k[n + 1] == 'i')
			bj(b, tid);
		else
			jdump(b, in);
		k += n + 2;
		k += *k == ',';
	}
}

/* as the CLI orders them in a hook's input, and in permission_denials */
#define HOOK_KEYS "tool_name=n,tool_input=x,tool_use_id=i"
#define DENIAL_KEYS "tool_name=n,tool_use_id=i,tool_input=x"

/* One API call asking for tool `name` with input `in` (owned), then the
 * call itself as the CLI makes it: PreToolUse hooks, the tool, PostToolUse
 * or PostToolUseFailure hooks, and the tool_result line. */
static void tool_call(const char *name, J *in)
{
	char tid[48];
	rid(tid, sizeof tid, "toolu_fake_");
	Buf blk = {0}, content = {0}, resp = {0}, extra = {0}, why = {0}, rec = {0};
	Outcome pre = {0}, post = {0};
	bs(&blk, "{\"type\":\"tool_use\"");
	call_fields(&blk, "id=i,name=n,input=x", name, tid, in);
	bs(&blk, "}");
	emit_assistant(blk.p, "tool_use");
	call_done();

	bool is_error = true;
	tool_missing(name, &why);
	if (why.n) {
		tool_error(&content, &resp, why.p, true);
		goto reply;
	}
	call_fields(&extra, HOOK_KEYS, name, tid, in);
	run_hooks("PreToolUse", name, extra.p, &pre);
	if (pre.deny || pre.block) {
		/* the result lists the call in permission_denials either way */
		if (r.denials.n)
			bs(&r.denials, ",");
		size_t at = r.denials.n;
		call_fields(&r.denials, DENIAL_KEYS, name, tid, in);
		r.denials.p[at] = '{';
		bs(&r.denials, "}");
	}
	if (pre.deny || (pre.block && !pre.exit2)) {
		/* decision "block" is the older spelling of a deny */
		Buf *reason = pre.deny ? &pre.reason : &pre.text;
		tool_error(&content, &resp, reason->p ? reason->p : "", false);
		goto reply;
	}
	if (pre.block) {
		Buf e = {0};
		bf(&e, "PreToolUse:%s hook error: %s", name, pre.said.p);
		tool_error(&content, &resp, e.p, false);
		free(e.p);
		goto reply;
	}
	if (pre.updated) {
		jfree(in);
		in = pre.updated;
		pre.updated = NULL;
	}
	run_tool(name, in, &content, &resp, &is_error);
	extra.n = 0;
	if (is_error) {
		call_fields(&extra, HOOK_KEYS, name, tid, in);
		bs(&extra, ",\"error\":");
		bjn(&extra, content.p, content.n);
		bs(&extra, ",\"is_interrupt\":false");
	} else {
		call_fields(&extra, "tool_name=n,tool_input=x", name, tid, in);
		bs(&extra, ",\"tool_response\":");
		bs(&extra, resp.p);
		call_fields(&extra, "tool_use_id=i", name, tid, in);
	}
	run_hooks(is_error ? "PostToolUseFailure" : "PostToolUse", name, extra.p, &post);
	if (post.block) {
		Buf c = {0};
		bf(&c, "%s:%s hook blocking error from command: \"%s\": %s", is_error ? "PostToolUseFailure" : "PostToolUse",
		   name, post.cmd, post.text.p);
		record_context(c.p);
		free(c.p);
	}
reply:;
	char u[37], stamp[96];
	uuid4(u);
	timestamp(stamp, sizeof stamp);
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
	bs(b, resp.p);
	bs(b, "}");
	out_line(false);

	bs(&rec, ",\"kind\":\"tool_result\"");
	call_fields(&rec, "tool=n,tool_use_id=i,input=x", name, tid, in);
	bs(&rec, ",\"text\":");
	bjn(&rec, content.p, content.n);
	bs(&rec, ",\"is_error\":");
	bbool(&rec, is_error);
	record(rec.p);

	bool stop = pre.stop || post.stop;
	jfree(in);
	outcome_free(&pre);
	outcome_free(&post);
	free(blk.p);
	free(content.p);
	free(resp.p);
	free(extra.p);
	free(why.p);
	free(rec.p);
	if (stop)
		hook_stopped();
}

static void step_reply(void);

static void step_tool(void)
{
	tool_call(r.tool.p, r.tool_input);
	r.tool_input = NULL;
	step_reply();
}

/* A Bash tool call of command cmd[0..n). */
static void bash_call(const char *cmd, size_t n, const char *description)
{
	Buf in = {0};
	bs(&in, "{\"command\":");
	bjn(&in, cmd, n);
	bs(&in, ",\"description\":");
	bj(&in, description);
	bs(&in, "}");
	tool_call("Bash", jparse(in.p, in.n));
	free(in.p);
}

static void step_bash(void)
{
	bash_call(r.cmd.p ? r.cmd.p : "", r.cmd.n, "Run the command");
	step_reply();
}

/* calls N => TEXT: N-1 Bash calls of `true` (hooks see them as any call),
 * then TEXT; each is paid as one API call. */
static void step_calls(void)
{
	for (long i = 1; i < r.calls; i++)
		bash_call("true", 4, "Nothing");
	step_reply();
}

/* UserPromptSubmit hooks, before the first API call: a block ends the
 * invocation with the CLI's message as its result, and no call is made. */
static void prompt_hooks(void)
{
	Outcome oc = {0};
	Buf extra = {0};
	bs(&extra, ",\"prompt\":");
	bj(&extra, o.prompt);
	run_hooks("UserPromptSubmit", NULL, extra.p, &oc);
	free(extra.p);
	if (!oc.block) {
		outcome_free(&oc);
		return;
	}
	r.result.n = 0;
	bf(&r.result, "UserPromptSubmit operation blocked by hook:\n%s\n\nOriginal prompt: %s", oc.said.p, o.prompt);
	char u[37];
	uuid4(u);
	Buf *b = &r.line;
	bs(b, "{\"type\":\"system\",\"subtype\":\"informational\",\"content\":");
	bjn(b, r.result.p, r.result.n);
	bs(b, ",\"level\":\"warning\",\"prevent_continuation\":true,\"uuid\":");
	bj(b, u);
	bs(b, ",\"session_id\":");
	bj(b, r.sid);
	bs(b, "}");
	out_line(false);
	r.stop_reason = r.terminal = ""; /* no API call: neither is known */
	emit_result(false, 0, 0, 0, 0, 0);
	exit(0);
}

/* Stop hooks after the last message: a block feeds its reason back and
 * the model answers again (the same text), as the real CLI, which gave up
 * after nine such rounds. */
static void stop_hooks(const char *text, size_t n)
{
	for (int round = 0; round < 10; round++) {
		Outcome oc = {0};
		Buf extra = {0};
		bs(&extra, ",\"stop_hook_active\":");
		bbool(&extra, round > 0);
		bs(&extra, ",\"last_assistant_message\":");
		bjn(&extra, text, n);
		run_hooks("Stop", NULL, extra.p, &oc);
		free(extra.p);
		bool again = oc.block && round < 9;
		if (again) {
			char u[37], stamp[96];
			uuid4(u);
			timestamp(stamp, sizeof stamp);
			Buf fb = {0}, *b = &r.line;
			bf(&fb, "Stop hook feedback:\n%s", oc.said.p);
			bs(b, "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":");
			bjn(b, fb.p, fb.n);
			bs(b, "}]},\"parent_tool_use_id\":null,\"session_id\":");
			bj(b, r.sid);
			bs(b, ",\"uuid\":");
			bj(b, u);
			bs(b, ",\"timestamp\":");
			bj(b, stamp);
			bs(b, ",\"isSynthetic\":true}");
			out_line(false);
			record_context(fb.p);
			free(fb.p);
		}
		outcome_free(&oc);
		if (!again)
			return;
		emit_text(text, n);
		call_done();
	}
}

/* The last call of a turn: the text, then the result. */
static void step_reply(void)
{
	emit_text(r.text.p ? r.text.p : "", r.text.n);
	call_done();
	stop_hooks(r.text.p ? r.text.p : "", r.text.n);
	badd(&r.result, r.text.p ? r.text.p : "", r.text.n);
	emit_result(false, 0, r.answered, r.spent, r.answered * r.in_tok, r.answered * r.out_tok);
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
	if (o.max_turns) {
		char *end;
		long v = strtol(o.max_turns, &end, 10);
		r.max_turns = *o.max_turns && !*end && v > 0 ? v : 0;
	}
	load_settings();
	if (hk.n) {
		signal(SIGTERM, on_stop);
		signal(SIGINT, on_stop);
		signal(SIGHUP, on_stop);
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
	prompt_hooks();
	const char *delay = getenv("FAKE_CLAUDE_DELAY_MS");
	if (delay && *delay)
		sleep_s(strtod(delay, NULL) / 1000);
	switch (r.step) {
	case S_ERROR: step_error(); break;
	case S_LIMIT: step_limit(); break;
	case S_BASH: step_bash(); break;
	case S_TOOL: step_tool(); break;
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
