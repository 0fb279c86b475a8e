// SPDX-License-Identifier: GPL-2.0-only
/*
 * Engine registry: which accelerators exist, which one new sessions go to,
 * and the accounting common to all of them.
 */
#include <linux/atomic.h>
#include <linux/cc_platform.h>
#include <linux/completion.h>
#include <linux/device.h>
#include <linux/module.h>
#include <linux/log2.h>
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <linux/scatterlist.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <crypto/aes.h>
#include <crypto/skcipher.h>

#include "engine.h"

static bool allow_confidential;
module_param(allow_confidential, bool, 0444);
MODULE_PARM_DESC(allow_confidential,
		 "Use engines in a confidential guest (SEV, TDX) too, although they hand dm-crypt's keys to the host (default: no)");

static unsigned int watchdog_ms = 30000;
module_param(watchdog_ms, uint, 0644);
MODULE_PARM_DESC(watchdog_ms,
		 "An engine with requests in flight that completes none for this many ms is retired and its requests recomputed in software (default 30000; 0: never)");

static LIST_HEAD(xo_engines);
static DEFINE_MUTEX(xo_engines_lock);

static void xo_watchdog_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(xo_watchdog, xo_watchdog_fn);
/* Requests in flight: look 4 times a second. */
#define XO_WATCHDOG_PERIOD	(HZ / 4)
/*
 * 1 while the watchdog is not queued because no engine had a request in
 * flight: the next submission queues it. Nothing wakes up while idle.
 */
static int xo_wd_idle = 1;

static void xo_watchdog_wake(void)
{
	if (xchg(&xo_wd_idle, 0))
		queue_delayed_work(system_wq, &xo_watchdog, XO_WATCHDOG_PERIOD);
}

/* Are requests in flight in a registered engine? */
static bool xo_engines_busy(void)
{
	struct xo_engine *eng;
	bool busy = false;

	mutex_lock(&xo_engines_lock);
	list_for_each_entry(eng, &xo_engines, node)
		busy |= xo_stats_sum(eng->stats, XO_STAT_IN_FLIGHT) > 0;
	mutex_unlock(&xo_engines_lock);
	return busy;
}

/*
 * A device that stops answering must not hang I/O: an engine with requests
 * in flight that completes none of them for watchdog_ms is stopped; what
 * it held is completed and recomputed in software where that is safe.
 */
static void xo_watchdog_fn(struct work_struct *work)
{
	unsigned long limit = msecs_to_jiffies(READ_ONCE(watchdog_ms));
	struct xo_engine *eng, *stuck = NULL;
	static unsigned long last;
	s64 in_flight = 0;
	bool busy = false, woken;

	mutex_lock(&xo_engines_lock);
	/* Back from idle: time spent idle is no engine's fault. */
	woken = time_after(jiffies, last + 2 * XO_WATCHDOG_PERIOD);
	last = jiffies;
	list_for_each_entry(eng, &xo_engines, node) {
		s64 done = xo_stats_sum(eng->stats, XO_STAT_REQUESTS) +
			   xo_stats_sum(eng->stats, XO_STAT_ERRORS);
		s64 n = xo_stats_sum(eng->stats, XO_STAT_IN_FLIGHT);

		busy |= n > 0;
		if (n > 0 && eng->job_timeout && !READ_ONCE(eng->dead)) {
			unsigned int late = eng->ops->expire(eng, jiffies);

			if (late) {
				xo_stats_add(eng->stats, XO_STAT_TIMEOUTS, late);
				xo_stats_add(xo_total_stats, XO_STAT_TIMEOUTS, late);
				dev_warn_ratelimited(eng->dev,
						     "%u jobs not completed within %u ms aborted\n",
						     late, eng->job_timeout_ms);
				done += late;
			}
		}
		if (woken || n <= 0 || done != eng->wd_done) {
			eng->wd_done = done;
			eng->wd_since = jiffies;
		} else if (limit && eng->ops->stop && !stuck &&
			   time_after(jiffies, eng->wd_since + limit)) {
			stuck = eng;
			in_flight = n;
			kref_get(&eng->ref);
		}
	}
	mutex_unlock(&xo_engines_lock);
	if (stuck) {
		dev_err(stuck->dev,
			"engine completed none of its %lld requests in flight for %u ms: retired, they are recomputed in software\n",
			in_flight, jiffies_to_msecs(limit));
		stuck->ops->stop(stuck);
		xo_engine_put(stuck);
	}
	if (busy) {
		queue_delayed_work(system_wq, &xo_watchdog, XO_WATCHDOG_PERIOD);
		return;
	}
	/*
	 * Idle: sleep until a submission wakes us. A submitter adds to
	 * in_flight, then reads xo_wd_idle; we set it, then read in_flight
	 * (both with a full barrier between): at least one of us sees the
	 * other, so no request is left in flight unwatched.
	 */
	WRITE_ONCE(xo_wd_idle, 1);
	/* Pairs with the one in __xo_engine_submit(). */
	smp_mb();
	if (xo_engines_busy())
		xo_watchdog_wake();
}

