#!/usr/bin/env bash
# `carma run TASKFILE...`: submits task files, waits for all, prints a line as each ends and
# exits as `carma wait` does (0 all done, 5 one failed). With no daemon answering, or inside a
# Slurm job (SLURM_JOB_ID without CARMA_SOCKET), it starts a private daemon in a 0700
# carma-run-XXXXXX directory under $TMPDIR and leaves no process or directory behind, but keeps
# each task's output (carma-RUN-ID.out/.err in --output-dir, RUN the Slurm job id, RUN.2 for
# the job's second run; an earlier attempt's as carma-RUN-ID.attemptN.out/.err); SIGTERM
# and --timeout cancel its tasks; a bad task file stops it before anything is submitted; a
# daemon named by $CARMA_SOCKET is used as it is.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
export TMPDIR=$tmp/tmpdir
mkdir -p "$TMPDIR"
unset CARMA_SOCKET SLURM_JOB_ID SLURM_JOB_GPUS CUDA_VISIBLE_DEVICES

cd "$tmp"
printf 'name: quick\ncommand: sleep 0.5\nmemory: 1000\n' >quick.yaml
printf 'name: quick2\ncommand: [sh, -c, "sleep 1; echo second"]\nmemory: 1000\n' >quick2.yaml
printf 'name: broken\ncommand: sh -c "exit 3"\nmemory: 1000\n' >broken.yaml
# A long task that records its pid, so that the test can see it die.
printf 'name: long\ncommand: sh -c "echo $$ >%s/long.pid; exec sleep 60"\nmemory: 1000\n' \
    "$tmp" >long.yaml
printf 'command: sleep 1\nmemory: lots\n' >bad.yaml
no_leftovers() { # what a private daemon must not leave: its directory, its process
    [ -z "$(ls -A "$TMPDIR")" ] || fail "$1: left in \$TMPDIR: $(ls -A "$TMPDIR")"
    ! pgrep -f "$TMPDIR/carma-run" >/dev/null || fail "$1: a private daemon still runs"
}

# All done: 0, a line each, a private daemon (nothing answers), gone afterwards.
out=$("$CARMA" run --gpu-backend sim quick.yaml quick2.yaml 2>"$tmp/err")
rc=$?
[ $rc -eq 0 ] || fail "all done: exit $rc: $(cat "$tmp/err")"
grep -qx 'task [0-9]* done quick.yaml (output: ./carma-[0-9]*-[0-9]*.out)' <<<"$out" \
    || fail "no line for quick.yaml: $out"
line=$(grep 'done quick2.yaml' <<<"$out")
grep -qx 'task [0-9]* done quick2.yaml (output: ./carma-[0-9]*-[0-9]*.out)' <<<"$line" \
    || fail "no line for quick2.yaml: $out"
kept=$(sed 's/.*(output: \(.*\))/\1/' <<<"$line")
[ "$(cat "$kept" 2>/dev/null)" = second ] || fail "quick2's output not kept in $kept"
[ "$(stat -c %a "$kept")" = 600 ] && [ -e "${kept%.out}.err" ] || fail "kept files: $(ls -l carma-*)"
[ "$(wc -l <<<"$out")" -eq 2 ] || fail "expected two lines: $out"
grep -q "started a private daemon (socket $TMPDIR/carma-run-" "$tmp/err" \
    || fail "no private daemon announced: $(cat "$tmp/err")"
no_leftovers "all done"

# The private directory is 0700 while it lives (looked at during a run).
"$CARMA" run --gpu-backend sim quick2.yaml >/dev/null 2>&1 &
run_pid=$!
has_dir() { compgen -G "$TMPDIR/carma-run-*" >/dev/null; }
wait_until 10 has_dir || fail "no private directory during the run"
d=$(compgen -G "$TMPDIR/carma-run-*" | head -1)
[ "$(stat -c %a "$d")" = 700 ] || fail "private directory mode $(stat -c %a "$d")"
wait "$run_pid"
no_leftovers "mode check"

# One failing task: 5 (carma wait's code), the others still reported; --json for scripts.
out=$("$CARMA" run --gpu-backend sim --json quick.yaml broken.yaml 2>"$tmp/err")
rc=$?
[ $rc -eq 5 ] || fail "one failed: exit $rc"
[ "$(jq -r 'map(.file + "=" + .state) | join(",")' <<<"$out")" = "quick.yaml=done,broken.yaml=failed" ] \
    || fail "--json: $out"
