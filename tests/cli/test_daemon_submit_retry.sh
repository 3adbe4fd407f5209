#!/usr/bin/env bash
# `carma submit` sends a random 128-bit idempotency key with each submission (stored with the
# task) and sends the submission again when the daemon cannot be reached or no reply comes:
# here the daemon starts only after the first try failed, and the submission still lands,
# once. (The daemon's side, a repeat answered with the first id, is test_daemon_protocol's.)
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"

"$CARMA" submit --name late -- true >"$tmp/id" 2>"$tmp/err" &
sub=$!
sleep 0.1 # its first try finds no daemon
start_daemon --sim-gpus 1xA100-40GB --set sample_interval_s=0.2
wait "$sub" || fail "submit did not retry until the daemon answered: $(cat "$tmp/err")"
[ "$(cat "$tmp/id")" = 1 ] || fail "id: $(cat "$tmp/id")"
[ "$("$CARMA" queue --all --json | jq length)" = 1 ] || fail "one task expected: $("$CARMA" queue --all)"
if command -v sqlite3 >/dev/null; then
    key=$(sqlite3 "$STATE/carma.db" "SELECT submit_key FROM tasks WHERE id = 1")
    [[ $key =~ ^[0-9a-f]{32}$ ]] || fail "stored key should be 32 hex digits: '$key'"
fi
stop_daemon
# No daemon at all: the retries end with the reason.
out=$("$CARMA" submit -- true 2>&1); [ $? -eq 1 ] || fail "no daemon: exit 1"
grep -q "cannot reach the daemon" <<<"$out" || fail "no daemon message: $out"

[ $fails -eq 0 ] && echo PASS
exit $((fails > 0))
