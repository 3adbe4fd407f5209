#!/usr/bin/env bash
# Looking back (sim backend, one 40 GB GPU, the carma policy): `show` prints local times and
# durations (no raw epoch seconds, no -1) with every attempt; a task that crashed with
# out-of-memory beside another and ran again lists every attempt, and `logs --attempt 1`
# gives the first one's output while `logs` gives the last; `history` lists ended tasks with
# attempts, wait, elapsed, GPU-hours, peak and exit, filtered by --since, --user and --state,
# in text and --json; bad arguments are usage errors.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"

cat >"$tmp/carma.conf" <<CONF
policy = carma
margin_mib = 512
sample_interval_s = 0.2
kill_grace_s = 1
CONF
start_daemon --sim-gpus 1xA100-40GB --config "$tmp/carma.conf"
job() { "$CARMA" submit --mem "$1" -- "$FAKEJOB" --mem "$2" --seconds "$3" "${@:4}"; }

a=$(job 1G 1G 1 --exit 3)
wait_until 15 task_is "$a" failed || fail "task $a did not fail with exit 3"
# c declares 2 GB but takes 14 GB beside d's 30 GB: it crashes once, then runs with what it
# was seen to need once d is done.
d=$(job 30G 30G 4)
wait_until 10 task_is "$d" running || fail "task $d did not start"
c=$(job 2G 14G 1 --stderr "attempt-marker")
wait_until 40 task_is "$c" done || fail "task $c did not end done: $("$CARMA" show "$c" --json | jq -c '{state, attempts}')"
wait_until 20 task_is "$d" done || fail "task $d did not end done"

# show: times for people, every attempt
out=$("$CARMA" show "$a")
echo "$out" | grep -Eq '^submitted +[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$' \
    || fail "show: submitted is not a local time: $out"
echo "$out" | grep -Eq '^started +[0-9]{4}-[0-9-]+ [0-9:]+ \(waited [0-9]+s\)$' \
    || fail "show: no start with its wait: $out"
echo "$out" | grep -Eq '^elapsed +[0-9]+s$' || fail "show: elapsed: $out"
echo "$out" | grep -Eq -- '(^| )-1( |$)|[0-9]{10}\.' && fail "show: raw -1 or epoch seconds: $out"
echo "$out" | grep -Eq '^  1 +0 .* failed +3 ' || fail "show: attempt 1 row (GPU 0, failed, exit 3): $out"
js=$("$CARMA" show "$c" --json)
n=$(jq '.attempts' <<<"$js") # each OOM teaches it more (doubled while no peak was seen)
[ "$n" -ge 2 ] && [ "$(jq '.attempt_list | length' <<<"$js")" = "$n" ] \
    || fail "show --json: c's attempts: $js"
[ "$(jq -r '.attempt_list[0].outcome' <<<"$js")" = oom ] || fail "show --json: c's first attempt should be oom: $js"
[ "$(jq -r '.attempt_list[-1].exit_code' <<<"$js")" = 0 ] || fail "show --json: c's last exit: $js"
jq -e '(.started_at | type) == "number" and (.elapsed_s | type) == "number" and .gpu_hours > 0' \
    <<<"$js" >/dev/null || fail "show --json: started_at, elapsed_s, gpu_hours: $js"
"$CARMA" show "$c" | grep -Eq "^attempts +$n\$" || fail "show: c's attempt count: $("$CARMA" show "$c")"

# logs of one attempt
"$CARMA" logs --attempt 1 "$c" 2>&1 >/dev/null | grep -q OutOfMemoryError \
    || fail "logs --attempt 1: the first attempt's OOM: $("$CARMA" logs --attempt 1 "$c" 2>&1)"
"$CARMA" logs "$c" 2>&1 >/dev/null | grep -q OutOfMemoryError \
    && fail "logs: the latest attempt should have no OOM"
"$CARMA" logs --attempt "$n" "$c" 2>&1 >/dev/null | grep -q attempt-marker \
    || fail "logs --attempt $n: the last attempt's stderr"
"$CARMA" logs --attempt $((n + 1)) "$c" 2>"$tmp/err" && fail "logs --attempt $((n + 1)) should fail"
grep -q "task $c has no attempt $((n + 1)) (it has made $n)" "$tmp/err" \
    || fail "logs --attempt $((n + 1)): $(cat "$tmp/err")"
"$CARMA" logs --attempt 0 "$c" 2>/dev/null; [ $? -eq 2 ] || fail "logs --attempt 0 is a usage error"

# history
h=$("$CARMA" history --json)
# c's second attempt runs 1 s; its end is the result file's time, the kernel's coarse clock,
# which may put it a few ms short of that (CI once saw 0.99999 s)
[ "$(jq 'length' <<<"$h")" = 3 ] || fail "history: 3 ended tasks: $h"
jq -e --argjson c "$c" '.[] | select(.id == $c) | .attempts >= 2 and .state == "done" and
    .gpu_hours > 0 and .elapsed_s >= 0.9 and (.wait_s | type) == "number" and .peak_mib >= 14000
    and .exit_code == 0' <<<"$h" >/dev/null || fail "history: task $c: $h"
jq -e --argjson a "$a" '.[] | select(.id == $a) | .exit_code == 3 and .state == "failed"' \
    <<<"$h" >/dev/null || fail "history: task $a: $h"
text=$("$CARMA" history)
echo "$text" | head -1 | grep -q '^ID .*GPU_HOURS.*EXIT.*ENDED$' || fail "history: header: $text"
echo "$text" | grep -Eq "^$a .* failed +1 .* 3 +[0-9]{4}-" || fail "history: row of $a: $text"
[ "$("$CARMA" history --json --state failed | jq length)" = 1 ] || fail "history --state failed"
[ "$("$CARMA" history --json --since 1h | jq length)" = 3 ] || fail "history --since 1h"
[ "$("$CARMA" history --json --since 2099-01-01 | jq length)" = 0 ] || fail "history --since future"
[ "$("$CARMA" history --json --user "$(id -un)" | jq length)" = 3 ] || fail "history --user"
[ "$("$CARMA" history --json --user nobody | jq length)" = 0 ] || fail "history --user nobody"
[ "$("$CARMA" history --json --limit 2 2>/dev/null | jq length)" = 2 ] || fail "history --limit 2"
# a live state lists those live tasks, without --all too
q=$("$CARMA" submit --hold --name live -- true)
[ "$("$CARMA" history --json --state queued | jq -c '[.[].id]')" = "[$q]" ] \
    || fail "history --state queued: $("$CARMA" history --json --state queued)"
"$CARMA" cancel "$q" >/dev/null
"$CARMA" history --since yesterday 2>"$tmp/err"; [ $? -eq 2 ] || fail "--since yesterday: exit 2"
grep -q "expected an age" "$tmp/err" || fail "--since yesterday: message: $(cat "$tmp/err")"

stop_daemon
[ $fails -eq 0 ] && echo "ok: show times and attempts, logs --attempt, history"
exit $((fails > 0))
