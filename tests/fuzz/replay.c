// SPDX-License-Identifier: GPL-2.0-only
/*
 * Corpus replay for the fuzz targets without libFuzzer: feeds every file
 * given on the command line (or in given directories) to
 * LLVMFuzzerTestOneInput. Built with AddressSanitizer by meson, so the
 * suite catches memory errors on the committed corpus with gcc alone.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	static uint8_t buf[1 << 20];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f) {
		fprintf(stderr, "replay: cannot open %s\n", path);
		return 1;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	/* An exact-size heap copy, so ASan sees reads past the end. */
	{
		uint8_t *copy = malloc(n ? n : 1);

		if (!copy)
			return 1;
		memcpy(copy, buf, n);
		LLVMFuzzerTestOneInput(copy, n);
		free(copy);
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned files = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *e;

		if (stat(argv[i], &st)) {
			fprintf(stderr, "replay: %s: not found\n", argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (run_file(argv[i]))
				return 1;
			files++;
			continue;
		}
		d = opendir(argv[i]);
		while (d && (e = readdir(d))) {
			char path[4096];

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			if (run_file(path))
				return 1;
			files++;
		}
		if (d)
			closedir(d);
	}
	printf("replayed %u inputs\n", files);
	/* An empty corpus would make this test assert nothing. */
	return files ? 0 : 1;
}
