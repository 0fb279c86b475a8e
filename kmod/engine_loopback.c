// SPDX-License-Identifier: GPL-2.0-only
/*
 * xts_offload_loopback: a software engine, for tests. It registers through
 * the same exported interface a hardware engine's module would, computes
 * every job with the kernel's own xts(aes) from a workqueue, and can be
 * told to declare less than it can do, or to behave as a faulty device
 * would:
 *
 *   count=N                        register N engines (default 1, at most 4)
 *   priority=P[,P...]              engine priority, per engine (default 10)
 *   node=N[,N...]                  NUMA node of each engine's device
 *                                  (default -1: none in particular)
 *   keysizes=256,512               key sizes taken, in bits, both halves
 *   granularity=N                  lengths taken are multiples of N bytes
 *   max_len=N                      longest request taken, in bytes
 *   no_inplace=1                   take no request whose dst overlaps src
 *   priv_size=N                    declare N bytes of per-job room
 *   priv_align=N                   declare its alignment (a power of two)
 *   model=ccp                      behave as a CCP-class card: lengths of
 *                                  16 to 4096 bytes in powers of two
 *                                  (len_mask), 192 bytes of per-job room
 *                                  aligned to 64, a queue of 4 jobs
 *                                  (queue_depth) whose overflow waits in
 *                                  the core's backlog (-EBUSY), a job
 *                                  timeout of 1000 ms (job_timeout_ms)
 *   job_timeout_ms=N               declare a per-job timeout of N ms
 *   lose=N                         silently drop the next N jobs: only
 *                                  the per-job timeout ends them
 *   reset=1                        a function-level reset: every engine
 *                                  pauses, fails what it held (-ESTALE),
 *                                  forgets its sessions and resumes
 *   defect=swap-keys|tweak-endian  compute wrongly (the known-answer test
 *   defect=len-512|cross-page      at registration must refuse the engine):
 *                                  key halves swapped, tweak bytes reversed;
 *                                  or wrong only for 512-byte requests, only
 *                                  when an entry crosses a page boundary
 *   delay_ms=N                     answer N ms late
 *   reorder=N                      hold up to N jobs, answer the last
 *                                  submitted first
 *   inline_done=1                  report finished jobs from within the
 *                                  next submit call (another job's), as
 *                                  a driver that reaps its ring when it
 *                                  submits; what no submit call takes
 *                                  within a tick, from the workqueue
 *   queue_depth=N                  at most N jobs in flight per engine:
 *                                  submit reports a full queue beyond
 *   fail_written=N                 the next N jobs write dst, then fail
 *   untouched=1                    claim XO_CAP_DST_UNTOUCHED_ON_ERROR
 *   hang=1                         stop answering: jobs wait until the
 *                                  watchdog retires the engine, or gone=1
 *   gone=1                         every engine vanishes at once, as in a
 *                                  surprise removal: unregistered, and the
 *                                  jobs it held fail as "outcome unknown"
 *                                  (-ESTALE) after writing dst
 *
 * A job outside what the engine declared (a key size, a length, in place)
 * is refused (-EINVAL, so recomputed) and counted in debugfs,
 * <device>/violations: the core must send none.
 *
 * It is no accelerator: it exists so the tests reach paths QEMU's device
 * cannot (a wrong result, a failure after dst was written, a full queue,
 * completions out of order, a surprise removal with jobs in flight). Its
 * devices are bare root devices (xts_offload_loopback, then
 * xts_offload_loopback.1, ...), with no driver to carry counters in sysfs:
 * they are in debugfs, /sys/kernel/debug/xts_offload/<device>/, from
 * registration to module unload (a retired engine's included).
 */
#include <linux/atomic.h>
#include <linux/bottom_half.h>
#include <linux/debugfs.h>
#include <linux/device.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/nodemask.h>
#include <linux/numa.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <crypto/aes.h>
#include <crypto/skcipher.h>

#include "engine.h"

#define XOL_MAX_ENGINES	4

static unsigned int xol_count = 1;
module_param_named(count, xol_count, uint, 0444);
MODULE_PARM_DESC(count, "Engines to register, each on a device of its own (default 1, at most 4)");

static int xol_priority[XOL_MAX_ENGINES] = { 10, 10, 10, 10 };
module_param_array_named(priority, xol_priority, int, NULL, 0444);
MODULE_PARM_DESC(priority,
		 "Engine priority, one per engine: new keys go to the highest (default 10, above virtio-crypto's 0)");

static int xol_node[XOL_MAX_ENGINES] = { NUMA_NO_NODE, NUMA_NO_NODE, NUMA_NO_NODE, NUMA_NO_NODE };
module_param_array_named(node, xol_node, int, NULL, 0444);
MODULE_PARM_DESC(node,
		 "NUMA node of each engine's device, one per engine (default -1: none in particular)");

