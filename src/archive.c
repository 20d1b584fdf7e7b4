/*
 * archive.c - workflow archives: validate a zip file's name hash, entry
 * names and layout, then read or extract its files (see archive.h).
 *
 * This is the only file that includes <zip.h>; libzip 1.7 is the
 * oldest version it is written for.
 */
#include "archive.h"
#include "le.h"
#include "ray.h"
#include "sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <zip.h>

/* The end of central directory record is 22 bytes plus a comment. */
#define EOCD_LEN 22
#define EOCD_MAX (EOCD_LEN + 65535)
/* Central directory headers: 46 bytes, then name, extra field, comment. */
#define CDH_LEN 46
/* A central directory larger than this is not scanned for NUL bytes. */
#define CD_SCAN_MAX ((uint64_t)64 << 20)
/* The Info-ZIP Unicode Path extra field, which libzip uses as the name. */
#define EF_UNICODE_PATH 0x7075

/* Room for one entry name quoted in a message (see show()). */
#define SHOW_MAX 208

/* Inflated data is read and written in slices of this size. */
#define SLICE ((size_t)1 << 20)

struct entry {
	char *name;		/* bare name, the folder prefix removed */
	zip_uint64_t index;	/* index in the zip file */
	zip_uint64_t size;	/* uncompressed, as the directory declares */
};

struct ray_archive {
	zip_t *zip;
	char *path;
	char sha256[65];
	struct entry *files;	/* sorted by name */
	size_t count;
	int fd;			/* the descriptor libzip reads (it owns it) */
	struct stat st;		/* the file when it was hashed */
};

/* What check_name() learnt about one entry name. */
struct shape {
	int is_dir;		/* the name ends in '/' */
	size_t depth;		/* segments, not counting a trailing '/' */
	size_t first_len;	/* length of the first segment */
};

/*
 * `len` bytes of `s`, fit to quote in a message: control bytes become
 * \xNN, and a long name is cut short with "...".  Returns `buf`.
 */
static const char *
show(const char *s, size_t len, char buf[SHOW_MAX])
{
	static const char hex[] = "0123456789abcdef";
	size_t i, n = 0;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (n + 8 >= SHOW_MAX) {
			memcpy(buf + n, "...", 3);
			n += 3;
			break;
		}
		if (c < 0x20 || c == 0x7f) {
			buf[n++] = '\\';
			buf[n++] = 'x';
			buf[n++] = hex[c >> 4];
			buf[n++] = hex[c & 15];
		} else {
			buf[n++] = (char)c;
		}
	}
	buf[n] = '\0';
	return buf;
}

static int
hex_digit(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static char
lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/*
 * Find the SHA-256 the file name promises.  Returns 1 with `want` set
 * (lowercase), 0 if the name holds no run of 64 hex digits, or RAY_EINVAL
 * if it is ambiguous.
 */
static int
name_hash(const char *path, char want[65], struct ray_err *err)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash != NULL ? slash + 1 : path;
	size_t i = 0, start, run;
	int found = 0;

	while (base[i] != '\0') {
		if (!hex_digit(lower(base[i]))) {
			i++;
			continue;
		}
		start = i;
		while (hex_digit(lower(base[i])))
			i++;
		run = i - start;
		if (run < 64)
			continue;
		if (run > 64 || found) {
			if (run > 64)
				ray_err_set(err, RAY_EINVAL, "archive '%s' has an "
				    "ambiguous hash in the name: a run of %zu hex "
				    "digits, where a SHA-256 has 64", path, run);
			else
				ray_err_set(err, RAY_EINVAL, "archive '%s' has an "
				    "ambiguous hash in the name: two runs of 64 "
				    "hex digits", path);
			ray_err_hint(err, "name it NAME-<sha256>.zip, where "
			    "<sha256> is the file's SHA-256 and NAME holds no "
			    "other long run of the digits 0-9 and letters a-f");
			return RAY_EINVAL;
		}
		for (run = 0; run < 64; run++)
			want[run] = lower(base[start + run]);
		want[64] = '\0';
		found = 1;
	}
	return found;
}