void xo_engines_exit(void)
{
	cancel_delayed_work_sync(&xo_watchdog);
}

/*
 * debugfs "engines": one line per registered engine, in registration
 * order: device, driver ("-" for none), then what it declared and the
 * sessions it holds.
 */
void xo_engines_print(struct seq_file *m)
{
	struct xo_engine *eng;
	const char *drv;

	mutex_lock(&xo_engines_lock);
	list_for_each_entry(eng, &xo_engines, node) {
		drv = dev_driver_string(eng->dev);
		seq_printf(m, "%s %s priority=%d node=%d key_bits=%s%s%s len_align=%u max_len=%llu inplace=%d untouched_on_error=%d sessions=%d len_mask=%#llx priv_size=%u priv_align=%u job_timeout_ms=%u paused=%d\n",
			   dev_name(eng->dev), *drv ? drv : "-", eng->priority,
			   dev_to_node(eng->dev),
			   eng->key_sizes & XO_KEYS_AES128 ? "256" : "",
			   eng->key_sizes == XO_KEYS_KNOWN ? "," : "",
			   eng->key_sizes & XO_KEYS_AES256 ? "512" : "",
			   eng->len_align, eng->max_len, !!(eng->caps & XO_CAP_INPLACE),
			   !!(eng->caps & XO_CAP_DST_UNTOUCHED_ON_ERROR),
			   atomic_read(&eng->nr_sessions), eng->len_mask, eng->priv_size,
			   eng->priv_align, eng->job_timeout_ms, READ_ONCE(eng->paused));
	}
	mutex_unlock(&xo_engines_lock);
}

atomic_t xo_engines_gen = ATOMIC_INIT(0);

/* The largest room an engine registered so far needs: it never shrinks. */
static unsigned int xo_room_max;

unsigned int xo_engine_room_max(void)
{
	return READ_ONCE(xo_room_max);
}

static int __xo_engine_submit(struct xo_engine *eng, struct xo_job *job, bool inject);

/*
 * Known answers: a 4 KiB request (eight 512-byte units, so a tweak that
 * restarts per unit shows), encrypted and decrypted out of place and, if
 * the engine takes them, in place, for each key size the engine declares,
 * against the kernel's own software xts(aes). Catches swapped key halves, a
 * wrong tweak byte order or tweak chaining, a wrong direction. An engine
 * whose len_align or max_len rules out 4 KiB gets the length nearest to it
 * that it takes. Then, each with a tweak of its own: a 512-byte request
 * (dm-crypt's sector, testmgr's longest vector) if the engine takes that
 * length, and the 4 KiB request with source and destination crossing a
 * page boundary, the source in two entries (what AF_ALG and testmgr's
 * extra tests send). An engine wrong only for short requests or only
 * across pages is refused too.
 */
#define XO_KAT_LEN	4096
#define XO_KAT_SHORT	512
#define XO_KAT_TIMEOUT	(5 * HZ)

struct xo_kat {
	struct xo_job job;
	struct completion done;
	int err;
	struct scatterlist src[2], dst;
	u8 iv[XTS_BLOCK_SIZE];
	u8 *xsrc, *xdst;		/* page-crossing buffers */
	void *priv;			/* the job's room, aligned as declared */
	u8 room[] __aligned(XO_ROOM_ALIGN);
};

static void xo_kat_done(struct xo_job *job, int err)
{
	struct xo_kat *k = container_of(job, struct xo_kat, job);

	k->err = err;
	complete(&k->done);
}

/*
 * One engine request, the source in two entries if @split (bytes in the
 * first); buffers stay the engine's if it never answers.
 */
