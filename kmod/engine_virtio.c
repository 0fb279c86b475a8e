// SPDX-License-Identifier: GPL-2.0-only
/*
 * xts_offload_virtio: the engine for virtio-crypto devices (VIRTIO 1.2,
 * device ID 20), a module of its own on top of xts_offload's engine
 * interface. Its driver keeps the name "xts_offload"
 * (/sys/bus/virtio/drivers/xts_offload).
 *
 * AES-XTS cipher sessions are created on the control queue. Each CPU submits
 * to the data queues assigned to it, whose interrupts are steered to it
 * (xov_map_queues()), and requests complete from the virtqueue callback.
 * Data queues are created with a per-buffer context, which keeps the ring
 * from using indirect descriptors: a request then needs no allocation, and
 * a full ring is reported as -ENOSPC so the caller can spill over to
 * software.
 *
 * The in-kernel virtio_crypto driver matches the same devices; keep it off
 * them (see Documentation/xts-offload.md).
 */
#include <linux/bottom_half.h>
#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/interrupt.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/virtio.h>
#include <linux/virtio_config.h>
#include <uapi/linux/virtio_crypto.h>
#include <uapi/linux/virtio_ids.h>
#include <crypto/aes.h>

#include "compat.h"
#include "engine.h"

#define XOV_CTRL_TIMEOUT	(5 * HZ)
/* How long a stopping engine waits for the device to finish what it took. */
#define XOV_QUIESCE_TIMEOUT	(5 * HZ)
#define XOV_MAX_DATAQ		(XO_MAX_VQS - 1)
/* Entries per direction: a 1 MiB request in 4 KiB pages. */
#define XOV_MAX_SG		256U

/*
 * Per-request descriptors, in xo_job.priv. The request header and the IV
 * are contiguous so they take one descriptor: VIRTIO 1.x devices may not
 * assume any descriptor layout. The status byte is the only one the
 * device writes: it comes last, alone in its XO_DMA_ALIGN block (the
 * structure's size is a multiple of its alignment), so that no CPU write
 * to the fields before it shares its cache line where DMA is not
 * coherent.
 */
struct xov_job {
	struct {
		struct virtio_crypto_op_data_req hdr;
		u8 iv[XTS_BLOCK_SIZE];
	} __packed out;
	struct scatterlist out_sg;
	struct scatterlist status_sg;
	/* What the device writes. */
	struct {
		u8 status;
	} __aligned(XO_DMA_ALIGN) in;
};

static_assert(sizeof(struct xov_job) <= XO_JOB_PRIV_SIZE);

struct xov_dataq {
	spinlock_t lock;	/* ring, done, gone, submitted, job flags */
	struct virtqueue *vq;
	bool gone;		/* drained for removal: leave vq alone */
	struct list_head done;	/* taken off the ring, to complete */
	struct tasklet_struct tasklet;
	u64 submitted;
	char name[16];
} ____cacheline_aligned_in_smp;

/* A CPU with several data queues walks them in turn. */
static DEFINE_PER_CPU(unsigned int, xov_next_dataq);

/*
 * A CPU's data queues: first, first + stride, ... (count of them). See
 * xov_map_queues().
 */
struct xov_cpu_queues {
	u16 first;
	u16 count;
	u16 stride;
};

static int xov_priority;
module_param_named(priority, xov_priority, int, 0444);
MODULE_PARM_DESC(priority,
		 "Priority of virtio-crypto engines: new keys go to the engine with the highest (default 0; the loopback test engine's default is 10)");

struct xov_dev {
	struct xo_engine eng;
	struct virtio_device *vdev;

	struct mutex ctrl_lock;	/* one control request at a time */
	struct virtqueue *ctrlq;
	struct completion ctrl_done;
	struct virtio_crypto_op_ctrl_req ctrl;
	struct virtio_crypto_session_input input;
	u8 ctrl_status;
	bool ctrl_stuck;	/* a control request timed out */
	bool ctrl_down;		/* suspended: no control queue until restore */
	u8 ctrl_key[2 * AES_MAX_KEY_SIZE];

	struct dentry *debugfs;	/* xts_offload/<device>/ in debugfs */
	/*
	 * Stopping: removal, suspend, or the device asking for a reset. Under
	 * stop_lock; retire_work stops it from the config-change interrupt.
	 */
	struct mutex stop_lock;
	bool stopped;
	bool suspended;		/* frozen with the engine paused: no queues */
	bool stuck;		/* stopped by the watchdog: taken jobs may be half done */
	struct work_struct retire_work;
	struct xov_cpu_queues *cpu_queues;	/* [nr_cpu_ids] */
	unsigned int nr_dataq;
	struct xov_dataq dataq[];
};

