#!/bin/sh
# Key slots end to end on the host, with the real Clevis and Tang (no guest):
# opalctl bind seals a slot's key for a Tang server (and for two, with sss),
# opalctl unlock-all opens it through clevis decrypt and unlocks a sedsim
# drive; with the server down it retries getting the key, bounded, and then
# fails or falls back; unbind makes the sealed key useless.
#   test_nbde.sh OPALCTL-SIM SEDSIM OPALCTL
# (OPALCTL-SIM: the test build with the sedsim transport; OPALCTL: the one
# that is installed, which must not have it.)
set -u
OPALCTL=$1
SEDSIM=$2
DIST=$3
T=$(mktemp -d /tmp/test_nbde.XXXXXX)
. "$(dirname "$0")/tap-lib.sh"

need clevis jose socat curl swtpm /usr/libexec/tangd /usr/libexec/tangd-keygen
echo "1..54"

D=$T/drive
mkdir "$D"
"$SEDSIM" create "$D" --blocks 8192 --serial NBDETEST >/dev/null
"$OPALCTL" keygen "$T/admin.key" >/dev/null
expect_rc "the installed opalctl has no sedsim transport" 1 "$DIST" status "$D" --transport sedsim
check "setup range 1" "$OPALCTL" setup "$D" -k "$T/admin.key" --range 1 --start 2048 --length 2048 --yes-destroy-data
printf 'slot data' | dd of="$T/data" bs=512 conv=sync 2>/dev/null
check "write data into range 1" sh -c "\"$SEDSIM\" write \"$D\" 2048 1 < \"$T/data\""
check "tang server A answers" start_tang A
check "tang server B answers" start_tang B

# Sealing fails (nothing listens): clevis's own exit status, no JWE, no user enabled.
expect_rc "bind with a Tang server that is down: exit 13 (clevis could not seal)" 13 \
	"$OPALCTL" bind "$D" -k "$T/admin.key" --range 1 --pin tang \
	--config "{\"url\":\"http://127.0.0.1:$(free_port)\",\"thp\":\"$A_THP\"}" --jwe "$T/down.jwe"
if [ ! -e "$T/down.jwe" ] && ! grep -q "User1" "$T/out"; then
	ok "a failed bind leaves no JWE and enables no user"
else
	not_ok "a failed bind leaves no JWE and enables no user"
fi
check "bind a tang slot to range 1" "$OPALCTL" bind "$D" -k "$T/admin.key" --range 1 --pin tang \
	--config "{\"url\":\"http://127.0.0.1:$A_PORT\",\"thp\":\"$A_THP\"}" --jwe "$T/tang.jwe"
grep_out "bind names the slot and the opaltab line" "key slot User1 bound to range 1"
SSS="{\"t\":1,\"pins\":{\"tang\":[{\"url\":\"http://127.0.0.1:$A_PORT\",\"thp\":\"$A_THP\"},{\"url\":\"http://127.0.0.1:$B_PORT\",\"thp\":\"$B_THP\"}]}}"
check "bind an sss slot (either server) to range 1" "$OPALCTL" bind "$D" -k "$T/admin.key" \
	--range 1 --pin sss --config "$SSS" --jwe "$T/sss.jwe"
cat >"$T/opaltab" <<EOF
tangslot $D 1 clevis:$T/tang.jwe user=1,transport=sedsim,timeout=5,retry=2,fallback=fail
sssslot  $D 1 clevis:$T/sss.jwe  user=2,transport=sedsim,timeout=5,retry=0,fallback=fail,noauto
EOF
expect_rc "slots lists both sealed slots" 0 "$OPALCTL" slots "$D" -k "$T/admin.key" --table "$T/opaltab"
grep_out "slots shows User2's sss pin" "User2 .*clevis sss in $T/sss.jwe"
# No key was stored anywhere but in the JWEs: the table names no key file.

"$OPALCTL" lock "$D" -k "$T/admin.key" --range 1 >/dev/null 2>&1
expect_rc "range 1 locked: reads fail" 3 "$SEDSIM" read "$D" 2048 1
check "unlock-all opens the tang slot with no prompt" "$OPALCTL" unlock-all --table "$T/opaltab" --no-prompt
grep_out "unlock-all says how" "tangslot: .* range 1 unlocked (clevis, User1"
if "$SEDSIM" read "$D" 2048 1 2>/dev/null | cmp -s - "$T/data"; then ok "data intact"; else not_ok "data intact"; fi
# The shutdown step: lock-all locks it again with the slot's own key (Tang), no admin key.
check "lock-all locks the tang slot's range with its own key" "$OPALCTL" lock-all --table "$T/opaltab" --name tangslot
grep_out "lock-all says how" "tangslot: .* range 1 locked (clevis, User1)"
expect_rc "after lock-all: reads fail" 3 "$SEDSIM" read "$D" 2048 1
"$OPALCTL" unlock-all --table "$T/opaltab" --no-prompt >/dev/null 2>&1

