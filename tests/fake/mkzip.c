/*
 * mkzip.c - build a zip archive for the tests (a fresh machine has no zip
 * command).
 *
 *	mkzip OUT.zip NAME=PATH ...   add file PATH as entry NAME
 *	mkzip OUT.zip NAME/           add a directory entry
 *
 * Entry names are taken as given, so tests can make archives raymond must
 * refuse ("../x", "/abs", "a/b/c").
 */
#include <stdio.h>
#include <string.h>
#include <zip.h>

int
main(int argc, char **argv)
{
	zip_t *z;
	int err, i;

	if (argc < 2) {
		fprintf(stderr, "usage: mkzip OUT.zip NAME=PATH | NAME/ ...\n");
		return 2;
	}
	z = zip_open(argv[1], ZIP_CREATE | ZIP_TRUNCATE, &err);
	if (z == NULL) {
		fprintf(stderr, "mkzip: cannot create %s (libzip error %d)\n", argv[1], err);
		return 1;
	}
	for (i = 2; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		zip_source_t *src;

		if (eq == NULL) {
			if (zip_dir_add(z, argv[i], ZIP_FL_ENC_RAW) < 0)
				goto fail;
			continue;
		}
		*eq = '\0';
		src = zip_source_file(z, eq + 1, 0, -1);
		if (src == NULL || zip_file_add(z, argv[i], src, ZIP_FL_ENC_RAW) < 0) {
			zip_source_free(src);
			goto fail;
		}
	}
	if (zip_close(z) < 0) {
		fprintf(stderr, "mkzip: %s\n", zip_strerror(z));
		zip_discard(z);
		return 1;
	}
	return 0;
fail:
	fprintf(stderr, "mkzip: %s: %s\n", argv[i], zip_strerror(z));
	zip_discard(z);
	return 1;
}