static unsigned int keysizes[2] = { 256, 512 };
static unsigned int nr_keysizes = 2;
module_param_array(keysizes, uint, &nr_keysizes, 0444);
MODULE_PARM_DESC(keysizes,
		 "Key sizes the engines take, in bits for both XTS halves: 256 (AES-128-XTS), 512 (AES-256-XTS) (default 256,512)");

static unsigned int granularity = XTS_BLOCK_SIZE;
module_param(granularity, uint, 0444);
MODULE_PARM_DESC(granularity,
		 "The engines take lengths that are a multiple of this many bytes: a power of two, 16 to 65536 (default 16)");

static unsigned int max_len = SZ_1M;
module_param(max_len, uint, 0444);
MODULE_PARM_DESC(max_len, "The longest request the engines take, in bytes (default 1048576)");

static bool no_inplace;
module_param(no_inplace, bool, 0444);
MODULE_PARM_DESC(no_inplace,
		 "Take no request whose destination overlaps its source (no XO_CAP_INPLACE) (default no)");

static unsigned int priv_size;
module_param(priv_size, uint, 0444);
MODULE_PARM_DESC(priv_size,
		 "Per-job room the engines declare, in bytes (default 0: what they use); above the core's XO_JOB_PRIV_SIZE the engine is refused");

static unsigned int priv_align;
module_param(priv_align, uint, 0444);
MODULE_PARM_DESC(priv_align,
		 "Alignment of the per-job room the engines declare, in bytes (default 0: what they need; model=ccp: 64); the core refuses what is not a power of two up to XO_JOB_PRIV_ALIGN_MAX");

static char *model = "plain";
module_param(model, charp, 0444);
MODULE_PARM_DESC(model,
		 "plain (default), or ccp: a CCP-class card, lengths 16 to 4096 bytes in powers of two, 192 bytes of per-job room aligned to 64, a queue of queue_depth (default 4) jobs whose overflow waits in the core's backlog");

static int job_timeout_ms = -1;
module_param(job_timeout_ms, int, 0444);
MODULE_PARM_DESC(job_timeout_ms,
		 "Per-job timeout the engines declare, in ms: a job held longer is aborted by the core's watchdog (default -1: none, model=ccp 1000; 0: none)");

/* A writable count: the next N jobs behave so (lose, fail_written). */
static int xol_count_set(const char *val, const struct kernel_param *kp)
{
	int n, ret = kstrtoint(val, 0, &n);

	if (ret || n < 0)
		return ret ? ret : -EINVAL;
	atomic_set(kp->arg, n);
	return 0;
}

static int xol_count_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(kp->arg));
}

static const struct kernel_param_ops xol_count_ops = {
	.set = xol_count_set,
	.get = xol_count_get,
};

static atomic_t lose = ATOMIC_INIT(0);
module_param_cb(lose, &xol_count_ops, &lose, 0644);
MODULE_PARM_DESC(lose,
		 "The next N jobs are silently dropped, as a card that loses them: only the per-job timeout ends them (default 0)");

static char *defect = "none";
module_param(defect, charp, 0444);
MODULE_PARM_DESC(defect,
		 "Compute wrongly on purpose: none (default), swap-keys (key halves swapped), tweak-endian (tweak byte order reversed), len-512 (only 512-byte requests), cross-page (only when a scatterlist entry crosses a page boundary)");

static unsigned int delay_ms;
module_param(delay_ms, uint, 0644);
MODULE_PARM_DESC(delay_ms, "Complete each job this many milliseconds late (default 0)");

static unsigned int reorder;
module_param(reorder, uint, 0644);
MODULE_PARM_DESC(reorder,
		 "Hold up to N jobs (or delay_ms, at least a tick) and complete them last submitted first (default 0: in order)");

static bool inline_done;
module_param(inline_done, bool, 0644);
MODULE_PARM_DESC(inline_done,
		 "Report finished jobs from within the next submit call (another job's), as a driver that reaps its ring when it submits; what no submit call takes within a tick is reported from the workqueue (default no)");

static unsigned int queue_depth;
module_param(queue_depth, uint, 0644);
MODULE_PARM_DESC(queue_depth,
		 "At most N jobs in flight per engine; beyond, submit reports a full queue: -ENOSPC, or with model=ccp -EBUSY (default 0: no limit; model=ccp: 4)");

static atomic_t fail_written = ATOMIC_INIT(0);
module_param_cb(fail_written, &xol_count_ops, &fail_written, 0644);
MODULE_PARM_DESC(fail_written,
		 "The next N jobs write their result to dst, then fail with -EIO (default 0)");

static bool untouched;
module_param(untouched, bool, 0444);
MODULE_PARM_DESC(untouched,
		 "Claim that a failed job never wrote dst (XO_CAP_DST_UNTOUCHED_ON_ERROR), even when fail_written makes it false (default no)");

static bool hang;
module_param(hang, bool, 0644);
MODULE_PARM_DESC(hang,
		 "Stop answering: new jobs are held until the watchdog retires the engine or gone=1 (default no)");

#define XOL_SESSIONS 256

