#!/usr/bin/env bash
# A restarted daemon finds the GPUs of running tasks by UUID, not by its own GPU numbers,
# which follow the GPUs it sees and uses (the fake libnvidia-ml.so.1): with GPU 0 turned to MIG
# while it was down, a task on NVML GPU 1 is now its GPU 0, and a new exclusive task must go to
# the GPU nobody uses, not onto the task's. A task still running on a GPU the daemon no longer
# sees makes it refuse to start, naming the task, the GPU and the process; once that task has
# ended, the daemon starts and records its end, and that end frees no GPU another task runs on.
# A GPU lost at start (its UUID unknown) may be the task's: the recorded numbers stand then.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
use_fake_nvml

gpu() { echo "gpu uuid=GPU-$1 name=\"NVIDIA A100-SXM4-40GB\" total=40960 used=0 mig=${2:-0}"; }
{ gpu aaaa; gpu bbbb; gpu cccc; } >"$tmp/scenario"
export FAKE_NVML_SCENARIO=$tmp/scenario
printf 'policy = exclusive\ngrace_s = 0.2\nsample_interval_s = 0.2\nkill_grace_s = 1\n' \
    >"$tmp/carma.conf"
start_daemon --gpu-backend nvml --config "$tmp/carma.conf"

# exclusive: the first task takes GPU 0 and ends; the second runs on GPU 1 (GPU-bbbb)
a=$("$CARMA" submit --name short -- sleep 0.5)
b=$("$CARMA" submit --name long -- sh -c "echo \"\$CUDA_VISIBLE_DEVICES\" >$tmp/b; exec sleep 60")
wait_until 10 task_is "$a" done || fail "task $a: $(task_state "$a")"
wait_until 10 task_is "$b" running || fail "task $b: $(task_state "$b")"
wait_until 5 test -s "$tmp/b"
[ "$(cat "$tmp/b")" = GPU-bbbb ] || fail "task $b runs on $(cat "$tmp/b")"
b_pid=$(cat "$STATE/attempts/$b.1/started")
[ "$(sqlite3 "$STATE/carma.db" "SELECT gpus, gpu_uuids FROM attempts WHERE task_id=$b")" = \
    "1|GPU-bbbb" ] || fail "attempt row: $(sqlite3 "$STATE/carma.db" "SELECT * FROM attempts WHERE task_id=$b")"
kill -KILL "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=

# GPU 0 turned to MIG while the daemon was down: GPU-bbbb is the daemon's GPU 0 now.
{ gpu aaaa 1; gpu bbbb; gpu cccc; } >"$tmp/scenario"
start_daemon --gpu-backend nvml --config "$tmp/carma.conf"
grep -qF "task $b: its GPU GPU-bbbb is GPU 0 now (was 1)" "$tmp/daemon.log" \
    || fail "the move is not logged"
task_is "$b" running || fail "task $b after the restart: $(task_state "$b")"
[ "$("$CARMA" show --json "$b" | jq -c .gpus)" = "[0]" ] \
    || fail "task $b shown on: $("$CARMA" show --json "$b" | jq -c .gpus)"
[ "$(sqlite3 "$STATE/carma.db" "SELECT gpus FROM attempts WHERE task_id=$b")" = 0 ] \
    || fail "the attempt row keeps the old number"
c=$("$CARMA" submit --name new -- sh -c "echo \"\$CUDA_VISIBLE_DEVICES\" >$tmp/c; exec sleep 60")
wait_until 10 task_is "$c" running || fail "task $c: $(task_state "$c")"
wait_until 5 test -s "$tmp/c"
[ "$(cat "$tmp/c")" = GPU-cccc ] || fail "the new task went to $(cat "$tmp/c"), not the free GPU"
kill -KILL "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=

# GPU-bbbb gone while its task still runs: the daemon refuses to start, and says why.
{ gpu aaaa; gpu cccc; } >"$tmp/scenario"
out=$(timeout 20 "$CARMA" daemon --socket "$SOCK" --state "$STATE" --gpu-backend nvml \
      --config "$tmp/carma.conf" 2>&1)
rc=$?
[ $rc -eq 1 ] || fail "start with a running task's GPU gone: exit $rc"
grep -qF "task $b: attempt 1 still runs (pid $b_pid) on GPU GPU-bbbb, which this daemon does not see" \
    <<<"$out" || fail "refusal: $out"