static int xo_kat_run(struct xo_engine *eng, struct xo_kat *k, u64 session, bool encrypt,
		      u8 *in, u8 *out, unsigned int len, unsigned int split)
{
	int ret;

	memset(&k->job, 0, sizeof(k->job));
	init_completion(&k->done);
	if (split) {
		sg_init_table(k->src, 2);
		sg_set_buf(&k->src[0], in, split);
		sg_set_buf(&k->src[1], in + split, len - split);
	} else {
		sg_init_one(k->src, in, len);
	}
	sg_init_one(&k->dst, out, len);
	k->job.priv = k->priv;
	k->job.session = session;
	k->job.src = k->src;
	k->job.dst = in == out ? k->src : &k->dst;
	k->job.len = len;
	k->job.encrypt = encrypt;
	k->job.iv = k->iv;
	k->job.done = xo_kat_done;
	rcu_read_lock();
	ret = __xo_engine_submit(eng, &k->job, false);
	rcu_read_unlock();
	if (ret != -EINPROGRESS)
		return ret;
	if (!wait_for_completion_timeout(&k->done, XO_KAT_TIMEOUT))
		return -ETIMEDOUT;
	return k->err;
}

/* The reference: software xts(aes), never an engine-backed driver. */
static int xo_kat_reference(const u8 *key, unsigned int keylen, const u8 *iv, u8 *buf,
			    unsigned int len)
{
	struct crypto_skcipher *tfm;
	struct skcipher_request *req;
	struct scatterlist sg;
	u8 ivcopy[XTS_BLOCK_SIZE];
	DECLARE_CRYPTO_WAIT(wait);
	int ret;

	tfm = crypto_alloc_skcipher("xts(aes)", 0, CRYPTO_ALG_NEED_FALLBACK);
	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	ret = crypto_skcipher_setkey(tfm, key, keylen);
	req = ret ? NULL : skcipher_request_alloc(tfm, GFP_KERNEL);
	if (!ret && !req)
		ret = -ENOMEM;
	if (!ret) {
		memcpy(ivcopy, iv, sizeof(ivcopy));
		sg_init_one(&sg, buf, len);
		skcipher_request_set_callback(req, CRYPTO_TFM_REQ_MAY_SLEEP, crypto_req_done,
					      &wait);
		skcipher_request_set_crypt(req, &sg, &sg, len, ivcopy);
		ret = crypto_wait_req(crypto_skcipher_encrypt(req), &wait);
	}
	skcipher_request_free(req);
	crypto_free_skcipher(tfm);
	return ret;
}

