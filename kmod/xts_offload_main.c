// SPDX-License-Identifier: GPL-2.0-only
/*
 * xts_offload: an xts(aes) skcipher backed by an accelerator engine, with
 * the best other xts(aes) in the kernel as software fallback.
 *
 * The engine gets what it declared it can do (key sizes, lengths, in place
 * or not: see engine.h) and what it can take without allocating: at least
 * `threshold` bytes, scatterlists of at most XO_JOB_MAX_SG entries unless
 * they already cover exactly the request. Everything else, and anything the
 * engine refuses or fails, is computed by the fallback, so callers never see
 * an engine error. Engines register from modules of their own
 * (xts_offload_virtio, xts_offload_loopback).
 */
#include <linux/kthread.h>
#include <linux/llist.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/mutex.h>
#include <linux/percpu-refcount.h>
#include <linux/ratelimit.h>
#include <linux/rcupdate.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <linux/workqueue.h>
#include <uapi/linux/sched/types.h>
#include <crypto/aes.h>
#include <crypto/internal/skcipher.h>
#include <crypto/xts.h>

#include "compat.h"
#include "engine.h"
#include "stats.h"
#include "xts_offload.h"

static int priority = 1000;
module_param(priority, int, 0444);
MODULE_PARM_DESC(priority,
		 "Crypto API priority of xts-aes-offload (default 1000, above every in-kernel x86 xts(aes))");

static unsigned int threshold = XO_DEFAULT_THRESHOLD;
module_param(threshold, uint, 0644);
MODULE_PARM_DESC(threshold,
		 "Requests shorter than this many bytes are computed in software (0: the engine takes all it can)");

static unsigned int max_sessions = 256;
module_param(max_sessions, uint, 0644);
MODULE_PARM_DESC(max_sessions,
		 "Device sessions this module holds per engine, two per key (default 256); keys beyond run in software and count in sessions_exhausted");

/*
 * The destruction of retired bindings' sessions, which may allocate and
 * wait for the device (seconds, on a control queue that times out), runs
 * here, off the reclaim path. Binding, which does the same to create
 * sessions, runs on system_wq.
 */
static struct workqueue_struct *xo_free_wq;

/* One message per five minutes when keys find no session. */
static DEFINE_RATELIMIT_STATE(xo_sessions_rs, 300 * HZ, 1);

/*
 * Engine sessions for one key. A submitter takes a reference on users
 * under RCU before it hands a job to the engine, and the job's completion
 * (or the submitter, when the engine did not queue the job) drops it. A
 * binding is retired by unpublishing it and killing users; once no job
 * that uses its sessions is left, the release queues free_work, which
 * destroys the sessions in process context.
 */
struct xo_binding {
	struct xo_engine *engine;
	struct percpu_ref users;
	struct work_struct free_work;
	u64 enc;
	u64 dec;
	u32 epoch;		/* the engine's session_epoch at creation */
};

struct xo_tfm_ctx {
	struct crypto_skcipher *fallback;
	struct xo_binding __rcu *binding;
	struct mutex lock;		/* key, binding, bound_* */
	struct mutex bind_lock;		/* one xo_bind() at a time */
	struct list_head node;		/* in xo_tfms */
	struct work_struct rebind;	/* creates sessions, off the request path */
	u32 bound_gen;			/* engine generation last bound against */
	u32 key_seq;			/* bumped by each setkey */
	u32 bound_seq;			/* key_seq last bound for */
	enum xo_stat unbound_why;	/* counts requests while no binding */
	unsigned int room;		/* for xo_job.priv in each request: see engine.h */
	unsigned int keylen;		/* 0 when the engine cannot take the key */
	u8 key[2 * AES_MAX_KEY_SIZE];
};

/*
 * Per request. A request runs on the engine or on the fallback, never both
 * at once (a failed engine job is recomputed only after it completed), so
 * the two share their room: with dm-crypt's own per-sector data around it,
 * the request then fits the 1 KiB kmalloc class, which every asynchronous
 * sector allocates (and, with init_on_alloc, clears). The engine's room
 * for xo_job.priv follows eng, at XO_ROOM_OFFSET: the tfm's room bytes
 * (see xo_init_tfm()).
 */
struct xo_req_ctx {
	struct skcipher_request *req;	/* the request this is the context of */
	struct xo_binding *binding;	/* engine: referenced while the job is queued */
	bool encrypt;
	bool backlogged;		/* the caller got -EBUSY, not yet -EINPROGRESS */
	int err;			/* the engine's result, for the completion worker */
	union {
		struct llist_node done;	/* on a completion worker's list */
		struct {
			struct xo_job job;
			struct scatterlist src[XO_JOB_MAX_SG];
			struct scatterlist dst[XO_JOB_MAX_SG];
		} eng;
		struct {
			/*
			 * The fallback works on a copy of the IV: x86's xts
			 * drivers advance the IV they are given, the engine and
			 * the generic xts template leave req->iv as it was.
			 * Every path leaves it as it was.
			 */
			u8 iv[XTS_BLOCK_SIZE];
			struct skcipher_request req;	/* must be last */
		} fb;
	};
};

#define XO_ROOM_OFFSET	ALIGN(offsetofend(struct xo_req_ctx, eng), XO_ROOM_ALIGN)

/*
 * The request context: DMA-aligned where the kernel can (6.3 on), so that
 * an engine's priv aligned to a cache line really is one on architectures
 * whose kmalloc alignment is below their DMA alignment.
 */
static struct xo_req_ctx *xo_rctx(struct skcipher_request *req)
{
	return xo_skcipher_request_ctx_dma(req);
}

static struct skcipher_request *xo_req_of(struct xo_req_ctx *rctx)
{
	return rctx->req;
}

static void xo_sessions_held(struct xo_engine *eng, int n)
{
	xo_stats_add(eng->stats, XO_STAT_SESSIONS, n);
	xo_stats_add(xo_total_stats, XO_STAT_SESSIONS, n);
}

/* Process context: no job uses b's sessions any more. */
static void xo_binding_free_work(struct work_struct *work)
{
	struct xo_binding *b = container_of(work, struct xo_binding, free_work);
	struct xo_engine *eng = b->engine;

	/* A reset since then made the device forget them: nothing to destroy. */
	mutex_lock(&eng->session_lock);
	if (b->epoch == eng->session_epoch) {
		eng->ops->session_destroy(eng, b->enc);
		eng->ops->session_destroy(eng, b->dec);
	}
	mutex_unlock(&eng->session_lock);
	atomic_sub(2, &eng->nr_sessions);
	xo_sessions_held(eng, -2);
	percpu_ref_exit(&b->users);
	kfree(b);
	xo_engine_put_active(eng);
}

