#!/usr/bin/env bash
# The task's environment: the submitter's whole environment reaches the task (conda and venv
# variables, PYTHONPATH, LD_LIBRARY_PATH, HF_HOME), less the variables carma sets itself;
# bounded in count and size with a clear error; --clean-env passes PATH and --env only; never
# shown to another user. A .rad's `conda activate ENV` runs the task under that environment
# (a fake conda records how it was asked), and fails naming ENV when there is no conda.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"

printf 'sample_interval_s = 0.2\ngrace_s = 0.2\nkill_grace_s = 1\n' >"$tmp/carma.conf"
start_daemon --sim-gpus 2xA100-40GB --config "$tmp/carma.conf"
ended() { "$CARMA" show --json "$1" | jq -e '.state != "queued" and .state != "running"'; }

# The submitter's variables arrive; the ones carma sets are carma's.
id=$(env PYTHONPATH=/opt/py LD_LIBRARY_PATH=/opt/lib HF_HOME=/data/hf CONDA_PREFIX=/opt/conda/envs/x \
    VIRTUAL_ENV=/home/u/venv MY_SECRET=s3cr3t-token CUDA_VISIBLE_DEVICES=7 \
    NVIDIA_VISIBLE_DEVICES=all CUDA_MPS_PIPE_DIRECTORY=/tmp/mine CARMA_TASK_ID=999 \
    CARMA_ARRAY_INDEX=5 "$CARMA" submit -- env) || fail "submit"
wait_until 10 ended "$id" || fail "task $id did not end"
out=$("$CARMA" logs "$id")
for kv in PYTHONPATH=/opt/py LD_LIBRARY_PATH=/opt/lib HF_HOME=/data/hf \
    CONDA_PREFIX=/opt/conda/envs/x VIRTUAL_ENV=/home/u/venv MY_SECRET=s3cr3t-token \
    "CARMA_TASK_ID=$id" "PATH=$PATH"; do
    grep -qxF "$kv" <<<"$out" || fail "the task's environment lacks $kv"
done
grep -q '^CUDA_VISIBLE_DEVICES=7$' <<<"$out" && fail "the submitter's CUDA_VISIBLE_DEVICES reached the task"
grep -q '^CUDA_VISIBLE_DEVICES=.' <<<"$out" || fail "carma's CUDA_VISIBLE_DEVICES is missing"
grep -Eq '^(NVIDIA_VISIBLE_DEVICES|CUDA_MPS_PIPE_DIRECTORY|CARMA_ARRAY_INDEX)=' <<<"$out" \
    && fail "a reserved variable passed: $(grep -E '^(NVIDIA|CUDA_MPS|CARMA_ARRAY)' <<<"$out")"
# An explicit --env of one of carma's variables is refused, naming it.
out=$("$CARMA" submit --env CUDA_VISIBLE_DEVICES=0 -- true 2>&1) && fail "--env CUDA_VISIBLE_DEVICES accepted"
grep -q "CUDA_VISIBLE_DEVICES: carma sets this variable itself" <<<"$out" || fail "reserved --env message: $out"
# A task file's env: `task check` refuses what submit refuses, and --env takes only the
# names a task file takes.
printf 'command: "true"\nenv:\n  CUDA_VISIBLE_DEVICES: "3"\n' >"$tmp/reserved.yaml"
out=$("$CARMA" task check "$tmp/reserved.yaml" 2>&1) && fail "task check took a reserved variable"
grep -q "env: CUDA_VISIBLE_DEVICES: carma sets this variable itself" <<<"$out" \
    || fail "task check's message: $out"
out=$("$CARMA" submit --env 'A B=1' -- true 2>&1) && fail "--env 'A B=1' accepted"
grep -q -- "--env: 'A B' is not a valid variable name" <<<"$out" || fail "--env name message: $out"
out=$("$CARMA" submit --env '1A=1' -- true 2>&1) && fail "--env '1A=1' accepted"

# --clean-env: PATH and --env only.
id=$(MY_SECRET=x "$CARMA" submit --clean-env --env A=1 -- env) || fail "submit --clean-env"
wait_until 10 ended "$id" || fail "task $id did not end"
out=$("$CARMA" logs "$id")
grep -qx A=1 <<<"$out" && grep -qxF "PATH=$PATH" <<<"$out" || fail "--clean-env lost PATH or --env: $out"
grep -q MY_SECRET <<<"$out" && fail "--clean-env passed MY_SECRET"