static bool xov_cpu_has_queue(const struct xov_cpu_queues *cq, unsigned int q)
{
	return q >= cq->first && (q - cq->first) % cq->stride == 0 &&
	       (q - cq->first) / cq->stride < cq->count;
}

static struct xov_dev *to_xov(struct xo_engine *eng)
{
	return container_of(eng, struct xov_dev, eng);
}

static void xov_ctrl_cb(struct virtqueue *vq)
{
	struct xov_dev *xd = vq->vdev->priv;

	complete(&xd->ctrl_done);
}

/* Send xd->ctrl plus an optional payload and wait for the device's answer. */
static int xov_ctrl_exec(struct xov_dev *xd, const void *payload,
			 unsigned int plen, void *in, unsigned int inlen)
{
	struct scatterlist hdr_sg, payload_sg, in_sg;
	struct scatterlist *sgs[3];
	unsigned int nout = 0, len;
	int ret;

	lockdep_assert_held(&xd->ctrl_lock);
	if (READ_ONCE(xd->eng.dead) || xd->ctrl_down)
		return -ENODEV;
	if (xd->ctrl_stuck)
		return -EIO;

	sg_init_one(&hdr_sg, &xd->ctrl, sizeof(xd->ctrl));
	sgs[nout++] = &hdr_sg;
	if (plen) {
		sg_init_one(&payload_sg, payload, plen);
		sgs[nout++] = &payload_sg;
	}
	sg_init_one(&in_sg, in, inlen);
	sgs[nout] = &in_sg;

	reinit_completion(&xd->ctrl_done);
	ret = virtqueue_add_sgs(xd->ctrlq, sgs, nout, 1, xd, GFP_KERNEL);
	if (ret)
		return ret;
	virtqueue_kick(xd->ctrlq);

	if (!wait_for_completion_timeout(&xd->ctrl_done, XOV_CTRL_TIMEOUT)) {
		/*
		 * The device still owns the buffer: no more control requests
		 * (so no new sessions: new keys run in software), but the data
		 * queues and the sessions they use go on working.
		 */
		dev_err(&xd->vdev->dev,
			"control request timed out: no new sessions on this device\n");
		xd->ctrl_stuck = true;
		return -ETIMEDOUT;
	}
	if (!virtqueue_get_buf(xd->ctrlq, &len))
		return -EIO;
	return 0;
}

static int xov_session_create(struct xo_engine *eng, const u8 *key,
			      unsigned int keylen, bool encrypt, u64 *session)
{
	struct xov_dev *xd = to_xov(eng);
	struct virtio_crypto_cipher_session_para *para;
	u32 status;
	int ret;

	if (keylen > sizeof(xd->ctrl_key))
		return -EINVAL;

	mutex_lock(&xd->ctrl_lock);
	memset(&xd->ctrl, 0, sizeof(xd->ctrl));
	xd->ctrl.header.opcode = cpu_to_le32(VIRTIO_CRYPTO_CIPHER_CREATE_SESSION);
	xd->ctrl.header.algo = cpu_to_le32(VIRTIO_CRYPTO_CIPHER_AES_XTS);
	xd->ctrl.u.sym_create_session.op_type =
		cpu_to_le32(VIRTIO_CRYPTO_SYM_OP_CIPHER);
	para = &xd->ctrl.u.sym_create_session.u.cipher.para;
	para->algo = cpu_to_le32(VIRTIO_CRYPTO_CIPHER_AES_XTS);
	para->keylen = cpu_to_le32(keylen);
	para->op = cpu_to_le32(encrypt ? VIRTIO_CRYPTO_OP_ENCRYPT :
					 VIRTIO_CRYPTO_OP_DECRYPT);
	memcpy(xd->ctrl_key, key, keylen);
	memset(&xd->input, 0, sizeof(xd->input));
	xd->input.status = cpu_to_le32(VIRTIO_CRYPTO_ERR);

	ret = xov_ctrl_exec(xd, xd->ctrl_key, keylen, &xd->input,
			    sizeof(xd->input));
	memzero_explicit(xd->ctrl_key, sizeof(xd->ctrl_key));
	if (!ret) {
		status = le32_to_cpu(xd->input.status);
		if (status == VIRTIO_CRYPTO_OK)
			*session = le64_to_cpu(xd->input.session_id);
		else
			ret = status == VIRTIO_CRYPTO_NOSPC ? -ENOSPC : -EIO;
	}
	mutex_unlock(&xd->ctrl_lock);
	return ret;
}

