// SPDX-License-Identifier: GPL-2.0-only
/*
 * xts_offload_loopback: a software engine, for tests. It registers through
 * the same exported interface a hardware engine's module would, computes
 * every job with the kernel's own xts(aes) from a workqueue, and can be
 * told to behave as a faulty device would:
 *
 *   defect=swap-keys|tweak-endian  compute wrongly (the known-answer test
 *                                  at registration must refuse the engine)
 *   delay_ms=N                     answer N ms late
 *   fail_written=N                 the next N jobs write dst, then fail
 *   untouched=1                    claim XO_CAP_DST_UNTOUCHED_ON_ERROR
 *   hang=1                         stop answering: jobs wait until the
 *                                  watchdog retires the engine
 *
 * It is no accelerator: it exists so the tests reach paths QEMU's device
 * cannot (a wrong result, a failure after dst was written). Its device is
 * a bare root device, with no driver to carry counters in sysfs: they are
 * in debugfs, /sys/kernel/debug/xts_offload/xts_offload_loopback/, from
 * registration to module unload (a retired engine's included).
 */
#include <linux/atomic.h>
#include <linux/bottom_half.h>
#include <linux/debugfs.h>
#include <linux/device.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <crypto/aes.h>
#include <crypto/skcipher.h>

#include "engine.h"

static char *defect = "none";
module_param(defect, charp, 0444);
MODULE_PARM_DESC(defect,
		 "Compute wrongly on purpose: none (default), swap-keys (key halves swapped), tweak-endian (tweak byte order reversed)");

static unsigned int delay_ms;
module_param(delay_ms, uint, 0644);
MODULE_PARM_DESC(delay_ms, "Complete each job this many milliseconds late (default 0)");

static atomic_t fail_written = ATOMIC_INIT(0);
static int fail_written_set(const char *val, const struct kernel_param *kp)
{
	int n, ret = kstrtoint(val, 0, &n);

	if (ret || n < 0)
		return ret ? ret : -EINVAL;
	atomic_set(&fail_written, n);
	return 0;
}

static int fail_written_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&fail_written));
}

static const struct kernel_param_ops fail_written_ops = {
	.set = fail_written_set,
	.get = fail_written_get,
};
module_param_cb(fail_written, &fail_written_ops, NULL, 0644);
MODULE_PARM_DESC(fail_written,
		 "The next N jobs write their result to dst, then fail with -EIO (default 0)");

static bool untouched;
module_param(untouched, bool, 0444);
MODULE_PARM_DESC(untouched,
		 "Claim that a failed job never wrote dst (XO_CAP_DST_UNTOUCHED_ON_ERROR), even when fail_written makes it false (default no)");

static bool hang;
module_param(hang, bool, 0644);
MODULE_PARM_DESC(hang, "Stop answering: new jobs are held until the watchdog retires the engine (default no)");

static int priority = 10;
module_param(priority, int, 0444);
MODULE_PARM_DESC(priority,
		 "Engine priority: new sessions go to the highest (default 10, above virtio-crypto's 0)");

#define XOL_SESSIONS 256

enum xol_defect { XOL_OK, XOL_SWAP_KEYS, XOL_TWEAK_ENDIAN };

struct xol_session {
	struct crypto_sync_skcipher *tfm;
	bool encrypt;
};

struct xol_job {
	struct delayed_work dw;
	struct list_head held;		/* hang: waiting for the watchdog */
	struct xo_job *job;
	u8 iv[XTS_BLOCK_SIZE];
};

static_assert(sizeof(struct xol_job) <= XO_JOB_PRIV_SIZE);

static struct xol_dev {
	struct xo_engine eng;
	struct device *dev;
	struct workqueue_struct *wq;
	enum xol_defect defect;
	struct mutex lock;		/* sessions[] against create/destroy */
	struct xol_session sessions[XOL_SESSIONS];
	struct completion released;
	spinlock_t held_lock;		/* held */
	struct list_head held;
	struct mutex stop_lock;		/* registered */
	bool registered;
	struct dentry *debugfs;		/* the engine's counters */
} xol;

