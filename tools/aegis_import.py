#!/usr/bin/env python3
"""aegis_import.py — builds the simulator's measured workload catalog and traces from the AEGIS
A100 measurements copied into data/aegis/ (see data/aegis/README.md).

Reproducible offline step (standard library only). It
  1. gives every CARMA .rad row of data/workloads.csv the measured A100 figures of the same
     workload (CARMA_TO_AEGIS below): solo wall time, CPU start-up, early (first 200 s) and
     full-run memory peak, SMACT/SMOCC/DRAMA means, nvidia-smi utilization, Lucid class;
  2. appends (or refreshes) one catalog row per AEGIS workload, keyed by its workload id, with
     the figures AEGIS placed with (YAML requirement as the oracle figure, Horus, FakeTensor and
     GPUMemNet estimates);
  3. writes data/traces/aegis_{philly,saturn,venus}_60.csv in carma's trace format.

Usage: tools/aegis_import.py [REPO_DIR]     (default: the repository this script is in)
"""
import csv
import os
import re
import sys

# CARMA .rad file -> AEGIS workload id. AEGIS's workload specs were written from CARMA's task
# files: every oracle figure (.rad line 9) equals the AEGIS YAML requirement except
# gpt2_xl.rad, which has no line 9. mnist_train.rad runs batch 64 where the AEGIS id says
# bs32: its YAML requirement is the .rad's 1776 MiB, so it is the same task.
def carma_to_aegis(rad):
    stem = rad[:-4]
    bs = {1: 32, 2: 64, 3: 128}
    m = re.fullmatch(r"(efficientNet|mobilenet|resnet18|resnet34)_cifar100_(20|50)e_([123])", stem)
    if m:
        fam = {"efficientNet": "efficientnet", "mobilenet": "mobilenet"}.get(m[1], m[1])
        return f"{fam}_cifar100_bs{bs[int(m[3])]}_{m[2]}e_1gpu"
    m = re.fullmatch(r"(Inception|Xception|efficientNet|mobilenet|resnet|vgg)([23]?)", stem)
    if m:
        fam = {"Inception": "inception", "Xception": "xception", "efficientNet": "efficientnet",
               "resnet": "resnet50", "vgg": "vgg16"}.get(m[1], m[1])
        return f"{fam}_imagenet_bs{bs[int(m[2] or 1)]}_1gpu"
    fixed = {
        "BERT_base": "bert_base_wiki_bs32_1gpu", "BERT_large": "bert_large_wiki_bs8_1gpu",
        "UNet": "unet_voc_1gpu", "dlrm": "dlrm_criteo_bs32768_1gpu",
        "gpt2_large_2": "gpt2_large_wiki_bs8_2gpu", "gpt2_xl": "gpt2_xl_wiki_bs2_1gpu",
        "maskrcnn": "maskrcnn_coco_bs8_1gpu", "mnist_train": "mnist_bs32_1gpu",
        "xlnet_base_cased_2": "xlnet_base_cased_wiki_bs8_2gpu",
        "xlnet_large_cased_2": "xlnet_large_cased_wiki_bs4_2gpu",
    }
    return fixed.get(stem)


NEW_COLUMNS = ["aegis_workload", "startup_s", "peak_early_mib", "peak_full_mib",
               "profiled_util", "lucid_class"]


def num(s):
    return float(s) if s not in ("", None) else None


def fmt(x, digits=4):
    if x is None:
        return ""
    if float(x).is_integer():
        return str(int(x))
    return f"{x:.{digits}f}".rstrip("0").rstrip(".")


def measured(p):
    """The simulator's figures of one AEGIS workload, with where each came from."""
    e2e, loop = num(p["solo_e2e_s"]), num(p["solo_training_loop_s"])
    early, full = num(p["peak_mem_200s_mib"]), num(p["peak_mem_full_mib"])
    window = "full run" if p["smact_mean_full"] else "first 200 s"
    suffix = "_full" if p["smact_mean_full"] else "_200s"
    util = num(p["gputl_mean_full_pct"] if p["smact_mean_full"] else p["gputl_mean_200s_pct"])
    return {
        "runtime_min": e2e / 60,
        "startup_s": e2e - loop if loop is not None else None,
        "peak_early_mib": early,
        "peak_full_mib": full if full is not None else early,
        "smact": num(p["smact_mean" + suffix]),
        "smocc": num(p["smocc_mean" + suffix]),
        "drama": num(p["drama_mean" + suffix]),
        "util": util / 100 if util is not None else None,
        "lucid_class": p["lucid_final_ss"],
        "source": f"AEGIS A100 solo profile of {p['workload_id']} ({window} means; "
                  f"util = nvidia-smi GPU utilization)",
    }