/* Any context, the last user gone after retirement: no sleeping here. */
static void xo_binding_release(struct percpu_ref *ref)
{
	struct xo_binding *b = container_of(ref, struct xo_binding, users);

	queue_work(xo_free_wq, &b->free_work);
}

/* b is unpublished: free it once the jobs using it are done. */
static void xo_binding_retire(struct xo_binding *b)
{
	percpu_ref_kill(&b->users);
}

static bool xo_binding_usable(struct xo_binding *b, struct xo_engine *active)
{
	return b && b->engine == active && !READ_ONCE(b->engine->dead);
}

/*
 * A key found no session: the module's cap (err -EDQUOT) or the device
 * refused one (QEMU's builtin back end reports a full table as a plain
 * error, not as -ENOSPC).
 */
static void xo_sessions_exhausted(struct xo_engine *eng, int err)
{
	xo_stats_add(eng->stats, XO_STAT_SESSIONS_EXHAUSTED, 1);
	xo_stats_add(xo_total_stats, XO_STAT_SESSIONS_EXHAUSTED, 1);
	if (!__ratelimit(&xo_sessions_rs))
		return;
	if (err == -EDQUOT)
		dev_warn(eng->dev,
			 "out of device sessions (max_sessions=%u reached): new keys run in software; see stats/sessions_exhausted\n",
			 READ_ONCE(max_sessions));
	else
		dev_warn(eng->dev,
			 "out of device sessions (the device refused one: %d): new keys run in software; see stats/sessions_exhausted\n",
			 err);
}

/*
 * Process context, may sleep. Takes over the caller's reference on eng.
 * @replace: in place of a binding of the same key on eng, which still
 * counts against max_sessions until its last job is done.
 */
static struct xo_binding *xo_new_binding(struct xo_engine *eng, const u8 *key,
					 unsigned int keylen, bool replace)
{
	struct xo_binding *b;
	int ret;

	if (!xo_engine_takes_key(eng, keylen))
		goto err_put;
	if (atomic_add_return(2, &eng->nr_sessions) > READ_ONCE(max_sessions) && !replace) {
		xo_sessions_exhausted(eng, -EDQUOT);
		goto err_count;
	}
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		goto err_count;
	if (percpu_ref_init(&b->users, xo_binding_release, 0, GFP_KERNEL))
		goto err_free;
	b->engine = eng;
	INIT_WORK(&b->free_work, xo_binding_free_work);
	mutex_lock(&eng->session_lock);
	b->epoch = eng->session_epoch;
	ret = eng->ops->session_create(eng, key, keylen, true, &b->enc);
	if (!ret) {
		ret = eng->ops->session_create(eng, key, keylen, false, &b->dec);
		if (ret)
			eng->ops->session_destroy(eng, b->enc);
	}
	mutex_unlock(&eng->session_lock);
	if (ret)
		goto err_ref;
	xo_sessions_held(eng, 2);
	return b;

err_ref:
	/* Gone engines aside, a refusal is most likely a full session table. */
	if (ret != -ENODEV)
		xo_sessions_exhausted(eng, ret);
	percpu_ref_exit(&b->users);
err_free:
	kfree(b);
err_count:
	atomic_sub(2, &eng->nr_sessions);
err_put:
	xo_engine_put_active(eng);
	return NULL;
}

/*
 * Bind the current key to the active engine, unless it already is.
 * Process context: the sessions are created here, without ctx->lock held
 * (requests never wait for it), one binding at a time (bind_lock). A
 * setkey meanwhile makes the result stale; it binds its own key.
 */
static void xo_bind(struct xo_tfm_ctx *ctx)
{
	struct xo_binding *new = NULL, *old;
	struct xo_engine *eng;
	u8 key[2 * AES_MAX_KEY_SIZE];
	unsigned int keylen;
	u32 gen, seq;

	lockdep_assert_held(&ctx->bind_lock);
	mutex_lock(&ctx->lock);
	gen = xo_engine_generation();
	seq = ctx->key_seq;
	keylen = ctx->keylen;
	old = rcu_dereference_protected(ctx->binding,
					lockdep_is_held(&ctx->lock));
	eng = keylen ? xo_engine_get_active(keylen, old ? old->engine : NULL) :
		       ERR_PTR(-ENODEV);
	/* Engines there, but none for this key size: say so in the counters. */
	WRITE_ONCE(ctx->unbound_why, PTR_ERR_OR_ZERO(eng) == -EOPNOTSUPP ?
		   XO_STAT_FB_KEYSIZE : XO_STAT_FB_NOENGINE);
	if (IS_ERR(eng))
		eng = NULL;
	if (!eng || xo_binding_usable(old, eng)) {
		/* Nothing to create: keep a live binding, drop a dead one. */
		if (old && READ_ONCE(old->engine->dead))
			RCU_INIT_POINTER(ctx->binding, NULL);
		else
			old = NULL;
		WRITE_ONCE(ctx->bound_gen, gen);
		WRITE_ONCE(ctx->bound_seq, seq);
		mutex_unlock(&ctx->lock);
		if (eng)
			xo_engine_put_active(eng);
		if (old)
			xo_binding_retire(old);
		return;
	}
	memcpy(key, ctx->key, keylen);
	mutex_unlock(&ctx->lock);

	new = xo_new_binding(eng, key, keylen, false);
	memzero_explicit(key, sizeof(key));

	mutex_lock(&ctx->lock);
	old = rcu_dereference_protected(ctx->binding,
					lockdep_is_held(&ctx->lock));
	if (seq != ctx->key_seq) {
		/* A new key came meanwhile: new is stale. */
		old = new;
	} else {
		if (!new && old && !READ_ONCE(old->engine->dead))
			old = NULL;	/* keep what still works */
		else
			rcu_assign_pointer(ctx->binding, new);
		WRITE_ONCE(ctx->bound_gen, gen);
		WRITE_ONCE(ctx->bound_seq, seq);
	}
	mutex_unlock(&ctx->lock);
	if (old)
		xo_binding_retire(old);
}

/* Bind now, in the caller's process context; bounded by the engine's own timeouts. */
static void xo_bind_sync(struct xo_tfm_ctx *ctx)
{
	mutex_lock(&ctx->bind_lock);
	xo_bind(ctx);
	mutex_unlock(&ctx->bind_lock);
}

/* An engine came or went and a request that may not sleep noticed. */
static void xo_rebind_work(struct work_struct *work)
{
	xo_bind_sync(container_of(work, struct xo_tfm_ctx, rebind));
}

