// SPDX-License-Identifier: GPL-2.0-only
/*
 * cryptbench as a program: exit codes, one-line errors, and every option
 * in --help and in the man page. Arguments: the cryptbench binary and the
 * man page source.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cryptbench.h"

#ifndef AF_ALG
#define AF_ALG 38
#endif

static const char *binary;
static const char *manpage;

static const char *const long_options[] = {
	"--cipher", "--key", "--driver", "--all-drivers", "--request-size",
	"--threads", "--queue-depth", "--time", "--repeat",
	"--compare-cryptsetup", "--copy", "--json", "--csv", "--help",
	"--version",
};

static char *slurp_fd(int fd)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	ssize_t n;

	assert_non_null(buf);
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 2) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	buf[len] = '\0';
	return buf;
}

/*
 * In the child before exec: socket(family, ..., protocol) fails with err
 * (protocol -1: any protocol), as where an LSM or a seccomp policy denies
 * it, or the module that provides it is not loaded and cannot be; every
 * other call is allowed.
 */
static int install_socket_denial(int family, int protocol, int err)
{
#if defined(__x86_64__)
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 5),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)family, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		protocol < 0 ? (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, 0, 0, 0) :
			       (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
							    (unsigned int)protocol, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned int)err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
#else
	(void)family;
	(void)protocol;
	(void)err;
	return -1;
#endif
}

/* socket(AF_ALG) denied with EACCES, as by an LSM or a seccomp policy. */
static bool deny_afalg;

static int install_afalg_denial(void)
{
	return install_socket_denial(AF_ALG, -1, EACCES);
}

/*
 * socket(AF_NETLINK, ..., NETLINK_CRYPTO) fails with EPROTONOSUPPORT, as
 * where crypto_user is not loaded and cannot be (containers, minimal
 * initramfs).
 */
static bool deny_crypto_user;

static int install_crypto_user_denial(void)
{
	return install_socket_denial(AF_NETLINK, NETLINK_CRYPTO, EPROTONOSUPPORT);
}

