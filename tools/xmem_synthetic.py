#!/usr/bin/python3
"""xmem_synthetic.py — rebuilds rows of GPUMemNet's SYNTHETIC datasets (mlp_data_step1/2.csv,
cnn_data_step1_partial_*.csv) as PyTorch models, runs each row's training job (torchsummary
forward at batch 2, then Adam + cross-entropy on random data at the row's batch size) under
carma's tracer and writes one trace per row plus index.csv (trace, family, measured MiB).
`carma estimate --fit-xmem DIR/index.csv` fits the workspace rule, the constants and the margin
on these traces. The 12 real-world rows are never used here.

    PYTHONPATH=data/python tools/xmem_synthetic.py --data data/gpumemnet --out DIR [--per-file N]

Every usable row by default (the fit shipped in src/estimate/xmem_coeffs.c); --per-file N takes
N random rows of each file, for a quick look only: a fit on a sample covers only its sample.

Rows rebuilt: successful runs only (no OOM), whose layer list parses; CNN rows of the
pyramid/uniform/gradual/bottleneck/hourglass architectures (plain conv stacks: the list gives
every layer's channels); residual and dense CNNs are skipped (shortcuts, strides and pooling
are not in the list). A rebuilt model must match the row's parameter count exactly, else the
row is skipped and counted."""
import argparse
import ast
import csv
import os
import random
import re
import sys

import torch
import torch.nn as nn

from carma_trace.run import trace_function

ACTS = {"relu": nn.ReLU, "prelu": nn.PReLU, "tanh": nn.Tanh, "gelu": nn.GELU,
        "softplus": nn.Softplus, "leakyrelu": nn.LeakyReLU, "elu": nn.ELU, "selu": nn.SELU,
        "mish": nn.Mish, "silu": nn.SiLU, "identity": nn.Identity, "sigmoid": nn.Sigmoid}


def fields(filename):
    """The generator parameters in a file name (keys hold underscores, values do not)."""
    name = filename.rsplit(".out", 1)[0]
    return {k.strip("_"): v for k, v in re.findall(r"([a-z_]+):([^_]*)", name)}


def build_mlp(layers, n_in, p_drop):
    mods, width = [], n_in
    for kind, acts, params in layers:
        k = kind.lower()
        if k == "linear":
            mods.append(nn.Linear(width, acts))
            width = acts
        elif k == "batch_normalization":
            mods.append(nn.BatchNorm1d(width))
        elif k == "dropout":
            mods.append(nn.Dropout(p_drop))
        elif k == "softmax":
            mods.append(nn.Softmax(dim=1))
        elif k in ACTS:
            mods.append(ACTS[k]())
        else:
            return None, None
    return nn.Sequential(*mods), width


def build_cnn(layers, c_in, hw, p_drop):
    mods, ch = [], c_in
    for kind, acts, params in layers:
        k = kind.lower()
        if k == "conv2d":
            cout, rem = divmod(params, 9 * ch + 1)
            if rem or cout * hw * hw != acts:
                return None, None
            mods.append(nn.Conv2d(ch, cout, 3, padding=1))
            ch = cout
        elif k == "batchnorm2d":
            mods.append(nn.BatchNorm2d(ch))
        elif k == "dropout":
            mods.append(nn.Dropout(p_drop))
        elif k == "adaptive_avg_pool2d":
            mods += [nn.AdaptiveAvgPool2d(1), nn.Flatten()]
        elif k == "linear":
            mods.append(nn.Linear(ch, acts))
            ch = acts
        elif k == "softmax":
            mods.append(nn.Softmax(dim=1))
        elif k in ACTS:
            mods.append(ACTS[k]())
        else:
            return None, None
    return nn.Sequential(*mods), ch


def job(model, sample_shape, classes, batch):
    """The generator's training run, as the tracer sees a script doing it."""
    def run():
        dev = torch.device("cuda")
        m = model.to(dev)
        m(torch.rand(2, *sample_shape).to(dev))          # torchsummary's forward
        opt = torch.optim.Adam(m.parameters(), lr=1e-3)
        crit = nn.CrossEntropyLoss()
        for _ in range(3):
            x = torch.randn(batch, *sample_shape).to(dev)
            y = torch.randint(0, classes, (batch,)).to(dev)
            opt.zero_grad()
            loss = crit(m(x), y)
            loss.backward()
            opt.step()
    return run


def rows_of(path, family, per_file, rng):
    rows = [r for r in csv.DictReader(open(path)) if r.get("Status", "SUCCESSFUL") == "SUCCESSFUL"]
    rng.shuffle(rows)
    n = 0
    for r in rows:
        if per_file and n >= per_file:
            break
        f = fields(r["Filename"])
        try:
            layers = ast.literal_eval(r["Activations-Params"])
            batch, mib = int(r["Batch Size"]), float(r["Max GPU Memory (MiB)"])
        except (ValueError, SyntaxError):
            continue
        p = float(f.get("dropout", "0.5")) if f.get("dropout", "False") not in ("True", "False") \
            else 0.5
        if family == "mlp":
            n_in = int(f["input"])
            model, classes = build_mlp(layers, n_in, p)
            shape = (n_in,)
        else:
            if f.get("arch") in ("residual", "dense"):
                continue
            c, hw = int(f["input_channels"]), int(f["input_size"])
            model, classes = build_cnn(layers, c, hw, p)
            shape = (c, hw, hw)
        if model is None or classes is None or classes < 2:
            continue
        if sum(q.numel() for q in model.parameters()) != int(float(r["Total Parameters"])):
            continue
        n += 1
        yield r["Filename"], model, shape, classes, batch, mib


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--per-file", type=int, default=0, help="rows per file (0: all)")
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(a.seed)
    files = sorted(f for f in os.listdir(a.data)
                   if f.startswith("mlp_data_step") or f.startswith("cnn_data_step1_partial_"))
    with open(os.path.join(a.out, "index.csv"), "w", newline="") as idx:
        w = csv.writer(idx)
        w.writerow(["trace", "family", "measured_mib", "source"])
        k = 0
        for fname in files:
            family = "mlp" if fname.startswith("mlp") else "cnn"
            for name, model, shape, classes, batch, mib in rows_of(
                    os.path.join(a.data, fname), family, a.per_file, rng):
                k += 1
                tpath = "%s_%04d.trace" % (family, k)
                with open(os.path.join(a.out, tpath), "w") as out:
                    rc, msg = trace_function(job(model, shape, classes, batch), out, 3)
                if rc:
                    print("skip %s: %s" % (name, msg), file=sys.stderr)
                    continue
                w.writerow([tpath, family, "%g" % mib, fname + ":" + name])
                idx.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
