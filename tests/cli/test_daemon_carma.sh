#!/usr/bin/env bash
# The carma policy in the daemon (sim backend, one 40 GB GPU): the memory ledger places a task
# beside one that is still in its grace period (CARMA's policies would wait grace_s = 60 s), a
# task too big for what is left waits, and a later small one is backfilled past it; the big one
# runs once the GPU empties, and every task ends done. Then an OOM in a collocated task is
# learned: it is retried with what it was seen to need as its figure ("learned"; the fake
# job's message asks for all 14 GB at once).
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"

cat >"$tmp/carma.conf" <<CONF
policy = carma
grace_s = 60
margin_mib = 512
sample_interval_s = 0.2
kill_grace_s = 1
CONF
start_daemon --sim-gpus 1xA100-40GB --config "$tmp/carma.conf"
job() { # MEM_DECLARED MEM_REAL SECONDS
    "$CARMA" submit --mem "$1" -- "$FAKEJOB" --mem "$2" --seconds "$3"
}

a=$(job 10G 10G 6)
wait_until 10 task_is "$a" running || fail "task $a did not start"
b=$(job 10G 10G 6)
# b goes beside a long before a's 60 s grace period ends: the ledger has room for it.
wait_until 5 task_is "$b" running || fail "ledger: task $b did not start beside $a within 5 s"
[ "$("$CARMA" gpus --json | jq '.[0].tasks | length')" -eq 2 ] \
    || fail "ledger: GPU 0 should hold 2 tasks: $("$CARMA" gpus --json)"
# no grace state is shown where none holds anything back (CARMA's policies: test_daemon_nvml)
[ "$("$CARMA" gpus --json | jq -c '[.[0].grace, .[0].grace_left_s]')" = "[null,null]" ] \
    || fail "ledger: no grace state under carma: $("$CARMA" gpus --json | jq -c '.[0]')"
"$CARMA" gpus | awk 'NR == 2 && $10 != "-" { exit 1 }' || fail "ledger: GRACE column: $("$CARMA" gpus)"
# 40 GB - 512 reserve - 2 x (10 GB + 512 margin) leaves 18.5 GB: the 30 GB head must wait;
# the 1 GB task submitted after it fits now and is backfilled.
h=$(job 30G 30G 2)
s=$(job 1G 1G 1)
wait_until 5 task_is "$s" running || wait_until 1 task_is "$s" done || fail "backfill: $s did not pass $h"
task_is "$h" queued || fail "the head $h should still wait for room: $(task_state "$h")"
# with no run time to judge s by, backfill counted it against the head, and the head says so
"$CARMA" show "$h" --json | jq -e '.reason | endswith("; 1 later task passed it (backfill without run times, at most 8)")' >/dev/null \
    || fail "the head's reason should say a later task passed it: $("$CARMA" show "$h" --json | jq .reason)"
all_done() { for id in "$a" "$b" "$h" "$s"; do task_is "$id" done || return 1; done; }
wait_until 40 all_done || fail "not all done: $("$CARMA" queue --all --json | jq -c '[.[] | {id, state}]')"
hs=$("$CARMA" show "$h" --json | jq '.last_attempt.started_at')
ss=$("$CARMA" show "$s" --json | jq '.last_attempt.started_at')
[ "$(jq -n "$ss < $hs")" = true ] || fail "backfill: $s (started $ss) should start before $h ($hs)"

# OOM learning: c declares 2 GB but takes 14 GB beside d; with d holding 30 GB, it crashes.
d=$(job 30G 30G 8)
wait_until 10 task_is "$d" running || fail "task $d did not start"
c=$(job 2G 14G 2)
learned() { [ "$("$CARMA" show "$c" --json | jq -r .mem_source)" = learned ]; }
wait_until 20 learned || fail "OOM learning: $c's figure should be learned: $("$CARMA" show "$c" --json | jq -c '{state, mem_mib, mem_source, attempts}')"
wait_until 40 task_is "$c" done || fail "OOM learning: $c should end done: $(task_state "$c")"
[ "$("$CARMA" show "$c" --json | jq .mem_mib)" -ge 14000 ] \
    || fail "OOM learning: $c's learned figure should cover its 14 GB: $("$CARMA" show "$c" --json | jq -c '{mem_mib}')"

stop_daemon
[ $fails -eq 0 ] && echo "ok: carma policy in the daemon (ledger, backfill, OOM learning)"
exit $((fails > 0))
