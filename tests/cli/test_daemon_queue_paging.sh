#!/usr/bin/env bash
# Only the live tasks (queued, running) stay in the daemon's memory; ended ones are answered
# from its database: `show`, `logs`, and `queue --all`, which the daemon filters (--state,
# --user) and pages (--limit, --after) itself. The number of tasks in memory is in the
# ping reply (tasks_in_memory); it stays at the live ones after a restart too.
set -u
CARMA=$1
if ! command -v python3 >/dev/null; then
    echo "SKIP: needs python3 (to send a ping)"
    exit 0
fi
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
# raw REQUEST FIELD: sends one request line, prints the reply's FIELD
raw() {
    python3 -c 'import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(sys.argv[2].encode() + b"\n")
print(json.loads(s.makefile().readline()).get(sys.argv[3]))' "$SOCK" "$1" "$2"
}
in_memory() { raw '{"verb":"ping"}' tasks_in_memory; }
all_ended() { "$CARMA" queue --all --json | jq -e 'length == 5 and all(.[]; .state == "done")'; }

start_daemon --sim-gpus 1xA100-40GB --set sample_interval_s=0.2
for i in 1 2 3 4 5; do "$CARMA" submit --name "quick$i" -- echo "out $i" >/dev/null || fail "submit $i"; done
wait_until 20 all_ended || fail "the quick tasks did not end: $("$CARMA" queue --all)"
n=$(in_memory); [ "$n" = 0 ] || fail "ended tasks kept in memory: tasks_in_memory = $n"
"$CARMA" submit --name long1 -- sleep 30 >/dev/null && "$CARMA" submit --name long2 -- sleep 30 >/dev/null \
    || fail "submit long"
n=$(in_memory); [ "$n" = 2 ] || fail "the two live tasks should be in memory, tasks_in_memory = $n"

# An ended task, from the database.
[ "$("$CARMA" show --json 3 | jq -r '.name + " " + .state')" = "quick3 done" ] || fail "show 3: $("$CARMA" show 3 2>&1)"
[ "$("$CARMA" logs 3)" = "out 3" ] || fail "logs of an ended task: $("$CARMA" logs 3 2>&1)"
out=$("$CARMA" cancel 3 2>&1) && fail "cancelled an ended task"
grep -q "task 3 is already done" <<<"$out" || fail "cancel message: $out"
out=$("$CARMA" show 99 2>&1) && fail "show 99"
grep -q "no task 99" <<<"$out" || fail "show 99 message: $out"

# The listing: filtered and paged by the daemon.
[ "$("$CARMA" queue --json | jq -c 'map(.name)')" = '["long2","long1"]' ] || fail "live listing: $("$CARMA" queue)"
[ "$("$CARMA" queue --all --json | jq -c 'map(.id)')" = '[1,2,3,4,5,6,7]' ] || fail "--all: $("$CARMA" queue --all)"
out=$("$CARMA" queue --all --limit 2 --json 2>"$tmp/err") || fail "--limit 2"
[ "$(jq -c 'map(.id)' <<<"$out")" = '[1,2]' ] || fail "--limit 2: $out"
grep -q -- "--after 2" "$tmp/err" || fail "--limit should say how to go on: $(cat "$tmp/err")"
[ "$("$CARMA" queue --all --after 2 --limit 3 --json 2>/dev/null | jq -c 'map(.id)')" = '[3,4,5]' ] || fail "--after 2 --limit 3"
[ "$("$CARMA" queue --state done --json | jq -c 'map(.id)')" = '[1,2,3,4,5]' ] || fail "--state done"
[ "$("$CARMA" queue --state done --after 3 --json | jq -c 'map(.id)')" = '[4,5]' ] || fail "--state done --after 3"
# the live listing is not paged: --after there would be ignored, so it is refused
for s in "" "--state queued" "--state running"; do
    out=$("$CARMA" queue $s --after 1 2>&1); rc=$?
    [ $rc -eq 2 ] && grep -q -- "--after goes with --all or an ended --state" <<<"$out" \
        || fail "queue $s --after 1: exit $rc: $out"
done
[ "$("$CARMA" queue --state running --json | jq -c 'map(.name)')" = '["long1"]' ] || fail "--state running"
[ "$("$CARMA" queue --all --user root --json | jq length)" = 7 ] || fail "--user root"
# squeue's and sacct's short forms: -u USER, and -t (squeue) or -s (sacct) STATE
[ "$("$CARMA" queue -u root -t done --json | jq -c 'map(.id)')" = '[1,2,3,4,5]' ] \
    || fail "queue -u root -t done: $("$CARMA" queue -u root -t done 2>&1)"
[ "$("$CARMA" history -u root -s done --json | jq -c 'map(.id)')" = '[1,2,3,4,5]' ] \
    || fail "history -u root -s done: $("$CARMA" history -u root -s done 2>&1)"
[ "$("$CARMA" queue --all --user nobody --json | jq length)" = 0 ] || fail "--user nobody"
[ "$("$CARMA" queue --all --user 0 --json | jq length)" = 7 ] || fail "--user 0: root's uid"
# a uid without a passwd entry: the name the daemon records such a user's tasks under
out=$("$CARMA" queue --all --user 4000000123 --json) || fail "--user 4000000123: $out"
[ "$(jq length <<<"$out")" = 0 ] || fail "--user 4000000123: $out"
# a name that is no user's: squeue's "Invalid user", a usage error naming it
for c in queue history; do
    out=$("$CARMA" $c --user nosuchuser 2>&1); rc=$?
    [ $rc -eq 2 ] || fail "$c --user nosuchuser: exit $rc, want 2: $out"
    grep -q -- "--user: no user named 'nosuchuser'" <<<"$out" || fail "$c --user message: $out"
done
out=$(raw '{"verb":"queue","state":"sleeping"}' error)
grep -q "'state' must be one of queued, running, done, failed, cancelled" <<<"$out" \
    || fail "the daemon's state message: $out"
# for the CLI a usage error, named by its flag, found before any request
for c in queue history; do
    out=$("$CARMA" $c --state sleeping 2>&1); rc=$?
    [ $rc -eq 2 ] || fail "$c --state sleeping: exit $rc, want 2"
    want="--state: expected one of queued, running, done, failed, cancelled, timeout; got 'sleeping'"
    grep -q -- "$want" <<<"$out" || fail "$c state message: $out"
done
"$CARMA" queue --limit 0 >/dev/null 2>&1; [ $? -eq 2 ] || fail "--limit 0 should be a usage error"

# After a restart only the live tasks are loaded; the ended ones are still answered.
stop_daemon
start_daemon --sim-gpus 1xA100-40GB --set sample_interval_s=0.2
n=$(in_memory); [ "$n" = 2 ] || fail "after a restart, tasks_in_memory = $n (2 live)"
[ "$("$CARMA" queue --all --json | jq length)" = 7 ] || fail "--all after a restart"
[ "$("$CARMA" show --json 5 | jq -r .state)" = done ] || fail "show 5 after a restart"
"$CARMA" cancel 6 >/dev/null; "$CARMA" cancel 7 >/dev/null
stop_daemon

[ $fails -eq 0 ] && echo PASS
exit $((fails > 0))
