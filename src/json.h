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
 * n > 0 becomes an array; a table whose keys are all strings an object;
 * an empty table becomes {}, or [] when its metatable has __jsontype =
 * "array".  Keys are written in sorted order so equal
 * states give equal files.
 *
 * Only what reads back as it was is written: a table with any other keys
 * (a list with a hole such as {1, nil, 3}, a list not starting at 1,
 * whole-number keys next to string keys, 1 and "1" both, a key that is
 * neither a string nor a whole number) has no faithful JSON, since cjson
 * would read it back with other keys.
 *
 * Errors: a function, userdata, thread, a non-finite number, an integer
 * beyond +-2^53 (cjson reads numbers as doubles, so it would not read
 * back exactly), a table
 * without a faithful JSON form (above), or nesting deeper than
 * RAY_JSON_MAX_DEPTH levels of tables (which also catches cycles) returns
 * RAY_EINVAL with `err` naming the path to the value, e.g.
 * "data.hook.fn is a function", "data.list is a list with a hole: [2] is
 * nil but [3] is not, which JSON cannot hold".
 */
#ifndef RAY_JSON_H
#define RAY_JSON_H

#include <lua.h>

#include "ray.h"

/*
 * The most levels of tables a value may nest, counting the outermost;
 * the state file's reader (lua/raymond/runstate.lua) allows exactly as
 * many, so whatever is saved loads again.
 */
#define RAY_JSON_MAX_DEPTH 64

/*
 * Push the JSON text for the value at `idx`; on an error above push
 * nothing.  Like any Lua API call this may raise (out of memory); what it
 * allocated is then freed as the error unwinds the stack.
 */
int ray_json_encode(lua_State *L, int idx, struct ray_err *err);

#endif