static void xov_session_destroy(struct xo_engine *eng, u64 session)
{
	struct xov_dev *xd = to_xov(eng);
	int ret;

	mutex_lock(&xd->ctrl_lock);
	memset(&xd->ctrl, 0, sizeof(xd->ctrl));
	xd->ctrl.header.opcode = cpu_to_le32(VIRTIO_CRYPTO_CIPHER_DESTROY_SESSION);
	xd->ctrl.header.algo = cpu_to_le32(VIRTIO_CRYPTO_CIPHER_AES_XTS);
	xd->ctrl.u.destroy_session.session_id = cpu_to_le64(session);
	xd->ctrl_status = VIRTIO_CRYPTO_ERR;
	ret = xov_ctrl_exec(xd, NULL, 0, &xd->ctrl_status,
			    sizeof(xd->ctrl_status));
	if (!ret && xd->ctrl_status != VIRTIO_CRYPTO_OK)
		dev_warn(&xd->vdev->dev, "destroying session %llu failed: %u\n",
			 session, xd->ctrl_status);
	mutex_unlock(&xd->ctrl_lock);
}

static struct xov_job *xov_job_of(struct xo_job *job)
{
	return job->priv;
}

/*
 * A request the device refused (bad session, bad message, not supported)
 * was not carried out: -EINVAL, recomputable. Any other failure may have
 * come after the device wrote dst (the virtio spec promises nothing else):
 * -EIO.
 */
static int xov_job_status(struct xo_job *job)
{
	switch (xov_job_of(job)->in.status) {
	case VIRTIO_CRYPTO_OK:
		return 0;
	case VIRTIO_CRYPTO_INVSESS:
	case VIRTIO_CRYPTO_BADMSG:
	case VIRTIO_CRYPTO_NOTSUPP:
		return -EINVAL;
	default:
		return -EIO;
	}
}

/* Under dq->lock: take what the device finished off the ring, to dq->done. */
static void xov_collect(struct xov_dataq *dq)
{
	struct xo_job *job;
	unsigned int len;

	lockdep_assert_held(&dq->lock);
	if (dq->gone)
		return;
	do {
		virtqueue_disable_cb(dq->vq);
		while ((job = virtqueue_get_buf(dq->vq, &len)))
			list_add_tail(&job->node, &dq->done);
	} while (!virtqueue_enable_cb(dq->vq));
}

/* @bh: from the tasklet, not inside a submit call (xo_engine_complete_bh()). */
static void xov_complete_list(struct list_head *done, bool bh)
{
	struct xo_job *job, *tmp;

	list_for_each_entry_safe(job, tmp, done, node) {
		list_del(&job->node);
		if (bh)
			xo_engine_complete_bh(job, xov_job_status(job));
		else
			xo_engine_complete(job, xov_job_status(job));
	}
}

/*
 * The interrupt's completions, in softirq context: handed to the core,
 * which completes decryptions here and runs the other callbacks from its
 * completion workers.
 */
static void xov_dataq_tasklet(struct tasklet_struct *t)
{
	struct xov_dataq *dq = from_tasklet(dq, t, tasklet);
	unsigned long flags;
	LIST_HEAD(done);

	spin_lock_irqsave(&dq->lock, flags);
	xov_collect(dq);
	list_splice_init(&dq->done, &done);
	spin_unlock_irqrestore(&dq->lock, flags);

	xov_complete_list(&done, true);
}

static void xov_dataq_cb(struct virtqueue *vq)
{
	struct xov_dev *xd = vq->vdev->priv;

	/* Need not be serialized with other ring operations. */
	virtqueue_disable_cb(vq);
	tasklet_schedule(&xd->dataq[vq->index].tasklet);
}

/*
 * sg_init_one(), with the entry cleared inline: sg_init_table() calls the
 * out-of-line memset, which for 32 bytes costs more than the rest of it
 * (with ERMS a rep stosb per byte), twice per request.
 */
static __always_inline void xov_sg_one(struct scatterlist *sg, void *buf,
				       unsigned int len)
{
	*sg = (struct scatterlist){};
	sg_init_marker(sg, 1);
	sg_set_buf(sg, buf, len);
}

/*
 * The submitting CPU's queue. Preemption may move the caller to another
 * CPU meanwhile: harmless, the queue lock serializes, the CPU only picks.
 */
static struct xov_dataq *xov_pick_queue(struct xov_dev *xd)
{
	const struct xov_cpu_queues *cq = &xd->cpu_queues[raw_smp_processor_id()];
	unsigned int k = 0;

	if (cq->count > 1)
		k = this_cpu_inc_return(xov_next_dataq) % cq->count;
	return &xd->dataq[cq->first + k * cq->stride];
}

