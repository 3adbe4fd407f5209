#!/usr/bin/env bash
# The daemon end to end on the nvml backend, against the fake libnvidia-ml.so.1: a launched
# task's process, found in the fake's process list by its command line (`proc match=`), moves
# its GPU from launching to grace; a task never seen keeps it launching; the task's peak memory
# is recorded and a second identical submission is placed with it (mem_source "history"); a
# process whose memory NVML cannot give leaves the peak unknown; the `bare` library (no
# optional entry points) leaves every metric null in `carma gpus --json`, as a name or UUID that
# is not UTF-8 is null there; and without the library the daemon fails naming libnvidia-ml and
# leaves nothing behind.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
FAKE_DIR=$(dirname "$CARMA")/tests/fake_nvml
export CARMA_DCGM_LIBRARY=/nonexistent/libdcgm.so.4

# Without the library: exit 1, a message naming it, no socket and no state directory.
out=$(CARMA_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 "$CARMA" daemon --gpu-backend nvml \
      --socket "$tmp/none/c.sock" --state "$tmp/none-state" 2>&1)
rc=$?
[ $rc -eq 1 ] || fail "missing library: exit $rc"
grep -q 'cannot load NVML library /nonexistent/libnvidia-ml.so.1' <<<"$out" || fail "message: $out"
[ ! -e "$tmp/none" ] && [ ! -e "$tmp/none-state" ] || fail "a failed start left files behind"

# Three workloads told apart by their command lines: the fake lists gpujob with 3000 MiB and
# najob with memory NVML cannot give on both GPUs; hiddenjob is never listed.
for j in gpujob najob hiddenjob; do
    printf '#!/bin/sh\nsleep "$1"\n' >"$tmp/$j"
    chmod 755 "$tmp/$j"
done
cat >"$tmp/scenario" <<SCN
gpu uuid=GPU-fake-0000 name="NVIDIA H100 80GB HBM3" total=81559 used=1024 util=10 power=90000 energy=5000 gpm=1 smact=10 smocc=5 drama=3
gpu uuid=GPU-fake-0001 name="NVIDIA H100 80GB HBM3" total=81559 used=1024 util=10 power=90000 energy=5000 gpm=1 smact=10 smocc=5 drama=3
proc gpu=0 match="/bin/sh $tmp/gpujob" used=3000
proc gpu=1 match="/bin/sh $tmp/gpujob" used=3000
proc gpu=0 match="/bin/sh $tmp/najob" used=na
proc gpu=1 match="/bin/sh $tmp/najob" used=na
SCN
export FAKE_NVML_SCENARIO=$tmp/scenario
export CARMA_NVML_LIBRARY=$FAKE_DIR/full/libnvidia-ml.so.1
printf 'policy = exclusive\ngrace_s = 3\nsample_interval_s = 0.2\nkill_grace_s = 1\n' >"$tmp/carma.conf"
start_daemon --gpu-backend nvml --config "$tmp/carma.conf"

gpu_of() { "$CARMA" show --json "$1" | jq -r '.gpus[0] // empty'; }
grace_of() { "$CARMA" gpus --json | jq -r ".[$1].grace"; }
has_gpu() { [ -n "$(gpu_of "$1")" ]; }
state_is() { [ "$("$CARMA" show --json "$1" | jq -r .state)" = "$2" ]; }

id=$("$CARMA" submit --name seen -- "$tmp/gpujob" 6)
wait_until 10 state_is "$id" running || fail "task $id did not start"
wait_until 5 has_gpu "$id" || fail "task $id has no GPU"
g=$(gpu_of "$id")
grace_is() { [ "$(grace_of "$1")" = "$2" ]; }
wait_until 10 grace_is "$g" grace || fail "GPU $g of a matched task never entered grace: $(grace_of "$g")"
"$CARMA" gpus --json | jq -e ".[$g].tasks == [$id]" >/dev/null || fail "GPU $g does not list task $id"
wait_until 15 state_is "$id" done || fail "task $id did not finish"
t=$("$CARMA" show --json "$id")
[ "$(jq .peak_mib <<<"$t")" = 3000 ] || fail "peak of task $id: $t"
[ "$(jq -r .mem_source <<<"$t")" = null ] || fail "task $id had no figure: $t"

# The same task again, without --mem: its figure comes from the measured peak.
id2=$("$CARMA" submit --name again -- "$tmp/gpujob" 6)
t=$("$CARMA" show --json "$id2")
[ "$(jq .mem_mib <<<"$t")" = 3000 ] && [ "$(jq -r .mem_source <<<"$t")" = history ] \
    || fail "second submission not placed from history: $t"
