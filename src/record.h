/*
 * record.h - the debug record of a run: one append-only file of pieces.
 *
 * A run's record keeps, for every step (a script run, a Claude turn), what
 * went in and what came out: the command, the prompt, each chunk of stdout
 * and stderr as it arrived, and the outcome; and one line per transition.
 * All of it goes to one file, .raymond/debug/<id>.record, opened once per
 * process, so keeping the record costs one write per piece and creates no
 * file per step.  Layout:
 *
 *	raymond record 1\n			the first line of the file
 *	@ STEP PIECE LENGTH\n DATA \n		each piece
 *
 * STEP is a decimal step number (0 for pieces about the whole run), PIECE
 * a name of letters, digits, '.', '_' and '-' (start, prompt, stdout,
 * stderr, end, transition, ...), LENGTH the number of bytes of DATA, which
 * is kept exactly as it was, binary or not.  Pieces of different steps
 * interleave as their children write.  Each piece is written with one
 * writev on a descriptor opened with O_APPEND.
 *
 * Calling sequence:
 *
 *	ray_record_open(path, &r, &err);
 *	ray_record_put(r, step, piece, data, len);	any number of times
 *	ray_record_close(r);
 *
 * Errors: open returns 0 or a negative code and fills `err`.  A record is
 * kept on a best-effort basis: put returns 0 or -1 with errno, and the
 * caller goes on either way.
 *
 * Ownership: the caller owns the record and closes it once.
 */
#ifndef RAY_RECORD_H
#define RAY_RECORD_H

#include <stddef.h>

#include "ray.h"

#define RAY_RECORD_MAGIC "raymond record 1\n"

struct ray_record;

int ray_record_open(const char *path, struct ray_record **out, struct ray_err *err);
int ray_record_put(struct ray_record *r, unsigned long step, const char *piece,
    const void *data, size_t len);
void ray_record_close(struct ray_record *r);

#endif
