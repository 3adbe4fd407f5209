#!/usr/bin/env bash
# Daemons that misbehave. One that takes connections but never answers (stopped with SIGSTOP,
# hung): `carma wait --timeout` still ends when its --timeout runs out (124, the tasks it was
# never told of named unknown, null in --json), and a live `carma top` still ends on Ctrl-C
# (SIGINT) or SIGTERM, exit 0 as between frames, while its request waits. One whose reply
# names no task state: `carma wait` says so (exit 1) rather than crash or call it ended.
set -u
CARMA=$(realpath "$1")
command -v python3 >/dev/null || { echo "SKIP: needs python3 (the stand-in daemons)"; exit 77; }
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d)
silent=
trap '[ -n "$silent" ] && kill "$silent" 2>/dev/null; rm -rf "$tmp"' EXIT
export CARMA_SOCKET=$tmp/silent.sock CARMA_CONFIG=

# the stand-in: accepts, reads, never replies (each connection kept open)
python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(64)
open(sys.argv[2], "w").close()
held = []
while True:
    c, _ = s.accept(); held.append(c)' "$CARMA_SOCKET" "$tmp/ready" &
silent=$!
for _ in $(seq 50); do [ -e "$tmp/ready" ] && break; sleep 0.1; done
[ -e "$tmp/ready" ] || fail "the stand-in daemon did not start"

# elapsed CMD...: runs CMD (killed at 15 s: exit 137), sets $rc, $out and $secs
elapsed() {
    local t0=$(date +%s.%N)
    out=$(timeout -s KILL 15 "$@" 2>&1); rc=$?
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
}
elapsed "$CARMA" wait --timeout 1 5 7
[ "$rc" -eq 124 ] || fail "wait --timeout 1, silent daemon: exit $rc after ${secs}s, want 124: $out"
awk -v s="$secs" 'BEGIN { exit !(s < 5) }' || fail "wait --timeout 1 took ${secs}s"
grep -qx "task 5 unknown" <<<"$out" && grep -qx "task 7 unknown" <<<"$out" \
    || fail "wait should name the tasks it was never told of as unknown: $out"
grep -q "ran out waiting for the daemon's answer" <<<"$out" || fail "wait's message: $out"
out=$(timeout -s KILL 15 "$CARMA" wait --json --timeout 0.5 5 2>/dev/null); rc=$?
[ "$rc" -eq 124 ] && [ "$(jq -c . <<<"$out")" = '[{"id":5,"state":null}]' ] \
    || fail "wait --json: exit $rc: $out"

for sig in INT TERM; do
    "$CARMA" top --interval 0.5 >"$tmp/top.out" 2>&1 </dev/null &
    top=$!
    sleep 1
    kill -"$sig" "$top"
    for _ in $(seq 30); do kill -0 "$top" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$top" 2>/dev/null; then
        fail "top did not end on SIG$sig while the daemon was silent"
        kill -KILL "$top"
    fi
    wait "$top"; rc=$?
    [ "$rc" -eq 0 ] || fail "top on SIG$sig: exit $rc, want 0: $(cat "$tmp/top.out")"
done

kill "$silent" 2>/dev/null; wait "$silent" 2>/dev/null; silent=

# the stand-in: every request answered ok with a task that has no state
export CARMA_SOCKET=$tmp/odd.sock
python3 -c 'import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
open(sys.argv[2], "w").close()
while True:
    c, _ = s.accept(); c.recv(65536)
    c.sendall((json.dumps({"ok": True, "task": {"id": 5}}) + "\n").encode()); c.close()' \
    "$CARMA_SOCKET" "$tmp/odd.ready" &
silent=$!
for _ in $(seq 50); do [ -e "$tmp/odd.ready" ] && break; sleep 0.1; done
elapsed "$CARMA" wait --timeout 5 5
[ "$rc" -eq 1 ] && grep -q "the daemon's reply on task 5 names no state" <<<"$out" \
    || fail "wait on a reply with no state: exit $rc: $out"

[ $fails -eq 0 ] && echo PASS
exit $((fails > 0))