enum xol_defect { XOL_OK, XOL_SWAP_KEYS, XOL_TWEAK_ENDIAN, XOL_LEN_512, XOL_CROSS_PAGE };

struct xol_session {
	struct crypto_sync_skcipher *tfm;
	bool encrypt;
	bool stale;		/* forgotten in a reset: jobs on it fail */
};

struct xol_job {
	struct delayed_work dw;
	struct list_head held;		/* hang, reorder: waiting; inline_done: done */
	struct xo_job *job;
	u64 seq;			/* submission order */
	int err;			/* inline_done: the result, not reported yet */
	u8 iv[XTS_BLOCK_SIZE];
};

static_assert(sizeof(struct xol_job) <= XO_JOB_PRIV_SIZE);

/* model=ccp: what a CCP-class card declares. */
#define XOL_CCP_LEN_MASK	0x1ff0ULL	/* 16 to 4096, powers of two */
#define XOL_CCP_MAX_LEN		4096U
#define XOL_CCP_PRIV_SIZE	192U
#define XOL_CCP_PRIV_ALIGN	64U
#define XOL_CCP_QUEUE_DEPTH	4U
#define XOL_CCP_JOB_TIMEOUT_MS	1000

struct xol_dev {
	struct xo_engine eng;
	struct device *dev;
	struct mutex lock;		/* sessions[] against create/destroy */
	struct xol_session sessions[XOL_SESSIONS];
	struct completion released;
	spinlock_t held_lock;		/* held, batch, finished, seq, done_seq */
	struct list_head held;		/* hang */
	struct list_head finished;	/* inline_done: computed, not reported */
	struct delayed_work reap_work;	/* inline_done: what no submit took */
	struct list_head batch;		/* reorder */
	unsigned int nr_batch;
	struct delayed_work batch_work;
	u64 seq;			/* jobs submitted */
	u64 done_seq;			/* highest seq completed */
	atomic_t in_flight;		/* queue_depth */
	unsigned int jobs;		/* taken, not yet completed; held_lock */
	wait_queue_head_t idle;		/* jobs reached 0 */
	atomic_t violations;		/* jobs outside the declaration */
	atomic_t reordered;		/* completed before an earlier job */
	atomic_t reaped_inline;		/* inline_done: reported inside a submit */
	atomic_t lost;			/* dropped (lose) */
	atomic_t expired;		/* aborted past their deadline */
	atomic_t resets;		/* reset=1 */
	atomic_t reset_failed;		/* held jobs a reset failed */
	struct mutex stop_lock;		/* registered */
	bool registered;
	struct dentry *debugfs;		/* the engine's counters */
};

static struct xol_dev *xol_devs[XOL_MAX_ENGINES];
static unsigned int xol_nr;
static struct workqueue_struct *xol_wq;
static enum xol_defect xol_defect;
static bool xol_ccp;
/* Engines up: gone may act. Under the module's parameter lock. */
static bool xol_up;

static struct xol_dev *to_xol(struct xo_engine *eng)
{
	return container_of(eng, struct xol_dev, eng);
}

/* Something the engine did not declare reached it. */
static void xol_violation(struct xol_dev *xd, const char *what)
{
	atomic_inc(&xd->violations);
	dev_err_ratelimited(xd->dev, "the core sent what the engine does not take: %s\n", what);
}

static int xol_session_create(struct xo_engine *eng, const u8 *key, unsigned int keylen,
			      bool encrypt, u64 *session)
{
	struct xol_dev *xd = to_xol(eng);
	u8 k[2 * AES_MAX_KEY_SIZE];
	struct crypto_sync_skcipher *tfm;
	unsigned int i, half = keylen / 2;
	int ret;

	if (!xo_engine_takes_key(eng, keylen)) {
		xol_violation(xd, "a key size it does not take");
		return -EINVAL;
	}
	/* Never an engine-backed xts(aes): the kernel's own software one. */
	tfm = crypto_alloc_sync_skcipher("xts(aes)", 0, CRYPTO_ALG_NEED_FALLBACK);
	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	if (xol_defect == XOL_SWAP_KEYS) {
		memcpy(k, key + half, half);
		memcpy(k + half, key, half);
	} else {
		memcpy(k, key, keylen);
	}
	ret = crypto_sync_skcipher_setkey(tfm, k, keylen);
	memzero_explicit(k, sizeof(k));
	if (ret)
		goto err;
	mutex_lock(&xd->lock);
	for (i = 0; i < XOL_SESSIONS && xd->sessions[i].tfm; i++)
		;
	if (i < XOL_SESSIONS) {
		xd->sessions[i].encrypt = encrypt;
		xd->sessions[i].stale = false;
		WRITE_ONCE(xd->sessions[i].tfm, tfm);
		*session = i;
	}
	mutex_unlock(&xd->lock);
	if (i < XOL_SESSIONS)
		return 0;
	ret = -ENOSPC;
err:
	crypto_free_sync_skcipher(tfm);
	return ret;
}

