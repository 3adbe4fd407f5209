#!/usr/bin/env bash
# max_tasks_per_gpu in the daemon (sim backend, one 40 GB GPU, the carma policy, cap 2): two
# 1 GB tasks run side by side, a third that has the memory waits with reason task_cap ("GPU 0
# already runs max_tasks_per_gpu = 2 tasks") and starts once one of them ends; a negative cap
# is refused at start naming the key.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"

cat >"$tmp/carma.conf" <<CONF
policy = carma
margin_mib = 512
sample_interval_s = 0.2
max_tasks_per_gpu = 2
CONF
"$CARMA" daemon --socket "$tmp/bad.sock" --state "$tmp/bad" --gpu-backend sim \
    --sim-gpus 1xA100-40GB --config "$tmp/carma.conf" --set max_tasks_per_gpu=-1 \
    >/dev/null 2>"$tmp/err" && fail "a negative max_tasks_per_gpu should stop the daemon"
grep -q "max_tasks_per_gpu" "$tmp/err" || fail "the error should name max_tasks_per_gpu: $(cat "$tmp/err")"

start_daemon --sim-gpus 1xA100-40GB --config "$tmp/carma.conf"
job() { "$CARMA" submit --mem 1G -- "$FAKEJOB" --mem 1G --seconds "$1"; }
a=$(job 3)
b=$(job 6)
wait_until 10 task_is "$a" running && wait_until 10 task_is "$b" running || fail "a and b did not start"
c=$(job 1)
sleep 0.6
task_is "$c" queued || fail "c should wait under the cap: $(task_state "$c")"
js=$("$CARMA" show "$c" --json)
[ "$(jq -r .reason_code <<<"$js")" = task_cap ] || fail "c's reason_code: $js"
[ "$(jq -r .reason <<<"$js")" = "GPU 0 already runs max_tasks_per_gpu = 2 tasks" ] \
    || fail "c's reason: $(jq -r .reason <<<"$js")"
[ "$("$CARMA" gpus --json | jq '.[0].holds | length')" = 2 ] || fail "GPU 0 should hold 2 tasks"
wait_until 20 task_is "$c" done || fail "c did not run once a ended: $(task_state "$c")"
as=$("$CARMA" show "$a" --json | jq .ended_at)
cs=$("$CARMA" show "$c" --json | jq .last_attempt.started_at)
[ "$(jq -n "$cs >= $as")" = true ] || fail "c ($cs) should start after a ended ($as)"
wait_until 20 task_is "$b" done || fail "b did not end done"

stop_daemon
[ $fails -eq 0 ] && echo "ok: max_tasks_per_gpu in the daemon"
exit $((fails > 0))
