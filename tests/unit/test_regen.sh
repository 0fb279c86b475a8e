#!/bin/sh
# Tang key rotation without the drive, with the real Clevis and Tang servers
# on loopback (no guest): slots --report says which sealed keys use rotated
# or deleted server keys and whether the initramfs holds the same JWE;
# regen seals the same PIN for the servers' current keys, carrying the
# trust of the binding over, and refuses (replacing nothing) when a server
# is down, when the keys are already gone, or when it cannot trust the new
# ones. An sss slot's tpm2 branch is sealed again with the TPM (a swtpm).
# The PINs are checked where it matters: a sedsim drive unlocks with the
# new JWEs after the hidden keys are deleted, and not with the old ones.
#   test_regen.sh OPALCTL-SIM SEDSIM
set -u
OPALCTL=$1
SEDSIM=$2
T=$(mktemp -d /tmp/test_regen.XXXXXX)
. "$(dirname "$0")/tap-lib.sh"

# expect DESC PYTHON-EXPR: the expression holds for j, the JSON in $T/out
expect() {
	if /usr/bin/python3 -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$T/out" 2>"$T/pyerr"; then
		ok "$1"
	else
		not_ok "$1"; sed 's/^/# /' "$T/out" "$T/pyerr" | head -60
	fi
}
grep_file() {
	if grep -q -- "$3" "$2"; then ok "$1"; else not_ok "$1"; sed 's/^/# /' "$2"; fi
}
# unreplaced DESC JWE BEFORE: JWE is as BEFORE, and no JWE.new or JWE.old is left.
unreplaced() {
	if cmp -s "$2" "$3" && [ ! -e "$2.new" ] && [ ! -e "$2.old" ]; then ok "$1"; else not_ok "$1"; fi
}
# tpm_up DESC: the swtpm start_swtpm started answers (bounded wait)
tpm_up() {
	_i=0
	while [ $_i -lt 100 ]; do
		if tpm2_pcrread sha256:7 >/dev/null 2>&1; then ok "$1"; return; fi
		sleep 0.1
		_i=$((_i + 1))
	done
	not_ok "$1"; sed 's/^/# /' "$T/swtpm.log"
}

need clevis jose socat curl swtpm tpm2_pcrread cpio unmkinitramfs /usr/libexec/tangd /usr/libexec/tangd-keygen \
	/usr/libexec/tangd-rotate-keys
echo "1..116"

# An initramfs image as mkinitramfs would hold these JWEs (same paths), gzip'ed cpio.
make_image() {
	rm -rf "$T/imgroot"
	mkdir -p "$T/imgroot"
	for f in "$@"; do
		mkdir -p "$T/imgroot$(dirname "$f")"
		cp "$f" "$T/imgroot$f"
	done
	(cd "$T/imgroot" && find . | cpio -o -H newc --quiet | gzip) >"$T/initrd.img"
}

D=$T/drive
mkdir "$D"
"$SEDSIM" create "$D" --blocks 8192 --serial REGENTEST >/dev/null
"$OPALCTL" keygen "$T/admin.key" >/dev/null
"$OPALCTL" setup "$D" -k "$T/admin.key" --range 1 --start 2048 --length 2048 --yes-destroy-data >/dev/null 2>&1
printf 'regen data' | dd of="$T/data" bs=512 conv=sync 2>/dev/null
sh -c "\"$SEDSIM\" write \"$D\" 2048 1 < \"$T/data\""
start_tang A && start_tang B && ok "two Tang servers answer" || not_ok "two Tang servers answer"
A_THP0=$A_THP
mkdir -p "$T/keys"

SSS="{\"t\":1,\"pins\":{\"tang\":[{\"url\":\"http://127.0.0.1:$A_PORT\",\"thp\":\"$A_THP\"},{\"url\":\"http://127.0.0.1:$B_PORT\",\"thp\":\"$B_THP\"}]}}"
expect_rc "bind an sss slot (t=1, servers A and B)" 0 "$OPALCTL" bind "$D" -k "$T/admin.key" \
	--range 1 --pin sss --config "$SSS" --jwe "$T/keys/sss.jwe"
expect_rc "bind a tang slot (server A)" 0 "$OPALCTL" bind "$D" -k "$T/admin.key" --range 1 --pin tang \
	--config "{\"url\":\"http://127.0.0.1:$A_PORT\",\"thp\":\"$A_THP\"}" --jwe "$T/keys/tang.jwe"
