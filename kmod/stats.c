// SPDX-License-Identifier: GPL-2.0-only
/*
 * Counters in sysfs:
 *   /sys/kernel/xts_offload/stats/<counter>       totals
 *   /sys/kernel/xts_offload/inject_errors         fail the next N engine requests
 *   /sys/kernel/xts_offload/engines               one line per engine
 *   <engine device>/xts_offload/<counter>         per engine
 */
#include <linux/device.h>
#include <linux/kernel.h>
#include <linux/kobject.h>
#include <linux/sysfs.h>

#include "engine.h"
#include "stats.h"

struct xo_stats __percpu *xo_total_stats;
atomic_t xo_inject_errors = ATOMIC_INIT(0);

static const char * const xo_stat_names[XO_NR_STATS] = {
	[XO_STAT_REQUESTS] = "requests",
	[XO_STAT_BYTES] = "bytes",
	[XO_STAT_ERRORS] = "errors",
	[XO_STAT_IN_FLIGHT] = "in_flight",
	[XO_STAT_FB_SMALL] = "fallback_small",
	[XO_STAT_FB_KEYSIZE] = "fallback_keysize",
	[XO_STAT_FB_LENGTH] = "fallback_length",
	[XO_STAT_FB_LAYOUT] = "fallback_layout",
	[XO_STAT_FB_BUSY] = "fallback_busy",
	[XO_STAT_FB_NOENGINE] = "fallback_noengine",
	[XO_STAT_FB_ERROR] = "fallback_error",
	[XO_STAT_ASYNC] = "completed_async",
	[XO_STAT_SESSIONS] = "sessions",
	[XO_STAT_SESSIONS_EXHAUSTED] = "sessions_exhausted",
};

s64 xo_stats_sum(struct xo_stats __percpu *s, enum xo_stat i)
{
	s64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(s, cpu)->v[i];
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

/* Totals: /sys/kernel/xts_offload/stats/ */
static ssize_t total_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	enum xo_stat i = xo_stat_index(attr->attr.name);

	if (i >= XO_NR_STATS)
		return -EINVAL;
	return sysfs_emit(buf, "%lld\n", xo_stats_sum(xo_total_stats, i));
}

static struct kobj_attribute xo_total_attrs[XO_NR_STATS];
static struct attribute *xo_total_attr_ptrs[XO_NR_STATS + 1];
static const struct attribute_group xo_total_group = {
	.name = "stats",
	.attrs = xo_total_attr_ptrs,
};

static ssize_t inject_errors_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&xo_inject_errors));
}

static ssize_t inject_errors_store(struct kobject *kobj,
				   struct kobj_attribute *attr,
				   const char *buf, size_t count)
{
	unsigned int n;
	int ret;

	ret = kstrtouint(buf, 0, &n);
	if (ret)
		return ret;
	if (n > INT_MAX)
		return -EINVAL;
	atomic_set(&xo_inject_errors, n);
	return count;
}

static struct kobj_attribute xo_inject_attr = __ATTR_RW(inject_errors);

static LIST_HEAD(xo_sysfs_engines);
static DEFINE_MUTEX(xo_sysfs_lock);

struct xo_sysfs_engine {
	struct list_head node;
	struct xo_engine *eng;
};

static ssize_t engines_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	struct xo_sysfs_engine *se;
	ssize_t len = 0;

	mutex_lock(&xo_sysfs_lock);
	list_for_each_entry(se, &xo_sysfs_engines, node)
		len += sysfs_emit_at(buf, len, "%s %s\n",
				     dev_name(se->eng->dev),
				     dev_driver_string(se->eng->dev));
	mutex_unlock(&xo_sysfs_lock);
	return len;
}

static struct kobj_attribute xo_engines_attr = __ATTR_RO(engines);

static struct attribute *xo_top_attrs[] = {
	&xo_inject_attr.attr,
	&xo_engines_attr.attr,
	NULL,
};

static const struct attribute_group xo_top_group = {
	.attrs = xo_top_attrs,
};

static struct kobject *xo_kobj;

/* Per engine: <device>/xts_offload/ */
static struct xo_engine *xo_engine_of(struct device *dev)
{
	struct xo_sysfs_engine *se;

