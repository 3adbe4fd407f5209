#!/usr/bin/env bash
# An out-of-memory crash teaches its identical tasks (same command, directory, --batch and GPU
# count: the memory history's key) what it was seen to need: those still queued learn the
# figure (carma places them by it, rather than each crashing once), a later identical
# submission finds it in the memory history, and one taught a figure no GPU holds ends
# without starting, saying why. Fake NVML: two 40 GB GPUs.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
use_fake_nvml
printf '%s\n' \
    'gpu uuid=GPU-fake-0000 name="NVIDIA A100-SXM4-40GB" total=40960 used=0 util=0 power=60000' \
    'gpu uuid=GPU-fake-0001 name="NVIDIA A100-SXM4-40GB" total=40960 used=0 util=0 power=60000' \
    >"$tmp/scenario"
export FAKE_NVML_SCENARIO=$tmp/scenario
printf '%s\n' "policy = carma" "grace_s = 0.4" "sample_interval_s = 0.2" >"$tmp/carma.conf"
start_daemon --gpu-backend nvml --config "$tmp/carma.conf"
ended() { case "$(task_state "$1")" in queued|running) return 1;; esac; }
oom() { # GiB: a command that crashes asking for that much
    echo "echo 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate $1.00 GiB.' >&2; exit 1"
}

# A sweep: B is queued held while its twin A crashes asking for 20 GiB.
cmd=$(oom 20)
b=$("$CARMA" submit --hold --mem 1G --batch 8 --name B -- sh -c "$cmd")
a=$("$CARMA" submit --max-retries 0 --mem 1G --batch 8 --name A -- sh -c "$cmd")
c=$("$CARMA" submit --hold --mem 1G --batch 16 --name C -- sh -c "$cmd") # another batch
wait_until 10 ended "$a" || fail "A did not end: $(task_state "$a")"
t=$("$CARMA" show --json "$b")
jq -e '.mem_mib == 20480 and .mem_source == "learned"' <<<"$t" >/dev/null \
    || fail "B did not learn A's figure: $(jq -c '{mem_mib, mem_source}' <<<"$t")"
grep -q "task $a: 1 queued identical task(s) learned its figure, 20480 MiB" "$tmp/daemon.log" \
    || fail "the teaching is not logged: $(tail -3 "$tmp/daemon.log")"
t=$("$CARMA" show --json "$c")
jq -e '.mem_mib == 1024 and .mem_source == "oracle"' <<<"$t" >/dev/null \
    || fail "C (another batch) learned: $(jq -c '{mem_mib, mem_source}' <<<"$t")"
# a later identical submission without --mem: the memory history has what A was seen to need
d=$("$CARMA" submit --hold --batch 8 --name D -- sh -c "$cmd")
t=$("$CARMA" show --json "$d")
jq -e '.mem_mib == 20480 and .mem_source == "history"' <<<"$t" >/dev/null \
    || fail "D has no history figure: $(jq -c '{mem_mib, mem_source}' <<<"$t")"
"$CARMA" cancel "$b" "$c" "$d" >/dev/null

# More than any GPU holds: the crash ends E (not retried) and its queued twin F too, unstarted.
cmd=$(oom 45)
f=$("$CARMA" submit --hold --mem 1G --name F -- sh -c "$cmd")
e=$("$CARMA" submit --mem 1G --name E -- sh -c "$cmd")
wait_until 10 ended "$e" || fail "E did not end: $(task_state "$e")"
"$CARMA" release "$f" >/dev/null
wait_until 10 ended "$f" || fail "F still $(task_state "$f")"
t=$("$CARMA" show --json "$f")
jq -e '.state == "failed" and .attempts == 0 and (.end_reason |
        test("never started: an identical task was seen to need 46080 MiB"))' <<<"$t" \
    >/dev/null || fail "F: $(jq -c '{state, attempts, end_reason}' <<<"$t")"
# and a later submission without --mem is refused at once, by the memory history's figure
out=$("$CARMA" submit --name G -- sh -c "$cmd" 2>&1) && fail "G was queued: $out"
grep -q "exceeds the largest GPU here" <<<"$out" || fail "G's refusal: $out"
stop_daemon
echo "$fails failure(s)"
[ $fails -eq 0 ]
