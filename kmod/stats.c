// SPDX-License-Identifier: GPL-2.0-only
/*
 * Counters and the error-injection knob. None of it is ABI but the
 * per-device attributes:
 *
 *   <engine device>/xts_offload/<counter>     per engine, through the engine
 *                                             driver's dev_groups
 *
 * The rest is in debugfs (/sys/kernel/debug, when mounted):
 *
 *   xts_offload/stats/<counter>               totals, software fallbacks too
 *   xts_offload/engines                       one line per registered engine
 *   xts_offload/inject_errors                 fail the next N engine requests
 *   xts_offload/<device>/<counter>            per engine, for an engine
 *                                             without a driver (the test
 *                                             engine)
 *
 * Engines may add their own files under xts_offload/<device>/.
 */
#include <linux/debugfs.h>
#include <linux/device.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <linux/sysfs.h>

#include "engine.h"
#include "stats.h"

struct xo_stats __percpu *xo_total_stats;
atomic_t xo_inject_errors = ATOMIC_INIT(0);

/* /sys/kernel/debug/xts_offload */
struct dentry *xo_debugfs;
EXPORT_SYMBOL_GPL(xo_debugfs);

static const char * const xo_stat_names[XO_NR_STATS] = {
	[XO_STAT_REQUESTS] = "requests",
	[XO_STAT_BYTES] = "bytes",
	[XO_STAT_ERRORS] = "errors",
	[XO_STAT_IN_FLIGHT] = "in_flight",
	[XO_STAT_FB_SMALL] = "fallback_small",
	[XO_STAT_FB_KEYSIZE] = "fallback_keysize",
	[XO_STAT_FB_LENGTH] = "fallback_length",
	[XO_STAT_FB_LAYOUT] = "fallback_layout",
	[XO_STAT_FB_INPLACE] = "fallback_inplace",
	[XO_STAT_FB_BUSY] = "fallback_busy",
	[XO_STAT_FB_NOENGINE] = "fallback_noengine",
	[XO_STAT_FB_ERROR] = "fallback_error",
	[XO_STAT_ASYNC] = "completed_async",
	[XO_STAT_SESSIONS] = "sessions",
	[XO_STAT_SESSIONS_EXHAUSTED] = "sessions_exhausted",
	[XO_STAT_BACKLOGGED] = "backlogged",
	[XO_STAT_TIMEOUTS] = "timeouts",
	[XO_STAT_BH] = "completed_bh",
};

s64 xo_stats_sum(struct xo_stats __percpu *s, enum xo_stat i)
{
	s64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(s, cpu)->v[i];
	return sum;
}

/*
 * The engines whose counters count in the totals, and what freed engines
 * counted. Readers hold the lock while they add up, so an engine folded in
 * meanwhile is counted once.
 */
static DEFINE_SPINLOCK(xo_tracked_lock);
/* The counters the request path keeps per engine only. */
#define XO_ENGINE_ONLY_STATS (BIT(XO_STAT_REQUESTS) | BIT(XO_STAT_BYTES) | \
			      BIT(XO_STAT_ERRORS) | BIT(XO_STAT_IN_FLIGHT) | \
			      BIT(XO_STAT_ASYNC) | BIT(XO_STAT_BH))
static LIST_HEAD(xo_tracked);
static s64 xo_retired[XO_NR_STATS];

void xo_stats_track(struct xo_engine *eng)
{
	unsigned long flags;

	spin_lock_irqsave(&xo_tracked_lock, flags);
	list_add_tail(&eng->stats_node, &xo_tracked);
	spin_unlock_irqrestore(&xo_tracked_lock, flags);
}

void xo_stats_untrack(struct xo_engine *eng, bool fold)
{
	unsigned long flags;
	enum xo_stat i;

	/* The last reference may go in any context. */
	spin_lock_irqsave(&xo_tracked_lock, flags);
	list_del(&eng->stats_node);
	for (i = 0; fold && i < XO_NR_STATS; i++)
		if (XO_ENGINE_ONLY_STATS & BIT(i))
			xo_retired[i] += xo_stats_sum(eng->stats, i);
	spin_unlock_irqrestore(&xo_tracked_lock, flags);
}

static s64 xo_total_sum(enum xo_stat i)
{
	struct xo_engine *eng;
	unsigned long flags;
	s64 sum;

	sum = xo_stats_sum(xo_total_stats, i);
	if (!(XO_ENGINE_ONLY_STATS & BIT(i)))
		return sum;
	spin_lock_irqsave(&xo_tracked_lock, flags);
	sum += xo_retired[i];
	list_for_each_entry(eng, &xo_tracked, stats_node)
		sum += xo_stats_sum(eng->stats, i);
	spin_unlock_irqrestore(&xo_tracked_lock, flags);
	return sum;
}

static enum xo_stat xo_stat_index(const char *name)
{
	enum xo_stat i;

	for (i = 0; i < XO_NR_STATS; i++)
		if (!strcmp(xo_stat_names[i], name))
			break;
	return i;
}

/*
 * debugfs: one file per counter, named after it. The file's data points to
 * the pointer to the per-CPU counters (&xo_total_stats, &eng->stats).
 */