static int xo_engine_kat_keylen(struct xo_engine *eng, struct xo_kat *k, unsigned int keylen,
				u8 *plain, u8 *want, u8 *got, unsigned int len)
{
	u8 key[2 * AES_MAX_KEY_SIZE];
	u64 enc, dec;
	unsigned int i;
	const char *what = NULL;
	int ret;

	/* Halves that differ; every byte of the key and the tweak matters. */
	for (i = 0; i < keylen; i++)
		key[i] = (u8)(0x11 * i + 0x5a + (i >= keylen / 2 ? 0x80 : 0));
	for (i = 0; i < XTS_BLOCK_SIZE; i++)
		k->iv[i] = (u8)(0x9e - 3 * i);
	for (i = 0; i < len; i++)
		plain[i] = (u8)(i * 31 + (i >> 9) + 7);
	memcpy(want, plain, len);
	ret = xo_kat_reference(key, keylen, k->iv, want, len);
	if (ret) {
		dev_err(eng->dev, "known-answer test: no software xts(aes) to compare with: %d\n",
			ret);
		goto out_key;
	}
	ret = eng->ops->session_create(eng, key, keylen, true, &enc);
	if (ret) {
		what = "creating an encryption session";
		goto out_key;
	}
	ret = eng->ops->session_create(eng, key, keylen, false, &dec);
	if (ret) {
		what = "creating a decryption session";
		goto out_enc;
	}
	ret = xo_kat_run(eng, k, enc, true, plain, got, len, 0);
	if (!ret && memcmp(got, want, len))
		what = "encryption, out of place";
	if (!ret && !what && (eng->caps & XO_CAP_INPLACE)) {
		memcpy(got, plain, len);
		ret = xo_kat_run(eng, k, enc, true, got, got, len, 0);
		if (!ret && memcmp(got, want, len))
			what = "encryption, in place";
	}
	if (!ret && !what) {
		ret = xo_kat_run(eng, k, dec, false, want, got, len, 0);
		if (!ret && memcmp(got, plain, len))
			what = "decryption, out of place";
	}
	if (!ret && !what && (eng->caps & XO_CAP_INPLACE)) {
		memcpy(got, want, len);
		ret = xo_kat_run(eng, k, dec, false, got, got, len, 0);
		if (!ret && memcmp(got, plain, len))
			what = "decryption, in place";
	}
	if (!ret && !what && len != XO_KAT_SHORT && xo_engine_takes_len(eng, XO_KAT_SHORT)) {
		k->iv[0] ^= 0x01;
		memcpy(want, plain, XO_KAT_SHORT);
		ret = xo_kat_reference(key, keylen, k->iv, want, XO_KAT_SHORT);
		if (!ret)
			ret = xo_kat_run(eng, k, enc, true, plain, got, XO_KAT_SHORT, 0);
		if (!ret && memcmp(got, want, XO_KAT_SHORT))
			what = "encryption of 512 bytes";
	}
	if (!ret && !what) {
		unsigned int split = len / 2 >= XTS_BLOCK_SIZE ? round_down(len / 2, 16) : 0;

		k->iv[1] ^= 0x01;
		memcpy(want, plain, len);
		memcpy(k->xsrc, plain, len);
		ret = xo_kat_reference(key, keylen, k->iv, want, len);
		if (!ret)
			ret = xo_kat_run(eng, k, enc, true, k->xsrc, k->xdst, len, split);
		if (!ret && memcmp(k->xdst, want, len))
			what = "encryption across a page boundary";
	}
	if (ret == -ETIMEDOUT) {
		/* The engine still owns the buffers: the caller must not free them. */
		dev_err(eng->dev, "known-answer test: the engine did not answer within %d s\n",
			XO_KAT_TIMEOUT / HZ);
		return ret;
	}
	if (ret && !what)
		what = "a request failed";
	eng->ops->session_destroy(eng, dec);
out_enc:
	eng->ops->session_destroy(eng, enc);
out_key:
	memzero_explicit(key, sizeof(key));
	if (what) {
		dev_err(eng->dev, "known-answer test failed for %u-bit keys (%s%s): engine refused\n",
			keylen * 8, what, ret ? "" : ": wrong result");
		return ret ? ret : -EBADMSG;
	}
	return ret;
}

static int xo_engine_kat(struct xo_engine *eng)
{
	static const unsigned int keylens[] = { 2 * AES_KEYSIZE_128, 2 * AES_KEYSIZE_256 };
	/* xo_engine_check() made this at least len_align, at most max_len. */
	unsigned int len = max_t(u64, eng->len_align,
				 round_down(min_t(u64, XO_KAT_LEN, eng->max_len), eng->len_align));
	/* Room for the page-crossing source and destination, each from a page's middle. */
	size_t xlen;
	struct xo_kat *k;
	u8 *buf, *x;
	unsigned int i;
	int ret = 0;

	/* With len_mask: the largest length it takes up to 4 KiB, else its smallest. */
	if (eng->len_mask)
		len = eng->len_mask & (2 * XO_KAT_LEN - 1) ?
		      1U << __fls(eng->len_mask & (2 * XO_KAT_LEN - 1)) :
		      1U << __ffs64(eng->len_mask);
	xlen = PAGE_ALIGN(len) + PAGE_SIZE;
	k = kzalloc(struct_size(k, room, eng->room), GFP_KERNEL);
	buf = kmalloc(3 * len + 2 * xlen + PAGE_SIZE, GFP_KERNEL);
	if (!k || !buf) {
		kfree(k);
		kfree(buf);
		return -ENOMEM;
	}
	k->priv = PTR_ALIGN((void *)k->room, eng->priv_align);
	/* Each starts 16 bytes past a page's middle, so it crosses a boundary. */
	x = PTR_ALIGN(buf + 3 * len, PAGE_SIZE);
	k->xsrc = x + PAGE_SIZE / 2 + XTS_BLOCK_SIZE;
	k->xdst = x + xlen + PAGE_SIZE / 2 + XTS_BLOCK_SIZE;
	for (i = 0; !ret && i < ARRAY_SIZE(keylens); i++)
		if (xo_engine_takes_key(eng, keylens[i]))
			ret = xo_engine_kat_keylen(eng, k, keylens[i], buf, buf + len,
						   buf + 2 * len, len);
	if (ret == -ETIMEDOUT) {
		/*
		 * The engine still holds a job in k and buffers in buf: they
		 * go with the engine's last reference (xo_engine_release()),
		 * which its module drops only once it has completed or failed
		 * every job it was given.
		 */
		eng->kat_job = k;
		eng->kat_buf = buf;
		return ret;
	}
	kfree(k);
	kfree(buf);
	return ret;
}

