"""The trace simulator's figures (docs/performance.md, "Trace simulator"): for Gantry,
topology-blind backfill and FIFO on the same input, useful utilization,
mean / p99 queueing delay and JCT, the share of multi-node jobs on the
fewest possible leaf switches and their mean delay, for

  philly    the first 5,000 jobs of the Philly trace
            (../shared/data/traces/philly/pollux_philly.csv) on 64 nodes of
            8 GPUs, 8 nodes per leaf, 4 leaves per spine
  gangs     the Philly window with its largest gangs (64 and 128 GPUs: 8-16
            nodes), 12.7 days from 8,200,000 s after its first submit, on 24
            nodes, 4 per leaf, 3 leaves per spine: the closest to LLM-scale
            gangs of the job-level data stored here
  packing   a light, packing-heavy case: 6 hours of Philly from 5,702,400 s
            (298 jobs, nearly all of 1 GPU) on 8 nodes, 4 per leaf
  openb     with --openb PATH: the Alibaba 2023 pod trace
            (clusterdata cluster-trace-gpu-v2023/csv/openb_pod_list_default
            .csv: 8,152 pods, 6,203 of them run with GPUs, nearly all of one)
            on 8 nodes, 4 per leaf
  windows   --windows N windows of 3,000 Philly jobs a week apart on 64
            nodes (as philly): the totals over all of them

Pure computation (no daemons); about half a minute on 2 cores.

Run: python3 tests/bench/trace_figures_bench.py --build-dir build
     [--windows 14] [--openb PATH]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_support import PHILLY_TRACE as PHILLY  # noqa: E402
from bench_support import gantry_sim, machine_line  # noqa: E402

FAT_TREE_64 = ["--nodes", "64", "--gpus-per-node", "8", "--nodes-per-leaf",
               "8", "--leaves-per-spine", "4"]
CASES = [
    ("philly", ["--limit", "5000", *FAT_TREE_64]),
    ("gangs", ["--start", "8200000", "--span", "1100000", "--nodes", "24",
               "--gpus-per-node", "8", "--nodes-per-leaf", "4",
               "--leaves-per-spine", "3"]),
    ("packing", ["--start", "5702400", "--span", "21600", "--nodes", "8",
                 "--gpus-per-node", "8", "--nodes-per-leaf", "4",
                 "--leaves-per-spine", "2"]),
]
OPENB_SHAPE = ["--nodes", "8", "--gpus-per-node", "8", "--nodes-per-leaf",
               "4", "--leaves-per-spine", "2"]

parser = argparse.ArgumentParser()
parser.add_argument("--build-dir", required=True)
parser.add_argument("--windows", type=int, default=14)
parser.add_argument("--openb", help="openb_pod_list_default.csv")
args = parser.parse_args()
sim = gantry_sim(args.build_dir, "trace_figures_bench")
if not os.path.exists(PHILLY):
    sys.exit(f"trace_figures_bench: {PHILLY} not found")


def run(trace, extra):
    out = subprocess.run([sim, "--trace", trace, "--json", *extra],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def row(name, p):
    print(f"{name:<9} {p['useful_utilization']:6.3f} "
          f"{p['delay_mean_s']:10.0f} {p['delay_p99_s']:10.0f} "
          f"{p['jct_mean_s']:10.0f} {p['jct_p99_s']:10.0f} "
          f"{p['multi_node_jobs']:6d} {p['fewest_leaves_share']:7.3f} "
          f"{p['multi_delay_mean_s']:11.0f}")


def header(title, report, seconds):
    c = report["cluster"]
    print(f"\n{title}: {report['jobs_in_window']} jobs on {c['nodes']} nodes "
          f"x {c['gpus_per_node']} GPUs, {c['nodes_per_leaf']} per leaf, "
          f"{c['leaves']} leaves ({seconds:.1f} s)")
    print(f"{'POLICY':<9} {'USEFUL':>6} {'DELAY_MEAN':>10} {'DELAY_P99':>10} "
          f"{'JCT_MEAN':>10} {'JCT_P99':>10} {'MULTI':>6} {'FEWEST':>7} "
          f"{'MULTI_DELAY':>11}")


def case(title, trace, extra):
    started = time.monotonic()
    report = run(trace, extra)
    header(title, report, time.monotonic() - started)
    for p in report["policies"]:
        row(p["policy"], p)


def windows(count):
    started = time.monotonic()
    totals = {}
    for k in range(count):
        report = run(PHILLY, ["--start", str(k * 7 * 86400), "--limit",
                              "3000", *FAT_TREE_64])
        for p in report["policies"]:
            totals.setdefault(p["policy"], []).append(p)
    print(f"\nwindows: {count} x 3,000 Philly jobs a week apart, 64 nodes as "
          f"philly ({time.monotonic() - started:.1f} s); means over windows, "
          "multi-node figures over all their multi-node jobs")
    print(f"{'POLICY':<9} {'USEFUL':>6} {'DELAY_MEAN':>10} {'DELAY_P99':>10} "
          f"{'JCT_MEAN':>10} {'JCT_P99':>10} {'MULTI':>6} {'FEWEST':>7} "
          f"{'MULTI_DELAY':>11}")
    for name, runs in totals.items():
        multi = sum(r["multi_node_jobs"] for r in runs)
        mean = {k: statistics.mean(r[k] for r in runs) for k in
                ("useful_utilization", "delay_mean_s", "delay_p99_s",
                 "jct_mean_s", "jct_p99_s")}
        mean["multi_node_jobs"] = multi
        mean["fewest_leaves_share"] = sum(
            r["multi_node_jobs"] * r["fewest_leaves_share"]
            for r in runs) / max(1, multi)
        mean["multi_delay_mean_s"] = sum(
            r["multi_node_jobs"] * r["multi_delay_mean_s"]
            for r in runs) / max(1, multi)
        row(name, mean)


print(machine_line())
for title, extra in CASES:
    case(title, PHILLY, extra)
if args.openb:
    case("openb", args.openb, OPENB_SHAPE)
if args.windows > 0:
    windows(args.windows)
print("\nUSEFUL: work at full speed / (GPUs x busy period); DELAY, JCT in s; "
      "MULTI: multi-node jobs, FEWEST: their share on the fewest possible "
      "leaf switches, MULTI_DELAY: their mean delay.")
