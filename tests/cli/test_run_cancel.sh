#!/usr/bin/env bash
# `carma run`'s cancels, against a stand-in daemon (fake_run_daemon.py) that makes the rare
# cases certain: a task that ended since carma run last looked has its cancel refused ("already
# done"), and is reported as it ended, not as running and "could not be cancelled"; a second
# signal that comes while the cancels are being sent stops the waiting (it was missed, and
# carma run waited two minutes more); a task whose cancel could not be sent is named with its
# file. The tasks go in one request (a batch), not held one by one and released; to a daemon
# that takes no batch (protocol version 1), held one by one, then released. Also: --output-dir
# with a shared daemon is said to do nothing, and an --output-dir that is not a directory is
# named with its terminal escapes shown escaped.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
command -v python3 >/dev/null || { echo "SKIP: needs python3"; exit 77; }
source "$(dirname "$0")/daemon_lib.sh"
unset CARMA_SOCKET SLURM_JOB_ID
FAKE=$(dirname "$0")/fake_run_daemon.py
FAKE_PID=
cd "$tmp"
printf 'name: quick\ncommand: sleep 1\nmemory: 1000\n' >quick.yaml

start_fake() { # MODE: a fake daemon on $tmp/fake.sock, its verbs in $tmp/verbs
    rm -f "$tmp/fake.sock" "$tmp/verbs"
    python3 "$FAKE" "$tmp/fake.sock" "$1" >"$tmp/verbs" &
    FAKE_PID=$!
    wait_until 10 test -S "$tmp/fake.sock" || fail "the fake daemon did not start"
}
stop_fake() { kill "$FAKE_PID" 2>/dev/null; wait "$FAKE_PID" 2>/dev/null; }
trap 'stop_fake; cleanup' EXIT
gone() { ! kill -0 "$1" 2>/dev/null; }

# --timeout runs out; the task ended meanwhile: its cancel is refused, and it is reported done.
start_fake ended
out=$("$CARMA" run --socket "$tmp/fake.sock" --timeout 0.3 --json quick.yaml 2>"$tmp/err")
rc=$?
[ $rc -eq 124 ] || fail "ended before its cancel: exit $rc: $(cat "$tmp/err")"
[ "$(jq -r '.[0].state' <<<"$out")" = done ] || fail "ended before its cancel: --json $out"
grep -qx 'task 1 done quick.yaml' "$tmp/err" && ! grep -q 'could not be cancelled' "$tmp/err" \
    || fail "ended before its cancel: $(cat "$tmp/err")"
[ "$(grep '^submit' "$tmp/verbs")" = "submit tasks" ] && ! grep -q release "$tmp/verbs" \
    || fail "the task should be submitted in one batch, not held: $(tr '\n' ' ' <"$tmp/verbs")"
stop_fake

# An older daemon, which knows no batch, is not sent one: the tasks are queued held one at a
# time and then released, as before, saying so.
start_fake old
cp quick.yaml quick2.yaml
out=$("$CARMA" run --socket "$tmp/fake.sock" quick.yaml quick2.yaml 2>"$tmp/err")
rc=$?
[ $rc -eq 0 ] && [ "$(grep -c 'done quick' <<<"$out")" = 2 ] || fail "older daemon: exit $rc: $out"
grep -q 'does not take several tasks in one request (an older carma?)' "$tmp/err" \
    || fail "older daemon: not said: $(cat "$tmp/err")"
[ "$(grep -E '^(submit|release)' "$tmp/verbs" | tr '\n' ,)" = \
    "submit held,submit held,release,release," ] \
    || fail "older daemon: $(tr '\n' ' ' <"$tmp/verbs")"
stop_fake

# SIGINT, and a second one while the cancel is on its way (answered after a second): carma run
# stops waiting for the task to end (130), saying it is still live.
start_fake slow
"$CARMA" run --socket "$tmp/fake.sock" quick.yaml >"$tmp/out" 2>"$tmp/err" &
run_pid=$!
wait_until 10 grep -qx show "$tmp/verbs" || fail "second signal: the task was never looked at"
kill -INT "$run_pid"
wait_until 10 grep -qx cancel "$tmp/verbs" || fail "second signal: no cancel sent"
kill -INT "$run_pid"
wait_until 10 gone "$run_pid" \
    || { fail "second signal: carma run still waits"; kill -KILL "$run_pid"; }
