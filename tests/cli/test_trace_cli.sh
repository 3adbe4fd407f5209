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
# --out's mode: a new file's as any the user creates (0666 less the umask), a replaced file's
# kept (a private trace stays private; it was made 0644)
(umask 077 && "$CARMA" trace synth --jobs 3 --out private.csv) && chmod 640 out.csv &&
    "$CARMA" trace synth --jobs 3000 --rate 7 --seed 5 --out out.csv &&
    [ "$(stat -c %a private.csv) $(stat -c %a out.csv)" = "600 640" ] ||
    fail "--out modes: $(stat -c '%n %a' private.csv out.csv)"
# and its group (where this user may give it another, as root can)
if chgrp nogroup out.csv 2>/dev/null; then
    "$CARMA" trace synth --jobs 3000 --rate 7 --seed 5 --out out.csv &&
        [ "$(stat -c '%a %G' out.csv)" = "640 nogroup" ] ||
        fail "--out's group: $(stat -c '%a %G' out.csv)"
fi
cmp -s stdout.csv out.csv || fail "stdout and --out differ: $(diff stdout.csv out.csv | head -3)"

# Offsets past 1e9 s (about 31 years) are refused: synth's parameters are a usage error, a
# trace file a failure naming its line (1e300 s gave a makespan of 0).
err=$("$CARMA" trace synth --jobs 3 --rate 1e-290 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q "job 2 would be submitted .* s in, past the latest a trace" <<<"$err" \
    && grep -q "1000000000 s (about 31 years): lower --jobs or raise --rate" <<<"$err" \
    || fail "synth past the bound: exit 2 ($rc: $err)"
# A seed past int64 is out of range, not "no integer", however many digits it has.
for seed in 9223372036854775808 "$(printf '9%.0s' {1..70})"; do
    err=$("$CARMA" trace synth --jobs 3 --seed "$seed" 2>&1 >/dev/null); rc=$?
    [ $rc -eq 2 ] && grep -qF -- "--seed: '$seed' is out of range (at most 9223372036854775807)" \
        <<<"$err" || fail "--seed $seed: exit 2 saying out of range ($rc: $err)"
done
err=$("$CARMA" trace synth --jobs 3 --seed -1 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -qF -- "--seed must be at least 0, got '-1'" <<<"$err" \
    || fail "--seed -1: exit 2 ($rc: $err)"
# --rate above 1e9 is refused saying the bound (it said "expected a number > 0" of 2e9); --help
# says it.
err=$("$CARMA" trace synth --jobs 3 --rate 2e9 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -qF -- "--rate: expected a number > 0 and at most 1e9, got '2e9'" <<<"$err" \
    || fail "--rate 2e9: exit 2 naming the bound ($rc: $err)"
"$CARMA" trace synth --help | tr '\n' ' ' | grep -q "(default 1, at most 1e9)" \
    || fail "trace synth --help gives --rate's bound"
printf 'seq,submit_offset_s,task_file\n1,1e300,BERT_base.rad\n' >huge.csv
err=$("$CARMA" simulate --trace huge.csv --policy exclusive 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -q "huge.csv:2: submit_offset_s 1e+300 is past the latest" <<<"$err" \
    || fail "a trace past the bound: exit 1 naming the line ($rc: $err)"

# --out a directory: refused naming it as one ("." said "Device or resource busy"), nothing left
mkdir dir
for d in . dir; do
    err=$("$CARMA" trace synth --jobs 3 --out "$d" 2>&1 >/dev/null); rc=$?
    [ $rc -eq 1 ] && grep -qx "carma trace synth: $d: is a directory (expected the trace file \
to write)" <<<"$err" || fail "synth --out $d: exit 1 saying it is a directory ($rc: $err)"
done
[ -z "$(ls -A dir)" ] && ! ls -A | grep -q tmp || fail "synth --out a directory left files"

[ "$fails" -eq 0 ] && echo "trace cli: all checks passed"
exit "$fails"