/* Read exactly `len` bytes at `off`; 0 on success, -1 otherwise. */
static int
read_at(int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;
	ssize_t n;

	while (len > 0) {
		n = pread(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/*
 * Return RAY_EINVAL if the central directory has a name with a NUL byte,
 * else 0.
 *
 * libzip turns a NUL in a name into a space, or (in a Unicode Path extra
 * field) cuts the name short at it, so the names it gives us can no
 * longer show one.  This scan reads the raw central directory instead.
 * It is no parser of record: anything it cannot make sense of it leaves
 * alone, and libzip, which reads the same bytes next, judges the archive.
 */
static int
check_raw_names(int fd, uint64_t size, const char *path, struct ray_err *err)
{
	unsigned char *tail = NULL, *cd = NULL, z64[56], loc[20];
	const unsigned char *name, *ef;
	uint64_t cd_off, cd_len, eocd, z64_off;
	size_t tlen, i, pos, nlen, elen, clen, e, flen;
	char shown[SHOW_MAX];
	int rc = 0, found = 0;

	if (size < EOCD_LEN)
		goto out;
	tlen = size < EOCD_MAX ? (size_t)size : EOCD_MAX;
	tail = xmalloc(tlen);
	if (read_at(fd, tail, tlen, size - tlen) < 0)
		goto out;
	/* The record is the last signature whose comment ends the file. */
	for (i = tlen - EOCD_LEN + 1; i-- > 0;) {
		if (memcmp(tail + i, "PK\5\6", 4) == 0 &&
		    i + EOCD_LEN + ray_le16(tail + i + 20) == tlen) {
			found = 1;
			break;
		}
	}
	if (!found)
		goto out;
	cd_len = ray_le32(tail + i + 12);
	cd_off = ray_le32(tail + i + 16);
	if (cd_len == 0xffffffff || cd_off == 0xffffffff ||
	    ray_le16(tail + i + 10) == 0xffff) {
		/* ZIP64: a locator right before the record points further. */
		eocd = size - tlen + i;
		if (eocd < sizeof(loc) ||
		    read_at(fd, loc, sizeof(loc), eocd - sizeof(loc)) < 0 ||
		    memcmp(loc, "PK\6\7", 4) != 0)
			goto out;
		z64_off = ray_le64(loc + 8);
		if (z64_off > size - sizeof(z64) ||
		    read_at(fd, z64, sizeof(z64), z64_off) < 0 ||
		    memcmp(z64, "PK\6\6", 4) != 0)
			goto out;
		cd_len = ray_le64(z64 + 40);
		cd_off = ray_le64(z64 + 48);
	}
	if (cd_off > size || cd_len > size - cd_off || cd_len > CD_SCAN_MAX)
		goto out;
	cd = xmalloc((size_t)cd_len + 1);
	if (read_at(fd, cd, (size_t)cd_len, cd_off) < 0)
		goto out;

	for (pos = 0; pos + CDH_LEN <= cd_len; pos += CDH_LEN + nlen + elen + clen) {
		if (memcmp(cd + pos, "PK\1\2", 4) != 0)
			break;
		nlen = ray_le16(cd + pos + 28);
		elen = ray_le16(cd + pos + 30);
		clen = ray_le16(cd + pos + 32);
		if (pos + CDH_LEN + nlen + elen > cd_len)
			break;
		name = cd + pos + CDH_LEN;
		flen = nlen;
		/*
		 * A Unicode Path extra field (version 1, a CRC-32, then the
		 * name) replaces the name when libzip reads it.
		 */
		ef = name + nlen;
		for (e = 0; memchr(name, 0, flen) == NULL && e + 4 <= elen;
		    e += 4 + (size_t)ray_le16(ef + e + 2)) {
			size_t flen2 = ray_le16(ef + e + 2);

			if (e + 4 + flen2 > elen)
				break;
			if (ray_le16(ef + e) == EF_UNICODE_PATH && flen2 > 5 &&
			    ef[e + 4] == 1) {
				name = ef + e + 9;
				flen = flen2 - 5;
			}
		}
		if (memchr(name, 0, flen) != NULL) {
			rc = ray_err_set(err, RAY_EINVAL, "archive '%s' has an "
			    "entry with a NUL byte in its name: '%s'", path,
			    show((const char *)name, flen, shown));
			goto out;
		}
	}

out:
	free(tail);
	free(cd);
	return rc;
}

/*
 * Check one entry name (the bytes as stored) and describe its shape.
 * Returns 0 or RAY_EINVAL naming the problem.
 */
static int
check_name(const char *path, const char *name, struct shape *sh,
    struct ray_err *err)
{
	size_t len = strlen(name), i, end, seg;
	char shown[SHOW_MAX];
	const char *what = NULL;
	int backslash = 0;

	memset(sh, 0, sizeof(*sh));
	if (len == 0)
		return ray_err_set(err, RAY_EINVAL, "archive '%s' has an entry "
		    "with an empty name", path);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c < 0x20 || c == 0x7f) {
			what = "a control character in its name";
			goto bad;
		}
	}
	if (name[0] == '/') {
		what = "an absolute name";
		goto bad;
	}
	if (((name[0] >= 'a' && name[0] <= 'z') ||
	    (name[0] >= 'A' && name[0] <= 'Z')) && name[1] == ':') {
		what = "an absolute name (a drive letter)";
		goto bad;
	}
	if (strchr(name, '\\') != NULL) {
		what = "a backslash in its name";
		backslash = 1;
		goto bad;
	}

	sh->is_dir = name[len - 1] == '/';
	end = len - (size_t)sh->is_dir;
	for (i = 0; i <= end; i = seg + 1) {
		seg = i;
		while (seg < end && name[seg] != '/')
			seg++;
		if (seg == i) {
			what = "an empty segment in its name";
			goto bad;
		}
		if (seg - i == 2 && name[i] == '.' && name[i + 1] == '.') {
			what = "a '..' segment";
			goto bad;
		}
		if (seg - i == 1 && name[i] == '.') {
			what = "a '.' segment";
			goto bad;
		}
		if (sh->depth++ == 0)
			sh->first_len = seg - i;
	}
	return 0;

bad:
	ray_err_set(err, RAY_EINVAL, "archive '%s' has an entry with %s: '%s'",
	    path, what, show(name, len, shown));
	if (backslash)
		ray_err_hint(err, "zip entry names separate folders with '/'; "
		    "make the archive again with a tool that does");
	return RAY_EINVAL;
}

static int
cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name,
	    ((const struct entry *)b)->name);
}