wait "$run_pid"
rc=$?
[ $rc -eq 130 ] && grep -q '1 task(s) still live' "$tmp/err" \
    || fail "second signal: exit $rc: $(cat "$tmp/err")"
stop_fake

# A daemon that stops answering (stopped with SIGSTOP, hung): a signal ends the request that
# waits on it (3 s later), and a second one the cancel that waits on it; carma run exits 130,
# saying the task may still run (it waited for ever on the reply).
start_fake hung
"$CARMA" run --socket "$tmp/fake.sock" quick.yaml >"$tmp/out" 2>"$tmp/err" &
run_pid=$!
looked_twice() { [ "$(grep -cx show "$tmp/verbs")" -ge 2 ]; }
wait_until 10 looked_twice || fail "hung: the task was not looked at"
kill -INT "$run_pid"
wait_until 10 grep -qx cancel "$tmp/verbs" || fail "hung: no cancel sent after a signal"
kill -INT "$run_pid"
wait_until 10 gone "$run_pid" || { fail "hung: carma run still waits"; kill -KILL "$run_pid"; }
wait "$run_pid"
rc=$?
[ $rc -eq 130 ] && grep -q 'task 1 (quick.yaml) could not be cancelled: interrupted' "$tmp/err" \
    && grep -q 'the daemon does not answer; the tasks not cancelled may still run' "$tmp/err" \
    || fail "hung: exit $rc: $(cat "$tmp/err")"
stop_fake

# A daemon that stops reading while a long request is sent to it (the batch: long commands, a
# large environment): a signal ends the send 3 s later; it blocked for good on the rest (a send cut
# short by the signal returns what it sent).
start_fake deaf
long=$(head -c 60000 /dev/zero | tr '\0' x)
for i in 1 2; do
    printf 'name: long%s\ncommand: echo %s\nmemory: 1000\n' $i "$long" >long$i.yaml
done
BIG=${long}${long:0:50000} "$CARMA" run --socket "$tmp/fake.sock" long1.yaml long2.yaml \
    >"$tmp/out" 2>"$tmp/err" &
run_pid=$!
wait_until 10 grep -qx unread "$tmp/verbs" || fail "deaf: the batch was not sent"
sleep 0.5
kill -INT "$run_pid"
wait_until 10 gone "$run_pid" || { fail "deaf: carma run still sends"; kill -KILL "$run_pid"; }
wait "$run_pid"
rc=$?
[ $rc -eq 130 ] && grep -q 'interrupted: the daemon did not take the request' "$tmp/err" \
    || fail "deaf: exit $rc: $(cat "$tmp/err")"
stop_fake

# The daemon gone when the task is to be cancelled: the task is named, with its file.
start_fake slow
"$CARMA" run --socket "$tmp/fake.sock" quick.yaml >"$tmp/out" 2>"$tmp/err" &
run_pid=$!
wait_until 10 grep -qx show "$tmp/verbs" || fail "daemon gone: the task was never looked at"
stop_fake
kill -TERM "$run_pid"
wait "$run_pid"
rc=$?
[ $rc -eq 143 ] || [ $rc -eq 1 ] || fail "daemon gone: exit $rc"
grep -q '^carma run: task 1 (quick.yaml) could not be cancelled: cannot reach the daemon' \
    "$tmp/err" || fail "daemon gone: the task not named: $(cat "$tmp/err")"

# --output-dir is a private daemon's: with a daemon that answers it is said to do nothing.
start_fake ended
"$CARMA" run --socket "$tmp/fake.sock" --timeout 0.3 --output-dir "$tmp" quick.yaml \
    >/dev/null 2>"$tmp/err"
grep -q -- 'warning: .*--output-dir are for a private daemon' "$tmp/err" \
    || fail "--output-dir with a shared daemon: not said: $(cat "$tmp/err")"
stop_fake

# An --output-dir that is no directory, named with a terminal escape: shown escaped.
out=$("$CARMA" run --private --gpu-backend sim --output-dir $'no\e[2Jdir' quick.yaml 2>&1)
[ $? -eq 1 ] && ! grep -q $'\e' <<<"$out" \
    && grep -qF -- '--output-dir no\x1b[2Jdir: not a' <<<"$out" \
    || fail "--output-dir's escapes: $(cat -v <<<"$out")"

[ $fails -eq 0 ] && echo "all run cancel checks passed"
exit $((fails > 0))
