#!/usr/bin/env python3
"""fit_sim_models.py — fits the simulator's interference and power models to the AEGIS A100
measurements in data/aegis/ and prints the fit and the config lines (data/carma.conf keys).

Reproducible offline step (standard library only; deterministic).

Interference (keys sim_interference_*). Each task i sharing a GPU runs at
    speed_i = 1 / (1 + sum over its co-runners j of p_j),
    p_j = smact_k * max(0, SMACT_j - smact_knee) + drama_k * DRAMA_j,
with SMACT_j, DRAMA_j the co-runner's measured solo means (data/aegis/workload_summary.csv;
full run, else the first 200 s). It is fitted on data/aegis/pairwise_a100.csv (219 pairs of two
jobs started together on one A100): a pair is replayed as the simulator runs it (both at their
shared speeds until the first one ends, then the other alone), and the squared log error of the
two predicted pair times is minimised (Nelder-Mead). A fifth of the pairs (seeded shuffle) is
held back and only scored.

Power (keys sim_power_*): a GPU holding tasks draws max_w * (busy_frac + util_frac * U), U its
nvidia-smi utilization, an idle one its model's idle_w. Least squares of the active-sample mean
power against the active-sample mean utilization of the 12 philly and saturn runs
(data/aegis/dcgmi_energy_summary.csv); the idle power is what those runs drew while idle.

Usage: tools/fit_sim_models.py [REPO_DIR]
"""
import csv
import math
import os
import random
import sys

A100_MAX_W = 400.0  # board power of the A100 SXM4 (the built-in A100-40GB model's max_w)
HOLDOUT_SEED = 42


def load(repo):
    d = os.path.join(repo, "data", "aegis")
    prof = {r["workload_id"]: r for r in csv.DictReader(open(os.path.join(d, "workload_summary.csv")))}
    pairs = list(csv.DictReader(open(os.path.join(d, "pairwise_a100.csv"))))
    energy = list(csv.DictReader(open(os.path.join(d, "dcgmi_energy_summary.csv"))))
    return prof, pairs, energy


def activity(prof, wid):
    if wid not in prof and wid.endswith("_10e_1gpu"):  # unet_voc_1gpu_10e_1gpu: a 10-epoch unet_voc_1gpu
        wid = wid[: -len("_10e_1gpu")]
    r = prof[wid]
    suffix = "_full" if r["smact_mean_full"] else "_200s"
    return float(r["smact_mean" + suffix]), float(r["drama_mean" + suffix])


def pressure(c, act):
    return c[0] * max(0.0, act[0] - c[1]) + c[2] * act[1]


def replay(c, a, b, ta, tb):
    """Predicted pair times of two jobs started together (solo times ta, tb)."""
    sa, sb = 1 / (1 + pressure(c, b)), 1 / (1 + pressure(c, a))
    ea, eb = ta / sa, tb / sb
    if ea <= eb:
        return ea, ea + (tb - ea * sb)
    return eb + (ta - eb * sa), eb


def loss(c, rows):
    if c[0] < 0 or c[2] < 0:
        return 1e9
    s = 0.0
    for a, b, ta, tb, pa, pb in rows:
        qa, qb = replay(c, a, b, ta, tb)
        s += math.log(qa / pa) ** 2 + math.log(qb / pb) ** 2
    return s


def score(c, rows):
    """R^2 and mean absolute error of the slowdown (pair time / solo time) of every job."""
    ys, ps = [], []
    for a, b, ta, tb, pa, pb in rows:
        qa, qb = replay(c, a, b, ta, tb)
        ys += [pa / ta, pb / tb]
        ps += [qa / ta, qb / tb]
    m = sum(ys) / len(ys)
    ss = sum((y - m) ** 2 for y in ys)
    se = sum((y - p) ** 2 for y, p in zip(ys, ps))
    return 1 - se / ss, sum(abs(y - p) for y, p in zip(ys, ps)) / len(ys), len(ys)