/*
 * Every tfm, so that each rebinds as soon as an engine comes or goes: a
 * better engine takes over live bindings, and a binding on an engine that
 * went is dropped at once, with its sessions and the engine module's
 * reference, not at the tfm's next request.
 */
static LIST_HEAD(xo_tfms);
static DEFINE_MUTEX(xo_tfms_lock);

void xo_engines_changed(void)
{
	struct xo_tfm_ctx *ctx;

	mutex_lock(&xo_tfms_lock);
	list_for_each_entry(ctx, &xo_tfms, node)
		if (READ_ONCE(ctx->keylen))
			queue_work(system_wq, &ctx->rebind);
	mutex_unlock(&xo_tfms_lock);
}

/*
 * After a reset of @eng (xo_engine_resume()): if the key is bound to @eng,
 * new sessions for it there, in place of those the device forgot. Returns
 * 1 if it was and got them.
 */
static int xo_bind_again(struct xo_tfm_ctx *ctx, struct xo_engine *eng)
{
	struct xo_binding *new, *old;
	u8 key[2 * AES_MAX_KEY_SIZE];
	unsigned int keylen;
	u32 seq;

	lockdep_assert_held(&ctx->bind_lock);
	mutex_lock(&ctx->lock);
	old = rcu_dereference_protected(ctx->binding, lockdep_is_held(&ctx->lock));
	if (!old || old->engine != eng) {
		mutex_unlock(&ctx->lock);
		return 0;
	}
	seq = ctx->key_seq;
	keylen = ctx->keylen;
	memcpy(key, ctx->key, keylen);
	mutex_unlock(&ctx->lock);

	/* The references xo_new_binding() takes over, as from xo_engine_get_active(). */
	kref_get(&eng->ref);
	__module_get(eng->ops->owner);
	new = xo_new_binding(eng, key, keylen, true);
	memzero_explicit(key, sizeof(key));

	mutex_lock(&ctx->lock);
	old = rcu_dereference_protected(ctx->binding, lockdep_is_held(&ctx->lock));
	if (seq != ctx->key_seq || !old || old->engine != eng) {
		/* setkey meanwhile: it bound its own key. */
		old = new;
		new = NULL;
	} else {
		/* Without new sessions, the key runs in software until the next bind. */
		rcu_assign_pointer(ctx->binding, new);
	}
	mutex_unlock(&ctx->lock);
	if (old)
		xo_binding_retire(old);
	return new ? 1 : 0;
}

int xo_engine_sessions_recreate(struct xo_engine *eng)
{
	struct xo_tfm_ctx *ctx;
	int n = 0;

	mutex_lock(&xo_tfms_lock);
	list_for_each_entry(ctx, &xo_tfms, node) {
		mutex_lock(&ctx->bind_lock);
		n += xo_bind_again(ctx, eng);
		mutex_unlock(&ctx->bind_lock);
	}
	mutex_unlock(&xo_tfms_lock);
	return n;
}

/* The key for a software tfm of ours, with the caller's request flags. */
static int xo_child_setkey(struct crypto_skcipher *tfm,
			   struct crypto_skcipher *child, const u8 *key,
			   unsigned int keylen)
{
	crypto_skcipher_clear_flags(child, CRYPTO_TFM_REQ_MASK);
	crypto_skcipher_set_flags(child, crypto_skcipher_get_flags(tfm) &
				  CRYPTO_TFM_REQ_MASK);
	return crypto_skcipher_setkey(child, key, keylen);
}

static int xo_setkey(struct crypto_skcipher *tfm, const u8 *key,
		     unsigned int keylen)
{
	struct xo_tfm_ctx *ctx = crypto_skcipher_ctx(tfm);
	struct xo_binding *old;
	int ret;

	ret = xts_verify_key(tfm, key, keylen);
	if (ret)
		return ret;

	ret = xo_child_setkey(tfm, ctx->fallback, key, keylen);
	if (ret)
		return ret;

	/*
	 * The old key's sessions are retired, not destroyed here: jobs still
	 * queued in the device keep them until they complete. The new key's
	 * are created right here (setkey may sleep, as in-kernel drivers that
	 * create device sessions in setkey do), so its first request, the
	 * crypto API's self-test's included, runs on the engine.
	 */
	might_sleep();
	mutex_lock(&ctx->lock);
	memzero_explicit(ctx->key, sizeof(ctx->key));
	ctx->keylen = 0;
	/* AES-192-XTS has no engine mode: the fallback does it alone. */
	if (keylen == 2 * AES_KEYSIZE_128 || keylen == 2 * AES_KEYSIZE_256) {
		memcpy(ctx->key, key, keylen);
		ctx->keylen = keylen;
	}
	WRITE_ONCE(ctx->key_seq, ctx->key_seq + 1);
	old = rcu_replace_pointer(ctx->binding, NULL,
				  lockdep_is_held(&ctx->lock));
	mutex_unlock(&ctx->lock);
	if (old)
		xo_binding_retire(old);
	if (xo_keys_bit(keylen))
		xo_bind_sync(ctx);
	return 0;
}

static int xo_fallback(struct skcipher_request *req, bool encrypt)
{
	struct xo_tfm_ctx *ctx = crypto_skcipher_ctx(crypto_skcipher_reqtfm(req));
	struct xo_req_ctx *rctx = xo_rctx(req);
	struct skcipher_request *subreq = &rctx->fb.req;

	skcipher_request_set_tfm(subreq, ctx->fallback);
	skcipher_request_set_callback(subreq, req->base.flags,
				      req->base.complete, req->base.data);
	memcpy(rctx->fb.iv, req->iv, XTS_BLOCK_SIZE);
	skcipher_request_set_crypt(subreq, req->src, req->dst, req->cryptlen,
				   rctx->fb.iv);
	return encrypt ? crypto_skcipher_encrypt(subreq) :
			 crypto_skcipher_decrypt(subreq);
}

static void xo_recompute_done(XO_CRYPTO_CB_ARG arg, int err)
{
	struct skcipher_request *req = xo_crypto_cb_data(arg);

	if (err == -EINPROGRESS)
		return;
	skcipher_request_complete(req, err);
}

/*
 * The engine failed: compute the request in software. The completion
 * worker's process context, as the engine's completions.
 */
