// SPDX-License-Identifier: GPL-2.0-only
/*
 * tcgprof-mark: run in a QEMU guest to steer the tcgprof plugin (see
 * tcgprof.c) by executing one of its marker instructions.
 *
 *   tcgprof-mark reset | start | stop | dump N
 *   tcgprof-mark run N COMMAND [ARG...]
 *
 * `run` resets the counts, runs COMMAND, waits for it and dumps to N, so
 * the profile covers the command (its fork, exec and exit included) and
 * whatever else the guest did meanwhile. Exits with COMMAND's status.
 * Without the plugin the markers are no-ops.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

enum { CMD_RESET = 1, CMD_START = 2, CMD_STOP = 3, CMD_DUMP = 4 };

static void (*marker)(void);
static unsigned char *page;

/* Executes `nopl 0x5046CCAA(%rax); ret` from a page written at run time. */
static void mark(unsigned int cmd, unsigned int arg)
{
	static const unsigned char head[] = { 0x0f, 0x1f, 0x80 };
	long psz = sysconf(_SC_PAGESIZE);

	if (!page) {
		page = mmap(NULL, (size_t)psz, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (page == MAP_FAILED) {
			perror("tcgprof-mark: mmap");
			exit(2);
		}
	} else if (mprotect(page, (size_t)psz, PROT_READ | PROT_WRITE) != 0) {
		perror("tcgprof-mark: mprotect");
		exit(2);
	}
	memcpy(page, head, sizeof(head));
	page[3] = (unsigned char)arg;
	page[4] = (unsigned char)cmd;
	page[5] = 0x46;
	page[6] = 0x50;
	page[7] = 0xc3;
	if (mprotect(page, (size_t)psz, PROT_READ | PROT_EXEC) != 0) {
		perror("tcgprof-mark: mprotect");
		exit(2);
	}
	__builtin___clear_cache((char *)page, (char *)page + 8);
	marker = (void (*)(void))(uintptr_t)page;
	marker();
}

static unsigned int label(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > 255) {
		fprintf(stderr, "tcgprof-mark: dump label must be 0 to 255, not '%s'\n", s);
		exit(2);
	}
	return (unsigned int)v;
}

static int usage(void)
{
	fprintf(stderr, "usage: tcgprof-mark reset | start | stop | dump N\n"
		"       tcgprof-mark run N COMMAND [ARG...]\n");
	return 2;
}

int main(int argc, char **argv)
{
	pid_t pid;
	int status;

	if (argc == 2 && strcmp(argv[1], "reset") == 0)
		mark(CMD_RESET, 0);
	else if (argc == 2 && strcmp(argv[1], "start") == 0)
		mark(CMD_START, 0);
	else if (argc == 2 && strcmp(argv[1], "stop") == 0)
		mark(CMD_STOP, 0);
	else if (argc == 3 && strcmp(argv[1], "dump") == 0)
		mark(CMD_DUMP, label(argv[2]));
	else if (argc >= 4 && strcmp(argv[1], "run") == 0) {
		unsigned int n = label(argv[2]);

		fflush(NULL);
		mark(CMD_RESET, 0);
		pid = fork();
		if (pid < 0) {
			perror("tcgprof-mark: fork");
			return 2;
		}
		if (pid == 0) {
			execvp(argv[3], argv + 3);
			fprintf(stderr, "tcgprof-mark: %s: %s\n", argv[3], strerror(errno));
			_exit(127);
		}
		while (waitpid(pid, &status, 0) < 0) {
			if (errno != EINTR) {
				perror("tcgprof-mark: waitpid");
				return 2;
			}
		}
		mark(CMD_DUMP, n);
		if (WIFEXITED(status))
			return WEXITSTATUS(status);
		return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	} else
		return usage();
	return 0;
}
