/*
 * sha256.c - SHA-256 as specified in FIPS 180-4, section 6.2 (see sha256.h).
 *
 * A plain, portable implementation: the message is processed in 64-byte
 * blocks, read as big-endian words whatever the host's byte order.
 */
#include "sha256.h"
#include "ray.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The buffer a file is streamed through. */
#define FILE_CHUNK 65536

/* The first 32 bits of the fractional parts of the cube roots of the first
 * 64 primes (FIPS 180-4, 4.2.2). */
static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5,
	0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
	0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
	0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5,
	0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t
ror(uint32_t x, unsigned n)
{
	return x >> n | x << (32 - n);
}

static uint32_t
load_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static void
store_be32(unsigned char *p, uint32_t x)
{
	p[0] = (unsigned char)(x >> 24);
	p[1] = (unsigned char)(x >> 16);
	p[2] = (unsigned char)(x >> 8);
	p[3] = (unsigned char)x;
}

/* Fold one 64-byte block into the hash value (FIPS 180-4, 6.2.2). */
static void
compress(uint32_t h[8], const unsigned char *block)
{
	uint32_t w[64], a, b, c, d, e, f, g, k, t1, t2, s0, s1;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = load_be32(block + 4 * i);
	for (i = 16; i < 64; i++) {
		s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ w[i - 15] >> 3;
		s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ w[i - 2] >> 10;
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}

	a = h[0];
	b = h[1];
	c = h[2];
	d = h[3];
	e = h[4];
	f = h[5];
	g = h[6];
	k = h[7];
	for (i = 0; i < 64; i++) {
		t1 = k + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) +
		    ((e & f) ^ (~e & g)) + K[i] + w[i];
		t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) +
		    ((a & b) ^ (a & c) ^ (b & c));
		k = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
	h[5] += f;
	h[6] += g;
	h[7] += k;
}

void
ray_sha256_init(struct ray_sha256_ctx *c)
{
	/* The fractional parts of the square roots of the first 8 primes. */
	static const uint32_t iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(c->h, iv, sizeof(iv));
	c->bytes = 0;
	c->used = 0;
}

void
ray_sha256_update(struct ray_sha256_ctx *c, const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t take;

	c->bytes += len;
	/* Complete a partial block first, if one is waiting. */
	if (c->used > 0) {
		take = 64 - c->used < len ? 64 - c->used : len;
		memcpy(c->block + c->used, p, take);
		c->used += take;
		p += take;
		len -= take;
		if (c->used < 64)
			return;
		compress(c->h, c->block);
		c->used = 0;
	}
	/* Whole blocks are hashed straight from the caller's buffer. */
	while (len >= 64) {
		compress(c->h, p);
		p += 64;
		len -= 64;
	}
	if (len > 0) {
		memcpy(c->block, p, len);
		c->used = len;
	}
}

void
ray_sha256_final(struct ray_sha256_ctx *c, unsigned char out[32])
{
	uint64_t bits = c->bytes * 8;
	int i;

	/*
	 * Padding (FIPS 180-4, 5.1.1): a 1 bit, zeros up to 56 bytes into a
	 * block, then the message length in bits as a big-endian 64-bit
	 * number.  When fewer than 9 bytes are left, the padding spills
	 * into one more block.
	 */
	c->block[c->used++] = 0x80;
	if (c->used > 56) {
		memset(c->block + c->used, 0, 64 - c->used);
		compress(c->h, c->block);
		c->used = 0;
	}
	memset(c->block + c->used, 0, 56 - c->used);
	store_be32(c->block + 56, (uint32_t)(bits >> 32));
	store_be32(c->block + 60, (uint32_t)bits);
	compress(c->h, c->block);

	for (i = 0; i < 8; i++)
		store_be32(out + 4 * i, c->h[i]);
	/* Leave nothing of the message behind in the context. */
	memset(c, 0, sizeof(*c));
}

void
ray_sha256(const void *data, size_t len, unsigned char out[32])
{
	struct ray_sha256_ctx c;

	ray_sha256_init(&c);
	ray_sha256_update(&c, data, len);
	ray_sha256_final(&c, out);
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
	ssize_t n;
	int rc = 0;

	hex[0] = '\0';
	ray_sha256_init(&c);
	for (;;) {
		n = read(fd, buf, FILE_CHUNK);
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
		ray_sha256_update(&c, buf, (size_t)n);
	}
	ray_sha256_final(&c, digest);
	ray_sha256_hex(digest, hex);

out:
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
