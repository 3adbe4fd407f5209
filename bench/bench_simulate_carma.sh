#!/usr/bin/env bash
# bench_simulate_carma.sh CARMA — the carma policy at scale, beside bench_simulate_scale.sh's
# oracle-magm: Philly-like jobs on 1000xA100-40GB at Philly's arrival rate and 100 times it
# (100,000 jobs), and 200 times it (20,000 jobs: the queue always blocked, where every
# placement call walks every GPU's reservation and up to backfill_depth candidates). Prints the
# wall time and cost per event of each run.
set -eu
carma=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for run in "1 100000" "100 100000" "200 20000"; do
    set -- $run
    rate=$1 jobs=$2
    "$carma" trace synth --jobs "$jobs" --seed 1 --rate "$rate" --out "$tmp/trace.csv"
    start=$(date +%s.%N)
    "$carma" simulate --trace "$tmp/trace.csv" --gpus 1000xA100-40GB --policy carma \
        --json >"$tmp/out.json"
    end=$(date +%s.%N)
    events=$(sed -n 's/^ *"events": \([0-9]*\).*/\1/p' "$tmp/out.json")
    colloc=$(sed -n 's/^ *"collocated_placements": \([0-9]*\).*/\1/p' "$tmp/out.json")
    awk -v s="$start" -v e="$end" -v n="$events" -v r="$rate" -v j="$jobs" -v c="$colloc" 'BEGIN {
        t = e - s
        printf "carma rate x%-4s %6d jobs, 1000 GPUs: %.2f s, %d events, %.3f us/event, " \
               "%d collocated\n", r, j, t, n, 1e6 * t / n, c
    }'
done