grep -q 'task [0-9]* failed broken.yaml' "$tmp/err" || fail "--json: no progress line on stderr"
no_leftovers "one failed"

# SIGTERM: its tasks are cancelled (the task's process is gone), then the daemon and directory.
rm -f "$tmp/long.pid"
"$CARMA" run --gpu-backend sim long.yaml >"$tmp/out" 2>"$tmp/err" &
run_pid=$!
wait_until 15 test -s "$tmp/long.pid" || fail "the long task never started: $(cat "$tmp/err")"
task_pid=$(cat "$tmp/long.pid")
kill -TERM "$run_pid"
wait "$run_pid"
rc=$?
[ $rc -eq 143 ] || fail "SIGTERM: exit $rc (expected 128+15)"
grep -q 'task [0-9]* cancelled long.yaml' "$tmp/out" || fail "SIGTERM: $(cat "$tmp/out" "$tmp/err")"
! kill -0 "$task_pid" 2>/dev/null || fail "SIGTERM: the task's process $task_pid outlived carma run"
no_leftovers "SIGTERM"

# The private daemon killed while a task runs: carma run fails (1), saying it could not cancel
# through it, and ends the task itself: it does not outlive the run.
rm -f "$tmp/long.pid"
"$CARMA" run --gpu-backend sim long.yaml >"$tmp/out" 2>"$tmp/err" &
run_pid=$!
wait_until 15 test -s "$tmp/long.pid" || fail "the long task never started: $(cat "$tmp/err")"
task_pid=$(cat "$tmp/long.pid")
# the daemon alone (its supervisors are its forks, with the same command line)
pkill -KILL -P "$run_pid" -f "carma daemon --socket" || fail "no private daemon to kill"
wait "$run_pid"
rc=$?
[ $rc -eq 1 ] || fail "daemon killed: exit $rc: $(cat "$tmp/err")"
grep -q "could not be cancelled" "$tmp/err" && ! grep -q "cancelled 1 task(s)" "$tmp/err" \
    && grep -q "cancelling 1 task(s) the private daemon left running" "$tmp/err" \
    || fail "daemon killed: $(cat "$tmp/err")"
! kill -0 "$task_pid" 2>/dev/null || fail "daemon killed: the task $task_pid outlived carma run"
no_leftovers "daemon killed"
# ... also a task that ignores SIGTERM under a kill_grace_s longer than carma run waits (15 s):
# what still runs then is killed, so that no task outlives the run.
printf 'name: stubborn\ncommand: sh -c "trap \\"\\" TERM; echo $$ >%s/stubborn.pid; '\
'while :; do sleep 0.1; done"\nmemory: 1000\n' "$tmp" >stubborn.yaml
rm -f "$tmp/stubborn.pid"
"$CARMA" run --gpu-backend sim --set kill_grace_s=600 stubborn.yaml >"$tmp/out" 2>"$tmp/err" &
run_pid=$!
wait_until 15 test -s "$tmp/stubborn.pid" || fail "the stubborn task never started: $(cat "$tmp/err")"
task_pid=$(cat "$tmp/stubborn.pid")
pkill -KILL -P "$run_pid" -f "carma daemon --socket" || fail "no private daemon to kill"
wait "$run_pid"
grep -q "1 still run after 15 s: killed" "$tmp/err" || fail "stubborn: $(cat "$tmp/err")"
! kill -0 "$task_pid" 2>/dev/null || { fail "stubborn: the task outlived carma run"; kill -9 -"$task_pid"; }
no_leftovers "stubborn task"

# SIGTERM with a task still queued (it cannot fit beside the long one on one GPU): both are
# cancelled, and only the one that ran has its output kept.
printf 'name: big\ncommand: sleep 30\nmemory: 39000\n' >big.yaml
printf 'name: big2\ncommand: sleep 30\nmemory: 39000\n' >big2.yaml
mkdir "$tmp/o2"
"$CARMA" run --gpu-backend sim --sim-gpus 1xA100-40GB --output-dir "$tmp/o2" big.yaml big2.yaml \
    >"$tmp/out" 2>"$tmp/err" &
