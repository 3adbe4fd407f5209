#!/usr/bin/env bash
# `carma simulate --plot DIR`: real PNGs (the PNG signature, not empty) for one run and for
# --compare, the .dat data and .gp scripts beside them (the script redraws by hand), no temporary
# files left, mean/max above 16 GPUs, no symlink planted in DIR followed, and clear failures
# that leave DIR as it was (no DIR when there was none): DIR a regular file, no gnuplot on PATH
# (found out before simulating), gnuplot failing (the message names the script).
set -u
CARMA=$1 SRC=$2
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
case $CARMA in /*) ;; *) CARMA=$PWD/$CARMA ;; esac  # runs below change PATH
trace=$SRC/data/traces/test.csv

is_png() { [ -s "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; }
no_tmp() { [ -z "$(find "$@" -name '*.tmp' 2>/dev/null)" ]; }

if ! command -v gnuplot >/dev/null; then
    fail "gnuplot is not installed (scripts/deps.sh installs gnuplot-nox)"
else
    out=$("$CARMA" simulate --trace "$trace" --plot "$tmp/one" 2>"$tmp/err") \
        || fail "--plot run exits 0: $(cat "$tmp/err")"
    grep -q "^makespan" <<<"$out" || fail "--plot still prints the figures"
    is_png "$tmp/one/gpus-carma.png" || fail "gpus-carma.png is a PNG"
    [ -s "$tmp/one/gpus-carma.dat" ] && [ -s "$tmp/one/gpus-carma.gp" ] \
        || fail "data file and script beside the PNG"
    grep -q "gpus-carma.png" "$tmp/err" || fail "a line names the files written"
    [ -e "$tmp/one/policies.png" ] && fail "policies.png only with --compare"
    (cd "$tmp/one" && gnuplot -e "outfile='again.png'" gpus-carma.gp 2>/dev/null) \
        && is_png "$tmp/one/again.png" || fail "the .gp script redraws the PNG by hand"
    grep -q "test.csv" "$tmp/one/gpus-carma.gp" && grep -q "A100-40GB" "$tmp/one/gpus-carma.gp" \
        || fail "the title names the trace and the GPU model"

    "$CARMA" simulate --compare --trace "$trace" --plot "$tmp/cmp/" >/dev/null 2>"$tmp/err" \
        || fail "--compare --plot exits 0: $(cat "$tmp/err")"
    is_png "$tmp/cmp/policies.png" || fail "--compare writes policies.png"
    npol=$("$CARMA" simulate --compare --json --trace "$trace" | grep -c '"policy":')
    [ "$(ls "$tmp/cmp" | grep -c '^gpus-.*\.png$')" = "$npol" ] || fail "one gpus-POLICY.png per policy"
    [ "$(grep -vc '^#' "$tmp/cmp/policies.dat")" = "$npol" ] || fail "policies.dat: a row per policy"
    no_tmp "$tmp/one" "$tmp/cmp" || fail "temporary files left in DIR"

    out=$("$CARMA" simulate --json --trace "$trace" --plot "$tmp/json" 2>/dev/null)
    [ "${out:0:1}" = "{" ] && is_png "$tmp/json/gpus-carma.png" || fail "--json keeps stdout JSON"

    "$CARMA" simulate --trace "$trace" --gpus 20xA100-40GB --plot "$tmp/many" >/dev/null 2>&1 \
        && is_png "$tmp/many/gpus-carma.png" || fail "a 20-GPU run plots"
    grep -q "mean" "$tmp/many/gpus-carma.gp" || fail "above 16 GPUs: mean and max"

    # A gnuplot that fails: the error names the script and quotes gnuplot; no PNG left.
    mkdir "$tmp/bin"
    printf '#!/bin/sh\necho "\\"x.gp\\" line 3: boom" >&2\nexit 1\n' >"$tmp/bin/gnuplot"
    chmod +x "$tmp/bin/gnuplot"
    err=$(PATH="$tmp/bin:$PATH" "$CARMA" simulate --trace "$trace" --plot "$tmp/fails" 2>&1 >/dev/null)
    rc=$?
    [ $rc -eq 1 ] || fail "failing gnuplot exits 1 (got $rc)"
    grep -q "gnuplot failed on $tmp/fails/gpus-carma.gp.*boom" <<<"$err" \
        || fail "failing gnuplot: message names the script: $err"
    [ -e "$tmp/fails" ] && fail "failing gnuplot leaves no DIR (it made it): $(ls -A "$tmp/fails")"
    # ... and in a DIR with an earlier set: all of it stays as it was
    cp -r "$tmp/one" "$tmp/keep"
    PATH="$tmp/bin:$PATH" "$CARMA" simulate --trace "$trace" --gpus 2xA100-40GB \
        --plot "$tmp/keep" >/dev/null 2>&1 && fail "failing gnuplot exits 1"
    diff -r "$tmp/one" "$tmp/keep" >/dev/null || fail "failing gnuplot changed the earlier set"

    # Symlinks planted in DIR (at the temporary names of old, at a final name) are not followed:
    # the files are made in a private directory and renamed over the names.
    mkdir "$tmp/sy"; echo precious >"$tmp/precious"
    for n in .gpus-carma.dat.tmp .gpus-carma.gp.tmp .gpus-carma.png.tmp gpus-carma.gp; do
        ln -s ../precious "$tmp/sy/$n"
    done
    "$CARMA" simulate --trace "$trace" --plot "$tmp/sy" >/dev/null 2>&1 \
        || fail "--plot beside symlinks exits 0"
    [ "$(cat "$tmp/precious")" = precious ] || fail "--plot followed a symlink in DIR"
    [ -f "$tmp/sy/gpus-carma.gp" ] && [ ! -L "$tmp/sy/gpus-carma.gp" ] && is_png "$tmp/sy/gpus-carma.png" \
        || fail "--plot: a symlink at a final name is replaced by the file"
    [ "$(ls -A "$tmp/sy" | grep -c '^\.carma')" = 0 ] || fail "--plot: staging left: $(ls -A "$tmp/sy")"

    # A trace file name with newlines: the .dat files name it in a comment line, and a newline
    # there started a row of data (here a made-up policy's figures).
    odd=$'odd\n0 "fake" 1 1 1 0 1 1 1 0 1 1\n.csv'
    cp "$trace" "$tmp/$odd"
    "$CARMA" simulate --compare --trace "$tmp/$odd" --plot "$tmp/odd" >/dev/null 2>&1 \
        || fail "--plot of a trace with newlines in its name exits 0"
    [ "$(grep -vc '^#' "$tmp/odd/policies.dat")" = "$npol" ] \
        || fail "the trace's name added rows to policies.dat: $(head -3 "$tmp/odd/policies.dat")"
    grep -q '^0 "fake"' "$tmp/odd/gpus-carma.dat" && fail "the name added rows to gpus-carma.dat"
    head -1 "$tmp/odd/policies.dat" | grep -qF 'trace odd?0 "fake"' \
        || fail "policies.dat shows controls as ?: $(head -1 "$tmp/odd/policies.dat")"
fi

# DIR is an existing regular file: a clear error before simulating, exit != 0.
touch "$tmp/file"
err=$("$CARMA" simulate --trace "$trace" --plot "$tmp/file" 2>&1 >/dev/null); rc=$?
[ $rc -ne 0 ] || fail "--plot on a regular file exits != 0"
grep -q "not a directory" <<<"$err" || fail "--plot on a regular file: message: $err"

# No gnuplot on PATH: exit 1 with a message saying gnuplot is needed, before simulating:
# nothing printed, no --out files, no DIR.
out=$(PATH=/nonexistent "$CARMA" simulate --trace "$trace" --out "$tmp/nogp_out" --json \
      --plot "$tmp/nognuplot" 2>"$tmp/err")
rc=$?
[ $rc -eq 1 ] || fail "no gnuplot exits 1 (got $rc)"
grep -q "simulate: --plot needs gnuplot (apt-get install gnuplot-nox)" "$tmp/err" \
    || fail "no gnuplot: message: $(cat "$tmp/err")"
[ -z "$out" ] || fail "no gnuplot: found out before simulating, but printed: $out"
[ -e "$tmp/nognuplot" ] || [ -e "$tmp/nogp_out" ] && fail "no gnuplot: nothing written"

# A run failing after --plot DIR was checked (here --out on a file) leaves no DIR behind.
if command -v gnuplot >/dev/null; then
    "$CARMA" simulate --trace "$trace" --out "$tmp/file" --plot "$tmp/notmade" >/dev/null 2>&1 \
        && fail "--out on a regular file exits 1"
    [ -e "$tmp/notmade" ] && fail "a failed run left its --plot DIR behind"
fi

"$CARMA" simulate --help | grep -q -- "--plot DIR" || fail "--help lists --plot"
"$CARMA" simulate --plot >/dev/null 2>&1; [ $? -eq 2 ] || fail "--plot without DIR exits 2"

exit $((fails > 0))