static void xol_session_destroy(struct xo_engine *eng, u64 session)
{
	struct xol_dev *xd = to_xol(eng);
	struct crypto_sync_skcipher *tfm = NULL;

	if (session >= XOL_SESSIONS)
		return;
	mutex_lock(&xd->lock);
	tfm = xd->sessions[session].tfm;
	WRITE_ONCE(xd->sessions[session].tfm, NULL);
	mutex_unlock(&xd->lock);
	/* Jobs compute under the lock: none uses tfm any more. */
	crypto_free_sync_skcipher(tfm);
}

/* Does an entry of @sg's first @len bytes cross a page boundary? */
static bool xol_crosses_page(struct scatterlist *sg, unsigned int len)
{
	for (; sg && len; sg = sg_next(sg)) {
		unsigned int l = min(sg->length, len);

		if (offset_in_page(sg->offset) + l > PAGE_SIZE)
			return true;
		len -= l;
	}
	return false;
}

/* defect=len-512, cross-page: a result wrong only for such requests. */
static void xol_defect_result(struct xo_job *job)
{
	u8 b;

	if (!(xol_defect == XOL_LEN_512 && job->len == 512) &&
	    !(xol_defect == XOL_CROSS_PAGE && (xol_crosses_page(job->src, job->len) ||
					       xol_crosses_page(job->dst, job->len))))
		return;
	sg_pcopy_to_buffer(job->dst, sg_nents(job->dst), &b, 1, 0);
	b ^= 0xff;
	sg_pcopy_from_buffer(job->dst, sg_nents(job->dst), &b, 1, 0);
}

/* Compute the job into dst, as a device would. */
static int xol_compute(struct xol_dev *xd, struct xol_job *lj)
{
	struct xo_job *job = lj->job;
	struct xol_session *s;
	int err = -EINVAL;

	mutex_lock(&xd->lock);
	s = job->session < XOL_SESSIONS ? &xd->sessions[job->session] : NULL;
	if (s && s->tfm && !s->stale && s->encrypt == job->encrypt) {
		SYNC_SKCIPHER_REQUEST_ON_STACK(req, s->tfm);

		skcipher_request_set_sync_tfm(req, s->tfm);
		skcipher_request_set_callback(req, 0, NULL, NULL);
		skcipher_request_set_crypt(req, job->src, job->dst, job->len, lj->iv);
		err = job->encrypt ? crypto_skcipher_encrypt(req) : crypto_skcipher_decrypt(req);
		skcipher_request_zero(req);
		if (!err)
			xol_defect_result(job);
	}
	mutex_unlock(&xd->lock);
	return err;
}

/* Hand the job back; lj is gone after this. */
static void xol_finish(struct xol_dev *xd, struct xol_job *lj, int err)
{
	struct xo_job *job = lj->job;
	unsigned long flags;

	spin_lock_irqsave(&xd->held_lock, flags);
	if (lj->seq < xd->done_seq)
		atomic_inc(&xd->reordered);
	else
		xd->done_seq = lj->seq;
	spin_unlock_irqrestore(&xd->held_lock, flags);
	atomic_dec(&xd->in_flight);
	/*
	 * Completions run with bottom halves off, as from a device's tasklet;
	 * inside a submit call under the core's backlog lock, interrupts are
	 * off already (and bottom halves cannot be enabled again there).
	 */
	if (irqs_disabled()) {
		xo_engine_complete(job, err);
	} else {
		local_bh_disable();
		xo_engine_complete(job, err);
		local_bh_enable();
	}
	/* The waiter frees xd once it sees 0 under the lock: wake it under it. */
	spin_lock_irqsave(&xd->held_lock, flags);
	if (!--xd->jobs)
		wake_up(&xd->idle);
	spin_unlock_irqrestore(&xd->held_lock, flags);
}

static bool xol_idle(struct xol_dev *xd)
{
	unsigned long flags;
	bool idle;

	spin_lock_irqsave(&xd->held_lock, flags);
	idle = !xd->jobs;
	spin_unlock_irqrestore(&xd->held_lock, flags);
	return idle;
}

static void xol_run(struct xol_dev *xd, struct xol_job *lj)
{
	int err = xol_compute(xd, lj);
	unsigned long flags;

	if (!err && atomic_dec_if_positive(&fail_written) >= 0)
		err = -EIO;
	if (READ_ONCE(inline_done)) {
		/* Done, and told to no one yet: the next submit call reports it. */
		lj->err = err;
		/*
		 * Queued under the lock: once a submit call can take the job
		 * (and xol_quiesce() see the engine idle, and free xd), this
		 * touches xd no more.
		 */
		spin_lock_irqsave(&xd->held_lock, flags);
		list_add_tail(&lj->held, &xd->finished);
		queue_delayed_work(xol_wq, &xd->reap_work, 1);
		spin_unlock_irqrestore(&xd->held_lock, flags);
		return;
	}
	xol_finish(xd, lj, err);
}

