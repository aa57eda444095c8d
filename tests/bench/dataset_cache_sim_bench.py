"""Bytes read from shared storage with and without cache-aware placement,
from the simulator (gantry-sim cache): datasets attached to the jobs of the
Philly trace (../shared/data/traces/philly/pollux_philly.csv), a cache on
every node, and three placements with gantry's queue policy:

  topology        placement ignores the caches
  cache+topology  cache-aware, topology first (the default)
  cache-first     --dataset-locality=cache

Two windows of the trace: its first --jobs jobs on --nodes nodes (almost
all one-node jobs), and the window holding its largest gangs (64 and 128
GPUs, as in trace_figures_bench.py) on 24 nodes, 4 leaves per spine, where
most of the bytes are read by gangs. For each of --seeds dataset draws, and
their mean: bytes the jobs' nodes read, the share served from node caches,
and the switch locality kept (share of multi-node jobs on the fewest
possible leaves, mean leaves). Pure computation (no daemons).

Run: python3 tests/bench/dataset_cache_sim_bench.py --build-dir build
     [--jobs 5000] [--seeds 3] [--cache-gb 4000] [--nodes 64]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_support import machine_line  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TRACE = os.path.join(HERE, "..", "..", "..", "shared", "data", "traces",
                     "philly", "pollux_philly.csv")

parser = argparse.ArgumentParser()
parser.add_argument("--build-dir", required=True)
parser.add_argument("--jobs", type=int, default=5000)
parser.add_argument("--seeds", type=int, default=3)
parser.add_argument("--nodes", type=int, default=64)
parser.add_argument("--cache-gb", type=float, default=4000)
args = parser.parse_args()
sim = os.path.join(args.build_dir, "daemon", "simulator", "gantry-sim")
if not os.path.exists(sim):
    sys.exit(f"dataset_cache_sim_bench: {sim} not found: build gantry-sim")
if not os.path.exists(TRACE):
    sys.exit(f"dataset_cache_sim_bench: {TRACE} not found")

print(machine_line())
CASES = [
    (f"Philly, first {args.jobs} jobs, {args.nodes} nodes x 8 GPUs, 8 "
     f"nodes/leaf, 4 leaves/spine",
     ["--limit", str(args.jobs), "--nodes", str(args.nodes),
      "--leaves-per-spine", "4"]),
    ("Philly, the window of its largest gangs (8,200,000 s + 1,100,000 s), "
     "24 nodes x 8 GPUs, 8 nodes/leaf, 4 leaves/spine",
     ["--start", "8200000", "--span", "1100000", "--nodes", "24",
      "--leaves-per-spine", "4"]),
]
for title, window in CASES:
    print(f"{title}; cache {args.cache_gb:g} GB per node")
    print(f"{'SEED':>4} {'PLACEMENT':<15} {'READ_TB':>8} {'SHARED_TB':>9} "
          f"{'SAVED':>6} {'FEWEST':>7} {'LEAVES':>6} {'DELAY_S':>8} "
          f"{'WALL_S':>6}")
    saved = {}
    fewest = {}
    for seed in range(1, args.seeds + 1):
        started = time.monotonic()
        out = subprocess.run(
            [sim, "cache", "--json", "--trace", TRACE, *window,
             "--cache-gb", str(args.cache_gb), "--seed", str(seed)],
            check=True, capture_output=True, text=True).stdout
        wall = time.monotonic() - started
        for row in json.loads(out)["placements"]:
            name = row["placement"]
            saved.setdefault(name, []).append(row["saved_share"])
            fewest.setdefault(name, []).append(row["fewest_leaves_share"])
            print(f"{seed:>4} {name:<15} {row['dataset_bytes'] / 1e12:>8.1f} "
                  f"{row['shared_bytes'] / 1e12:>9.1f} "
                  f"{row['saved_share']:>6.3f} "
                  f"{row['fewest_leaves_share']:>7.3f} "
                  f"{row['mean_leaves']:>6.2f} "
                  f"{row['delay_mean_s']:>8.0f} {wall:>6.1f}")
    print()
    for name in saved:
        print(f"mean {name:<15} saved {statistics.mean(saved[name]):.3f}  "
              f"fewest leaves {statistics.mean(fewest[name]):.3f}")
    print()
