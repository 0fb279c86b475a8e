/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The engine interface: what the crypto-API side asks of an accelerator.
 *
 * An engine knows nothing of skcipher requests: it is given a session (a key
 * and a direction, created beforehand in process context), a tweak and a
 * pair of scatterlists, and calls back when done. The crypto-API side knows
 * nothing of virtio. A new accelerator (a PCIe card, say) implements
 * struct xo_engine_ops and calls xo_engine_register() from its probe, from
 * a module of its own if it likes (the calls are exported). Registration
 * runs a known-answer test on the engine first, and refuses an engine that
 * fails it. The engine's counters are shown per device through its
 * driver's dev_groups, or in debugfs for an engine without a driver (see
 * stats.h).
 */
#ifndef XTS_OFFLOAD_ENGINE_H
#define XTS_OFFLOAD_ENGINE_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/types.h>
#include <crypto/xts.h>

#include "stats.h"

/*
 * Per-request room an engine may use for its descriptors, without
 * allocating. It is part of every request's context: keep it small (see
 * struct xo_req_ctx).
 */
#define XO_JOB_PRIV_SIZE 160

/*
 * Scatterlist entries per direction that the crypto-API side copies into a
 * job to trim a list to its length; an engine takes at least this many. A
 * list that already has exactly the request's length is passed as is, up
 * to the engine's max_sg.
 */
#define XO_JOB_MAX_SG 4

/* A session id no engine hands out: submitting it must fail in the engine. */
#define XO_SESSION_INVALID U64_MAX

struct seq_file;
struct xo_engine;

/*
 * One unit of work. Lives inside the skcipher request context, so the
 * request path allocates nothing. src and dst are end-marked and cover
 * exactly len bytes; len is a multiple of XTS_BLOCK_SIZE.
 */
struct xo_job {
	struct list_head node;		/* engine use while in flight */
	struct xo_engine *engine;
	u64 session;
	struct scatterlist *src;
	struct scatterlist *dst;
	unsigned int len;
	bool encrypt;
	const u8 *iv;			/* XTS_BLOCK_SIZE bytes; copy it */
	/*
	 * Called once per job that submit queued, in softirq context (or
	 * process context with BHs off), never from within a submit call.
	 * err: 0 done;
	 *   -EINVAL  refused without being carried out (a bad session, say):
	 *            dst not written, the request is recomputed from src;
	 *   -ENODEV  never reached the device (removal): the same;
	 *   -EIO     failed while carried out: dst may have been written,
	 *            unless the engine has XO_CAP_DST_UNTOUCHED_ON_ERROR;
	 *   -ESTALE  outcome unknown, dst may have been written.
	 * A request whose dst may have been written is recomputed only when
	 * dst does not overlap src; an in-place one fails with -EIO.
	 */
	void (*done)(struct xo_job *job, int err);
	u8 priv[XO_JOB_PRIV_SIZE] __aligned(8);
};

struct xo_engine_ops {
	/* Process context, may sleep. */
	int (*session_create)(struct xo_engine *eng, const u8 *key,
			      unsigned int keylen, bool encrypt, u64 *session);
	void (*session_destroy)(struct xo_engine *eng, u64 session);
	/*
	 * Any context, called under rcu_read_lock(); must not sleep or
	 * allocate. Returns
	 *   -EINPROGRESS  queued: job->done will be called, possibly before
	 *                 submit returns;
	 *   0             done already, successfully (job->done not called);
	 *   -EINVAL, -EIO done already, failed: as job->done's err;
	 *   -ENOSPC       queue full;  -ENODEV  engine gone or broken (dst
	 *                 untouched).
	 */
	int (*submit)(struct xo_engine *eng, struct xo_job *job);
	/* Last reference dropped: free the engine. */
	void (*release)(struct xo_engine *eng);
	/*
	 * Process context: the watchdog found the engine stuck (requests in
	 * flight, none completed for watchdog_ms). Unregister, stop the
	 * device, and complete everything still in flight: -ESTALE for what
	 * the device may have taken. Optional.
	 */
	void (*stop)(struct xo_engine *eng);
	/* The module the callbacks live in: held while a tfm uses the engine. */
	struct module *owner;
};

/*
 * What an engine guarantees. XO_CAP_DST_UNTOUCHED_ON_ERROR: a request that
 * fails (-EIO) never wrote its destination, so even an in-place request can
 * be recomputed. Without it, an in-place request that failed while being
 * carried out fails with -EIO rather than risk returning wrong data.
 */
#define XO_CAP_DST_UNTOUCHED_ON_ERROR	BIT(0)

struct xo_engine {
	const struct xo_engine_ops *ops;
	struct device *dev;		/* for naming and the counters */
	struct kref ref;
	struct list_head node;
	bool dead;			/* unregistered: accept nothing */
	unsigned int caps;		/* XO_CAP_* */
	int priority;			/* new sessions go to the highest */
	s64 wd_done;			/* watchdog: completions at the last look */
	unsigned long wd_since;		/* watchdog: jiffies of the last progress */
	unsigned int max_keylen;	/* bytes, both XTS halves */
	unsigned int max_sg;		/* scatterlist entries per direction */
	u64 max_len;			/* largest request in bytes */
	atomic_t nr_sessions;		/* held by the crypto-API side */
	struct xo_stats __percpu *stats;
};

int xo_engine_register(struct xo_engine *eng);
void xo_engine_unregister(struct xo_engine *eng);
/* The engine new sessions should use, with a reference and a reference on its module. */
struct xo_engine *xo_engine_get_active(void);
/* Drop what xo_engine_get_active() took. */
void xo_engine_put_active(struct xo_engine *eng);
void xo_engine_put(struct xo_engine *eng);

/* Bumped whenever an engine comes or goes: tfms rebind when it changes. */
extern atomic_t xo_engines_gen;

static inline u32 xo_engine_generation(void)
{
	return atomic_read(&xo_engines_gen);
}

int xo_engine_submit(struct xo_engine *eng, struct xo_job *job);
/* Module exit of the core: no watchdog may run after this. */
void xo_engines_exit(void);
/* One line per registered engine: device and driver names. */
void xo_engines_print(struct seq_file *m);
void xo_engine_complete(struct xo_job *job, int err);

/* Engine back ends. */
int xo_virtio_init(void);
void xo_virtio_exit(void);

#endif /* XTS_OFFLOAD_ENGINE_H */