/* inline_done: report what was computed, from a submit call or the workqueue. */
static void xol_reap(struct xol_dev *xd, bool in_submit)
{
	struct xol_job *lj, *tmp;
	unsigned long flags;
	LIST_HEAD(done);

	spin_lock_irqsave(&xd->held_lock, flags);
	list_splice_init(&xd->finished, &done);
	spin_unlock_irqrestore(&xd->held_lock, flags);
	list_for_each_entry_safe(lj, tmp, &done, held) {
		list_del(&lj->held);
		if (in_submit)
			atomic_inc(&xd->reaped_inline);
		xol_finish(xd, lj, lj->err);
	}
}

static void xol_reap_work(struct work_struct *work)
{
	xol_reap(container_of(to_delayed_work(work), struct xol_dev, reap_work), false);
}

static void xol_work(struct work_struct *work)
{
	struct xol_job *lj = container_of(to_delayed_work(work), struct xol_job, dw);

	xol_run(to_xol(lj->job->engine), lj);
}

/* reorder: what was held, last submitted first. */
static void xol_batch_work(struct work_struct *work)
{
	struct xol_dev *xd = container_of(to_delayed_work(work), struct xol_dev, batch_work);
	struct xol_job *lj, *tmp;
	unsigned long flags;
	LIST_HEAD(batch);

	spin_lock_irqsave(&xd->held_lock, flags);
	list_splice_init(&xd->batch, &batch);
	xd->nr_batch = 0;
	spin_unlock_irqrestore(&xd->held_lock, flags);
	list_for_each_entry_safe_reverse(lj, tmp, &batch, held) {
		list_del(&lj->held);
		xol_run(xd, lj);
	}
}

/* Do any bytes of src and dst's first len bytes coincide? */
static bool xol_overlap(struct scatterlist *src, struct scatterlist *dst, unsigned int len)
{
	struct scatterlist *s, *d;

	if (src == dst)
		return true;
	for (d = dst; d; d = sg_next(d)) {
		phys_addr_t d0 = sg_phys(d), d1 = d0 + d->length;

		for (s = src; s; s = sg_next(s)) {
			phys_addr_t s0 = sg_phys(s), s1 = s0 + s->length;

			if (s0 < d1 && d0 < s1)
				return true;
		}
	}
	return false;
}

static int xol_submit(struct xo_engine *eng, struct xo_job *job)
{
	struct xol_dev *xd = to_xol(eng);
	struct xol_job *lj = job->priv;
	unsigned int i, depth = READ_ONCE(queue_depth);
	unsigned long flags, delay;

	if (READ_ONCE(eng->dead))
		return -ENODEV;
	if (!xo_engine_takes_len(eng, job->len)) {
		xol_violation(xd, "a length it does not take");
		return -EINVAL;
	}
	/* A device would DMA its descriptors from here. */
	if (!IS_ALIGNED((unsigned long)job->priv, eng->priv_align)) {
		xol_violation(xd, "per-job room not aligned as declared");
		return -EINVAL;
	}
	if (!(eng->caps & XO_CAP_INPLACE) && xol_overlap(job->src, job->dst, job->len)) {
		xol_violation(xd, "an in-place request");
		return -EINVAL;
	}
	/*
	 * First what it finished, reported here, inside this job's submit call
	 * (the core must only queue them: engine.h), as a driver that reaps its
	 * ring before it adds to it: that may make room for this one. Under the
	 * core's backlog lock, with interrupts off, too.
	 */
	if (READ_ONCE(inline_done))
		xol_reap(xd, true);
	if (xol_ccp && !depth)
		depth = XOL_CCP_QUEUE_DEPTH;
	/* Room again before xol_finish() completes: as engine.h asks. */
	if (atomic_inc_return(&xd->in_flight) > depth && depth) {
		atomic_dec(&xd->in_flight);
		return xol_ccp ? -EBUSY : -ENOSPC;
	}
	lj->job = job;
	for (i = 0; i < XTS_BLOCK_SIZE; i++)
		lj->iv[i] = xol_defect == XOL_TWEAK_ENDIAN ? job->iv[XTS_BLOCK_SIZE - 1 - i] :
							     job->iv[i];
	delay = msecs_to_jiffies(READ_ONCE(delay_ms));
	spin_lock_irqsave(&xd->held_lock, flags);
	lj->seq = ++xd->seq;
	xd->jobs++;
	if (READ_ONCE(hang)) {
		list_add_tail(&lj->held, &xd->held);
	} else if (unlikely(atomic_read(&lose) > 0) && atomic_dec_if_positive(&lose) >= 0) {
		/* Held without a word: only expire (the core's timeout) ends it. */
		atomic_inc(&xd->lost);
		list_add_tail(&lj->held, &xd->held);
	} else if (READ_ONCE(reorder)) {
		list_add_tail(&lj->held, &xd->batch);
		if (++xd->nr_batch >= READ_ONCE(reorder))
			mod_delayed_work(xol_wq, &xd->batch_work, 0);
		else
			queue_delayed_work(xol_wq, &xd->batch_work, max(delay, 1UL));
	} else {
		INIT_DELAYED_WORK(&lj->dw, xol_work);
		queue_delayed_work(xol_wq, &lj->dw, delay);
	}
	spin_unlock_irqrestore(&xd->held_lock, flags);
	return -EINPROGRESS;
}