static int
zip_fail(struct ray_archive *a, struct ray_err *err, const char *what,
    zip_uint64_t index)
{
	return ray_err_set(err, RAY_EIO, "cannot read %s %llu of archive "
	    "'%s': %s", what, (unsigned long long)index, a->path,
	    zip_strerror(a->zip));
}

/* The layout hint shared by every layout error. */
static void
layout_hint(struct ray_err *err)
{
	ray_err_hint(err, "a workflow archive holds its files at the top level "
	    "(START.md, ...) or all in one folder (flow/START.md, ...), with "
	    "no folders below that");
}

/*
 * Check every entry and decide the layout; then list the files by bare
 * name.  See archive.h for the rules.
 */
static int
list_files(struct ray_archive *a, struct ray_err *err)
{
	zip_int64_t n = zip_get_num_entries(a->zip, 0);
	const char *name, *folder = NULL, *top_file = NULL, *inner = NULL;
	size_t folder_len = 0, i, nfiles = 0;
	struct shape sh;
	zip_stat_t zs;
	char s1[SHOW_MAX], s2[SHOW_MAX];
	int rc = 0;

	if (n < 0)
		n = 0;
	/* First every name on its own, so a bad name is reported first. */
	for (i = 0; i < (size_t)n; i++) {
		name = zip_get_name(a->zip, i, ZIP_FL_ENC_RAW);
		if (name == NULL)
			return zip_fail(a, err, "the name of entry", i);
		rc = check_name(a->path, name, &sh, err);
		if (rc < 0)
			return rc;
		if (sh.depth > 2 || (sh.is_dir && sh.depth > 1)) {
			rc = ray_err_set(err, RAY_EINVAL, "archive '%s' nests "
			    "'%s' too deeply: files must be at the top level or "
			    "in one folder", a->path,
			    show(name, strlen(name), s1));
			layout_hint(err);
			return rc;
		}
	}

	/* Then the layout, from the files and folders at the top. */
	for (i = 0; i < (size_t)n; i++) {
		name = zip_get_name(a->zip, i, ZIP_FL_ENC_RAW);
		if (name == NULL)
			return zip_fail(a, err, "the name of entry", i);
		check_name(a->path, name, &sh, NULL);
		if (!sh.is_dir)
			nfiles++;
		if (!sh.is_dir && sh.depth == 1) {
			if (top_file == NULL)
				top_file = name;
			continue;
		}
		if (!sh.is_dir && inner == NULL)
			inner = name;
		if (folder == NULL) {
			folder = name;
			folder_len = sh.first_len;
		} else if (sh.first_len != folder_len ||
		    memcmp(name, folder, folder_len) != 0) {
			rc = ray_err_set(err, RAY_EINVAL, "archive '%s' has "
			    "several top-level folders: '%s/' and '%s/'",
			    a->path, show(folder, folder_len, s1),
			    show(name, sh.first_len, s2));
			layout_hint(err);
			return rc;
		}
	}
	if (nfiles == 0) {
		rc = ray_err_set(err, RAY_EINVAL, "archive '%s' has no files",
		    a->path);
		layout_hint(err);
		return rc;
	}
	if (top_file != NULL && inner != NULL) {
		rc = ray_err_set(err, RAY_EINVAL, "archive '%s' nests '%s' too "
		    "deeply: '%s' is at the top level, so every file must be",
		    a->path, show(inner, strlen(inner), s1),
		    show(top_file, strlen(top_file), s2));
		layout_hint(err);
		return rc;
	}
	if (top_file != NULL && folder != NULL) {
		rc = ray_err_set(err, RAY_EINVAL, "archive '%s' mixes files and "
		    "folders at the top level: '%s' and '%s/'", a->path,
		    show(top_file, strlen(top_file), s1),
		    show(folder, folder_len, s2));
		layout_hint(err);
		return rc;
	}

	/*
	 * The names shown are libzip's reading of the stored bytes (UTF-8,
	 * or CP437 converted to UTF-8), which differ from the bytes checked
	 * above only in characters outside ASCII: '/' stays where it was.
	 */
	a->files = xcalloc(nfiles, sizeof(*a->files));
	for (i = 0; i < (size_t)n; i++) {
		const char *slash;

		name = zip_get_name(a->zip, i, 0);
		if (name == NULL)
			return zip_fail(a, err, "the name of entry", i);
		if (name[strlen(name) - 1] == '/')
			continue;
		slash = strchr(name, '/');
		a->files[a->count].name = xstrdup(slash != NULL ? slash + 1 : name);
		a->files[a->count].index = i;
		if (zip_stat_index(a->zip, i, 0, &zs) < 0 ||
		    (zs.valid & ZIP_STAT_SIZE) == 0)
			return zip_fail(a, err, "the size of entry", i);
		a->files[a->count].size = zs.size;
		a->count++;
	}
	qsort(a->files, a->count, sizeof(*a->files), cmp_entry);
	for (i = 1; i < a->count; i++) {
		if (strcmp(a->files[i - 1].name, a->files[i].name) == 0)
			return ray_err_set(err, RAY_EINVAL, "archive '%s' has two "
			    "files named '%s'", a->path,
			    show(a->files[i].name, strlen(a->files[i].name), s1));
	}
	return 0;
}

