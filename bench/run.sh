#!/usr/bin/env bash
# bench/run.sh BUILD_DIR — runs every benchmark: the programs built from bench/bench_*.c and the
# bench/bench_*.sh scripts (which drive BUILD_DIR/carma). Benchmarks measure speed; they are not
# tests and are not run by `make test`.
set -eu
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
found=0
for b in "$build"/bench/bench_*; do
    [ -x "$b" ] || continue
    found=1
    echo "== $(basename "$b")"
    "$b"
done
for b in "$here"/bench_*.sh; do
    [ -e "$b" ] || continue
    found=1
    echo "== $(basename "$b")"
    bash "$b" "$build/carma"
done
[ "$found" -eq 1 ] || { echo "run.sh: no benchmarks found" >&2; exit 1; }