cat >"$T/opaltab" <<EOF
sssslot  $D 1 clevis:$T/keys/sss.jwe  user=1,transport=sedsim,timeout=5,retry=0,fallback=fail
tangslot $D 1 clevis:$T/keys/tang.jwe user=2,transport=sedsim,timeout=5,retry=0,fallback=fail,noauto
EOF
make_image "$T/keys/sss.jwe"

# Before any rotation: nothing to do.
expect_rc "report: every key current, the initramfs copy the same: exit 0" 0 \
	"$OPALCTL" slots --report --table "$T/opaltab" --initramfs "$T/initrd.img" --json
expect "report: both slots, both of sss's servers current" \
	"[s['name'] for s in j['slots']] == ['sssslot', 'tangslot'] and [v['state'] for v in j['slots'][0]['servers']] == ['current', 'current'] and j['slots'][0]['threshold'] == 1 and j['needs_attention'] == 0"
expect "report: initramfs checked, sss copy the same, the noauto slot not in it" \
	"j['initramfs']['checked'] and j['slots'][0]['initramfs'] == 'same' and j['slots'][1]['initramfs'] is None"
expect_rc "regen --all with nothing rotated: exit 0, nothing sealed again" 0 \
	"$OPALCTL" regen --all --table "$T/opaltab" --json
expect "regen --all: both unchanged, no initramfs rebuild asked" \
	"j['regenerated'] == 0 and all(not e['regenerated'] for e in j['entries']) and j['initramfs_command'] is None"

# A JWE whose Tang URL is not one (a stranger's file given to --jwe): curl
# must never take it as an option ("-K FILE": read FILE as its config, here
# one that writes a file), nor clevis's tang pin, which runs curl "$url/...".
# evil_jwe URL OUT: tang.jwe with its header's Tang URL replaced.
evil_jwe() {
	/usr/bin/python3 -c '
import base64, json, sys
p = open(sys.argv[1]).read().strip().split(".")
h = json.loads(base64.urlsafe_b64decode(p[0] + "=" * (-len(p[0]) % 4)))
h["clevis"]["tang"]["url"] = sys.argv[2]
p[0] = base64.urlsafe_b64encode(json.dumps(h).encode()).decode().rstrip("=")
print(".".join(p))' "$T/keys/tang.jwe" "$1" >"$2"
}
mkdir -p "$T/curlcfg"
printf 'url = "file://%s/curlcfg/adv"\noutput = "%s/pwned"\n' "$T" "$T" >"$T/curlcfg/adv"
evil_jwe "-K$T/curlcfg" "$T/keys/evil.jwe"
expect_rc "report on a JWE whose Tang URL is a curl option: exit 15" 15 \
	"$OPALCTL" slots --report --jwe "$T/keys/evil.jwe" --initramfs "$T/initrd.img" --json
expect "report: refused before any curl, saying why" \
	"j['slots'][0]['action'] == 'rebind' and 'is not http:// or https:// followed by a host' in j['slots'][0]['why']"
cp "$T/keys/evil.jwe" "$T/evil.before"
expect_rc "regen refuses it too: exit 7" 7 "$OPALCTL" regen --jwe "$T/keys/evil.jwe"
grep_file "and says why" "$T/err" "Tang URL '-K$T/curlcfg' is not http:// or https://"
unreplaced "nothing replaced" "$T/keys/evil.jwe" "$T/evil.before"
if [ ! -e "$T/pwned" ]; then ok "no curl read the URL as its config"; else not_ok "no curl read the URL as its config"; fi
evil_jwe "$(printf 'http://127.0.0.1:%s\n-K%s/curlcfg' "$A_PORT" "$T")" "$T/keys/evil.jwe"
expect_rc "a URL with a newline: report exits 15" 15 \
	"$OPALCTL" slots --report --jwe "$T/keys/evil.jwe" --initramfs "$T/initrd.img" --json
expect "report: refused, the newline not printed" \
	"'holds a blank or a control character' in j['slots'][0]['why'] and '\\n' not in j['slots'][0]['why']"

# Both servers rotate their keys (the old ones hidden: they still answer).
/usr/libexec/tangd-rotate-keys -d "$T/A" >/dev/null 2>&1
/usr/libexec/tangd-rotate-keys -d "$T/B" >/dev/null 2>&1
expect_rc "after rotation: report exits 15" 15 \
	"$OPALCTL" slots --report --table "$T/opaltab" --initramfs "$T/initrd.img" --json
