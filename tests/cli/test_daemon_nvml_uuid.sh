#!/usr/bin/env bash
# A GPU whose UUID NVML cannot give (the fake's nvmlDeviceGetUUID fails for it) takes no task:
# a task is told its GPUs by UUID (CUDA_VISIBLE_DEVICES), and on such a GPU it would be told
# none and see no GPU at all. The task waits, the daemon's log says why, and once the UUID can
# be read (NVML is asked again at each sample) the GPU takes it, under its UUID. A GPU lost at
# start whose MIG mode turns out to be on when it comes back takes nothing either (CUDA runs
# nothing on a MIG-mode GPU as a whole; the backend could not leave it out at start).
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
use_fake_nvml
gpus='gpu uuid=GPU-fake-0000 name="NVIDIA H100 80GB HBM3" total=81559 used=1024 util=10 power=90000 energy=5000
gpu uuid=GPU-fake-0001 name="NVIDIA H100 80GB HBM3" total=81559 used=1024 util=10 power=90000 energy=5000'
printf '%s\nfail nvmlDeviceGetUUID 999 gpu=1\n' "$gpus" >"$tmp/scenario"
export FAKE_NVML_SCENARIO=$tmp/scenario
quick_config >"$tmp/carma.conf"
start_daemon --gpu-backend nvml --config "$tmp/carma.conf"
job='echo "[$CUDA_VISIBLE_DEVICES]"; while [ ! -e '"$tmp"'/go ]; do sleep 0.1; done'
a=$("$CARMA" submit --name a -- sh -c "$job")
b=$("$CARMA" submit --name b -- sh -c "$job")
wait_until 10 task_is "$a" running || fail "a did not start: $(task_state "$a")"
sleep 1
task_is "$b" queued || fail "b was placed on the GPU with no UUID: $("$CARMA" show --json "$b" | jq -c .gpus)"
grep -q "GPU 1: its UUID cannot be read, so nothing is placed on it until it can" "$tmp/daemon.log" \
    || fail "the log does not say why GPU 1 takes nothing"
printf '%s\n' "$gpus" >"$tmp/scenario.new" && mv "$tmp/scenario.new" "$tmp/scenario"
wait_until 10 task_is "$b" running || fail "b did not start once the UUID could be read"
grep -q "GPU 1: its UUID is GPU-fake-0001 now" "$tmp/daemon.log" || fail "the UUID's return is not logged"
touch "$tmp/go"
"$CARMA" wait --timeout 20 "$a" "$b" >/dev/null
[ "$("$CARMA" logs "$a")" = "[GPU-fake-0000]" ] || fail "a saw $("$CARMA" logs "$a")"
[ "$("$CARMA" logs "$b")" = "[GPU-fake-0001]" ] || fail "b saw $("$CARMA" logs "$b")"
stop_daemon

# lost at start, back in MIG mode
rm -rf "$STATE" "$tmp/go"
: >"$tmp/daemon.log"
printf '%s\n' "${gpus//energy=5000/energy=5000 mig=0}" >"$tmp/scenario"
sed -i '2s/mig=0/mig=1/' "$tmp/scenario"
echo "lost 1" >>"$tmp/scenario"
start_daemon --gpu-backend nvml --config "$tmp/carma.conf"
grep -v '^lost' "$tmp/scenario" >"$tmp/scenario.new" && mv "$tmp/scenario.new" "$tmp/scenario"
wait_until 10 grep -q "GPU 1 (GPU-fake-0001) is in MIG mode: carma schedules whole GPUs, so nothing is placed on it" "$tmp/daemon.log" \
    || fail "GPU 1's MIG mode, found after start, is not logged"
a=$("$CARMA" submit --name a -- sh -c "$job")
b=$("$CARMA" submit --name b -- sh -c "$job")
wait_until 10 task_is "$a" running || fail "a did not start: $(task_state "$a")"
sleep 1
task_is "$b" queued || fail "b was placed on the GPU in MIG mode: $("$CARMA" show --json "$b" | jq -c .gpus)"
touch "$tmp/go"
"$CARMA" wait --timeout 20 "$a" "$b" >/dev/null
[ "$("$CARMA" logs "$b")" = "[GPU-fake-0000]" ] || fail "b saw $("$CARMA" logs "$b")"
stop_daemon
[ $fails -eq 0 ] || { cat "$tmp/daemon.log"; exit 1; }
