#!/bin/sh
# lib/opal's kernel backend builds against Debian 12's own uapi headers
# (linux-libc-dev 6.1, unpacked by scripts/bootstrap), which lack
# opal_key.key_type and the ioctls added since. TAP.
#   test_uapi61.sh CC SOURCE_ROOT
set -u
CC=$1
SRC=$2
U=/var/lib/fdekit/uapi-6.1/usr/include
echo "1..3"
if [ ! -f "$U/linux/sed-opal.h" ]; then
	echo "Bail out! $U/linux/sed-opal.h is missing: run scripts/bootstrap"
	exit 1
fi
# The headers really are the old ones: key_type is not there.
printf '#include <linux/sed-opal.h>\nint f(struct opal_key *k) { return k->key_type; }\n' >/tmp/uapi61-probe.$$.c
if $CC -std=c17 -isystem "$U" -isystem "$U/x86_64-linux-gnu" -c /tmp/uapi61-probe.$$.c \
	-o /dev/null 2>/dev/null; then
	echo "not ok 1 - the 6.1 headers lack opal_key.key_type"
else
	echo "ok 1 - the 6.1 headers lack opal_key.key_type"
fi
rm -f /tmp/uapi61-probe.$$.c
n=2
for f in ioctl.c backend_ioctl.c; do
	if $CC -std=c17 -Wall -Wextra -Werror -D_GNU_SOURCE -DHAVE_OPAL_KEY_TYPE=0 \
		-isystem "$U" -isystem "$U/x86_64-linux-gnu" \
		-I"$SRC/lib/opal" -c "$SRC/lib/opal/$f" -o /dev/null; then
		echo "ok $n - lib/opal/$f builds against linux-libc-dev 6.1"
	else
		echo "not ok $n - lib/opal/$f builds against linux-libc-dev 6.1"
	fi
	n=$((n + 1))
done
