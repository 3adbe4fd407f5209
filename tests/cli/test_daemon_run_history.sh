#!/usr/bin/env bash
# The run history (sim backend, one 40 GB GPU, the carma policy): a task that ran done with its
# GPU to itself leaves its run time and mean activity, and a later identical task is planned
# with them (`show`: runtime_est, solo_profile, "history"); runs beside another task leave
# nothing; a time limit shorter than the history is what backfill plans with; the figures come
# back after a restart; another user's identical command gets neither history (run, peak); and
# longest-first orders two waiting tasks by their histories (the longer one starts first,
# though submitted second), which first come, first served would not; horus collocates by the
# history's utilization.
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
cd "$tmp" # every task's directory (part of what makes two tasks identical), open to nobody
job() { # MEM SECONDS [fakejob args...]
    "$CARMA" submit "${SUBMIT_ARGS[@]}" --mem "$1" -- "$FAKEJOB" --mem "$1" --seconds "$2" "${@:3}"
}
SUBMIT_ARGS=()
field() { "$CARMA" show "$1" --json | jq -r ".$2"; }
in_range() { jq -e -n "$1 >= $2 and $1 <= $3" >/dev/null 2>&1; }
all_done() { for id in "$@"; do task_is "$id" done || return 1; done; }

# 1. alone, done: recorded; the first run had no history
a1=$(job 1G 2 --smact 0.8 --drama 0.3)
wait_until 20 task_is "$a1" done || fail "task $a1 did not end done: $(task_state "$a1")"
[ "$(field "$a1" runtime_source)" = null ] || fail "the first run has no history: $("$CARMA" show "$a1" --json)"
a2=$(job 1G 2 --smact 0.8 --drama 0.3)
js=$("$CARMA" show "$a2" --json)
[ "$(jq -r .runtime_source <<<"$js")" = history ] || fail "a2 should be planned with a1's run: $js"
# (about its 2 s: the daemon times the run from when it saw it start, which can come a few
# ms after the job's own clock began; a loaded machine may stretch start-up and end well past)
in_range "$(jq .runtime_est_s <<<"$js")" 1.5 20 || fail "a2's runtime estimate should be a1's ~2 s run: $js"
# the samples before the job registers read 0: the mean is below 0.8, never above
in_range "$(jq .solo_smact <<<"$js")" 0.3 0.8001 || fail "a2's solo SM activity from a1's run: $js"
in_range "$(jq .solo_drama <<<"$js")" 0.1 0.3001 || fail "a2's solo DRAM activity from a1's run: $js"
# the sim GPU's utilization is 1.25 x its SM activity, at most 1: horus's profile
in_range "$(jq .solo_util <<<"$js")" 0.4 1 || fail "a2's solo utilization from a1's run: $js"
out=$("$CARMA" show "$a2")
echo "$out" | grep -Eq '^runtime_est +[0-9]+s \(history\)$' || fail "show: runtime_est line: $out"
echo "$out" | grep -Eq '^solo_profile +SM activity 0\.[0-9]{2}, DRAM activity 0\.[0-9]{2}, utilization [01]\.[0-9]{2} \(history\)$' \
    || fail "show: solo_profile line: $out"
"$CARMA" show "$a1" | grep -Eq '^solo_profile +-$' || fail "show: no profile is '-': $("$CARMA" show "$a1")"
wait_until 20 task_is "$a2" done || fail "task $a2 did not end done"

# 2. side by side: nothing recorded for either
c1=$(job 2G 3 --smact 0.2)
c2=$(job 3G 3 --smact 0.2)
wait_until 20 all_done "$c1" "$c2" || fail "c1, c2 did not end done"
[ "$("$CARMA" show "$c1" --json | jq '.attempt_list | length')" = 1 ] || fail "c1 ran more than once"
# c3 must run alone: the daemon places it beside whatever its last sample still saw of c2's
# process (which exits after c2's end is recorded), so wait until the GPU reads empty
gpu_empty() { "$CARMA" gpus --json | jq -e '.[0] | (.holds | length) == 0 and .mem_used_mib == 0' >/dev/null; }
wait_until 10 gpu_empty || fail "GPU 0 did not empty after c1, c2: $("$CARMA" gpus --json | jq -c '.[0]')"
c3=$(job 2G 3 --smact 0.2)
[ "$(field "$c3" runtime_source)" = null ] \
    || fail "a run beside another task must not be recorded: $("$CARMA" show "$c3" --json)"
wait_until 20 task_is "$c3" done || fail "task $c3 did not end done"

# 3. a time limit shorter than the history is what is planned with; a longer one is not
SUBMIT_ARGS=(--time 0:01)
t1=$(job 1G 2 --smact 0.8 --drama 0.3)
js=$("$CARMA" show "$t1" --json)
[ "$(jq -r .runtime_source <<<"$js")" = time_limit ] && jq -e ".runtime_est_s == 1" <<<"$js" >/dev/null \
    || fail "a 1 s limit under a 2 s history: $js"
