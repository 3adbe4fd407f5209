#!/bin/bash
# test_estimate_cli.sh — `carma estimate`: the output contract (text and JSON), --eval, and bad input.
# Usage: test_estimate_cli.sh /path/to/carma /path/to/source_dir
set -u
CARMA=$1
SRC=$2
export CARMA_DATA_DIR="$SRC/data"
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

source "$(dirname "$0")/expect_lib.sh"

# an option of another mode would be ignored: refused, naming it
expect 2 "--estimator does not go with --trace" "$CARMA" estimate --trace x.trace --estimator horus
expect 2 "--batch does not go with --eval" "$CARMA" estimate --eval --batch 3
expect 2 "--json does not go with --fit-carma" "$CARMA" estimate --fit-carma --json
expect 2 "--iterations does not go with --trace" "$CARMA" estimate --trace x --iterations 2
expect 2 "--folds does not go with --summary" "$CARMA" estimate --summary x --batch 2 --folds 3
expect 0 "usage: carma estimate" "$CARMA" estimate --help
# where the data comes from, as carma --help and util/datadir.h say: an installed carma's too
expect 0 "else PREFIX/share/carma of an installed" "$CARMA" estimate --help
expect 2 "--summary: empty path" "$CARMA" estimate --summary "" --batch 32
expect 1 "$SRC/data: Is a directory" "$CARMA" estimate --summary "$SRC/data" --batch 32
expect 0 '"class": 1' "$CARMA" estimate --summary vgg_32.model --batch 32 --estimator gpumemnet --json
expect 0 '"mib": 16000' "$CARMA" estimate --summary vgg_32.model --batch 32 --estimator gpumemnet --json
expect 0 '"estimator": "horus"' "$CARMA" estimate --summary "$SRC/data/gpumemnet/summaries/vgg_32.model" --batch 32 --estimator horus --json
expect 0 'carma' "$CARMA" estimate --summary "BERT_base_bs:32_sl:512.txt" --batch 32

# --estimator all gives an array of three objects
out=$("$CARMA" estimate --summary resnet50_32.model --batch 32 --estimator all --json)
n=$(printf '%s' "$out" | grep -c '"estimator"')
[ "$n" -eq 3 ] || fail "--estimator all: $n objects"
printf '%s' "$out" | head -c 1 | grep -q '\[' || fail "--estimator all is not an array"

# --estimator all where one estimator fails (horus out of range at this size): exit 1 and no
# partial table on stdout, as --json prints no partial array
big=(--summary "BERT_base_bs:32_sl:512.txt" --batch 2147483647 --seq-len 2147483647)
out=$("$CARMA" estimate "${big[@]}" --estimator all 2>"$tmp/err")
rc=$?
[ "$rc" -eq 1 ] && [ -z "$out" ] || fail "--estimator all, one failing: exit $rc, stdout '$out'"
grep -q 'horus estimate .* is out of range' "$tmp/err" || fail "the failure: $(cat "$tmp/err")"
out=$("$CARMA" estimate "${big[@]}" --estimator all --json 2>/dev/null)
[ $? -eq 1 ] && [ -z "$out" ] || fail "--estimator all --json, one failing: '$out'"

# --eval: per-row figures and the per-estimator summary
expect 0 'median_err' "$CARMA" estimate --eval
out=$("$CARMA" estimate --eval --json)
for key in '"estimator"' '"rows"' '"median_abs_rel_err"' '"underestimates"' '"max_over_ratio"'; do
    printf '%s' "$out" | grep -q "$key" || fail "--eval --json lacks $key"
done

# a measured peak of 0 MiB makes every relative error infinite: refused, naming the row (the
# table printed inf and --json silently left out the estimators' summaries)
cp -r "$SRC/data" "$tmp/zero"
sed -i '2s/^\([^,]*,[^,]*,[^,]*\),[^,]*,/\1,0,/' "$tmp/zero/gpumemnet/realworld_eval.csv"
CARMA_DATA_DIR="$tmp/zero" expect 1 "realworld_eval.csv:2: bad measured peak '0'" \
    "$CARMA" estimate --eval
