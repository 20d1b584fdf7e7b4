/*
 * embedded.h - the Lua compiled into the binary.
 *
 * tools/embed.sh generates the table at build time from lua/raymond/ files
 * (named as modules, "raymond.engine"; Lua bytecode when the build has
 * luac) and hooks/ files (named by path, "hooks/budget.lua"; source).  The
 * data is static and NUL-terminated.
 */
#ifndef RAY_EMBEDDED_H
#define RAY_EMBEDDED_H

#include <stddef.h>

struct ray_embedded {
	const char *name;
	const char *data;
	size_t len;
};

extern const struct ray_embedded ray_embedded_files[];
extern const size_t ray_embedded_count;

#endif