expect "report: every server's key rotated, both slots need regen" \
	"all(v['state'] == 'rotated' for s in j['slots'] for v in s['servers']) and [s['action'] for s in j['slots']] == ['regen', 'regen'] and j['needs_attention'] == 2"
expect_rc "the report's text form exits 15 too" 15 \
	"$OPALCTL" slots --report --table "$T/opaltab" --initramfs "$T/initrd.img"
grep_file "and says what to run" "$T/out" "sssslot: .*needs regen (opalctl regen --name sssslot)"

# A server down during regen: nothing replaced, the server named.
cp "$T/keys/sss.jwe" "$T/sss.before"
kill "$B_PID"
sleep 0.3
expect_rc "regen with server B down: exit 13" 13 "$OPALCTL" regen --name sssslot --table "$T/opaltab"
grep_file "the message names server B" "$T/err" "127.0.0.1:$B_PORT"
if cmp -s "$T/keys/sss.jwe" "$T/sss.before" && [ ! -e "$T/keys/sss.jwe.new" ] && [ ! -e "$T/keys/sss.jwe.old" ]; then
	ok "the JWE is untouched, no .new or .old left"
else
	not_ok "the JWE is untouched, no .new or .old left"
fi
if start_tang B "$B_PORT"; then ok "server B answers again on its port"; else not_ok "server B answers again on its port"; fi

expect_rc "regen --name tangslot (text): exit 0" 0 "$OPALCTL" regen --name tangslot --table "$T/opaltab"
grep_file "it says what it did" "$T/out" "^tangslot: sealed again for http://127.0.0.1:$A_PORT (key was rotated); the old JWE kept as $T/keys/tang.jwe.old\$"
cp "$T/keys/tang.jwe.old" "$T/keys/tang.jwe"
expect_rc "regen --all: exit 0" 0 "$OPALCTL" regen --all --table "$T/opaltab" --json
expect "regen --all: both sealed again, old ones kept, initramfs rebuild asked (sss is in it)" \
	"j['regenerated'] == 2 and all(e['regenerated'] and e['old'] == e['jwe'] + '.old' for e in j['entries']) and j['initramfs_command']"
expect "regen: the sss slot keeps its threshold and both servers" \
	"j['entries'][0]['config']['t'] == 1 and len(j['entries'][0]['config']['pins']['tang']) == 2"
if cmp -s "$T/keys/sss.jwe.old" "$T/sss.before"; then ok "sss.jwe.old is the JWE before"; else not_ok "sss.jwe.old is the JWE before"; fi
perm=$(stat -c %a "$T/keys/sss.jwe")
if [ "$perm" = 600 ]; then ok "the new JWE is mode 0600"; else not_ok "the new JWE is mode 0600 (is $perm)"; fi
expect_rc "report after regen: the initramfs copy is older: exit 15" 15 \
	"$OPALCTL" slots --report --table "$T/opaltab" --initramfs "$T/initrd.img" --json
expect "report: keys current, the initramfs copy differs" \
	"all(v['state'] == 'current' for s in j['slots'] for v in s['servers']) and j['slots'][0]['initramfs'] == 'differs' and j['slots'][0]['action'] == 'none'"
make_image "$T/keys/sss.jwe"
expect_rc "with the initramfs rebuilt: report exits 0" 0 \
	"$OPALCTL" slots --report --table "$T/opaltab" --initramfs "$T/initrd.img"
# A dracut system has lsinitrd, not unmkinitramfs: the same report. opalctl
# runs programs from the system's directories, whatever $PATH says: a mount
# namespace of the test's own hides unmkinitramfs (/dev/null over it).
without_unmk() {
	unshare -m sh -c 'for d in /usr/sbin /usr/bin /sbin /bin; do
		[ -e "$d/unmkinitramfs" ] && mount --bind /dev/null "$d/unmkinitramfs"
	done
	command -v unmkinitramfs >/dev/null && exit 99
	exec "$@"' sh "$@"
}
if ! command -v lsinitrd >/dev/null 2>&1; then
	ok "# SKIP lsinitrd (dracut-core) is not installed"
	ok "# SKIP lsinitrd (dracut-core) is not installed"
elif ! unshare -m true 2>/dev/null; then
	ok "# SKIP no mount namespace to hide unmkinitramfs in (needs root)"
	ok "# SKIP no mount namespace to hide unmkinitramfs in (needs root)"
