#!/bin/sh
# xts-offload (dracut, pre-udev): load the engine (and with it the core)
# before udev finds the disks, so that every crypt mapping opened in the
# initramfs gets xts-aes-offload.
modprobe -b xts_offload_virtio || warn "xts-offload: modprobe xts_offload_virtio failed: crypt mappings run on the kernel's own xts(aes)"
