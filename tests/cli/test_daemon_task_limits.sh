#!/usr/bin/env bash
# No user can fill the daemon's memory and disk with tasks: a submission's name, command and
# paths are bounded (the client says so, exit 2; the daemon refuses what another client sends),
# and a user has at most max_tasks_per_user tasks not ended (each of an --array counts, and an
# array that would pass it is refused whole; root is not limited; an ended task no longer
# counts). The second part acts as nobody (uid 65534): it needs root and setpriv, and is
# skipped otherwise.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
# send_task JSON: the daemon's answer (its error, or the id) to a submit of that task, sent as
# any client could, past carma's own checks (the JSON on stdin: it is longer than an argument).
send_task() {
    python3 -c 'import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(json.dumps({"verb": "submit", "task": json.load(sys.stdin)}).encode() + b"\n")
r = json.loads(s.makefile().readline()); print(r.get("error") or r.get("id"))' "$SOCK" <<<"$1"
}
long() { head -c "$1" /dev/zero | tr '\0' x; }

start_daemon --sim-gpus 1xA100-40GB --set sample_interval_s=0.5 --set max_tasks_per_user=3
out=$("$CARMA" submit --name "$(long 256)" -- true 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "task.name: 256 bytes, at most 255" <<<"$out" || fail "long name: rc $rc: $out"
out=$("$CARMA" submit -- echo "$(long 129020)" 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "task.command: 129025 bytes, at most 129024" <<<"$out" ||
    fail "long command: rc $rc: ${out:0:300}"
for blank in "" " "; do # no program at all: refused now, not a task that fails "not found"
    out=$("$CARMA" submit -- "$blank" x 2>&1); rc=$?
    [ $rc -eq 2 ] && grep -q "the program to run is a blank word" <<<"$out" \
        || fail "blank program '$blank': rc $rc: $out"
done
out=$(send_task "{\"command\": \"echo $(long 200000)\", \"cwd\": \"/\"}")
grep -q "^submission refused: task.command: 200005 bytes, at most 129024" <<<"$out" ||
    fail "daemon, long command: ${out:0:300}"
out=$(send_task "{\"command\": \"true\", \"cwd\": \"/$(long 4095)\"}")
grep -q "^submission refused: task.cwd: 4096 bytes, at most 4095" <<<"$out" || fail "daemon, long cwd: ${out:0:300}"
out=$(send_task '{"command": "true", "cwd": "/", "name": ""}')
[ "$out" = "submission refused: task.name: empty" ] || fail "daemon, empty name: $out"
[ "$("$CARMA" queue --all --json | jq length)" -eq 0 ] || fail "a refused submission was stored"
# What is within the bounds is taken.
id=$("$CARMA" submit --hold --name "$(long 255)" -- echo "$(long 129019)") || fail "bounds refused"
"$CARMA" cancel "$id" >/dev/null || fail "cancel $id"

NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
    echo "SKIP: max_tasks_per_user needs root and setpriv to act as a second user (uid 65534)"
    stop_daemon
    exit $((fails > 0))
fi
as_nobody() { "${NOBODY[@]}" "$@"; }
nobody_live() { "$CARMA" queue --json --user nobody | jq length; }
ids=
for i in 1 2; do
    ids="$ids $(as_nobody "$CARMA" submit --hold --mem 1G -- sleep 60)" || fail "nobody's task $i"
done
# An array's tasks count one by one: two more would make four; and an array is queued all or
# none, as Slurm's: neither is made.
out=$(as_nobody "$CARMA" submit --mem 1G --array 1-2 -- sleep 60 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "submission refused: you have 2 tasks not ended and the array adds 2 \
(max_tasks_per_user = 3)" <<<"$out" || fail "the array past the cap: rc $rc: $out"
[ "$(nobody_live)" = 2 ] || fail "a refused array left tasks behind: $("$CARMA" queue)"
[ "$("$CARMA" queue --all --json | jq '[.[] | select(.array_index != null and .attempts > 0)]
    | length')" = 0 ] || fail "a refused array's task started: $("$CARMA" queue --all)"
as_nobody "$CARMA" submit --hold --mem 1G -- sleep 60 >/dev/null || fail "nobody's task 3"
[ "$(nobody_live)" = 3 ] || fail "nobody should have 3 tasks: $("$CARMA" queue)"
id=$("$CARMA" submit --hold --mem 1G -- sleep 60) || fail "root is not limited"
# A task that ended no longer counts.
first=$(awk '{print $1}' <<<"$ids")
as_nobody "$CARMA" cancel "$first" >/dev/null || fail "cancel $first"
as_nobody "$CARMA" submit --hold --mem 1G -- sleep 60 >/dev/null || fail "a freed place is taken"
[ "$(nobody_live)" = 3 ] || fail "nobody should have 3 tasks again: $("$CARMA" queue)"
stop_daemon

[ $fails -eq 0 ] && echo PASS
exit $((fails > 0))
