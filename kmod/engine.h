/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The engine interface: what the crypto-API side asks of an accelerator.
 *
 * An engine knows nothing of skcipher requests: it is given a session (a key
 * and a direction, created beforehand in process context), a tweak and a
 * pair of scatterlists, and calls back when done. The crypto-API side knows
 * nothing of virtio. Each accelerator lives in a module of its own
 * (xts_offload_virtio, xts_offload_loopback): it implements struct
 * xo_engine_ops, states what it can do in struct xo_engine, and calls the
 * exported xo_engine_register() from its probe. Registration checks the
 * declaration and runs a known-answer test on the engine first, and
 * refuses an engine that fails either. The core then hands an engine only
 * requests within what it declared; the rest run in software. The
 * engine's counters are shown per device through its driver's dev_groups,
 * or in debugfs for an engine without a driver (see stats.h).
 */
#ifndef XTS_OFFLOAD_ENGINE_H
#define XTS_OFFLOAD_ENGINE_H

#include <linux/atomic.h>
#include <linux/cache.h>
#include <linux/log2.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <crypto/aes.h>
#include <crypto/algapi.h>
#include <crypto/xts.h>

#include "stats.h"

/*
 * Per-request room for an engine's descriptors, without allocating. Each
 * engine declares the bytes it uses (priv_size, at most XO_JOB_PRIV_SIZE)
 * and their alignment (priv_align, a power of two up to
 * XO_JOB_PRIV_ALIGN_MAX); the core reserves that much in every request
 * context, sized for the largest engine registered so far, and points
 * xo_job.priv into it. Keep it small: dm-crypt allocates (and, with
 * init_on_alloc, clears) a request context per sector.
 */
#define XO_JOB_PRIV_SIZE	512U
#define XO_JOB_PRIV_ALIGN_MAX	(ARCH_DMA_MINALIGN > 256 ? ARCH_DMA_MINALIGN : 256)

/*
 * What a buffer the device writes needs so that no CPU write shares its
 * cache line, where DMA is not coherent: the kernel's DMA alignment (a
 * cache line there; 8 bytes on x86, whose DMA is coherent). An engine
 * aligns such a field to it, and declares priv_align accordingly.
 */
#define XO_DMA_ALIGN		ARCH_DMA_MINALIGN

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
 * exactly len bytes; len is a multiple of the engine's len_align, at most
 * its max_len, and a power of two in its len_mask if it has one. src and
 * dst overlap only for an engine with XO_CAP_INPLACE. node is the engine's
 * while the job is in flight, the core's while it waits in the backlog.
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
	unsigned long deadline;		/* jiffies: see job_timeout_ms */
	/*
	 * Called once per job that submit queued, through
	 * xo_engine_complete(), from any context but a hard interrupt: the
	 * engine's tasklet, or a submit call that found other jobs finished.
	 * The core's done only queues the request for its completion worker
	 * (process context), so no caller's callback runs inside a submit
	 * call or under the submitter's locks, and a callback that submits
	 * again re-enters nothing.
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
	/*
	 * The core's too, through xo_engine_complete_bh(): the same, from the
	 * engine's own bottom half, where the core may complete a request
	 * whose callback only ends I/O. NULL: done is called instead.
	 */
	void (*done_bh)(struct xo_job *job, int err);
	/* priv_size bytes for the engine, aligned to its priv_align. */
	void *priv;
};

struct xo_engine_ops {
	/* Process context, may sleep. */
	int (*session_create)(struct xo_engine *eng, const u8 *key,
			      unsigned int keylen, bool encrypt, u64 *session);
	void (*session_destroy)(struct xo_engine *eng, u64 session);
	/*
	 * Any context, called under rcu_read_lock(), sometimes with
	 * interrupts off (the core's backlog lock); must not sleep or
	 * allocate. Returns
	 *   -EINPROGRESS  queued: job->done will be called, possibly before
	 *                 submit returns;
	 *   0             done already, successfully (job->done not called);
	 *   -EINVAL, -EIO done already, failed: as job->done's err;
	 *   -ENOSPC       queue full: the core computes the request in
	 *                 software at once;
	 *   -EBUSY        queue full, and the engine would rather the
	 *                 request waited: one whose caller allows it
	 *                 (CRYPTO_TFM_REQ_MAY_BACKLOG) waits in the core's
	 *                 backlog for the engine, the others run in software.
	 *                 Only while the engine holds jobs it will complete,
	 *                 and it must have room again before it calls
	 *                 xo_engine_complete() for the job that made it:
	 *                 completions are what submit the backlog;
	 *   -ENODEV       engine gone or broken (dst untouched).
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
	/*
	 * Process context (the watchdog, under the registry's lock: no
	 * registering or unregistering here). Complete with -ESTALE every
	 * job in flight whose deadline (job->deadline, jiffies) is before
	 * @now, as the device would if it aborted them; the engine stays
	 * registered. Returns how many. Required with job_timeout_ms.
	 */
	unsigned int (*expire)(struct xo_engine *eng, unsigned long now);
	/* The module the callbacks live in: held while a tfm uses the engine. */
	struct module *owner;
};