else
	expect_rc "without unmkinitramfs, through lsinitrd: report exits 0" 0 \
		without_unmk "$OPALCTL" slots --report --table "$T/opaltab" --initramfs "$T/initrd.img" --json
	expect "lsinitrd unpacked it: the copy compared the same" \
		"j['initramfs']['checked'] and j['slots'][0]['initramfs'] == 'same'"
fi
expect_rc "regen DEV --slot 1: the table's JWE for User1 of the drive, current: exit 0" 0 \
	"$OPALCTL" regen "$D" --slot 1 --table "$T/opaltab" --json
expect "it found sss.jwe and left it alone" \
	"j['entries'][0]['jwe'] == '$T/keys/sss.jwe' and not j['entries'][0]['regenerated']"

# The hidden keys deleted: the new JWEs open, the old ones do not.
rm -f "$T/A"/.*.jwk "$T/B"/.*.jwk
"$OPALCTL" lock "$D" -k "$T/admin.key" --range 1 >/dev/null 2>&1
expect_rc "hidden keys deleted: unlock-all opens the regenerated sss slot" 0 \
	"$OPALCTL" unlock-all --table "$T/opaltab" --name sssslot --no-prompt --state-dir "$T/run"
grep_file "unlock-all records which JWE opened it" "$T/run/sssslot" "^jwe_sha256=$(sha256sum <"$T/keys/sss.jwe" | cut -d' ' -f1)\$"
if "$SEDSIM" read "$D" 2048 1 2>/dev/null | cmp -s - "$T/data"; then ok "data intact"; else not_ok "data intact"; fi
"$OPALCTL" lock "$D" -k "$T/admin.key" --range 1 >/dev/null 2>&1
expect_rc "and the regenerated tang slot" 0 \
	"$OPALCTL" unlock-all --table "$T/opaltab" --name tangslot --no-prompt
"$OPALCTL" lock "$D" -k "$T/admin.key" --range 1 >/dev/null 2>&1
if clevis decrypt <"$T/keys/sss.jwe.old" >/dev/null 2>&1; then
	not_ok "the old sss JWE no longer opens"
else
	ok "the old sss JWE no longer opens"
fi
sed "s|$T/keys/tang.jwe |$T/keys/tang.jwe.old |" "$T/opaltab" >"$T/opaltab.old"
expect_rc "the old tang JWE unlocks nothing (exit 11)" 11 \
	"$OPALCTL" unlock-all --table "$T/opaltab.old" --name tangslot --no-prompt
expect_rc "the boot's clean-up: regen --remove-old --state-dir" 0 \
	"$OPALCTL" regen --all --table "$T/opaltab" --remove-old --state-dir "$T/run" --json
expect "it removes sss.jwe.old (unlocked with the new JWE), keeps tang.jwe.old (not recorded)" \
	"j['entries'][0].get('old_removed') == '$T/keys/sss.jwe.old' and j['entries'][1]['old'] == '$T/keys/tang.jwe.old' and j['regenerated'] == 0"
if [ ! -e "$T/keys/sss.jwe.old" ] && [ -e "$T/keys/tang.jwe.old" ]; then ok "so it did"; else not_ok "so it did"; fi
expect_rc "--state-dir only with --remove-old" 1 "$OPALCTL" regen --all --table "$T/opaltab" --state-dir "$T/run"
expect_rc "regen --remove-old: current, so only the .old files go" 0 \
	"$OPALCTL" regen --all --table "$T/opaltab" --remove-old
if [ ! -e "$T/keys/sss.jwe.old" ] && [ ! -e "$T/keys/tang.jwe.old" ] && [ -s "$T/keys/sss.jwe" ]; then
	ok "the .old files are gone, the JWEs stay"
else
	not_ok "the .old files are gone, the JWEs stay"
fi

# A JWE whose key is already deleted: report says rebind, regen refuses.
A_THP=$(sig_thp "$T/A")
expect_rc "bind a tang slot to A's current key" 0 "$OPALCTL" bind "$D" -k "$T/admin.key" --range 1 \
	--pin tang --config "{\"url\":\"http://127.0.0.1:$A_PORT\",\"thp\":\"$A_THP\"}" --jwe "$T/keys/late.jwe"
/usr/libexec/tangd-rotate-keys -d "$T/A" >/dev/null 2>&1
rm -f "$T/A"/.*.jwk
expect_rc "report on a JWE whose key is deleted: exit 15" 15 \
	"$OPALCTL" slots --report --jwe "$T/keys/late.jwe" --initramfs "$T/initrd.img" --json
expect "report: the key is gone, the slot needs rebind" \
	"j['slots'][0]['servers'][0]['state'] == 'gone' and j['slots'][0]['action'] == 'rebind'"