/*
 * Refuse an archive bigger than `lim` allows, from the sizes its directory
 * declares; extraction and reads then hold every entry to its declared
 * size, so the caps bound what is really inflated too.
 */
static int
check_limits(const struct ray_archive *a, const struct ray_archive_limits *lim,
    struct ray_err *err)
{
	uint64_t total = 0;
	char shown[SHOW_MAX];
	size_t i;

	if (a->count > lim->max_files)
		return ray_err_set(err, RAY_ETOOBIG, "archive '%s' has %zu files, "
		    "more than the limit of %llu files", a->path, a->count,
		    (unsigned long long)lim->max_files);
	for (i = 0; i < a->count; i++) {
		const struct entry *e = &a->files[i];

		if (e->size > lim->max_file)
			return ray_err_set(err, RAY_ETOOBIG, "archive '%s' has "
			    "'%s' of %llu bytes uncompressed, more than the "
			    "limit of %llu bytes per file", a->path,
			    show(e->name, strlen(e->name), shown),
			    (unsigned long long)e->size,
			    (unsigned long long)lim->max_file);
		total += e->size;
		if (total > lim->max_total)
			return ray_err_set(err, RAY_ETOOBIG, "archive '%s' holds "
			    "more than %llu bytes uncompressed, the limit for "
			    "all its files together", a->path,
			    (unsigned long long)lim->max_total);
	}
	return 0;
}

