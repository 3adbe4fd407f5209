#!/usr/bin/python3
"""sim_bound.py — a lower bound on the makespan any policy can reach on a trace in carma's
simulator: a time-indexed fluid linear program over the simulator's own models.

A schedule is relaxed to GPU-time spent in "configurations" (sets of at most K tasks sharing a
GPU whose memory fits), in which each task advances at the simulator's speed 1 / (1 + sum of its
co-runners' pressure). Relaxed, and so a bound: tasks may move between GPUs and configurations
at any moment, a multi-GPU task counts as one task per GPU (each at its own GPU's pace instead
of the slowest one's), CPU start-up costs nothing, arrivals are rounded down to a grid of
--step hours, and a set of tasks is charged its early (smaller) memory. What is kept: the GPU
count, each task's solo work, a task running at most at speed 1 (so never done before its
arrival plus its solo time), memory per GPU (--memory-mib less --reserve-mib against the sum
of figure + --margin-mib of tasks sharing; a task alone always fits) and the interference
model. Any schedule the simulator can produce with at most K tasks per GPU is a point of this
program, so no policy with that cap does better.

    carma simulate --config data/aegis.conf --trace data/traces/aegis_venus_60.csv \\
        --policy carma --out /tmp/venus
    tools/sim_bound.py /tmp/venus/tasks.csv --gpus 3 --per-gpu 3

Needs python3-scipy (HiGHS). Reads the task list, solo runtimes and GPU counts from the
simulator's tasks.csv and each workload's profile from the catalog (data/workloads.csv).
"""
import argparse
import csv
import itertools
import math
import sys
from collections import defaultdict

try:
    import numpy as np
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix
except ImportError:
    sys.exit("sim_bound.py: needs python3-scipy (apt-get install python3-scipy)")


def pressure(a, smact, drama):
    return a.smact_k * max(0.0, smact - a.smact_knee) + a.drama_k * drama


def task_types(a):
    """(workload, arrival slot) -> n (GPU slots), work (solo GPU-seconds), solo, P, M."""
    cat = {r["rad_file"]: r for r in csv.DictReader(open(a.catalog, newline=""))}
    step = a.step * 3600
    types = {}
    for r in csv.DictReader(open(a.tasks, newline="")):
        w = cat.get(r["task_file"])
        if w is None:
            sys.exit("sim_bound.py: %s: '%s' is not in %s" % (a.tasks, r["task_file"], a.catalog))
        if not r["runtime_est_s"]:  # sim_history = on: the first run of a task knew none
            sys.exit("sim_bound.py: %s: seq %s has no runtime_est_s; write tasks.csv with "
                     "sim_history = off (the catalog's solo runtimes)" % (a.tasks, r["seq"]))
        g = int(r["gpus_requested"])
        startup = float(w["startup_s"]) if w["startup_s"] else a.startup_s
        solo = max(0.0, float(r["runtime_est_s"]) - startup)
        d = types.setdefault((r["task_file"], math.floor(float(r["submit_s"]) / step)),
                             {"n": 0, "work": 0.0})
        d["n"] += g
        d["work"] += g * solo
        d["solo"] = max(d.get("solo", 0.0), solo)
        d["P"] = pressure(a, float(w["solo_smact"]), float(w["solo_drama"]))
        peaks = [float(w[k]) for k in ("peak_early_mib", "peak_full_mib") if w[k]]
        d["M"] = min(peaks or [float(w["measured_mem_mb_line9"])]) + a.margin_mib
    return types, step


def configurations(types, slot, k_max, usable):
    """Every multiset of at most k_max tasks present by `slot` whose memory fits."""
    here = [t for t in types if t[1] <= slot]
    for k in range(1, k_max + 1):
        for S in itertools.combinations_with_replacement(here, k):
            if any(S.count(t) > types[t]["n"] for t in set(S)):
                continue
            if k > 1 and sum(types[t]["M"] for t in S) > usable:
                continue
            total = sum(types[t]["P"] for t in S)
            rate = defaultdict(float)
            for t in S:
                rate[t] += 1.0 / (1.0 + total - types[t]["P"])
            yield rate