	list_for_each_entry(se, &xo_sysfs_engines, node)
		if (se->eng->dev == dev)
			return se->eng;
	return NULL;
}

static ssize_t engine_stat_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	enum xo_stat i = xo_stat_index(attr->attr.name);
	struct xo_engine *eng;
	ssize_t ret = -ENODEV;

	if (i >= XO_NR_STATS)
		return -EINVAL;
	mutex_lock(&xo_sysfs_lock);
	eng = xo_engine_of(dev);
	if (eng)
		ret = sysfs_emit(buf, "%lld\n", xo_stats_sum(eng->stats, i));
	mutex_unlock(&xo_sysfs_lock);
	return ret;
}

static struct device_attribute xo_engine_attrs[XO_NR_STATS];
static struct attribute *xo_engine_attr_ptrs[XO_NR_STATS + 1];
static const struct attribute_group xo_engine_group = {
	.name = "xts_offload",
	.attrs = xo_engine_attr_ptrs,
};

static void xo_sysfs_forget_engine(struct xo_engine *eng)
{
	struct xo_sysfs_engine *se, *tmp;

	mutex_lock(&xo_sysfs_lock);
	list_for_each_entry_safe(se, tmp, &xo_sysfs_engines, node) {
		if (se->eng == eng) {
			list_del(&se->node);
			kfree(se);
		}
	}
	mutex_unlock(&xo_sysfs_lock);
}

int xo_sysfs_add_engine(struct xo_engine *eng)
{
	struct xo_sysfs_engine *se;
	int ret;

	se = kzalloc(sizeof(*se), GFP_KERNEL);
	if (!se)
		return -ENOMEM;
	se->eng = eng;
	mutex_lock(&xo_sysfs_lock);
	list_add_tail(&se->node, &xo_sysfs_engines);
	mutex_unlock(&xo_sysfs_lock);

	ret = sysfs_create_group(&eng->dev->kobj, &xo_engine_group);
	if (ret)
		xo_sysfs_forget_engine(eng);
	return ret;
}

void xo_sysfs_remove_engine(struct xo_engine *eng)
{
	sysfs_remove_group(&eng->dev->kobj, &xo_engine_group);
	xo_sysfs_forget_engine(eng);
}

int xo_sysfs_init(void)
{
	enum xo_stat i;
	int ret;

	xo_total_stats = alloc_percpu(struct xo_stats);
	if (!xo_total_stats)
		return -ENOMEM;

	for (i = 0; i < XO_NR_STATS; i++) {
		sysfs_attr_init(&xo_total_attrs[i].attr);
		xo_total_attrs[i].attr.name = xo_stat_names[i];
		xo_total_attrs[i].attr.mode = 0444;
		xo_total_attrs[i].show = total_show;
		xo_total_attr_ptrs[i] = &xo_total_attrs[i].attr;

		sysfs_attr_init(&xo_engine_attrs[i].attr);
		xo_engine_attrs[i].attr.name = xo_stat_names[i];
		xo_engine_attrs[i].attr.mode = 0444;
		xo_engine_attrs[i].show = engine_stat_show;
		xo_engine_attr_ptrs[i] = &xo_engine_attrs[i].attr;
	}

	ret = -ENOMEM;
	xo_kobj = kobject_create_and_add("xts_offload", kernel_kobj);
	if (!xo_kobj)
		goto err_free;
	ret = sysfs_create_group(xo_kobj, &xo_top_group);
	if (ret)
		goto err_put;
	ret = sysfs_create_group(xo_kobj, &xo_total_group);
	if (ret)
		goto err_top;
	return 0;

err_top:
	sysfs_remove_group(xo_kobj, &xo_top_group);
err_put:
	kobject_put(xo_kobj);
err_free:
	free_percpu(xo_total_stats);
	return ret;
}

void xo_sysfs_exit(void)
{
	sysfs_remove_group(xo_kobj, &xo_total_group);
	sysfs_remove_group(xo_kobj, &xo_top_group);
	kobject_put(xo_kobj);
	free_percpu(xo_total_stats);
}
