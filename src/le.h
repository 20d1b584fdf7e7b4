/*
 * le.h - little-endian integers in byte buffers, as file formats store
 * them (zip archives, the state journal).  Reading and writing byte by
 * byte works at any alignment and on any host.
 */
#ifndef RAY_LE_H
#define RAY_LE_H

#include <stdint.h>

static inline uint16_t
ray_le16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t
ray_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static inline uint64_t
ray_le64(const unsigned char *p)
{
	return (uint64_t)ray_le32(p) | (uint64_t)ray_le32(p + 4) << 32;
}

static inline void
ray_put_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static inline void
ray_put_le64(unsigned char *p, uint64_t v)
{
	ray_put_le32(p, (uint32_t)v);
	ray_put_le32(p + 4, (uint32_t)(v >> 32));
}

#endif
