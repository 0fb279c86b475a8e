// SPDX-License-Identifier: GPL-2.0-only
#include <linux/module.h>
MODULE_LICENSE("GPL");
