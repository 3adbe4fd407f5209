#!/usr/bin/python3
"""xmem_residual.py — what the synthetic CNN rows' measured peaks hold beyond the replay: for
the traces tools/xmem_synthetic.py wrote, the memory left over after context + replayed peak,
tensors only and with the workspace rule, and how it correlates with the rows' convolution
sizes and generator settings. The figures in docs/estimators.md ("The cuDNN rule, and what the
CNN residual is") come from it. Synthetic rows only; the 12 real-world rows are never read.

    tools/xmem_residual.py --index DIR/index.csv [--carma build/carma] [--context 1750]

The replay is carma's own (`carma estimate --trace FILE --json`): reserved_mib is the tensors-only
reserved peak, workspaces_mib what the rule adds. Rows whose tensors-only peak is 1,000 MiB or
less are left out of the statistics: there the context is most of the figure."""
import argparse
import csv
import json
import os
import re
import subprocess
import sys

import numpy as np

MIB = 1 << 20


def fields(filename):
    """The generator parameters in a row's file name (as tools/xmem_synthetic.py reads them)."""
    name = filename.rsplit(".out", 1)[0]
    return {k.strip("_"): v for k, v in re.findall(r"([a-z_]+):([^_]*)", name)}


def conv_sizes(path, batch, hw):
    """Largest input, output and weight bytes over the trace's convolutions, their count, and
    the largest FFT-sized workspace ((N·C_in + C_in·C_out + N·C_out)·(H+2)²·8 B; the synthetic
    convolutions are 3×3, stride 1, padding 1 at one spatial size H)."""
    mi = mo = mw = fft = 0.0
    n = 0
    with open(path) as f:
        for line in f:
            if not line.startswith("c "):
                continue
            a, b, c = (float(x) for x in line.split()[1:4])
            cin, cout = a / (4 * batch * hw * hw), b / (4 * batch * hw * hw)
            mi, mo, mw = max(mi, a), max(mo, b), max(mw, c)
            fft = max(fft, (batch * cin + cin * cout + batch * cout) * (hw + 2) ** 2 * 8)
            n += 1
    return mi / MIB, mo / MIB, mw / MIB, fft / MIB, n


def rows_of(index, carma):
    d = os.path.dirname(index)
    out = []
    for r in csv.DictReader(open(index)):
        if r["family"] != "cnn":
            continue
        f = fields(r["source"].split(":", 1)[1])
        batch, hw = int(f["batch"]), int(f["input_size"])
        path = os.path.join(d, r["trace"])
        e = json.loads(subprocess.run([carma, "estimate", "--trace", path, "--json"],
                                      check=True, capture_output=True, text=True).stdout)
        mi, mo, mw, fft, n = conv_sizes(path, batch, hw)
        out.append(dict(trace=r["trace"], meas=float(r["measured_mib"]), bare=e["reserved_mib"],
                        peak=e["reserved_mib"] + e["workspaces_mib"], alloc=e["allocated_mib"],
                        ctx=e["context_mib"], est=e["mib"], mi=mi, mo=mo, mw=mw, fft=fft, convs=n, batch=batch,
                        hw=hw, chan=mi * MIB / (4 * batch * hw * hw), arch=f["arch"],
                        act=f["act"], bn=f["batchnorm"] == "True", drop=f["dropout"] == "True"))
    return out


def report(title, big, left, feats):
    print("%s: median %.3f, p90 %.3f, largest %.3f (%d rows)"
          % (title, np.median(left), np.percentile(left, 90), left.max(), len(big)))
    for name, v in feats.items():
        print("  correlation with %-28s %+.3f" % (name, np.corrcoef(np.array(v, float), left)[0, 1]))
    for key in ("act", "arch"):
        groups = {}
        for r, x in zip(big, left):
            groups.setdefault(r[key], []).append(x)
        print("  median per %s: %s" % (key, ", ".join(
            "%s %.2f" % (k, np.median(v)) for k, v in sorted(groups.items()))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--index", required=True)
    ap.add_argument("--carma", default="build/carma")
    ap.add_argument("--context", type=float, default=1750.0,
                    help="MiB taken as the context for the left-over memory")
    a = ap.parse_args()
    rows = rows_of(a.index, a.carma)
    big = [r for r in rows if r["bare"] > 1000]
    c = a.context
    left = np.array([(r["meas"] - c - r["bare"]) / r["bare"] for r in big])
    feats = {
        "largest conv input / peak": [r["mi"] / r["bare"] for r in big],
        "largest conv output / peak": [r["mo"] / r["bare"] for r in big],
        "largest conv weight / peak": [r["mw"] / r["bare"] for r in big],
        "largest FFT workspace / peak": [r["fft"] / r["bare"] for r in big],
        "batch size": [r["batch"] for r in big],
        "spatial size": [r["hw"] for r in big],
        "channels at the largest input": [r["chan"] for r in big],
        "convolutions": [r["convs"] for r in big],
        "batch norm": [r["bn"] for r in big],
        "dropout": [r["drop"] for r in big],
        "replay reserved / allocated": [r["bare"] / r["alloc"] for r in big],
    }
    report("left over after context %.0f MiB + tensors-only peak, / that peak" % c, big, left,
           feats)
    frag = np.array(feats["replay reserved / allocated"])
    left_alloc = np.array([(r["meas"] - c - r["bare"]) / r["alloc"] for r in big])
    print("  (against the allocated peak: correlation with reserved / allocated %+.3f)"
          % np.corrcoef(frag, left_alloc)[0, 1])
    left = np.array([(r["meas"] - c - r["peak"]) / r["peak"] for r in big])
    report("left over after context %.0f MiB + peak with the workspace rule, / that peak" % c,
           big, left, feats)
    ratio = np.array([r["meas"] / (r["ctx"] + r["peak"]) for r in rows])
    logs = np.log([r["meas"] / (r["ctx"] + r["peak"]) for r in big])
    print("measured / (fitted context + peak with workspaces), all %d rows: median %.3f, p90 %.3f,"
          " largest %.3f; s.d. of its log over the rows above: %.3f"
          % (len(rows), np.median(ratio), np.percentile(ratio, 90), ratio.max(), np.std(logs)))
    need = sorted([((r["meas"] - r["ctx"]) / r["peak"] - 1, r) for r in rows if r["peak"] > 0],
                  key=lambda x: x[0])[-3:]
    print("margins the tightest rows need on top of the fitted context: " + "; ".join(
        "%s %.3f (peak %.0f MiB, measured %.0f, largest conv input %.0f MiB, %s %s)"
        % (r["trace"], m, r["peak"], r["meas"], r["mi"], r["arch"], r["act"])
        for m, r in reversed(need)))
    err = np.array([r["est"] / r["meas"] - 1 for r in rows])
    print("the estimate (margin in), all rows: median |error| %.4f, mean %.4f, %d under, largest"
          " over-estimate %.2fx" % (np.median(np.abs(err)), np.mean(np.abs(err)),
                                   (err < 0).sum(), 1 + err.max()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
