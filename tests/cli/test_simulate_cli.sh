#!/usr/bin/env bash
# `carma simulate` and `carma trace synth`: the JSON contract, --compare, --out files, the
# exclusive-makespan check against a strict-FIFO calculation done here in awk, --validate against
# the real AEGIS runs, and bad input
# (unknown task file, malformed row, unknown policy / estimator / GPU model) failing clearly
# (usage errors with exit 2) with no output files left behind.
set -u
CARMA=$1 SRC=$2
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# The JSON is printed one key per line: `  "key": value,`.
jget() { sed -n "s/^ *\"$1\": \"\{0,1\}\([^\",]*\).*/\1/p" | head -1; }

out=$("$CARMA" simulate --json) || fail "default run exits 0"
for k in policy estimator tasks completed makespan_s mean_jct_s p95_jct_s mean_wait_s \
         gpu_util_mean energy_j oom_crashes collocated_placements; do
    grep -q "\"$k\":" <<<"$out" || fail "JSON key $k missing"
done
# energy: J in the JSON (as in `carma gpus --json`), MJ in the text; the same figure
grep -q '"energy_mj"' <<<"$out" && fail "energy_mj (it was megajoules) is gone: energy_j"
mj=$("$CARMA" simulate | sed -n 's/^energy  *\([0-9.]*\) MJ$/\1/p')
awk -v j="$(jget energy_j <<<"$out")" -v mj="$mj" 'BEGIN { exit !(j > 1e6 && (j / 1e6 - mj) ^ 2 < 1e-4) }' \
    || fail "energy_j $(jget energy_j <<<"$out") J is not the text's $mj MJ"
[ "$(jget tasks <<<"$out")" = 90 ] || fail "default trace is mix-90"
[ "$(jget completed <<<"$out")" = 90 ] || fail "all 90 complete"

# Exclusive, no start-up, no interference: strict FIFO on 4 GPUs, computed independently.
expected=$(awk -F, '
    NR == FNR { if (FNR > 1) { gpus[$1] = $12; mins[$1] = $26 } next }
    FNR == 1 { for (i = 1; i <= 4; i++) f[i] = 0; next }
    {   sub(/\r$/, "", $3)
        for (i = 2; i <= 4; i++) for (j = i; j > 1 && f[j] < f[j - 1]; j--) {
            t = f[j]; f[j] = f[j - 1]; f[j - 1] = t }
        g = gpus[$3]; run = mins[$3] * 60
        start = $2; if (prev > start) start = prev; if (f[g] > start) start = f[g]
        for (i = 1; i <= g; i++) f[i] = start + run
        prev = start; if (start + run > end) end = start + run }
    END { printf "%.1f", end }' <(sed 's/"[^"]*"//g' "$SRC/data/workloads.csv") \
    "$SRC/data/traces/philly_mix_90.csv")  # quoted catalog cells dropped: they hold commas
got=$("$CARMA" simulate --policy exclusive --startup-s 0 --no-interference --json | jget makespan_s)
awk -v a="$got" -v b="$expected" 'BEGIN { exit !(a - b < 0.05 && b - a < 0.05 && b > 36000) }' \
    || fail "exclusive makespan $got != strict FIFO $expected"

out=$("$CARMA" simulate --compare --json --trace "$SRC/data/traces/philly_heavy_60.csv") \
    || fail "--compare --json exits 0"
[ "$(grep -c '"policy":' <<<"$out")" = 13 ] || fail "--compare gives one object per policy"
[ "$(jget policy <<<"$out")" = exclusive ] || fail "--compare starts with exclusive"
out=$("$CARMA" simulate --compare) || fail "--compare table exits 0"
grep -q "^oracle-magm .*%" <<<"$out" || fail "--compare table shows changes"

"$CARMA" simulate --policy or-rr --out "$tmp/run" >/dev/null || fail "--out run exits 0"
[ "$(wc -l <"$tmp/run/tasks.csv")" = 91 ] || fail "tasks.csv has 90 rows"
# runtime_est_s: the catalog's run time for every task; with sim_history only after a solo run
# of the same task file (exclusive: every run is solo), so the first task of a file has none
[ "$(head -1 "$tmp/run/tasks.csv" | awk -F, '{print $NF}')" = runtime_est_s ] || fail "tasks.csv header"
[ "$(awk -F, 'NR > 1 && $NF == ""' "$tmp/run/tasks.csv" | wc -l)" = 0 ] \
    || fail "tasks.csv: a task without the catalog's run time"
