#!/usr/bin/env python3
"""Summarise scripts/fedgsp-lodo.sh's JSON lines: per dataset and split,
FedGSP (federated selection, leave-one-dataset-out grid) against the best
of local/fedavg/fedprox/fedper, mean ± sd over the seeds that ran, in
points of test score at each client's best validation round, with the
seeds of each cell and the presets the selection chose.

Usage: scripts/fedgsp-lodo-table.py [/tmp/fedgsp-lodo/runs.jsonl]
"""
import json
import statistics
import sys
from collections import defaultdict

# The README's FedGSP figures at the random split (seeds 1-3, tuned presets).
README = {"minesweeper": 85.3, "tolokers": 70.2, "chameleon": 63.4, "actor": 30.2, "cora": 82.5}
BASELINES = ("local", "fedavg", "fedprox", "fedper")


def fmt(xs):
    if not xs:
        return "-"
    m = statistics.mean(xs)
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return f"{m:.1f} ± {sd:.1f} (n={len(xs)})"


def main(path):
    cells = defaultdict(dict)  # (ds, split, algo) -> seed -> score
    chosen = defaultdict(dict)
    for line in open(path):
        r = json.loads(line)
        ds, split, seed, algo = r["cell"].split("|")
        if r["test_at_best_val"] is None:
            continue
        cells[(ds, split, algo)][seed] = 100 * r["test_at_best_val"]
        if algo == "fedgsp":
            chosen[(ds, split)][seed] = r.get("fedgsp_preset")
    keys = sorted({(d, s) for d, s, _ in cells})
    print("| dataset | split | FedGSP select (seeds: preset) | best baseline | Δ vs baseline (common seeds) | README FedGSP | Δ vs README |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for ds, split in keys:
        g = cells.get((ds, split, "fedgsp"), {})
        best, bname = None, "-"
        for b in BASELINES:
            xs = cells.get((ds, split, b), {})
            if xs and (best is None or statistics.mean(xs.values()) > statistics.mean(best.values())):
                best, bname = xs, b
        common = sorted(set(g) & set(best or {}))
        delta = "-"
        if common:
            delta = f"{statistics.mean(g[s] - best[s] for s in common):+.1f} (seeds {','.join(common)})"
        picks = ", ".join(f"s{s}: {chosen[(ds, split)][s]}" for s in sorted(chosen[(ds, split)]))
        rd = README.get(ds) if split.startswith("random") else None
        dr = f"{statistics.mean(g.values()) - rd:+.1f}" if rd is not None and g else "-"
        print(f"| {ds} | {split} | {fmt(list(g.values()))} [{picks}] | {bname} {fmt(list((best or {}).values()))} | {delta} | {rd if rd is not None else '-'} | {dr} |")
    print()
    print("every cell (points):")
    for (ds, split, algo), xs in sorted(cells.items()):
        print(f"  {ds:12s} {split:20s} {algo:8s} " + "  ".join(f"s{s}={v:.2f}" for s, v in sorted(xs.items())))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/fedgsp-lodo/runs.jsonl")
