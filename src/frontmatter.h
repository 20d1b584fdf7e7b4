/*
 * frontmatter.h - the YAML frontmatter of markdown prompt files.
 *
 * A prompt file may begin with a block of YAML between two `---` lines:
 *
 *	---
 *	model: sonnet
 *	allowed_transitions: [{tag: goto, target: B.md}, {tag: result}]
 *	---
 *	The prompt itself.
 *
 * ray_frontmatter_split() finds the block; ray_frontmatter_push() turns
 * its YAML into a Lua table.  Which fields are allowed is decided by the
 * Lua engine, not here: every field comes through untouched.  This is the
 * only module that includes <yaml.h> (libyaml).
 *
 * Fences.  A `---` line is exactly three dashes, optionally followed by
 * spaces or tabs and a CR, then LF or the end of the text.  A file has
 * frontmatter when its first line is a fence (a UTF-8 byte order mark
 * before it is allowed); the YAML is every line up to the next fence, and
 * the body starts right after that fence's LF (or at the end of the text
 * when the fence has no LF).  A file whose first line is not a fence has
 * no frontmatter, and its body is the whole text.
 *
 * Mapping from YAML to Lua.  Mappings become tables with string keys
 * (keys are never typed: `1: x` has the key "1"); sequences become array
 * tables; scalars become the strings the author wrote, so `target: 007`
 * and `payload: yes` stay "007" and "yes".  The schema decides the rest:
 * a table of field types (field = "number", "boolean", ...) names the top
 * level fields whose plain (unquoted) value is typed:
 *
 *	"boolean" fields: true false yes no on off (any case)    boolean
 *	"number" fields:  [-+]?[0-9]+    integer (a float if it does not
 *					 fit in 64 bits)
 *	                  [-+]?(.[0-9]+|[0-9]+(.[0-9]*)?)([eE][-+]?[0-9]+)?
 *					 float
 *
 * Any other value of such a field stays a string, for the caller to report
 * as the wrong type; so do values nested in lists and mappings, quoted and
 * block (`|`, `>`) scalars, and scalars tagged `!!str` or `!`; other tags
 * are ignored.  Wherever it is, a plain null (null, ~ in any case, or the
 * empty value) is nil: the key is left out of its mapping, and in a
 * sequence it is "".  An alias stands for
 * a copy of its anchored value; an anchor is defined once its node ends,
 * so a node cannot refer to itself.  Merge keys (`<<`) are ordinary keys.
 * A document that is empty (only blanks and comments) or null gives an
 * empty table.
 *
 * The same reader serves whole YAML files (ray_yaml_push, below), whose
 * messages name the file and whose values can be traced to their lines.
 *
 * Limits: nesting deeper than 64 levels, or more than 100000 values in
 * all (each value an alias expands to counts, which stops "billion laughs"
 * documents early), are errors.
 */
#ifndef RAY_FRONTMATTER_H
#define RAY_FRONTMATTER_H

#include <lua.h>
#include <stddef.h>

#include "ray.h"

/*
 * Find the frontmatter of `text`.  On return `*has` says whether there is
 * any; if so the YAML is text[*yaml_off, *yaml_off + *yaml_len), else both
 * are 0.  The body is text[*body_off, len).  An opening fence with no
 * closing one returns RAY_EINVAL (with *has 0 and *body_off 0).
 */
int ray_frontmatter_split(const char *text, size_t len, size_t *yaml_off,
    size_t *yaml_len, size_t *body_off, int *has);

/*
 * Parse `yaml` and push it as a Lua table (see above).  `first_line` is
 * the line of the file on which `yaml` starts (1-based; 2 when the opening
 * fence is line 1).  `types` is the stack index of the field types table
 * (read with raw access), or 0 for none: every value a string.  Every
 * error names a line of the file:
 * "frontmatter line 4: did not find expected key ...".  On error nothing
 * is pushed and RAY_EINVAL (RAY_ETOOBIG for the size limit) is returned
 * with `err` filled.
 */
int ray_frontmatter_push(lua_State *L, const char *yaml, size_t len,
    int first_line, int types, struct ray_err *err);

/*
 * Parse a whole YAML file and push it as ray_frontmatter_push() does,
 * every value a string, for the caller to check against what it expects
 * (a configuration file).  `name` is the file as messages show it: every
 * error is "NAME:LINE: ..." ("NAME: ..." for the size limit), and a root
 * that is a list or a single value is an error saying so.  `lines` is the
 * stack index of a table, or 0: for every mapping and list pushed,
 * lines[that table] is set to a table giving the line of each of its keys
 * (a mapping's, null values included) or elements (a list's).
 */
int ray_yaml_push(lua_State *L, const char *yaml, size_t len,
    const char *name, int lines, struct ray_err *err);

#endif