/*
 * Unregister (once), then finish everything: the jobs held (hang) were
 * taken by the "device", which may have written dst: it does, and they
 * fail as "outcome unknown". Jobs waiting for a delay or a batch complete
 * as they would have (xol_quiesce() waits for them).
 */
static void xol_stop(struct xo_engine *eng)
{
	struct xol_dev *xd = to_xol(eng);
	struct xol_job *lj, *tmp;
	unsigned long flags;
	LIST_HEAD(held);

	mutex_lock(&xd->stop_lock);
	if (xd->registered) {
		xd->registered = false;
		xo_engine_unregister(&xd->eng);
	}
	mutex_unlock(&xd->stop_lock);
	flush_delayed_work(&xd->batch_work);
	spin_lock_irqsave(&xd->held_lock, flags);
	list_splice_init(&xd->held, &held);
	spin_unlock_irqrestore(&xd->held_lock, flags);
	list_for_each_entry_safe(lj, tmp, &held, held) {
		list_del(&lj->held);
		xol_compute(xd, lj);
		xol_finish(xd, lj, -ESTALE);
	}
}

/* The core's watchdog: held jobs (lose, hang) past their deadline fail. */
static unsigned int xol_expire(struct xo_engine *eng, unsigned long now)
{
	struct xol_dev *xd = to_xol(eng);
	struct xol_job *lj, *tmp;
	unsigned long flags;
	unsigned int n = 0;
	LIST_HEAD(late);

	spin_lock_irqsave(&xd->held_lock, flags);
	list_for_each_entry_safe(lj, tmp, &xd->held, held)
		if (time_after(now, lj->job->deadline))
			list_move_tail(&lj->held, &late);
	spin_unlock_irqrestore(&xd->held_lock, flags);
	list_for_each_entry_safe(lj, tmp, &late, held) {
		list_del(&lj->held);
		atomic_inc(&xd->expired);
		xol_finish(xd, lj, -ESTALE);
		n++;
	}
	return n;
}

/*
 * reset=1: a function-level reset, as AER recovery would do it. The core
 * pauses the engine (new requests in software), the "device" fails what
 * it held (-ESTALE) and forgets its sessions (their handles stay valid to
 * destroy; jobs on them fail), and the core recreates the sessions of
 * every key bound here on resume. Jobs waiting for delay_ms or a reorder
 * batch complete as they would (on forgotten sessions: -EINVAL).
 * reset=forget: the "device" frees its sessions as a virtio reset may, so
 * that their handles come back for the new ones; the engine says so with
 * xo_engine_sessions_lost(), and the core must not destroy them again.
 */
static void xol_reset(struct xol_dev *xd, bool forget)
{
	struct xol_job *lj, *tmp;
	unsigned long flags;
	unsigned int i;
	LIST_HEAD(held);

	xo_engine_pause(&xd->eng);
	spin_lock_irqsave(&xd->held_lock, flags);
	list_splice_init(&xd->held, &held);
	spin_unlock_irqrestore(&xd->held_lock, flags);
	list_for_each_entry_safe(lj, tmp, &held, held) {
		list_del(&lj->held);
		atomic_inc(&xd->reset_failed);
		xol_finish(xd, lj, -ESTALE);
	}
	/* Jobs compute under the lock: a freed session is no one's. */
	mutex_lock(&xd->lock);
	for (i = 0; i < XOL_SESSIONS; i++) {
		xd->sessions[i].stale = true;
		if (forget) {
			crypto_free_sync_skcipher(xd->sessions[i].tfm);
			WRITE_ONCE(xd->sessions[i].tfm, NULL);
		}
	}
	mutex_unlock(&xd->lock);
	if (forget)
		xo_engine_sessions_lost(&xd->eng);
	atomic_inc(&xd->resets);
	xo_engine_resume(&xd->eng);
}

static int reset_set(const char *val, const struct kernel_param *kp)
{
	bool on = false, forget = sysfs_streq(val, "forget");
	unsigned int i;
	int ret = forget ? 0 : kstrtobool(val, &on);

	if (ret)
		return ret;
	on |= forget;
	/* Under the parameter lock, as gone_set(). */
	if (!on || !xol_up)
		return on ? -ENODEV : 0;
	for (i = 0; i < xol_nr; i++) {
		mutex_lock(&xol_devs[i]->stop_lock);
		if (xol_devs[i]->registered) {
			dev_info(xol_devs[i]->dev, "engine reset (reset=%s)\n",
				 forget ? "forget" : "1");
			xol_reset(xol_devs[i], forget);
		}
		mutex_unlock(&xol_devs[i]->stop_lock);
	}
	return 0;
}

