#!/bin/sh
# pre-udev, after network-legacy's net-genrules: when a tang binding needs
# the network and nothing else brings it up, a udev rule that does.
/sbin/fdekit-opal-unlock genrules
