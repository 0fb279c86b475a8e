#!/bin/sh
[ -e /tmp/fdekit-test-nvmf.done ] || /sbin/fdekit-test-nvmf-connect
