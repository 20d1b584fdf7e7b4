/*
 * json.h - encode a Lua value as JSON, exactly.
 *
 * Debian's lua-cjson (2.1.0) writes numbers with at most 14 significant
 * digits, which would silently change hook data such as a timestamp with
 * microseconds or a 64-bit counter each time a state file is written.
 * This encoder writes integers exactly and floats with 17 significant
 * digits, which read back to the same double.  Decoding stays with cjson.
 *
 * Mapping: nil and the cjson null become null; booleans, numbers and
 * strings as themselves (strings are escaped as JSON requires; bytes of
 * 0x80 and above pass through); a table whose keys are exactly 1..n with
 * n > 0 becomes an array; any other table an object, whose keys must be
 * strings (integer keys are written as strings); an empty table becomes
 * {}.  Keys are written in sorted order so equal states give equal files.
 *
 * Errors: a function, userdata, thread, a non-finite number, a table key
 * that is neither string nor number, or nesting deeper than 64 levels
 * (which also catches cycles) returns RAY_EINVAL with `err` naming the
 * path to the value, e.g. "data.hook.fn is a function".
 */
#ifndef RAY_JSON_H
#define RAY_JSON_H

#include <lua.h>

#include "ray.h"

/*
 * Push the JSON text for the value at `idx`; on an error above push
 * nothing.  Like any Lua API call this may raise (out of memory); what it
 * allocated is then freed as the error unwinds the stack.
 */
int ray_json_encode(lua_State *L, int idx, struct ray_err *err);

#endif