run_pid=$!
wait_until 15 grep -q 'task 1: attempt 1 on GPUs' "$tmp/err" || fail "big never started: $(cat "$tmp/err")"
kill -TERM "$run_pid"
wait "$run_pid"
grep -qx 'task 1 cancelled big.yaml (output: .*carma-[0-9]*-1.out)' "$tmp/out" \
    || fail "queued cancel: big: $(cat "$tmp/out")"
grep -qx 'task 2 cancelled big2.yaml' "$tmp/out" || fail "queued cancel: big2: $(cat "$tmp/out")"
[ "$(ls "$tmp/o2")" = "$(cd "$tmp/o2" && ls carma-*-1.out carma-*-1.err 2>/dev/null)" ] \
    || fail "queued cancel: kept files $(ls "$tmp/o2")"
no_leftovers "queued cancel"

# An out-of-memory crash relaunched: the first attempt's output (its traceback) is kept beside
# the last one's. `liar` says 1000 MiB but takes 36 GB a second after `hog` took its 10 GB;
# its out-of-memory message says it needed 36 GB, so its one retry waits until hog is gone.
printf 'name: hog\ncommand: [%s, --mem, 10G, --seconds, 3]\nmemory: 10240\n' "$FAKEJOB" >hog.yaml
printf 'name: liar\ncommand: [sh, -c, "sleep 1; exec %s --mem 36G --seconds 1 --stdout try"]\nmemory: 1000\n' \
    "$FAKEJOB" >liar.yaml
mkdir "$tmp/o3"
out=$("$CARMA" run --gpu-backend sim --sim-gpus 1xA100-40GB --output-dir "$tmp/o3" hog.yaml \
      liar.yaml 2>"$tmp/err")
rc=$?
[ $rc -eq 0 ] || fail "relaunch: exit $rc: $out $(cat "$tmp/err")"
grep -Eqx 'task 2 done liar.yaml \(output: .*/carma-[0-9]+-2.out; earlier attempts: .*/carma-[0-9]+-2.attempt1.out\)' \
    <<<"$out" || fail "relaunch: the end line should name both attempts' files: $out"
first=$(compgen -G "$tmp/o3/carma-*-2.attempt1.err")
grep -q OutOfMemoryError "$first" 2>/dev/null || fail "relaunch: attempt 1's stderr: $(ls "$tmp/o3")"
! grep -q OutOfMemoryError "$tmp"/o3/carma-*-2.err || fail "relaunch: the last attempt's stderr holds the crash"
[ "$(cat "$tmp"/o3/carma-*-2.out)" = try ] || fail "relaunch: the last attempt's stdout"
[ "$(stat -c %a "$first")" = 600 ] || fail "relaunch: attempt 1's file mode $(stat -c %a "$first")"
[ "$(ls "$tmp/o3" | wc -l)" = 6 ] || fail "relaunch: expected 6 files: $(ls "$tmp/o3")"
out=$("$CARMA" run --private --gpu-backend sim --sim-gpus 1xA100-40GB --output-dir "$tmp/o3" \
      --json hog.yaml liar.yaml 2>/dev/null)
jq -e '.[1].earlier_attempts | length == 1 and .[0].attempt == 1 and (.[0].stderr_file | endswith(".attempt1.err"))' \
    <<<"$out" >/dev/null || fail "relaunch: --json earlier_attempts: $out"
no_leftovers "relaunch"

# A file the daemon refuses (more GPUs than the private daemon's two): the daemon takes the
# files' tasks in one request, all or none, so none of them was queued (nor started, no output
# kept): each is named as not submitted, the refused one in the daemon's reason; 1.
printf 'name: big\ncommand: sleep 1\ngpus: 3\nmemory: 1000\n' >big.yaml
rm -f "$tmp/long.pid"
# file names with a terminal escape are shown escaped, in the report and the refusal
cp quick.yaml $'q\e[1m.yaml' && cp quick.yaml $'r\e[1m.yaml'
"$CARMA" run --gpu-backend sim $'q\e[1m.yaml' long.yaml big.yaml quick.yaml $'r\e[1m.yaml' \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || fail "refused submission: exit $rc"
[ ! -s "$tmp/out" ] || fail "refused submission: a task was queued: $(cat "$tmp/out")"
[ ! -e "$tmp/long.pid" ] && ! grep -q 'attempt 1 on GPUs' "$tmp/err" \
    || fail "refused submission: a task of the batch started: $(cat "$tmp/err")"