"$CARMA" simulate --policy exclusive --set sim_history=on --out "$tmp/hist" >/dev/null \
    || fail "--out run with sim_history exits 0"
first=$(awk -F, 'NR > 1 && !seen[$2]++ { print $NF }' "$tmp/hist/tasks.csv" | sort -u)
[ "$first" = "" ] || fail "sim_history: the first task of a file knew a run time: $first"
[ "$(awk -F, 'NR > 1 && $NF != ""' "$tmp/hist/tasks.csv" | wc -l)" -gt 0 ] \
    || fail "sim_history: no task was planned with an earlier solo run"
head -1 "$tmp/run/gpu_timeline.csv" | grep -q "^t_s,gpu," || fail "timeline header"
ls -A "$tmp/run" | grep -q tmp && fail "temporary files left in --out"
# --out follows no symlink planted in DIR (at the temporary names of old, at a final name: that
# one is replaced), and writes its files all or nothing: a directory where gpu_timeline.csv
# belongs fails before anything moves (tasks.csv was left new, beside the old timeline).
small=$SRC/data/traces/test.csv
mkdir "$tmp/sy"; echo precious >"$tmp/precious"
for n in .tasks.csv.tmp .gpu_timeline.csv.tmp gpu_timeline.csv; do ln -s ../precious "$tmp/sy/$n"; done
(umask 022; "$CARMA" simulate --trace "$small" --out "$tmp/sy" >/dev/null) \
    || fail "--out beside symlinks exits 0"
[ "$(cat "$tmp/precious")" = precious ] || fail "--out followed a symlink in DIR"
[ -f "$tmp/sy/gpu_timeline.csv" ] && [ ! -L "$tmp/sy/gpu_timeline.csv" ] \
    || fail "--out: the symlink at a final name is replaced by the file"
