#!/bin/bash
# test_xmem_refusals.sh — what the xmem tracer (`carma estimate --run`) refuses and what it
# stubs: every CUDA autocast entry point is refused as mixed precision (CPU autocast and
# disabled autocast/GradScaler, as torch.utils.checkpoint makes, trace); torch.cuda questions
# about the GPU and its memory figures are refused by name, timing and syncing calls do nothing;
# a non-zero exit short of the K-th step is an error; commands that are not `python3 SCRIPT`
# get a clear error. Needs /usr/bin/python3 with torch: skipped (77) otherwise.
# Usage: test_xmem_refusals.sh /path/to/carma /path/to/source_dir
set -u
CARMA=$1
SRC=$2
export CARMA_DATA_DIR="$SRC/data"
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    echo "SKIP: /usr/bin/python3 has no torch (scripts/deps.sh installs it)"
    exit 77
fi
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
tmp=$(mktemp -d)
trap 'chmod -R u+rwX "$tmp"; rm -rf "$tmp"' EXIT
chmod 755 "$tmp" # the tracer runs as the submitting user (nobody, below, when we are root)
[ "$(id -u)" -eq 0 ] && export SUDO_UID=65534 SUDO_GID=65534

source "$(dirname "$0")/expect_lib.sh"
run() { "$CARMA" estimate --run -- python3 "$tmp/$1.py"; }

# script NAME: a tiny training loop (step(ctx) runs one optimizer step, the forward in ctx)
# followed by the lines on stdin
script() {
    cat >"$tmp/$1.py" <<'EOF'
import sys, torch, torch.nn as nn
m = nn.Linear(16, 4).cuda()
opt = torch.optim.SGD(m.parameters(), lr=0.1)
def step(ctx=None):
    opt.zero_grad()
    x = torch.randn(8, 16).cuda()
    if ctx is None:
        out = m(x)
    else:
        with ctx:
            out = m(x)
    out.float().sum().backward()
    opt.step()
EOF
    cat >>"$tmp/$1.py"
}

# 1. mixed precision, every CUDA spelling (on meta, autocast does nothing: a float32 figure)
script ac_kw <<<'for _ in range(3): step(torch.autocast(device_type="cuda", dtype=torch.float16))'
script ac_pos <<<'for _ in range(3): step(torch.autocast("cuda"))'
script ac_amp_bf16 <<<'for _ in range(3): step(torch.amp.autocast("cuda", dtype=torch.bfloat16))'
script ac_deco <<'EOF'
@torch.autocast("cuda")
def fwd(x): return m(x)
for _ in range(3):
    opt.zero_grad(); fwd(torch.randn(8, 16).cuda()).sum().backward(); opt.step()
EOF
script ac_caught <<'EOF'
try:
    ctx = torch.autocast("cuda", dtype=torch.bfloat16)
except Exception:
    ctx = None   # falls back to float32: the trace must still refuse
for _ in range(3): step(ctx)
EOF
script ac_set <<<'torch.set_autocast_enabled(True)
for _ in range(3): step()'
for s in ac_kw ac_pos ac_amp_bf16 ac_deco ac_caught ac_set; do
    expect_fixed 1 "cannot trace: mixed precision" run $s
done
# ... while CPU autocast (casts CPU tensors only) and disabled autocast trace
script ac_cpu <<<'for _ in range(3): step(torch.autocast("cpu", dtype=torch.bfloat16))'
script amp_off <<'EOF'
scaler = torch.cuda.amp.GradScaler(enabled=False)
for _ in range(3):
    with torch.cuda.amp.autocast(enabled=False):
        loss = m(torch.randn(8, 16).cuda()).sum()
    scaler.scale(loss).backward(); scaler.step(opt); scaler.update(); opt.zero_grad()
EOF
script ckpt <<'EOF'
from torch.utils.checkpoint import checkpoint
for _ in range(3):
    opt.zero_grad()
    checkpoint(m, torch.randn(8, 16).cuda().requires_grad_()).sum().backward(); opt.step()
EOF
for s in ac_cpu amp_off ckpt; do
    expect_fixed 0 "3 optimizer steps traced" run $s
done

