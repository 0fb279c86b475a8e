#!/bin/sh
# Without fdekit.test.storage only: connect once an interface is up.
getarg fdekit.test.storage >/dev/null || /sbin/fdekit-test-nvmf-connect
