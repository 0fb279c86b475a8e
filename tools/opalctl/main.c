// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>

#include "opalctl.h"

int main(int argc, char **argv)
{
	return opalctl_run(argc, argv, stdin, stdout, stderr);
}