cp "$T/keys/late.jwe" "$T/late.before"
expect_rc "regen refuses it: exit 16 (no longer opens)" 16 "$OPALCTL" regen --jwe "$T/keys/late.jwe"
grep_file "and points to bind with the Admin1 key" "$T/err" "opalctl bind DEV --keyfile ADMIN1"
if cmp -s "$T/keys/late.jwe" "$T/late.before" && [ ! -e "$T/keys/late.jwe.new" ]; then ok "nothing replaced"; else not_ok "nothing replaced"; fi

# Trust: a slot whose server has deleted every signing key it trusted, but
# still has its exchange key: regen needs the new key's thumbprint.
A_THP=$(sig_thp "$T/A")
expect_rc "bind another tang slot to A" 0 "$OPALCTL" bind "$D" -k "$T/admin.key" --range 1 \
	--pin tang --config "{\"url\":\"http://127.0.0.1:$A_PORT\",\"thp\":\"$A_THP\"}" --jwe "$T/keys/trust.jwe"
/usr/libexec/tangd-rotate-keys -d "$T/A" >/dev/null 2>&1
rm -f "$T/A/.$A_THP.jwk"
NEW_THP=$(sig_thp "$T/A")
expect_rc "regen with no trusted signing key left: exit 13" 13 "$OPALCTL" regen --jwe "$T/keys/trust.jwe"
grep_file "the message asks for --thp" "$T/err" "give it with --thp"
expect_rc "a wrong --thp does not help: exit 13" 13 "$OPALCTL" regen --jwe "$T/keys/trust.jwe" \
	--thp "$A_THP0"
expect_rc "with the new key's --thp: exit 0" 0 "$OPALCTL" regen --jwe "$T/keys/trust.jwe" \
	--thp "$NEW_THP" --json
expect "regen used the thumbprint given" "j['entries'][0]['servers'][0]['thp'] == '$NEW_THP' and j['entries'][0]['regenerated']"
rm -f "$T/A"/.*.jwk
if clevis decrypt <"$T/keys/trust.jwe" >/dev/null 2>&1; then ok "it opens with only A's current keys"; else not_ok "it opens with only A's current keys"; fi

# An sss slot of Tang and the TPM (t=2, PCR 7): regen seals both branches
# again, the tpm2 one with this machine's TPM (the swtpm), to the PCR
# values now current; the drive unlocks with the new JWE.
start_swtpm
SWTPM_PID=$!
tpm_up "the swtpm answers"
B_THP=$(sig_thp "$T/B")
SSS2="{\"t\":2,\"pins\":{\"tang\":[{\"url\":\"http://127.0.0.1:$B_PORT\",\"thp\":\"$B_THP\"}],\"tpm2\":{\"pcr_bank\":\"sha256\",\"pcr_ids\":\"7\"}}}"
expect_rc "bind an sss slot of Tang and the TPM (t=2, PCR 7)" 0 "$OPALCTL" bind "$D" -k "$T/admin.key" \
	--range 1 --pin sss --config "$SSS2" --jwe "$T/keys/both.jwe" --json
BOTH_USER=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["slot"])' "$T/out")
echo "bothslot $D 1 clevis:$T/keys/both.jwe user=$BOTH_USER,transport=sedsim,timeout=5,retry=0,fallback=fail,noauto" \
	>"$T/opaltab.both"
/usr/libexec/tangd-rotate-keys -d "$T/B" >/dev/null 2>&1
expect_rc "report: exit 15 (B rotated)" 15 "$OPALCTL" slots --report --jwe "$T/keys/both.jwe" \
	--initramfs "$T/initrd.img" --json
expect "report: one tang branch rotated, the tpm2 branch named, regen asked" \
	"j['slots'][0]['servers'][0]['state'] == 'rotated' and j['slots'][0]['other_pin'] == 'tpm2' and j['slots'][0]['threshold'] == 2 and j['slots'][0]['action'] == 'regen'"
OLD_KID=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["slots"][0]["servers"][0]["kid"])' "$T/out")
cp "$T/keys/both.jwe" "$T/both.before"

# The TPM gone: t=2 cannot be met, so there is no PIN to seal; nothing replaced.
kill "$SWTPM_PID"
while kill -0 "$SWTPM_PID" 2>/dev/null; do sleep 0.1; done	# its state directory's lock
expect_rc "regen with the TPM gone: exit 13" 13 "$OPALCTL" regen --jwe "$T/keys/both.jwe"
grep_file "the message says the tpm2 branch needs this machine's TPM" "$T/err" "needs this machine's TPM"
unreplaced "nothing replaced, no .new or .old left" "$T/keys/both.jwe" "$T/both.before"
start_swtpm	# the same state directory: the same TPM
tpm_up "the swtpm answers again"

