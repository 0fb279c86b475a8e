/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel-version differences, all in one place.
 *
 * Supported: 6.1 (Debian 12) to 6.12 (Debian 12 backports).
 */
#ifndef XTS_OFFLOAD_COMPAT_H
#define XTS_OFFLOAD_COMPAT_H

#include <linux/version.h>
#include <linux/virtio.h>
#include <linux/virtio_config.h>
#include <crypto/internal/skcipher.h>

/*
 * 6.3 changed crypto completion callbacks from taking the async request to
 * taking its data pointer.
 */
#if KERNEL_VERSION(6, 3, 0) <= LINUX_VERSION_CODE
#define XO_CRYPTO_CB_ARG void *
static inline void *xo_crypto_cb_data(void *arg)
{
	return arg;
}
#else
#define XO_CRYPTO_CB_ARG struct crypto_async_request *
static inline void *xo_crypto_cb_data(struct crypto_async_request *areq)
{
	return areq->data;
}
#endif

/*
 * 6.3 added DMA-aligned request contexts: the size gets padding, and the
 * context is found aligned to the DMA alignment within it. Before, the
 * context is as kmalloc aligns it.
 */
#if KERNEL_VERSION(6, 3, 0) <= LINUX_VERSION_CODE
static inline void xo_skcipher_set_reqsize_dma(struct crypto_skcipher *tfm, unsigned int size)
{
	crypto_skcipher_set_reqsize_dma(tfm, size);
}

static inline void *xo_skcipher_request_ctx_dma(struct skcipher_request *req)
{
	return skcipher_request_ctx_dma(req);
}
#else
static inline void xo_skcipher_set_reqsize_dma(struct crypto_skcipher *tfm, unsigned int size)
{
	crypto_skcipher_set_reqsize(tfm, size);
}

static inline void *xo_skcipher_request_ctx_dma(struct skcipher_request *req)
{
	return skcipher_request_ctx(req);
}
#endif

/*
 * 6.11 replaced the parallel callback/name/ctx arrays of find_vqs with an
 * array of struct virtqueue_info.
 */
#define XO_MAX_VQS 65

static inline int xo_find_vqs(struct virtio_device *vdev, unsigned int nvqs,
			      struct virtqueue *vqs[], vq_callback_t *cbs[],
			      const char * const names[], const bool ctx[])
{
#if KERNEL_VERSION(6, 11, 0) <= LINUX_VERSION_CODE
	struct virtqueue_info *info;
	unsigned int i;
	int ret;

	info = kcalloc(nvqs, sizeof(*info), GFP_KERNEL);
	if (!info)
		return -ENOMEM;
	for (i = 0; i < nvqs; i++) {
		info[i].name = names[i];
		info[i].callback = cbs[i];
		info[i].ctx = ctx[i];
	}
	ret = virtio_find_vqs(vdev, nvqs, vqs, info, NULL);
	kfree(info);
	return ret;
#else
	return virtio_find_vqs_ctx(vdev, nvqs, vqs, cbs, names, ctx, NULL);
#endif
}

#endif /* XTS_OFFLOAD_COMPAT_H */
