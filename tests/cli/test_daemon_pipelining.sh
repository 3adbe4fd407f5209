#!/usr/bin/env bash
# A client that pipelines requests is served in full: more complete requests than one turn of
# the loop handles (512) arriving in one write are all answered without waiting for more input.
set -u
CARMA=$1
if ! command -v python3 >/dev/null; then
    echo "SKIP: needs python3 (to talk to the socket)"
    exit 77
fi
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"

start_daemon --sim-gpus 1xA100-40GB --set sample_interval_s=0.5

# 1000 empty lines and a ping in one write: the ping is the 1001st line, two turns later.
out=$(python3 - "$SOCK" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.settimeout(5)
s.sendall(b"\n" * 1000 + b'{"verb": "ping"}\n')
try:
    print(s.recv(4096).decode().strip())
except socket.timeout:
    print("no reply within 5 s")
PY
)
grep -q '"version"' <<<"$out" || fail "the ping after 1000 lines in one write: $out"

"$CARMA" queue >/dev/null || fail "the daemon should still serve others"
stop_daemon

[ $fails -eq 0 ] && echo PASS
exit $((fails > 0))