/* Is what the engine declares in range? */
static int xo_engine_check(struct xo_engine *eng)
{
	const char *what = NULL;

	if (!eng->ops || !eng->ops->session_create || !eng->ops->session_destroy ||
	    !eng->ops->submit || !eng->ops->release)
		what = "an operation is missing";
	else if (eng->caps & ~XO_CAPS_KNOWN)
		what = "unknown capabilities";
	else if (!eng->key_sizes || (eng->key_sizes & ~XO_KEYS_KNOWN))
		what = "no key size, or an unknown one";
	else if (!is_power_of_2(eng->len_align) || eng->len_align < XTS_BLOCK_SIZE ||
		 eng->len_align > XO_MAX_LEN_ALIGN)
		what = "len_align not a power of two from 16 to 65536";
	else if (eng->max_len < eng->len_align)
		what = "max_len below len_align";
	else if (eng->max_sg < XO_JOB_MAX_SG)
		what = "max_sg below XO_JOB_MAX_SG";
	else if (eng->priv_size > XO_JOB_PRIV_SIZE)
		what = "priv_size above XO_JOB_PRIV_SIZE";
	else if (!is_power_of_2(eng->priv_align) || eng->priv_align > XO_JOB_PRIV_ALIGN_MAX)
		what = "priv_align not a power of two up to XO_JOB_PRIV_ALIGN_MAX";
	else if (eng->len_mask & (eng->len_align - 1))
		what = "len_mask has a length below len_align";
	else if (eng->len_mask && BIT_ULL(fls64(eng->len_mask) - 1) > eng->max_len)
		what = "len_mask has a length above max_len";
	else if (eng->job_timeout_ms && !eng->ops->expire)
		what = "job_timeout_ms without ops->expire";
	if (!what)
		return 0;
	dev_err(eng->dev,
		"engine refused: %s (caps %#x, key_sizes %#x, len_align %u, max_len %llu, len_mask %#llx, max_sg %u, priv_size %u of %u, priv_align %u of %u)\n",
		what, eng->caps, eng->key_sizes, eng->len_align, eng->max_len, eng->len_mask,
		eng->max_sg, eng->priv_size, XO_JOB_PRIV_SIZE, eng->priv_align,
		(unsigned int)XO_JOB_PRIV_ALIGN_MAX);
	return -EINVAL;
}

/*
 * On failure the engine is not registered but holds one reference: its
 * module first completes or fails every job it was given (none, unless the
 * known-answer test timed out, -EIO), then drops it with xo_engine_put(),
 * which calls ops->release once nothing else holds the engine.
 */
int xo_engine_register(struct xo_engine *eng)
{
	int ret;

	kref_init(&eng->ref);
	mutex_init(&eng->session_lock);
	eng->session_epoch = 0;
	if (!eng->priv_align)
		eng->priv_align = XO_ROOM_ALIGN;
	eng->stats = NULL;
	eng->kat_job = NULL;
	eng->kat_buf = NULL;
	ret = xo_engine_check(eng);
	if (ret)
		return ret;
	/* The room starts XO_ROOM_ALIGN-aligned: a larger alignment costs the difference. */
	eng->room = eng->priv_size + eng->priv_align - min_t(unsigned int, eng->priv_align,
							      XO_ROOM_ALIGN);
	/*
	 * In a confidential guest the device is the host's: handing it
	 * dm-crypt's keys would defeat the memory encryption.
	 */
	if (cc_platform_has(CC_ATTR_GUEST_MEM_ENCRYPT) && !allow_confidential) {
		dev_warn(eng->dev,
			 "confidential guest: not offloading, the device would see the keys (allow_confidential=1 overrides)\n");
		return -EPERM;
	}
	eng->stats = alloc_percpu(struct xo_stats);
	if (!eng->stats)
		return -ENOMEM;
	xo_stats_track(eng);
	eng->dead = false;
	eng->paused = false;
	eng->job_timeout = msecs_to_jiffies(eng->job_timeout_ms);
	atomic_set(&eng->nr_sessions, 0);
	spin_lock_init(&eng->backlog_lock);
	INIT_LIST_HEAD(&eng->backlog);
	atomic_set(&eng->nr_backlog, 0);

	/* A late completion of a timed-out job still counts: see above. */
	ret = xo_engine_kat(eng);
	if (ret)
		return ret == -ETIMEDOUT ? -EIO : ret;

	eng->wd_done = 0;
	eng->wd_since = jiffies;
	mutex_lock(&xo_engines_lock);
	list_add_tail_rcu(&eng->node, &xo_engines);
	atomic_inc(&xo_engines_gen);
	if (eng->room > xo_room_max)
		WRITE_ONCE(xo_room_max, eng->room);
	mutex_unlock(&xo_engines_lock);
	dev_info(eng->dev, "xts(aes) engine registered (known-answer test passed)\n");
	xo_alg_engine_registered();
	xo_engines_changed();
	return 0;
}
EXPORT_SYMBOL_GPL(xo_engine_register);

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
	/* No submitter adds to the backlog after this: it sees dead. */
	synchronize_rcu();
	xo_engine_backlog_flush(eng);
	xo_engines_changed();
}
EXPORT_SYMBOL_GPL(xo_engine_unregister);

