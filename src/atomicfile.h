/*
 * atomicfile.h - replace a file so that a crash leaves the old or the new
 * contents, never a torn mix.
 *
 * Protocol of ray_atomicfile_write(path, ...):
 *
 *	1. open "<path>.lock" with O_WRONLY|O_CREAT|O_EXCL|O_CLOEXEC, 0644
 *	2. write every byte (retrying short writes and EINTR)
 *	3. fsync the lock file, then close it (close is checked)
 *	4. rename "<path>.lock" over "<path>"
 *	5. open the containing directory and fsync it, so the rename itself
 *	   survives a power cut (EINVAL/EBADF from file systems that cannot
 *	   fsync a directory are ignored)
 *
 * If any step fails the lock file is unlinked, "<path>" is untouched, and
 * the function returns a negative code with `err` naming the step, the
 * path and the system's reason.  errno is preserved across the cleanup.
 *
 * The O_EXCL lock keeps two writers apart: if "<path>.lock" already exists
 * the write fails with RAY_ELOCKED and says so.  A lock left by a killed
 * process is stale; only the owner of a run (see state.h) may remove it,
 * with ray_atomicfile_clear_stale().
 *
 * ray_atomicfile_read() reads a whole file into a NUL-terminated buffer
 * the caller owns and frees with free(3).  ray_atomicfile_read_max()
 * does the same for a file of at most `max` bytes, and fails with
 * RAY_ETOOBIG, having read at most `max` + one slice, for a larger one.
 */
#ifndef RAY_ATOMICFILE_H
#define RAY_ATOMICFILE_H

#include <stddef.h>

#include "ray.h"

int ray_atomicfile_write(const char *path, const void *data, size_t len,
    struct ray_err *err);
/* The same, the file made with `mode` (0600 for a secret) instead of 0644. */
int ray_atomicfile_write_mode(const char *path, const void *data, size_t len,
    int mode, struct ray_err *err);
/*
 * The same without steps 3's fsync and 5: a killed process still leaves
 * the old or the new contents, but a power cut may lose either.  For
 * files that are written again after a crash anyway (a spool folder's).
 */
int ray_atomicfile_write_unsynced(const char *path, const void *data,
    size_t len, int mode, struct ray_err *err);
int ray_atomicfile_read(const char *path, char **out, size_t *len,
    struct ray_err *err);
int ray_atomicfile_read_max(const char *path, size_t max, char **out,
    size_t *len, struct ray_err *err);
/*
 * fsync the directory holding `path`, so that its new or renamed entry
 * survives a power cut (step 5 above).  Returns 0, or -errno with `err`
 * saying "cannot open|fsync directory 'DIR' after DOING 'PATH'".
 */
int ray_atomicfile_sync_dir(const char *path, const char *doing,
    struct ray_err *err);
/*
 * ray_atomicfile_set_sync(0) leaves out every fsync and fdatasync of this
 * module and of the journal (journal.h) for the rest of the process, and
 * ray_atomicfile_sync() says whether they are made.  The order of the
 * steps stays, so a process killed at any point still leaves the old or
 * the new contents (written data is in the page cache before the rename);
 * only a power cut may lose them.  For runs of `raymond test`, whose state
 * must survive a kill of raymond, not of the machine.
 */
void ray_atomicfile_set_sync(int on);
int ray_atomicfile_sync(void);
/* Remove "<path>.lock" if present; returns 1 if one was removed, else 0. */
int ray_atomicfile_clear_stale(const char *path);

#endif
