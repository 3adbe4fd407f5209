#!/usr/bin/env bash
# bench_submit_array.sh CARMA [ROUNDS] — `carma submit --array 0-999` (1000 tasks, the most one
# array takes) to a daemon on one simulated GPU: the time from the command's start until it has
# printed all 1000 ids (it exits then), each round (ROUNDS, 3) on a fresh daemon and state
# directory. The GPU is held by a first task, so the 1000 are stored and queued but none is
# launched; the array is one request to the daemon, queued all or none.
set -eu
CARMA=$(realpath "$1")
ROUNDS=${2:-3}
tmp=$(mktemp -d)
SOCK=$tmp/s
export CARMA_SOCKET=$SOCK
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
start() {
    "$CARMA" daemon --socket "$SOCK" --state "$1" --gpu-backend sim --sim-gpus 1xA100-40GB \
        >/dev/null 2>>"$tmp/log" &
    pid=$!
    for _ in $(seq 100); do "$CARMA" queue >/dev/null 2>&1 && return; sleep 0.1; done
    echo "daemon did not start: $(cat "$tmp/log")" >&2; exit 1
}
for r in $(seq "$ROUNDS"); do
    start "$tmp/state$r"
    "$CARMA" submit --name blocker -- sleep 300 >/dev/null
    t0=$(date +%s%N)
    "$CARMA" submit --array 0-999 --name sweep -- true >"$tmp/ids"
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    ids=$(wc -w <"$tmp/ids")
    queued=$("$CARMA" queue --json | jq '[.[] | select(.state == "queued")] | length')
    echo "submit --array 0-999 (1000 tasks, one daemon, 1 sim GPU): $ms ms, $ids ids printed," \
         "$queued queued$([ "$ids" -eq 1000 ] && [ "$queued" -eq 1000 ] || echo '  [ERROR]')"
    echo "$ms" >>"$tmp/times"
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
done
sort -n "$tmp/times" | awk '{ t[NR] = $1 } END {
    printf "submit --array 0-999: median %d ms of %d rounds (%.0f tasks/s)\n",
           t[int((NR + 1) / 2)], NR, 1000000 / t[int((NR + 1) / 2)] }'
