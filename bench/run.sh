#!/usr/bin/env bash
# bench/run.sh BUILD_DIR — runs every bench/*.sh benchmark against BUILD_DIR/carma.
# Benchmarks measure speed; they are not tests and are not run by `make test`.
set -eu
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
for b in "$here"/bench_*.sh; do
    echo "== $(basename "$b")"
    bash "$b" "$build/carma"
done