def nelder_mead(f, x0, step=0.2, iters=6000):
    n = len(x0)
    pts = [list(x0)] + [[x0[k] + (step if k == i else 0) for k in range(n)] for i in range(n)]
    vals = [f(p) for p in pts]
    for _ in range(iters):
        order = sorted(range(n + 1), key=lambda i: vals[i])
        pts, vals = [pts[i] for i in order], [vals[i] for i in order]
        cen = [sum(p[k] for p in pts[:-1]) / n for k in range(n)]
        xr = [cen[k] + (cen[k] - pts[-1][k]) for k in range(n)]
        fr = f(xr)
        if fr < vals[0]:
            xe = [cen[k] + 2 * (cen[k] - pts[-1][k]) for k in range(n)]
            fe = f(xe)
            pts[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = xr, fr
        else:
            xc = [cen[k] + 0.5 * (pts[-1][k] - cen[k]) for k in range(n)]
            fc = f(xc)
            if fc < vals[-1]:
                pts[-1], vals[-1] = xc, fc
            else:
                for i in range(1, n + 1):
                    pts[i] = [pts[0][k] + 0.5 * (pts[i][k] - pts[0][k]) for k in range(n)]
                    vals[i] = f(pts[i])
    return pts[0]


def fit_interference(prof, pairs):
    rows = [(activity(prof, p["workload_a"]), activity(prof, p["workload_b"]),
             float(p["solo_time_a_s"]), float(p["solo_time_b_s"]),
             float(p["pair_time_a_s"]), float(p["pair_time_b_s"])) for p in pairs]
    idx = list(range(len(rows)))
    random.Random(HOLDOUT_SEED).shuffle(idx)
    nheld = len(rows) // 5
    held = [rows[i] for i in idx[:nheld]]
    train = [rows[i] for i in idx[nheld:]]
    c = nelder_mead(lambda c: loss(c, train), [1.0, 0.4, 0.1])
    print(f"interference: fitted on {len(train)} pairs, {nheld} held back (seed {HOLDOUT_SEED})")
    print(f"  p_j = {c[0]:.4f} * max(0, SMACT_j - {c[1]:.4f}) + {c[2]:.4f} * DRAMA_j")
    for name, rs in (("fit", train), ("held-back fifth", held), ("all pairs", rows)):
        r2, mae, n = score(c, rs)
        print(f"  {name:16s} R^2 of the slowdown = {r2:.3f}, mean abs error = {mae:.3f} ({n} jobs)")
    return c


def fit_power(energy):
    runs = [r for r in energy if r["trace"] in ("philly", "saturn")]
    xs = [float(r["gpu_utilization_active_mean_pct"]) / 100 for r in runs]
    ys = [float(r["power_active_mean_w"]) for r in runs]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    a = my - b * mx
    r2 = 1 - sum((y - a - b * x) ** 2 for x, y in zip(xs, ys)) / sum((y - my) ** 2 for y in ys)
    idle = []
    for r in runs:
        f = float(r["active_row_fraction"])
        idle.append((float(r["power_trace_mean_w"]) - f * float(r["power_active_mean_w"])) / (1 - f))
    idle_w = sum(idle) / len(idle)
    print(f"power: {n} runs (philly, saturn): active P = {a:.1f} W + {b:.1f} W * util, R^2 = {r2:.3f};"
          f" idle {idle_w:.1f} W (mean of the runs' idle samples)")
    return a / A100_MAX_W, b / A100_MAX_W, idle_w


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))
    prof, pairs, energy = load(repo)
    c = fit_interference(prof, pairs)
    busy, util, idle_w = fit_power(energy)
    print("\n# config lines (data/carma.conf)")
    print(f"sim_interference_smact_k = {c[0]:.4f}")
    print(f"sim_interference_smact_knee = {c[1]:.4f}")
    print(f"sim_interference_drama_k = {c[2]:.4f}")
    print(f"sim_power_busy_frac = {busy:.4f}")
    print(f"sim_power_util_frac = {util:.4f}")
    print(f"# A100-40GB idle_w = {idle_w:.0f}")


if __name__ == "__main__":
    main()
