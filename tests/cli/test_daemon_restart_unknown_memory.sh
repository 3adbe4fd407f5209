#!/usr/bin/env bash
# An out-of-memory crash the daemon finds at restart is judged against the GPUs' memory (the
# carma policy learns what the task needs and ends one that needs more than any GPU holds).
# When the restarted daemon's first samples give no GPU's memory (here the fake NVML fails
# both memory queries), that judgement waits, the task still shown running, for a sample that
# gives it; judged against no GPU at all, such a task went to the recovery queue and stayed
# there for good, holding back every task after it (its figure fits no GPU).
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
use_fake_nvml
gpu='gpu uuid=GPU-fake-0000 name="NVIDIA A100-SXM4-40GB" total=40960 used=0 util=0 power=60000'
echo "$gpu" >"$tmp/scenario"
export FAKE_NVML_SCENARIO=$tmp/scenario
printf '%s\n' "policy = carma" "grace_s = 0.4" "sample_interval_s = 0.2" "kill_grace_s = 1" \
    >"$tmp/carma.conf"
restart() { start_daemon --gpu-backend nvml --config "$tmp/carma.conf"; }
restart

msg='torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 45.00 GiB.'
o=$("$CARMA" submit --mem 1G --name O -- sh -c "sleep 1; echo '$msg' >&2; exit 1")
wait_until 10 task_is "$o" running || fail "O did not start: $(task_state "$o")"
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
DAEMON_PID=
wait_until 10 test -s "$STATE/attempts/$o.1/result" || fail "O did not end"

printf '%s\nfail nvmlDeviceGetMemoryInfo_v2 999\nfail nvmlDeviceGetMemoryInfo 999\n' "$gpu" \
    >"$tmp/scenario"
restart
wait_until 5 grep -q "task $o: attempt 1 crashed out of memory; judged once a GPU sample gives" \
    "$tmp/daemon.log" || fail "O's wait is not logged: $(cat "$tmp/daemon.log")"
sleep 1 # several samples without memory
task_is "$o" running \
    || fail "O judged without GPU memory: $("$CARMA" show --json "$o" | jq -c '{state, queue}')"
echo "$gpu" >"$tmp/scenario.new" && mv "$tmp/scenario.new" "$tmp/scenario"
ended() { case "$(task_state "$1")" in queued|running) return 1;; esac; }
wait_until 10 ended "$o" || fail "O not ended once the memory was known:" \
    "$("$CARMA" show --json "$o" | jq -c '{state, queue}')"
t=$("$CARMA" show --json "$o")
jq -e '.state == "failed" and .outcome == "oom" and .attempts == 1' <<<"$t" >/dev/null \
    || fail "O: $(jq -c '{state, outcome, attempts}' <<<"$t")"
sqlite3 "$STATE/carma.db" "SELECT detail FROM events WHERE task_id = $o AND kind = 'ended'" \
    | grep -q "not retried: it needs 46080 MiB" || fail "O's end does not say why"
# and the queue moves on: a task after it runs
n=$("$CARMA" submit --mem 1G --name N -- true)
wait_until 10 task_is "$n" done || fail "N did not run: $(task_state "$n")"
stop_daemon
echo "$fails failure(s)"
[ $fails -eq 0 ]