# 2. torch.cuda: questions about the GPU and its memory are refused by name ...
for call in "get_device_properties(0).total_memory" "get_device_capability()" \
    "is_bf16_supported()" "mem_get_info()" "memory_stats()"; do
    name=${call%%(*}
    script "q_$name" <<<"step(); print(torch.cuda.$call)"
    expect_fixed 1 "cannot trace: the script asks torch.cuda.$name " run "q_$name"
done
# ... what is mostly only logged is answered with a stand-in, and the script traces
script q_logged <<<'print(torch.cuda.get_device_name(0), torch.cuda.memory_allocated(),
      torch.cuda.max_memory_allocated(), torch.cuda.memory_reserved()); step(); step(); step()'
expect_fixed 0 "3 optimizer steps traced" run q_logged
script q_rng <<<'step(); torch.cuda.get_rng_state()'
expect_fixed 1 "cannot trace: the script calls torch.cuda.get_rng_state, which needs a GPU" run q_rng
script q_stream <<<'s = torch.cuda.Stream()'
expect_fixed 1 "cannot trace: a side CUDA stream (torch.cuda.Stream)" run q_stream
# ... timing, syncs and resets do nothing
script timing <<'EOF'
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
torch.cuda.reset_peak_memory_stats(); torch.cuda.empty_cache()
for _ in range(3):
    start.record(); step(); end.record()
    torch.cuda.synchronize(); torch.cuda.current_stream().synchronize()
    print("%.1f ms" % start.elapsed_time(end))
EOF
expect_fixed 0 "3 optimizer steps traced" run timing

# 3. a non-zero exit before the K-th step is an error; exit 0 after some steps traces them
script exit3 <<<'step(); sys.exit(3)'
expect_fixed 1 "the script exited with status 3 after 1 optimizer step (of 3)" run exit3
script exitmsg <<<'step(); step(); sys.exit("validation failed")'
expect_fixed 1 "exited with status 1 (validation failed) after 2 optimizer steps (of 3)" run exitmsg
script exit0 <<<'step(); sys.exit(0)'
out=$("$CARMA" estimate --run --json -- python3 "$tmp/exit0.py" 2>/dev/null) ||
    fail "exit 0 after a step: $out"
[ "$(printf '%s' "$out" | jq .steps)" = 1 ] || fail "exit 0 after a step: not 1 step: $out"

# 4. commands that are not `python3 SCRIPT`
script tiny <<<'for _ in range(3): step()'
printf '#!/bin/sh\npython3 tiny.py\n' >"$tmp/train.sh"
chmod 755 "$tmp/train.sh"
cp "$tmp/train.sh" "$tmp/train" # a shell script without a telling name
printf '\177ELF\0\0\0\0' >"$tmp/binary.py"
cp "$tmp/tiny.py" "$tmp/secret.py"
chmod 000 "$tmp/secret.py"
give="give the Python script itself: carma estimate --run -- python3 SCRIPT ARGS"
expect_fixed 1 "bash is a program, not a Python script: the tracer runs Python scripts; $give" \
    "$CARMA" estimate --run -- bash "$tmp/train.sh"
expect_fixed 1 "torchrun is a program, not a Python script" \
    "$CARMA" estimate --run -- torchrun "$tmp/tiny.py"
expect_fixed 1 "$tmp/train.sh is not a Python script (its first line runs /bin/sh)" \
    "$CARMA" estimate --run -- "$tmp/train.sh"
expect_fixed 1 "$tmp/train is not a Python script (its first line runs /bin/sh): the tracer" \
    "$CARMA" estimate --run -- python3 "$tmp/train"
expect_fixed 1 "$tmp/binary.py is not a Python script (a binary file)" \
    "$CARMA" estimate --run -- python3 "$tmp/binary.py"
expect_fixed 1 "cannot read $tmp/secret.py: permission denied" \
    "$CARMA" estimate --run -- python3 "$tmp/secret.py"
expect_fixed 0 "3 optimizer steps traced" "$CARMA" estimate --run -- /usr/bin/env python3 "$tmp/tiny.py"
expect_fixed 1 "no such script: $tmp/missing.py" "$CARMA" estimate --run -- python3 "$tmp/missing.py"

[ "$fails" -eq 0 ] && echo "all xmem refusal tests passed"
[ "$fails" -eq 0 ]
