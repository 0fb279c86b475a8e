/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Counters: per engine and in total, per CPU on the request path, summed
 * when read (per device through sysfs, the rest through debugfs: see
 * stats.c). What an engine does on the request path (requests, bytes,
 * errors, in_flight, completed_async, completed_bh) goes to the engine's counters only:
 * reading such a total adds up the engines' counters, and an engine's are
 * folded into the totals when it is freed. The other counters are added to
 * the totals, and to the engine's where they concern one, where they occur.
 */
#ifndef XTS_OFFLOAD_STATS_H
#define XTS_OFFLOAD_STATS_H

#include <linux/percpu.h>
#include <linux/types.h>

enum xo_stat {
	XO_STAT_REQUESTS,	/* requests the engine completed */
	XO_STAT_BYTES,		/* bytes the engine completed */
	XO_STAT_ERRORS,		/* requests the engine failed */
	XO_STAT_IN_FLIGHT,	/* requests submitted, not yet completed */
	XO_STAT_FB_SMALL,	/* below the size threshold */
	XO_STAT_FB_KEYSIZE,	/* key size no engine takes */
	XO_STAT_FB_LENGTH,	/* length the engine cannot do */
	XO_STAT_FB_LAYOUT,	/* scatterlist too fragmented */
	XO_STAT_FB_INPLACE,	/* in place, the engine only out of place */
	XO_STAT_FB_BUSY,	/* engine queue full */
	XO_STAT_FB_NOENGINE,	/* no engine or no session */
	XO_STAT_FB_ERROR,	/* engine failed, recomputed in software */
	XO_STAT_ASYNC,		/* completed after the submitting call returned */
	XO_STAT_SESSIONS,	/* device sessions held, retired ones included */
	XO_STAT_SESSIONS_EXHAUSTED, /* keys refused a session: cap or device full */
	XO_STAT_BACKLOGGED,	/* waited in the engine's backlog (queue full) */
	XO_STAT_TIMEOUTS,	/* jobs the engine aborted past their deadline */
	XO_STAT_BH,		/* of completed_async, completed in the engine's bottom half */
	XO_NR_STATS
};

struct xo_stats {
	s64 v[XO_NR_STATS];
};

struct attribute_group;
struct dentry;
struct device;
struct xo_engine;

static inline void xo_stats_add(struct xo_stats __percpu *s, enum xo_stat i,
				s64 n)
{
	this_cpu_add(s->v[i], n);
}

s64 xo_stats_sum(struct xo_stats __percpu *s, enum xo_stat i);

extern struct xo_stats __percpu *xo_total_stats;

/*
 * The engine's counters count in the totals from xo_stats_track() to
 * xo_stats_untrack(), which folds them in (@fold) or drops them.
 */
void xo_stats_track(struct xo_engine *eng);
void xo_stats_untrack(struct xo_engine *eng, bool fold);
extern atomic_t xo_inject_errors;
/* /sys/kernel/debug/xts_offload: engines may add <device>/ directories. */
extern struct dentry *xo_debugfs;

/* The totals, the per-device attribute group and the debugfs tree. */
int xo_sysfs_init(void);
void xo_sysfs_exit(void);

/*
 * Per-device counters for an engine driver: its .driver.dev_groups is
 * xo_engine_dev_groups (<device>/xts_offload/<counter>), and it calls
 * xo_dev_stats_set(dev, eng) once eng is registered and
 * xo_dev_stats_set(dev, NULL) before it drops its reference to eng.
 * Until then, and after, the attributes read -ENODEV. This sets the
 * device's driver data.
 */
extern const struct attribute_group *xo_engine_dev_groups[];
void xo_dev_stats_set(struct device *dev, struct xo_engine *eng);

/*
 * For an engine without a driver: its counters in debugfs,
 * xts_offload/<device>/<counter>. Returns the directory, to be removed
 * (debugfs_remove_recursive()) before the last reference to eng goes.
 */
struct dentry *xo_stats_debugfs_create(struct xo_engine *eng);

#endif /* XTS_OFFLOAD_STATS_H */