int
ray_archive_open(const char *path, struct ray_archive **out,
    struct ray_err *err)
{
	static const struct ray_archive_limits defaults = RAY_ARCHIVE_LIMITS;

	return ray_archive_open_limited(path, &defaults, out, err);
}

int
ray_archive_open_limited(const char *path,
    const struct ray_archive_limits *limits, struct ray_archive **out,
    struct ray_err *err)
{
	struct ray_archive *a = xcalloc(1, sizeof(*a));
	zip_source_t *src = NULL;
	zip_error_t zerr;
	struct stat st;
	char want[65];
	FILE *fp = NULL;
	int fd = -1, rc, named;

	*out = NULL;
	zip_error_init(&zerr);
	a->path = xstrdup(path);
	a->fd = -1;

	rc = named = name_hash(path, want, err);
	if (rc < 0)
		goto out;
	rc = 0;

	/* O_NONBLOCK: opening a FIFO must not wait for a writer. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = ray_err_sys(err, "cannot open archive '%s'", path);
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		rc = ray_err_sys(err, "cannot open archive '%s'", path);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = ray_err_set(err, RAY_EINVAL, "archive '%s' is not a "
		    "regular file", path);
		goto out;
	}
	a->st = st;

	rc = ray_sha256_fd(fd, path, a->sha256, err);
	if (rc < 0)
		goto out;
	if (named && strcmp(want, a->sha256) != 0) {
		rc = ray_err_set(err, RAY_EINVAL, "archive '%s' has hash %s in "
		    "its name but its SHA-256 is %s", path, want, a->sha256);
		ray_err_hint(err, "the file is damaged or is not the one that "
		    "was published; fetch it again");
		goto out;
	}
	rc = check_raw_names(fd, (uint64_t)st.st_size, path, err);
	if (rc < 0)
		goto out;

	/*
	 * libzip reads through the same descriptor, so it sees the bytes
	 * just hashed.  The stream keeps the descriptor's close-on-exec
	 * flag, which zip_fdopen() (it dups) would lose.
	 */
	if (lseek(fd, 0, SEEK_SET) < 0) {
		rc = ray_err_sys(err, "cannot read archive '%s'", path);
		goto out;
	}
	fp = fdopen(fd, "rb");
	if (fp == NULL) {
		rc = ray_err_sys(err, "cannot read archive '%s'", path);
		goto out;
	}
	a->fd = fd;
	fd = -1;
	src = zip_source_filep_create(fp, 0, -1, &zerr);
	if (src == NULL) {
		rc = ray_err_set(err, RAY_EINVAL, "'%s' is not a readable zip "
		    "archive: %s", path, zip_error_strerror(&zerr));
		goto out;
	}
	fp = NULL;
	a->zip = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &zerr);
	if (a->zip == NULL && zip_error_code_zip(&zerr) == ZIP_ER_EXISTS) {
		/* libzip's own words, "File already exists", would mislead. */
		rc = ray_err_set(err, RAY_EINVAL, "archive '%s' has two entries "
		    "with the same name", path);
		goto out;
	}
	if (a->zip == NULL) {
		rc = ray_err_set(err, RAY_EINVAL, "'%s' is not a readable zip "
		    "archive: %s", path, zip_error_strerror(&zerr));
		goto out;
	}
	src = NULL;

	rc = list_files(a, err);
	if (rc < 0)
		goto out;
	rc = check_limits(a, limits, err);
	if (rc < 0)
		goto out;
	*out = a;
	a = NULL;

out:
	/* Each of these owns the one before it; at most one is left. */
	if (src != NULL)
		zip_source_free(src);
	if (fp != NULL)
		fclose(fp);
	if (fd >= 0)
		close(fd);
	zip_error_fini(&zerr);
	ray_archive_close(a);
	return rc;
}

size_t
ray_archive_count(const struct ray_archive *a)
{
	return a->count;
}

const char *
ray_archive_name(const struct ray_archive *a, size_t i)
{
	return i < a->count ? a->files[i].name : NULL;
}

const char *
ray_archive_sha256(const struct ray_archive *a)
{
	return a->sha256;
}