static int xo_stat_show(struct seq_file *m, void *unused)
{
	struct xo_stats __percpu **s = m->private;
	enum xo_stat i = xo_stat_index(file_dentry(m->file)->d_name.name);

	if (i >= XO_NR_STATS)
		return -EINVAL;
	seq_printf(m, "%lld\n", s == &xo_total_stats ? xo_total_sum(i) :
		   xo_stats_sum(*s, i));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(xo_stat);

static void xo_stats_debugfs_files(struct xo_stats __percpu **s,
				   struct dentry *dir)
{
	enum xo_stat i;

	for (i = 0; i < XO_NR_STATS; i++)
		debugfs_create_file(xo_stat_names[i], 0444, dir, s,
				    &xo_stat_fops);
}

/*
 * For an engine that has no driver to carry its counters in sysfs:
 * xts_offload/<device>/<counter> in debugfs. Call it once the engine is
 * registered; remove the directory it returns (debugfs_remove_recursive())
 * before the last reference to the engine is dropped.
 */
struct dentry *xo_stats_debugfs_create(struct xo_engine *eng)
{
	struct dentry *dir;

	dir = debugfs_create_dir(dev_name(eng->dev), xo_debugfs);
	xo_stats_debugfs_files(&eng->stats, dir);
	return dir;
}
EXPORT_SYMBOL_GPL(xo_stats_debugfs_create);

static int xo_inject_errors_get(void *data, u64 *val)
{
	*val = atomic_read(&xo_inject_errors);
	return 0;
}

static int xo_inject_errors_set(void *data, u64 val)
{
	if (val > INT_MAX)
		return -EINVAL;
	atomic_set(&xo_inject_errors, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(xo_inject_errors_fops, xo_inject_errors_get,
			 xo_inject_errors_set, "%llu\n");

static int xo_engines_show(struct seq_file *m, void *unused)
{
	xo_engines_print(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(xo_engines);

/*
 * Per device, in sysfs: <device>/xts_offload/<counter>. The driver core
 * creates the group on bind and removes it on unbind, before the driver's
 * remove; the engine behind a device comes and goes meanwhile (a retired
 * engine, suspend), hence the device's driver data, set and cleared under
 * xo_dev_stats_lock by xo_dev_stats_set().
 */
static DEFINE_MUTEX(xo_dev_stats_lock);

void xo_dev_stats_set(struct device *dev, struct xo_engine *eng)
{
	mutex_lock(&xo_dev_stats_lock);
	dev_set_drvdata(dev, eng);
	mutex_unlock(&xo_dev_stats_lock);
}
EXPORT_SYMBOL_GPL(xo_dev_stats_set);

static ssize_t xo_dev_stat_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	enum xo_stat i = xo_stat_index(attr->attr.name);
	struct xo_engine *eng;
	ssize_t ret = -ENODEV;

	if (i >= XO_NR_STATS)
		return -EINVAL;
	mutex_lock(&xo_dev_stats_lock);
	eng = dev_get_drvdata(dev);
	if (eng)
		ret = sysfs_emit(buf, "%lld\n", xo_stats_sum(eng->stats, i));
	mutex_unlock(&xo_dev_stats_lock);
	return ret;
}

static struct device_attribute xo_dev_attrs[XO_NR_STATS];
static struct attribute *xo_dev_attr_ptrs[XO_NR_STATS + 1];
static const struct attribute_group xo_dev_group = {
	.name = "xts_offload",
	.attrs = xo_dev_attr_ptrs,
};

const struct attribute_group *xo_engine_dev_groups[] = {
	&xo_dev_group,
	NULL,
};
EXPORT_SYMBOL_GPL(xo_engine_dev_groups);

int xo_sysfs_init(void)
{
	struct dentry *stats;
	enum xo_stat i;

	xo_total_stats = alloc_percpu(struct xo_stats);
	if (!xo_total_stats)
		return -ENOMEM;

	for (i = 0; i < XO_NR_STATS; i++) {
		sysfs_attr_init(&xo_dev_attrs[i].attr);
		xo_dev_attrs[i].attr.name = xo_stat_names[i];
		xo_dev_attrs[i].attr.mode = 0444;
		xo_dev_attrs[i].show = xo_dev_stat_show;
		xo_dev_attr_ptrs[i] = &xo_dev_attrs[i].attr;
	}

	/* Without debugfs these are error pointers, and do nothing. */
	xo_debugfs = debugfs_create_dir(KBUILD_MODNAME, NULL);
	stats = debugfs_create_dir("stats", xo_debugfs);
	xo_stats_debugfs_files(&xo_total_stats, stats);
	debugfs_create_file("engines", 0444, xo_debugfs, NULL,
			    &xo_engines_fops);
	debugfs_create_file_unsafe("inject_errors", 0644, xo_debugfs, NULL,
				   &xo_inject_errors_fops);
	return 0;
}

void xo_sysfs_exit(void)
{
	debugfs_remove_recursive(xo_debugfs);
	xo_debugfs = NULL;
	free_percpu(xo_total_stats);
}