# Server A down: the tang slot's key cannot be had; bounded retries, then fail.
kill "$A_PID"
sleep 0.2
expect_rc "server down: lock-all cannot get the key (exit 11), says the range stays unlocked" 11 \
	"$OPALCTL" lock-all --table "$T/opaltab" --name tangslot --deadline 10
grep_out "lock-all names what is left" "tangslot: not locked: .*left unlocked (it locks at power-off)"
"$OPALCTL" lock "$D" -k "$T/admin.key" --range 1 >/dev/null 2>&1
start=$(date +%s)
expect_rc "server down: unlock-all fails (exit 11)" 11 "$OPALCTL" unlock-all --table "$T/opaltab" --no-prompt
end=$(date +%s)
if grep -q "attempt 3 of 3" "$T/err" && ! grep -q "attempt 4" "$T/err"; then
	ok "getting the key was tried 1 + retry=2 times"
else
	not_ok "getting the key was tried 1 + retry=2 times"; sed 's/^/# /' "$T/err"
fi
if [ $((end - start)) -le 20 ]; then ok "and gave up within its bounds ($((end - start)) s)"; else not_ok "gave up within its bounds ($((end - start)) s)"; fi
# A server that takes the connection and never answers (curl's default
# would wait forever): each attempt ends at the entry's timeout (3 s).
socat "TCP-LISTEN:$A_PORT,bind=127.0.0.1,fork,reuseaddr" SYSTEM:"sleep 60" >/dev/null 2>&1 &
PIDS="$PIDS $!"
sleep 0.3
sed -i "s|^tangslot .*|tangslot $D 1 clevis:$T/tang.jwe user=1,transport=sedsim,timeout=3,retry=1,fallback=fail|" "$T/opaltab"
start=$(date +%s)
expect_rc "a server that never answers: unlock-all fails (exit 11)" 11 "$OPALCTL" unlock-all --table "$T/opaltab" --no-prompt
end=$(date +%s)
if [ $((end - start)) -ge 5 ] && [ $((end - start)) -le 12 ]; then
	ok "two attempts of at most 3 s and a 1 s backoff ($((end - start)) s)"
else
	not_ok "two attempts of at most 3 s and a 1 s backoff ($((end - start)) s)"; sed 's/^/# /' "$T/err"
fi
# With sss t=1 the second server is enough.
check "sss slot: server B alone unlocks" "$OPALCTL" unlock-all --table "$T/opaltab" --name sssslot --no-prompt
if "$SEDSIM" read "$D" 2048 1 2>/dev/null | cmp -s - "$T/data"; then ok "data intact after sss unlock"; else not_ok "data intact after sss unlock"; fi

# unbind: the user is gone, and its sealed key no longer opens anything.
cp "$T/sss.jwe" "$T/sss-copy.jwe"
check "unbind slot 2" "$OPALCTL" unbind "$D" -k "$T/admin.key" --slot 2 --jwe "$T/sss.jwe"
if [ ! -e "$T/sss.jwe" ]; then ok "unbind removed the JWE"; else not_ok "unbind removed the JWE"; fi
sed -i "s|$T/sss.jwe|$T/sss-copy.jwe|" "$T/opaltab"
"$OPALCTL" lock "$D" -k "$T/admin.key" --range 1 >/dev/null 2>&1
expect_rc "a kept copy of the unbound slot's JWE unlocks nothing" 11 \
	"$OPALCTL" unlock-all --table "$T/opaltab" --name sssslot --no-prompt
# Tang key rotation: rotated (hidden) keys still open old JWEs; once they are
# deleted the slot cannot be opened, and unlock-all says so, bounded.
check "tang server C answers" start_tang C
check "bind a slot to server C" "$OPALCTL" bind "$D" -k "$T/admin.key" --range 1 --pin tang \
	--config "{\"url\":\"http://127.0.0.1:$C_PORT\",\"thp\":\"$C_THP\"}" --jwe "$T/c.jwe"