static const struct entry *
find(const struct ray_archive *a, const char *name)
{
	struct entry key = { (char *)name, 0, 0 };

	if (a->count == 0)
		return NULL;
	return bsearch(&key, a->files, a->count, sizeof(*a->files), cmp_entry);
}

/*
 * Whether the archive's file still holds the bytes that were hashed.  The
 * descriptor keeps the hashed file even if another is renamed over its
 * path; only a write in place (the same inode) could change it, and any
 * change to the inode moves its ctime, which nobody but the kernel sets.
 * So while size, mtime and ctime are as they were the bytes are too;
 * otherwise (a rewrite, or merely the path renamed away, which changes
 * the link count) the file is hashed again, and only the same SHA-256
 * lets the run go on.
 */
static int
check_unchanged(struct ray_archive *a, struct ray_err *err)
{
	char now[65];
	struct stat st;
	int rc;

	if (fstat(a->fd, &st) < 0)
		return ray_err_sys(err, "cannot read archive '%s'", a->path);
	if (st.st_size == a->st.st_size &&
	    st.st_mtim.tv_sec == a->st.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == a->st.st_mtim.tv_nsec &&
	    st.st_ctim.tv_sec == a->st.st_ctim.tv_sec &&
	    st.st_ctim.tv_nsec == a->st.st_ctim.tv_nsec)
		return 0;
	if (st.st_size == a->st.st_size) {
		rc = ray_sha256_fd(a->fd, a->path, now, err);
		if (rc < 0)
			return rc;
		if (strcmp(now, a->sha256) == 0) {
			a->st = st;
			return 0;
		}
	}
	rc = ray_err_set(err, RAY_EINVAL, "archive '%s' was rewritten after "
	    "it was opened, so its SHA-256 %s no longer vouches for what would "
	    "be read", a->path, a->sha256);
	ray_err_hint(err, "put back the archive whose SHA-256 is %s, then "
	    "--resume the run; or start a new run", a->sha256);
	return rc;
}

/* Where inflate() hands each slice of an entry's data. */
typedef int (*sink_fn)(void *ctx, const char *data, size_t len);

/*
 * Inflate entry `e` slice by slice into `sink`.  The data must end exactly
 * where the size the directory declared says, whatever the compressed
 * stream would give, and pass libzip's CRC check at its end.  A signal
 * stops it (see ray.h).  A failing sink leaves errno set; `what` names the
 * sink's work for its message ("write '%s/%s'").
 */
static int
inflate(struct ray_archive *a, const struct entry *e, sink_fn sink,
    void *ctx, const char *sink_what, struct ray_err *err)
{
	unsigned long mark = ray_signal_mark();
	char *buf = NULL, shown[SHOW_MAX];
	zip_file_t *f = NULL;
	zip_uint64_t got = 0;
	zip_int64_t n;
	int rc;

	show(e->name, strlen(e->name), shown);
	if ((rc = check_unchanged(a, err)) < 0)
		return rc;
	f = zip_fopen_index(a->zip, e->index, 0);
	if (f == NULL)
		return ray_err_set(err, RAY_EIO, "cannot read '%s' from archive "
		    "'%s': %s", shown, a->path, zip_strerror(a->zip));
	buf = xmalloc(SLICE);
	for (;;) {
		if (ray_interrupted(mark)) {
			rc = ray_err_interrupted(err, "unpacking '%s' from archive "
			    "'%s'", shown, a->path);
			goto out;
		}
		n = zip_fread(f, buf, SLICE);
		if (n < 0) {
			rc = ray_err_set(err, RAY_EIO, "cannot read '%s' from "
			    "archive '%s': %s", shown, a->path,
			    zip_file_strerror(f));
			goto out;
		}
		if (n == 0)
			break;
		if ((zip_uint64_t)n > e->size - got)
			break;
		got += (zip_uint64_t)n;
		if (sink(ctx, buf, (size_t)n) < 0) {
			rc = ray_err_sys(err, "cannot %s", sink_what);
			goto out;
		}
	}
	if (n != 0 || got != e->size) {
		rc = ray_err_set(err, RAY_EIO, "cannot read '%s' from archive "
		    "'%s': its data does not have the size recorded for it",
		    shown, a->path);
		goto out;
	}
	rc = 0;

out:
	zip_fclose(f);
	free(buf);
	return rc;
}