static int xov_submit(struct xo_engine *eng, struct xo_job *job)
{
	struct xov_dev *xd = to_xov(eng);
	struct xov_job *vj = job->priv;
	struct virtio_crypto_cipher_para *para;
	struct scatterlist *sgs[4];
	struct xov_dataq *dq;
	unsigned long flags;
	unsigned int descs;
	bool notify;
	int ret;

	memset(&vj->out.hdr, 0, sizeof(vj->out.hdr));
	vj->out.hdr.header.opcode = cpu_to_le32(job->encrypt ?
						VIRTIO_CRYPTO_CIPHER_ENCRYPT :
						VIRTIO_CRYPTO_CIPHER_DECRYPT);
	vj->out.hdr.header.algo = cpu_to_le32(VIRTIO_CRYPTO_CIPHER_AES_XTS);
	vj->out.hdr.header.session_id = cpu_to_le64(job->session);
	vj->out.hdr.u.sym_req.op_type = cpu_to_le32(VIRTIO_CRYPTO_SYM_OP_CIPHER);
	para = &vj->out.hdr.u.sym_req.u.cipher.para;
	para->iv_len = cpu_to_le32(XTS_BLOCK_SIZE);
	para->src_data_len = cpu_to_le32(job->len);
	para->dst_data_len = cpu_to_le32(job->len);
	memcpy(vj->out.iv, job->iv, XTS_BLOCK_SIZE);
	vj->in.status = VIRTIO_CRYPTO_ERR;

	xov_sg_one(&vj->out_sg, &vj->out, sizeof(vj->out));
	xov_sg_one(&vj->status_sg, &vj->in.status, sizeof(vj->in.status));
	sgs[0] = &vj->out_sg;
	sgs[1] = job->src;
	sgs[2] = job->dst;
	sgs[3] = &vj->status_sg;	/* the device writes status after dst */

	/* Without indirect descriptors a request takes one per entry. */
	descs = 2 + sg_nents(job->src) + sg_nents(job->dst);
	dq = xov_pick_queue(xd);
	spin_lock_irqsave(&dq->lock, flags);
	if (READ_ONCE(eng->dead) || dq->gone) {
		ret = -ENODEV;
		goto unlock;
	}
	/*
	 * A full ring: spill over to software here. virtqueue_add_sgs() would
	 * say -ENOSPC too, but only after notifying the device, one exit per
	 * spilled request.
	 */
	if (dq->vq->num_free < descs) {
		ret = -ENOSPC;
		goto unlock;
	}
	ret = virtqueue_add_sgs(dq->vq, sgs, 2, 2, job, GFP_ATOMIC);
	if (ret) {
		/* -ENOSPC: ring full; -EIO: ring broken, i.e. device gone. */
		if (ret != -ENOSPC)
			ret = -ENODEV;
		goto unlock;
	}
	dq->submitted++;
	notify = virtqueue_kick_prepare(dq->vq);
	spin_unlock_irqrestore(&dq->lock, flags);
	if (notify)
		virtqueue_notify(dq->vq);
	/*
	 * Always asynchronous: the job completes from the tasklet, which the
	 * interrupt schedules, and a submitter takes nothing off the ring. A
	 * submitter that did (its own job, if the device was done by the time
	 * the notify returned, and the others it found) cost every submit a
	 * second round on the queue lock, and sent the others through the
	 * completion workers, decryptions included, where the tasklet
	 * completes those in the bottom half (see "The submitter takes nothing
	 * off the ring" in Documentation/xts-offload.md).
	 */
	return -EINPROGRESS;

unlock:
	spin_unlock_irqrestore(&dq->lock, flags);
	return ret;
}

/*
 * Before the reset, after unregistering (no submitter reaches the queues
 * any more): let the device finish the jobs it holds, for at most
 * XOV_QUIESCE_TIMEOUT, as they complete normally. Not for a device that
 * stopped answering (the watchdog) or vanished (a broken ring).
 */
static void xov_quiesce(struct xov_dev *xd)
{
	unsigned long end = jiffies + XOV_QUIESCE_TIMEOUT;

	if (READ_ONCE(xd->stuck))
		return;
	while (xo_engine_in_flight(&xd->eng) > 0 && time_before(jiffies, end) &&
	       !(xd->nr_dataq && virtqueue_is_broken(xd->dataq[0].vq)))
		msleep(20);
}

/*
 * After reset: what the device completed keeps its result. What is still
 * on the rings the device may have begun: the virtio spec does not say a
 * reset leaves a taken buffer unwritten. Those fail with -ESTALE, "dst may
 * have been written", which the caller recomputes only when dst does not
 * overlap src (an in-place one fails with -EIO). xov_quiesce() made them
 * rare: only a device slower than its timeout, or one that vanished.
 */
