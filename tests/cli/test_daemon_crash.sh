#!/usr/bin/env bash
# Crash safety: three clients submit short tasks while the daemon is killed with SIGKILL at
# random moments (at least 20 times) and restarted each time. In the end every acknowledged
# task (its client printed an id) has run exactly once: each writes "ID ATTEMPT" to a marker
# file as it starts, and every id appears there once, with one attempt, its task done.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"

CLIENTS=3
PER_CLIENT=15
MIN_KILLS=20
MARK=$tmp/markers
: >"$MARK"
printf 'sample_interval_s = 0.1\ngrace_s = 0.1\nkill_grace_s = 1\n' >"$tmp/carma.conf"
daemon() { start_daemon --sim-gpus 4xA100-40GB --config "$tmp/carma.conf"; }

# A client: submits until PER_CLIENT submissions were acknowledged, retrying refused ones.
client() { # N
    local n=0 id
    while [ $n -lt $PER_CLIENT ]; do
        if id=$("$CARMA" submit --name "c$1-$n" -- \
                sh -c 'echo "$CARMA_TASK_ID $CARMA_ATTEMPT" >>'"$MARK"'; sleep 0.2' 2>/dev/null); then
            echo "$id" >>"$tmp/acked.$1"
            n=$((n + 1))
        fi
        sleep "0.$((RANDOM % 3))$((RANDOM % 10))"
    done
}

daemon
pids=()
for c in $(seq 1 $CLIENTS); do
    : >"$tmp/acked.$c"
    client "$c" &
    pids+=($!)
done
clients_running() { local p; for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }

kills=0
deadline=$((SECONDS + 45))
while { [ $kills -lt $MIN_KILLS ] || clients_running; } && [ $SECONDS -lt $deadline ]; do
    sleep "0.$((RANDOM % 6))$((RANDOM % 10))"
    kill -KILL "$DAEMON_PID"
    wait "$DAEMON_PID" 2>/dev/null
    DAEMON_PID=
    kills=$((kills + 1))
    daemon
done
wait "${pids[@]}"
[ $kills -ge $MIN_KILLS ] || fail "only $kills kills in the time allowed"

acked=$(cat "$tmp"/acked.* | sort -n)
nacked=$(wc -l <<<"$acked")
echo "$kills kills, $nacked acknowledged submissions"
[ "$nacked" -eq $((CLIENTS * PER_CLIENT)) ] || fail "expected $((CLIENTS * PER_CLIENT)) acknowledged submissions, got $nacked"
dups=$(uniq -d <<<"$acked" | tr '\n' ' ')
[ -z "$dups" ] || fail "ids acknowledged to two submissions: $dups"

all_ended() { "$CARMA" queue --all --json | jq -e 'all(.[]; .state=="done" or .state=="failed" or .state=="cancelled")'; }
wait_until 30 all_ended || fail "tasks did not end: $("$CARMA" queue --all --json | jq -c '[.[] | select(.state!="done") | {id, state}]')"
q=$("$CARMA" queue --all --json)
for id in $acked; do
    ran=$(grep -c "^$id " "$MARK")
    [ "$ran" -eq 1 ] || fail "task $id ran $ran times: $(grep "^$id " "$MARK" | tr '\n' ';')"
    st=$(jq -r ".[] | select(.id==$id) | \"\(.state) \(.attempts)\"" <<<"$q")
    [ "$st" = "done 1" ] || fail "task $id: expected 'done 1' (state, attempts), got '$st'"
done
# submissions whose reply was lost may have run, but never twice
twice=$(cut -d' ' -f1 "$MARK" | sort -n | uniq -d | tr '\n' ' ')
[ -z "$twice" ] || fail "tasks that ran more than once: $twice"
stop_daemon
echo "$fails failure(s)"
[ $fails -eq 0 ]