kill -0 "$b_pid" 2>/dev/null || fail "the refused start touched task $b"

# Once it has ended, the daemon starts, records its end, and keeps the other task (GPU-cccc,
# the daemon's GPU 1 again) running where it is.
kill -TERM "$b_pid"
wait_until 10 test -s "$STATE/attempts/$b.1/result" || fail "task $b's supervisor wrote no result"
start_daemon --gpu-backend nvml --config "$tmp/carma.conf"
grep -qF "task $b: GPU GPU-bbbb, where attempt 1 ran, is not seen now; its result is recorded without it" \
    "$tmp/daemon.log" || fail "the lost GPU is not logged"
wait_until 10 sh -c "! $CARMA show --json $b | jq -e '.state == \"running\"' >/dev/null" \
    || fail "task $b still running"
task_is "$c" running || fail "task $c: $(task_state "$c")"
[ "$("$CARMA" show --json "$c" | jq -c .gpus)" = "[1]" ] \
    || fail "task $c shown on: $("$CARMA" show --json "$c" | jq -c .gpus)"
"$CARMA" cancel "$c" >/dev/null || fail "cancel $c"
wait_until 10 sh -c "! $CARMA show --json $c | jq -e '.state == \"running\"' >/dev/null" \
    || fail "task $c did not end"

# x (the lower id) on GPU-aaaa ends while the daemon is down and GPU-aaaa goes; y on GPU-bbbb
# runs on. x's end is recorded with GPU 0 standing in for its GPU, and GPU 0 is y's now: that
# end must not free it (a new exclusive task goes to GPU-cccc, not onto y's GPU).
stop_daemon
{ gpu aaaa; gpu bbbb; gpu cccc; } >"$tmp/scenario"
start_daemon --gpu-backend nvml --config "$tmp/carma.conf"
x=$("$CARMA" submit --name x -- sleep 60)
y=$("$CARMA" submit --name y -- sleep 60)
wait_until 10 task_is "$x" running || fail "task $x: $(task_state "$x")"
wait_until 10 task_is "$y" running || fail "task $y: $(task_state "$y")"
[ "$("$CARMA" show --json "$x" | jq -c .gpus)$("$CARMA" show --json "$y" | jq -c .gpus)" = \
    "[0][1]" ] || fail "x and y are not on GPUs 0 and 1"
wait_until 5 test -s "$STATE/attempts/$x.1/started"
kill -KILL "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=
kill -TERM "$(cat "$STATE/attempts/$x.1/started")"
wait_until 10 test -s "$STATE/attempts/$x.1/result" || fail "task $x's supervisor wrote no result"
{ gpu bbbb; gpu cccc; } >"$tmp/scenario"
start_daemon --gpu-backend nvml --config "$tmp/carma.conf"
z=$("$CARMA" submit --name z -- sh -c "echo \"\$CUDA_VISIBLE_DEVICES\" >$tmp/z; exec sleep 60")
wait_until 10 task_is "$z" running || fail "task $z: $(task_state "$z")"
wait_until 5 test -s "$tmp/z"
[ "$(cat "$tmp/z")" = GPU-cccc ] || fail "z went to $(cat "$tmp/z") beside y, not the free GPU"
"$CARMA" cancel "$z" >/dev/null
wait_until 10 sh -c "! $CARMA show --json $z | jq -e '.state == \"running\"' >/dev/null"
kill -KILL "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=

# GPU-bbbb (y's, the daemon's GPU 0) does not answer at start: its UUID is unknown, so y keeps
# its recorded number and is adopted.
{ gpu bbbb; gpu cccc; echo "lost 0"; } >"$tmp/scenario"
start_daemon --gpu-backend nvml --config "$tmp/carma.conf"
task_is "$y" running || fail "task $y with its GPU lost at start: $(task_state "$y")"
grep -qF "task $y: GPU GPU-bbbb is not among the GPUs whose UUID is known now; kept on its recorded GPU numbers" \
    "$tmp/daemon.log" || fail "the unknown UUID is not logged"
"$CARMA" cancel "$y" >/dev/null
stop_daemon
[ $fails -eq 0 ] || { cat "$tmp/daemon.log"; exit 1; }
