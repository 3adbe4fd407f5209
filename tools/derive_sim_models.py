#!/usr/bin/env python3
"""derive_sim_models.py — derives the simulator's activity and interference models from data/.

Reproducible offline step (standard library only). It
  1. fits SMACT = a * GPUTL + b and SMOCC = c * SMACT + d on the GPUMemNet MLP dataset
     (data/interference/gpumemnet_mlp_step1.csv, columns `Avg GPUTL` (%) and `Avg SMACT`,
     `Avg SMOCC` (fractions)), because the catalog has no measured SM activity and Lucid's solo
     profiles give nvidia-smi GPU utilization only;
  2. converts Lucid's solo profiles (data/interference/lucid_solo_profiles.csv) to SMACT/SMOCC
     with those fits (DRAMA = Lucid's memory-controller utilization / 100);
  3. fits the hinge  speed = a - k * max(0, U - T)  to every job of every Lucid pair
     (data/interference/lucid_pairs.csv), U = the summed solo SMACT of the two jobs, and reports
     R^2 (also in nvidia-smi utilization points, to compare with reference/literature.md 5.2);
  4. with --write, fills the columns solo_smact, solo_smocc, solo_drama, activity_source of
     data/workloads.csv (each catalog model -> same Lucid family, nearest batch; MODEL_MAP below).

Usage: tools/derive_sim_models.py [--write] [DATA_DIR]
"""
import csv
import os
import sys

# catalog model_name -> (Lucid model, Lucid dataset, why)
MODEL_MAP = {
    "resnet18": ("ResNet18", "CIFAR-10", "same family"),
    "resnet34": ("ResNet18", "CIFAR-10", "same family (ResNet, CIFAR; no ResNet34 profile)"),
    "S_mobilenetv3": ("MobileNetV3", "ImageNet", "same family"),
    "mobilenet_v2": ("MobileNetV2", "CIFAR-10", "same family"),
    "efficientnet_b0_cifar": ("EfficientNet", "CIFAR-10", "same family"),
    "efficientnet_b0": ("EfficientNet", "CIFAR-10", "same family (only CIFAR profiled)"),
    "resnet50": ("ResNet50", "ImageNet", "same family"),
    "vgg16": ("VGG", "CIFAR-10", "same family (only CIFAR profiled)"),
    "inception": ("ResNet50", "ImageNet", "no family: nearest ImageNet CNN"),
    "Xception": ("ResNet50", "ImageNet", "no family: nearest ImageNet CNN"),
    "UNet": ("ResNet50", "ImageNet", "no family: ResNet encoder CNN"),
    "MaskRCNN": ("ResNet50", "ImageNet", "no family: ResNet-50 backbone"),
    "DLRM": ("NeuMF", "MovieLens", "no family: nearest recommender"),
    "BERT_base": ("BERT", "SQuAD", "same family"),
    "BERT_large": ("BERT", "SQuAD", "same family"),
    "xlnet_base": ("BERT", "SQuAD", "no family: nearest transformer LM"),
    "xlnet_large": ("BERT", "SQuAD", "no family: nearest transformer LM"),
    "gpt2_large": ("BERT", "SQuAD", "no family: nearest transformer LM"),
    "gpt2_xl": ("BERT", "SQuAD", "no family: nearest transformer LM"),
    "mnist_cnn": ("ResNet18", "CIFAR-10", "no family: small CNN on small images"),
}


def linfit(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    a = sxy / sxx
    b = my - a * mx
    return a, b, r2(ys, [a * x + b for x in xs])


def r2(ys, pred):
    my = sum(ys) / len(ys)
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - p) ** 2 for y, p in zip(ys, pred))
    return 1.0 - ss_res / ss_tot


def hinge_fit(us, ys, lo, hi, step):
    """Least squares of y = a - k * max(0, u - T) over a grid of knees T."""
    best = None
    t = lo
    while t <= hi + 1e-9:
        hs = [max(0.0, u - t) for u in us]
        if any(h > 0 for h in hs):
            slope, icpt, _ = linfit(hs, ys)
            res = sum((y - (icpt + slope * h)) ** 2 for y, h in zip(ys, hs))
            if best is None or res < best[0]:
                best = (res, icpt, -slope, t)
        t += step
    _, a, k, t = best
    return a, k, t, r2(ys, [a - k * max(0.0, u - t) for u in us])


