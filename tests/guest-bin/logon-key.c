// SPDX-License-Identifier: GPL-2.0-only
/*
 * logon-key: add a "logon" key, read from stdin, to the user keyring, so
 * that dm-crypt can take it by name (dmsetup message DEV 0 key set
 * :LEN:logon:DESCRIPTION) and the key never appears on a command line.
 *
 *   logon-key DESCRIPTION < KEYFILE     (DESCRIPTION is "prefix:name")
 *
 * Prints the key's serial number. Exit: 0 added, 1 failed, 2 usage.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/keyctl.h>

#define MAX_KEY 128

int main(int argc, char **argv)
{
	unsigned char key[MAX_KEY];
	size_t len = 0;
	ssize_t r;
	long serial;

	if (argc != 2 || !strchr(argv[1], ':')) {
		fprintf(stderr, "usage: logon-key PREFIX:NAME < KEYFILE\n");
		return 2;
	}
	while (len < sizeof(key) &&
	       (r = read(STDIN_FILENO, key + len, sizeof(key) - len)) > 0)
		len += (size_t)r;
	if (len == 0 || len == sizeof(key)) {
		fprintf(stderr, "logon-key: the key on stdin must be 1 to %d bytes\n",
			MAX_KEY - 1);
		return 2;
	}
	serial = syscall(SYS_add_key, "logon", argv[1], key, len,
			 KEY_SPEC_USER_KEYRING);
	explicit_bzero(key, sizeof(key));
	if (serial < 0) {
		fprintf(stderr, "logon-key: add_key: %s\n", strerror(errno));
		return 1;
	}
	printf("%ld\n", serial);
	return 0;
}