# A different command, or an explicit --mem, is not.
t=$("$CARMA" show --json "$("$CARMA" submit -- "$tmp/gpujob" 3 extra)")
[ "$(jq .mem_mib <<<"$t")" = null ] || fail "a different command got a history figure: $t"
t=$("$CARMA" show --json "$("$CARMA" submit --batch 64 -- "$tmp/gpujob" 3)")
[ "$(jq .mem_mib <<<"$t")" = null ] || fail "a different batch size got a history figure: $t"
t=$("$CARMA" show --json "$("$CARMA" submit --mem 5G -- "$tmp/gpujob" 3)")
[ "$(jq .mem_mib <<<"$t")" = 5120 ] && [ "$(jq -r .mem_source <<<"$t")" = oracle ] \
    || fail "--mem should win over history: $t"
all_done() { "$CARMA" queue --all --json | jq -e 'all(.[]; .state=="done")'; }
wait_until 40 all_done || fail "tasks did not finish: $("$CARMA" queue --all)"

# Memory NVML cannot give: the GPU still enters grace, the peak stays unknown.
id=$("$CARMA" submit -- "$tmp/najob" 4) # its grace state is seen only while it runs
wait_until 10 has_gpu "$id" || fail "najob has no GPU"
g=$(gpu_of "$id")
wait_until 10 grace_is "$g" grace || fail "najob's GPU never entered grace"
wait_until 15 state_is "$id" done || fail "najob did not finish"
[ "$("$CARMA" show --json "$id" | jq .peak_mib)" = null ] || fail "unknown memory gave a peak"
grep -q "task $id: GPU $g does not report its processes' memory; no peak recorded" \
    "$tmp/daemon.log" || fail "no log line about the unknown peak"

# A task whose process never appears keeps its GPU launching.
id=$("$CARMA" submit -- "$tmp/hiddenjob" 4)
wait_until 10 has_gpu "$id" || fail "hiddenjob has no GPU"
sleep 1
[ "$(grace_of "$(gpu_of "$id")")" = launching ] || fail "an unseen task's GPU left launching"
wait_until 15 state_is "$id" done || fail "hiddenjob did not finish"

g=$("$CARMA" gpus --json)
jq -e '.[0] | .activity_source == "gpm" and .power_source == "nvml" and .power_w == 90
       and .mem_total_mib == 81559' <<<"$g" >/dev/null || fail "full library's GPU 0: $g"
stop_daemon

# After a restart the learned figure and the measured peak are still there.
start_daemon --gpu-backend nvml --config "$tmp/carma.conf"
t=$("$CARMA" show --json "$id2")
[ "$(jq .mem_mib <<<"$t")" = 3000 ] && [ "$(jq -r .mem_source <<<"$t")" = history ] \
    && [ "$(jq .peak_mib <<<"$t")" = 3000 ] || fail "after a restart: $t"
stop_daemon

# The bare library: every optional metric unknown, reported as null, never 0.
CARMA_NVML_LIBRARY=$FAKE_DIR/bare/libnvidia-ml.so.1 start_daemon --gpu-backend nvml \
    --config "$tmp/carma.conf"
g=$("$CARMA" gpus --json)
for k in mem_used_mib mem_total_mib smact smocc drama util_gpu power_w; do
    jq -e "all(.[]; .$k == null)" <<<"$g" >/dev/null || fail "bare library: $k not null: $g"
done
jq -e 'all(.[]; .activity_source == "unknown" and .power_source == "unknown")' <<<"$g" \
    >/dev/null || fail "bare library: sources: $g"
"$CARMA" gpus | grep -q 'unknown' || fail "text view does not say unknown: $("$CARMA" gpus)"
stop_daemon

# A name or UUID that is not UTF-8 (JSON cannot hold it) keeps its key in the reply, as null.
printf 'gpu uuid=GPU-ee\377 name="bad\377name" total=1024 used=0\n' >"$tmp/notutf8"
FAKE_NVML_SCENARIO=$tmp/notutf8 start_daemon --gpu-backend nvml --config "$tmp/carma.conf"
g=$("$CARMA" gpus --json)
jq -e '.[0] | has("uuid") and has("name") and .uuid == null and .name == null' <<<"$g" \
    >/dev/null || fail "non-UTF-8 uuid/name dropped from the reply: $g"
stop_daemon
[ $fails -eq 0 ] || { cat "$tmp/daemon.log"; exit 1; }