static void xo_recompute(struct xo_req_ctx *rctx)
{
	struct skcipher_request *req = xo_req_of(rctx);
	struct xo_tfm_ctx *ctx = crypto_skcipher_ctx(crypto_skcipher_reqtfm(req));
	struct skcipher_request *subreq = &rctx->fb.req;
	int ret;

	skcipher_request_set_tfm(subreq, ctx->fallback);
	skcipher_request_set_callback(subreq, CRYPTO_TFM_REQ_MAY_SLEEP |
				      CRYPTO_TFM_REQ_MAY_BACKLOG,
				      xo_recompute_done, req);
	memcpy(rctx->fb.iv, req->iv, XTS_BLOCK_SIZE);
	skcipher_request_set_crypt(subreq, req->src, req->dst, req->cryptlen,
				   rctx->fb.iv);
	ret = rctx->encrypt ? crypto_skcipher_encrypt(subreq) :
				  crypto_skcipher_decrypt(subreq);
	if (ret == -EINPROGRESS || ret == -EBUSY)
		return;
	skcipher_request_complete(req, ret);
}

/* Does any byte of dst's first len bytes lie in src's first len bytes? */
static bool xo_sg_overlap(struct scatterlist *src, struct scatterlist *dst,
			  unsigned int len)
{
	unsigned int sleft, dleft = len;
	struct scatterlist *s, *d;

	for (d = dst; d && dleft; d = sg_next(d)) {
		phys_addr_t d0 = sg_phys(d), d1 = d0 + min(d->length, dleft);

		sleft = len;
		for (s = src; s && sleft; s = sg_next(s)) {
			phys_addr_t s0 = sg_phys(s), s1 = s0 + min(s->length, sleft);

			if (s0 < d1 && d0 < s1)
				return true;
			sleft -= min(s->length, sleft);
		}
		dleft -= min(d->length, dleft);
	}
	return false;
}

/*
 * May a request that failed with err in the engine be computed again from
 * its source? Not when the engine may have written dst (-EIO without the
 * engine's promise, -ESTALE) and dst overlaps src: the source may be
 * overwritten, and a second pass over it would return wrong data.
 */
static bool xo_can_recompute(struct skcipher_request *req, struct xo_engine *eng, int err)
{
	if (err == -EINVAL || err == -ENODEV)
		return true;
	if (err == -EIO && (eng->caps & XO_CAP_DST_UNTOUCHED_ON_ERROR))
		return true;
	if (!xo_sg_overlap(req->src, req->dst, req->cryptlen))
		return true;
	dev_err_ratelimited(eng->dev,
			    "an in-place request failed in the engine after it may have written: I/O error rather than wrong data\n");
	return false;
}

static void xo_backlog_run(struct xo_engine *eng);

/*
 * The engine is done with the job: complete the request, or recompute it in
 * software. Process context (the completion worker), bottom halves on.
 */
static void xo_job_finish(struct xo_req_ctx *rctx, int err)
{
	struct skcipher_request *req = xo_req_of(rctx);
	struct xo_binding *b = rctx->binding;
	struct xo_engine *eng = b->engine;

	if (unlikely(rctx->backlogged)) {
		/* It never left the backlog (the engine went): the caller hears first. */
		rctx->backlogged = false;
		skcipher_request_complete(req, -EINPROGRESS);
	}
	if (likely(!err) || !xo_can_recompute(req, eng, err)) {
		skcipher_request_complete(req, err ? -EIO : 0);
	} else {
		enum xo_stat why = err == -ENODEV ? XO_STAT_FB_NOENGINE : XO_STAT_FB_ERROR;

		xo_stats_add(eng->stats, why, 1);
		xo_stats_add(xo_total_stats, why, 1);
		xo_recompute(rctx);
	}
	/*
	 * A job left the engine: room for what waits in its backlog. The
	 * engine made room before it completed the job, and the completion
	 * went through xo_job_done()'s llist_add() (a full barrier): see
	 * xo_backlog_add().
	 */
	if (unlikely(atomic_read(&eng->nr_backlog)))
		xo_backlog_run(eng);
	/*
	 * The device is done with the job: its sessions may go, and with the
	 * binding the engine reference it holds. Last, after the engine's
	 * counters; req may be gone already.
	 */
	percpu_ref_put(&b->users);
}

/*
 * Completions of engine jobs, per CPU. An engine reports a job done from
 * wherever it learns of it: its interrupt's tasklet, or a submit call that
 * found other jobs finished (inside another request's submission). The
 * request's callback is not run there: the job goes on this CPU's list and
 * the CPU's completion workers run the callbacks in process context, bottom
 * halves enabled, as the caller would see them from a thread. (One
 * exception: a decryption that went well, reported from the engine's own
 * bottom half, completes there; see xo_job_done_bh().)
 *
 * Callers may start I/O from the callback: dm-crypt without its write
 * workqueue submits the encrypted bio from it (submit_bio_noacct() may
 * sleep: mempools, blk-mq tags), which is wrong in softirq context, and
 * in a softirq the block layer would take the interrupted task's
 * current->bio_list or plug for it. From a worker neither can happen.
 * xts(aes) has no other kind of asynchronous user in the kernel: the rest
 * (fscrypt, blk-crypto's fallback, AF_ALG, dm-integrity's journal) wait for
 * a completion or end an AIO from the callback, which any context allows.
 *
 * Two workers per CPU take the CPU's list, whichever runs first; either
 * takes all of it (llist_del_all()), so each job completes once:
 *  - a kernel thread of its own, SCHED_BATCH, woken when the list stops
 *    being empty. The scheduler never lets a SCHED_BATCH task preempt the
 *    running one on its wakeup: it runs when that task sleeps or its slice
 *    ends, or at once on an idle CPU. It completes what a burst of
 *    submissions left, in one wakeup. Created with the module for each
 *    possible CPU, kept on that CPU's NUMA node but not bound to the CPU
 *    (CPU hotplug would strand it);
 *  - a second kernel thread, the kick, SCHED_FIFO at the lowest priority
 *    (sched_set_fifo_low(), as crypto_engine's real-time workers), woken
 *    every XO_DONE_BURST jobs queued. Its wakeup preempts a fair-class
 *    submitter at its next scheduling point, so a submitter that keeps
 *    submitting does not hold back more completions than that; it takes
 *    the list once per wakeup and sleeps again, leaving any later tail to
 *    the first thread. Its callers allocate per request and free in the
 *    callback (dm-crypt: a request per sector, from kmalloc): completions
 *    held back by the hundred cost them fresh slab pages, cleared with
 *    init_on_alloc.
 * Waking a high-priority work item at every interrupt instead, as before,
 * cost a wakeup and two context switches per handful of jobs; the first
 * thread alone let a 1 MiB bio's 2048 requests of 512 bytes wait. A
 * high-priority work item every XO_DONE_BURST jobs did not preempt on
 * 6.12: EEVDF lets the running task finish its slice first (run to
 * parity), so the list grew past a thousand jobs (see "Completion in
 * process context: the cost" in Documentation/xts-offload.md). The count
 * is per CPU, updated with preemption off and reset by whichever worker
 * runs, on any CPU: a lost update only moves the next kick.
 */