static void xov_drain(struct xov_dev *xd)
{
	struct xo_job *job;
	unsigned long flags;
	unsigned int i;
	LIST_HEAD(done);
	LIST_HEAD(lost);

	for (i = 0; i < xd->nr_dataq; i++) {
		struct xov_dataq *dq = &xd->dataq[i];

		spin_lock_irqsave(&dq->lock, flags);
		xov_collect(dq);
		list_splice_tail_init(&dq->done, &done);
		while ((job = virtqueue_detach_unused_buf(dq->vq)))
			list_add_tail(&job->node, &lost);
		dq->gone = true;
		spin_unlock_irqrestore(&dq->lock, flags);
	}
	/* As from the tasklet. */
	local_bh_disable();
	xov_complete_list(&done, false);
	while ((job = list_first_entry_or_null(&lost, struct xo_job, node))) {
		list_del(&job->node);
		xo_engine_complete(job, -ESTALE);
	}
	local_bh_enable();
}

/* One line per data queue: its name, its submissions, its CPUs. */
static int xov_queues_show(struct seq_file *m, void *unused)
{
	struct xov_dev *xd = m->private;
	unsigned int i, cpu;
	const char *sep;
	u64 n;

	for (i = 0; i < xd->nr_dataq; i++) {
		spin_lock_irq(&xd->dataq[i].lock);
		n = xd->dataq[i].submitted;
		spin_unlock_irq(&xd->dataq[i].lock);
		seq_printf(m, "%s %llu cpus ", xd->dataq[i].name, n);
		sep = "";
		for_each_possible_cpu(cpu) {
			if (xov_cpu_has_queue(&xd->cpu_queues[cpu], i)) {
				seq_printf(m, "%s%u", sep, cpu);
				sep = ",";
			}
		}
		seq_putc(m, '\n');
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(xov_queues);

static void xov_release(struct xo_engine *eng)
{
	kfree(to_xov(eng)->cpu_queues);
	kfree(to_xov(eng));
}

/*
 * Reset the device and give up its queues: what it completed keeps its
 * result, what it still held fails back to the caller (xov_drain()), the
 * control queue refuses requests until a restore. No job may be submitted
 * any more (the engine is unregistered or paused).
 */
static void xov_queues_down(struct xov_dev *xd)
{
	struct virtio_device *vdev = xd->vdev;
	unsigned int i;

	/* Let a control request in progress finish or time out. */
	mutex_lock(&xd->ctrl_lock);
	virtio_reset_device(vdev);
	xd->ctrl_down = true;
	mutex_unlock(&xd->ctrl_lock);

	xov_drain(xd);
	for (i = 0; i < xd->nr_dataq; i++)
		virtqueue_set_affinity(xd->dataq[i].vq, NULL);
	vdev->config->del_vqs(vdev);
	/* No callback can schedule them any more. */
	for (i = 0; i < xd->nr_dataq; i++)
		tasklet_kill(&xd->dataq[i].tasklet);
}

/*
 * Stop using the device: no new sessions or submissions, the device reset,
 * what it holds completed or failed back to the caller (who recomputes it
 * in software), the queues deleted. Idempotent.
 */
static void xov_stop(struct xov_dev *xd)
{
	mutex_lock(&xd->stop_lock);
	if (xd->stopped)
		goto out;
	xd->stopped = true;
	debugfs_remove_recursive(xd->debugfs);
	xd->debugfs = NULL;
	/* No new sessions or submissions from here on. */
	xo_engine_unregister(&xd->eng);
	/* Frozen: the device is reset and its queues deleted already. */
	if (xd->suspended)
		goto out;
	xov_quiesce(xd);
	xov_queues_down(xd);
out:
	mutex_unlock(&xd->stop_lock);
}

/* The device needs a reset or is no longer ready: retire the engine. */
static void xov_retire_work(struct work_struct *work)
{
	struct xov_dev *xd = container_of(work, struct xov_dev, retire_work);

	dev_err(&xd->vdev->dev,
		"device needs a reset or is not ready: engine retired, requests run in software\n");
	xov_stop(xd);
}

/* The watchdog: the device stopped answering. */
static void xov_stuck(struct xo_engine *eng)
{
	struct xov_dev *xd = to_xov(eng);

	WRITE_ONCE(xd->stuck, true);
	xov_stop(xd);
}

static const struct xo_engine_ops xov_ops = {
	.owner = THIS_MODULE,
	.session_create = xov_session_create,
	.session_destroy = xov_session_destroy,
	.submit = xov_submit,
	.release = xov_release,
	.stop = xov_stuck,
};

/*
 * Assign the data queues to CPUs and steer each queue's interrupt to its
 * CPUs, so that a request is submitted and completed on the CPU that made
 * it, without sharing a queue lock with other CPUs. The possible CPUs, in
 * order, i = 0 .. C - 1, and the queues q = 0 .. Q - 1:
 *  - Q >= C: queue q belongs to CPU q mod C; a CPU with several walks them
 *    in turn, so every queue is used;
 *  - Q < C: CPU i uses queue i * Q / C: each queue serves a run of
 *    consecutive CPUs (often siblings).
 * The interrupts are not managed (as in the in-kernel virtio_crypto and
 * virtio_net): when a queue's CPUs go offline its interrupt moves to another
 * CPU instead of being shut down with requests in flight. With one
 * interrupt for all queues (QEMU's default, vectors=2) the steering does
 * nothing useful, the assignment still keeps CPUs off each other's locks.
 */
static int xov_map_queues(struct xov_dev *xd)
{
	unsigned int nr_cpus = num_possible_cpus(), q, i = 0, cpu;
	cpumask_var_t mask;

	xd->cpu_queues = kcalloc(nr_cpu_ids, sizeof(*xd->cpu_queues), GFP_KERNEL);
	if (!xd->cpu_queues || !zalloc_cpumask_var(&mask, GFP_KERNEL))
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		struct xov_cpu_queues *cq = &xd->cpu_queues[cpu];

		if (xd->nr_dataq >= nr_cpus) {
			cq->first = i;
			cq->stride = nr_cpus;
			cq->count = (xd->nr_dataq - i + nr_cpus - 1) / nr_cpus;
		} else {
			cq->first = i * xd->nr_dataq / nr_cpus;
			cq->stride = 1;
			cq->count = 1;
		}
		i++;
	}
	for (q = 0; q < xd->nr_dataq; q++) {
		cpumask_clear(mask);
		for_each_possible_cpu(cpu) {
			if (xov_cpu_has_queue(&xd->cpu_queues[cpu], q))
				cpumask_set_cpu(cpu, mask);
		}
		/* Best effort: a mask of offline CPUs is refused, and harmless. */
		virtqueue_set_affinity(xd->dataq[q].vq, mask);
	}
	free_cpumask_var(mask);
	return 0;
}

static int xov_find_vqs(struct xov_dev *xd)
{
	unsigned int i, n = xd->nr_dataq + 1;
	struct {
		vq_callback_t *cbs[XO_MAX_VQS];
		const char *names[XO_MAX_VQS];
		struct virtqueue *vqs[XO_MAX_VQS];
		bool ctx[XO_MAX_VQS];
	} *a;
	int ret;

	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	for (i = 0; i < xd->nr_dataq; i++) {
		struct xov_dataq *dq = &xd->dataq[i];

		spin_lock_init(&dq->lock);
		INIT_LIST_HEAD(&dq->done);
		tasklet_setup(&dq->tasklet, xov_dataq_tasklet);
		snprintf(dq->name, sizeof(dq->name), "dataq.%u", i);
		a->names[i] = dq->name;
		a->cbs[i] = xov_dataq_cb;
		a->ctx[i] = true;	/* no indirect descriptors: no allocation */
	}
	/* The control queue follows the data queues. */
	a->names[i] = "controlq";
	a->cbs[i] = xov_ctrl_cb;
	a->ctx[i] = false;

	ret = xo_find_vqs(xd->vdev, n, a->vqs, a->cbs, a->names, a->ctx);
	if (ret)
		goto out;
	for (i = 0; i < xd->nr_dataq; i++) {
		xd->dataq[i].vq = a->vqs[i];
		/* A request takes at most this many descriptors. */
		if (virtqueue_get_vring_size(a->vqs[i]) < 2 + 2 * XO_JOB_MAX_SG) {
			dev_err(&xd->vdev->dev, "data queue too small: %u\n",
				virtqueue_get_vring_size(a->vqs[i]));
			xd->vdev->config->del_vqs(xd->vdev);
			ret = -ENODEV;
			goto out;
		}
	}
	xd->ctrlq = a->vqs[xd->nr_dataq];
	/* Header and status take one descriptor each; src and dst the rest. */
	xd->eng.max_sg = min(XOV_MAX_SG,
			     (virtqueue_get_vring_size(a->vqs[0]) - 2) / 2);
out:
	kfree(a);
	return ret;
}

/*
 * Devices do not reliably advertise AES-XTS in cipher_algo_l (QEMU's builtin
 * back end lists only CBC yet accepts XTS sessions): ask for a session of
 * each key size up to the device's max_cipher_key_len instead, and declare
 * those the device accepts.
 */
static int xov_probe_keylen(struct xov_dev *xd, u32 max_keylen)
{
	static const unsigned int sizes[] = {
		2 * AES_KEYSIZE_128, 2 * AES_KEYSIZE_256,
	};
	u8 key[2 * AES_KEYSIZE_256];
	unsigned int i;
	u64 session;

	/* Any key whose halves differ will do. */
	for (i = 0; i < sizeof(key); i++)
		key[i] = i;
	xd->eng.key_sizes = 0;
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		if (sizes[i] > max_keylen)
			continue;
		if (xov_session_create(&xd->eng, key, sizes[i], true, &session))
			continue;
		xov_session_destroy(&xd->eng, session);
		xd->eng.key_sizes |= xo_keys_bit(sizes[i]);
	}
	if (xd->eng.key_sizes)
		return 0;
	dev_info(&xd->vdev->dev, "device refuses AES-XTS sessions\n");
	return -ENODEV;
}