/* Reads 0: a reset is an event, not a state. */
static bool reset;

static const struct kernel_param_ops reset_ops = {
	.set = reset_set,
	.get = param_get_bool,
};

module_param_cb(reset, &reset_ops, &reset, 0644);
MODULE_PARM_DESC(reset,
		 "Write 1: every engine resets as in an FLR: paused, held jobs fail with -ESTALE, sessions forgotten, then resumed with its keys' sessions recreated; write forget: the same, and the sessions freed, their handles reused (xo_engine_sessions_lost())");

static int gone_set(const char *val, const struct kernel_param *kp)
{
	unsigned int i;
	bool on;
	int ret = kstrtobool(val, &on);

	if (ret)
		return ret;
	/* Under the parameter lock: module init and exit take it too. */
	if (!on || !xol_up)
		return on ? -ENODEV : 0;
	for (i = 0; i < xol_nr; i++) {
		dev_info(xol_devs[i]->dev, "engine gone (gone=1)\n");
		xol_stop(&xol_devs[i]->eng);
	}
	return 0;
}

static int gone_get(char *buf, const struct kernel_param *kp)
{
	bool gone = xol_up;
	unsigned int i;

	/* Under the parameter lock, as gone_set(). */
	for (i = 0; xol_up && i < xol_nr; i++)
		gone &= !READ_ONCE(xol_devs[i]->registered);
	return sysfs_emit(buf, "%d\n", gone);
}

static const struct kernel_param_ops gone_ops = {
	.set = gone_set,
	.get = gone_get,
};
module_param_cb(gone, &gone_ops, NULL, 0644);
MODULE_PARM_DESC(gone,
		 "Write 1: every engine vanishes with its jobs in flight, as in a surprise removal; held jobs (hang=1) write dst, then fail with -ESTALE. Reads 1 once no engine is registered");

/*
 * Stopped, and every job taken completed: a job waiting for its delay_ms
 * is a pending timer that neither flush_workqueue() nor destroy_workqueue()
 * waits for.
 */
static void xol_quiesce(struct xol_dev *xd)
{
	xol_stop(&xd->eng);
	wait_event(xd->idle, xol_idle(xd));
	/* Every job reported: nothing queues it again; it may still be pending. */
	cancel_delayed_work_sync(&xd->reap_work);
}

static void xol_release(struct xo_engine *eng)
{
	complete(&to_xol(eng)->released);
}

static const struct xo_engine_ops xol_ops = {
	.owner = THIS_MODULE,
	.session_create = xol_session_create,
	.session_destroy = xol_session_destroy,
	.submit = xol_submit,
	.release = xol_release,
	.stop = xol_stop,
	.expire = xol_expire,
};

static void xol_free(struct xol_dev *xd)
{
	unsigned int i;

	for (i = 0; i < XOL_SESSIONS; i++)
		xol_session_destroy(&xd->eng, i);
	root_device_unregister(xd->dev);
	kfree(xd);
}

static int xol_key_sizes(unsigned int *sizes)
{
	unsigned int i, bit;

	*sizes = 0;
	for (i = 0; i < nr_keysizes; i++) {
		bit = keysizes[i] % 8 ? 0 : xo_keys_bit(keysizes[i] / 8);
		if (!bit)
			return -EINVAL;
		*sizes |= bit;
	}
	return *sizes ? 0 : -EINVAL;
}

