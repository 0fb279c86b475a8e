# tap-lib.sh: what the host shell tests with Clevis and Tang share. Sourced
# (POSIX sh) after setting T, the test's scratch directory; each test prints
# its own plan. Counts: n (tests), failed.
n=0
failed=0
PIDS=

tap_cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap tap_cleanup EXIT

ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
# check DESC CMD...: the command succeeds
check() {
	_d=$1
	shift
	if "$@" >"$T/out" 2>"$T/err"; then ok "$_d"; else not_ok "$_d (exit $?)"; sed 's/^/# /' "$T/out" "$T/err"; fi
}
# expect_rc DESC RC CMD...: the command exits with RC
expect_rc() {
	_d=$1
	_want=$2
	shift 2
	"$@" >"$T/out" 2>"$T/err"
	_rc=$?
	if [ "$_rc" -eq "$_want" ]; then ok "$_d"; else not_ok "$_d (exit $_rc, want $_want)"; sed 's/^/# /' "$T/out" "$T/err"; fi
}
# grep_out DESC PATTERN: the last command's stdout matches
grep_out() {
	if grep -q -- "$2" "$T/out"; then ok "$1"; else not_ok "$1"; sed 's/^/# /' "$T/out"; fi
}

# need TOOL...: skip the whole test when one is missing (a plan of 1..0
# with the reason); called before the test prints its own plan.
need() {
	for _tool in "$@"; do
		if ! command -v "$_tool" >/dev/null 2>&1; then
			echo "1..0 # SKIP $_tool is missing: run scripts/bootstrap"
			exit 0
		fi
	done
}

# A free loopback port.
free_port() {
	/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# sig_thp DIR: the thumbprint of the advertised signing key of a Tang key directory.
sig_thp() {
	for _k in "$1"/*.jwk; do
		if grep -q '"verify"' "$_k"; then jose jwk thp -i "$_k"; return; fi
	done
}

# start_tang NAME [PORT]: a Tang server (tangd behind socat) on a loopback
# port, its keys made once per NAME in $T/NAME; sets NAME_PID, NAME_PORT
# and NAME_THP (its signing key: no interactive trust question). Waits,
# bounded, until it answers.
start_tang() {
	[ -d "$T/$1" ] || { mkdir -p "$T/$1" && /usr/libexec/tangd-keygen "$T/$1" >/dev/null 2>&1; }
	_port=${2:-$(free_port)}
	socat "TCP-LISTEN:$_port,bind=127.0.0.1,fork,reuseaddr" \
		SYSTEM:"/usr/libexec/tangd $T/$1 2>>$T/$1.log" >/dev/null 2>&1 &
	PIDS="$PIDS $!"
	eval "${1}_PID=$!"
	eval "${1}_PORT=$_port"
	eval "${1}_THP=$(sig_thp "$T/$1")"
	_i=0
	while [ $_i -lt 50 ]; do
		curl -sf -m 2 "http://127.0.0.1:$_port/adv" >/dev/null 2>&1 && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# A loopback port whose next one is free too (swtpm's server and control ports).
free_port_pair() {
	/usr/bin/python3 -c '
import socket
while True:
    a, b = socket.socket(), socket.socket()
    a.bind(("127.0.0.1", 0))
    p = a.getsockname()[1]
    try:
        b.bind(("127.0.0.1", p + 1))
    except OSError:
        continue
    finally:
        a.close()
        b.close()
    print(p)
    break'
}

# alive PID: the process runs (not gone, not a zombie)
alive() {
	_st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
	[ -n "$_st" ] && [ "$_st" != Z ]
}

# start_swtpm: a software TPM on loopback ports, for clevis's tpm2 pin: its
# tpm2-tools find it through TPM2TOOLS_TCTI (exported), one of the few
# variables opalctl passes on to clevis (spawn_child: the TPM's selection,
# TMPDIR, nothing else of its environment). Waits, bounded, until it takes
# connections; a port taken in between (another test's server) or a state
# directory still locked by the one before: started again, on new ports.
# $! is the swtpm afterwards.
start_swtpm() {
	mkdir -p "$T/tpm"
	_try=0
	while [ $_try -lt 5 ]; do
		_try=$((_try + 1))
		TPMPORT=$(free_port_pair)
		swtpm socket --tpm2 --tpmstate dir="$T/tpm" --flags not-need-init,startup-clear \
			--server type=tcp,port=$TPMPORT,bindaddr=127.0.0.1 \
			--ctrl type=tcp,port=$((TPMPORT + 1)),bindaddr=127.0.0.1 >>"$T/swtpm.log" 2>&1 &
		_swtpm=$!
		PIDS="$PIDS $_swtpm"
		export TPM2TOOLS_TCTI="swtpm:host=127.0.0.1,port=$TPMPORT"
		_i=0
		while [ $_i -lt 100 ] && alive $_swtpm; do
			if /usr/bin/python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' \
				"$TPMPORT" 2>/dev/null; then
				return 0
			fi
			sleep 0.1
			_i=$((_i + 1))
		done
		kill "$_swtpm" 2>/dev/null
		while alive "$_swtpm"; do sleep 0.1; done
		echo "# swtpm did not start on port $TPMPORT (try $_try)" >>"$T/swtpm.log"
	done
	return 1
}
