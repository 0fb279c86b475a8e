// SPDX-License-Identifier: GPL-2.0-only
/*
 * System-wide counters read around a measurement: busy CPU time of all
 * CPUs from /proc/stat (async drivers work in kworkers and interrupts, not
 * in the calling process), and the xts_offload module's engine counters
 * (in debugfs).
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cryptbench.h"

int cb_proc_stat_busy(const char *text, uint64_t *busy_ticks)
{
	/* user nice system idle iowait irq softirq steal (guest in user) */
	unsigned long long v[8] = { 0 };
	const char *p = text;
	int n;

	while (p && strncmp(p, "cpu ", 4)) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p)
		return -EINVAL;
	n = sscanf(p + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	if (n < 7)
		return -EINVAL;
	*busy_ticks = v[0] + v[1] + v[2] + v[5] + v[6] + (n >= 8 ? v[7] : 0);
	return 0;
}

int cb_cpu_busy_seconds(const char *path, double *seconds)
{
	char buf[8192];
	uint64_t ticks;
	long hz = sysconf(_SC_CLK_TCK);
	size_t len;
	FILE *f;
	int rc;

	f = fopen(path ? path : "/proc/stat", "r");
	if (!f)
		return -errno;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	rc = cb_proc_stat_busy(buf, &ticks);
	if (rc)
		return rc;
	if (hz <= 0)
		return -EINVAL;
	*seconds = (double)ticks / (double)hz;
	return 0;
}

int cb_offload_counter(const char *dir, const char *name, uint64_t *value)
{
	char path[512], buf[64], *end;
	unsigned long long v;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n'))
		return -EINVAL;
	*value = v;
	return 0;
}

int cb_offload_check(const char *dir, const char *module_dir,
		     const char *debugfs, char *msg, size_t len)
{
	struct statfs sfs;
	uint64_t v;
	int rc;

	msg[0] = '\0';
	rc = cb_offload_counter(dir, "bytes", &v);
	if (!rc || access(module_dir, F_OK))
		return 0;
	if (rc == -ENOENT && (statfs(debugfs, &sfs) || sfs.f_type != DEBUGFS_MAGIC))
		snprintf(msg, len,
			 "xts_offload is loaded but debugfs is not mounted: engine share not measured "
			 "(`mount -t debugfs none %s`)", debugfs);
	else
		snprintf(msg, len,
			 "xts_offload is loaded but its counters in %s cannot be read: %s: "
			 "engine share not measured%s", dir, strerror(-rc),
			 rc == -EACCES ? " (debugfs is root's)" : "");
	return rc;
}