C_USER=$(sed -n 's/.*key slot User\([0-9]*\) bound.*/\1/p' "$T/out")
echo "cslot $D 1 clevis:$T/c.jwe user=$C_USER,transport=sedsim,timeout=5,retry=1,fallback=fail" >>"$T/opaltab"
/usr/libexec/tangd-rotate-keys -d "$T/C" >/dev/null 2>&1
"$OPALCTL" lock "$D" -k "$T/admin.key" --range 1 >/dev/null 2>&1
check "after a Tang key rotation the old slot still unlocks" \
	"$OPALCTL" unlock-all --table "$T/opaltab" --name cslot --no-prompt
rm -f "$T/C"/.*.jwk
"$OPALCTL" lock "$D" -k "$T/admin.key" --range 1 >/dev/null 2>&1
expect_rc "with the rotated keys deleted the slot does not open (exit 11)" 11 \
	"$OPALCTL" unlock-all --table "$T/opaltab" --name cslot --no-prompt
grep_out "and unlock-all says why" "cslot: failed: clevis decrypt failed"
# sss of tang + tpm2 with t=2: both are needed. The TPM is swtpm on a
# loopback port; clevis's tpm2-tools find it through TPM2TOOLS_TCTI, which
# opalctl passes on to clevis, one of the few variables its children keep.
start_swtpm
SSS2="{\"t\":2,\"pins\":{\"tang\":[{\"url\":\"http://127.0.0.1:$B_PORT\",\"thp\":\"$B_THP\"}],\"tpm2\":{}}}"
check "bind an sss slot needing Tang and the TPM (t=2)" "$OPALCTL" bind "$D" -k "$T/admin.key" \
	--range 1 --pin sss --config "$SSS2" --jwe "$T/sss2.jwe"
S2_USER=$(sed -n 's/.*key slot User\([0-9]*\) bound.*/\1/p' "$T/out")
echo "both $D 1 clevis:$T/sss2.jwe user=$S2_USER,transport=sedsim,timeout=10,retry=0,fallback=fail" >>"$T/opaltab"
"$OPALCTL" lock "$D" -k "$T/admin.key" --range 1 >/dev/null 2>&1
check "Tang and the TPM together unlock" "$OPALCTL" unlock-all --table "$T/opaltab" --name both --no-prompt
"$OPALCTL" lock "$D" -k "$T/admin.key" --range 1 >/dev/null 2>&1
kill "$B_PID"
sleep 0.2
expect_rc "the TPM alone does not (t=2, Tang down): exit 11" 11 \
	"$OPALCTL" unlock-all --table "$T/opaltab" --name both --no-prompt

# Tang late (after a site power-up): the prompt comes after the first
# failed attempt, Tang is tried again while it waits, and the first key
# that works wins: the prompt (here an askpass that never answers) is
# cancelled. Then the same slot unbound (a stale JWE): the drive refuses
# its key, and the prompt unlocks with the recovery key.
check "tang server D answers" start_tang D
check "bind a slot to server D" "$OPALCTL" bind "$D" -k "$T/admin.key" --range 1 --pin tang \
	--config "{\"url\":\"http://127.0.0.1:$D_PORT\",\"thp\":\"$D_THP\"}" --jwe "$T/d.jwe"
D_USER=$(sed -n 's/.*key slot User\([0-9]*\) bound.*/\1/p' "$T/out")
echo "dslot $D 1 clevis:$T/d.jwe user=$D_USER,transport=sedsim,timeout=3,noauto" >>"$T/opaltab"
kill "$D_PID"
sleep 0.2
printf '#!/bin/sh\necho $$ >"%s"\nexec sleep 60\n' "$T/slowpass.pid" >"$T/slowpass"
# The key file holds random bytes: one newline more, which the prompt drops.
printf '#!/bin/sh\ncat "%s"\necho\n' "$T/admin.key" >"$T/okpass"
chmod 0700 "$T/slowpass" "$T/okpass"
"$OPALCTL" lock "$D" -k "$T/admin.key" --range 1 >/dev/null 2>&1
(sleep 4 && exec socat "TCP-LISTEN:$D_PORT,bind=127.0.0.1,fork,reuseaddr" \
	SYSTEM:"/usr/libexec/tangd $T/D 2>>$T/D.log" >/dev/null 2>&1) &
