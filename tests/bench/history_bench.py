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

With --stall, it measures instead what a history of big records costs the
controller's loop (issue #34: 500 MB of script arguments stalled it for
seconds every minute). --stall-jobs jobs of --arg-bytes of arguments each
are filled, half ended 40 days ago (past the shipped 30-day retention),
half an hour ago, all as a gantryd from before the expiry index stored them
(--without-index; the old gantryd opens only such a database, and it is
the upgrade's worst case: the new one indexes it all first). gantryd
starts with its shipped defaults, and while a thread runs `gantry queue`
again and again it measures three phases:
  expiry     start until the old half is deleted
  idle       the next --idle-s seconds (the old code's next expiry pass
             re-read every kept record on the loop each minute)
  sacct      one `gantry acct -a` over the whole history
each as: its seconds, the slowest `gantry queue` in it, and the longest
loop stall gantryd logged ("controller loop was stalled"; ms, 0: none).

Run: python3 tests/bench/history_bench.py --build-dir build --stall
       [--stall-jobs 250] [--arg-bytes 2097152] [--idle-s 65]

With --owner, it measures what one user's accounting costs in a history of
others' jobs: the largest size of --jobs (uid 1000), then --owner-jobs of
user nobody, are filled; gantryd starts and indexes them (its owner index,
history_by_user), then, --runs times each:
  own      `gantry acct -X -S 2000-01-01` as nobody: a user's own jobs,
           through the owner index
  scan     the same rows for root (`-a -u nobody`): an admin's query
           looks at every record
median and p99 (ms), and the rows listed.

Run: python3 tests/bench/history_bench.py --build-dir build --owner
       [--jobs 1000000] [--owner-jobs 100] [--runs 10]
"""
import argparse
import os
import re
import subprocess
import time

import bench_support
from bench_support import gantry_cluster, median_p99
from quick_calls import QuickCalls  # tests/integration, on bench_support's path


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--jobs", default="0,1000000",
                        help="history sizes, comma-separated")
    parser.add_argument("--live", type=int, default=1000,
                        help="pending jobs in the live state")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--stall", action="store_true",
                        help="measure loop stalls of a big history instead")
    parser.add_argument("--stall-jobs", type=int, default=250)
    parser.add_argument("--arg-bytes", type=int, default=2 << 20)
    parser.add_argument("--idle-s", type=float, default=65)
    parser.add_argument("--owner", action="store_true",
                        help="measure one user's sacct in others' history")
    parser.add_argument("--owner-jobs", type=int, default=100)
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


STALL_LINE = re.compile(r"controller loop was stalled[^\n]*stalled_ms=(\d+)")


def stall_lines(controller, seen):
    """The stalls gantryd logged since `seen` of them were read: (ms list,
    new count)."""
    stalls = [int(ms) for ms in STALL_LINE.findall(controller.log_text())]
    return stalls[seen:], len(stalls)


def measure_stalls(args):
    cluster = gantry_cluster.GantryCluster(agents=0, label="history-stall")
    try:
        fill = os.path.join(gantry_cluster.build_dir(), "tests", "tools",
                            "gantry-history-fill")
        half = args.stall_jobs // 2
        ids = []
        for count, ago in ((half, 40 * 24 * 3600),
                           (args.stall_jobs - half, 3600)):
            out = subprocess.run(
                [fill, cluster.state_dir, str(count), "--arg-bytes",
                 str(args.arg_bytes), "--ended-ago", str(ago),
                 "--without-index"],
                check=True, capture_output=True, text=True)
            ids.append([int(n) for n in out.stdout.split()])
        stored_mib = args.stall_jobs * args.arg_bytes / (1 << 20)
        controller = cluster.start_controller()
        quick = QuickCalls(cluster)
        seen = 0
        phases = []
        try:
            start = time.monotonic()
            last_expired = str(ids[0][1])
            gantry_cluster.wait_for(
                lambda: "invalid job id" in cluster.cli(
                    "job", last_expired, check=False, timeout=120).stderr,
                600, "the expired half to go", interval=0.5)
            end = time.monotonic()
            stalls, seen = stall_lines(controller, seen)
            phases.append(("expiry", end - start, quick.slowest(start, end),
                           max(stalls, default=0)))
            start = time.monotonic()
            time.sleep(args.idle_s)
            end = time.monotonic()
            stalls, seen = stall_lines(controller, seen)
            phases.append(("idle", end - start, quick.slowest(start, end),
                           max(stalls, default=0)))
            start = time.monotonic()
            listed = cluster.cli("acct", "-a", "-X", "-S", "2000-01-01",
                                 "-P", "-n", "--format=JobIDRaw",
                                 timeout=600).stdout.split()
            end = time.monotonic()
            assert len(listed) == args.stall_jobs - half, len(listed)
            stalls, seen = stall_lines(controller, seen)
            phases.append(("sacct", end - start, quick.slowest(start, end),
                           max(stalls, default=0)))
        finally:
            quick.stop()
        print(f"history {args.stall_jobs} jobs, {stored_mib:.0f} MiB of "
              f"arguments; {len(quick.calls)} gantry queue calls")
        print(f"{'phase':>8}  {'seconds':>8}  {'slowest queue s':>15}  "
              f"{'longest stall ms':>16}")
        for name, seconds, slowest, stall in phases:
            print(f"{name:>8}  {seconds:8.1f}  {slowest:15.2f}  {stall:16d}",
                  flush=True)
    finally:
        cluster.stop_processes()
        cluster.finish(False)


def measure_owner(args):
    import pwd
    nobody = pwd.getpwnam("nobody")
    others = max(int(n) for n in args.jobs.split(","))
    cluster = gantry_cluster.GantryCluster(agents=0, label="history-owner")
    try:
        fill = os.path.join(gantry_cluster.build_dir(), "tests", "tools",
                            "gantry-history-fill")
        subprocess.run([fill, cluster.state_dir, str(others)], check=True,
                       capture_output=True)
        subprocess.run([fill, cluster.state_dir, str(args.owner_jobs),
                        "nobody", "--uid", str(nobody.pw_uid)],
                       check=True, capture_output=True)
        cluster.start_controller()
        words = ("acct", "-X", "-n", "-P", "--format=JobIDRaw",
                 "-S", "2000-01-01")
        print(f"history: {others} jobs of uid 1000, {args.owner_jobs} of "
              f"nobody; {args.runs} runs; ms: median p99")
        for name, uid, extra in (("own", nobody.pw_uid, ()),
                                 ("scan", None, ("-a", "-u", "nobody"))):
            samples = []
            rows = 0
            for _ in range(args.runs):
                start = time.monotonic()
                out = cluster.cli(*words, *extra, uid=uid, timeout=600).stdout
                samples.append((time.monotonic() - start) * 1000)
                rows = len(out.split())
            assert rows == args.owner_jobs, (name, rows)
            median, p99 = median_p99(samples)
            print(f"{name:>6}  {median:9.1f} {p99:9.1f}  rows {rows}",
                  flush=True)
    finally:
        cluster.stop_processes()
        cluster.finish(False)


def main():
    args = parse_args()
    if args.owner:
        print(bench_support.machine_line())
        measure_owner(args)
        return
    if args.stall:
        print(bench_support.machine_line())
        measure_stalls(args)
        return
    print(bench_support.machine_line())
    print(f"live jobs {args.live}, {args.runs} runs per figure; ms: median p99")
    print(f"{'history':>9}  {'fill s':>7}  {'start ms':>7}  "
          f"{'queue ms':>15}  {'queue -a ms':>15}  {'job ID ms':>15}  "
          f"{'rss MiB':>7}  {'-a rows':>6}")
    for size in (int(s) for s in args.jobs.split(",")):
        measure(args, size)


if __name__ == "__main__":
    main()