/*
 * What an engine guarantees or can do.
 *
 * XO_CAP_DST_UNTOUCHED_ON_ERROR: a request that fails (-EIO) never wrote
 * its destination, so even an in-place request can be recomputed. Without
 * it, an in-place request that failed while being carried out fails with
 * -EIO rather than risk returning wrong data.
 *
 * XO_CAP_INPLACE: the engine takes requests whose destination overlaps
 * their source (dm-crypt's reads, most AF_ALG users). Without it such
 * requests run in software (fallback_inplace) and the engine sees only
 * src and dst that share no byte.
 */
#define XO_CAP_DST_UNTOUCHED_ON_ERROR	BIT(0)
#define XO_CAP_INPLACE			BIT(1)
#define XO_CAPS_KNOWN			(BIT(2) - 1)

/*
 * Key sizes an engine takes (xo_engine.key_sizes), both XTS halves: a key
 * of a size the engine lacks is never sent to it.
 */
#define XO_KEYS_AES128		BIT(0)	/* AES-128-XTS, 32-byte key */
#define XO_KEYS_AES256		BIT(1)	/* AES-256-XTS, 64-byte key */
#define XO_KEYS_KNOWN		(XO_KEYS_AES128 | XO_KEYS_AES256)

/* The largest len_align an engine may declare. */
#define XO_MAX_LEN_ALIGN	65536U

/* The XO_KEYS_* bit of an XTS key of @keylen bytes; 0 for other sizes. */
static inline unsigned int xo_keys_bit(unsigned int keylen)
{
	switch (keylen) {
	case 2 * AES_KEYSIZE_128:
		return XO_KEYS_AES128;
	case 2 * AES_KEYSIZE_256:
		return XO_KEYS_AES256;
	default:
		return 0;
	}
}

/*
 * An engine, as its module declares it before xo_engine_register(). The
 * engine fills in ops, dev and the block "what it takes"; the rest is the
 * registry's.
 *
 * Every request an engine gets is one XTS data unit: the tweak is job->iv,
 * the block index runs from 0 to len / 16 - 1. An engine whose hardware
 * computes fixed data units of N bytes (the tweak advanced per unit) can
 * only take requests of exactly one unit: it declares len_align = max_len
 * = N.
 */
struct xo_engine {
	const struct xo_engine_ops *ops;
	struct device *dev;		/* naming, counters, NUMA node */

	/*
	 * What it takes; registration refuses a declaration out of range.
	 * len_align: request lengths are multiples of it, a power of two from
	 * 16 to XO_MAX_LEN_ALIGN. len_mask: 0, or the lengths it takes are
	 * also powers of two whose bit is set (16 to 4096: 0x1ff0), each a
	 * multiple of len_align and at most max_len. max_sg: at least
	 * XO_JOB_MAX_SG. priv_size: the bytes of xo_job.priv it uses, at most
	 * XO_JOB_PRIV_SIZE; priv_align: their alignment, a power of two up to
	 * XO_JOB_PRIV_ALIGN_MAX (0: 8 bytes).
	 */
	unsigned int caps;		/* XO_CAP_* */
	unsigned int key_sizes;		/* XO_KEYS_*, at least one */
	unsigned int len_align;		/* bytes */
	u64 max_len;			/* largest request in bytes */
	u64 len_mask;			/* 0, or power-of-two lengths taken */
	unsigned int max_sg;		/* scatterlist entries per direction */
	unsigned int priv_size;		/* bytes */
	unsigned int priv_align;	/* bytes, a power of two */
	/*
	 * 0, or a job not completed this many ms after its submission is
	 * aborted through ops->expire (-ESTALE), the engine kept.
	 */
	unsigned int job_timeout_ms;
	int priority;			/* see xo_engine_get_active() */

	/* The registry's. */
	unsigned int room;		/* request-context bytes its priv needs */
	unsigned long job_timeout;	/* jiffies */
	/*
	 * Requests waiting for room (-EBUSY), by xo_job.node, in order;
	 * nr_backlog counts them and the submitters about to add one.
	 */
	spinlock_t backlog_lock;
	struct list_head backlog;
	atomic_t nr_backlog;
	struct kref ref;
	struct list_head node;
	bool dead;			/* unregistered: accept nothing */
	bool paused;			/* xo_engine_pause(): new requests in software */
	/*
	 * Session handles are created and destroyed under session_lock;
	 * session_epoch counts the resets that lost the device's sessions
	 * (xo_engine_sessions_lost()). A binding's handles are destroyed
	 * only in the epoch that created them.
	 */
	struct mutex session_lock;
	u32 session_epoch;
	s64 wd_done;			/* watchdog: completions at the last look */
	unsigned long wd_since;		/* watchdog: jiffies of the last progress */
	atomic_t nr_sessions;		/* held by the crypto-API side */
	struct xo_stats __percpu *stats;
	struct list_head stats_node;	/* counted in the totals: stats.c */
	void *kat_job, *kat_buf;	/* a timed-out known-answer test's */
};