"$CARMA" cancel "$t1" >/dev/null
SUBMIT_ARGS=(--time 10:00)
t2=$(job 1G 2 --smact 0.8 --drama 0.3)
[ "$(field "$t2" runtime_source)" = history ] || fail "a 10 min limit over a 2 s history: $("$CARMA" show "$t2" --json)"
"$CARMA" cancel "$t2" >/dev/null
SUBMIT_ARGS=()
ended() { ! task_is "$1" queued && ! task_is "$1" running; }
wait_until 20 ended "$t1" && wait_until 20 ended "$t2" || fail "t1, t2 did not end"

# 4. after a restart, a queued task still has its history's figures
SUBMIT_ARGS=(--hold)
h=$(job 1G 2 --smact 0.8 --drama 0.3)
SUBMIT_ARGS=()
stop_daemon
start_daemon --sim-gpus 1xA100-40GB --config "$tmp/carma.conf"
js=$("$CARMA" show "$h" --json)
[ "$(jq -r .runtime_source <<<"$js")" = history ] && [ "$(jq .solo_smact <<<"$js")" != null ] \
    || fail "after a restart, the held task's history: $js"
"$CARMA" cancel "$h" >/dev/null

# 5. another user's identical command (same directory) is another user's task: neither
# history (run time, peak memory) is root's
r=$("$CARMA" submit --hold -- "$FAKEJOB" --mem 1G --seconds 2 --smact 0.8 --drama 0.3)
[ "$(field "$r" mem_source)" = history ] || fail "root's own peak: $("$CARMA" show "$r" --json)"
"$CARMA" cancel "$r" >/dev/null
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
    n=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$CARMA" submit --hold -- \
        "$FAKEJOB" --mem 1G --seconds 2 --smact 0.8 --drama 0.3)
    js=$("$CARMA" show "$n" --json)
    [ -n "$n" ] && [ "$(jq -r .runtime_source <<<"$js")" = null ] \
        && [ "$(jq -r .mem_source <<<"$js")" != history ] \
        || fail "nobody's task must not be planned or placed with root's runs: $js"
    "$CARMA" cancel "$n" >/dev/null
else
    echo "note: not root or no setpriv: the other-user check is not run"
fi

# 6. longest-first by history: S (1 s) and L (4 s), 20 GB each (two do not fit together),
# wait behind a 30 GB task; L, submitted second, starts first.
wait_until 10 gpu_empty || fail "GPU 0 did not empty before s0"
s0=$(job 20G 1)
wait_until 20 task_is "$s0" done || fail "task $s0 did not end done"
wait_until 10 gpu_empty || fail "GPU 0 did not empty after s0"
l0=$(job 20G 4 --stdout long)
wait_until 20 task_is "$l0" done || fail "task $l0 did not end done"
b=$(job 30G 3)
wait_until 10 task_is "$b" running || fail "task $b did not start"
s=$(job 20G 1)
l=$(job 20G 4 --stdout long)
[ "$(field "$s" runtime_source)/$(field "$l" runtime_source)" = history/history ] \
    || fail "S and L should have histories: $("$CARMA" queue --json)"
wait_until 30 all_done "$b" "$s" "$l" || fail "b, s, l did not end done: $("$CARMA" queue --all --json | jq -c '[.[] | {id, state}]')"
ss=$(field "$s" last_attempt.started_at)
ls=$(field "$l" last_attempt.started_at)
[ "$(jq -n "$ls < $ss")" = true ] || fail "longest first: L ($ls) should start before S ($ss)"

# 7. horus places by the solo run's utilization: two tasks with c3's (~0.25 each) share the GPU,
# which horus never does for a task with no profile
stop_daemon
start_daemon --sim-gpus 1xA100-40GB --config "$tmp/carma.conf" --set policy=horus --set grace_s=0.5
h1=$(job 2G 3 --smact 0.2)
h2=$(job 2G 3 --smact 0.2)
[ "$(field "$h1" solo_util)" != null ] \
    || fail "h1 should have c3's utilization: $("$CARMA" show "$h1" --json | jq -c .) $(grep "task $c3" "$tmp/daemon.log")"
both_run() { task_is "$h1" running && task_is "$h2" running; }
wait_until 10 both_run || fail "horus: h1 and h2 should run side by side: $(task_state "$h1") $(task_state "$h2")"
wait_until 20 all_done "$h1" "$h2" || fail "h1, h2 did not end done"

stop_daemon
[ $fails -eq 0 ] && echo "ok: run history (runtime estimate, solo profile) in the daemon"
exit $((fails > 0))
