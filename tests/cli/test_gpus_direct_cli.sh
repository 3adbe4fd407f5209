#!/bin/bash
# test_gpus_direct_cli.sh — `carma gpus --gpu-backend nvml` (no daemon) against the fake
# libnvidia-ml.so.1: text and JSON output with sources, unknowns printed as unknown/null, a GPU
# in MIG mode shown with its marker (which the daemon leaves out) and its processes' memory
# summed over their instances, a missing library as a clear error (exit 1) and bad usage as
# exit 2.
# Usage: test_gpus_direct_cli.sh CARMA SOURCE_DIR
set -u
CARMA=$1
FAKE_DIR=$(dirname "$CARMA")/tests/fake_nvml
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unset CARMA_NVML_LIBRARY
export CARMA_DCGM_LIBRARY=/nonexistent/libdcgm.so.4
unset CARMA_DCGM_HOSTENGINE FAKE_DCGM_HOSTENGINE FAKE_DCGM_PROF_LOCKED FAKE_DCGM_VALUES

cat >"$TMP/scenario" <<'SCN'
gpu uuid=GPU-aaaa-0001 name="NVIDIA H100 80GB HBM3" total=81559 used=20480 util=35 power=251500 energy=987654321 gpm=1 smact=40.5 smocc=20 drama=30
gpu uuid=GPU-bbbb-0002 name="NVIDIA A100-SXM4-40GB" total=40960 used=0 util=na power=61000 gpm=0
proc gpu=0 pid=4242 used=10240
SCN
export FAKE_NVML_SCENARIO=$TMP/scenario

out=$("$CARMA" gpus --gpu-backend nvml --library "$FAKE_DIR/full/libnvidia-ml.so.1" --interval-ms 120) \
    || fail "gpus --gpu-backend nvml exited $?"
grep -q 'gpu 0  NVIDIA H100 80GB HBM3  GPU-aaaa-0001' <<<"$out" || fail "no GPU 0 line: $out"
grep -q 'smact 0.405 smocc 0.200 drama 0.300  (gpm)' <<<"$out" || fail "no GPM activity: $out"
grep -q 'memory    20480 / 81559 MiB used' <<<"$out" || fail "memory: $out"
grep -q 'processes 1: pid 4242 10240 MiB' <<<"$out" || fail "processes: $out"
grep -q 'power     251.5 W, energy 987654.3 J  (nvml)' <<<"$out" || fail "power and energy: $out"
grep -q 'util      unknown' <<<"$out" || fail "unsupported util not unknown: $out"
grep -q 'smact unknown smocc unknown drama unknown  (unknown)' <<<"$out" || fail "A100: $out"
grep -q 'note: .*libdcgm' <<<"$out" || fail "no note on the missing DCGM: $out"

# DCGM (the fake) for the A100: through the node's host engine when one answers, and the note
# says which engine; with the profiling counters held by another process, why activity is unknown
dcgm() {
    CARMA_DCGM_LIBRARY="$FAKE_DIR/dcgm/libdcgm.so.4" FAKE_DCGM_VALUES="1:1:0.5:0.25:0.125:61:1000" \
        "$@" "$CARMA" gpus --gpu-backend nvml --library "$FAKE_DIR/full/libnvidia-ml.so.1" --samples 1
}
out=$(dcgm env FAKE_DCGM_HOSTENGINE=127.0.0.1) || fail "gpus with DCGM exited $?"
grep -q 'smact 0.500 smocc 0.250 drama 0.125  (dcgm)' <<<"$out" || fail "DCGM activity: $out"
grep -q '^note: DCGM via nv-hostengine at 127.0.0.1$' <<<"$out" || fail "DCGM mode note: $out"
out=$(dcgm env) || fail "gpus with embedded DCGM exited $?"
grep -q '^note: DCGM embedded (no nv-hostengine at 127.0.0.1)$' <<<"$out" || fail "embedded: $out"
out=$(dcgm env FAKE_DCGM_HOSTENGINE=127.0.0.1 FAKE_DCGM_PROF_LOCKED=1) || fail "locked exited $?"
grep -q 'smact unknown smocc unknown drama unknown  (unknown)' <<<"$out" || fail "locked: $out"
grep -q '^note: DCGM via nv-hostengine at 127.0.0.1; profiling fields not watched' <<<"$out" \
    || fail "no note on the profiling lock: $out"