static int xov_probe(struct virtio_device *vdev)
{
	u32 status, services, max_dataq, max_keylen;
	struct xov_dev *xd;
	unsigned int i;
	u64 max_size;
	int ret;

	virtio_cread_le(vdev, struct virtio_crypto_config, status, &status);
	virtio_cread_le(vdev, struct virtio_crypto_config, max_dataqueues,
			&max_dataq);
	virtio_cread_le(vdev, struct virtio_crypto_config, crypto_services,
			&services);
	virtio_cread_le(vdev, struct virtio_crypto_config, max_cipher_key_len,
			&max_keylen);
	virtio_cread_le(vdev, struct virtio_crypto_config, max_size, &max_size);

	if (!(services & BIT(VIRTIO_CRYPTO_SERVICE_CIPHER))) {
		dev_info(&vdev->dev, "no cipher service\n");
		return -ENODEV;
	}
	if (!(status & VIRTIO_CRYPTO_S_HW_READY)) {
		dev_info(&vdev->dev, "device not ready\n");
		return -ENODEV;
	}
	if (max_dataq < 1 || max_dataq > XOV_MAX_DATAQ) {
		dev_err(&vdev->dev, "unsupported number of data queues: %u\n",
			max_dataq);
		return -ENODEV;
	}
	if (max_size < 2 * (XTS_BLOCK_SIZE + PAGE_SIZE)) {
		dev_info(&vdev->dev, "requests up to %llu bytes only\n",
			 max_size);
		return -ENODEV;
	}
	if (max_keylen < 2 * AES_MIN_KEY_SIZE) {
		dev_info(&vdev->dev, "AES-XTS keys up to %u bytes only\n",
			 max_keylen);
		return -ENODEV;
	}

	xd = kzalloc(struct_size(xd, dataq, max_dataq), GFP_KERNEL);
	if (!xd)
		return -ENOMEM;
	xd->vdev = vdev;
	xd->nr_dataq = max_dataq;
	mutex_init(&xd->ctrl_lock);
	mutex_init(&xd->stop_lock);
	INIT_WORK(&xd->retire_work, xov_retire_work);
	init_completion(&xd->ctrl_done);
	xd->eng.ops = &xov_ops;
	xd->eng.dev = &vdev->dev;
	/* The device works in place too, and fails -EIO without a promise on dst. */
	xd->eng.caps = XO_CAP_INPLACE;
	xd->eng.len_align = XTS_BLOCK_SIZE;
	xd->eng.priv_size = sizeof(struct xov_job);
	xd->eng.priv_align = __alignof__(struct xov_job);
	/* The device counts the IV, source and destination against max_size. */
	xd->eng.max_len = round_down(min_t(u64, (max_size - XTS_BLOCK_SIZE) / 2,
					   U32_MAX), XTS_BLOCK_SIZE);

	xd->eng.priority = xov_priority;
	vdev->priv = xd;

	ret = xov_find_vqs(xd);
	if (ret)
		goto err_free;
	ret = xov_map_queues(xd);
	if (ret)
		goto err_vqs;
	virtio_device_ready(vdev);

	ret = xov_probe_keylen(xd, max_keylen);
	if (ret)
		goto err_vqs;
	ret = xo_engine_register(&xd->eng);
	if (ret)
		goto err_refused;
	/* <device>/xts_offload/<counter>, through xov_driver's dev_groups */
	xo_dev_stats_set(&vdev->dev, &xd->eng);
	xd->debugfs = debugfs_create_dir(dev_name(&vdev->dev), xo_debugfs);
	debugfs_create_file("queues", 0444, xd->debugfs, xd, &xov_queues_fops);
	return 0;

err_refused:
	/*
	 * A known-answer job that timed out is still on a ring: the reset
	 * ends it, the drain fails it back, and the last reference frees xd
	 * once the test's buffers are no longer the device's.
	 */
	xov_queues_down(xd);
	vdev->priv = NULL;
	xo_engine_put(&xd->eng);
	return ret;

err_vqs:
	virtio_reset_device(vdev);
	for (i = 0; xd->cpu_queues && i < xd->nr_dataq; i++)
		virtqueue_set_affinity(xd->dataq[i].vq, NULL);
	vdev->config->del_vqs(vdev);
	/* A data queue's interrupt may have scheduled its tasklet. */
	for (i = 0; i < xd->nr_dataq; i++)
		tasklet_kill(&xd->dataq[i].tasklet);
err_free:
	vdev->priv = NULL;
	kfree(xd->cpu_queues);
	kfree(xd);
	return ret;
}

