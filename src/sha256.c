/*
 * sha256.c - SHA-256 through libcrypto's EVP interface (see sha256.h).
 *
 * libzip on Debian already links libcrypto, so the hash comes from the
 * library every distribution keeps correct and fast (with the CPU's SHA
 * instructions where there are any) rather than from code of our own.
 */
#include "sha256.h"
#include "ray.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The buffer a file is streamed through. */
#define FILE_CHUNK 65536

/*
 * EVP fails only when it cannot allocate or the provider is broken; the
 * first is what xmalloc() stops on, and the second leaves no hash to
 * trust, so both stop the process.
 */
static void
evp_failed(const char *what)
{
	fprintf(stderr, "raymond: error: libcrypto cannot %s SHA-256\n", what);
	exit(1);
}

void
ray_sha256_init(struct ray_sha256_ctx *c)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();

	if (md == NULL || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1)
		evp_failed("start");
	c->md = md;
}

void
ray_sha256_update(struct ray_sha256_ctx *c, const void *data, size_t len)
{
	if (len > 0 && EVP_DigestUpdate(c->md, data, len) != 1)
		evp_failed("update");
}

void
ray_sha256_final(struct ray_sha256_ctx *c, unsigned char out[32])
{
	unsigned int n = 0;

	if (EVP_DigestFinal_ex(c->md, out, &n) != 1 || n != RAY_SHA256_LEN)
		evp_failed("finish");
	EVP_MD_CTX_free(c->md);
	c->md = NULL;
}

void
ray_sha256(const void *data, size_t len, unsigned char out[32])
{
	if (EVP_Digest(data, len, out, NULL, EVP_sha256(), NULL) != 1)
		evp_failed("compute");
}

void
ray_sha256_hex(const unsigned char digest[32], char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	int i;

	for (i = 0; i < 32; i++) {
		hex[2 * i] = digits[digest[i] >> 4];
		hex[2 * i + 1] = digits[digest[i] & 15];
	}
	hex[64] = '\0';
}

int
ray_sha256_fd(int fd, const char *path, char hex[65], struct ray_err *err)
{
	struct ray_sha256_ctx c;
	unsigned char digest[32];
	unsigned char *buf = xmalloc(FILE_CHUNK);
	unsigned long mark = ray_signal_mark();
	off_t off = 0;
	ssize_t n;
	int rc = 0;

	hex[0] = '\0';
	ray_sha256_init(&c);
	for (;;) {
		/* A file of gigabytes takes seconds; a signal must not wait. */
		if (ray_interrupted(mark)) {
			rc = ray_err_interrupted(err, "hashing '%s'", path);
			goto out;
		}
		n = pread(fd, buf, FILE_CHUNK, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			ray_err_set(err, rc, "cannot read '%s': %s", path,
			    strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		off += n;
		ray_sha256_update(&c, buf, (size_t)n);
	}

out:
	/* Finishing also releases the context, so it is done on errors too. */
	ray_sha256_final(&c, digest);
	if (rc == 0)
		ray_sha256_hex(digest, hex);
	free(buf);
	return rc;
}

int
ray_sha256_file(const char *path, char hex[65], struct ray_err *err)
{
	int fd, rc, saved;

	hex[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		saved = errno;
		return ray_err_set(err, -saved, "cannot open '%s': %s", path,
		    strerror(saved));
	}
	rc = ray_sha256_fd(fd, path, hex, err);
	/* Nothing was written through this descriptor; close cannot lose data. */
	close(fd);
	return rc;
}
