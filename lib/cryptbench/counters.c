// SPDX-License-Identifier: GPL-2.0-only
/*
 * System-wide counters read around a measurement: busy CPU time of all
 * CPUs from /proc/stat (async drivers work in kworkers and interrupts, not
 * in the calling process), and the xts_offload module's engine counters.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
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
