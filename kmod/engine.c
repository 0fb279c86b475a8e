// SPDX-License-Identifier: GPL-2.0-only
/*
 * Engine registry: which accelerators exist, which one new sessions go to,
 * and the accounting common to all of them.
 */
#include <linux/atomic.h>
#include <linux/device.h>
#include <linux/mutex.h>
#include <linux/rculist.h>

#include "engine.h"

static LIST_HEAD(xo_engines);
static DEFINE_MUTEX(xo_engines_lock);

atomic_t xo_engines_gen = ATOMIC_INIT(0);

int xo_engine_register(struct xo_engine *eng)
{
	int ret;

	eng->stats = alloc_percpu(struct xo_stats);
	if (!eng->stats)
		return -ENOMEM;
	kref_init(&eng->ref);
	eng->dead = false;
	atomic_set(&eng->nr_sessions, 0);

	ret = xo_sysfs_add_engine(eng);
	if (ret) {
		free_percpu(eng->stats);
		eng->stats = NULL;
		return ret;
	}

	mutex_lock(&xo_engines_lock);
	list_add_tail_rcu(&eng->node, &xo_engines);
	atomic_inc(&xo_engines_gen);
	mutex_unlock(&xo_engines_lock);
	dev_info(eng->dev, "xts(aes) engine registered\n");
	return 0;
}

/*
 * After this returns no new session is created on @eng and every submitter
 * that looks at eng->dead under the engine's queue locks sees it set. The
 * engine must then complete or fail everything still in flight.
 */
void xo_engine_unregister(struct xo_engine *eng)
{
	mutex_lock(&xo_engines_lock);
	WRITE_ONCE(eng->dead, true);
	list_del_rcu(&eng->node);
	atomic_inc(&xo_engines_gen);
	mutex_unlock(&xo_engines_lock);
	synchronize_rcu();
	xo_sysfs_remove_engine(eng);
}

/* The engine new sessions should use, with a reference, or NULL. */
struct xo_engine *xo_engine_get_active(void)
{
	struct xo_engine *eng;

	mutex_lock(&xo_engines_lock);
	eng = list_first_entry_or_null(&xo_engines, struct xo_engine, node);
	if (eng)
		kref_get(&eng->ref);
	mutex_unlock(&xo_engines_lock);
	return eng;
}

static void xo_engine_release(struct kref *ref)
{
	struct xo_engine *eng = container_of(ref, struct xo_engine, ref);

	free_percpu(eng->stats);
	eng->ops->release(eng);
}

void xo_engine_put(struct xo_engine *eng)
{
	kref_put(&eng->ref, xo_engine_release);
}

static void xo_engine_account(struct xo_engine *eng, unsigned int len,
			      int err)
{
	if (err) {
		xo_stats_add(eng->stats, XO_STAT_ERRORS, 1);
		xo_stats_add(xo_total_stats, XO_STAT_ERRORS, 1);
	} else {
		xo_stats_add(eng->stats, XO_STAT_REQUESTS, 1);
		xo_stats_add(eng->stats, XO_STAT_BYTES, len);
		xo_stats_add(xo_total_stats, XO_STAT_REQUESTS, 1);
		xo_stats_add(xo_total_stats, XO_STAT_BYTES, len);
	}
}

/* See xo_engine_ops.submit for the return values. */
int xo_engine_submit(struct xo_engine *eng, struct xo_job *job)
{
	unsigned int len = job->len;
	int ret;

	job->engine = eng;
	if (unlikely(atomic_read(&xo_inject_errors) > 0) &&
	    atomic_dec_if_positive(&xo_inject_errors) >= 0)
		job->session = XO_SESSION_INVALID;

	xo_stats_add(eng->stats, XO_STAT_IN_FLIGHT, 1);
	xo_stats_add(xo_total_stats, XO_STAT_IN_FLIGHT, 1);
	/* Once queued, job may be completed and freed: don't touch it. */
	ret = eng->ops->submit(eng, job);
	if (ret == -EINPROGRESS)
		return ret;
	xo_stats_add(eng->stats, XO_STAT_IN_FLIGHT, -1);
	xo_stats_add(xo_total_stats, XO_STAT_IN_FLIGHT, -1);
	if (ret == 0 || ret == -EIO)
		xo_engine_account(eng, len, ret);
	return ret;
}

void xo_engine_complete(struct xo_job *job, int err)
{
	struct xo_engine *eng = job->engine;

	xo_stats_add(eng->stats, XO_STAT_IN_FLIGHT, -1);
	xo_stats_add(xo_total_stats, XO_STAT_IN_FLIGHT, -1);
	xo_stats_add(eng->stats, XO_STAT_ASYNC, 1);
	xo_stats_add(xo_total_stats, XO_STAT_ASYNC, 1);
	xo_engine_account(eng, job->len, err);
	job->done(job, err);
}