def size_class(wid):
    if "cifar" in wid or wid.startswith("mnist"):
        return "light"
    if any(k in wid for k in ("bert", "gpt2", "xlnet", "maskrcnn", "llama")):
        return "heavy"
    return "medium"


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))
    data = os.path.join(repo, "data")
    prof = {r["workload_id"]: r for r in
            csv.DictReader(open(os.path.join(data, "aegis", "workload_summary.csv")))}
    path = os.path.join(data, "workloads.csv")
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        cols = list(reader.fieldnames)
        rows = [r for r in reader if r["rad_file"] not in prof]  # drop earlier AEGIS rows
    for c in NEW_COLUMNS:
        if c not in cols:
            cols.append(c)

    mapped = set()
    for r in rows:
        wid = carma_to_aegis(r["rad_file"])
        if not wid:
            sys.exit(f"{r['rad_file']}: no AEGIS workload")
        m = measured(prof[wid])
        mapped.add(wid)
        r["aegis_workload"] = wid
        r["exclusive_runtime_min"] = fmt(m["runtime_min"])
        r["startup_s"] = fmt(m["startup_s"], 2)
        r["peak_early_mib"] = fmt(m["peak_early_mib"])
        r["peak_full_mib"] = fmt(m["peak_full_mib"])
        r["solo_smact"], r["solo_smocc"], r["solo_drama"] = (fmt(m[k]) for k in
                                                             ("smact", "smocc", "drama"))
        r["profiled_util"] = fmt(m["util"])
        r["lucid_class"] = m["lucid_class"]
        r["activity_source"] = m["source"]

    for wid, p in prof.items():
        m = measured(p)
        base = re.match(r"([a-z0-9]+(?:_(?:base|large|xl|width))?)", wid)[1]
        bs = re.search(r"_bs(\d+)", wid)
        ep = re.search(r"_(\d+)e_", wid)
        oracle = num(p["yaml_gpu_memory_requirement_mib"]) or m["peak_early_mib"]
        r = {c: "" for c in cols}
        r.update({
            "rad_file": wid, "model_name": base, "size_class": size_class(wid),
            "batch_size_effective": bs[1] if bs else "", "epochs": ep[1] if ep else "",
            "gpus_line8": p["ngpus"], "measured_mem_mb_line9": fmt(oracle),
            "horus_est_mb_line10": fmt(num(p["horus_mib"])),
            "faketensor_est_mb_line11": fmt(num(p["faketensor_mib"])),
            "gpumemnet_est_mb_line12": fmt(num(p["gpumemnet_mib"])),
            "exclusive_runtime_min": fmt(m["runtime_min"]),
            "aegis_workload": wid, "startup_s": fmt(m["startup_s"], 2),
            "peak_early_mib": fmt(m["peak_early_mib"]), "peak_full_mib": fmt(m["peak_full_mib"]),
            "solo_smact": fmt(m["smact"]), "solo_smocc": fmt(m["smocc"]),
            "solo_drama": fmt(m["drama"]), "profiled_util": fmt(m["util"]),
            "lucid_class": m["lucid_class"], "activity_source": m["source"],
            "notes": "AEGIS workload (data/aegis/workload_summary.csv); oracle figure = its YAML "
                     "requirement" + ("" if p["yaml_gpu_memory_requirement_mib"] else
                                      " (none: the first-200 s peak)"),
        })
        rows.append(r)

    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, path)
    print(f"{path}: {len(rows)} rows ({len(mapped)} CARMA rows mapped, {len(prof)} AEGIS rows)")

    for name in ("philly", "saturn", "venus"):
        src = os.path.join(data, "aegis", "traces", f"{name}_seed42_60jobs.csv")
        dst = os.path.join(data, "traces", f"aegis_{name}_60.csv")
        with open(src, newline="") as f, open(dst, "w", newline="") as g:
            g.write("seq,submit_offset_s,task_file\n")
            n = 0
            for t in csv.DictReader(f):
                g.write(f"{t['seq']},{t['submit_offset_s']},{t['workload_id']}\n")
                n += 1
        print(f"{dst}: {n} jobs")


if __name__ == "__main__":
    main()