[ "$(stat -c %a "$tmp/sy/tasks.csv")" = 644 ] || fail "--out: tasks.csv mode (umask 022)"
[ "$(ls -A "$tmp/sy" | grep -c '^\.carma')" = 0 ] || fail "--out: staging left: $(ls -A "$tmp/sy")"
mkdir -p "$tmp/half/gpu_timeline.csv/x"; echo old >"$tmp/half/tasks.csv"
err=$("$CARMA" simulate --trace "$small" --out "$tmp/half" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -q "half/gpu_timeline.csv: Is a directory" <<<"$err" \
    || fail "--out over a directory: exit $rc, $err"
[ "$(ls -A "$tmp/half" | tr '\n' ' ')" = "gpu_timeline.csv tasks.csv " ] \
    && [ "$(cat "$tmp/half/tasks.csv")" = old ] || fail "--out failing half-way changed DIR"
"$CARMA" simulate --trace "$small" --out "$tmp/half/tasks.csv/x" >/dev/null 2>&1 \
    && fail "--out under a file exits 1"
# ... and is refused before anything is read or run (it was found only after simulating)
err=$("$CARMA" simulate --trace "$tmp/no-such-trace.csv" --out "$tmp/half/tasks.csv/x" 2>&1)
grep -q -- "--out $tmp/half/tasks.csv/x: " <<<"$err" || fail "--out checked first: $err"
# tasks.csv: the trace's seq (not the row number) and task file name, CSV-quoted where it holds
# a comma or a quote (catalog lookups take the base name)
printf 'seq,submit_offset_s,task_file\n10,0,"x,y/mnist_train.rad"\n20,5,"q""/mnist_train.rad"\n' \
    >"$tmp/named.csv"
"$CARMA" simulate --trace "$tmp/named.csv" --out "$tmp/named" >/dev/null || fail "--out named run"
got=$(python3 -c 'import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
print(" ".join(str(len(r)) for r in rows), "|", " ".join(r[0] + "=" + r[1] for r in rows[1:]))' \
      "$tmp/named/tasks.csv")
[ "$got" = '15 15 15 | 10=x,y/mnist_train.rad 20=q"/mnist_train.rad' ] \
    || fail "tasks.csv: seq and quoted task_file: $got"

# Every task failing (BERT_base cannot fit a 16 GB V100): the makespan is unknown, and so are the
# figures over it: null in the JSON (energy too, not 0), "-" in the text (not nan).
printf 'seq,submit_offset_s,task_file\n1,0,BERT_base.rad\n' >"$tmp/nofit.csv"
out=$("$CARMA" simulate --gpus 1xV100-16GB --trace "$tmp/nofit.csv" --json) || fail "no-fit run exits 0"
jq -e '.completed == 0 and .failed == 1 and .makespan_s == null and .energy_j == null
       and .gpu_util_mean == null and .mean_jct_s == null' <<<"$out" >/dev/null \
    || fail "every task failing: unknown figures are null: $out"
out=$("$CARMA" simulate --gpus 1xV100-16GB --trace "$tmp/nofit.csv")
grep -qi nan <<<"$out" && fail "every task failing: the text prints nan: $out"
grep -q '^makespan  *-$' <<<"$out" && grep -q '^energy  *-$' <<<"$out" \
    && grep -q 'mean -, median -, p95 -$' <<<"$out" && grep -q '^GPU utilization  *- (' <<<"$out" \
    || fail "every task failing: '-' for unknown in the text: $out"

# Bad input: exit 1 (2 for a bad value on the command line), a message naming the problem,
# nothing written under --out.
want=1
bad() { # expected-message args...
    local msg=$1; shift
    rm -rf "$tmp/bad"
    err=$("$CARMA" simulate "$@" --out "$tmp/bad" 2>&1 >/dev/null); rc=$?
    [ $rc -eq $want ] || fail "$* exits $want (got $rc)"
    grep -q "$msg" <<<"$err" || fail "$*: message '$msg' missing in: $err"
    [ -z "$(ls -A "$tmp/bad" 2>/dev/null)" ] || fail "$*: left files in --out"
}
printf 'seq,submit_offset_s,task_file\n1,0,resnet.rad\n2,5,nosuch.rad\n' >"$tmp/unknown.csv"
bad "nosuch.rad" --trace "$tmp/unknown.csv"
printf 'seq,submit_offset_s,task_file\n1,0,resnet.rad\n2,abc,vgg.rad\n' >"$tmp/malformed.csv"
bad "malformed.csv:3" --trace "$tmp/malformed.csv"
want=2
bad "unknown policy 'best'" --policy best
bad "unknown policy 'best'" --set policy=best
bad "unknown estimator 'psychic'" --estimator psychic
bad "unknown GPU model 'B300'" --gpus 4xB300
bad "unknown GPU model 'B300'" --set sim_server=4xB300
want=1
printf 'seq,submit_offset_s,task_file\n1,0,x.rad\n' >"$tmp/nomem.csv"
printf 'rad_file,model_name,gpus_line8,measured_mem_mb_line9,exclusive_runtime_min\nx.rad,x,1,,5\n' \
    >"$tmp/nomem_catalog.csv"
bad "no measured peak memory" --trace "$tmp/nomem.csv" --catalog "$tmp/nomem_catalog.csv"
"$CARMA" simulate --bogus >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown option exits 2"
# xmem figures come from running a training script: the catalog's tasks have none
out=$("$CARMA" simulate --estimator xmem 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "the simulator has no xmem figures" <<<"$out" \
    || fail "--estimator xmem: exit $rc: $out"
out=$("$CARMA" simulate --set estimator=xmem --policy est-magm 2>&1 >/dev/null) \
    && grep -q "note: the config's estimator, xmem, has no figures" <<<"$out" \
    || fail "estimator xmem from the config: say so: $out"
"$CARMA" simulate --help | grep -q -- "--no-interference" || fail "--help lists options"
"$CARMA" simulate --help | sed '/^$/q' | grep -q -- "--validate" || fail "the usage names --validate"

# A config-defined GPU model.
"$CARMA" simulate --set sim_gpu_model=T4-16GB:16G:10:70 --gpus 8xT4-16GB --json >/dev/null \
    || fail "config-defined GPU model usable"

# trace synth: deterministic, Philly-like, validated; the file is written whole.
"$CARMA" trace synth --jobs 500 --seed 7 --out "$tmp/s1.csv" || fail "synth exits 0"
"$CARMA" trace synth --jobs 500 --seed 7 >"$tmp/s2.csv" || fail "synth to stdout"
cmp -s "$tmp/s1.csv" "$tmp/s2.csv" || fail "same seed, same trace"
[ "$(wc -l <"$tmp/s1.csv")" = 501 ] || fail "synth writes N rows"
"$CARMA" trace synth --jobs 500 --seed 8 | cmp -s - "$tmp/s1.csv" && fail "seed changes the trace"
"$CARMA" simulate --trace "$tmp/s1.csv" --gpus 16xA100-40GB --policy oracle-magm --json >/dev/null \
    || fail "a synthetic trace simulates"
"$CARMA" trace synth --seed 1 >/dev/null 2>&1; [ $? -eq 2 ] || fail "synth without --jobs exits 2"
"$CARMA" trace synth --jobs 0 >/dev/null 2>&1; [ $? -eq 2 ] || fail "--jobs 0 exits 2"
"$CARMA" trace synth --jobs 5 --catalog "$tmp/none.csv" --out "$tmp/s3.csv" 2>/dev/null \
    && fail "missing catalog fails"
[ -e "$tmp/s3.csv" ] && fail "no partial trace file"

# The default trace, catalog and arrivals are read from the data directory: $CARMA_DATA_DIR
# moves them all (the --help text still names them under data/).
mkdir -p "$tmp/data/traces" "$tmp/data/philly"
cp "$SRC/data/workloads.csv" "$SRC/data/philly/interarrival_sequences.csv" "$tmp/data/"
mv "$tmp/data/interarrival_sequences.csv" "$tmp/data/philly/"
head -11 "$SRC/data/traces/philly_mix_90.csv" >"$tmp/data/traces/philly_mix_90.csv"
[ "$(CARMA_DATA_DIR="$tmp/data" "$CARMA" simulate --json | jget tasks)" = 10 ] \
    || fail "simulate's default trace comes from \$CARMA_DATA_DIR"
err=$(CARMA_DATA_DIR="$tmp/nodata" "$CARMA" simulate 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "$tmp/nodata/traces/philly_mix_90.csv" <<<"$err" \
    || fail "simulate without its default trace: exit 1 naming it ($rc: $err)"
err=$(CARMA_DATA_DIR="$tmp/nodata" "$CARMA" simulate --trace "$tmp/s1.csv" 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "$tmp/nodata/workloads.csv" <<<"$err" \
    || fail "simulate's default catalog comes from \$CARMA_DATA_DIR ($rc: $err)"
CARMA_DATA_DIR="$tmp/data" "$CARMA" trace synth --jobs 50 --seed 3 | cmp -s - \
    <("$CARMA" trace synth --jobs 50 --seed 3) || fail "trace synth under \$CARMA_DATA_DIR"
err=$(CARMA_DATA_DIR="$tmp/nodata" "$CARMA" trace synth --jobs 5 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "$tmp/nodata/workloads.csv" <<<"$err" \
    || fail "trace synth's default catalog comes from \$CARMA_DATA_DIR ($rc: $err)"
err=$(CARMA_DATA_DIR="$tmp/nodata" "$CARMA" trace synth --jobs 5 \
      --catalog "$SRC/data/workloads.csv" 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "$tmp/nodata/philly/interarrival_sequences.csv" <<<"$err" \
    || fail "trace synth's default arrivals come from \$CARMA_DATA_DIR ($rc: $err)"
"$CARMA" simulate --help | grep -q "(default data/traces/philly_mix_90.csv)" \
    || fail "simulate --help names the default trace"

# --validate: the calibrated simulator against the real AEGIS runs. A guard on the calibration
# (docs/simulator.md): both exclusive makespans within 3 % of the real ones, every philly figure
# within 0.05, and at least 18 of the 20 philly and saturn figures.
out=$("$CARMA" simulate --validate --json) || fail "--validate --json exits 0"
[ "$(jq length <<<"$out")" = 18 ] || fail "--validate: 3 traces x 6 policies"
[ "$(jq '[.[] | select(.trace == "venus" and .real_makespan_s != null)] | length' <<<"$out")" = 0 ] \
    || fail "--validate: venus has no real results"
jq -e '(map(keys) | unique | length) == 1 and (.[0] | has("real_energy_j"))
        and ([.[] | select(.trace == "venus") | .real_norm_makespan, .real_norm_mean_jct,
              .real_oom, .real_energy_j] | all(. == null))' <<<"$out" >/dev/null \
    || fail "--validate --json: every row has the same keys, null where unknown (venus)"
jq -e '[.[] | select(.policy == "exclusive" and .trace != "venus")
        | (.sim_makespan_s / .real_makespan_s - 1) | fabs < 0.03] | all' <<<"$out" >/dev/null \
    || fail "--validate: exclusive makespans within 3 %"
jq -e '[.[] | select(.trace == "philly" and .policy != "exclusive")
        | ((.sim_norm_makespan - .real_norm_makespan) | fabs < 0.05),
          ((.sim_norm_mean_jct - .real_norm_mean_jct) | fabs < 0.05)] | all' <<<"$out" >/dev/null \
    || fail "--validate: philly within 0.05"
within=$(jq '[.[] | select(.trace != "venus" and .policy != "exclusive")
              | ((.sim_norm_makespan - .real_norm_makespan) | fabs < 0.05),
                ((.sim_norm_mean_jct - .real_norm_mean_jct) | fabs < 0.05)
              | select(.)] | length' <<<"$out")
[ "$within" -ge 18 ] || fail "--validate: $within of 20 figures within 0.05 (at least 18)"
jq -e 'all(.[]; .sim_energy_j > 1e6) and ([.[] | select(.trace == "philly")]
        | all(.real_energy_j > 1e6 and (.sim_energy_j / .real_energy_j - 1 | fabs) < 0.2))' \
    <<<"$out" >/dev/null || fail "--validate: energies in J, the simulated near the real"
"$CARMA" simulate --validate | grep -q "^within +-0.05: [0-9]* of 20" || fail "--validate table"
# its header says what it ran with: the testbed's settings, or the user's, and the data
# directory's traces ($CARMA_DATA_DIR's when set)
ln -s "$SRC/data" "$tmp/vdata"
hdr=$(CARMA_DATA_DIR="$tmp/vdata" "$CARMA" simulate --validate | head -1)
grep -qxF "carma simulate --validate: $tmp/vdata/aegis.conf on $tmp/vdata/traces/aegis_*_60.csv;\
 figures normalized" <<<"$hdr" || fail "--validate header: $hdr"
"$CARMA" simulate --validate --config "$SRC/data/aegis.conf" --set window=20 | head -1 |
    grep -qF -- "--validate: $SRC/data/aegis.conf with --set on" \
    || fail "--validate header with --config and --set"
# a directory where a file belongs says so (it was "Input/output error")
out=$("$CARMA" simulate --trace "$tmp" 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "$tmp: Is a directory" <<<"$out" || fail "--trace DIR: exit $rc, $out"
out=$("$CARMA" trace synth --catalog "$tmp" --jobs 3 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "$tmp: Is a directory" <<<"$out" || fail "--catalog DIR: exit $rc, $out"
"$CARMA" simulate --validate --policy lucid >/dev/null 2>&1; [ $? -eq 2 ] \
    || fail "--validate with --policy exits 2"
for o in --trace --catalog; do # --validate runs the AEGIS traces on its catalog: not these
    out=$("$CARMA" simulate --validate $o "$tmp/x.csv" 2>&1); rc=$?
    [ $rc -eq 2 ] && grep -q "takes only --json, --config and --set" <<<"$out" \
        || fail "--validate with $o: exit $rc, $out"
done
"$CARMA" simulate --validate --set sim_interference=off --json >/dev/null \
    || fail "--validate takes --set"
mkdir "$tmp/realdata" && cp -r "$SRC/data/." "$tmp/realdata/"
awk -F, -v OFS=, 'NR == 2 { $9 = "lots" } 1' "$SRC/data/aegis/headline_normalized.csv" \
    >"$tmp/realdata/aegis/headline_normalized.csv"
out=$(CARMA_DATA_DIR="$tmp/realdata" "$CARMA" simulate --validate 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "headline_normalized.csv:2: makespan_s: expected a number" <<<"$out" \
    || fail "--validate with a malformed real result: exit $rc, $out"

exit $((fails > 0))