def bound(a):
    types, step = task_types(a)
    names = list(types)
    last = max(t[1] for t in names) + 1  # slots 0..last-1 are `step` long; slot `last` is open
    usable = a.memory_mib - a.reserve_mib
    rows, cols, vals, b = [], [], [], []
    nrow = 0
    work_row = {t: i for i, t in enumerate(names)}  # -(work done) <= -work
    b += [-types[t]["work"] for t in names]
    nrow += len(names)
    cap_row = {}  # GPU-time used in a slot <= gpus * its length
    speed_row = {}  # a type's work in a slot <= its slots * the length (speed <= 1)
    for s in range(last + 1):
        cap_row[s] = nrow
        nrow += 1
        for t in names:
            speed_row[t, s] = nrow
            nrow += 1
    ncol = 0
    for s in range(last + 1):
        for rate in configurations(types, s, a.per_gpu, usable):
            rows.append(cap_row[s]), cols.append(ncol), vals.append(1.0)
            for t, v in rate.items():
                rows += [work_row[t], speed_row[t, s]]
                cols += [ncol, ncol]
                vals += [-v, v]
            ncol += 1
    T = ncol  # the makespan, the last column
    bvec = np.zeros(nrow)
    bvec[: len(names)] = b
    for s in range(last + 1):
        if s < last:
            bvec[cap_row[s]] = a.gpus * step
        else:  # the open slot runs from last * step to T
            rows.append(cap_row[s]), cols.append(T), vals.append(-a.gpus)
            bvec[cap_row[s]] = -a.gpus * last * step
        for t in names:
            n = types[t]["n"]
            if s < last:
                bvec[speed_row[t, s]] = n * step
            else:
                rows.append(speed_row[t, s]), cols.append(T), vals.append(-n)
                bvec[speed_row[t, s]] = -n * last * step
    A = coo_matrix((vals, (rows, cols)), shape=(nrow, T + 1)).tocsr()
    c = np.zeros(T + 1)
    c[T] = 1.0
    floor = max([last * step] + [t[1] * step + types[t]["solo"] for t in names])
    res = linprog(c, A_ub=A, b_ub=bvec, bounds=[(0, None)] * T + [(floor, None)],
                  method="highs")
    if res.status != 0:
        sys.exit("sim_bound.py: the program was not solved: %s" % res.message)
    return res.fun, T, sum(types[t]["work"] for t in names)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("tasks", help="tasks.csv written by `carma simulate --out DIR`")
    p.add_argument("--catalog", default="data/workloads.csv")
    p.add_argument("--gpus", type=int, default=3)
    p.add_argument("--memory-mib", type=float, default=40960, help="each GPU's memory")
    p.add_argument("--reserve-mib", type=float, default=512)
    p.add_argument("--margin-mib", type=float, default=512)
    p.add_argument("--per-gpu", type=int, default=3, help="at most K tasks share a GPU")
    p.add_argument("--step", type=float, default=0.25, help="arrival grid, hours")
    p.add_argument("--startup-s", type=float, default=30)
    p.add_argument("--smact-k", type=float, default=16.7848)
    p.add_argument("--smact-knee", type=float, default=0.7673)
    p.add_argument("--drama-k", type=float, default=0.6107)
    p.add_argument("--makespan-s", type=float, help="a policy's makespan, to compare")
    a = p.parse_args()
    lb, ncfg, work = bound(a)
    print("fluid bound on makespan: %.0f s (%.3f h); %d configurations of at most %d tasks per "
          "GPU, %.2f GPU-h of solo work" % (lb, lb / 3600, ncfg, a.per_gpu, work / 3600))
    if a.makespan_s:
        print("given makespan: %.0f s = %.3f x the bound" % (a.makespan_s, a.makespan_s / lb))


if __name__ == "__main__":
    main()
