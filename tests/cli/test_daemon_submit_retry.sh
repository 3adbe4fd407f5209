#!/usr/bin/env bash
# `carma submit` sends a random 128-bit idempotency key with each submission (stored with the
# task) and sends the submission again when the daemon cannot be reached or no reply comes:
# here the daemon starts only after the first try failed, and the submission still lands,
# once. A key is one task per uid: as root, another user's submission with root's key is a
# task of its own. (A repeat in one batch of requests: test_daemon_protocol.)
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
# A key is one task per submitting uid: another user's submission with the same key is a task
# of its own (and learns nothing of the first).
PY=/usr/bin/python3
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && "${NOBODY[@]}" "$PY" -c '' 2>/dev/null; then
    submit_key() { # prints "ID REPEAT" of a submit with key 00..ff, run through "$@"
        "$@" "$PY" -c 'import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b"{\"verb\":\"submit\",\"key\":\"00112233445566778899aabbccddeeff\",\"task\":{\"command\":\"true\",\"cwd\":\"/\"}}\n")
r = json.loads(s.makefile().readline()); print(r.get("id"), r.get("repeat", False))' "$SOCK"
    }
    [ "$(submit_key env)" = "2 False" ] || fail "root's keyed submit"
    [ "$(submit_key env)" = "2 True" ] || fail "root's repeat"
    [ "$(submit_key "${NOBODY[@]}")" = "3 False" ] || fail "nobody's submit with root's key should be a task of its own"
    [ "$(submit_key "${NOBODY[@]}")" = "3 True" ] || fail "nobody's repeat"
fi
stop_daemon
# No daemon at all: the retries end with the reason.
out=$("$CARMA" submit -- true 2>&1); [ $? -eq 1 ] || fail "no daemon: exit 1"
grep -q "cannot reach the daemon" <<<"$out" || fail "no daemon message: $out"

[ $fails -eq 0 ] && echo PASS
exit $((fails > 0))
