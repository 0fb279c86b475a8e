/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The engine interface: what the crypto-API side asks of an accelerator.
 *
 * An engine knows nothing of skcipher requests: it is given a session (a key
 * and a direction, created beforehand in process context), a tweak and a
 * pair of scatterlists, and calls back when done. The crypto-API side knows
 * nothing of virtio. A new accelerator (a PCIe card, say) implements
 * struct xo_engine_ops and calls xo_engine_register() from its probe.
 */
#ifndef XTS_OFFLOAD_ENGINE_H
#define XTS_OFFLOAD_ENGINE_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/scatterlist.h>
#include <linux/types.h>
#include <crypto/xts.h>

#include "stats.h"

/* Per-request room an engine may use for its descriptors, without allocating. */
#define XO_JOB_PRIV_SIZE 256

/*
 * Scatterlist entries per direction that the crypto-API side copies into a
 * job to trim a list to its length; an engine takes at least this many. A
 * list that already has exactly the request's length is passed as is, up
 * to the engine's max_sg.
 */
#define XO_JOB_MAX_SG 8

/* A session id no engine hands out: submitting it must fail in the engine. */
#define XO_SESSION_INVALID U64_MAX

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
	 * err: 0 done; -EIO or -ENODEV failed and dst not written (the
	 * request can be recomputed from src); -ESTALE outcome unknown, dst
	 * may have been written (recompute only if dst does not overlap src).
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
	 *   -EIO          done already, failed; dst untouched;
	 *   -ENOSPC       queue full;  -ENODEV  engine gone or broken.
	 */
	int (*submit)(struct xo_engine *eng, struct xo_job *job);
	/* Last reference dropped: free the engine. */
	void (*release)(struct xo_engine *eng);
};

struct xo_engine {
	const struct xo_engine_ops *ops;
	struct device *dev;		/* for naming and sysfs */
	struct kref ref;
	struct list_head node;
	bool dead;			/* unregistered: accept nothing */
	unsigned int max_keylen;	/* bytes, both XTS halves */
	unsigned int max_sg;		/* scatterlist entries per direction */
	u64 max_len;			/* largest request in bytes */
	atomic_t nr_sessions;		/* held by the crypto-API side */
	struct xo_stats __percpu *stats;
};

int xo_engine_register(struct xo_engine *eng);
void xo_engine_unregister(struct xo_engine *eng);
struct xo_engine *xo_engine_get_active(void);
void xo_engine_put(struct xo_engine *eng);

/* Bumped whenever an engine comes or goes: tfms rebind when it changes. */
extern atomic_t xo_engines_gen;

static inline u32 xo_engine_generation(void)
{
	return atomic_read(&xo_engines_gen);
}

int xo_engine_submit(struct xo_engine *eng, struct xo_job *job);
void xo_engine_complete(struct xo_job *job, int err);

/* Engine back ends. */
int xo_virtio_init(void);
void xo_virtio_exit(void);

#endif /* XTS_OFFLOAD_ENGINE_H */
