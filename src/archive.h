/*
 * archive.h - open, validate and unpack a workflow shipped as a zip file.
 *
 * Calling sequence:
 *
 *	struct ray_archive *a;
 *
 *	if (ray_archive_open(path, &a, &err) < 0)
 *		... report err ...
 *	for (i = 0; i < ray_archive_count(a); i++)
 *		ray_archive_name(a, i) ...
 *	ray_archive_read(a, "START.md", &data, &len, &err);
 *	ray_archive_extract(a, dir, &err);
 *	ray_archive_close(a);
 *
 * ray_archive_open() accepts an archive only if all of this holds:
 *
 *   - Its name vouches for it, or says nothing.  The basename is
 *     lowercased and searched for maximal runs of hex digits [0-9a-f].
 *     A run of exactly 64 is a SHA-256 that must equal the hash of the
 *     whole file; a run longer than 64, or two runs of 64, make the name
 *     ambiguous, which is an error; with no such run nothing is checked.
 *     The documented form is "name-<sha256>.zip".
 *   - libzip can read it with ZIP_CHECKCONS (the central directory and
 *     the local headers agree).
 *   - Every entry name is relative and clean: not empty, no NUL or other
 *     control character, no leading '/', no drive letter ("C:"), no
 *     backslash, and no empty, "." or ".." segment.
 *   - Its layout is one of two: every file at the top level ("START.md"),
 *     or every file inside one top-level folder, one level deep
 *     ("flow/START.md").  Directory entries (names ending in '/') are
 *     not files, but they count as folders: "flow/" next to "START.md"
 *     mixes files and folders, "a/" next to "b/x" is two folders, and
 *     "flow/sub/" is nested too deeply.  At least one file is required.
 *   - No two files end up with the same name.
 *
 * Afterwards the archive shows its files by bare name, the folder prefix
 * removed, sorted by strcmp(3).  Names contain no '/'.
 *
 * The file is opened once: the bytes hashed are the bytes libzip reads,
 * even if the path is replaced meanwhile.  The archive keeps that
 * descriptor (close-on-exec) until ray_archive_close(), so a caller that
 * keeps the archive open for a whole run reads the file it hashed however
 * often it reads: the run is pinned to that SHA-256.  Only a file
 * rewritten in place (the same inode) could change under it, and that
 * changes its ctime: every read and extraction first checks that the
 * file's size, mtime and ctime are those it had when it was hashed, and
 * refuses with RAY_EINVAL ("was rewritten after it was opened") if not,
 * even when the new bytes would pass the entries' CRC-32 checks.
 *
 * A signal (see ray.h) stops hashing, reading and extraction with
 * RAY_EINTR, "interrupted while ...".
 *
 * Errors: functions return 0 or a negative code and fill `err` with a
 * message naming the archive and, where there is one, the offending entry.
 * Validation failures are RAY_EINVAL; system errors are -errno; an
 * archive over its limits, or a file over 64 MiB read whole, is
 * RAY_ETOOBIG; data libzip cannot decode (bad CRC, unsupported method,
 * encryption, a size other than the one declared) is RAY_EIO.
 *
 * Ownership: ray_archive_open() gives the caller an archive to free with
 * ray_archive_close() (NULL is allowed).  Names and the hash returned
 * belong to the archive and live as long as it does.  ray_archive_read()
 * gives the caller a NUL-terminated buffer to free(3).
 */
#ifndef RAY_ARCHIVE_H
#define RAY_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#include "ray.h"

/*
 * The most one file may hold, uncompressed, for ray_archive_read(), which
 * reads it into memory; extraction streams, so only the limits below
 * bound it.
 */
#define RAY_ARCHIVE_MAX_FILE ((size_t)64 << 20)

/*
 * Caps against archives that unpack to far more than they look (zip
 * bombs), checked by ray_archive_open_limited() from the sizes the
 * central directory declares, before anything is read or extracted.  The
 * declared sizes are not trusted beyond that: reading and extraction hold
 * every entry to its declared size as they inflate it (one byte more, or
 * less, is RAY_EIO), so the caps bound what is really written.  A ratio
 * cap would add nothing: the total is what fills a disk, whatever the
 * ratio.
 */
struct ray_archive_limits {
	uint64_t max_total;	/* all files together, uncompressed */
	uint64_t max_files;	/* files (directory entries not counted) */
	uint64_t max_file;	/* one file, uncompressed */
};

/* The defaults: 256 MiB in all, 10000 files, 64 MiB per file. */
#define RAY_ARCHIVE_LIMITS { (uint64_t)256 << 20, 10000, (uint64_t)64 << 20 }

struct ray_archive;

/* ray_archive_open_limited() with RAY_ARCHIVE_LIMITS. */
int ray_archive_open(const char *path, struct ray_archive **out,
    struct ray_err *err);
/*
 * Open the archive (see the rules above) and refuse it with RAY_ETOOBIG,
 * naming the cap, if it holds more than `limits` allow.
 */
int ray_archive_open_limited(const char *path,
    const struct ray_archive_limits *limits, struct ray_archive **out,
    struct ray_err *err);
/* The number of files (directory entries not counted). */
size_t ray_archive_count(const struct ray_archive *a);
/* The bare name of file `i` in sorted order, or NULL past the end. */
const char *ray_archive_name(const struct ray_archive *a, size_t i);
/*
 * Read file `name` whole.  An unknown name is -ENOENT; a file larger
 * than RAY_ARCHIVE_MAX_FILE is RAY_ETOOBIG.
 */
int ray_archive_read(struct ray_archive *a, const char *name, char **data,
    size_t *len, struct ray_err *err);
/*
 * Write every file into the existing directory `dir`: mode 0755 for names
 * ending in ".sh", 0644 for the rest, whatever the umask.  A file is never
 * overwritten and a symlink never followed (O_CREAT|O_EXCL|O_NOFOLLOW), so
 * nothing outside `dir` is touched; a name that exists already is an
 * error, and so is a `dir` that is itself a symbolic link.  On failure the files this call created are removed again.
 */
int ray_archive_extract(struct ray_archive *a, const char *dir,
    struct ray_err *err);
/* The SHA-256 of the whole file, 64 lowercase hex digits. */
const char *ray_archive_sha256(const struct ray_archive *a);
void ray_archive_close(struct ray_archive *a);

#endif