grep -q "tasks\[2\] ($tmp/big.yaml): task asks for 3 GPUs but this server has 2" "$tmp/err" \
    || fail "no reason naming the file: $(cat "$tmp/err")"
for f in long.yaml big.yaml quick.yaml; do
    grep -qx "carma run: $f: not submitted" "$tmp/err" || fail "$f not named: $(cat "$tmp/err")"
done
grep -qxF 'carma run: r\x1b[1m.yaml: not submitted' "$tmp/err" \
    && grep -qxF 'carma run: q\x1b[1m.yaml: not submitted' "$tmp/err" \
    || fail "an unsubmitted file's name not escaped: $(cat -v "$tmp/err")"
rm -f $'q\e[1m.yaml' $'r\e[1m.yaml'
no_leftovers "refused submission"

# --timeout: the tasks still live are cancelled; 124.
"$CARMA" run --gpu-backend sim --timeout 1 long.yaml >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 124 ] || fail "--timeout: exit $rc"
grep -q 'task [0-9]* cancelled long.yaml' "$tmp/out" || fail "--timeout: $(cat "$tmp/out")"
no_leftovers "--timeout"

# An existing daemon named by $CARMA_SOCKET is used, even inside a Slurm job.
export CARMA_SOCKET=$SOCK
start_daemon
out=$(SLURM_JOB_ID=42 "$CARMA" run quick.yaml 2>"$tmp/err")
rc=$?
[ $rc -eq 0 ] || fail "existing daemon: exit $rc: $(cat "$tmp/err")"
id=$(sed -n 's/^task \([0-9]*\) done quick.yaml$/\1/p' <<<"$out")
[ -n "$id" ] && [ "$("$CARMA" show --json "$id" | jq -r .name)" = quick ] \
    || fail "the task did not run on the daemon at \$CARMA_SOCKET: $out"
! grep -q 'private daemon' "$tmp/err" || fail "a private daemon was started beside \$CARMA_SOCKET's"
no_leftovers "existing daemon"

# Every --set reaches the private daemon, the 41st too (it dropped those past about 27): a
# floor no filesystem here has makes the daemon refuse the task.
sets=()
for i in $(seq 40); do sets+=(--set sample_interval_s=0.5); done
"$CARMA" run --private --gpu-backend sim "${sets[@]}" --set state_min_free_mib=1000000 \
    quick.yaml >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "less than state_min_free_mib = 1000000" "$tmp/err" \
    || fail "the 41st --set did not reach the private daemon: $(cat "$tmp/err")"
no_leftovers "many --set"

# --sim-gpus with a backend other than sim (given, or the config's) is refused by run itself,
# before a private daemon is started (it used to be the daemon's refusal, pointing at
# `carma daemon --help`).
out=$(CARMA_CONFIG= "$CARMA" run --private --sim-gpus 1xA100-40GB quick.yaml 2>&1)
rc=$?
[ $rc -eq 2 ] && grep -q "^carma run: --sim-gpus goes with the sim GPU backend" <<<"$out" \
    && grep -q "Try 'carma run --help'" <<<"$out" || fail "--sim-gpus with nvml: exit $rc: $out"
out=$("$CARMA" run --private --gpu-backend nvml --sim-gpus 1xA100-40GB quick.yaml 2>&1)
[ $? -eq 2 ] && grep -q "not 'nvml'" <<<"$out" || fail "--sim-gpus with --gpu-backend nvml: $out"
no_leftovers "--sim-gpus refused"
# a bad --sim-gpus is bad usage, refused before a private daemon is started (it was the
# daemon's failure, exit 1)
out=$("$CARMA" run --private --gpu-backend sim --sim-gpus bad quick.yaml 2>&1)
rc=$?
[ $rc -eq 2 ] && grep -q "^carma run: --sim-gpus: sim GPUs 'bad': expected COUNTxNAME" <<<"$out" \
    && grep -q "Try 'carma run --help'" <<<"$out" || fail "bad --sim-gpus: exit $rc: $out"
no_leftovers "bad --sim-gpus"

