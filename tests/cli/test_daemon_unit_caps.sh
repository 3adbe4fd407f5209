#!/usr/bin/env bash
# The daemon as carma.service runs it: root with only the unit's CapabilityBoundingSet. Another
# user's task launches (its log files made the submitter's: no CAP_FOWNER to chmod them after
# the chown; every such task failed "launch failed: .../stdout: Operation not permitted") and
# `carma logs` gives its output (the files are the submitter's, 0600: without the right to
# read them the daemon sent nothing, and logs printed nothing, exit 0). Needs root, setpriv.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
UNIT=$(dirname "$CARMA")/carma.service
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
    echo "SKIP: needs root and setpriv"
    exit 77
fi
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g')
[ -n "$caps" ] || { echo "FAIL: $UNIT has no CapabilityBoundingSet"; exit 1; }
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)

setpriv --bounding-set="-all,$caps" "$CARMA" daemon --socket "$SOCK" --state "$STATE" \
    --gpu-backend sim --set state_min_free_mib=0 --set sample_interval_s=0.2 \
    >/dev/null 2>>"$tmp/daemon.log" &
DAEMON_PID=$!
wait_until 10 "$CARMA" queue || fail "daemon did not start: $(cat "$tmp/daemon.log")"
id=$(cd "$tmp" && "${NOBODY[@]}" "$CARMA" submit -- echo hello-from-nobody) || fail "submit"
ended() { [[ "$(task_state "$1")" =~ ^(done|failed)$ ]]; }
wait_until 10 ended "$id" \
    || fail "task $id did not end"
task_is "$id" done || fail "task $id of another user: $(task_state "$id"): $(cat "$tmp/daemon.log")"
out=$("${NOBODY[@]}" "$CARMA" logs "$id" 2>&1) || fail "logs (owner): $out"
[ "$out" = hello-from-nobody ] || fail "logs of task $id for its owner: '$out'"
out=$("$CARMA" logs "$id" 2>&1) || fail "logs (root): $out"
[ "$out" = hello-from-nobody ] || fail "logs of task $id for root: '$out'"
stop_daemon
[ $fails -eq 0 ] || { cat "$tmp/daemon.log"; exit 1; }
echo PASS