static int xol_session_create(struct xo_engine *eng, const u8 *key, unsigned int keylen,
			      bool encrypt, u64 *session)
{
	u8 k[2 * AES_MAX_KEY_SIZE];
	struct crypto_sync_skcipher *tfm;
	unsigned int i, half = keylen / 2;
	int ret;

	if (keylen > sizeof(k))
		return -EINVAL;
	/* Never an engine-backed xts(aes): the kernel's own software one. */
	tfm = crypto_alloc_sync_skcipher("xts(aes)", 0, CRYPTO_ALG_NEED_FALLBACK);
	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	if (xol.defect == XOL_SWAP_KEYS) {
		memcpy(k, key + half, half);
		memcpy(k + half, key, half);
	} else {
		memcpy(k, key, keylen);
	}
	ret = crypto_sync_skcipher_setkey(tfm, k, keylen);
	memzero_explicit(k, sizeof(k));
	if (ret)
		goto err;
	mutex_lock(&xol.lock);
	for (i = 0; i < XOL_SESSIONS && xol.sessions[i].tfm; i++)
		;
	if (i < XOL_SESSIONS) {
		xol.sessions[i].encrypt = encrypt;
		WRITE_ONCE(xol.sessions[i].tfm, tfm);
		*session = i;
	}
	mutex_unlock(&xol.lock);
	if (i < XOL_SESSIONS)
		return 0;
	ret = -ENOSPC;
err:
	crypto_free_sync_skcipher(tfm);
	return ret;
}

static void xol_session_destroy(struct xo_engine *eng, u64 session)
{
	struct crypto_sync_skcipher *tfm = NULL;

	if (session >= XOL_SESSIONS)
		return;
	mutex_lock(&xol.lock);
	tfm = xol.sessions[session].tfm;
	WRITE_ONCE(xol.sessions[session].tfm, NULL);
	mutex_unlock(&xol.lock);
	/* Jobs compute under the lock: none uses tfm any more. */
	crypto_free_sync_skcipher(tfm);
}

static void xol_work(struct work_struct *work)
{
	struct xol_job *lj = container_of(to_delayed_work(work), struct xol_job, dw);
	struct xo_job *job = lj->job;
	struct xol_session *s;
	int err = -EINVAL;

	mutex_lock(&xol.lock);
	s = job->session < XOL_SESSIONS ? &xol.sessions[job->session] : NULL;
	if (s && s->tfm && s->encrypt == job->encrypt) {
		SYNC_SKCIPHER_REQUEST_ON_STACK(req, s->tfm);

		skcipher_request_set_sync_tfm(req, s->tfm);
		skcipher_request_set_callback(req, 0, NULL, NULL);
		skcipher_request_set_crypt(req, job->src, job->dst, job->len, lj->iv);
		err = job->encrypt ? crypto_skcipher_encrypt(req) : crypto_skcipher_decrypt(req);
		skcipher_request_zero(req);
	}
	mutex_unlock(&xol.lock);
	if (!err && atomic_dec_if_positive(&fail_written) >= 0)
		err = -EIO;
	/* Completions run with bottom halves off, as from a device's tasklet. */
	local_bh_disable();
	xo_engine_complete(job, err);
	local_bh_enable();
}

static int xol_submit(struct xo_engine *eng, struct xo_job *job)
{
	struct xol_job *lj = (struct xol_job *)job->priv;
	unsigned int i;

	if (READ_ONCE(eng->dead))
		return -ENODEV;
	lj->job = job;
	for (i = 0; i < XTS_BLOCK_SIZE; i++)
		lj->iv[i] = xol.defect == XOL_TWEAK_ENDIAN ? job->iv[XTS_BLOCK_SIZE - 1 - i] :
							     job->iv[i];
	if (READ_ONCE(hang)) {
		unsigned long flags;

		spin_lock_irqsave(&xol.held_lock, flags);
		list_add_tail(&lj->held, &xol.held);
		spin_unlock_irqrestore(&xol.held_lock, flags);
		return -EINPROGRESS;
	}
	INIT_DELAYED_WORK(&lj->dw, xol_work);
	queue_delayed_work(xol.wq, &lj->dw, msecs_to_jiffies(READ_ONCE(delay_ms)));
	return -EINPROGRESS;
}

