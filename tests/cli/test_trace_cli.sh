#!/usr/bin/env bash
# `carma trace synth` and traces as `carma simulate` reads them: standard output and --out get
# the same text, every offset exact; bad traces are refused naming the file and line.
set -u
CARMA=$1 SRC=$2
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

# --rate 7 makes fractional offsets of many digits: both outputs must keep every one of them.
"$CARMA" trace synth --jobs 3000 --rate 7 --seed 5 >stdout.csv || fail "synth to stdout exits 0"
"$CARMA" trace synth --jobs 3000 --rate 7 --seed 5 --out out.csv || fail "synth --out exits 0"
cmp -s stdout.csv out.csv || fail "stdout and --out differ: $(diff stdout.csv out.csv | head -3)"

[ "$fails" -eq 0 ] && echo "trace cli: all checks passed"
exit "$fails"
