"""Listing benchmark: what `gantry queue` costs over a long queue, and what
it costs the controller's loop.

A fresh gantryd with no nodes gets --jobs pending jobs (default 50,000,
sent by gantry-submit-bench over SubmitStream: a minute of `gantry batch`
processes would be most of the run). Then, --runs times each, it times:
  queue        `gantry queue` (the default squeue layout, sorted)
  json         `gantry queue --all --json`
  user         `gantry queue -u nobody` (a user with no jobs: gantryd
               filters, the CLI receives nothing)
as the median and the slowest run, with the CLI's own CPU time (median),
and gantryd's loop lag during the listings: how late its 250 ms tick ran
at worst, as the smallest bucket of gantry_controller_loop_lag_seconds
(its metrics endpoint) that holds every tick of the listings.

Targets (issue #36): queue < 0.3 s and --all --json < 2 s over 50,000
pending jobs; the loop's worst turn under 50 ms. This prints the figures;
it asserts nothing about them.

Run: python3 tests/bench/listing_bench.py --build-dir build
       [--jobs 50000] [--runs 5]
"""
import argparse
import os
import resource
import statistics
import subprocess
import time
import urllib.request

import bench_support
from bench_support import gantry_cluster


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--jobs", type=int, default=50000)
    parser.add_argument("--runs", type=int, default=5)
    return parser.parse_args()


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cluster, args, runs):
    """[(wall s, CLI CPU s)] of `runs` calls of `gantry ARGS`."""
    gantry = os.path.join(gantry_cluster.build_dir(), "cli", "gantry")
    samples = []
    for _ in range(runs):
        cpu = children_cpu()
        start = time.monotonic()
        subprocess.run([gantry, *args], env=cluster.env, check=True,
                       stdout=subprocess.DEVNULL, timeout=300)
        samples.append((time.monotonic() - start, children_cpu() - cpu))
    return samples


def lag_buckets(cluster):
    """{upper bound s: ticks at most that late} of gantryd's loop lag."""
    address = cluster.metrics_address()
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=10) as r:
        text = r.read().decode()
    buckets = {}
    prefix = 'gantry_controller_loop_lag_seconds_bucket{le="'
    for line in text.splitlines():
        if line.startswith(prefix):
            bound, _, count = line[len(prefix):].partition('"} ')
            buckets[float(bound)] = float(count)
    return buckets


def worst_lag(before, after):
    """The smallest bucket bound holding every tick between two scrapes;
    None from a gantryd without the histogram."""
    if not after:
        return None
    ticks = after[float("inf")] - before[float("inf")]
    for bound in sorted(after):
        if after[bound] - before.get(bound, 0) >= ticks:
            return bound
    return float("inf")


def main():
    args = parse_args()
    os.environ["GANTRY_BUILD_DIR"] = os.path.abspath(args.build_dir)
    print(bench_support.machine_line())
    cluster = gantry_cluster.GantryCluster(agents=0, metrics=True,
                                           label="listing-bench")
    try:
        cluster.start_controller()
        client = bench_support.SubmitClient(cluster, "munge",
                                            bare_environment=True)
        start = time.monotonic()
        process = client.start("submit", "--clients", "4", "--count",
                               str(args.jobs), "--stream")
        code, _ = client.finish(process, 900)
        assert code == 0, code
        print(f"{args.jobs} pending jobs submitted in "
              f"{time.monotonic() - start:.1f} s; {args.runs} runs each")
        listed = cluster.cli("queue", "-h", "-r", "-o", "%i",
                             timeout=300).stdout.count("\n")
        assert listed == args.jobs, (listed, args.jobs)
        print(f"{'listing':<8} {'median s':>9} {'slowest s':>10} "
              f"{'CLI CPU s':>10}")
        before = lag_buckets(cluster)
        for name, words in (("queue", ["queue"]),
                            ("json", ["queue", "--all", "--json"]),
                            ("user", ["queue", "-u", "nobody"])):
            samples = timed(cluster, words, args.runs)
            walls = [wall for wall, _ in samples]
            print(f"{name:<8} {statistics.median(walls):9.3f} "
                  f"{max(walls):10.3f} "
                  f"{statistics.median(c for _, c in samples):10.3f}",
                  flush=True)
        lag = worst_lag(before, lag_buckets(cluster))
        if lag is None:
            print("gantryd exports no loop lag (a build before it)")
            return
        print(f"gantryd's loop during the listings: its tick ran at most "
              f"{lag * 1000:.0f} ms late (a bucket bound)")
    finally:
        cluster.stop_processes()
        cluster.finish(False)


if __name__ == "__main__":
    main()