void xo_engine_pause(struct xo_engine *eng)
{
	mutex_lock(&xo_engines_lock);
	WRITE_ONCE(eng->paused, true);
	mutex_unlock(&xo_engines_lock);
	/* No submitter reaches the engine or adds to its backlog after this. */
	synchronize_rcu();
	xo_engine_backlog_flush(eng);
	dev_info(eng->dev, "engine paused: requests run in software\n");
}
EXPORT_SYMBOL_GPL(xo_engine_pause);

int xo_engine_resume(struct xo_engine *eng)
{
	int n = xo_engine_sessions_recreate(eng);

	mutex_lock(&xo_engines_lock);
	WRITE_ONCE(eng->paused, false);
	/* Keys set meanwhile bind now; bound ones stay where they are. */
	atomic_inc(&xo_engines_gen);
	mutex_unlock(&xo_engines_lock);
	xo_engines_changed();
	dev_info(eng->dev, "engine resumed: sessions of %d keys recreated\n", n);
	return n;
}
EXPORT_SYMBOL_GPL(xo_engine_resume);

void xo_engine_sessions_lost(struct xo_engine *eng)
{
	/* A create or destroy in progress ends first, in the old epoch. */
	mutex_lock(&eng->session_lock);
	eng->session_epoch++;
	mutex_unlock(&eng->session_lock);
}
EXPORT_SYMBOL_GPL(xo_engine_sessions_lost);

/* Near the CPU that binds: on its NUMA node, or on none in particular. */
static bool xo_engine_near(struct xo_engine *eng, int node)
{
	int n = dev_to_node(eng->dev);

	return n == NUMA_NO_NODE || n == node;
}

/* a before b regardless of load: priority, then nearness. */
static int xo_engine_rank(struct xo_engine *a, struct xo_engine *b, int node)
{
	if (a->priority != b->priority)
		return a->priority > b->priority ? 1 : -1;
	return (int)xo_engine_near(a, node) - (int)xo_engine_near(b, node);
}

/*
 * The engine a key of @keylen bytes should be bound to, bound to @cur now
 * (or NULL). Among the registered engines that take the key size:
 *  1. the highest priority;
 *  2. among equals, one whose device is on the NUMA node of the CPU that
 *     runs this (the binding worker runs on the CPU whose request queued
 *     it), or on no node in particular (NUMA_NO_NODE), before one on
 *     another node;
 *  3. among equals, @cur if it is one of them: a binding does not move for
 *     load alone;
 *  4. else the least loaded: fewest device sessions held (two per bound
 *     key), then the first registered.
 * Returns it with a reference on it and on its module; ERR_PTR(-ENODEV)
 * when no engine is registered (or its module is going away),
 * ERR_PTR(-EOPNOTSUPP) when none takes the key size.
 */
struct xo_engine *xo_engine_get_active(unsigned int keylen, struct xo_engine *cur)
{
	struct xo_engine *eng, *best = NULL;
	bool any = false;
	int node = numa_node_id();
	int r;