CARMA_DATA_DIR="$tmp/zero" expect 1 "bad measured peak" "$CARMA" estimate --eval --json
rm -rf "$tmp/zero"

# bad input
expect 2 "unknown estimator 'foo'" "$CARMA" estimate --summary vgg_32.model --batch 32 --estimator foo
expect 2 "at least 1" "$CARMA" estimate --summary vgg_32.model --batch 0
expect 2 "at least 1" "$CARMA" estimate --summary vgg_32.model --batch -3
expect 2 "needs an integer" "$CARMA" estimate --summary vgg_32.model --batch lots
# a whole number too large is out of range, not "no integer"
for n in 99999999999 99999999999999999999999; do
    expect 2 "--batch: '$n' is out of range (at most 2147483647)" \
        "$CARMA" estimate --summary vgg_32.model --batch "$n"
done
expect 2 "--seq-len: '3000000000' is out of range" "$CARMA" estimate --summary vgg_32.model \
    --batch 2 --seq-len 3000000000
# --folds has no bound of its own here (its mode checks it): past an int's, out of range
for n in -99999999999 -99999999999999999999999; do
    expect 2 "--folds: '$n' is out of range (at least -2147483648)" \
        "$CARMA" estimate --train-gpumemnet --folds "$n"
done
# an option the estimator or the summary would ignore is refused, naming why
expect 2 "--seq-len is for module printouts; vgg_32.model is a torchsummary table" \
    "$CARMA" estimate --summary vgg_32.model --batch 32 --seq-len 128
for est in horus gpumemnet; do
    expect 2 "--optimizer counts for the carma estimator only, not $est" \
        "$CARMA" estimate --summary vgg_32.model --batch 32 --optimizer sgd --estimator "$est"
done
expect 0 "carma" "$CARMA" estimate --summary vgg_32.model --batch 32 --optimizer sgd --estimator all
expect 0 "horus" "$CARMA" estimate --summary "BERT_base_bs:32_sl:512.txt" --batch 2 --seq-len 128 \
    --estimator horus
expect 2 "--batch N is required" "$CARMA" estimate --summary vgg_32.model
expect 2 "unknown option '--bogus'" "$CARMA" estimate --bogus
expect 2 "do not go together" "$CARMA" estimate --eval --summary vgg_32.model
expect 1 "not found" "$CARMA" estimate --summary no_such.model --batch 8
printf 'nothing to see\n' > "$tmp/odd.txt"
expect 1 "odd.txt:1: unknown summary format" "$CARMA" estimate --summary "$tmp/odd.txt" --batch 8
printf -- '----\n Layer (type)  Output Shape  Param #\n====\n====\nTotal params: 0\n' > "$tmp/empty.model"
expect 1 "no layers" "$CARMA" estimate --summary "$tmp/empty.model" --batch 8

# missing weights: a data directory with the summaries but no weights
mkdir -p "$tmp/data/gpumemnet"
cp -r "$SRC/data/gpumemnet/summaries" "$tmp/data/gpumemnet/"
CARMA_DATA_DIR="$tmp/data" expect 1 "cannot read weights file" "$CARMA" estimate --summary vgg_32.model --batch 32 --estimator gpumemnet
CARMA_DATA_DIR="$tmp/data" expect 0 "horus" "$CARMA" estimate --summary vgg_32.model --batch 32 --estimator horus

# training: a short run writes weights that the loader accepts
expect 0 "mean accuracy" "$CARMA" estimate --train-gpumemnet --folds 2 --epochs 3 --out "$tmp/w.txt"
grep -q '^tensor members.12.model.0.weight f32 2 8 8' "$tmp/w.txt" || fail "trained weights file"
expect 2 "--folds" "$CARMA" estimate --train-gpumemnet --folds 1

[ "$fails" -eq 0 ] || exit 1
echo "test_estimate_cli.sh: all passed"
