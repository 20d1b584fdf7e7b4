/*
 * pty-run: run a command on a pseudo-terminal of a given size, for the
 * live view's tests.
 *
 *   pty-run COLS ROWS OUTFILE COMMAND [ARG...]
 *
 * The command gets a new pty (stdin, stdout and stderr, and its
 * controlling terminal) of COLS x ROWS; everything it writes to it is
 * copied, raw, to OUTFILE (the pty's settings are the usual ones, so a
 * newline arrives as CR LF, as on a terminal).  With PTY_RUN_PIDFILE set,
 * the command's pid is written there once it started, so a test can
 * signal it; with PTY_RUN_RUSAGE set, the CPU time it used ("USER SYS",
 * in seconds) is written there when it ended.  With PTY_RUN_INPUT set,
 * whatever is appended to that file (made by the test, before or after
 * the start) is typed on the terminal, as a person types it.  The exit status is the
 * command's, or 128 + the signal that ended it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static int
write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct winsize ws = { 0 };
	struct rusage ru;
	const char *pidfile = getenv("PTY_RUN_PIDFILE");
	const char *rusage = getenv("PTY_RUN_RUSAGE");
	const char *input = getenv("PTY_RUN_INPUT");
	char buf[65536];
	int master, out, status, in = -1;
	pid_t pid;

	if (argc < 5) {
		fprintf(stderr, "usage: pty-run COLS ROWS OUTFILE COMMAND [ARG...]\n");
		return 2;
	}
	ws.ws_col = (unsigned short)atoi(argv[1]);
	ws.ws_row = (unsigned short)atoi(argv[2]);
	out = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		perror(argv[3]);
		return 2;
	}
	pid = forkpty(&master, NULL, NULL, &ws);
	if (pid < 0) {
		perror("forkpty");
		return 2;
	}
	if (pid == 0) {
		execvp(argv[4], argv + 4);
		perror(argv[4]);
		_exit(127);
	}
	if (pidfile) {
		FILE *f = fopen(pidfile, "w");

		if (f) {
			fprintf(f, "%d\n", (int)pid);
			fclose(f);
		}
	}
	for (;;) {
		struct pollfd p = { master, POLLIN, 0 };
		ssize_t n;

		if (input && poll(&p, 1, 50) == 0) {
			/* Nothing to copy out: type what the test appended. */
			if (in < 0)
				in = open(input, O_RDONLY | O_CLOEXEC);
			while (in >= 0 && (n = read(in, buf, sizeof buf)) > 0)
				if (write_all(master, buf, (size_t)n) < 0)
					break;
			continue;
		}
		n = read(master, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;	/* EIO once every slave descriptor is closed */
		if (write_all(out, buf, (size_t)n) < 0) {
			perror(argv[3]);
			break;
		}
	}
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR)
			return 2;
	close(out);
	if (rusage) {
		FILE *f = fopen(rusage, "w");

		if (f) {
			fprintf(f, "%ld.%06ld %ld.%06ld\n", (long)ru.ru_utime.tv_sec,
			    (long)ru.ru_utime.tv_usec, (long)ru.ru_stime.tv_sec,
			    (long)ru.ru_stime.tv_usec);
			fclose(f);
		}
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