/* A sink into memory that inflate() never overfills (sizes are checked). */
struct mem {
	char *data;
	size_t len;
};

static int
to_mem(void *ctx, const char *data, size_t len)
{
	struct mem *m = ctx;

	memcpy(m->data + m->len, data, len);
	m->len += len;
	return 0;
}

static int
to_fd(void *ctx, const char *data, size_t len)
{
	return ray_write_all(*(int *)ctx, data, len);
}

/* Read the file of entry `e` whole into a NUL-terminated buffer. */
static int
load(struct ray_archive *a, const struct entry *e, char **out, size_t *len,
    struct ray_err *err)
{
	struct mem m = { NULL, 0 };
	char shown[SHOW_MAX];
	int rc;

	*out = NULL;
	*len = 0;
	if (e->size > RAY_ARCHIVE_MAX_FILE)
		return ray_err_set(err, RAY_ETOOBIG, "'%s' in archive '%s' is "
		    "%llu bytes, more than the limit of %zu MiB",
		    show(e->name, strlen(e->name), shown), a->path,
		    (unsigned long long)e->size, RAY_ARCHIVE_MAX_FILE >> 20);
	m.data = xmalloc((size_t)e->size + 1);
	rc = inflate(a, e, to_mem, &m, "read", err);
	if (rc < 0) {
		free(m.data);
		return rc;
	}
	m.data[m.len] = '\0';
	*out = m.data;
	*len = m.len;
	return 0;
}

int
ray_archive_read(struct ray_archive *a, const char *name, char **data,
    size_t *len, struct ray_err *err)
{
	const struct entry *e = find(a, name);
	char shown[SHOW_MAX];
	size_t got;
	int rc;

	*data = NULL;
	if (len != NULL)
		*len = 0;
	if (e == NULL)
		return ray_err_set(err, -ENOENT, "archive '%s' has no file named "
		    "'%s'", a->path, show(name, strlen(name), shown));
	rc = load(a, e, data, &got, err);
	if (rc == 0 && len != NULL)
		*len = got;
	return rc;
}

static int
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

int
ray_archive_extract(struct ray_archive *a, const char *dir,
    struct ray_err *err)
{
	char shown[SHOW_MAX], what[SHOW_MAX + PATH_MAX];
	size_t i, made = 0;
	mode_t mode;
	int dfd = -1, fd = -1, rc = 0, saved;

	/* The folder itself is not followed either if it is a link. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		rc = ray_err_open(err, "directory", dir);
		goto out;
	}
	for (i = 0; i < a->count; i++) {
		const char *name = a->files[i].name;

		show(name, strlen(name), shown);
		mode = ends_with(name, ".sh") ? 0755 : 0644;
		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, mode);
		if (fd < 0) {
			rc = ray_err_sys(err, "cannot create '%s/%s'", dir, shown);
			goto out;
		}
		made = i + 1;
		/* Streamed, so a file's size does not bound memory. */
		snprintf(what, sizeof(what), "write '%s/%s'", dir, shown);
		rc = inflate(a, &a->files[i], to_fd, &fd, what, err);
		if (rc < 0)
			goto out;
		/* The mode is the archive's promise, not the umask's. */
		if (fchmod(fd, mode) < 0) {
			rc = ray_err_sys(err, "cannot set the mode of '%s/%s'", dir,
			    shown);
			goto out;
		}
		rc = close(fd);
		fd = -1;
		if (rc < 0) {
			rc = ray_err_sys(err, "cannot close '%s/%s'", dir, shown);
			goto out;
		}
	}

out:
	saved = errno;
	if (fd >= 0)
		close(fd);
	/* Take back what this call made, so a retry starts clean. */
	if (rc < 0 && dfd >= 0) {
		for (i = 0; i < made; i++)
			unlinkat(dfd, a->files[i].name, 0);
	}
	if (dfd >= 0)
		close(dfd);
	errno = saved;
	return rc;
}

void
ray_archive_close(struct ray_archive *a)
{
	size_t i;

	if (a == NULL)
		return;
	/* Read-only: zip_discard frees everything and writes nothing. */
	if (a->zip != NULL)
		zip_discard(a->zip);
	for (i = 0; i < a->count; i++)
		free(a->files[i].name);
	free(a->files);
	free(a->path);
	free(a);
}
