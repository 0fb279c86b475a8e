// SPDX-License-Identifier: GPL-2.0-only
/*
 * Keys for opalctl: read from a file or stdin (never argv or environment),
 * kept in mlock'ed memory and zeroed with explicit_bzero when released.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <termios.h>
#include <time.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nbde-secret.h"

#define SECRET_CAP 4096	/* one page: the largest key file accepted */

struct secret *secret_new(void)
{
	struct secret *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->data = mmap(NULL, SECRET_CAP, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->data == MAP_FAILED) {
		free(s);
		return NULL;
	}
	/* Not fatal without CAP_IPC_LOCK under a tight limit, but keep trying. */
	s->locked = mlock(s->data, SECRET_CAP) == 0;
	madvise(s->data, SECRET_CAP, MADV_DONTDUMP);
	s->cap = SECRET_CAP;
	return s;
}

void secret_free(struct secret *s)
{
	if (!s)
		return;
	explicit_bzero(s->data, s->cap);
	if (s->locked)
		munlock(s->data, s->cap);
	munmap(s->data, s->cap);
	free(s);
}

int secret_read(struct secret *s, const char *path, FILE *in)
{
	int fd, own = 0;
	ssize_t n;

	s->len = 0;
	if (!strcmp(path, "-")) {
		fd = fileno(in);
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		own = 1;
	}
	for (;;) {
		n = read(fd, s->data + s->len, s->cap - s->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		s->len += (size_t)n;
		if (s->len == s->cap) {
			n = -1;
			errno = EFBIG;
			break;
		}
	}
	if (own)
		close(fd);
	if (n < 0)
		return -errno;
	if (s->len == 0)
		return -ENODATA;
	return 0;
}

uint64_t nbde_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int wait_readable(int fd, int wake_fd, uint64_t end)
{
	for (;;) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
				       { .fd = wake_fd, .events = POLLIN } };
		uint64_t t = nbde_now_ms();
		int n;

		if (t >= end)
			return -ETIMEDOUT;
		n = poll(p, wake_fd >= 0 ? 2 : 1, (int)(end - t));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (wake_fd >= 0 && p[1].revents)
			return 1;
		if (n > 0)
			return 0;
	}
}

int secret_read_line_or(struct secret *s, int fd, const char *prompt, unsigned int timeout_ms,
			int wake_fd)
{
	struct termios old, quiet;
	bool tty = !tcgetattr(fd, &old);
	uint64_t end = nbde_now_ms() + timeout_ms;
	int rc = 0;

	s->len = 0;
	if (tty) {
		quiet = old;
		quiet.c_lflag &= ~(tcflag_t)ECHO;
		quiet.c_lflag |= ECHONL;
		tcsetattr(fd, TCSAFLUSH, &quiet);
	}
	if (prompt && (write(fd, prompt, strlen(prompt)) < 0 || write(fd, ": ", 2) < 0))
		rc = -errno;
	while (!rc && s->len < s->cap) {
		char ch;
		ssize_t n;

		rc = wait_readable(fd, wake_fd, end);
		if (rc)
			break;
		n = read(fd, &ch, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || ch == '\n' || ch == '\r')
			break;
		s->data[s->len++] = (uint8_t)ch;
	}
	if (tty)
		tcsetattr(fd, TCSAFLUSH, &old);
	if (rc == 1) {
		/* End the prompt's line: the key came from elsewhere. */
		ssize_t w = write(fd, "\n", 1);

		(void)w;
	}
	if (!rc && !s->len)
		rc = -ENODATA;
	if (rc) {
		explicit_bzero(s->data, s->cap);
		s->len = 0;
	}
	return rc;
}

int secret_read_line(struct secret *s, int fd, const char *prompt, unsigned int timeout_ms)
{
	return secret_read_line_or(s, fd, prompt, timeout_ms, -1);
}
