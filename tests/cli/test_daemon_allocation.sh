#!/usr/bin/env bash
# The daemon inside a Slurm allocation, on the nvml backend over the fake libnvidia-ml.so.1
# with four GPUs: SLURM_JOB_GPUS=1,3 keeps the GPUs whose /dev/nvidiaN minor numbers are 1 and
# 3 (not NVML's 1 and 3: the scenario numbers the device files otherwise), says so at start,
# shows only them in `carma gpus` and places a two-GPU task on exactly them; CUDA_VISIBLE_DEVICES
# by UUID does the same; an entry naming no GPU stops the daemon before it creates anything.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
use_fake_nvml
unset SLURM_JOB_GPUS CUDA_VISIBLE_DEVICES

# NVML order 0..3; minor numbers 0, 3, 2, 1: minors 1 and 3 are NVML GPUs 3 and 1.
cat >"$tmp/scenario" <<SCN
gpu uuid=GPU-fake-n0 name="Fake A100" total=40960 minor=0
gpu uuid=GPU-fake-n1 name="Fake A100" total=40960 minor=3
gpu uuid=GPU-fake-n2 name="Fake A100" total=40960 minor=2
gpu uuid=GPU-fake-n3 name="Fake A100" total=40960 minor=1
SCN
export FAKE_NVML_SCENARIO=$tmp/scenario
printf 'policy = exclusive\nsample_interval_s = 0.2\nkill_grace_s = 1\n' >"$tmp/carma.conf"

# A task that writes the GPUs it was given.
printf '#!/bin/sh\necho "visible=$CUDA_VISIBLE_DEVICES"\n' >"$tmp/show-gpus"
chmod 755 "$tmp/show-gpus"

uuids_shown() { "$CARMA" gpus --json | jq -r '[.[].uuid] | sort | join(",")'; }

SLURM_JOB_GPUS=1,3 start_daemon --gpu-backend nvml --config "$tmp/carma.conf"
[ "$(uuids_shown)" = "GPU-fake-n1,GPU-fake-n3" ] || fail "carma gpus shows: $(uuids_shown)"
# each GPU's minor number (Slurm's numbering, which the SPANK plugin matches the job's GPUs by)
minors=$("$CARMA" gpus --json | jq -r '[.[] | "\(.uuid)=\(.minor)"] | join(",")')
[ "$minors" = "GPU-fake-n1=3,GPU-fake-n3=1" ] || fail "carma gpus --json minor: $minors"
grep -q 'GPUs from the allocation: SLURM_JOB_GPUS=1,3 (/dev/nvidiaN minor numbers): using NVML GPU 1 GPU-fake-n1, NVML GPU 3 GPU-fake-n3; 2 of the node.s 4 GPU(s) left out' \
    "$tmp/daemon.log" || fail "no allocation line at start: $(cat "$tmp/daemon.log")"
id=$("$CARMA" submit --gpus 2 -- "$tmp/show-gpus")
wait_until 15 task_is "$id" done || fail "task $id did not finish: $(task_state "$id")"
v=$("$CARMA" logs "$id" | sed -n 's/^visible=//p' | tr , '\n' | sort | paste -sd,)
[ "$v" = "GPU-fake-n1,GPU-fake-n3" ] || fail "a two-GPU task got: $v"
# A third GPU does not exist for this daemon.
out=$("$CARMA" submit --gpus 3 -- "$tmp/show-gpus" 2>&1) && fail "a three-GPU task was accepted"
grep -q 'has 2' <<<"$out" || fail "three GPUs on a two-GPU allocation: $out"
stop_daemon

# CUDA_VISIBLE_DEVICES by UUID prefix, when Slurm says nothing.
rm -rf "$STATE"
: >"$tmp/daemon.log"
CUDA_VISIBLE_DEVICES=GPU-fake-n2 start_daemon --gpu-backend nvml --config "$tmp/carma.conf"
[ "$(uuids_shown)" = "GPU-fake-n2" ] || fail "CUDA_VISIBLE_DEVICES: carma gpus shows $(uuids_shown)"
stop_daemon

# An entry naming no GPU: exit 1, its name in the message, no socket, no state directory.
for env in SLURM_JOB_GPUS=1,7 CUDA_VISIBLE_DEVICES=GPU-nope CUDA_VISIBLE_DEVICES=; do
    out=$(env "$env" "$CARMA" daemon --gpu-backend nvml --socket "$tmp/bad/c.sock" \
          --state "$tmp/bad-state" 2>&1)
    rc=$?
    [ $rc -eq 1 ] || fail "$env: exit $rc"
    grep -q "${env%%=*}" <<<"$out" || fail "$env: message does not name it: $out"
    [ ! -e "$tmp/bad" ] && [ ! -e "$tmp/bad-state" ] || fail "$env: a failed start left files"
done
# Reading the GPUs without a daemon follows the same rule and says so.
out=$(SLURM_JOB_GPUS=3 "$CARMA" gpus --gpu-backend nvml --samples 1 --json 2>"$tmp/err")
[ "$(jq -r '[.[].uuid] | join(",")' <<<"$out")" = GPU-fake-n1 ] || fail "gpus --gpu-backend nvml: $out"
grep -q 'note: SLURM_JOB_GPUS=3' "$tmp/err" || fail "no note: $(cat "$tmp/err")"

[ $fails -eq 0 ] && echo "all allocation checks passed"
exit $((fails > 0))