static inline bool xo_engine_takes_key(const struct xo_engine *eng, unsigned int keylen)
{
	return eng->key_sizes & xo_keys_bit(keylen);
}

/* Does the engine take requests of @len bytes (a multiple of 16)? */
static inline bool xo_engine_takes_len(const struct xo_engine *eng, u64 len)
{
	if (len > eng->max_len || (len & (eng->len_align - 1)))
		return false;
	return !eng->len_mask || (is_power_of_2(len) && (eng->len_mask & len));
}

/*
 * Where the core's room for xo_job.priv begins, every engine's: at this
 * alignment. An engine that wants more costs the difference in every
 * request context (see struct xo_engine.room).
 */
#define XO_ROOM_ALIGN		(CRYPTO_MINALIGN < 8 ? CRYPTO_MINALIGN : 8)

/*
 * The room, in request-context bytes, that the largest engine registered
 * so far needs: a tfm reserves that much when it is created. A tfm created
 * before a bigger engine registered sends that engine nothing
 * (fallback_layout).
 */
unsigned int xo_engine_room_max(void);

/*
 * Tests the engine against known answers, then makes it available. On
 * failure the caller still holds one reference: it completes or fails
 * every job the engine was given, then drops it with xo_engine_put().
 */
int xo_engine_register(struct xo_engine *eng);
void xo_engine_unregister(struct xo_engine *eng);
/*
 * A reset that keeps the device (AER, FLR), process context. Pause: new
 * requests run in software, what waits in the backlog too; the engine
 * stays registered and its keys bound. The engine then completes what the
 * device held (-ESTALE) and resets it. Resume: every key bound to the
 * engine gets new sessions on it (ops->session_create; the old ones are
 * destroyed once no job uses them: the engine keeps their handles valid
 * for that, and fails jobs on them with -EINVAL), then requests go to it
 * again. No known-answer test, no key moves to another engine. Returns
 * the number of keys whose sessions were recreated.
 */
void xo_engine_pause(struct xo_engine *eng);
int xo_engine_resume(struct xo_engine *eng);
/*
 * Between pause and resume, for a reset that made the device forget its
 * sessions and that may hand out the same handles again (a virtio reset,
 * most FLRs): the handles created before it are never passed to
 * ops->session_destroy, so that no old binding destroys a new session
 * that happens to get an old handle. Process context; call it once no
 * job uses the old sessions (after the device's jobs are completed).
 */
void xo_engine_sessions_lost(struct xo_engine *eng);
/*
 * The engine a key of @keylen bytes should be bound to now, with a
 * reference on it and on its module; @cur is the engine the key is bound
 * to, or NULL. ERR_PTR(-ENODEV) when no engine is registered,
 * ERR_PTR(-EOPNOTSUPP) when none takes the key size. See engine.c for the
 * order of preference.
 */
struct xo_engine *xo_engine_get_active(unsigned int keylen, struct xo_engine *cur);
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
/* The core: an engine was registered; register the skcipher if not yet. */
void xo_alg_engine_registered(void);
/*
 * The core: @eng takes no more jobs (unregistered, paused): what waits in
 * its backlog runs in software.
 */
void xo_engine_backlog_flush(struct xo_engine *eng);
/* The core: new sessions for every key bound to @eng (xo_engine_resume()). */
int xo_engine_sessions_recreate(struct xo_engine *eng);
/* The core: an engine came or went; every keyed tfm rebinds from a worker. */
void xo_engines_changed(void);
/* One line per registered engine: device and driver names. */
void xo_engines_print(struct seq_file *m);
void xo_engine_complete(struct xo_job *job, int err);
/*
 * As xo_engine_complete(), from the engine's own bottom half: its
 * interrupt's tasklet or softirq (or its threaded interrupt handler), with
 * no lock held that the core or a caller may take; never called by a submit
 * call itself. (That bottom half may run on top of a submit call its
 * interrupt interrupted, as any device's does, and complete that very job
 * before submit returns: the core and its callers allow for that.) There
 * the core completes a decryption that went well at once, without its
 * completion workers' wakeup and context switches.
 */
void xo_engine_complete_bh(struct xo_job *job, int err);
s64 xo_engine_in_flight(struct xo_engine *eng);

#endif /* XTS_OFFLOAD_ENGINE_H */
