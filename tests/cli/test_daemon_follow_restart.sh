#!/usr/bin/env bash
# A daemon restart (systemctl restart carma) keeps the tasks, so the commands that follow them
# (wait, logs --follow) ask again for a while rather than fail: they end as the task does,
# saying once that they asked again; a task that ended meanwhile is followed to its end, and a
# wait --timeout that runs out meanwhile exits 124. One that never reached a daemon fails at
# once.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
start_daemon
id=$("$CARMA" submit --mem 1G -- sh -c 'echo one; sleep 4; echo two') || fail "submit"
wait_until 10 task_is "$id" running || fail "the task did not start: $(task_state "$id")"
"$CARMA" wait "$id" >"$tmp/wait.out" 2>"$tmp/wait.err" &
waiter=$!
"$CARMA" logs --follow "$id" >"$tmp/logs.out" 2>"$tmp/logs.err" &
follower=$!
sleep 1
stop_daemon
sleep 1
start_daemon
wait "$waiter"
rc=$?
[ $rc -eq 0 ] && grep -qx "task $id done" "$tmp/wait.out" \
    || fail "wait across a restart: exit $rc: $(cat "$tmp/wait.out" "$tmp/wait.err")"
grep -q "asking again for up to" "$tmp/wait.err" || fail "wait did not say: $(cat "$tmp/wait.err")"
wait "$follower"
rc=$?
[ $rc -eq 0 ] && [ "$(cat "$tmp/logs.out")" = "$(printf 'one\ntwo')" ] \
    || fail "logs --follow across a restart: exit $rc: $(cat "$tmp/logs.out" "$tmp/logs.err")"
# a --timeout that runs out while the daemon is away: 124 (not seen to end), not 1
id=$("$CARMA" submit --mem 1G -- sh -c 'echo three; sleep 1; echo four') || fail "submit 2"
wait_until 10 task_is "$id" running || fail "task 2 did not start: $(task_state "$id")"
"$CARMA" wait --timeout 3 "$id" >"$tmp/wait2.out" 2>"$tmp/wait2.err" &
waiter=$!
"$CARMA" logs --follow "$id" >"$tmp/logs2.out" 2>"$tmp/logs2.err" &
follower=$!
sleep 0.5
stop_daemon
wait "$waiter"
rc=$?
[ $rc -eq 124 ] && grep -q "ran out waiting for the daemon" "$tmp/wait2.err" \
    || fail "wait --timeout, the daemon away: exit $rc: $(cat "$tmp/wait2.out" "$tmp/wait2.err")"
# the task ended while the daemon was away: the follower gets the rest once it is back
sleep 1
start_daemon
wait "$follower"
rc=$?
[ $rc -eq 0 ] && [ "$(cat "$tmp/logs2.out")" = "$(printf 'three\nfour')" ] \
    || fail "logs --follow of a task that ended while the daemon was away: exit $rc: \
$(cat "$tmp/logs2.out" "$tmp/logs2.err")"
stop_daemon
# no daemon from the start: no waiting
start=$(date +%s)
"$CARMA" wait "$id" >/dev/null 2>&1
rc=$?
[ $rc -eq 1 ] && [ $(($(date +%s) - start)) -lt 5 ] || fail "wait with no daemon: exit $rc, slow"
echo "$fails failure(s)"
[ $fails -eq 0 ]
