#!/bin/sh
# Runs every libFuzzer target built in BUILD/fuzz for SECONDS each (default 10), starting from
# its checked-in seed corpus fuzz/corpus/NAME/. Inputs the fuzzer finds go to a scratch
# directory, not into the checked-in corpus; a crash leaves its input in BUILD/fuzz-artifacts/
# and fails the run (reproduce: BUILD/fuzz/fuzz_NAME FILE).
# Usage: scripts/fuzz.sh BUILD [SECONDS]
set -eu
build=$1
seconds=${2:-10}
cd "$(dirname "$0")/.."
artifacts=$build/fuzz-artifacts
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$artifacts"
failed=""
for bin in "$build"/fuzz/fuzz_*; do
    [ -x "$bin" ] || continue
    name=${bin##*/fuzz_}
    seeds=fuzz/corpus/$name
    [ -d "$seeds" ] || { echo "fuzz: $name has no seed corpus ($seeds)" >&2; failed="$failed $name"; continue; }
    mkdir -p "$scratch/$name"
    if "$bin" "$scratch/$name" "$seeds" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -max_len=65536 -artifact_prefix="$artifacts/$name-" \
        -print_final_stats=1 >"$scratch/$name.log" 2>&1; then
        echo "fuzz: $name: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$scratch/$name.log" |
            grep -o '[0-9]*$') runs in ${seconds}s, no finding"
    else
        echo "fuzz: $name: FAILED" >&2
        grep -E 'ERROR|runtime error|SUMMARY|Test unit written' "$scratch/$name.log" | head -20 >&2
        failed="$failed $name"
    fi
done
[ -z "$failed" ] || { echo "fuzz: findings in:$failed" >&2; exit 1; }
