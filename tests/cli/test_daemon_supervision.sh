#!/usr/bin/env bash
# The daemon's view of its supervisors under stress: a daemon that has run out of descriptors
# (it cannot open an attempt's files) keeps a healthy task running rather than failing it as
# "its supervisor died"; a cancel gives the task's SIGTERM handler its grace, so a training
# script's checkpoint-on-SIGTERM is written.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
printf 'sample_interval_s = 0.1\ngrace_s = 0.2\nkill_grace_s = 10\n' >"$tmp/carma.conf"
start_daemon --sim-gpus 2xA100-40GB --config "$tmp/carma.conf"

# No descriptor left: every open of the daemon fails (EMFILE) for a while, then it recovers.
a=$("$CARMA" submit -- sleep 3)
running() { [ "$(task_state "$a")" = running ] && [ -s "$STATE/attempts/$a.1/started" ]; }
wait_until 10 running || fail "task $a did not start"
prlimit --pid "$DAEMON_PID" --nofile=3:4096 || fail "prlimit"
sleep 1 # five looks at the attempt, none of which can open a file
prlimit --pid "$DAEMON_PID" --nofile=1024:4096
[ "$(task_state "$a")" = running ] || fail "task $a is $(task_state "$a") after EMFILE, should run on"
ended() { [ "$(task_state "$a")" = done ]; }
wait_until 10 ended || fail "task $a should end done, is $(task_state "$a")"
grep -q "its supervisor died" "$tmp/daemon.log" && fail "a running task was taken for lost"

# Cancel: the task traps SIGTERM, takes its time to write a checkpoint, and exits.
mkdir "$tmp/work"
b=$(cd "$tmp/work" && "$CARMA" submit -- sh -c \
    'trap "sleep 0.5; echo saved > ckpt; exit 0" TERM; touch ready; while :; do sleep 0.1; done')
wait_until 10 test -e "$tmp/work/ready" || fail "task $b did not start"
"$CARMA" cancel "$b" >/dev/null || fail "cancel $b"
cancelled() { [ "$(task_state "$b")" = cancelled ]; }
wait_until 10 cancelled || fail "task $b should be cancelled, is $(task_state "$b")"
[ "$(cat "$tmp/work/ckpt" 2>/dev/null)" = saved ] || fail "the task's checkpoint on SIGTERM was not written"
[ "$("$CARMA" show --json "$b" | jq .last_attempt.exit_code)" = 0 ] || fail "task $b exited 0 on SIGTERM: $("$CARMA" show --json "$b")"
# A task that ignores SIGTERM is killed after kill_grace_s: its own status says so (SIGKILL),
# not that of a shell that wrapped it and died of the SIGTERM at once.
c=$(cd "$tmp/work" && "$CARMA" submit -- sh -c 'trap "" TERM; touch ready2; sleep 30; echo after')
wait_until 10 test -e "$tmp/work/ready2" || fail "task $c did not start"
"$CARMA" cancel "$c" >/dev/null || fail "cancel $c"
killed() { [ "$(task_state "$c")" = cancelled ]; }
wait_until 15 killed || fail "task $c should be cancelled, is $(task_state "$c")"
[ "$("$CARMA" show --json "$c" | jq .last_attempt.signal)" = 9 ] || fail "task $c: signal $("$CARMA" show --json "$c" | jq .last_attempt.signal), expected 9"
stop_daemon

echo "$fails failure(s)"
[ $fails -eq 0 ]