# An invalid task file: an error naming it and the problem, nothing submitted.
before=$("$CARMA" queue --all --json | jq length)
out=$("$CARMA" run quick.yaml bad.yaml nothere.yaml 2>&1)
rc=$?
[ $rc -eq 1 ] || fail "bad file: exit $rc"
grep -q "bad.yaml:2: memory: expected a memory size" <<<"$out" || fail "bad file: $out"
grep -q "nothere.yaml" <<<"$out" || fail "missing file not named: $out"
grep -q "nothing was submitted" <<<"$out" || fail "bad file: $out"
[ "$("$CARMA" queue --all --json | jq length)" = "$before" ] || fail "bad file: something was submitted"
# What a file holds is quoted escaped (as submit and task check show it): a workdir with a
# terminal escape is not printed raw.
printf 'command: "true"\nworkdir: "\\e[2Jnodir"\n' >escdir.yaml
out=$("$CARMA" run escdir.yaml 2>&1)
[ $? -eq 1 ] && ! grep -q $'\e' <<<"$out" && grep -qF "working directory '\x1b[2Jnodir'" <<<"$out" \
    || fail "run's error should escape the file's text: $(cat -v <<<"$out")"

# Inside a Slurm job without $CARMA_SOCKET: a private daemon, not the one that answers.
unset CARMA_SOCKET
printf 'socket = %s\n' "$SOCK" >"$tmp/carma.conf"
mkdir "$tmp/outdir"
out=$(SLURM_JOB_ID=42 "$CARMA" run --config "$tmp/carma.conf" --gpu-backend sim \
      --output-dir "$tmp/outdir" quick2.yaml 2>"$tmp/err")
rc=$?
[ $rc -eq 0 ] || fail "Slurm job: exit $rc: $(cat "$tmp/err")"
[ "$(cat "$tmp/outdir/carma-42-1.out" 2>/dev/null)" = second ] \
    || fail "Slurm job: output not kept as carma-42-1.out: $(ls "$tmp/outdir") $out"
# A second run in the job numbers its tasks from 1 again: its files are carma-42.2-ID (they
# were "not kept", carma-42-1.out being taken); a file in the way is left as it was.
SLURM_JOB_ID=42 "$CARMA" run --config "$tmp/carma.conf" --gpu-backend sim \
    --output-dir "$tmp/outdir" quick2.yaml >/dev/null 2>"$tmp/err3" || fail "second run: exit $?"
[ "$(cat "$tmp/outdir/carma-42.2-1.out" 2>/dev/null)" = second ] && ! grep -q "not kept" \
    "$tmp/err3" || fail "second run in a job: $(ls "$tmp/outdir") $(cat "$tmp/err3")"
echo mine >"$tmp/outdir/carma-43-1.err"
SLURM_JOB_ID=43 "$CARMA" run --config "$tmp/carma.conf" --gpu-backend sim \
    --output-dir "$tmp/outdir" quick2.yaml >/dev/null 2>"$tmp/err3" || fail "file in the way: exit $?"
[ ! -e "$tmp/outdir/carma-43-1.out" ] && [ "$(cat "$tmp/outdir/carma-43-1.err")" = mine ] \
    && [ -e "$tmp/outdir/carma-43.2-1.out" ] || fail "file in the way: $(ls "$tmp/outdir")"
SLURM_JOB_ID=42 "$CARMA" run --gpu-backend sim --output-dir "$tmp/nodir" quick.yaml \
    >/dev/null 2>"$tmp/err2" && fail "a missing --output-dir was accepted"
grep -q -- "--output-dir $tmp/nodir: not a directory" "$tmp/err2" || fail "--output-dir: $(cat "$tmp/err2")"
grep -q 'started a private daemon' "$tmp/err" || fail "Slurm job: no private daemon"
[ "$("$CARMA" queue --all --json --socket "$SOCK" | jq length)" = "$before" ] \
    || fail "Slurm job: the task went to the shared daemon"
no_leftovers "Slurm job"

# The command's help and usage errors; `carma help` (and so the bash completion) lists it.
"$CARMA" help | grep -q '^  run ' || fail "carma help does not list run"
"$CARMA" run --help | grep -q 'usage: carma run' || fail "no --help"
"$CARMA" run >/dev/null 2>&1
[ $? -eq 2 ] || fail "no task file: not a usage error"
# an unknown --gpu-backend is run's usage error, not a private daemon's failure to start
out=$("$CARMA" run --private --gpu-backend nope "$tmp/none.yaml" 2>&1)
[ $? -eq 2 ] && grep -q "^carma run: unknown GPU backend 'nope' (available: sim" <<<"$out" \
    || fail "run --gpu-backend nope: $out"

[ $fails -eq 0 ] && echo "all run checks passed"
exit $((fails > 0))
