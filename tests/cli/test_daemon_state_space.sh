#!/usr/bin/env bash
# state_min_free_mib: while the state directory's filesystem has less than that free, the
# daemon refuses new tasks (saying how short it is) and the queue controls that each add to
# its database (hold, priority), starts no queued one (whose reason says why) and keeps
# running (its database still answers); running tasks' output is dropped, with a line in
# their stderr log when that starts and when it ends, and the task goes on. The free
# space is a gauge in the metrics. Part 1 sets a floor above what the disk has; part 2 runs on
# a 16 MiB tmpfs that the test fills and empties, and needs to mount one (root with
# CAP_SYS_ADMIN: it says so and stops when it cannot).
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
KEEP_STATE_FLOOR=1

# ---- 1: a floor 1 GiB above what the disk has free (a task queued, held, before it was set)
start_daemon --sim-gpus 1xA100-40GB --set state_min_free_mib=0
queued=$("$CARMA" submit --hold -- true) || fail "submit without a floor"
stop_daemon
floor=$(( $(df -m --output=avail "$tmp" | tail -1) + 1024 ))
printf '%s\n' "sample_interval_s = 0.1" "state_min_free_mib = $floor" \
    "metrics_listen = 127.0.0.1:0" >"$tmp/carma.conf"
start_daemon --sim-gpus 1xA100-40GB --config "$tmp/carma.conf"
if out=$("$CARMA" submit -- true 2>&1); then
    fail "a task was taken under the floor: $out"
else
    grep -qE "state directory's filesystem \($STATE\) has [0-9]+ MiB free, less than state_min_free_mib = $floor: no new tasks until it has more" <<<"$out" \
        || fail "the refusal does not say why: $out"
fi
"$CARMA" queue >/dev/null || fail "the daemon stopped answering"
# Nor are queue controls that a user could repeat without end, each one an event in the
# database (a priority flipped ~90,000 times a second filled the disk past the floor): hold
# and priority are refused; release and cancel, which end a hold or a task, are not.
out=$("$CARMA" priority "$queued" -5 2>&1) && fail "a priority was taken under the floor: $out"
grep -q "less than state_min_free_mib = $floor" <<<"$out" || fail "priority refusal: $out"
"$CARMA" release "$queued" >/dev/null || fail "release refused under the floor"
out=$("$CARMA" hold "$queued" 2>&1) && fail "a hold was taken under the floor: $out"
grep -q "less than state_min_free_mib = $floor" <<<"$out" || fail "hold refusal: $out"
"$CARMA" cancel "$queued" >/dev/null || fail "cancel refused under the floor"
[ "$(grep -c "state directory $STATE: [0-9]* MiB free, under state_min_free_mib = $floor" "$tmp/daemon.log")" = 1 ] \
    || fail "not logged once: $(grep "state directory" "$tmp/daemon.log")"
wait_until 5 sh -c "grep -q 'serving metrics on' '$tmp/daemon.log'"
free=$(metrics_get /metrics | sed -nE 's/^carma_state_free_mib ([0-9.e+]+)$/\1/p')
[ -n "$free" ] || fail "no carma_state_free_mib sample"
stop_daemon
"$CARMA" config --set state_min_free_mib=-1 >/dev/null 2>&1 && fail "state_min_free_mib = -1 accepted"

# ---- 2: a filesystem that runs short, and has room again
mkdir -p "$STATE"
if ! mount -t tmpfs -o size=16m,mode=0700 carma-test "$STATE" 2>/dev/null; then
    echo "part 2 not run: cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)"
    [ $fails -eq 0 ] || { cat "$tmp/daemon.log"; exit 1; }
    exit 0
fi
trap 'stop_daemon; kill_supervisors; umount -l "$STATE"; cleanup' EXIT
: >"$tmp/daemon.log"
printf '%s\n' "sample_interval_s = 0.1" "grace_s = 0.2" "state_min_free_mib = 8" \
    >"$tmp/carma.conf"
start_daemon --sim-gpus 2xA100-40GB --config "$tmp/carma.conf"
avail() { df -B1 --output=avail "$STATE" | tail -1; }
# the task writes a line, waits for go1, writes 2 MiB, waits for go2, writes END
go=$tmp/go
t=$("$CARMA" submit --name writer -- sh -c "echo begin; while [ ! -e $go.1 ]; do sleep 0.1; done;
    head -c 2097152 /dev/zero | tr '\0' x; while [ ! -e $go.2 ]; do sleep 0.1; done; echo END")
held=$("$CARMA" submit --hold --name held -- true)
log=$STATE/attempts/$t.1
wait_until 10 grep -q begin "$log/stdout" || fail "the writer did not start"
head -c $(( $(avail) - 4 * 1048576 )) /dev/zero >"$STATE/filler" # 4 MiB left: under 8
wait_until 5 grep -q "under state_min_free_mib = 8" "$tmp/daemon.log" \
    || fail "the daemon did not see the floor: $(df -m "$STATE" | tail -1)"
out=$("$CARMA" submit -- true 2>&1) && fail "a task was taken under the floor: $out"
"$CARMA" release "$held" >/dev/null || fail "release refused"
sleep 1.2 # past the pump's second: its next output looks at the free space
touch "$go.1"
wait_until 10 grep -q "output is dropped until it has more" "$log/stderr" \
    || fail "the writer's stderr log does not say its output is dropped"
sleep 1
task_is "$held" queued || fail "a queued task started under the floor: $(task_state "$held")"
js=$("$CARMA" show --json "$held")
[ "$(jq -r .reason_code <<<"$js")" = state_space ] \
    && jq -r .reason <<<"$js" | grep -qE "^the state directory's filesystem is short of space \([0-9]+ MiB free, state_min_free_mib = 8\)$" \
    || fail "the queued task's reason: $(jq -c '[.reason_code, .reason]' <<<"$js")"
task_is "$t" running || fail "the writer did not go on: $(task_state "$t")"
rm -f "$STATE/filler"
wait_until 5 grep -q "MiB free again" "$tmp/daemon.log" || fail "the daemon did not see the room"
sleep 1.2
touch "$go.2"
"$CARMA" wait --timeout 20 "$t" "$held" >/dev/null
task_is "$t" done || fail "writer: $(task_state "$t")"
task_is "$held" done || fail "held: $(task_state "$held")"
[ "$(cat "$log/stdout")" = "$(printf 'begin\nEND')" ] \
    || fail "the writer's stdout log holds $(stat -c %s "$log/stdout") bytes, not begin and END"
grep -q "room again; 2097152 bytes of the task's output were dropped" "$log/stderr" \
    || fail "the stderr log does not say output was dropped: $(cat "$log/stderr")"
stop_daemon
[ $fails -eq 0 ] || { cat "$tmp/daemon.log"; exit 1; }
