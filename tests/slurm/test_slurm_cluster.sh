#!/usr/bin/env bash
# test_slurm_cluster.sh — carma's Slurm integration on a real one-machine cluster (slurm_lib.sh):
# `sbatch --gpu-mem=10G` becomes shard:10 (job_submit.lua) and its job sees its GPU, its shards,
# the MPS cap carma_spank.so sets and the figure; srun --gpu-mem works too; an oversized
# --gpu-mem or shard request and a bad size are refused at submission with the reason; gpu:1
# is served as all the shards of one GPU and gpu:2 with a node of its own; --gpu-mem=auto
# takes carma's estimate of the job's Python command (as the submitting user, nobody) and
# refuses a shell batch script with the reason; counts Slurm reads otherwise (1k, +50), GPUs
# added by TresPerJob/TresPerTask updates, a refusal with a % in it and an error in
# job_submit.lua all refuse the job (each was accepted unchecked); with no carma daemon on the
# node the plugin only warns and no node is drained; with one running MPS, the job gets its
# pipe directory. A job or step granted no GPU is shown none (CUDA_VISIBLE_DEVICES empty), as
# is a shard step whose cap cannot be set; what a hostile daemon sends reaches the slurmd log
# escaped.
# Skips (77) unless run as root with Slurm, munge and the lua job_submit plugin installed.
# Usage: test_slurm_cluster.sh CARMA SOURCE_DIR PLUGIN
set -u
CARMA=$(realpath "$1")
SRC=$2
PLUGIN=$3
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (it runs slurmctld, slurmd and munged)"
for b in slurmctld slurmd munged sbatch srun scontrol scancel squeue sinfo runuser python3 jq; do
    command -v "$b" >/dev/null || skip "$b is not installed (scripts/deps.sh installs Slurm)"