cp "$T/keys/both.jwe" "$T/keys/text.jwe"
expect_rc "regen (text) of an sss slot with a tpm2 branch: exit 0" 0 "$OPALCTL" regen --jwe "$T/keys/text.jwe"
grep_file "it says the tpm2 branch holds the PCR values now current" "$T/out" \
	"tpm2 branch, with this machine's TPM, to the values PCRs sha256:7 hold now"
expect_rc "regen --json of it: exit 0" 0 "$OPALCTL" regen --jwe "$T/keys/both.jwe" --json
expect "regen: threshold 2, one tang and the tpm2 configuration from its header" \
	"(lambda e: e['regenerated'] and e['config']['t'] == 2 and len(e['config']['pins']['tang']) == 1 and sorted(e['config']['pins']['tpm2']) == ['hash', 'key', 'pcr_bank', 'pcr_ids'] and e['config']['pins']['tpm2']['pcr_ids'] == '7' and e['config']['pins']['tpm2']['pcr_bank'] == 'sha256')(j['entries'][0])"
expect "regen: the JSON says the tpm2 branch holds the PCR values now current" \
	"j['entries'][0]['tpm2'] == [{'pcr_bank': 'sha256', 'pcr_ids': '7', 'sealed_to_current_pcrs': True}]"
SCHEMA=$(dirname "$0")/../../Documentation/opalctl.schema.json
if /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
	expect "the regen output fits the schema" \
		"__import__('jsonschema').Draft202012Validator(dict(json.load(open('$SCHEMA')), **{'\$ref': '#/\$defs/regen'})).is_valid(j)"
else
	ok "# SKIP python3-jsonschema is not installed"