# one sample: GPM has no interval yet
out=$(CARMA_NVML_LIBRARY="$FAKE_DIR/full/libnvidia-ml.so.1" "$CARMA" gpus --gpu-backend nvml --samples 1 --json \
      2>/dev/null) || fail "json probe exited $?"
grep -q '"uuid": "GPU-aaaa-0001"' <<<"$out" || fail "json uuid: $out"
grep -q '"smact": null' <<<"$out" || fail "one sample gave an SM activity: $out"
grep -q '"power_w": 251.5' <<<"$out" || fail "json power: $out"
grep -q '"util_gpu": null' <<<"$out" || fail "json unknown util: $out"
# the counter of 987654321 mJ, in J (the unit of every energy in carma's JSON), every digit kept
grep -q '"energy_j": 987654.321,' <<<"$out" || fail "json energy: $out"
grep -q '"energy_mj"' <<<"$out" && fail "json energy_mj (millijoules) is gone: energy_j"

# the bare library: everything unknown, nothing zero
out=$("$CARMA" gpus --gpu-backend nvml --library "$FAKE_DIR/bare/libnvidia-ml.so.1" --samples 1) \
    || fail "bare probe exited $?"
grep -q 'memory    unknown' <<<"$out" || fail "bare memory: $out"
grep -q 'processes unknown' <<<"$out" || fail "bare processes: $out"
grep -q 'power     unknown, energy unknown' <<<"$out" || fail "bare power: $out"

# no library: exit 1 and a message naming it
err=$(CARMA_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 "$CARMA" gpus --gpu-backend nvml 2>&1 >/dev/null)
rc=$?
[ $rc -eq 1 ] || fail "missing library exit $rc"
grep -q 'cannot load NVML library /nonexistent/libnvidia-ml.so.1' <<<"$err" || fail "error: $err"
if ! ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml.so.1 '; then
    err=$("$CARMA" gpus --gpu-backend nvml 2>&1 >/dev/null)
    [ $? -eq 1 ] || fail "no system library: wrong exit"
    grep -q 'libnvidia-ml.so.1' <<<"$err" || fail "default error does not name the library: $err"