PIDS="$PIDS $!"
start=$(date +%s)
expect_rc "Tang late: unlock-all unlocks while the prompt waits" 0 \
	"$OPALCTL" unlock-all --table "$T/opaltab" --name dslot --askpass "$T/slowpass" --prompt-timeout 40
end=$(date +%s)
grep_out "with Tang's key, not a passphrase" "dslot: .* range 1 unlocked (clevis, User$D_USER"
if grep -q "the key came from $T/d.jwe while the prompt waited" "$T/err" && grep -q "attempt 1 of 1" "$T/err"; then
	ok "one attempt before the prompt, the key while it waited"
else
	not_ok "one attempt before the prompt, the key while it waited"; sed 's/^/# /' "$T/err"
fi
if [ $((end - start)) -ge 4 ] && [ $((end - start)) -le 20 ]; then
	ok "within the backoff after Tang came back ($((end - start)) s)"
else
	not_ok "within the backoff after Tang came back ($((end - start)) s)"
fi
if [ -s "$T/slowpass.pid" ] && ! kill -0 "$(cat "$T/slowpass.pid")" 2>/dev/null; then
	ok "the prompt was cancelled"
else
	not_ok "the prompt was cancelled (askpass pid $(cat "$T/slowpass.pid" 2>/dev/null) still there or never ran)"
fi
cp "$T/d.jwe" "$T/d-stale.jwe"
check "unbind D's slot" "$OPALCTL" unbind "$D" -k "$T/admin.key" --slot "$D_USER" --jwe "$T/d.jwe"
sed -i "s|clevis:$T/d.jwe |clevis:$T/d-stale.jwe |" "$T/opaltab"
"$OPALCTL" lock "$D" -k "$T/admin.key" --range 1 >/dev/null 2>&1
expect_rc "a stale JWE: unlock-all still unlocks, through the prompt" 0 \
	"$OPALCTL" unlock-all --table "$T/opaltab" --name dslot --askpass "$T/okpass"
grep_out "with the recovery key" "dslot: .* range 1 unlocked (passphrase, Admin1"
if grep -q "the drive refused the clevis key for User$D_USER (a stale JWE?" "$T/err"; then
	ok "the refusal is said, with its likely cause"
else
	not_ok "the refusal is said, with its likely cause"; sed 's/^/# /' "$T/err"
fi
if "$SEDSIM" read "$D" 2048 1 2>/dev/null | cmp -s - "$T/data"; then ok "data intact after the prompt"; else not_ok "data intact after the prompt"; fi
# Tang silent (it takes the connection and never answers): the background
# try is still in curl when a person answers; nothing of it may outlive
# unlock-all (its clevis and curl share its process group).
S_PORT=$(free_port)
socat "TCP-LISTEN:$S_PORT,bind=127.0.0.1,fork,reuseaddr" SYSTEM:"sleep 30" >/dev/null 2>&1 &
PIDS="$PIDS $!"
i=0
while [ $i -lt 50 ] && ! ss -ltn "sport = :$S_PORT" | grep -q LISTEN; do
	sleep 0.1
	i=$((i + 1))
done
start_tang E
curl -s "http://127.0.0.1:$E_PORT/adv" >"$T/a.adv"
printf 'unused' | clevis encrypt tang "{\"url\":\"http://127.0.0.1:$S_PORT\",\"adv\":\"$T/a.adv\"}" \
	>"$T/silent.jwe" 2>"$T/err"
echo "silent $D 1 clevis:$T/silent.jwe user=1,transport=sedsim,timeout=6,noauto" >>"$T/opaltab"
printf '#!/bin/sh\nsleep 1\ncat "%s"\necho\n' "$T/admin.key" >"$T/latepass"
chmod 0700 "$T/latepass"
"$OPALCTL" lock "$D" -k "$T/admin.key" --range 1 >/dev/null 2>&1
expect_rc "Tang silent: the recovery key typed while the background try waits unlocks" 0 \
	"$OPALCTL" unlock-all --table "$T/opaltab" --name silent --askpass "$T/latepass"
grep_out "with the recovery key, Tang never answering" "silent: .* range 1 unlocked (passphrase, Admin1"
if pgrep -f "127.0.0.1:$S_PORT" >"$T/left"; then
	not_ok "no clevis or curl of the background try is left"; ps -o pid,pgid,args -p "$(tr '\n' ',' <"$T/left")0" | sed 's/^/# /'
else
	ok "no clevis or curl of the background try is left"
fi
[ "$failed" -eq 0 ]
