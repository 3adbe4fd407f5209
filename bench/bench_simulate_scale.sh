#!/usr/bin/env bash
# bench_simulate_scale.sh CARMA — `carma simulate` at scale: 100,000 Philly-like jobs on
# 1000xA100-40GB with oracle-magm. Target: under 5 s. Two loads: Philly's own arrival rate
# (about 1 % of the server busy) and arrivals 100 times as frequent (about 65 % busy, with
# collocations), the one that exercises the windows and the policy path, and 200 times (the
# server overloaded: the queue always blocked, windows aggregated every simulated second).
# Each rate also gets its cost per event (wall time / events, the run's whole process): the
# blocked case should cost about what the free one does, and the last line sets them side by side.
set -eu
carma=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for rate in 1 100 200; do
    "$carma" trace synth --jobs 100000 --seed 1 --rate "$rate" --out "$tmp/trace.csv"
    start=$(date +%s.%N)
    "$carma" simulate --trace "$tmp/trace.csv" --gpus 1000xA100-40GB --policy oracle-magm \
        --json >"$tmp/out.json"
    end=$(date +%s.%N)
    events=$(sed -n 's/^ *"events": \([0-9]*\).*/\1/p' "$tmp/out.json")
    util=$(sed -n 's/^ *"gpu_util_mean": \([0-9.e-]*\).*/\1/p' "$tmp/out.json")
    colloc=$(sed -n 's/^ *"collocated_placements": \([0-9]*\).*/\1/p' "$tmp/out.json")
    awk -v s="$start" -v e="$end" -v n="$events" -v r="$rate" -v u="$util" -v c="$colloc" 'BEGIN {
        t = e - s
        printf "rate x%-4s 100000 jobs, 1000 GPUs, oracle-magm: %.2f s, %d events, %.0f events/s, " \
               "util %.1f %%, %d collocated  [%s]\n", r, t, n, n / t, 100 * u, c,
               (t < 5 ? "under 5 s: ok" : "OVER 5 s")
        printf "rate x%-4s %.3f us/event\n", r, 1e6 * t / n
    }' | tee -a "$tmp/lines"
done
# x1: the server almost idle; x200: the queue always blocked.
awk '/us\/event$/ { us[$2] = $3 }
     END { free = us["x1"] > 0 ? us["x200"] / us["x1"] : 0
           loaded = us["x100"] > 0 ? us["x200"] / us["x100"] : 0
           printf "us/event: free (x1) %.3f, loaded (x100) %.3f, blocked (x200) %.3f; " \
                  "blocked / free %.2f, blocked / loaded %.2f\n",
                  us["x1"], us["x100"], us["x200"], free, loaded }' "$tmp/lines"