fi
B_KID=$(for k in "$T/B"/*.jwk; do grep -q '"deriveKey"' "$k" && jose jwk thp -i "$k" -a S256; done)
# The new JWE's headers: its threshold, its branches' pins, the tang kids.
/usr/bin/python3 -c '
import base64, json, sys
def hdr(jwe):
    p = jwe.split(".")[0]
    return json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))
h = hdr(open(sys.argv[1]).read().strip())
br = [hdr(b) for b in h["clevis"]["sss"]["jwe"]]
json.dump({"t": h["clevis"]["sss"]["t"], "pins": sorted(b["clevis"]["pin"] for b in br),
           "kids": [b.get("kid") for b in br if b["clevis"]["pin"] == "tang"],
           "tpm2": [b["clevis"]["tpm2"] for b in br if b["clevis"]["pin"] == "tpm2"]}, sys.stdout)
' "$T/keys/both.jwe" >"$T/out" 2>"$T/pyerr"
expect "the new JWE: t=2, a tpm2 branch (PCR 7) and a tang branch for B's new key" \
	"j['t'] == 2 and j['pins'] == ['tang', 'tpm2'] and j['kids'] == ['$B_KID'] and '$B_KID' != '$OLD_KID' and j['tpm2'][0]['pcr_ids'] == '7'"
if cmp -s "$T/keys/both.jwe.old" "$T/both.before"; then ok "both.jwe.old is the JWE before"; else not_ok "both.jwe.old is the JWE before"; fi
# B's hidden key deleted: the drive unlocks with the new JWE (the same
# PIN, through the TPM and B's new key); the old JWE does not open.
rm -f "$T/B"/.*.jwk
"$OPALCTL" lock "$D" -k "$T/admin.key" --range 1 >/dev/null 2>&1
expect_rc "the drive unlocks with the new JWE" 0 \
	"$OPALCTL" unlock-all --table "$T/opaltab.both" --name bothslot --no-prompt
if "$SEDSIM" read "$D" 2048 1 2>/dev/null | cmp -s - "$T/data"; then ok "data intact"; else not_ok "data intact"; fi
"$OPALCTL" lock "$D" -k "$T/admin.key" --range 1 >/dev/null 2>&1
if clevis decrypt <"$T/keys/both.jwe.old" >/dev/null 2>&1; then
	not_ok "the old JWE no longer opens"
else
	ok "the old JWE no longer opens"
fi

# Branches regen cannot seal again (null, a nested sss, a tpm2 branch
# whose header lost its hash): refused before any decrypt, nothing replaced.
B_THP=$(sig_thp "$T/B")
TANG_B="[{\"url\":\"http://127.0.0.1:$B_PORT\",\"thp\":\"$B_THP\"}]"
printf 'not a PIN' | clevis encrypt sss "{\"t\":1,\"pins\":{\"tang\":$TANG_B,\"null\":{}}}" \
	>"$T/keys/null.jwe" 2>/dev/null
printf 'not a PIN' | clevis encrypt sss "{\"t\":1,\"pins\":{\"tang\":$TANG_B,\"sss\":{\"t\":1,\"pins\":{\"tang\":$TANG_B}}}}" \
	>"$T/keys/nested.jwe" 2>/dev/null
/usr/bin/python3 -c '
import base64, json, sys
def dec(p):
    return json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))
def enc(h):
    return base64.urlsafe_b64encode(json.dumps(h).encode()).decode().rstrip("=")
def strip(jwe):
    parts = jwe.split(".")
    h = dec(parts[0])
    if h["clevis"]["pin"] == "tpm2":
        del h["clevis"]["tpm2"]["hash"]
    return ".".join([enc(h)] + parts[1:])
parts = open(sys.argv[1]).read().strip().split(".")
h = dec(parts[0])
h["clevis"]["sss"]["jwe"] = [strip(b) for b in h["clevis"]["sss"]["jwe"]]
print(".".join([enc(h)] + parts[1:]))
' "$T/keys/both.jwe" >"$T/keys/nohash.jwe"
for f in null nested nohash; do
	cp "$T/keys/$f.jwe" "$T/$f.before"
	expect_rc "regen refuses $f.jwe: exit 1" 1 "$OPALCTL" regen --jwe "$T/keys/$f.jwe"
	grep_file "and says to bind a new slot with the Admin1 key" "$T/err" "bind a new slot with the Admin1 key"
	unreplaced "nothing replaced" "$T/keys/$f.jwe" "$T/$f.before"
done

# A tpm2-only slot: nothing to rotate.
printf 'not a PIN' | clevis encrypt tpm2 '{}' >"$T/keys/tpm.jwe" 2>/dev/null
expect_rc "regen of a tpm2-only slot: exit 0" 0 "$OPALCTL" regen --jwe "$T/keys/tpm.jwe" --json
expect "it is skipped: no server keys" \
	"j['entries'][0]['skipped'].startswith('no server keys') and not j['entries'][0]['regenerated']"

# t=2 needs both branches: with server B stopped, the new JWE does not open.
kill "$B_PID"
sleep 0.3
if clevis decrypt <"$T/keys/both.jwe" >/dev/null 2>&1; then
	not_ok "with B stopped the new JWE does not open (t=2)"
else
	ok "with B stopped the new JWE does not open (t=2)"
fi

# A forged advertisement: server A replaced by one that serves A's current
# keys (public: anyone can copy them) in an advertisement its own key
# signed. The slot trusts A's signing key only: the report must not call
# its key current, as regen would not trust it.
A_THP=$(sig_thp "$T/A")
printf 'not a PIN' | clevis encrypt tang "{\"url\":\"http://127.0.0.1:$A_PORT\",\"thp\":\"$A_THP\"}" \
	>"$T/keys/forged.jwe" 2>/dev/null
expect_rc "report on a slot of A before the forgery: exit 0" 0 \
	"$OPALCTL" slots --report --jwe "$T/keys/forged.jwe" --initramfs "$T/initrd.img" --json
expect "its key is current" "j['slots'][0]['servers'][0]['state'] == 'current'"
curl -sf "http://127.0.0.1:$A_PORT/adv" >"$T/adv.jws"
jose jwk gen -i '{"alg":"ES512"}' -o "$T/evil.jwk"
jose jwk pub -i "$T/evil.jwk" -o "$T/evil.pub"
/usr/bin/python3 -c '
import base64, json, sys
adv = json.load(open(sys.argv[1]))
p = adv["payload"]
keys = json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))
keys["keys"].append(json.load(open(sys.argv[2])))
json.dump(keys, open(sys.argv[3], "w"))' "$T/adv.jws" "$T/evil.pub" "$T/forged.keys"
jose jws sig -I "$T/forged.keys" -k "$T/evil.jwk" -o "$T/forged.jws"
kill "$A_PID"
sleep 0.3
/usr/bin/python3 -c '
import http.server, sys
body = open(sys.argv[2], "rb").read()
class Forged(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/jose+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Forged).serve_forever()' "$A_PORT" "$T/forged.jws" &
FORGED_PID=$!
PIDS="$PIDS $FORGED_PID"
_i=0
while [ $_i -lt 50 ] && ! curl -sf -m 2 "http://127.0.0.1:$A_PORT/adv" >/dev/null 2>&1; do sleep 0.1; _i=$((_i + 1)); done
expect_rc "with the forged advertisement: report exits 15" 15 \
	"$OPALCTL" slots --report --jwe "$T/keys/forged.jwe" --initramfs "$T/initrd.img" --json
expect "the server is invalid, not current; the slot cannot be told (check)" \
	"j['slots'][0]['servers'][0]['state'] == 'invalid' and 'does not verify' in j['slots'][0]['servers'][0]['why'] and j['slots'][0]['action'] == 'check'"
expect_rc "its text form: exit 15" 15 \
	"$OPALCTL" slots --report --jwe "$T/keys/forged.jwe" --initramfs "$T/initrd.img"
grep_file "and says the advertisement does not verify" "$T/out" "does not verify with it"
kill "$FORGED_PID"
sleep 0.3
if start_tang A "$A_PORT"; then ok "server A answers again"; else not_ok "server A answers again"; fi

# bind asks clevis nothing: a tang configuration without "thp" or "adv"
# (clevis would ask on the terminal whether to trust the keys, and a bind
# in a background process group would wait for ever) is refused before
# the drive is touched, an sss one's branches too. setsid: no terminal,
# should anything still ask.
expect_rc "bind of tang without thp or adv: usage error" 1 setsid -w "$OPALCTL" bind "$D" \
	-k "$T/admin.key" --range 1 --pin tang --config "{\"url\":\"http://127.0.0.1:$A_PORT\"}" \
	--jwe "$T/keys/nothp.jwe"
grep_file "it says what to give" "$T/err" 'has neither "thp" nor "adv": clevis would ask'
expect_rc "the same in an sss branch: usage error" 1 setsid -w "$OPALCTL" bind "$D" -k "$T/admin.key" \
	--range 1 --pin sss --jwe "$T/keys/nothp.jwe" \
	--config "{\"t\":1,\"pins\":{\"tang\":[{\"url\":\"http://127.0.0.1:$A_PORT\",\"thp\":\"$A_THP\"},{\"url\":\"http://127.0.0.1:$B_PORT\"}]}}"
grep_file "naming that server" "$T/err" "127.0.0.1:$B_PORT has neither"
if [ ! -e "$T/keys/nothp.jwe" ] && [ ! -e "$T/keys/nothp.jwe.new" ]; then ok "no JWE written"; else not_ok "no JWE written"; fi
# A JWE.new an interrupted bind left is removed, and said so.
: >"$T/keys/stale.jwe.new"
expect_rc "bind over a stale JWE.new: exit 0" 0 "$OPALCTL" bind "$D" -k "$T/admin.key" --range 1 \
	--pin tang --config "{\"url\":\"http://127.0.0.1:$A_PORT\",\"thp\":\"$A_THP\"}" --jwe "$T/keys/stale.jwe"
grep_file "it says it removed it" "$T/err" "removed $T/keys/stale.jwe.new, left by an interrupted bind"
if [ -s "$T/keys/stale.jwe" ] && [ ! -e "$T/keys/stale.jwe.new" ]; then ok "the JWE is there, no .new"; else not_ok "the JWE is there, no .new"; fi

# The command line.
expect_rc "regen without a selection: usage error" 1 "$OPALCTL" regen
expect_rc "regen --all and --jwe exclude each other" 1 "$OPALCTL" regen --all --jwe "$T/keys/sss.jwe"
expect_rc "regen --slot without a device: usage error" 1 "$OPALCTL" regen --slot 1 --table "$T/opaltab"
expect_rc "slots --report takes no key" 1 "$OPALCTL" slots --report -k "$T/admin.key" --table "$T/opaltab"
expect_rc "slots --initramfs without --report: usage error" 1 "$OPALCTL" slots "$D" -k "$T/admin.key" --initramfs "$T/initrd.img"
expect_rc "a missing --initramfs image is an error when asked for" 1 \
	"$OPALCTL" slots --report --table "$T/opaltab" --initramfs "$T/nonexistent.img"
expect_rc "regen of a name not in the table: usage error" 1 "$OPALCTL" regen --name nosuch --table "$T/opaltab"
[ "$failed" -eq 0 ]
