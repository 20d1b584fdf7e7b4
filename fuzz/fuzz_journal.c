/*
 * fuzz_journal.c - reading the state journal (src/journal.h).
 *
 * The input is a journal file's bytes.  Whatever they are, finding the
 * last record must stay inside them, and a record it returns must carry a
 * valid checksum.  The answer must also agree with the file's prefixes:
 * cut right after the record, the same record is found; cut one byte
 * into it, an earlier record or none.
 */
#include "fuzz.h"
#include "journal.h"
#include "le.h"

#include <stdint.h>
#include <string.h>

#define REC_HEAD RAY_JOURNAL_RECORD_HEAD

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off, len, off2, len2;
	const unsigned char *head;

	if (!ray_journal_last(data, size, &off, &len))
		return 0;
	if (off < RAY_JOURNAL_HEADER + REC_HEAD || off > size || len > size - off)
		bad("record at %zu, %zu bytes, outside the %zu input bytes", off, len, size);
	head = data + off - REC_HEAD;
	if (memcmp(head, "RAYR", 4) != 0 || ray_le32(head + 4) != len)
		bad("record at %zu does not start with its head", off);
	if (ray_le32(head + 20) != ray_crc32c(ray_crc32c(0, head, 20), data + off, len))
		bad("record at %zu returned with a bad checksum", off);
	if (!ray_journal_last(data, off + len, &off2, &len2) || off2 != off || len2 != len)
		bad("cut after the record at %zu, it is no longer the last", off);
	if (ray_journal_last(data, off + len - 1, &off2, &len2) && off2 >= off)
		bad("cut inside the record at %zu, a record at %zu was read", off, off2);
	return 0;
}
