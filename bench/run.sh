#!/bin/sh
# Runs carma's benchmarks against a build directory (default: build).
set -eu
BUILD=${1:-build}
for b in "$BUILD"/bench/bench_*; do
    [ -x "$b" ] || continue
    echo "== $(basename "$b")"
    "$b"
done
