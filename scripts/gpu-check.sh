#!/bin/bash
# gpu-check.sh — carma on a real GPU server: reads the GPUs through the nvml backend, starts the
# daemon with it, submits real PyTorch training tasks on synthetic data (three small CNNs, one
# transformer, and one task that runs out of memory when collocated because its estimate is too
# low), waits for them and prints what happened: placements, collocation, SM activity and its
# source, the out-of-memory crash detected and the task run again, peak memories measured
# against the estimates. Needs nvidia-smi, python3 with torch (CUDA) and a built carma.
#
# usage: scripts/gpu-check.sh [--carma PATH] [--python PY] [--workdir DIR] [--seconds S]
#                             [--policy NAME] [--keep]
set -u

CARMA=build/carma
PYTHON=python3
WORKDIR=
SECONDS_PER_TASK=60
POLICY=oracle-magm
KEEP=0
while [ $# -gt 0 ]; do
    case $1 in
    --carma) CARMA=$2; shift 2 ;;
    --python) PYTHON=$2; shift 2 ;;
    --workdir) WORKDIR=$2; shift 2 ;;
    --seconds) SECONDS_PER_TASK=$2; shift 2 ;;
    --policy) POLICY=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-check: unknown option '$1'" >&2; exit 2 ;;
    esac
done

say() { printf '\n== %s\n' "$*"; }
die() { echo "gpu-check: $*" >&2; exit 1; }

[ -x "$CARMA" ] || die "no carma binary at $CARMA (run 'make build' or pass --carma)"
CARMA=$(cd "$(dirname "$CARMA")" && pwd)/$(basename "$CARMA")
command -v nvidia-smi >/dev/null || die "nvidia-smi not found: is this a GPU server?"
"$PYTHON" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null \
    || die "$PYTHON cannot import torch with CUDA"

WORKDIR=${WORKDIR:-$(mktemp -d /tmp/carma-gpu-check.XXXXXX)}
mkdir -p "$WORKDIR/state"
SOCK=$WORKDIR/carma.sock
DAEMON_PID=
cleanup() {
    [ -n "$DAEMON_PID" ] && kill "$DAEMON_PID" 2>/dev/null && wait "$DAEMON_PID" 2>/dev/null
    [ "$KEEP" = 1 ] || rm -rf "$WORKDIR"
}
trap cleanup EXIT

say "GPUs (nvidia-smi)"
nvidia-smi --query-gpu=index,uuid,name,memory.total,memory.used --format=csv

say "GPUs through carma's nvml backend (3 samples, 300 ms apart)"
"$CARMA" gpus --gpu-backend nvml --samples 3 --interval-ms 300 || die "carma gpus --gpu-backend nvml failed"
"$CARMA" gpus --gpu-backend nvml --samples 2 --json >"$WORKDIR/probe.json" 2>/dev/null
TOTAL_MIB=$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["memory"]["total_mib"])' \
    "$WORKDIR/probe.json") || die "no memory total for GPU 0"

# ---- the training program: synthetic data, a model by name, optional memory hold -----------
cat >"$WORKDIR/train.py" <<'PY'
import argparse, time, torch, torch.nn as nn
p = argparse.ArgumentParser()
p.add_argument("--model", required=True)
p.add_argument("--batch", type=int, default=64)
p.add_argument("--seconds", type=float, default=60)
p.add_argument("--hold-fraction", type=float, default=0.0,
               help="extra memory held, as a fraction of the GPU's total")
p.add_argument("--hold-after", type=float, default=0.0,
               help="seconds of light training before the hold is taken")
a = p.parse_args()
dev = torch.device("cuda")
def cnn(width, depth):
    layers, c = [], 3
    for i in range(depth):
        layers += [nn.Conv2d(c, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU()]
        if i % 2 == 1:
            layers.append(nn.MaxPool2d(2))
        c = width
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, 100))
class Tx(nn.Module):
    def __init__(self, d=768, layers=8, vocab=32000):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 12, 4 * d, batch_first=True), layers)
        self.out = nn.Linear(d, vocab)
    def forward(self, x):
        return self.out(self.enc(self.emb(x)))
if a.model == "cnn_small":   net, shape = cnn(64, 4), (3, 32, 32)
elif a.model == "cnn_wide":  net, shape = cnn(256, 6), (3, 64, 64)
elif a.model == "cnn_deep":  net, shape = cnn(128, 12), (3, 64, 64)
elif a.model == "transformer": net, shape = Tx(), None
else: raise SystemExit("unknown model " + a.model)
net = net.to(dev)
opt = torch.optim.AdamW(net.parameters(), lr=1e-4)
total = torch.cuda.get_device_properties(dev).total_memory
hold, start, steps = None, time.time(), 0
while time.time() - start < a.seconds:
    if a.hold_fraction and hold is None and time.time() - start >= a.hold_after:
        print(f"taking {a.hold_fraction:.2f} of {total >> 20} MiB", flush=True)
        hold = torch.empty(int(total * a.hold_fraction), dtype=torch.uint8, device=dev)
    if shape:
        x = torch.randn(a.batch, *shape, device=dev); y = torch.randint(0, 100, (a.batch,), device=dev)
        loss = nn.functional.cross_entropy(net(x), y)
    else:
        x = torch.randint(0, 32000, (a.batch, 256), device=dev)
        loss = nn.functional.cross_entropy(net(x).flatten(0, 1), x.flatten())
    opt.zero_grad(); loss.backward(); opt.step(); steps += 1