	mutex_lock(&xo_engines_lock);
	list_for_each_entry(eng, &xo_engines, node) {
		any = true;
		/* A paused engine keeps its keys, but takes no new one. */
		if (!xo_engine_takes_key(eng, keylen) || (READ_ONCE(eng->paused) && eng != cur))
			continue;
		r = best ? xo_engine_rank(eng, best, node) : 1;
		if (r > 0 || (r == 0 && best != cur &&
			      (eng == cur || atomic_read(&eng->nr_sessions) <
					     atomic_read(&best->nr_sessions))))
			best = eng;
	}
	if (best && try_module_get(best->ops->owner))
		kref_get(&best->ref);
	else
		best = ERR_PTR(best || !any ? -ENODEV : -EOPNOTSUPP);
	mutex_unlock(&xo_engines_lock);
	return best;
}

static void xo_engine_release(struct kref *ref)
{
	struct xo_engine *eng = container_of(ref, struct xo_engine, ref);

	if (eng->stats) {
		xo_stats_untrack(eng, true);
		free_percpu(eng->stats);
	}
	kfree(eng->kat_job);
	kfree(eng->kat_buf);
	eng->ops->release(eng);
}

void xo_engine_put(struct xo_engine *eng)
{
	kref_put(&eng->ref, xo_engine_release);
}
EXPORT_SYMBOL_GPL(xo_engine_put);

void xo_engine_put_active(struct xo_engine *eng)
{
	struct module *owner = eng->ops->owner;

	kref_put(&eng->ref, xo_engine_release);
	module_put(owner);
}

static void xo_engine_account(struct xo_engine *eng, unsigned int len,
			      int err)
{
	/* Per engine only: the totals add the engines up when read. */
	if (err) {
		xo_stats_add(eng->stats, XO_STAT_ERRORS, 1);
	} else {
		xo_stats_add(eng->stats, XO_STAT_REQUESTS, 1);
		xo_stats_add(eng->stats, XO_STAT_BYTES, len);
	}
}

/* See xo_engine_ops.submit for the return values. */
static int __xo_engine_submit(struct xo_engine *eng, struct xo_job *job, bool inject)
{
	unsigned int len = job->len;
	int ret;

	job->engine = eng;
	job->deadline = jiffies + eng->job_timeout;
	if (inject && unlikely(atomic_read(&xo_inject_errors) > 0) &&
	    atomic_dec_if_positive(&xo_inject_errors) >= 0)
		job->session = XO_SESSION_INVALID;

	xo_stats_add(eng->stats, XO_STAT_IN_FLIGHT, 1);
	/* Pairs with xo_watchdog_fn()'s barrier: see there. */
	smp_mb();
	if (unlikely(READ_ONCE(xo_wd_idle)))
		xo_watchdog_wake();
	/* Once queued, job may be completed and freed: don't touch it. */
	ret = eng->ops->submit(eng, job);
	if (ret == -EINPROGRESS)
		return ret;
	xo_stats_add(eng->stats, XO_STAT_IN_FLIGHT, -1);
	if (ret == 0 || ret == -EIO || ret == -EINVAL)
		xo_engine_account(eng, len, ret);
	return ret;
}

int xo_engine_submit(struct xo_engine *eng, struct xo_job *job)
{
	return __xo_engine_submit(eng, job, true);
}

/*
 * Jobs submitted to @eng and not completed yet. Exact once no submitter can
 * reach the engine (after xo_engine_unregister()).
 */
s64 xo_engine_in_flight(struct xo_engine *eng)
{
	return xo_stats_sum(eng->stats, XO_STAT_IN_FLIGHT);
}
EXPORT_SYMBOL_GPL(xo_engine_in_flight);

/* A job the engine submitted is done: out of flight, into the counters. */
static void xo_engine_job_left(struct xo_job *job, int err)
{
	struct xo_engine *eng = job->engine;

	xo_stats_add(eng->stats, XO_STAT_IN_FLIGHT, -1);
	xo_stats_add(eng->stats, XO_STAT_ASYNC, 1);
	xo_engine_account(eng, job->len, err);
}

void xo_engine_complete(struct xo_job *job, int err)
{
	xo_engine_job_left(job, err);
	job->done(job, err);
}
EXPORT_SYMBOL_GPL(xo_engine_complete);

void xo_engine_complete_bh(struct xo_job *job, int err)
{
	xo_engine_job_left(job, err);
	(job->done_bh ?: job->done)(job, err);
}
EXPORT_SYMBOL_GPL(xo_engine_complete_bh);
