"""Goodput under injected failures, from the simulator (gantry-sim goodput):
the effective training time ratio (ETTR = productive / wall) of Gantry's
recovery (alone, with just-in-time checkpointing in the job, and with
in-memory checkpoints held by peers), Slurm without spares and Kueue's hot
swap, on the same failures, for

  long    one 16,384-GPU job (2,048 nodes of 8 GPUs) with 54 days of work,
          failures at Llama 3's rate (419 in 54 days on those nodes) and
          mix, plus whole-leaf failures (--leaf-rate), 30-minute
          checkpoints, 16 hot spares; --seeds runs, their mean and range
  trace   the first --trace-jobs jobs of the Philly trace
          (../shared/data/traces/philly/pollux_philly.csv) on 32 nodes (+4
          spares), at Llama 3's rate and at --stress times it, --trace-seeds
          runs each

and prints, per scenario and policy, ETTR and the shares of the wall time
lost to each cause. Pure computation (no daemons); about a minute.

Run: python3 tests/bench/goodput_sim_bench.py --build-dir build
     [--seeds 5] [--trace-jobs 5000] [--trace-seeds 2] [--stress 10]
     [--leaf-rate 1e-5]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_support import PHILLY_TRACE as TRACE  # noqa: E402
from bench_support import gantry_sim, machine_line  # noqa: E402

SHARES = ["lost", "checkpoint", "detecting", "recovering", "preflight",
          "queued", "degraded", "starting"]

parser = argparse.ArgumentParser()
parser.add_argument("--build-dir", required=True)
parser.add_argument("--seeds", type=int, default=5)
parser.add_argument("--trace-jobs", type=int, default=5000)
parser.add_argument("--trace-seeds", type=int, default=2)
parser.add_argument("--stress", type=float, default=10.0)
parser.add_argument("--leaf-rate", type=float, default=1e-5,
                    help="whole-leaf failures per leaf-hour (an assumption)")
args = parser.parse_args()
sim = gantry_sim(args.build_dir, "goodput_sim_bench")


def run(extra):
    started = time.monotonic()
    out = subprocess.run([sim, "goodput", "--json", *extra], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out), time.monotonic() - started


def table(title, runs, seconds):
    """One row per policy: the mean over `runs` (and the range of ETTR when
    there are several)."""
    print(f"\n{title}  ({len(runs)} run(s), {seconds:.1f} s)")
    print(f"{'policy':<13} {'ETTR':>7} {'min':>7} {'max':>7} | " +
          " ".join(f"{s[:6]:>6}" for s in SHARES) +
          f" | {'fails':>6} {'restr':>6} {'memr':>6} {'fallb':>6} "
          f"{'evict':>6} {'catch':>6}")
    for i, first in enumerate(runs[0]["policies"]):
        rows = [r["policies"][i] for r in runs]
        ettr = [r["ettr"] for r in rows]
        mean = statistics.mean
        shares = [mean(r["shares"][s] for r in rows) for s in SHARES]
        counts = [mean(r[k] for r in rows) for k in
                  ("job_failures", "restarts", "memory_restores",
                   "memory_fallbacks", "evictions", "preflight_catches")]
        print(f"{first['policy']:<13} {mean(ettr):7.4f} {min(ettr):7.4f} "
              f"{max(ettr):7.4f} | " +
              " ".join(f"{s:6.4f}" for s in shares) + " | " +
              " ".join(f"{c:6.1f}" for c in counts))


print(machine_line())
print("gantry-sim goodput: shares are of the wall time from each job's first "
      "start to its end (GPU-weighted).")

def scenario(title, extra, seeds):
    started = time.monotonic()
    runs = [run(extra + ["--seed", str(seed)])[0]
            for seed in range(1, seeds + 1)]
    table(title, runs, time.monotonic() - started)
    print("  command: " + " ".join(["gantry-sim", "goodput", *extra,
                                     "--seed", "1"]))


long_args = ["--job-gpus", "16384", "--job-days", "54",
             "--checkpoint-interval", "1800", "--spares", "16",
             "--leaf-rate", str(args.leaf_rate)]
scenario("long: 16,384 GPUs, 54 days of work, Llama 3 rate and mix, leaf "
         f"failures {args.leaf_rate:g}/leaf-hour, 30-min checkpoints (write "
         "10 s), init 120 s, load 60 s, repair 4 h, 16 spares",
         long_args, args.seeds)

# The interval Gantry hands the job (GANTRY_CHECKPOINT_INTERVAL): the
# Young/Daly optimum for the failure rate and the write cost, instead of
# 30 minutes; periodic checkpoints only, no help from the training code.
scenario("long, Young/Daly checkpoint interval (auto)",
         [a if a != "1800" else "auto" for a in long_args] +
         ["--policy", "gantry"], args.seeds)

# In-memory checkpoints held by peers (gantry+memory), periodic only: each
# rank copies its state (~400 MB per GPU for a 405B model's weights and
# optimizer state sharded over 16,384 GPUs) to host memory in 1 s, its node
# sends the 3.2 GB to its peer under another leaf in 10 s (0.1 s at 400
# Gb/s: room for sharing the link with training), a restart fetches and
# loads it in 10 s, every Young/Daly interval for the 1 s write (2.5 min
# here). Persistent checkpoints are then only the fallback for a snapshot
# lost (a node and its peer down together), so every 2 h rather than 30
# min: the 30-minute row is in the table above.
scenario("long, in-memory checkpoints held by peers, persistent every 2 h",
         [a if a != "1800" else "7200" for a in long_args] +
         ["--memory-interval", "auto", "--memory-write", "1",
          "--memory-replicate", "10", "--memory-restore", "10",
          "--policy", "gantry+memory"], args.seeds)

# What the 97% target needs: cheaper restarts and checkpoints, with JIT.
scenario("long, faster restarts (init 60 s, load 30 s, write 5 s)",
         long_args + ["--init", "60", "--load", "30",
                      "--checkpoint-write", "5", "--policy", "gantry",
                      "--policy", "gantry+jit"], args.seeds)

# Pre-flight: one repaired node in ten comes back still bad.
for preflight in ("10", "0"):
    scenario(f"long, 10% of repaired nodes still bad, pre-flight "
             f"{preflight} s", long_args + ["--bad-after-repair", "0.1",
                                            "--preflight", preflight,
                                            "--policy", "gantry"],
             args.seeds)

# Slurm's figure rests on the repair time: a failed node that a reboot
# fixes in an hour instead of four.
scenario("long, repair 1 h", long_args + ["--repair", "3600", "--policy",
                                          "slurm", "--policy", "gantry"],
         args.seeds)

if os.path.exists(TRACE):
    trace_args = ["--trace", os.path.normpath(TRACE),
                  "--limit", str(args.trace_jobs),
                  "--nodes", "32", "--spares", "4",
                  "--leaf-rate", str(args.leaf_rate),
                  "--min-nodes-fraction", "0.5"]
    for scale in (1.0, args.stress):
        rate = 419.0 / (2048 * 54 * 24) * scale
        scenario(f"trace: Philly, first {args.trace_jobs} jobs, 32 nodes (+4 "
                 f"spares), {scale:g}x Llama 3's rate, multi-node jobs may "
                 "shrink to half", trace_args + ["--node-rate", f"{rate:.6g}"],
                 args.trace_seeds)
    rate = 419.0 / (2048 * 54 * 24) * args.stress
    scenario(f"trace, {args.stress:g}x, shrunk jobs grow back at once",
             trace_args + ["--node-rate", f"{rate:.6g}", "--grow-at-once",
                           "--policy", "gantry"], args.trace_seeds)
else:
    print(f"\ntrace: skipped, {TRACE} not found")