done
ls /usr/lib/*/slurm-wlm/job_submit_lua.so >/dev/null 2>&1 ||
    skip "Slurm's lua job_submit plugin is not installed"
[ -f "$PLUGIN" ] || skip "$PLUGIN was not built (no /usr/include/slurm/spank.h)"

fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/slurm_lib.sh"
DAEMON_PID=
cleanup() {
    if [ -n "$DAEMON_PID" ]; then kill "$DAEMON_PID" 2>/dev/null; wait "$DAEMON_PID" 2>/dev/null; fi
    slurm_stop
    [ -n "${CARMA_SLURM_KEEP:-}" ] && echo "kept: $SD" || rm -rf "$SD" # CARMA_SLURM_KEEP=1 keeps the logs
}
trap cleanup EXIT
export CARMA_DATA_DIR=$SRC/data CARMA_SYSTEM_CONFIG=
CSOCK=$SD/carma.sock
elapsed() { awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'; }
t0=$(date +%s%N)
slurm_start "$CSOCK" || { fail "the cluster did not start"; exit 1; }
echo "cluster up in $(elapsed) s"

# submit ARGS...: sbatch's job id (stderr kept in $SD/submit.err).
submit() { sbatch --parsable -o "$SD/out/%j.out" "$@" 2>"$SD/submit.err"; }
envjob='env | grep -E "^(CUDA_|SLURM_SHARDS|SLURM_JOB_GPUS|SLURM_SPANK_CARMA)" | sort'
# job_env JOBID NAME: a variable from the job's output (the env dump above).
job_env() { sed -n "s/^$2=//p" "$SD/out/$1.out" | head -1; }
# expect_refused PATTERN ARGS...: sbatch refuses, saying PATTERN.
expect_refused() {
    local pat=$1 out
    shift
    if out=$(sbatch --parsable -o /dev/null "$@" 2>&1); then
        fail "sbatch $* was accepted (job $out)"
    else
        grep -q -- "$pat" <<<"$out" || fail "sbatch $*: message lacks '$pat': $out"
    fi
}

# --gpu-mem=10G -> 10 shards of one GPU, the MPS cap and the figure in the job.
j1=$(submit --gpu-mem=10G --wrap "$envjob") || fail "--gpu-mem=10G: $(cat "$SD/submit.err")"
# 9500 MiB rounds up to 10 shards too.
j2=$(submit --gpu-mem=9500M --wrap "$envjob") || fail "--gpu-mem=9500M: $(cat "$SD/submit.err")"
# gpu:1 -> all 40 shards of one GPU.
j3=$(submit --gres=gpu:1 --wrap "$envjob") || fail "gpu:1: $(cat "$SD/submit.err")"
grep -q "served as shard:40" "$SD/submit.err" || fail "gpu:1: no word of the rewrite: $(cat "$SD/submit.err")"
# gpu:2 -> a node of its own.
j4=$(submit --gres=gpu:2 --wrap "$envjob") || fail "gpu:2: $(cat "$SD/submit.err")"
# No GPU asked for: Slurm leaves CUDA_VISIBLE_DEVICES unset, which CUDA takes as every GPU of
# the node; the plugin sets it empty (no GPU). The same for a step of a shard job that asks
# for none (--gres=none), whose environment the batch step's cap and pipe directory reach.
j5=$(submit --wrap "$envjob") || fail "no GPU: $(cat "$SD/submit.err")"
j6=$(submit --gpu-mem=1G --wrap "srun --gres=none sh -c '$envjob'") ||
    fail "--gres=none step: $(cat "$SD/submit.err")"
# carma itself in a job without GPUs (on a fake NVML of two GPUs) finds none: it once listed
# (and `carma run` would have used) every GPU of the node.
printf 'gpu uuid=GPU-fake-m%s name="Fake A100" total=40960 used=0 minor=%s\n' 0 0 1 1 \
    >"$SD/two-gpus"
j7=$(CARMA_NVML_LIBRARY=$(dirname "$CARMA")/tests/fake_nvml/full/libnvidia-ml.so.1 \
     CARMA_DCGM_LIBRARY=/nonexistent/libdcgm.so.4 FAKE_NVML_SCENARIO=$SD/two-gpus \
     submit --wrap "$CARMA gpus --gpu-backend nvml") ||
    fail "carma gpus job: $(cat "$SD/submit.err")"

[ "$(job_field "$j1" TresPerNode)" = "gres:shard:10" ] || fail "--gpu-mem=10G: TresPerNode $(job_field "$j1" TresPerNode)"
[ "$(squeue -h -t all -j "$j1" -o %b)" = "gres:shard:10" ] || fail "--gpu-mem=10G: squeue %b $(squeue -h -t all -j "$j1" -o %b)"
[ "$(job_field "$j2" TresPerNode)" = "gres:shard:10" ] || fail "--gpu-mem=9500M: TresPerNode $(job_field "$j2" TresPerNode)"
[ "$(job_field "$j3" TresPerNode)" = "gres:shard:40" ] || fail "gpu:1: TresPerNode $(job_field "$j3" TresPerNode)"
[ "$(job_field "$j4" TresPerNode)" = "gres:gpu:2" ] || fail "gpu:2: TresPerNode $(job_field "$j4" TresPerNode)"
[ "$(job_field "$j4" OverSubscribe)" = "NO" ] || fail "gpu:2: not exclusive: OverSubscribe=$(job_field "$j4" OverSubscribe)"

for j in $j1 $j2 $j3 $j4 $j5 $j6; do
    slurm_wait_job "$j" || fail "job $j: $(job_field "$j" JobState)"
done
[ "$(job_env "$j1" SLURM_SHARDS_ON_NODE)" = 10 ] || fail "job $j1: shards: $(cat "$SD/out/$j1.out")"
[ "$(job_env "$j1" CUDA_MPS_PINNED_DEVICE_MEM_LIMIT)" = "0=10240M" ] || fail "job $j1: MPS cap: $(cat "$SD/out/$j1.out")"
[ "$(job_env "$j1" SLURM_SPANK_CARMA_GPU_MEM_MIB)" = 10240 ] || fail "job $j1: figure: $(cat "$SD/out/$j1.out")"
grep -Eq '^CUDA_VISIBLE_DEVICES=[0-3]$' "$SD/out/$j1.out" || fail "job $j1: one GPU: $(cat "$SD/out/$j1.out")"
[ "$(job_env "$j2" CUDA_MPS_PINNED_DEVICE_MEM_LIMIT)" = "0=10240M" ] || fail "job $j2: MPS cap: $(cat "$SD/out/$j2.out")"
[ "$(job_env "$j3" SLURM_SHARDS_ON_NODE)" = 40 ] || fail "job $j3: shards: $(cat "$SD/out/$j3.out")"
[ "$(job_env "$j3" CUDA_MPS_PINNED_DEVICE_MEM_LIMIT)" = "0=40960M" ] || fail "job $j3: MPS cap: $(cat "$SD/out/$j3.out")"
# (Slurm gives a job with a node of its own every GPU of the node)
grep -q '^CUDA_VISIBLE_DEVICES=0,1,2,3$' "$SD/out/$j4.out" || fail "job $j4: the node's GPUs: $(cat "$SD/out/$j4.out")"
grep -q CUDA_MPS_PINNED "$SD/out/$j4.out" && fail "job $j4: a whole-GPU job got an MPS cap"
for j in $j5 $j6; do
    grep -qx 'CUDA_VISIBLE_DEVICES=' "$SD/out/$j.out" ||
        fail "job $j, granted no GPU, may see every GPU: $(cat "$SD/out/$j.out")"
done
slurm_wait_job "$j7" && fail "job $j7, granted no GPU, ran carma on GPUs: $(cat "$SD/out/$j7.out")"
grep -q "CUDA_VISIBLE_DEVICES is set but empty: it makes no GPU visible" "$SD/out/$j7.out" ||
    fail "job $j7: $(cat "$SD/out/$j7.out")"
# The two 10-shard jobs and the gpu:1 job could not share the gpu:1 job's GPU.
g3=$(job_env "$j3" CUDA_VISIBLE_DEVICES) n3=$(job_field "$j3" NodeList)
for j in $j1 $j2; do
    [ "$(job_field "$j" NodeList)/$(job_env "$j" CUDA_VISIBLE_DEVICES)" = "$n3/$g3" ] &&
        [ "$(job_field "$j" StartTime)" = "$(job_field "$j3" StartTime)" ] &&
        fail "job $j shared GPU $g3 of $n3 with the gpu:1 job $j3"
done

# srun makes a job too: its task sees the cap.
out=$(srun --gpu-mem=2G -o "$SD/out/srun.out" sh -c 'echo "cap=$CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"' 2>&1) ||
    fail "srun --gpu-mem=2G: $out"
grep -q '^cap=0=2048M$' "$SD/out/srun.out" || fail "srun --gpu-mem=2G: $(cat "$SD/out/srun.out")"

# Refused at submission, with the reason.
expect_refused "needs 41 shards of 1024 MiB, but a GPU here has 40" --gpu-mem=41G --wrap true
expect_refused "needs 50 shards" --gres=shard:50 --wrap true
expect_refused "not a GPU memory size" --gpu-mem=lots --wrap true
expect_refused "not --gpus" --gpus=1 --wrap true
# Counts Slurm reads otherwise than a plain number (1k = 1024, +50 = 50) are not taken for 1.
expect_refused "needs 1024 shards" --gres=shard:1k --wrap true
expect_refused "cannot read the count of 'gres:shard:+50'" --gres=shard:+50 --wrap true
# A user's words with a % (a script's name) in a refusal: the script once raised an error
# formatting it, and Slurm accepted the job unchecked (gpu:2 with no node of its own).
mkdir -m 777 "$SD/u"
printf '#!/bin/sh\ntrue\n' >"$SD/u/job%s.sh"
chmod 755 "$SD/u/job%s.sh"
out=$(runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" sbatch --parsable --hold -o /dev/null \
      --gres=gpu:2 --gpu-mem=auto "$SD/u/job%s.sh" 2>&1) &&
    { fail "a refusal naming job%s.sh was accepted: $out"; scancel "${out##*$'\n'}"; }
grep -q "carma: --gpu-mem: auto: .*job%s.sh is not a Python script" <<<"$out" ||
    fail "refusal naming job%s.sh: $out"
# An error in job_submit.lua (here an admin's SHARDS_PER_GPU = "40", a string) refuses the job:
# Slurm would accept it unchecked. (slurmctld reloads the script when it changes.)
sed -i 's/^local SHARDS_PER_GPU = 40$/local SHARDS_PER_GPU = "40"/' "$SD/job_submit.lua"
grep -q '^local SHARDS_PER_GPU = "40"$' "$SD/job_submit.lua" || fail "cannot break job_submit.lua"
expect_refused "could not be checked" --gres=shard:50 --wrap true
sleep 1 # slurmctld reloads a script newer than its last load, to the second
cp "$SRC/contrib/slurm/job_submit.lua" "$SD/job_submit.lua"

# A held job's request changed with scontrol update is checked the same way (22.05 tells the
# user only "Unspecified error"; the reason is in slurmctld's log).
jh=$(submit --hold --gpu-mem=1G --wrap true) || fail "held job: $(cat "$SD/submit.err")"
scontrol update JobId="$jh" TresPerNode=gres:shard:50 >/dev/null 2>&1 && fail "update to shard:50 was accepted"
scontrol update JobId="$jh" TresPerNode=gres:gpu:1 >/dev/null 2>&1 && fail "update to gpu:1 was accepted"
grep -q "carma: update of job $jh refused: shard:50 needs 50 shards" "$SD/log/slurmctld.log" ||
    fail "update to shard:50: no reason in slurmctld's log"
grep -q "carma: update of job $jh refused: whole GPUs cannot be added" "$SD/log/slurmctld.log" ||
    fail "update to gpu:1: no reason in slurmctld's log"
[ "$(job_field "$jh" TresPerNode)" = "gres:shard:1" ] || fail "held job: TresPerNode $(job_field "$jh" TresPerNode)"
scontrol update JobId="$jh" TresPerNode=gres:shard:+50 >/dev/null 2>&1 &&
    fail "update to shard:+50 was accepted"
out=$(scontrol update JobId="$jh" TresPerNode=gres:shard:3 2>&1) || fail "update to shard:3 was refused: $out"
[ "$(job_field "$jh" TresPerNode)" = "gres:shard:3" ] || fail "update to shard:3: TresPerNode $(job_field "$jh" TresPerNode)"
scancel "$jh"
# Whole GPUs through TresPerJob/TresPerTask (--gpus, refused at submission) by an update: they
# would be given GPUs that shard jobs hold.
jn=$(submit --hold --wrap true) || fail "held job without GPUs: $(cat "$SD/submit.err")"
for u in TresPerJob=gres:gpu:2 TresPerTask=gres/gpu=1; do
    scontrol update JobId="$jn" "$u" >/dev/null 2>&1 && fail "update of a job to $u was accepted"
    grep -q "carma: update of job $jn refused: GPUs are asked for with --gres here" \
        "$SD/log/slurmctld.log" || fail "update to $u: no reason in slurmctld's log"
done
[ -z "$(job_field "$jn" TresPerJob)$(job_field "$jn" TresPerTask)" ] ||
    fail "held job: GPUs added: $(scontrol show job -o "$jn")"
scancel "$jn"

# No carma daemon was reachable: the plugin warned and no node is drained or down.
grep -q "carma_spank: warning: cannot reach the daemon at $CSOCK" "$SD"/log/slurmd-node*.log ||
    fail "no warning about the missing carma daemon in the slurmd logs"
bad=$(sinfo -h -N -o "%N %t" | grep -Ev ' (idle|mix|alloc)$')
[ -z "$bad" ] || fail "nodes not in service: $bad"

# --gpu-mem=auto: carma's estimate of the job's command, made as the submitting user.
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    PY=$SRC/tests/data/xmem/tiny_mlp.py
    want=$(runuser -u nobody -- "$CARMA" estimate --run --json -- python3 "$PY" 2>/dev/null | jq .mib)
    [ -n "$want" ] || fail "carma estimate --run of $PY as nobody gave nothing"
    ja=$(runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" sbatch --parsable -o "$SD/out/%j.out" \
         --chdir /tmp --gpu-mem=auto --wrap "python3 $PY" 2>"$SD/submit.err") ||
        fail "--gpu-mem=auto --wrap: $(cat "$SD/submit.err")"
    grep -q "estimated peak is $want MiB" "$SD/submit.err" || fail "auto: $(cat "$SD/submit.err")"
    shards=$(((want + 1023) / 1024))
    [ "$(job_field "$ja" TresPerNode)" = "gres:shard:$shards" ] ||
        fail "auto: $want MiB -> TresPerNode $(job_field "$ja" TresPerNode), want shard:$shards"
    # (the job itself fails here: this machine's torch has no CUDA)
    # A Python batch script with its arguments: the words after sbatch's options.
    cp "$SRC/tests/data/xmem/tiny_cnn.py" "$SD/cnn.py"
    chmod 755 "$SD/cnn.py"
    sed -i '1i #!/usr/bin/python3\n#SBATCH --gpu-mem=auto' "$SD/cnn.py"
    want=$(runuser -u nobody -- "$CARMA" estimate --run --json -- "$SD/cnn.py" --batch-size 4 2>/dev/null | jq .mib)
    jp=$(runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" sbatch --parsable -o /dev/null -J cnn \
         "$SD/cnn.py" --batch-size 4 2>"$SD/submit.err") || fail "auto, Python script: $(cat "$SD/submit.err")"
    [ -n "$want" ] && grep -q "estimated peak is $want MiB" "$SD/submit.err" ||
        fail "auto, Python script: want $want MiB: $(cat "$SD/submit.err")"
    [ "$(job_field "$jp" TresPerNode)" = "gres:shard:$(((want + 1023) / 1024))" ] ||
        fail "auto, Python script: TresPerNode $(job_field "$jp" TresPerNode) for $want MiB"
    echo "auto: Python batch script: $(grep -o 'estimated peak is [0-9]* MiB' "$SD/submit.err"), job $jp $(job_field "$jp" TresPerNode)"
    # srun: the command after its options.
    out=$(runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" srun -o /dev/null -N 1 --gpu-mem=auto \
          -J x python3 "$PY" 2>&1)
    grep -q "estimated peak is $(runuser -u nobody -- "$CARMA" estimate --run --json -- python3 "$PY" 2>/dev/null | jq .mib) MiB" <<<"$out" ||
        fail "srun --gpu-mem=auto: $out"
    echo "auto: srun: $(grep -o 'estimated peak is [0-9]* MiB' <<<"$out")"
    printf '#!/bin/sh\npython3 %s\n' "$PY" >"$SD/job.sh"
    chmod 755 "$SD/job.sh"
    out=$(runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" sbatch -o /dev/null --gpu-mem=auto "$SD/job.sh" 2>&1) &&
        fail "auto on a shell script was accepted: $out"
    grep -q "is not a Python script" <<<"$out" || fail "auto on a shell script: $out"
    out=$(sbatch -o /dev/null --gpu-mem=auto --wrap "python3 $PY" 2>&1) && fail "auto as root was accepted"
    grep -q "not do as root" <<<"$out" || fail "auto as root: $out"
else
    echo "note: /usr/bin/python3 has no torch (scripts/deps.sh installs it): --gpu-mem=auto not tested"
fi

# A carma daemon with an MPS server on the node: the job becomes its client.
mkdir -p "$SD/bin"
cat >"$SD/bin/nvidia-cuda-mps-control" <<'CTL'
#!/bin/sh
# a stand-in for NVIDIA's control daemon: -d starts a sleeper as the daemon; quit stops it
if [ "$1" = -d ]; then
  sleep 300 >/dev/null 2>&1 </dev/null &
  echo $! >"$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid"
  exit 0
fi
read cmd
[ "$cmd" = quit ] && kill "$(cat "$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid")"
exit 0
CTL
chmod 755 "$SD/bin/nvidia-cuda-mps-control"
# The node daemon reads a fake NVML whose GPUs' minor numbers are out of NVML order (UUIDs
# GPU-fake-mN for /dev/nvidiaN): the plugin must find the job's GPU by minor number.
for m in 2 0 3 1; do
    echo "gpu uuid=GPU-fake-m$m name=\"Fake A100\" total=40960 used=0 minor=$m"
done >"$SD/node-scenario"
CARMA_MPS_CONTROL=$SD/bin/nvidia-cuda-mps-control \
    CARMA_NVML_LIBRARY=$(dirname "$CARMA")/tests/fake_nvml/full/libnvidia-ml.so.1 \
    CARMA_DCGM_LIBRARY=/nonexistent/libdcgm.so.4 FAKE_NVML_SCENARIO=$SD/node-scenario \
    "$CARMA" daemon --socket "$CSOCK" --state "$SD/carma-state" --gpu-backend nvml \
    --set mps=on >"$SD/log/carma.log" 2>&1 &
DAEMON_PID=$!
for _ in $(seq 50); do "$CARMA" --socket "$CSOCK" gpus >/dev/null 2>&1 && break; sleep 0.2; done
jm=$(submit --gpu-mem=4G --wrap "$envjob") || fail "--gpu-mem=4G: $(cat "$SD/submit.err")"
slurm_wait_job "$jm" || fail "job $jm: $(job_field "$jm" JobState)"
[ "$(job_env "$jm" CUDA_MPS_PIPE_DIRECTORY)" = "$SD/carma-state-mps" ] ||
    fail "job $jm: no carma MPS pipe directory: $(cat "$SD/out/$jm.out")"
g=$(job_env "$jm" SLURM_JOB_GPUS)
grep -q "carma_spank: GPU $g (GPU-fake-m$g): [0-9]* MiB free, the job may use 4096 MiB" \
    "$SD"/log/slurmd-node*.log ||
    fail "the plugin did not log the job's GPU $g (GPU-fake-m$g) from the daemon: $(grep carma_spank "$SD"/log/slurmd-node*.log | tail -3)"
kill "$DAEMON_PID" && wait "$DAEMON_PID" 2>/dev/null
DAEMON_PID=
pid=$(cat "$SD/carma-state-mps/nvidia-cuda-mps-control.pid" 2>/dev/null)
[ -n "$pid" ] && kill "$pid" 2>/dev/null

# A daemon that misbehaves costs a job at most timeout_ms (1000 here), and the job starts.
# dribble: a reply a byte at a time (each byte within the timeout): it once held the job's
# start for as long as the daemon went on (40 s).
"$SRC/tests/slurm/fake_carmad.py" dribble "$CSOCK" 2>>"$SD/log/fake.log" &
DAEMON_PID=$!
for _ in $(seq 50); do [ -S "$CSOCK" ] && break; sleep 0.1; done
jd=$(submit --gpu-mem=1G --wrap "$envjob") ||
    fail "--gpu-mem=1G, dribbling daemon: $(cat "$SD/submit.err")"
slurm_wait_job "$jd" 15 || fail "job $jd, dribbling daemon: $(job_field "$jd" JobState) after 15 s"
grep -q "carma_spank: carma daemon at $CSOCK: no whole reply in time" "$SD"/log/slurmd-node*.log ||
    fail "dribbling daemon: no timeout logged: $(grep carma_spank "$SD"/log/slurmd-*.log | tail -2)"
kill "$DAEMON_PID" && wait "$DAEMON_PID" 2>/dev/null
# garbage: figures whose difference overflows (it was logged as -9223372036854775808 MiB free)
# and a pipe directory that is no path (not given to the job).
"$SRC/tests/slurm/fake_carmad.py" garbage "$CSOCK" 2>>"$SD/log/fake.log" &
DAEMON_PID=$!
for _ in $(seq 50); do [ -S "$CSOCK" ] && break; sleep 0.1; done
jg=$(submit --gpu-mem=1G --wrap "$envjob") ||
    fail "--gpu-mem=1G, garbage daemon: $(cat "$SD/submit.err")"
slurm_wait_job "$jg" 15 || fail "job $jg, garbage daemon: $(job_field "$jg" JobState)"
grep -q "carma_spank: the carma daemon at $CSOCK gave GPU [0-9]* no sane memory figures" \
    "$SD"/log/slurmd-node*.log && ! grep -q "GPU-odd-m.*MiB free" "$SD"/log/slurmd-node*.log ||
    fail "garbage daemon: $(grep carma_spank "$SD"/log/slurmd-node*.log | tail -2)"
grep -q CUDA_MPS_PIPE_DIRECTORY "$SD/out/$jg.out" && fail "job $jg: a garbage pipe directory"
[ "$(job_env "$jg" CUDA_MPS_PINNED_DEVICE_MEM_LIMIT)" = "0=1024M" ] ||
    fail "job $jg: MPS cap: $(cat "$SD/out/$jg.out")"
kill "$DAEMON_PID" && wait "$DAEMON_PID" 2>/dev/null
# hostile, refuse: UUIDs, a pipe directory and an error text with terminal escapes, a newline
# and a forged log line (fake_carmad.py): they once reached the slurmd log (and the refusal
# the job's output) as they were; now escaped, and that pipe directory is not the job's.
forged='\x1b[31mred\n[2000-01-01T00:00:00.000] forged: %n%s%s \u009b2J'
slurmd_log() { grep -a carma_spank "$SD"/log/slurmd-node*.log | tail -"$1"; }
for mode in hostile refuse; do
    "$SRC/tests/slurm/fake_carmad.py" "$mode" "$CSOCK" 2>>"$SD/log/fake.log" &
    DAEMON_PID=$!
    for _ in $(seq 50); do [ -S "$CSOCK" ] && break; sleep 0.1; done
    jx=$(submit --gpu-mem=1G --wrap "$envjob") || fail "$mode daemon: $(cat "$SD/submit.err")"
    slurm_wait_job "$jx" 15 || fail "job $jx, $mode daemon: $(job_field "$jx" JobState)"
    kill "$DAEMON_PID" && wait "$DAEMON_PID" 2>/dev/null
    if [ "$mode" = hostile ]; then
        g=$(job_env "$jx" SLURM_JOB_GPUS)
        grep -qF "carma_spank: GPU $g (GPU-m$g-$forged): 40960 MiB free" \
            "$SD"/log/slurmd-node*.log || fail "hostile daemon: no escaped UUID: $(slurmd_log 3)"
        grep -qF "not an absolute path of printable characters: /pipe$forged" \
            "$SD"/log/slurmd-node*.log || fail "hostile daemon: pipe directory not refused: log"
        grep -q CUDA_MPS_PIPE_DIRECTORY "$SD/out/$jx.out" &&
            fail "job $jx: a pipe directory with escapes"
    else
        grep -qF "carma_spank: carma daemon at $CSOCK: $forged" "$SD"/log/slurmd-node*.log ||
            fail "refusing daemon: no escaped error: $(slurmd_log 3)"
    fi
    grep -l $'\e' "$SD"/log/slurmd-node*.log "$SD/out/$jx.out" &&
        fail "$mode daemon: an escape character reached a log"
    grep -a '^\[2000-01-01' "$SD"/log/slurmd-node*.log "$SD/out/$jx.out" &&
        fail "$mode daemon: a forged log line"
done
DAEMON_PID=

# A shard step whose MPS cap cannot be set sees no GPU, not an uncapped one: here an admin's
# shard_mib that makes 2 shards more than the plugin's 1 TiB (slurmstepd reads plugstack.conf
# at each start).
sed -i 's/ timeout_ms=1000$/ timeout_ms=1000 shard_mib=1048576/' "$SD/plugstack.conf"
jc=$(submit --gres=shard:2 --wrap "$envjob") || fail "shard:2: $(cat "$SD/submit.err")"
slurm_wait_job "$jc" || fail "job $jc: $(job_field "$jc" JobState)"
sed -i 's/ shard_mib=1048576$//' "$SD/plugstack.conf"
grep -qx 'CUDA_VISIBLE_DEVICES=' "$SD/out/$jc.out" && ! grep -q CUDA_MPS_PINNED "$SD/out/$jc.out" ||
    fail "job $jc: no MPS cap but a GPU: $(cat "$SD/out/$jc.out")"
grep -q "SHARDS_ON_NODE=2 is not a shard count (1..1 of 1048576 MiB); no MPS cap; the step gets" \
    "$SD"/log/slurmd-node*.log || fail "job $jc: no reason logged: $(slurmd_log 2)"

# carma inside a whole-GPU allocation (docs/slurm-allocation.md): a gpu:2 job (given a node of
# its own, so all four of its GPUs) runs `carma run` on two task files; its private daemon, on
# the fake NVML, must use only the job's GPUs. The fake has six GPUs whose /dev/nvidiaN minor
# numbers are not NVML's order (NVML GPU 0 is nvidia5): a daemon that ignored SLURM_JOB_GPUS
# would place a task on nvidia5 or nvidia4, which are not the job's.
A=$SD/alloc
mkdir -p "$A/tmp"
for m in 5 0 4 1 3 2; do
    echo "gpu uuid=GPU-fake-m$m name=\"Fake A100\" total=40960 used=0 minor=$m"
done >"$A/scenario"
for t in a b; do
    printf 'name: %s\ncommand: [sh, -c, '"'"'echo "$CUDA_VISIBLE_DEVICES" >%s/%s.gpus'"'"']\ngpus: 2\nmemory: 30000\n' \
        "$t" "$A" "$t" >"$A/$t.yaml"
done
printf '#!/bin/sh\necho "jobgpus=$SLURM_JOB_GPUS"\ncd %s && exec %s run --gpu-backend nvml --set policy=exclusive --set sample_interval_s=0.2 a.yaml b.yaml\n' \
    "$A" "$CARMA" >"$A/job.sh"
jr=$(CARMA_NVML_LIBRARY=$(dirname "$CARMA")/tests/fake_nvml/full/libnvidia-ml.so.1 \
     CARMA_DCGM_LIBRARY=/nonexistent/libdcgm.so.4 FAKE_NVML_SCENARIO=$A/scenario TMPDIR=$A/tmp \
     submit --gres=gpu:2 "$A/job.sh") || fail "carma run job: $(cat "$SD/submit.err")"
slurm_wait_job "$jr" 90 || fail "carma run job $jr: $(job_field "$jr" JobState): $(cat "$SD/out/$jr.out")"
grep -Eq '^task [0-9]+ done a\.yaml( |$)' "$SD/out/$jr.out" && grep -Eq '^task [0-9]+ done b\.yaml( |$)' "$SD/out/$jr.out" ||
    fail "carma run job $jr: tasks not both done: $(cat "$SD/out/$jr.out")"
jobgpus=$(sed -n 's/^jobgpus=//p' "$SD/out/$jr.out")
[ -n "$jobgpus" ] || fail "carma run job $jr: no SLURM_JOB_GPUS"
for t in a b; do
    used=$(tr ',' ' ' <"$A/$t.gpus" 2>/dev/null)
    [ "$(wc -w <<<"$used")" -eq 2 ] || fail "task $t: GPUs '$used'"
    for u in $used; do
        [[ ",$jobgpus," == *",${u#GPU-fake-m},"* ]] || fail "task $t ran on $u, not one of the job's GPUs ($jobgpus)"
    done
done
grep -q "GPUs from the allocation: SLURM_JOB_GPUS=$jobgpus" "$SD/out/$jr.out" ||
    fail "carma run job: the private daemon did not use the allocation: $(cat "$SD/out/$jr.out")"
echo "carma run in job $jr (GPUs $jobgpus): a on $(cat "$A/a.gpus"), b on $(cat "$A/b.gpus")"

[ "$fails" -eq 0 ] || { echo "$fails failure(s); logs:"; tail -n 20 "$SD"/log/*.log; exit 1; }
echo "all Slurm cluster tests passed in $(elapsed) s"
