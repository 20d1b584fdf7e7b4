/*
 * sha256.h - SHA-256, for checking that a workflow archive is the one
 * whose hash its name promises.  An adapter over libcrypto's EVP
 * interface: this is the only module that includes OpenSSL's headers.
 *
 * One shot: ray_sha256(data, len, digest).  Incremental:
 *
 *	struct ray_sha256_ctx c;
 *
 *	ray_sha256_init(&c);
 *	ray_sha256_update(&c, part, len);	(any number of times)
 *	ray_sha256_final(&c, digest);
 *
 * Splitting the input differently gives the same digest.  Every
 * ray_sha256_init() must be followed by ray_sha256_final(), which
 * releases what init took; call ray_sha256_init() again to reuse the
 * context.  None of these can fail: libcrypto failing to set up SHA-256,
 * which only running out of memory can cause, stops the process as the
 * x*alloc helpers do (ray.h).
 *
 * ray_sha256_file() and ray_sha256_fd() stream a file and write the digest
 * as 64 lowercase hex digits and a NUL, the form sha256sum(1) prints.
 * They return 0, or -errno with `err` naming the path and the reason.
 * ray_sha256_fd() reads the whole file from its start with pread(2), so
 * the descriptor's offset is left alone for whoever else reads through
 * it, and leaves the descriptor open; `path` is only for the message.
 * A signal (see ray.h) stops either with RAY_EINTR.
 */
#ifndef RAY_SHA256_H
#define RAY_SHA256_H

#include <stddef.h>

#include "ray.h"

#define RAY_SHA256_LEN 32

struct ray_sha256_ctx {
	void *md;		/* libcrypto's EVP_MD_CTX, between init and final */
};

void ray_sha256_init(struct ray_sha256_ctx *c);
void ray_sha256_update(struct ray_sha256_ctx *c, const void *data, size_t len);
void ray_sha256_final(struct ray_sha256_ctx *c, unsigned char out[32]);
void ray_sha256(const void *data, size_t len, unsigned char out[32]);

/* Write `digest` as 64 lowercase hex digits and a NUL. */
void ray_sha256_hex(const unsigned char digest[32], char hex[65]);

int ray_sha256_file(const char *path, char hex[65], struct ray_err *err);
int ray_sha256_fd(int fd, const char *path, char hex[65], struct ray_err *err);

#endif