static int xol_add(unsigned int i, unsigned int sizes)
{
	char name[32];
	struct xol_dev *xd;
	int ret;

	if (xol_node[i] != NUMA_NO_NODE &&
	    (xol_node[i] < 0 || xol_node[i] >= MAX_NUMNODES || !node_online(xol_node[i])))
		return -EINVAL;
	xd = kzalloc(sizeof(*xd), GFP_KERNEL);
	if (!xd)
		return -ENOMEM;
	mutex_init(&xd->lock);
	mutex_init(&xd->stop_lock);
	spin_lock_init(&xd->held_lock);
	INIT_LIST_HEAD(&xd->held);
	INIT_LIST_HEAD(&xd->batch);
	INIT_DELAYED_WORK(&xd->batch_work, xol_batch_work);
	INIT_LIST_HEAD(&xd->finished);
	INIT_DELAYED_WORK(&xd->reap_work, xol_reap_work);
	init_completion(&xd->released);
	init_waitqueue_head(&xd->idle);
	if (i)
		snprintf(name, sizeof(name), KBUILD_MODNAME ".%u", i);
	else
		strscpy(name, KBUILD_MODNAME, sizeof(name));
	xd->dev = root_device_register(name);
	if (IS_ERR(xd->dev)) {
		ret = PTR_ERR(xd->dev);
		kfree(xd);
		return ret;
	}
	set_dev_node(xd->dev, xol_node[i]);
	xd->eng.ops = &xol_ops;
	xd->eng.dev = xd->dev;
	xd->eng.caps = (untouched ? XO_CAP_DST_UNTOUCHED_ON_ERROR : 0) |
		       (no_inplace ? 0 : XO_CAP_INPLACE);
	xd->eng.key_sizes = sizes;
	xd->eng.len_align = granularity;
	xd->eng.max_len = max_len;
	xd->eng.max_sg = 256;
	xd->eng.priv_size = priv_size ? priv_size : sizeof(struct xol_job);
	xd->eng.priv_align = priv_align ? priv_align : __alignof__(struct xol_job);
	xd->eng.job_timeout_ms = job_timeout_ms < 0 ? (xol_ccp ? XOL_CCP_JOB_TIMEOUT_MS : 0) :
						      job_timeout_ms;
	if (xol_ccp) {
		xd->eng.len_mask = XOL_CCP_LEN_MASK;
		xd->eng.max_len = min(max_len, XOL_CCP_MAX_LEN);
		xd->eng.priv_size = max_t(unsigned int, xd->eng.priv_size, XOL_CCP_PRIV_SIZE);
		if (!priv_align)
			xd->eng.priv_align = XOL_CCP_PRIV_ALIGN;
	}
	xd->eng.priority = xol_priority[i];
	ret = xo_engine_register(&xd->eng);
	if (ret) {
		/* A timed-out known-answer job may still be pending. */
		xol_quiesce(xd);
		xo_engine_put(&xd->eng);
		wait_for_completion(&xd->released);
		xol_free(xd);
		return ret;
	}
	xd->registered = true;
	xd->debugfs = xo_stats_debugfs_create(&xd->eng);
	debugfs_create_atomic_t("violations", 0444, xd->debugfs, &xd->violations);
	debugfs_create_atomic_t("reordered", 0444, xd->debugfs, &xd->reordered);
	debugfs_create_atomic_t("reaped_inline", 0444, xd->debugfs, &xd->reaped_inline);
	debugfs_create_atomic_t("lost", 0444, xd->debugfs, &xd->lost);
	debugfs_create_atomic_t("expired", 0444, xd->debugfs, &xd->expired);
	debugfs_create_atomic_t("resets", 0444, xd->debugfs, &xd->resets);
	debugfs_create_atomic_t("reset_failed", 0444, xd->debugfs, &xd->reset_failed);
	xol_devs[xol_nr++] = xd;
	return 0;
}

static void xol_remove(struct xol_dev *xd)
{
	/*
	 * Module references keep us loaded while a tfm is bound here, so
	 * only our own reference is left once the engine is unregistered.
	 */
	xol_quiesce(xd);
	/* Before the engine's counters go with its last reference. */
	debugfs_remove_recursive(xd->debugfs);
	xo_engine_put(&xd->eng);
	wait_for_completion(&xd->released);
	xol_free(xd);
}

static void xol_remove_all(void)
{
	kernel_param_lock(THIS_MODULE);
	xol_up = false;
	kernel_param_unlock(THIS_MODULE);
	while (xol_nr)
		xol_remove(xol_devs[--xol_nr]);
}

static int __init xol_init(void)
{
	unsigned int i, sizes;
	int ret;

	if (sysfs_streq(defect, "swap-keys"))
		xol_defect = XOL_SWAP_KEYS;
	else if (sysfs_streq(defect, "tweak-endian"))
		xol_defect = XOL_TWEAK_ENDIAN;
	else if (sysfs_streq(defect, "len-512"))
		xol_defect = XOL_LEN_512;
	else if (sysfs_streq(defect, "cross-page"))
		xol_defect = XOL_CROSS_PAGE;
	else if (!sysfs_streq(defect, "none"))
		return -EINVAL;
	if (sysfs_streq(model, "ccp"))
		xol_ccp = true;
	else if (!sysfs_streq(model, "plain"))
		return -EINVAL;
	if (!xol_count || xol_count > XOL_MAX_ENGINES || xol_key_sizes(&sizes))
		return -EINVAL;
	xol_wq = alloc_workqueue(KBUILD_MODNAME, WQ_MEM_RECLAIM | WQ_UNBOUND, 0);
	if (!xol_wq)
		return -ENOMEM;
	for (i = 0; i < xol_count; i++) {
		ret = xol_add(i, sizes);
		if (ret)
			goto err;
	}
	kernel_param_lock(THIS_MODULE);
	xol_up = true;
	kernel_param_unlock(THIS_MODULE);
	return 0;

err:
	xol_remove_all();
	destroy_workqueue(xol_wq);
	return ret;
}

static void __exit xol_exit(void)
{
	xol_remove_all();
	destroy_workqueue(xol_wq);
}

module_init(xol_init);
module_exit(xol_exit);

MODULE_DESCRIPTION("xts_offload test engine: the kernel's own xts(aes) behind the engine interface, with faults on request");
MODULE_LICENSE("GPL");