def clamp01(x):
    return min(1.0, max(0.0, x))


def main():
    args = [a for a in sys.argv[1:] if a != "--write"]
    write = "--write" in sys.argv[1:]
    data = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "data")
    idir = os.path.join(data, "interference")

    mlp = list(csv.DictReader(open(os.path.join(idir, "gpumemnet_mlp_step1.csv"))))
    gputl = [float(r["Avg GPUTL"]) for r in mlp]
    smact = [float(r["Avg SMACT"]) for r in mlp]
    smocc = [float(r["Avg SMOCC"]) for r in mlp]
    sa, sb, sr2 = linfit(gputl, smact)
    oa, ob, or2 = linfit(smact, smocc)
    print(f"SMACT = {sa:.5f} * GPUTL(%) + {sb:.4f}   R^2 = {sr2:.3f}  (n = {len(mlp)}, GPUMemNet MLP)")
    print(f"SMOCC = {oa:.4f} * SMACT + {ob:.4f}     R^2 = {or2:.3f}")

    def to_smact(util):
        return clamp01(sa * util + sb)

    def to_smocc(sm):
        return clamp01(oa * sm + ob)

    solo = {}
    for r in csv.DictReader(open(os.path.join(idir, "lucid_solo_profiles.csv"))):
        key = (r["model"], r["dataset"], int(r["batchsize"]), int(r["amp"]))
        solo[key] = r

    us_smact, us_util, speeds = [], [], []
    for r in csv.DictReader(open(os.path.join(idir, "lucid_pairs.csv"))):
        k1 = (r["model1"], r["dataset1"], int(r["batchsize1"]), int(r["amp1"]))
        k2 = (r["model2"], r["dataset2"], int(r["batchsize2"]), int(r["amp2"]))
        if k1 not in solo or k2 not in solo:
            continue
        u1, u2 = float(solo[k1]["gpu_util"]), float(solo[k2]["gpu_util"])
        for sp in (float(r["speed1"]), float(r["speed2"])):
            us_util.append(u1 + u2)
            us_smact.append(to_smact(u1) + to_smact(u2))
            speeds.append(sp)
    a, k, t, hr2 = hinge_fit(us_util, speeds, 0, 200, 1)
    print(f"hinge in GPU util points: speed = {a:.4f} - {k:.5f} * max(0, U - {t:.0f})   "
          f"R^2 = {hr2:.3f}  (n = {len(speeds)} job-observations)")
    a, k, t, hr2 = hinge_fit(us_smact, speeds, 0.0, 2.0, 0.01)
    print(f"hinge in summed solo SMACT: speed = {a:.4f} - {k:.4f} * max(0, U - {t:.2f})   "
          f"R^2 = {hr2:.3f}")
    print(f"config: sim_interference_a = {a:.4f}, sim_interference_k = {k:.4f}, "
          f"sim_interference_knee = {t:.2f}, floor = min observed speed {min(speeds):.2f}")

    wpath = os.path.join(data, "workloads.csv")
    rows = list(csv.DictReader(open(wpath)))
    fields = list(rows[0].keys())
    for col in ("solo_smact", "solo_smocc", "solo_drama", "activity_source"):
        if col not in fields:
            fields.append(col)
    for row in rows:
        lm, ld, why = MODEL_MAP[row["model_name"]]
        batch = int(row["batch_size_effective"] or row["batch_size_line6"])
        cands = [v for key, v in solo.items() if key[0] == lm and key[1] == ld and key[3] == 0]
        best = min(cands, key=lambda v: (abs(int(v["batchsize"]) - batch), int(v["batchsize"])))
        util = float(best["gpu_util"])
        sm = to_smact(util)
        row["solo_smact"] = f"{sm:.3f}"
        row["solo_smocc"] = f"{to_smocc(sm):.3f}"
        row["solo_drama"] = f"{clamp01(float(best['gmem_util']) / 100):.3f}"
        row["activity_source"] = (f"Lucid {lm}/{ld} bs{best['batchsize']} fp32 util "
                                  f"{util:.1f}% ({why})")
        print(f"{row['rad_file']:34s} {row['solo_smact']} {row['solo_smocc']} "
              f"{row['solo_drama']}  {row['activity_source']}")
    if write:
        tmp = wpath + ".tmp"
        with open(tmp, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        os.replace(tmp, wpath)
        print(f"wrote {wpath}")


if __name__ == "__main__":
    main()
