// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>
#include <sys/prctl.h>

#include "opalctl.h"

int main(int argc, char **argv)
{
	/* No core dumps or ptrace by other users: keys live in this process. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	return opalctl_run(argc, argv, stdin, stdout, stderr);
}