/* Interrupt context: only look, and hand the work to process context. */
static void xov_config_changed(struct virtio_device *vdev)
{
	struct xov_dev *xd = vdev->priv;
	u32 status;

	if (!xd)
		return;
	virtio_cread_le(vdev, struct virtio_crypto_config, status, &status);
	if ((vdev->config->get_status(vdev) & VIRTIO_CONFIG_S_NEEDS_RESET) ||
	    !(status & VIRTIO_CRYPTO_S_HW_READY))
		schedule_work(&xd->retire_work);
}

static void xov_remove(struct virtio_device *vdev)
{
	struct xov_dev *xd = vdev->priv;

	if (!xd)	/* a failed restore left nothing bound */
		return;
	cancel_work_sync(&xd->retire_work);
	xov_stop(xd);
	vdev->priv = NULL;
	/* The counters of a stopped engine stay readable until here. */
	xo_dev_stats_set(&vdev->dev, NULL);
	/* Sessions bound to this engine still hold references. */
	xo_engine_put(&xd->eng);
}

#ifdef CONFIG_PM_SLEEP
/*
 * Suspend and hibernation. The engine is paused, not removed: requests run
 * in software while the machine sleeps or writes its image, and every key
 * stays bound to it. The device is reset here (the virtio core resets it
 * again on restore) and forgets its sessions; restore sets the queues up
 * again and resume gives each bound key new sessions, with no known-answer
 * test and no rebinding. An engine retired before the freeze (the device
 * asked for a reset, or stopped answering) is removed instead, and
 * restore probes the device anew.
 */
