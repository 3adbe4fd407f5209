#!/usr/bin/env bash
# `carma simulate` at its edges: terminal escapes and newlines in what a trace, a file name or
# --gpus holds are shown escaped in messages and in the --compare table, never printed raw; a
# report that cannot be written (a full disk) exits 1 saying so; model coefficients so large that
# a task never ends fail clearly instead of hanging or reporting completed tasks with no
# makespan; tasks the policy will place on no GPU are counted in the summary; --help says where
# --startup-s's default comes from.
set -u
CARMA=$1 SRC=$2
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
trace=$SRC/data/traces/test.csv
esc=$'\e'

# A task file name with an escape sequence and a newline: the error shows both escaped.
printf 'seq,submit_offset_s,task_file\n1,0,"\033[2Jevil\nline2.rad"\n' >"$tmp/evil.csv"
err=$("$CARMA" simulate --trace "$tmp/evil.csv" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "unknown task file: exit $rc"
grep -q "$esc" <<<"$err" && fail "raw ESC in the error: $(cat -v <<<"$err")"
grep -qF "'\\x1b[2Jevil\\nline2.rad' not in the workload catalog" <<<"$err" \
    || fail "the error shows the name escaped: $(cat -v <<<"$err")"
# a usage error quotes the command line: escaped as well
err=$("$CARMA" simulate --gpus $'4x\e]0;title\a' 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "--gpus with escapes: exit $rc"
grep -q "$esc" <<<"$err" && fail "raw ESC in the usage error: $(cat -v <<<"$err")"
grep -qF "unknown GPU model '\\x1b]0;title\\x07'" <<<"$err" \
    || fail "usage error: $(cat -v <<<"$err")"
grep -qx "Try 'carma simulate --help'." <<<"$err" || fail "usage error's last line: $err"

# The --compare table names the trace file: one header line, its escapes shown.
name=$'odd\e[31m\nname.csv'
cp "$trace" "$tmp/$name"
out=$("$CARMA" simulate --compare --trace "$tmp/$name" 2>&1) || fail "--compare on an odd name"
grep -q "$esc" <<<"$out" && fail "raw ESC in the --compare table: $(cat -v <<<"$out")"
head -1 <<<"$out" | grep -qF 'odd\x1b[31m\nname.csv (5 tasks) on 4xA100-40GB' \
    || fail "--compare header: $(head -2 <<<"$out" | cat -v)"

# A full disk: every form of the report fails, naming why (--compare --json said nothing).
if [ -w /dev/full ]; then
    for args in "" "--json" "--compare" "--compare --json"; do
        err=$("$CARMA" simulate --trace "$trace" $args 2>&1 >/dev/full); rc=$?
        [ $rc -eq 1 ] && grep -q "^carma simulate: cannot write the output: No space" <<<"$err" \
            || fail "simulate $args >/dev/full: exit $rc: $err"
    done
    err=$("$CARMA" simulate --validate --json 2>&1 >/dev/full); rc=$?
    [ $rc -eq 1 ] || fail "simulate --validate --json >/dev/full: exit $rc: $err"
fi

# Interference so strong that a collocated task's speed is 0: an error, not a hang (a NaN
# clock never advanced) nor 90 "completed" tasks with no makespan.
for k in sim_interference_drama_k sim_interference_smact_k; do
    err=$(timeout 60 "$CARMA" simulate --set "$k=1e308" 2>&1 >/dev/null); rc=$?
    [ $rc -eq 1 ] && grep -q "no longer a finite time" <<<"$err" \
        || fail "$k=1e308: exit $rc (124: it hung): $err"
done

# GPUs of 1 MiB: the carma policy learns from the first crashes that no GPU fits the tasks and
# places them no more; the summary says where the tasks that neither completed nor failed are.
out=$("$CARMA" simulate --set sim_gpu_model=TINY:1:10:70 --gpus 2xTINY 2>&1) \
    || fail "1-MiB GPUs: exit $?: $out"
grep -q "^tasks completed *0 of 90 (0 failed, 90 left in the queue: no GPU would take them)$" \
    <<<"$out" || fail "the summary counts the tasks left in the queue: $out"
"$CARMA" simulate --trace "$trace" | grep -q "^tasks completed *5 of 5 (0 failed)$" \
    || fail "a run that places every task says nothing of a queue"

"$CARMA" simulate --help | grep -A1 -- "--startup-s N" | grep -q "sim_startup_s" \
    || fail "--help: --startup-s's default is the config's sim_startup_s"
out=$("$CARMA" simulate --trace "$trace" --set sim_startup_s=0 --json) \
    && [ "$out" = "$("$CARMA" simulate --trace "$trace" --startup-s 0 --json)" ] \
    || fail "sim_startup_s and --startup-s are the same setting"

# numbers are decimal: strtod's hexadecimal is refused, as everywhere else
out=$("$CARMA" simulate --trace "$trace" --startup-s 0x10 2>&1)
[ $? -eq 2 ] && grep -qF -- "--startup-s: expected seconds >= 0, got '0x10'" <<<"$out" \
    || fail "--startup-s 0x10: $out"

# A task the server cannot hold is named by its trace file and seq, the row a reader finds (it
# was "job 2", the position); --validate names which AEGIS trace.
printf 'seq,submit_offset_s,task_file\n10,0,BERT_base.rad\n20,5,gpt2_large_2.rad\n' >"$tmp/big.csv"
for args in "" "--compare" "--json"; do
    err=$("$CARMA" simulate --trace "$tmp/big.csv" --gpus 1xA100-40GB $args 2>&1 >/dev/null)
    rc=$?
    [ $rc -eq 1 ] && grep -qxF "carma simulate: $tmp/big.csv: seq 20 (gpt2_large_2.rad) needs 2 \
GPUs; the server has 1" <<<"$err" || fail "too many GPUs ($args): exit $rc: $err"
done
err=$("$CARMA" simulate --validate --set sim_server=1xA100-40GB 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qE "/aegis_philly_60.csv: seq [0-9]+ \(.*\) needs 2 GPUs" <<<"$err" \
    || fail "--validate, too many GPUs: exit $rc: $err"

# --compare runs every policy: a --policy beside it was silently ignored
out=$("$CARMA" simulate --trace "$trace" --compare --policy lucid 2>&1); rc=$?
[ $rc -eq 2 ] && grep -qF -- "--compare runs every policy; not with --policy" <<<"$out" \
    || fail "--compare --policy: exit $rc: $out"

[ "$fails" -eq 0 ] && echo "simulate edges: all checks passed"
exit $((fails > 0))
