#!/usr/bin/env bash
# Cancelling tasks whose fake job is a child of the task's shell: the shell dies of SIGTERM at
# once, and the supervisor SIGKILLs the process group while the fake job is still removing its
# registration from the fake-GPU state file. The file must survive whole (it is replaced by a
# rename, never rewritten in place): every GPU still listed, no failed GPU sample, and the
# next task still gets its GPU's UUID in CUDA_VISIBLE_DEVICES.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"

printf 'sample_interval_s = 0.2\ngrace_s = 0.2\nkill_grace_s = 1\n' >"$tmp/carma.conf"
start_daemon --sim-gpus 2xA100-40GB --config "$tmp/carma.conf"
SIMSTATE=$STATE/sim-gpus

state_is() { [ "$("$CARMA" show --json "$1" | jq -r .state)" = "$2" ]; }
registered() { # a live process holds memory (the killed fake jobs' lines may linger)
    local pid
    for pid in $(awk '$1 == "proc" { print $2 }' "$SIMSTATE"); do
        kill -0 "$pid" 2>/dev/null && return 0
    done
    return 1
}
for round in $(seq 1 8); do
    id=$("$CARMA" submit -- sh -c "$FAKEJOB --mem 1G --seconds 30; true") || fail "submit"
    wait_until 10 registered || fail "round $round: the fake job did not register"
    "$CARMA" cancel "$id" >/dev/null || fail "cancel $id"
    wait_until 10 state_is "$id" cancelled || fail "round $round: task $id not cancelled"
    if [ "$(grep -c '^gpu GPU-sim-' "$SIMSTATE")" -ne 2 ]; then
        fail "round $round: the state file lost its GPUs ($(stat -c %s "$SIMSTATE") bytes)"
        break
    fi
done
mode=$(stat -c %a "$SIMSTATE")
[ "$mode" = 600 ] || fail "the state file should be private (600), is $mode"

id=$("$CARMA" submit -- sh -c 'echo "[$CUDA_VISIBLE_DEVICES]"') || fail "submit after"
wait_until 10 state_is "$id" done || fail "task after the cancels did not finish"
grep -Eq '^\[GPU-sim-[01]\]$' <<<"$("$CARMA" logs "$id")" \
    || fail "task after the cancels saw CUDA_VISIBLE_DEVICES '$("$CARMA" logs "$id")'"
gpus=$("$CARMA" gpus --json)
[ "$(jq '[.[] | select(.uuid | startswith("GPU-sim-"))] | length' <<<"$gpus")" -eq 2 ] \
    || fail "gpus should name both GPUs: $gpus"
if grep -q "GPU sample failed" "$tmp/daemon.log"; then
    fail "a GPU sample failed: $(grep -m1 'GPU sample failed' "$tmp/daemon.log")"
fi
stop_daemon

echo "$fails failure(s)"
[ $fails -eq 0 ]
