#!/usr/bin/env bash
# A task whose out-of-memory crash was judged while one GPU's memory was unknown is retried
# (that GPU may hold it); once that GPU is seen and is no larger, the carma policy ends the
# task, saying how much it needs, rather than keeping it queued for good at the front of the
# queue (where, once backfill_max_skips tasks had passed it, it held back the rest). Fake
# NVML: two 40 GB GPUs, GPU 1's memory queries failing at first.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
use_fake_nvml
gpus='gpu uuid=GPU-fake-0000 name="NVIDIA A100-SXM4-40GB" total=40960 used=0 util=0 power=60000
gpu uuid=GPU-fake-0001 name="NVIDIA A100-SXM4-40GB" total=40960 used=0 util=0 power=60000'
printf '%s\nfail nvmlDeviceGetMemoryInfo_v2 999 gpu=1\nfail nvmlDeviceGetMemoryInfo 999 gpu=1\n' \
    "$gpus" >"$tmp/scenario"
export FAKE_NVML_SCENARIO=$tmp/scenario
printf '%s\n' "policy = carma" "grace_s = 0.4" "sample_interval_s = 0.2" >"$tmp/carma.conf"
start_daemon --gpu-backend nvml --config "$tmp/carma.conf"

msg='torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 45.00 GiB.'
o=$("$CARMA" submit --mem 1G --name O -- sh -c "echo '$msg' >&2; exit 1")
wait_until 10 grep -q "task $o to the recovery queue" "$tmp/daemon.log" \
    || fail "O was not retried with GPU 1's memory unknown: $(cat "$tmp/daemon.log")"
echo "$gpus" >"$tmp/scenario.new" && mv "$tmp/scenario.new" "$tmp/scenario"
ended() { case "$(task_state "$1")" in queued|running) return 1;; esac; }
wait_until 10 ended "$o" || fail "O still $(task_state "$o") once every GPU's memory was known"
t=$("$CARMA" show --json "$o")
jq -e '.state == "failed" and (.end_reason | test("not retried: it needs 46080 MiB"))' \
    <<<"$t" >/dev/null || fail "O: $(jq -c '{state, outcome, end_reason}' <<<"$t")"
grep -q "task $o failed (not retried: it needs 46080 MiB, more than any GPU here holds)" \
    "$tmp/daemon.log" || fail "O's end is not logged: $(tail -5 "$tmp/daemon.log")"
# and the queue moves on
n=$("$CARMA" submit --mem 1G --name N -- true)
wait_until 10 task_is "$n" done || fail "N did not run: $(task_state "$n")"
stop_daemon
echo "$fails failure(s)"
[ $fails -eq 0 ]
