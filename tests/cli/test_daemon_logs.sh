#!/usr/bin/env bash
# `carma logs` gives a task's output as it wrote it: a multi-byte character that the daemon's
# 64 KiB chunks would cut in two comes whole (not as '?'), in `logs` and in the copy that
# `carma run` keeps (a private daemon's). `carma logs --follow` goes on through an out-of-memory
# relaunch until the task has ended, printing each attempt's output. A task that never started
# says so, followed or not.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"

start_daemon --sim-gpus 2xA100-40GB --set sample_interval_s=0.2

# 65535 bytes of 'a', then '█' (3 bytes: the first chunk ends inside it), then ' done'.
printf 'a%.0s' $(seq 65535) >"$tmp/want"
printf '\xe2\x96\x88 done\n' >>"$tmp/want"
id=$("$CARMA" submit -- cat "$tmp/want") || fail "submit"
wait_until 10 task_is "$id" done || fail "task $id did not end done: $(task_state "$id")"
"$CARMA" logs "$id" >"$tmp/got" || fail "logs"
cmp -s "$tmp/want" "$tmp/got" || fail "logs at the 64 KiB cut: $(tail -c 12 "$tmp/got" | od -An -c)"
"$CARMA" logs --json "$id" | jq -j .stdout >"$tmp/got.json"
cmp -s "$tmp/want" "$tmp/got.json" || fail "logs --json at the 64 KiB cut: $(tail -c 12 "$tmp/got.json" | od -An -c)"
printf 'name: cut\ncommand: [cat, %s]\nmemory: 1000\n' "$tmp/want" >"$tmp/cut.yaml"
mkdir "$tmp/o"
TMPDIR=$tmp "$CARMA" run --private --gpu-backend sim --output-dir "$tmp/o" "$tmp/cut.yaml" >/dev/null 2>"$tmp/run.err" || fail "run: $(cat "$tmp/run.err")"
cmp -s "$tmp/want" "$tmp"/o/carma-*.out || fail "run's copy at the 64 KiB cut: $(ls "$tmp/o")"

# Two tasks hold 25 GB of each GPU; the third says 1 GB but takes 30 GB beside one of them:
# out of memory, it waits in the recovery queue for an idle GPU and runs again. Followed from
# before its start, its logs end only once it has ended done, with both attempts' output.
"$CARMA" submit --mem 25G -- "$FAKEJOB" --mem 25G --seconds 4 >/dev/null
"$CARMA" submit --mem 25G -- "$FAKEJOB" --mem 25G --seconds 4 >/dev/null
two_running() { [ "$("$CARMA" queue --state running --json | jq length)" -eq 2 ]; }
wait_until 10 two_running || fail "the two 25 GB tasks did not start: $("$CARMA" queue)"
id=$("$CARMA" submit --mem 1G -- "$FAKEJOB" --mem 30G --seconds 1 --stdout LINE) || fail "submit"
timeout 60 "$CARMA" logs --follow "$id" >"$tmp/follow.out" 2>"$tmp/follow.err"
rc=$?
[ $rc -eq 0 ] || fail "logs --follow exited $rc: $(cat "$tmp/follow.err")"
task_is "$id" done || fail "logs --follow ended with the task $(task_state "$id") (attempts: $("$CARMA" show --json "$id" | jq .attempts))"
[ "$(cat "$tmp/follow.out")" = $'LINE\nLINE' ] || fail "logs --follow: both attempts' stdout: $(cat "$tmp/follow.out")"
grep -q OutOfMemoryError "$tmp/follow.err" || fail "logs --follow: attempt 1's traceback: $(cat "$tmp/follow.err")"
grep -qx '== attempt 2' "$tmp/follow.err" || fail "logs --follow: no line announcing attempt 2: $(cat "$tmp/follow.err")"
# A task that never started has no output, and says so (stderr; nothing on stdout, exit 0).
h=$("$CARMA" submit --hold -- echo never) || fail "submit --hold"
out=$("$CARMA" logs "$h" 2>"$tmp/h.err"); rc=$?
[ $rc -eq 0 ] && [ -z "$out" ] && grep -q "^carma logs: task $h has not started yet: no output$" \
    "$tmp/h.err" || fail "logs of a held task: rc $rc, '$out', $(cat "$tmp/h.err")"
"$CARMA" cancel "$h" >/dev/null
"$CARMA" logs "$h" 2>&1 >/dev/null | grep -q "task $h ended without starting: no output" \
    || fail "logs of a task cancelled before it started: $("$CARMA" logs "$h" 2>&1)"
# followed, it says so too (it ended silently, as if the task had printed nothing)
timeout 10 "$CARMA" logs --follow "$h" 2>&1 >/dev/null | grep -q "task $h ended without starting" \
    || fail "logs --follow of a task cancelled before it started: $("$CARMA" logs -f "$h" 2>&1)"
stop_daemon

[ $fails -eq 0 ] && echo PASS
exit $((fails > 0))
