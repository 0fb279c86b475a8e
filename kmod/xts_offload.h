/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef XTS_OFFLOAD_H
#define XTS_OFFLOAD_H

/*
 * Requests shorter than this go to software by default. Measured in the
 * deterministic QEMU mode (bench/offload-bench): see
 * Documentation/xts-offload.md.
 */
#define XO_DEFAULT_THRESHOLD 2048

#endif /* XTS_OFFLOAD_H */