/* Run cryptbench with args; returns the exit status, captures output. */
static int run(char **out, char **err, const char *const *args)
{
	int po[2], pe[2], status;
	const char *argv[32];
	size_t i;
	pid_t pid;

	argv[0] = binary;
	for (i = 0; args[i]; i++)
		argv[i + 1] = args[i];
	argv[i + 1] = NULL;
	assert_int_equal(pipe(po), 0);
	assert_int_equal(pipe(pe), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]);
		close(pe[0]);
		if (deny_afalg && install_afalg_denial())
			_exit(126);
		if (deny_crypto_user && install_crypto_user_denial())
			_exit(126);
		execv(binary, (char *const *)argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	*out = slurp_fd(po[0]);
	*err = slurp_fd(pe[0]);
	close(po[0]);
	close(pe[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

#define RUN(o, e, ...) run(o, e, (const char *const[]){ __VA_ARGS__, NULL })

static void assert_one_error_line(const char *err)
{
	const char *nl = strchr(err, '\n');

	assert_memory_equal(err, "cryptbench: ", 12);
	/* exactly one line, no progress escapes in a pipe */
	assert_non_null(nl);
	assert_string_equal(nl + 1, "");
	assert_null(strchr(err, '\033'));
}

static void test_help_lists_every_option(void **state)
{
	char *out, *err;
	size_t i;

	(void)state;
	assert_int_equal(RUN(&out, &err, "--help"), CB_EXIT_OK);
	for (i = 0; i < sizeof(long_options) / sizeof(long_options[0]); i++)
		assert_non_null(strstr(out, long_options[i]));
	assert_string_equal(err, "");
	free(out);
	free(err);
}

static void test_manpage_lists_every_option(void **state)
{
	FILE *f = fopen(manpage, "r");
	char *text;
	size_t i;

	(void)state;
	assert_non_null(f);
	text = slurp_fd(fileno(f));
	fclose(f);
	for (i = 0; i < sizeof(long_options) / sizeof(long_options[0]); i++)
		assert_non_null(strstr(text, long_options[i]));
	/* the exit codes are documented */
	assert_non_null(strstr(text, "EXIT STATUS"));
	free(text);
}

static void test_version(void **state)
{
	char *out, *err;

	(void)state;
	assert_int_equal(RUN(&out, &err, "--version"), CB_EXIT_OK);
	assert_memory_equal(out, "cryptbench (fdekit) ", 20);
	free(out);
	free(err);
}

static void test_usage_exit(void **state)
{
	char *out, *err;

	(void)state;
	assert_int_equal(RUN(&out, &err, "--bogus"), CB_EXIT_USAGE);
	assert_one_error_line(err);
	assert_string_equal(out, "");
	free(out);
	free(err);
	assert_int_equal(RUN(&out, &err, "-c", "aes-xts", "--threads", "0"), CB_EXIT_USAGE);
	assert_one_error_line(err);
	free(out);
	free(err);
	assert_int_equal(RUN(&out, &err, "--all-drivers"), CB_EXIT_USAGE);
	assert_one_error_line(err);
	free(out);
	free(err);
}

static void test_key_size_exit(void **state)
{
	char *out, *err;

	(void)state;
	assert_int_equal(RUN(&out, &err, "--cipher", "aes-xts", "--key", "128"), CB_EXIT_CIPHER);
	assert_one_error_line(err);
	assert_non_null(strstr(err, "256, 384, 512"));
	free(out);
	free(err);
	assert_int_equal(RUN(&out, &err, "--cipher", "aes"), CB_EXIT_CIPHER);
	assert_one_error_line(err);
	free(out);
	free(err);
}

static void test_afalg_exit(void **state)
{
	int fd = socket(AF_ALG, SOCK_SEQPACKET, 0);
	char *out, *err;
	int rc;

	(void)state;
	rc = RUN(&out, &err, "--cipher", "aes-xts", "--key", "256", "--time",
		 "0.05", "--request-size", "4096");
	if (fd < 0) {
		/* this kernel has no AF_ALG: exit 3 naming the modprobe */
		assert_int_equal(rc, CB_EXIT_NO_AFALG);
		assert_one_error_line(err);
		assert_non_null(strstr(err, "modprobe"));
		assert_string_equal(out, "");
	} else {
		close(fd);
		assert_int_equal(rc, CB_EXIT_OK);
		assert_non_null(strstr(out, "aes-xts"));
	}
	free(out);
	free(err);
}

/* AF_ALG denied by policy: exit 4, one line saying permission denied. */
static void test_permission_exit(void **state)
{
	char *out, *err;
	int rc;

	pid_t pid;
	int status;

	(void)state;
	/* Where seccomp filters cannot be installed, this cannot be tested. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(install_afalg_denial() ? 1 : 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		print_message("seccomp filter not available here: test skipped\n");
		skip();
	}
	deny_afalg = true;
	rc = RUN(&out, &err, "--cipher", "aes-xts", "--key", "256", "--time",
		 "0.05", "--request-size", "4096");
	deny_afalg = false;
	assert_int_not_equal(rc, 126);	/* the filter was installed */
	assert_int_equal(rc, CB_EXIT_PERM);
	assert_one_error_line(err);
	assert_non_null(strstr(err, "permission denied"));
	assert_string_equal(out, "");
	free(out);
	free(err);
	/* --json: the same failure as a JSON object on stdout, the line on stderr. */
	deny_afalg = true;
	rc = RUN(&out, &err, "--json", "--cipher", "aes-xts", "--key", "256", "--time", "0.05",
		 "--request-size", "4096");
	deny_afalg = false;
	assert_int_equal(rc, CB_EXIT_PERM);
	assert_one_error_line(err);
	assert_non_null(strstr(out, "\"tool\":\"cryptbench\""));
	assert_non_null(strstr(out, "\"exit_code\":4"));
	assert_non_null(strstr(out, "\"error\":\"") );
	assert_non_null(strstr(out, "permission denied"));
	free(out);
	free(err);
	/* And a usage error with --json. */
	rc = RUN(&out, &err, "--json", "--key", "256");
	assert_int_equal(rc, CB_EXIT_USAGE);
	assert_one_error_line(err);
	assert_non_null(strstr(out, "\"exit_code\":1"));
	free(out);
	free(err);
}

/*
 * crypto_user missing: where AF_ALG works, cryptbench measures anyway and
 * says in one line on stderr what is missing (exit 0); where AF_ALG itself
 * is missing, that is the one error (exit 3), crypto_user goes unmentioned.
 */
static void test_without_crypto_user(void **state)
{
	int fd = socket(AF_ALG, SOCK_SEQPACKET, 0);
	char *out, *err;
	pid_t pid;
	int rc, status;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(install_crypto_user_denial() ? 1 : 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		if (fd >= 0)
			close(fd);
		print_message("seccomp filter not available here: test skipped\n");
		skip();
	}
	deny_crypto_user = true;
	rc = RUN(&out, &err, "--cipher", "aes-xts", "--key", "256", "--time",
		 "0.05", "--request-size", "4096");
	deny_crypto_user = false;
	assert_int_not_equal(rc, 126);	/* the filter was installed */
	if (fd < 0) {
		assert_int_equal(rc, CB_EXIT_NO_AFALG);
		assert_one_error_line(err);
		assert_non_null(strstr(err, "AF_ALG not available"));
		assert_string_equal(out, "");
	} else {
		close(fd);
		assert_int_equal(rc, CB_EXIT_OK);
		assert_string_equal(err, "cryptbench: " CB_NOTICE_NO_CRYPTO_USER "\n");
		assert_non_null(strstr(out, "aes-xts"));
	}
	free(out);
	free(err);
}

/*
 * On a terminal the first progress line is printed before any work starts:
 * read the terminal until it shows up. Without AF_ALG the default run
 * measures nothing: the error comes at once (not after the PBKDF rows'
 * tens of seconds), with no progress line.
 */
static void test_progress_on_terminal(void **state)
{
	char buf[4096] = "";
	size_t len = 0;
	int master, status = 0, waited = 0;
	bool reaped = false;
	int afalg = socket(AF_ALG, SOCK_SEQPACKET, 0);
	const char *until = afalg >= 0 ? "[1/" : "AF_ALG not available";
	pid_t pid;

	(void)state;
	if (afalg >= 0)
		close(afalg);
	pid = forkpty(&master, NULL, NULL, NULL);
	assert_true(pid >= 0);
	if (pid == 0) {
		execl(binary, binary, (char *)NULL);
		_exit(127);
	}
	while (!strstr(buf, until) && len < sizeof(buf) - 1 && waited < 30000) {
		struct pollfd p = { .fd = master, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 100) <= 0) {
			waited += 100;
			continue;
		}
		n = read(master, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
	}
	/* Without AF_ALG it exits by itself, at once; else it is stopped here. */
	for (int i = 0; afalg < 0 && !reaped && i < 50; i++) {
		reaped = waitpid(pid, &status, WNOHANG) == pid;
		if (!reaped)
			usleep(100000);
	}
	if (!reaped) {
		kill(pid, SIGTERM);
		waitpid(pid, &status, 0);
	}
	close(master);
	if (!strstr(buf, until))
		fail_msg("waited %d ms for '%s' on the terminal, got: %s", waited, until, buf);
	if (afalg < 0) {
		assert_null(strstr(buf, "[1/"));
		assert_true(waited < 5000);
		assert_true(reaped && WIFEXITED(status) && WEXITSTATUS(status) == CB_EXIT_NO_AFALG);
	}
}

int main(int argc, char *argv[])
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help_lists_every_option),
		cmocka_unit_test(test_manpage_lists_every_option),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_usage_exit),
		cmocka_unit_test(test_key_size_exit),
		cmocka_unit_test(test_afalg_exit),
		cmocka_unit_test(test_permission_exit),
		cmocka_unit_test(test_without_crypto_user),
		cmocka_unit_test(test_progress_on_terminal),
	};

	if (argc != 3) {
		fprintf(stderr, "usage: %s CRYPTBENCH MANPAGE.scd\n", argv[0]);
		return 2;
	}
	binary = argv[1];
	manpage = argv[2];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