fi
# a library path that is no file, by --library or $CARMA_NVML_LIBRARY (dlopen would wait for
# ever on a FIFO), and $CARMA_DCGM_LIBRARY's too: refused naming it, never waited on
mkfifo "$TMP/fifo"
err=$(timeout 10 "$CARMA" gpus --gpu-backend nvml --library "$TMP/fifo" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF "NVML library: $TMP/fifo: not a regular file" <<<"$err" \
    || fail "--library FIFO: exit $rc: $err"
err=$(CARMA_NVML_LIBRARY=$TMP timeout 10 "$CARMA" gpus --gpu-backend nvml 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF "NVML library (\$CARMA_NVML_LIBRARY): $TMP: Is a directory" <<<"$err" \
    || fail "\$CARMA_NVML_LIBRARY directory: exit $rc: $err"
out=$(FAKE_NVML_SCENARIO=$TMP/scenario CARMA_DCGM_LIBRARY=$TMP/fifo timeout 10 "$CARMA" gpus \
      --gpu-backend nvml --library "$FAKE_DIR/full/libnvidia-ml.so.1" --samples 1) \
    || fail "DCGM FIFO: exit $?"
grep -qF "cannot load DCGM (\$CARMA_DCGM_LIBRARY): $TMP/fifo: not a regular file" <<<"$out" \
    || fail "DCGM FIFO note: $out"

# a name with terminal escapes (the library's words): shown escaped, --json exact
printf 'gpu uuid=GPU-cccc-0003 name="evil\033[2Jgpu" total=1024 used=0\n' >"$TMP/evil"
out=$(FAKE_NVML_SCENARIO=$TMP/evil "$CARMA" gpus --gpu-backend nvml --library "$FAKE_DIR/full/libnvidia-ml.so.1" --samples 1) \
    || fail "escape probe exited $?"
grep -q $'\033' <<<"$out" && fail "a raw ESC in the text: $(cat -v <<<"$out")"
grep -qF 'gpu 0  evil\x1b[2Jgpu  GPU-cccc-0003' <<<"$out" || fail "the name escaped: $(cat -v <<<"$out")"
out=$(FAKE_NVML_SCENARIO=$TMP/evil "$CARMA" gpus --gpu-backend nvml --library "$FAKE_DIR/full/libnvidia-ml.so.1" --samples 1 --json 2>/dev/null)
[ "$(jq -r '.[0].name' <<<"$out")" = $'evil\033[2Jgpu' ] || fail "--json keeps the name exact: $out"

# the notes quote NVML's UUIDs (and the environment): escaped as the GPU lines are
out=$(FAKE_NVML_SCENARIO=$TMP/evil CUDA_VISIBLE_DEVICES=0 "$CARMA" gpus --gpu-backend nvml \
      --library "$FAKE_DIR/full/libnvidia-ml.so.1" --samples 1) || fail "note probe exited $?"
grep -q $'\033' <<<"$out" && fail "a raw ESC in a note: $(cat -v <<<"$out")"
grep -qF 'note: CUDA_VISIBLE_DEVICES=0 (UUIDs or NVML indices): using NVML GPU 0 GPU-cccc-0003' \
    <<<"$out" || fail "the allocation note: $(cat -v <<<"$out")"
# a name or UUID that is not UTF-8: --json keeps the key (null), as for any unknown
printf 'gpu uuid=GPU-dd\377 name="bad\377name" total=1024 used=0\n' >"$TMP/notutf8"
out=$(FAKE_NVML_SCENARIO=$TMP/notutf8 "$CARMA" gpus --gpu-backend nvml \
      --library "$FAKE_DIR/full/libnvidia-ml.so.1" --samples 1 --json 2>/dev/null) \
    || fail "non-UTF-8 probe exited $?"
jq -e '.[0] | has("uuid") and has("name") and .uuid == null and .name == null' <<<"$out" \
    >/dev/null || fail "--json dropped uuid/name: $out"

# MIG: a GPU in MIG mode is shown, marked (the daemon leaves it out); one without MIG says off,
# one whose query fails says unknown (JSON: true, false, null)
cat >"$TMP/mig" <<'SCN'
gpu uuid=GPU-dddd-0004 name="NVIDIA A100-SXM4-80GB" total=81920 used=0 mig=1
gpu uuid=GPU-eeee-0005 name="NVIDIA A100-SXM4-80GB" total=81920 used=0 mig=0
gpu uuid=GPU-ffff-0006 name="NVIDIA L40S" total=46068 used=0
gpu uuid=GPU-9999-0007 name="NVIDIA H100 80GB HBM3" total=81559 used=0 mig=1
fail nvmlDeviceGetMigMode 999 gpu=3
proc gpu=0 pid=4242 used=1000 gi=1 ci=0
proc gpu=0 pid=4242 used=2000 gi=2 ci=0
proc gpu=0 pid=4343 used=512 gi=2 ci=0
SCN
out=$(FAKE_NVML_SCENARIO=$TMP/mig "$CARMA" gpus --gpu-backend nvml --library "$FAKE_DIR/full/libnvidia-ml.so.1" --samples 1) \
    || fail "MIG probe exited $?"
grep -q 'gpu 0  NVIDIA A100-SXM4-80GB  GPU-dddd-0004' <<<"$out" || fail "the MIG GPU is not shown: $out"
[ "$(grep -c '^  MIG       enabled: .*places nothing here$' <<<"$out")" = 1 ] || fail "MIG marker: $out"
sed -n '/GPU-dddd-0004/,/^gpu 1/p' <<<"$out" | grep -q '^  MIG       enabled' || fail "marker on the wrong GPU: $out"
[ "$(grep -c '^  MIG       off$' <<<"$out")" = 2 ] || fail "MIG off: $out"
[ "$(grep -c '^  MIG       unknown$' <<<"$out")" = 1 ] || fail "MIG unknown: $out"
out=$(FAKE_NVML_SCENARIO=$TMP/mig "$CARMA" gpus --gpu-backend nvml --library "$FAKE_DIR/full/libnvidia-ml.so.1" --samples 1 --json 2>/dev/null) \
    || fail "MIG json probe exited $?"
[ "$(jq -c '[.[] | .mig]' <<<"$out")" = '[true,false,false,null]' ] || fail "json mig: $out"
# on it, a process NVML lists once per MIG instance holds their sum (it kept the first entry)
procs=$(jq -c '[.[0].processes[] | [.pid, .used_mib]]' <<<"$out")
[ "$procs" = '[[4242,3000],[4343,512]]' ] || fail "MIG processes: $procs"
# a library without nvmlDeviceGetMigMode predates MIG: off
out=$(FAKE_NVML_SCENARIO=$TMP/mig "$CARMA" gpus --gpu-backend nvml --library "$FAKE_DIR/bare/libnvidia-ml.so.1" --samples 1 --json 2>/dev/null) \
    || fail "bare MIG probe exited $?"
[ "$(jq -c '[.[] | .mig]' <<<"$out")" = '[false,false,false,false]' ] || fail "bare json mig: $out"

# nvmlInit failing
echo "init_fail 9" >>"$TMP/scenario"
err=$("$CARMA" gpus --gpu-backend nvml --library "$FAKE_DIR/full/libnvidia-ml.so.1" 2>&1 >/dev/null)
[ $? -eq 1 ] || fail "init failure exit"
grep -q 'nvmlInit failed.*Driver Not Loaded' <<<"$err" || fail "init error: $err"

# usage
"$CARMA" gpus --gpu-backend nvml --bogus 2>/dev/null; [ $? -eq 2 ] || fail "unknown option not exit 2"
"$CARMA" gpus --gpu-backend nvml --samples 0 2>/dev/null; [ $? -eq 2 ] || fail "--samples 0 not exit 2"
"$CARMA" gpus --gpu-backend nope 2>/dev/null; [ $? -eq 2 ] || fail "bad backend not exit 2"
err=$("$CARMA" gpus --gpu-backend sim 2>&1); [ $? -eq 2 ] || fail "sim read directly not exit 2"
grep -q 'live in the daemon' <<<"$err" || fail "sim direct message: $err"
"$CARMA" gpus --samples 3 2>/dev/null; [ $? -eq 2 ] || fail "--samples without --gpu-backend not exit 2"
"$CARMA" gpus --gpu-backend nvml --socket /x 2>/dev/null; [ $? -eq 2 ] || fail "--socket with --gpu-backend not exit 2"
"$CARMA" gpus --help | grep -q 'carma gpus --gpu-backend nvml' || fail "--help"
"$CARMA" gpus --help | grep -q 'whether MIG is enabled (JSON: mig)' || fail "--help on MIG"
# --help's GPM floor is what GPM takes: two samples that far apart give SM activity (100 ms,
# the floor it used to state, gave none: carma waits GPM_MIN_INTERVAL_S, 110 ms)
"$CARMA" gpus --help | grep -q 'at least 110 for GPM' || fail "--help on the GPM interval"
echo 'gpu uuid=GPU-aaaa-0001 gpm=1 smact=40.5 smocc=20 drama=30' >"$TMP/gpm"
out=$(FAKE_NVML_SCENARIO=$TMP/gpm "$CARMA" gpus --gpu-backend nvml \
      --library "$FAKE_DIR/full/libnvidia-ml.so.1" --interval-ms 110) \
    || fail "--interval-ms 110 exited $?"
grep -q 'smact 0.405 smocc 0.200 drama 0.300  (gpm)' <<<"$out" || fail "GPM at 110 ms: $out"
"$CARMA" gpu-probe >/dev/null 2>&1; [ $? -eq 2 ] || fail "gpu-probe is gone; it should be an unknown command"
exit 0
