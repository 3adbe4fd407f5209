#!/usr/bin/env bash
# carma daemon end to end on the sim backend: 30 fake jobs of mixed sizes, collocation, an
# out-of-memory crash recovered, a failure that stays final, exit 0 with an OOM-looking
# warning that stays done, SIGKILL of the daemon mid-run and a restart, and at the end every
# task accounted for exactly once (runs counted by the jobs themselves).
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"

quick_config >"$tmp/carma.conf"
start_daemon --sim-gpus 4xA100-40GB --config "$tmp/carma.conf"
RUNS=$tmp/runs.txt
: >"$RUNS"
chmod 666 "$RUNS"
# Each job notes its own run, then becomes the fake job.
job() { # MEM_DECLARED MEM_REAL SECONDS [fakejob options...]
    local decl=$1 real=$2 secs=$3
    shift 3
    "$CARMA" submit --mem "$decl" -- sh -c 'echo $CARMA_TASK_ID >>'"$RUNS"'; exec "$0" "$@"' \
        "$FAKEJOB" --mem "$real" --seconds "$secs" "$@"
}
ids=()
for i in $(seq 1 8); do ids+=("$(job 10G 10G 3 --smact 0.2)"); done   # fill the 4 GPUs twice
ids+=("$(job 1G 36G 1)")                                             # 9: lies about its memory
ids+=("$(job 2G 2G 1 --exit 3)")                                     # 10: fails for good
ids+=("$(job 2G 2G 1 --stderr 'warning: CUDA out of memory earlier, recovered')") # 11: done
sizes=(4G 6G 12G 3G 8G 16G 5G 2G 9G 7G)
for i in $(seq 12 30); do
    s=${sizes[$((i % 10))]}
    ids+=("$(job "$s" "$s" $((1 + i % 3)))")
done
[ ${#ids[@]} -eq 30 ] || fail "30 submissions, got ${#ids[@]}"
[ "${ids[0]}" = 1 ] && [ "${ids[29]}" = 30 ] || fail "ids 1..30, got ${ids[0]}..${ids[29]}"

collocated() { "$CARMA" gpus --json | jq -e 'any(.[]; (.tasks | length) >= 2)'; }
wait_until 20 collocated || fail "no GPU ever held two tasks"

# SIGKILL the daemon once some tasks ended and others still run or wait.
some_ended() { [ "$("$CARMA" queue --all --json | jq '[.[] | select(.state=="done")] | length')" -ge 6 ]; }
wait_until 40 some_ended || fail "6 tasks did not finish in time"
before=$("$CARMA" queue --all --json)
running=$(jq '[.[] | select(.state=="running") | .id] | join(" ")' -r <<<"$before")
kill -KILL "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=
[ -n "$running" ] || echo "note: nothing was running at the kill"
start_daemon --sim-gpus 4xA100-40GB --config "$tmp/carma.conf"
# Every task running at the kill is found again: adopted, or its result collected (or it
# ended in the moment between the snapshot and the kill).
for id in $running; do
    grep -Eq "task $id(: attempt [0-9]+ (still running; adopted|ended while the daemon was away)| done \(attempt)" \
        "$tmp/daemon.log" || fail "running task $id not found again after the restart"
done

all_ended() { "$CARMA" queue --all --json | jq -e 'all(.[]; .state=="done" or .state=="failed")'; }
wait_until 90 all_ended || { fail "not every task ended"; "$CARMA" queue --all; }
final=$("$CARMA" queue --all --json)

[ "$(jq length <<<"$final")" -eq 30 ] || fail "30 tasks listed, got $(jq length <<<"$final")"
[ "$(jq '[.[].id] | unique | length' <<<"$final")" -eq 30 ] || fail "duplicate task ids"
for k in id name user state attempts gpus mem_mib; do
    jq -e "all(.[]; has(\"$k\"))" <<<"$final" >/dev/null || fail "task JSON lacks '$k'"
done
t9=$(jq '.[] | select(.id==9)' <<<"$final")
[ "$(jq -r .state <<<"$t9")" = done ] || fail "task 9 (OOM) not recovered: $t9"
[ "$(jq .attempts <<<"$t9")" -ge 2 ] || fail "task 9 should have run more than once: $t9"
t10=$(jq '.[] | select(.id==10)' <<<"$final")
[ "$(jq -r .state <<<"$t10")" = failed ] && [ "$(jq .attempts <<<"$t10")" -eq 1 ] \
    || fail "task 10 (exit 3) should fail once: $t10"
[ "$(jq -r '.[] | select(.id==11) | .state' <<<"$final")" = done ] \
    || fail "exit 0 with an OOM-looking warning must be done"
"$CARMA" logs 9 2>&1 >/dev/null | grep -q "OutOfMemoryError" && fail "task 9's last attempt should have succeeded"
[ "$(jq '[.[] | select(.id != 9 and .id != 10 and .state != "done")] | length' <<<"$final")" -eq 0 ] \
    || fail "every other task should be done"

# Exactly once: each task ran as many times as it has attempts, and no more.
for id in $(seq 1 30); do
    ran=$(grep -cx "$id" "$RUNS")
    att=$(jq ".[] | select(.id==$id) | .attempts" <<<"$final")
    [ "$ran" -eq "$att" ] || fail "task $id ran $ran times but has $att attempts"
done
# Queued tasks kept their order (strict FIFO), across the restart too: first launches, as the
# daemon recorded them, are in id order.
order=$(sqlite3 "$STATE/carma.db" "SELECT task_id FROM events WHERE kind='launch' ORDER BY seq" \
        | awk '!seen[$1]++' | tr '\n' ' ')
[ "$order" = "$(seq 1 30 | tr '\n' ' ')" ] || fail "first launches out of order: $order"
grep -q "task 9 to the recovery queue (attempt 1: oom, exit 1, 'CUDA out of memory' in stderr, needed 36864 MiB)" \
    "$tmp/daemon.log" || fail "task 9's crash not classified as out-of-memory"

stop_daemon
[ $fails -eq 0 ] || { echo "--- daemon log"; cat "$tmp/daemon.log"; }
echo "$fails failure(s)"
[ $fails -eq 0 ]
