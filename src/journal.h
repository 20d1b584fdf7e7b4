/*
 * journal.h - an append-only log of state records that makes each save
 * durable with one write and one fdatasync, instead of the two fsyncs and
 * the rename a whole-file replacement costs.
 *
 * The file is zero-filled to its capacity when it is opened, so an append
 * overwrites blocks that already exist and fdatasync has no metadata to
 * commit.  Layout (integers little-endian):
 *
 *	header  "RAYJRNL1", generation (u64), CRC-32C of those 16 bytes,
 *	        zeros up to RAY_JOURNAL_HEADER bytes
 *	record  "RAYR", payload length (u32), generation (u64),
 *	        sequence number (u32, 1 for the first record),
 *	        CRC-32C of the 20 bytes before it and of the payload,
 *	        the payload, zeros up to a multiple of 8 bytes
 *
 * The records of a journal are those from the header on that carry its
 * generation, numbered 1, 2, 3..., each with a matching CRC; the first one
 * that fails any of these checks ends the journal.  So a record torn by a
 * crash or a power cut is never read, and neither is anything written
 * under an earlier generation: opening a journal gives it a new random
 * generation, which retires every record it held.
 *
 * Calling sequence:
 *
 *	ray_journal_open(path, min_record, &j, &err);
 *	ray_journal_append(j, data, len, &err);	any number of times
 *	ray_journal_close(j);
 *
 *	ray_journal_read(path, &data, &len, &err);	the last record
 *
 * Opening starts the journal afresh (it may already exist): the caller
 * must already hold what the old records said somewhere durable.  An
 * open that fails after the file was opened (no room for the zeros, a
 * failing write or fsync) removes the file, so a journal
 * that cannot be made never keeps the disk space the state file needs.
 *
 * Errors: functions return 0 or a negative code and fill `err`.  An
 * append that does not fit in the capacity returns RAY_EFULL and writes
 * nothing; open a new journal (with a larger min_record) to go on.  A
 * failed append leaves no readable record behind as far as it can: the
 * record's first bytes are zeroed again.  ray_journal_read gives 0 and
 * *data == NULL when the file is missing or holds no record.
 *
 * Ownership: the journal is the caller's until ray_journal_close(); the
 * data of ray_journal_read is the caller's to free(3).
 */
#ifndef RAY_JOURNAL_H
#define RAY_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ray.h"

#define RAY_JOURNAL_HEADER 32
/* The bytes of a record before its payload. */
#define RAY_JOURNAL_RECORD_HEAD 24
/* The smallest capacity; a journal holds at least 8 records of min_record. */
#define RAY_JOURNAL_MIN_CAPACITY ((size_t)1 << 20)

struct ray_journal;

int ray_journal_open(const char *path, size_t min_record,
    struct ray_journal **out, struct ray_err *err);
int ray_journal_append(struct ray_journal *j, const void *data, size_t len,
    struct ray_err *err);
void ray_journal_close(struct ray_journal *j);

int ray_journal_read(const char *path, char **data, size_t *len,
    struct ray_err *err);
/*
 * The last record in `len` bytes of journal image: 1 with its payload's
 * offset and length, or 0 when there is none.  Any bytes are safe.
 */
int ray_journal_last(const unsigned char *img, size_t len, size_t *off,
    size_t *plen);

uint32_t ray_crc32c(uint32_t crc, const void *data, size_t len);

#endif
