#!/bin/sh
# run.sh — runs every benchmark program built from bench/bench_*.c. Usage: bench/run.sh BUILD_DIR
set -eu
build=${1:-build}
found=0
for b in "$build"/bench/bench_*; do
    [ -x "$b" ] || continue
    found=1
    echo "== $(basename "$b")"
    "$b"
done
[ "$found" -eq 1 ] || { echo "run.sh: no benchmarks in $build/bench" >&2; exit 1; }
