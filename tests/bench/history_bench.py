"""History benchmark: gantryd's queue latency, memory and start time do not
grow with the jobs it ever ran.

For each size in --jobs (default 0 and 1,000,000), a fresh state dir gets
that many finished jobs written straight into its history column family by
gantry-history-fill (tests/tools/history_fill.cc, a test-only tool that
opens the stopped gantryd's RocksDB; far faster than running the jobs, and
the records are what gantryd itself writes when a job leaves the live state
after --min-job-age). Then gantryd starts on it (no nodes), --live jobs are
submitted (they pend), and it measures:
  start ms     gantryd exec to its "gantryd ready" log line (state loaded,
               listeners up)
  queue ms     `gantry queue` (the CLI, live jobs), median and p99 of --runs
  all ms       `gantry queue --all`, median and p99
  job ms       `gantry job ID` of the oldest history job, median and p99
  rss MiB      gantryd's VmRSS after the runs

Run: python3 tests/bench/history_bench.py --build-dir build
       [--jobs 0,1000000] [--live 1000] [--runs 30]
"""
import argparse
import os
import re
import subprocess
import time

import bench_support
from bench_support import gantry_cluster, median_p99


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--jobs", default="0,1000000",
                        help="history sizes, comma-separated")
    parser.add_argument("--live", type=int, default=1000,
                        help="pending jobs in the live state")
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    os.environ["GANTRY_BUILD_DIR"] = os.path.abspath(args.build_dir)
    return args


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for {pid}")


def timed(cluster, *args, runs):
    samples = []
    for _ in range(runs):
        start = time.monotonic()
        cluster.cli(*args, timeout=120)
        samples.append((time.monotonic() - start) * 1000)
    return median_p99(samples)


def measure(args, size):
    cluster = gantry_cluster.GantryCluster(agents=0, label=f"history-{size}")
    try:
        first_id = None
        fill_seconds = 0.0
        if size > 0:
            fill = os.path.join(gantry_cluster.build_dir(), "tests", "tools",
                                "gantry-history-fill")
            start = time.monotonic()
            out = subprocess.run([fill, cluster.state_dir, str(size)],
                                 check=True, capture_output=True, text=True)
            fill_seconds = time.monotonic() - start
            first_id = int(out.stdout.split()[0])
        started = time.monotonic()
        controller = cluster.start_controller()  # returns once ready
        load_ms = (time.monotonic() - started) * 1000
        script = cluster.write_script("job.sh", bench_support.TRIVIAL_SCRIPT)
        for _ in range(args.live):
            cluster.cli("batch", "--parsable", script)
        queue = timed(cluster, "queue", runs=args.runs)
        listed = cluster.cli("queue", "--all", "-h").stdout.count("\n")
        everything = timed(cluster, "queue", "--all", runs=args.runs)
        job = ((0.0, 0.0) if first_id is None else
               timed(cluster, "job", str(first_id), runs=args.runs))
        if first_id is not None:
            shown = cluster.cli("job", str(first_id)).stdout
            assert re.search(r"JobState=COMPLETED", shown), shown
        rss = rss_mib(controller.pid)
        print(f"{size:>9}  {fill_seconds:7.1f}  {load_ms:7.0f}  "
              f"{queue[0]:7.1f} {queue[1]:7.1f}  "
              f"{everything[0]:7.1f} {everything[1]:7.1f}  "
              f"{job[0]:7.1f} {job[1]:7.1f}  {rss:7.1f}  {listed:>6}",
              flush=True)
    finally:
        cluster.stop_processes()
        cluster.finish(False)


def main():
    args = parse_args()
    print(bench_support.machine_line())
    print(f"live jobs {args.live}, {args.runs} runs per figure; ms: median p99")
    print(f"{'history':>9}  {'fill s':>7}  {'start ms':>7}  "
          f"{'queue ms':>15}  {'queue -a ms':>15}  {'job ID ms':>15}  "
          f"{'rss MiB':>7}  {'-a rows':>6}")
    for size in (int(s) for s in args.jobs.split(",")):
        measure(args, size)


if __name__ == "__main__":
    main()