#define XO_DONE_BURST	32

struct xo_done_queue {
	struct llist_head jobs;
	unsigned int queued;		/* jobs since a worker last took the list */
	struct task_struct *thread;	/* SCHED_BATCH: the tail of a burst */
	struct task_struct *kick;	/* SCHED_FIFO, low: every XO_DONE_BURST */
};

static DEFINE_PER_CPU(struct xo_done_queue, xo_done_queues);

static void xo_done_run(struct xo_done_queue *q)
{
	struct xo_req_ctx *rctx, *tmp;
	struct llist_node *list;

	WRITE_ONCE(q->queued, 0);
	list = llist_reverse_order(llist_del_all(&q->jobs));
	llist_for_each_entry_safe(rctx, tmp, list, done) {
		xo_job_finish(rctx, rctx->err);
		cond_resched();
	}
}

/* One pass per wakeup; a wakeup while it runs is the first thread's. */
static int xo_kick_thread(void *data)
{
	struct xo_done_queue *q = data;

	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
		xo_done_run(q);
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

static int xo_done_thread(void *data)
{
	struct xo_done_queue *q = data;

	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (llist_empty(&q->jobs)) {
			/* Stopped only with nothing queued: module exit. */
			if (kthread_should_stop())
				break;
			schedule();
			continue;
		}
		__set_current_state(TASK_RUNNING);
		xo_done_run(q);
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

/* Hand @rctx to this CPU's completion worker, with the engine's result. */
static void xo_queue_done(struct xo_req_ctx *rctx, int err)
{
	struct xo_done_queue *q;
	unsigned int n;

	rctx->err = err;
	q = get_cpu_ptr(&xo_done_queues);
	/* The node overlays the job: the engine is done with it. */
	if (llist_add(&rctx->done, &q->jobs))
		wake_up_process(q->thread);
	n = READ_ONCE(q->queued) + 1;
	WRITE_ONCE(q->queued, n);
	if (!(n % XO_DONE_BURST))
		wake_up_process(q->kick);
	put_cpu_ptr(&xo_done_queues);
}

/* The engine's xo_engine_complete(): any context but hard interrupts. */
static void xo_job_done(struct xo_job *job, int err)
{
	xo_queue_done(container_of(job, struct xo_req_ctx, eng.job), err);
}

/*
 * The engine's xo_engine_complete_bh(): its own bottom half, never called
 * by a submit call (it may run on top of one that its interrupt
 * interrupted, and complete that very request). A decryption that went
 * well completes right here, in softirq context, as hardware crypto
 * drivers complete: its callers end I/O from the callback and start none
 * (dm-crypt's reads end the bio, which the block layer allows in interrupt
 * context; AF_ALG and fscrypt wake a waiter), so nothing there needs a
 * process. What a caller may
 * start I/O from, encryptions (dm-crypt without its write workqueue
 * submits the bio), goes to the completion workers, and so do failures
 * (recomputed in software) and completions while requests wait in the
 * engine's backlog (the workers feed it).
 */
static void xo_job_done_bh(struct xo_job *job, int err)
{
	struct xo_req_ctx *rctx = container_of(job, struct xo_req_ctx, eng.job);
	struct xo_binding *b = rctx->binding;

	if (rctx->encrypt || err || rctx->backlogged) {
		xo_queue_done(rctx, err);
		return;
	}
	/*
	 * The engine made room before this completion: either a submitter
	 * about to add to the backlog finds it (its retry), or this sees the
	 * submitter's count. Pairs with the barrier in xo_backlog_add().
	 */
	smp_mb();
	if (unlikely(atomic_read(&b->engine->nr_backlog))) {
		xo_queue_done(rctx, err);
		return;
	}
	xo_stats_add(b->engine->stats, XO_STAT_BH, 1);
	skcipher_request_complete(xo_req_of(rctx), 0);
	/* As in xo_job_finish(): last; req may be gone already. */
	percpu_ref_put(&b->users);
}

/*
 * The backlog: an engine whose queue is full says -EBUSY, and a request
 * whose caller allows it (CRYPTO_TFM_REQ_MAY_BACKLOG: dm-crypt, AF_ALG's
 * synchronous calls) waits on the engine's list, in its own request
 * context, instead of running in software. The caller got -EBUSY and waits
 * for the -EINPROGRESS callback before it sends more; that comes when the
 * request leaves the list for the engine, then the result as usual. Both
 * from the completion worker: the list is worked off there, after each
 * completion of a job of that engine, since a completion is what makes
 * room. What waits when the engine goes or pauses runs in software
 * (xo_engine_backlog_flush()).
 *
 * No request is forgotten on the list: a submitter counts itself in
 * nr_backlog (a full barrier after), then, under backlog_lock, tries the
 * engine once more and adds the request only if it is still full. An
 * engine makes room before it completes the job that held it, and the
 * completion worker reads nr_backlog after that (through llist_add() and
 * llist_del_all(), full barriers). So either the retry finds room, or the
 * worker sees the count and takes the lock after the request is on the
 * list.
 *
 * Returns -EBUSY when @rctx waits on the list (it is not to be touched
 * after that), else what the engine said.
 */
static int xo_backlog_add(struct xo_engine *eng, struct xo_req_ctx *rctx)
{
	struct xo_job *job = &rctx->eng.job;
	unsigned long flags;
	int ret = -EBUSY;

	atomic_inc(&eng->nr_backlog);
	/* Pairs with the completion's llist_add(): see above. */
	smp_mb__after_atomic();
	spin_lock_irqsave(&eng->backlog_lock, flags);
	/* Behind those waiting already: in order. */
	if (list_empty(&eng->backlog))
		ret = xo_engine_submit(eng, job);
	if (ret == -EBUSY) {
		rctx->backlogged = true;
		list_add_tail(&job->node, &eng->backlog);
		xo_stats_add(eng->stats, XO_STAT_BACKLOGGED, 1);
		xo_stats_add(xo_total_stats, XO_STAT_BACKLOGGED, 1);
	} else {
		atomic_dec(&eng->nr_backlog);
	}
	spin_unlock_irqrestore(&eng->backlog_lock, flags);
	return ret;
}

/*
 * The completion worker: submit what waits in @eng's backlog, in order,
 * until the engine is full again. Each request's caller hears
 * -EINPROGRESS before its job is submitted (after, the job could complete
 * first), with the lock dropped: the callback may submit again.
 */
static void xo_backlog_run(struct xo_engine *eng)
{
	struct xo_req_ctx *rctx;
	struct xo_job *job;
	unsigned long flags;
	int ret;

	spin_lock_irqsave(&eng->backlog_lock, flags);
	while ((job = list_first_entry_or_null(&eng->backlog, struct xo_job, node))) {
		rctx = container_of(job, struct xo_req_ctx, eng.job);
		if (rctx->backlogged) {
			list_del(&job->node);
			rctx->backlogged = false;
			spin_unlock_irqrestore(&eng->backlog_lock, flags);
			skcipher_request_complete(rctx->req, -EINPROGRESS);
			spin_lock_irqsave(&eng->backlog_lock, flags);
			/* First again: nr_backlog still counts it. */
			list_add(&job->node, &eng->backlog);
			continue;
		}
		/* Paused: the engine's reset is on its way, this runs in software. */
		ret = -ENODEV;
		rcu_read_lock();	/* as for every submit: see engine.h */
		if (!READ_ONCE(eng->paused))
			ret = xo_engine_submit(eng, job);
		rcu_read_unlock();
		if (ret == -EBUSY)
			break;
		list_del(&job->node);
		atomic_dec(&eng->nr_backlog);
		if (ret == -EINPROGRESS)
			continue;
		/* Answered at once, or refused: finish it as a completion. */
		xo_queue_done(rctx, ret == -ENOSPC ? -ENODEV : ret);
	}
	spin_unlock_irqrestore(&eng->backlog_lock, flags);
}

void xo_engine_backlog_flush(struct xo_engine *eng)
{
	struct xo_job *job, *tmp;
	unsigned long flags;
	LIST_HEAD(list);
	int n = 0;

	spin_lock_irqsave(&eng->backlog_lock, flags);
	list_splice_init(&eng->backlog, &list);
	list_for_each_entry(job, &list, node)
		n++;
	atomic_sub(n, &eng->nr_backlog);
	spin_unlock_irqrestore(&eng->backlog_lock, flags);
	/* Each in software, from the completion worker (xo_job_finish()). */
	list_for_each_entry_safe(job, tmp, &list, node)
		xo_queue_done(container_of(job, struct xo_req_ctx, eng.job), -ENODEV);
}

/* Module exit, or a failed init: each thread completes what it has first. */
static void xo_done_threads_stop(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct xo_done_queue *q = per_cpu_ptr(&xo_done_queues, cpu);

		if (q->kick)
			kthread_stop(q->kick);
		q->kick = NULL;
		if (q->thread)
			kthread_stop(q->thread);
		q->thread = NULL;
	}
}

/*
 * One of @q's threads: @policy applied, kept on @cpu's NUMA node (any
 * CPU when none of the node's is up) but not bound to @cpu, which CPU
 * hotplug would strand; started.
 */
static struct task_struct *xo_done_thread_start(struct xo_done_queue *q,
						int cpu, int (*fn)(void *),
						const char *name, int policy)
{
	struct sched_attr attr = {
		.size = sizeof(attr),
		.sched_policy = policy,
	};
	int node = cpu_to_node(cpu);
	struct task_struct *t;
	int ret = 0;

	t = kthread_create_on_node(fn, q, node, "%s/%d", name, cpu);
	if (IS_ERR(t))
		return t;
	if (policy == SCHED_FIFO)
		sched_set_fifo_low(t);
	else
		ret = sched_setattr_nocheck(t, &attr);
	if (ret) {
		kthread_stop(t);
		return ERR_PTR(ret);
	}
	if (node != NUMA_NO_NODE)
		set_cpus_allowed_ptr(t, cpumask_of_node(node));
	wake_up_process(t);
	return t;
}

static int xo_done_threads_start(void)
{
	struct task_struct *t;
	int cpu;

	for_each_possible_cpu(cpu) {
		struct xo_done_queue *q = per_cpu_ptr(&xo_done_queues, cpu);

		init_llist_head(&q->jobs);
		t = xo_done_thread_start(q, cpu, xo_done_thread, "xts_offload",
					 SCHED_BATCH);
		if (IS_ERR(t))
			goto err;
		q->thread = t;
		t = xo_done_thread_start(q, cpu, xo_kick_thread, "xo_kick",
					 SCHED_FIFO);
		if (IS_ERR(t))
			goto err;
		q->kick = t;
	}
	return 0;

err:
	xo_done_threads_stop();
	return PTR_ERR(t);
}

/*
 * Exactly @len bytes of @sg as an end-marked list of non-empty entries: @sg
 * itself when it already is one (of at most @max_direct entries), else a
 * trimmed copy of its entries in @out; NULL when that needs more than
 * XO_JOB_MAX_SG entries.
 */
static struct scatterlist *xo_map_sg(struct scatterlist *sg,
				     struct scatterlist *out, unsigned int len,
				     unsigned int max_direct)
{
	struct scatterlist *s;
	unsigned int n = 0, left = len;

	if (sg_is_last(sg) && sg->length == len)
		return sg;
	for (s = sg; s && s->length && s->length <= left; s = sg_next(s)) {
		left -= s->length;
		if (++n > max_direct)
			break;
		if (!left) {
			if (sg_is_last(s))
				return sg;
			break;
		}
	}

	/* Devices reject zero-length descriptors: leave such entries out. */
	n = 0;
	left = len;
	for (s = sg; s && left; s = sg_next(s)) {
		if (!s->length)
			continue;
		if (++n > XO_JOB_MAX_SG)
			return NULL;
		left -= min(s->length, left);
	}
	if (left)
		return NULL;

	sg_init_table(out, n);
	for (s = sg, n = 0, left = len; left; s = sg_next(s)) {
		unsigned int l = min(s->length, left);

		if (!l)
			continue;
		sg_set_page(&out[n++], sg_page(s), l, s->offset);
		left -= l;
	}
	return out;
}

/* Nothing tried to bind the current key to the current engines yet. */
static bool xo_bind_due(struct xo_tfm_ctx *ctx)
{
	return READ_ONCE(ctx->bound_gen) != xo_engine_generation() ||
	       READ_ONCE(ctx->bound_seq) != READ_ONCE(ctx->key_seq);
}

static void xo_maybe_rebind(struct xo_tfm_ctx *ctx)
{
	if (ctx->keylen && xo_bind_due(ctx))
		queue_work(system_wq, &ctx->rebind);
}

/*
 * Why the engine's declaration keeps @req from it, or XO_NR_STATS when
 * the engine may take it.
 */
static enum xo_stat xo_outside_caps(struct xo_engine *eng, struct xo_tfm_ctx *ctx,
				    struct skcipher_request *req)
{
	unsigned int len = req->cryptlen;

	if (len > eng->max_len || (len & (eng->len_align - 1)))
		return XO_STAT_FB_LENGTH;
	/* Power-of-two lengths only (unit sizes of some cards): a mask bit each. */
	if (unlikely(eng->len_mask) && (!is_power_of_2(len) || !(eng->len_mask & len)))
		return XO_STAT_FB_LENGTH;
	if (!(eng->caps & XO_CAP_INPLACE) &&
	    (req->src == req->dst || xo_sg_overlap(req->src, req->dst, len)))
		return XO_STAT_FB_INPLACE;
	/* The tfm predates this engine, and its requests lack the room it needs. */
	if (unlikely(eng->room > ctx->room))
		return XO_STAT_FB_LAYOUT;
	return XO_NR_STATS;
}

/*
 * The engine path. Returns the request's result; what the engine cannot
 * take, or refuses at once, the fallback computes here.
 */
static noinline int xo_offload(struct skcipher_request *req,
			       struct xo_tfm_ctx *ctx, bool encrypt)
{
	struct xo_req_ctx *rctx = xo_rctx(req);
	struct xo_job *job = &rctx->eng.job;
	unsigned int len = req->cryptlen;
	struct xo_binding *b;
	struct xo_engine *eng;
	bool may_backlog;
	enum xo_stat why;
	int ret = -EAGAIN;

	/*
	 * An engine came or went since the key was bound: a caller that may
	 * sleep waits for the binding (bounded by the engine's session
	 * timeouts) rather than run in software; others queue the rebind.
	 */
	if ((req->base.flags & CRYPTO_TFM_REQ_MAY_SLEEP) && unlikely(xo_bind_due(ctx)))
		xo_bind_sync(ctx);

	rcu_read_lock();
	b = rcu_dereference(ctx->binding);
	/* A paused engine keeps the binding: no rebind for it. */
	if (!b || READ_ONCE(b->engine->dead) || READ_ONCE(b->engine->paused) ||
	    !percpu_ref_tryget_live(&b->users)) {
		why = XO_STAT_FB_NOENGINE;
		xo_maybe_rebind(ctx);
		goto out;
	}
	eng = b->engine;
	why = xo_outside_caps(eng, ctx, req);
	if (unlikely(why != XO_NR_STATS)) {
		xo_stats_add(eng->stats, why, 1);
		goto out_put;
	}
	job->src = xo_map_sg(req->src, rctx->eng.src, len, eng->max_sg);
	job->dst = req->dst == req->src ? job->src :
		   xo_map_sg(req->dst, rctx->eng.dst, len, eng->max_sg);
	if (!job->src || !job->dst) {
		why = XO_STAT_FB_LAYOUT;
		goto out_put;
	}
	rctx->req = req;
	rctx->binding = b;
	rctx->encrypt = encrypt;
	rctx->backlogged = false;
	job->priv = PTR_ALIGN((u8 *)rctx + XO_ROOM_OFFSET, eng->priv_align);
	job->session = encrypt ? b->enc : b->dec;
	job->len = len;
	job->encrypt = encrypt;
	job->done = xo_job_done;
	job->done_bh = xo_job_done_bh;
	job->iv = req->iv;

	may_backlog = req->base.flags & CRYPTO_TFM_REQ_MAY_BACKLOG;
	if (may_backlog && unlikely(atomic_read(&eng->nr_backlog))) {
		/* Others wait already: behind them. */
		ret = xo_backlog_add(eng, rctx);
	} else {
		ret = xo_engine_submit(eng, job);
		if (unlikely(ret == -EBUSY) && may_backlog)
			ret = xo_backlog_add(eng, rctx);
	}
	/* -EBUSY with may_backlog: on the backlog, which holds the reference. */
	if (ret == -EINPROGRESS || (ret == -EBUSY && may_backlog)) {
		/* The job's completion drops the reference; b may be gone. */
		rcu_read_unlock();
		return ret;
	}
	switch (ret) {
	case 0:
		break;
	case -EIO:
	case -EINVAL:
		/* The engine failed it at once: recompute right here, if that is safe. */
		if (!xo_can_recompute(req, eng, ret)) {
			ret = -EIO;
			break;
		}
		why = XO_STAT_FB_ERROR;
		xo_stats_add(eng->stats, XO_STAT_FB_ERROR, 1);
		ret = -EAGAIN;
		break;
	case -ENOSPC:
	case -EBUSY:
		why = XO_STAT_FB_BUSY;
		xo_stats_add(eng->stats, XO_STAT_FB_BUSY, 1);
		ret = -EAGAIN;
		break;
	default:
		why = XO_STAT_FB_NOENGINE;
		ret = -EAGAIN;
		break;
	}
out_put:
	percpu_ref_put(&b->users);
out:
	rcu_read_unlock();
	if (ret != -EAGAIN)
		return ret;
	xo_stats_add(xo_total_stats, why, 1);
	return xo_fallback(req, encrypt);
}

/*
 * Why @len bytes under @ctx's key go to software without asking the engine,
 * or XO_NR_STATS when the engine may take them.
 */
static __always_inline enum xo_stat xo_software_reason(struct xo_tfm_ctx *ctx,
						       unsigned int len)
{
	if (unlikely(!ctx->keylen))
		return XO_STAT_FB_KEYSIZE;
	if (len < READ_ONCE(threshold))
		return XO_STAT_FB_SMALL;
	if (len < XTS_BLOCK_SIZE || len % XTS_BLOCK_SIZE)
		return XO_STAT_FB_LENGTH;
	/* No engine took this key, and none came or went since. */
	if (!rcu_access_pointer(ctx->binding) && !xo_bind_due(ctx))
		return READ_ONCE(ctx->unbound_why);
	return XO_NR_STATS;
}

/*
 * Requests the engine will not see (with the default threshold, every
 * 512-byte sector; without an engine, all of them) go straight to the
 * fallback: no stack frame, no RCU section. What this layer adds to the
 * fallback's own cost is what dm-crypt pays for choosing this driver when
 * the engine does not help.
 */
static __always_inline int xo_crypt(struct skcipher_request *req, bool encrypt)
{
	struct xo_tfm_ctx *ctx = crypto_skcipher_ctx(crypto_skcipher_reqtfm(req));
	enum xo_stat why = xo_software_reason(ctx, req->cryptlen);

	if (why == XO_NR_STATS)
		return xo_offload(req, ctx, encrypt);
	xo_stats_add(xo_total_stats, why, 1);
	return xo_fallback(req, encrypt);
}

static int xo_encrypt(struct skcipher_request *req)
{
	return xo_crypt(req, true);
}

static int xo_decrypt(struct skcipher_request *req)
{
	return xo_crypt(req, false);
}

static int xo_init_tfm(struct crypto_skcipher *tfm)
{
	struct xo_tfm_ctx *ctx = crypto_skcipher_ctx(tfm);
	struct crypto_skcipher *fallback;
	unsigned int subreq;

	/* Never ourselves, and nothing that allocates per request. */
	fallback = crypto_alloc_skcipher(crypto_tfm_alg_name(&tfm->base), 0,
					 CRYPTO_ALG_NEED_FALLBACK |
					 CRYPTO_ALG_ALLOCATES_MEMORY);
	if (IS_ERR(fallback))
		return PTR_ERR(fallback);

	ctx->fallback = fallback;
	subreq = crypto_skcipher_reqsize(fallback);
	RCU_INIT_POINTER(ctx->binding, NULL);
	mutex_init(&ctx->lock);
	mutex_init(&ctx->bind_lock);
	INIT_WORK(&ctx->rebind, xo_rebind_work);
	ctx->keylen = 0;
	ctx->key_seq = 0;
	ctx->bound_seq = 0;
	ctx->bound_gen = xo_engine_generation();
	ctx->unbound_why = XO_STAT_FB_NOENGINE;
	/* Room for the largest engine so far; see xo_outside_caps(). */
	ctx->room = xo_engine_room_max();
	xo_skcipher_set_reqsize_dma(tfm, max3(sizeof(struct xo_req_ctx),
					      XO_ROOM_OFFSET + ctx->room,
					      offsetof(struct xo_req_ctx, fb.req) +
					      sizeof(struct skcipher_request) + subreq));
	mutex_lock(&xo_tfms_lock);
	list_add_tail(&ctx->node, &xo_tfms);
	mutex_unlock(&xo_tfms_lock);
	return 0;
}

static void xo_exit_tfm(struct crypto_skcipher *tfm)
{
	struct xo_tfm_ctx *ctx = crypto_skcipher_ctx(tfm);
	struct xo_binding *b;

	mutex_lock(&xo_tfms_lock);
	list_del(&ctx->node);
	mutex_unlock(&xo_tfms_lock);
	cancel_work_sync(&ctx->rebind);
	b = rcu_dereference_protected(ctx->binding, true);
	if (b)
		xo_binding_retire(b);
	crypto_free_skcipher(ctx->fallback);
	memzero_explicit(ctx->key, sizeof(ctx->key));
	mutex_destroy(&ctx->bind_lock);
	mutex_destroy(&ctx->lock);
}

static struct skcipher_alg xo_alg = {
	.base = {
		.cra_name = "xts(aes)",
		.cra_driver_name = "xts-aes-offload",
		/* Keys go to a device: not for users who need them kept in the CPU. */
		.cra_flags = CRYPTO_ALG_ASYNC | CRYPTO_ALG_NEED_FALLBACK |
			     CRYPTO_ALG_KERN_DRIVER_ONLY,
		.cra_blocksize = AES_BLOCK_SIZE,
		.cra_ctxsize = sizeof(struct xo_tfm_ctx),
		.cra_module = THIS_MODULE,
	},
	.min_keysize = 2 * AES_MIN_KEY_SIZE,
	.max_keysize = 2 * AES_MAX_KEY_SIZE,
	.ivsize = XTS_BLOCK_SIZE,
	.setkey = xo_setkey,
	.encrypt = xo_encrypt,
	.decrypt = xo_decrypt,
	.init = xo_init_tfm,
	.exit = xo_exit_tfm,
};

/*
 * The skcipher is registered when the first engine is, as a driver
 * registers its algorithms once its device is there: the crypto API's
 * self-tests at registration (testmgr's vectors, and with
 * CONFIG_CRYPTO_MANAGER_EXTRA_TESTS its comparison with the generic
 * implementation) then run on the engine, since setkey binds each key to it
 * at once (below the threshold they run in software, as any request). It
 * stays registered until the module unloads: a tfm may outlive every
 * engine and runs in software then, as requests do whenever no engine can
 * take them. Each engine is also checked at its own registration by the
 * known-answer test (engine.c).
 */
static DEFINE_MUTEX(xo_alg_lock);
static bool xo_alg_registered;

void xo_alg_engine_registered(void)
{
	int ret;

	mutex_lock(&xo_alg_lock);
	if (!xo_alg_registered) {
		ret = crypto_register_skcipher(&xo_alg);
		if (ret)
			pr_err("xts_offload: registering %s failed (%d): retried when the next engine registers\n",
			       xo_alg.base.cra_driver_name, ret);
		else
			xo_alg_registered = true;
	}
	mutex_unlock(&xo_alg_lock);
}

static int __init xo_module_init(void)
{
	int ret;

	ret = xo_done_threads_start();
	if (ret)
		return ret;
	xo_free_wq = alloc_workqueue("xts_offload_free", 0, 0);
	if (!xo_free_wq) {
		ret = -ENOMEM;
		goto err_threads;
	}
	/* Before the first engine: engines put their files in its debugfs. */
	ret = xo_sysfs_init();
	if (ret)
		goto err_free_wq;
	xo_alg.base.cra_priority = priority;
	return 0;

err_free_wq:
	destroy_workqueue(xo_free_wq);
err_threads:
	xo_done_threads_stop();
	return ret;
}

static void __exit xo_module_exit(void)
{
	/* No engine module is left (each holds a reference on this one). */
	if (xo_alg_registered)
		crypto_unregister_skcipher(&xo_alg);
	/*
	 * Every tfm is gone, and with them their bindings' module references:
	 * the engine modules could unload, and did, before this one. Wait for
	 * what retired bindings still have queued all the same.
	 */
	rcu_barrier();
	xo_done_threads_stop();
	flush_workqueue(xo_free_wq);
	xo_engines_exit();
	destroy_workqueue(xo_free_wq);
	xo_sysfs_exit();
}

module_init(xo_module_init);
module_exit(xo_module_exit);

MODULE_DESCRIPTION("xts(aes) offloaded to accelerator engines (registered by their own modules), with software fallback");
MODULE_LICENSE("GPL");