# Bounds: too many variables, too many bytes; each a clear error, nothing queued.
n_before=$("$CARMA" queue --all --json | jq length)
out=$(env $(for i in $(seq 1 1100); do printf 'V%d=x ' "$i"; done) "$CARMA" submit -- true 2>&1) \
    && fail "1100 variables accepted"
grep -q "task.env: .* variables, at most 1024 are passed (--clean-env" <<<"$out" || fail "count message: $out"
big=$(head -c 50000 /dev/zero | tr '\0' x)
out=$(B1=$big B2=$big B3=$big "$CARMA" submit -- true 2>&1) && fail "150 kB of variables accepted"
grep -q "task.env: more than 128 KiB of variables" <<<"$out" || fail "size message: $out"
[ "$("$CARMA" queue --all --json | jq length)" = "$n_before" ] || fail "a refused submission was queued"

# Never shown: not in show or queue, to another user or to the owner.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
    as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
    for cmd in "show --json 1" "queue --all --json"; do
        out=$(as_nobody "$CARMA" $cmd) || fail "nobody: carma $cmd"
        grep -q s3cr3t <<<"$out" && fail "carma $cmd shows another user's environment"
    done
fi
"$CARMA" show --json 1 | grep -q s3cr3t && fail "show prints the environment"

# .rad line 2: conda activate ENV, through a fake conda that records its arguments.
mkdir -p "$tmp/bin"
cat >"$tmp/bin/conda" <<'SH'
#!/bin/sh
echo "$@" >>"$CONDA_LOG"
[ "$1 $2" = "shell.posix activate" ] || exit 2
echo "export CONDA_DEFAULT_ENV='$3'; export CONDA_PREFIX='/opt/envs/$3'"
SH
chmod 755 "$tmp/bin/conda"
export CONDA_LOG=$tmp/conda.log
rad() { # FILE ENV COMMAND
    printf '# test\nconda activate %s\n%s\nnone.model\ndata\n8\nexclusive\n1\n1000\n' "$2" "$3" >"$1"
}
rad "$tmp/c.rad" torch-2.1 'sh -c "echo env=\$CONDA_DEFAULT_ENV prefix=\$CONDA_PREFIX"'
id=$(PATH=$tmp/bin:$PATH "$CARMA" submit "$tmp/c.rad" 2>/dev/null) || fail "submit .rad"
wait_until 10 ended "$id" || fail "conda task did not end"
[ "$("$CARMA" show --json "$id" | jq -r .state)" = done ] || fail "conda task: $("$CARMA" logs "$id" 2>&1)"
[ "$("$CARMA" logs "$id")" = "env=torch-2.1 prefix=/opt/envs/torch-2.1" ] \
    || fail "task did not run in the conda env: $("$CARMA" logs "$id")"
grep -qx "shell.posix activate torch-2.1" "$CONDA_LOG" || fail "conda was asked: $(cat "$CONDA_LOG")"
# The same from a YAML task file's `conda:` key.
printf 'command: sh -c "echo env=$CONDA_DEFAULT_ENV"\nconda: yenv\n' >"$tmp/c.yaml"
id=$(cd "$tmp" && PATH=$tmp/bin:$PATH "$CARMA" submit "$tmp/c.yaml") || fail "submit .yaml"
wait_until 10 ended "$id" || fail "yaml conda task did not end"
[ "$("$CARMA" logs "$id")" = "env=yenv" ] || fail "yaml conda: $("$CARMA" logs "$id" 2>&1)"
# No conda on the task's PATH: the attempt fails, naming the environment.
id=$(env -u CONDA_EXE "$CARMA" submit "$tmp/c.rad" 2>/dev/null) || fail "submit .rad (no conda)"
wait_until 10 ended "$id" || fail "conda-less task did not end"
[ "$("$CARMA" show --json "$id" | jq -r .state)" = failed ] || fail "conda-less task should fail"
"$CARMA" logs "$id" 2>&1 | grep -q "carma: conda activate torch-2.1: no conda on the task's PATH" \
    || fail "conda-less message: $("$CARMA" logs "$id" 2>&1)"

stop_daemon
[ $fails -eq 0 ] || { echo "--- daemon log"; cat "$tmp/daemon.log"; }
echo "$fails failure(s)"
[ $fails -eq 0 ]