/* Unregister (once), then finish everything: held jobs fail as "unknown". */
static void xol_stop(struct xo_engine *eng)
{
	struct xol_job *lj, *tmp;
	unsigned long flags;
	LIST_HEAD(held);

	mutex_lock(&xol.stop_lock);
	if (xol.registered) {
		xol.registered = false;
		xo_engine_unregister(&xol.eng);
	}
	mutex_unlock(&xol.stop_lock);
	flush_workqueue(xol.wq);
	spin_lock_irqsave(&xol.held_lock, flags);
	list_splice_init(&xol.held, &held);
	spin_unlock_irqrestore(&xol.held_lock, flags);
	local_bh_disable();
	list_for_each_entry_safe(lj, tmp, &held, held) {
		list_del(&lj->held);
		xo_engine_complete(lj->job, -ESTALE);
	}
	local_bh_enable();
}

static void xol_release(struct xo_engine *eng)
{
	complete(&xol.released);
}

static const struct xo_engine_ops xol_ops = {
	.owner = THIS_MODULE,
	.session_create = xol_session_create,
	.session_destroy = xol_session_destroy,
	.submit = xol_submit,
	.release = xol_release,
	.stop = xol_stop,
};

static void xol_free_sessions(void)
{
	unsigned int i;

	for (i = 0; i < XOL_SESSIONS; i++)
		xol_session_destroy(&xol.eng, i);
}

static int __init xol_init(void)
{
	int ret;

	if (sysfs_streq(defect, "swap-keys"))
		xol.defect = XOL_SWAP_KEYS;
	else if (sysfs_streq(defect, "tweak-endian"))
		xol.defect = XOL_TWEAK_ENDIAN;
	else if (!sysfs_streq(defect, "none"))
		return -EINVAL;
	mutex_init(&xol.lock);
	mutex_init(&xol.stop_lock);
	spin_lock_init(&xol.held_lock);
	INIT_LIST_HEAD(&xol.held);
	init_completion(&xol.released);
	xol.dev = root_device_register(KBUILD_MODNAME);
	if (IS_ERR(xol.dev))
		return PTR_ERR(xol.dev);
	xol.wq = alloc_workqueue(KBUILD_MODNAME, WQ_MEM_RECLAIM | WQ_UNBOUND, 0);
	if (!xol.wq) {
		ret = -ENOMEM;
		goto err_dev;
	}
	xol.eng.ops = &xol_ops;
	xol.eng.dev = xol.dev;
	xol.eng.max_keylen = 2 * AES_MAX_KEY_SIZE;
	xol.eng.max_sg = 256;
	xol.eng.max_len = SZ_1M;
	xol.eng.caps = untouched ? XO_CAP_DST_UNTOUCHED_ON_ERROR : 0;
	xol.eng.priority = priority;
	ret = xo_engine_register(&xol.eng);
	if (ret)
		goto err_wq;
	xol.registered = true;
	xol.debugfs = xo_stats_debugfs_create(&xol.eng);
	return 0;

err_wq:
	/* A refused engine's known-answer jobs have all completed. */
	destroy_workqueue(xol.wq);
	xol_free_sessions();
err_dev:
	root_device_unregister(xol.dev);
	return ret;
}

static void __exit xol_exit(void)
{
	/*
	 * Module references keep us loaded while a tfm is bound here, so
	 * only our own reference is left once the engine is unregistered.
	 */
	xol_stop(&xol.eng);
	/* Before the engine's counters go with its last reference. */
	debugfs_remove_recursive(xol.debugfs);
	xo_engine_put(&xol.eng);
	wait_for_completion(&xol.released);
	destroy_workqueue(xol.wq);
	xol_free_sessions();
	root_device_unregister(xol.dev);
}

module_init(xol_init);
module_exit(xol_exit);

MODULE_DESCRIPTION("xts_offload test engine: the kernel's own xts(aes) behind the engine interface, with faults on request");
MODULE_LICENSE("GPL");