torch.cuda.synchronize()
print(f"done steps={steps} peak_reserved_mib={torch.cuda.max_memory_reserved() >> 20}", flush=True)
PY

say "starting the daemon (nvml backend, policy $POLICY)"
"$CARMA" daemon --socket "$SOCK" --state "$WORKDIR/state" --gpu-backend nvml \
    --set policy="$POLICY" --set grace_s=20 >"$WORKDIR/daemon.log" 2>&1 &
DAEMON_PID=$!
for _ in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.2; done
[ -S "$SOCK" ] || { cat "$WORKDIR/daemon.log"; die "the daemon did not start"; }

submit() { # name mem_mib args...
    local name=$1 mem=$2; shift 2
    "$CARMA" submit --socket "$SOCK" --name "$name" --mem "${mem}M" --batch "$BATCH" \
        -- "$PYTHON" "$WORKDIR/train.py" --seconds "$SECONDS_PER_TASK" --batch "$BATCH" "$@"
}

say "submitting five tasks"
S=$SECONDS_PER_TASK
# The out-of-memory task trains lightly, then takes 70% of the GPU; its estimate (2 GiB) is far
# too low, so it is collocated with the transformer (which holds 40%) and crashes when it grows;
# it must then run again, alone.
BATCH=32 submit oom_grower 2048 --model cnn_small --hold-fraction 0.70 --hold-after 25
BATCH=16 submit transformer $((TOTAL_MIB * 45 / 100)) --model transformer --hold-fraction 0.40
BATCH=128 submit cnn_small 3000 --model cnn_small
BATCH=64 submit cnn_wide 8000 --model cnn_wide
BATCH=64 submit cnn_deep 6000 --model cnn_deep

say "watching (SM activity every 10 s) until every task has ended"
deadline=$(( $(date +%s) + 12 * S + 300 ))
while :; do
    "$CARMA" gpus --socket "$SOCK" 2>/dev/null | head -9   # SMACT/SMOCC/DRAMA and their SOURCE
    "$CARMA" queue --socket "$SOCK" --json >"$WORKDIR/queue.json" 2>/dev/null
    left=$("$PYTHON" - "$WORKDIR/queue.json" <<'PY'
import json, sys
try:
    q = json.load(open(sys.argv[1]))
except Exception:
    print(99); sys.exit()
tasks = q.get("tasks", q) if isinstance(q, dict) else q
print(sum(1 for t in tasks if t.get("state") not in ("done", "failed", "cancelled")))
PY
)
    [ "$left" = 0 ] && break
    [ "$(date +%s)" -gt "$deadline" ] && { echo "gpu-check: tasks still running at the deadline"; break; }
    sleep 10
done

say "what happened"
"$CARMA" queue --socket "$SOCK" --all --json >"$WORKDIR/final.json" 2>/dev/null \
    || "$CARMA" queue --socket "$SOCK" --json >"$WORKDIR/final.json"
"$PYTHON" - "$WORKDIR/final.json" <<'PY'
import json, sys
q = json.load(open(sys.argv[1]))
tasks = q.get("tasks", q) if isinstance(q, dict) else q
def first(t, *keys):
    for k in keys:
        if k in t and t[k] is not None:
            return t[k]
    return "?"
# Field names as `carma queue --json` prints them (docs/protocol.md).
print(f"{'id':>3} {'name':<12} {'state':<10} {'attempts':>8} {'gpus':<8} {'outcome':<9} "
      f"{'figure MiB':>10} {'from':<9} {'peak MiB':>9}")
for t in tasks:
    print(f"{first(t,'id'):>3} {str(first(t,'name')):<12} {str(first(t,'state')):<10} "
          f"{str(first(t,'attempts')):>8} {str(first(t,'gpus')):<8} {str(first(t,'outcome')):<9} "
          f"{str(first(t,'mem_mib')):>10} {str(first(t,'mem_source')):<9} "
          f"{str(first(t,'peak_mib')):>9}")
PY
say "daemon log (placements with ', collocated', out-of-memory, recovery)"
grep -Ei 'attempt [0-9]+ on GPUs|oom|out of memory|recovery|done|fail|peak|MPS' "$WORKDIR/daemon.log" | tail -40
say "each task's own account (torch peak memory)"
for log in "$WORKDIR"/state/attempts/*/stdout "$WORKDIR"/state/attempts/*/stderr; do
    [ -f "$log" ] && grep -H -E 'peak_reserved_mib|taking|OutOfMemory' "$log"
done 2>/dev/null | head -40
echo
echo "work directory: $WORKDIR$([ "$KEEP" = 1 ] || echo ' (removed at exit; --keep keeps it)')"
