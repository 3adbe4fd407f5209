#!/usr/bin/env bash
# The daemon on the nvml backend with a GPU in MIG mode (the fake libnvidia-ml.so.1, `mig=1`):
# CUDA runs nothing on such a GPU as a whole, so the daemon leaves it out: it logs why, once,
# offers only the other GPU (`carma gpus`; Prometheus: `carma_gpu_left_out`), places tasks
# there alone (CUDA_VISIBLE_DEVICES names that GPU's UUID) and makes a second exclusive task
# wait rather than use the MIG GPU.
# With every GPU in MIG mode it refuses to start, saying so, and leaves nothing behind.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
use_fake_nvml

# NVML's GPU 0 is in MIG mode; GPU 1 is a whole GPU (MIG off), first in index order without it.
cat >"$tmp/scenario" <<'SCN'
gpu uuid=GPU-mig-0000 name="NVIDIA A100-SXM4-40GB" total=40960 used=0 mig=1
gpu uuid=GPU-whole-0001 name="NVIDIA A100-SXM4-40GB" total=40960 used=0 mig=0
SCN
export FAKE_NVML_SCENARIO=$tmp/scenario
printf 'policy = exclusive\ngrace_s = 0.2\nsample_interval_s = 0.2\nkill_grace_s = 1\n%s\n' \
    'metrics_listen = 127.0.0.1:0' >"$tmp/carma.conf"
start_daemon --gpu-backend nvml --config "$tmp/carma.conf"

g=$("$CARMA" gpus --json)
[ "$(jq -c '[.[] | .uuid]' <<<"$g")" = '["GPU-whole-0001"]' ] || fail "GPUs offered: $g"
# carma gpus says which GPU it does not use, and why (the protocol's left_out)
out=$("$CARMA" gpus)
grep -qx 'not used: NVML GPU 0 (GPU-mig-0000): MIG enabled' <<<"$out" || fail "gpus text: $out"
# and Prometheus: one carma_gpu_left_out sample, no per-GPU series for it
m=$(metrics_get /metrics)
[ "$(grep -c '^carma_gpu_left_out{' <<<"$m")" = 1 ] || fail "left-out samples: $(grep left_out <<<"$m")"
grep -qE '^carma_gpu_left_out\{nvml_index="0",UUID="GPU-mig-0000",reason="mig",Hostname="[^"]+"\} 1$' \
    <<<"$m" || fail "left-out sample: $(grep left_out <<<"$m")"
grep -q 'GPU-mig-0000' <<<"$(grep -v '^carma_gpu_left_out' <<<"$m")" && fail "the MIG GPU has GPU series"

# Two exclusive tasks: the first runs on the whole GPU; the second waits for it rather than
# take the MIG GPU.
a=$("$CARMA" submit --name first -- sh -c "echo \"\$CUDA_VISIBLE_DEVICES\" >$tmp/first; sleep 3")
b=$("$CARMA" submit --name second -- sh -c "echo \"\$CUDA_VISIBLE_DEVICES\" >$tmp/second")
wait_until 10 task_is "$a" running || fail "task $a did not start: $(task_state "$a")"
sleep 1 # several placement passes
task_is "$b" queued || fail "task $b is $(task_state "$b") while the only whole GPU is taken"
wait_until 20 task_is "$b" done || fail "task $b did not run after $a: $(task_state "$b")"
task_is "$a" done || fail "task $a: $(task_state "$a")"
[ "$(cat "$tmp/first" 2>/dev/null)" = GPU-whole-0001 ] || fail "first ran on: $(cat "$tmp/first")"
[ "$(cat "$tmp/second" 2>/dev/null)" = GPU-whole-0001 ] || fail "second ran on: $(cat "$tmp/second")"

line='NVML GPU 0 (GPU-mig-0000) has MIG enabled: carma schedules whole GPUs, so it places nothing there'
[ "$(grep -cF "$line" "$tmp/daemon.log")" = 1 ] || fail "the MIG GPU is not logged once"
grep -q 'GPU-whole-0001.*MIG' "$tmp/daemon.log" && fail "the whole GPU logged as MIG"
stop_daemon

# Every GPU in MIG mode: exit 1, each GPU logged and the reason said; no socket, no state.
cat >"$tmp/all-mig" <<'SCN'
gpu uuid=GPU-mig-0000 name="NVIDIA A100-SXM4-40GB" total=40960 mig=1
gpu uuid=GPU-mig-0001 name="NVIDIA A100-SXM4-40GB" total=40960 mig=1
SCN
out=$(FAKE_NVML_SCENARIO=$tmp/all-mig timeout 20 "$CARMA" daemon --gpu-backend nvml \
      --socket "$tmp/none/c.sock" --state "$tmp/none-state" 2>&1)
rc=$?
[ $rc -eq 1 ] || fail "all MIG: exit $rc: $out"
grep -qF 'NVML GPU 1 (GPU-mig-0001) has MIG enabled' <<<"$out" || fail "all MIG, per GPU: $out"
grep -q 'all 2 GPU(s) have MIG enabled and carma schedules whole GPUs: no GPU is left' <<<"$out" \
    || fail "all MIG, the reason: $out"
[ ! -e "$tmp/none" ] && [ ! -e "$tmp/none-state" ] || fail "a failed start left files behind"
[ $fails -eq 0 ] || { cat "$tmp/daemon.log"; exit 1; }