static int xov_freeze(struct virtio_device *vdev)
{
	struct xov_dev *xd = vdev->priv;

	if (!xd)
		return 0;
	cancel_work_sync(&xd->retire_work);
	mutex_lock(&xd->stop_lock);
	if (xd->stopped) {
		mutex_unlock(&xd->stop_lock);
		xov_remove(vdev);
		return 0;
	}
	xo_engine_pause(&xd->eng);
	xov_quiesce(xd);
	xov_queues_down(xd);
	xo_engine_sessions_lost(&xd->eng);
	xd->suspended = true;
	mutex_unlock(&xd->stop_lock);
	return 0;
}

static int xov_restore(struct virtio_device *vdev)
{
	struct xov_dev *xd = vdev->priv;
	unsigned int i;
	int ret;

	if (!xd)
		return xov_probe(vdev);
	mutex_lock(&xd->stop_lock);
	ret = xov_find_vqs(xd);
	if (ret)
		goto fail;
	kfree(xd->cpu_queues);
	xd->cpu_queues = NULL;
	ret = xov_map_queues(xd);
	if (ret) {
		virtio_reset_device(vdev);
		vdev->config->del_vqs(vdev);
		for (i = 0; i < xd->nr_dataq; i++)
			tasklet_kill(&xd->dataq[i].tasklet);
		goto fail;
	}
	/* Nothing submits while paused: no queue lock needed. */
	for (i = 0; i < xd->nr_dataq; i++)
		xd->dataq[i].gone = false;
	virtio_device_ready(vdev);
	mutex_lock(&xd->ctrl_lock);
	xd->ctrl_down = false;
	/* The reset ended a control request the device had kept. */
	xd->ctrl_stuck = false;
	mutex_unlock(&xd->ctrl_lock);
	xd->suspended = false;
	mutex_unlock(&xd->stop_lock);
	xo_engine_resume(&xd->eng);
	return 0;

fail:
	mutex_unlock(&xd->stop_lock);
	dev_err(&vdev->dev, "cannot set the device up again (%d): engine retired, requests run in software\n",
		ret);
	/* Suspended: xov_stop() only unregisters. */
	xov_remove(vdev);
	return ret;
}
#endif

static const struct virtio_device_id xov_id_table[] = {
	{ VIRTIO_ID_CRYPTO, VIRTIO_DEV_ANY_ID },
	{ 0 },
};
MODULE_DEVICE_TABLE(virtio, xov_id_table);

static struct virtio_driver xov_driver = {
	/* As when the driver was part of xts_offload.ko: sysfs paths stay. */
	.driver.name = "xts_offload",
	.driver.owner = THIS_MODULE,
	.driver.dev_groups = xo_engine_dev_groups,
	.id_table = xov_id_table,
	.probe = xov_probe,
	.remove = xov_remove,
	.config_changed = xov_config_changed,
#ifdef CONFIG_PM_SLEEP
	.freeze = xov_freeze,
	.restore = xov_restore,
#endif
};
module_virtio_driver(xov_driver);

MODULE_DESCRIPTION("xts_offload engine for virtio-crypto devices");
MODULE_LICENSE("GPL");
