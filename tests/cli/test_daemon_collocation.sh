#!/usr/bin/env bash
# A task placed beside another that the GPU's last sample does not show yet (its process not on
# the GPU: still starting, or one that never uses it) is collocated all the same: the log says
# so and carma_collocated_placements_total counts it, as docs/metrics.md has it ("placed on a
# GPU that already ran another task"); the MPS cap goes by the same flag.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"

# one GPU, the carma policy (no grace period: the second task is placed at once)
start_daemon --sim-gpus 1xA100-40GB --set policy=carma --set metrics_listen=127.0.0.1:0
a=$("$CARMA" submit --mem 1G -- sleep 30)
wait_until 10 task_is "$a" running || fail "task $a never ran"
b=$("$CARMA" submit --mem 1G -- sleep 30)
wait_until 10 task_is "$b" running || fail "task $b was not placed beside task $a"
grep -q "task $b: attempt 1 on GPUs 0 (policy, collocated)" "$tmp/daemon.log" \
    || fail "task $b shares GPU 0 with task $a, yet the log does not call it collocated"
m=$(metrics_get /metrics)
got=$(awk '$1 == "carma_collocated_placements_total" {print $NF}' <<<"$m")
[ "$got" = 1 ] || fail "carma_collocated_placements_total = '$got', want 1"
"$CARMA" cancel "$a" "$b" >/dev/null

stop_daemon
[ $fails -eq 0 ] || { echo "--- daemon log"; cat "$tmp/daemon.log"; }
echo "$fails failure(s)"
[ $fails -eq 0 ]
