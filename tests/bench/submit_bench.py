"""Submission benchmark: durable submissions per second through the API and
through the CLI, and how long each acknowledgement takes.

API: gantry-submit-bench (submit_bench.cc) runs 1, 8 and 64 clients, each a
thread with its own channel and its own TCP connection to gantryd (what a
fleet of separate client processes has; --shared-channel puts them all on
one connection instead), each submitting one job after another and waiting
for the acknowledgement, which gantryd sends only once the job is synced to
disk. The request is the one `gantry batch job.sh` builds (the submit
environment exported). Each client count is measured with unary Submit
calls (one call per job, as the CLI does) and with SubmitStream, where each
client keeps up to --window submissions unanswered on one stream, --batch
to a message (as a sweep tool would); every ack still waits for the sync. gantryd has no nodes, so every job pends, as a sweep
does on a full cluster; nothing runs. Each client count gets a fresh gantryd
and --runs windows of --seconds; the figures are the median and the slowest
window's rate, and the median and p99 of every acknowledgement's latency
over all windows, plus gantryd's CPU (cores) during the windows. Then, per
window, where gantryd's loop went (its own /metrics): the share of the
window spent in scheduling passes and in synced commits, and how many
submissions each commit carried.

CLI: one `gantry batch --parsable job.sh` process per submission, over the
local socket, --cli-jobs of them one after another and --cli-jobs with 4 at
a time (as Slurm's anchor runs sbatch serially and with xargs -P4), --runs
times; rate and per-process latency.

Targets (issue #8): >= 20,000 API submissions/s with 64 clients; CLI >= 10x
Slurm's sbatch (60/s serial, 76/s with 4 in parallel on this machine kind).
This prints the figures; it asserts nothing about them.

Run: python3 tests/bench/submit_bench.py --build-dir build
       [--clients 1,8,64] [--seconds 3] [--runs 5] [--auth munge,none]
       [--shared-channel] [--api unary,stream] [--batch 64]
       [--window 256] [--cli-jobs 300] [--skip-cli]
"""
import argparse
import concurrent.futures
import os
import statistics
import time

import bench_support
from bench_support import gantry_cluster, median_p99


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--clients", default="1,8,64",
                        help="API client counts, comma-separated")
    parser.add_argument("--seconds", type=float, default=3.0,
                        help="length of one API window")
    parser.add_argument("--runs", type=int, default=5,
                        help="windows per client count, and CLI repetitions")
    parser.add_argument("--auth", default="munge,none",
                        help="gantryd --auth modes to measure, comma-separated")
    parser.add_argument("--shared-channel", action="store_true",
                        help="all API clients on one channel (one connection)")
    parser.add_argument("--api", default="unary,stream",
                        help="API calls to measure: unary (Submit), stream "
                        "(SubmitStream), comma-separated")
    parser.add_argument("--batch", type=int, default=64,
                        help="submissions per SubmitStream message")
    # 64 clients x 256 stay under gantryd's default admission gate (20,000
    # waiting to be stored): more only buys "busy" answers and resends.
    parser.add_argument("--window", type=int, default=256,
                        help="unanswered submissions per SubmitStream client")
    parser.add_argument("--cli-jobs", type=int, default=300,
                        help="CLI submissions per repetition")
    parser.add_argument("--skip-cli", action="store_true")
    args = parser.parse_args()
    os.environ["GANTRY_BUILD_DIR"] = os.path.abspath(args.build_dir)
    return args


# gantryd's own account of its loop (histogram sums and counts).
LOOP_METRICS = [f"gantry_{name}_duration_seconds_{part}"
                for name in ("scheduling_pass", "store_commit")
                for part in ("sum", "count")]


def loop_share(before, after, seconds, acknowledged):
    """From two scrapes of LOOP_METRICS around a window: the share of the
    window gantryd spent in scheduling passes and in commits, and how many
    submissions each commit carried."""
    delta = {k.replace("_duration_seconds", ""): after[k] - before[k]
             for k in LOOP_METRICS}
    commits = delta["gantry_store_commit_count"]
    return {
        "schedule": delta["gantry_scheduling_pass_sum"] / seconds,
        "passes": delta["gantry_scheduling_pass_count"] / seconds,
        "commit": delta["gantry_store_commit_sum"] / seconds,
        "per_commit": acknowledged / commits if commits else 0,
        "commit_ms": (1000 * delta["gantry_store_commit_sum"] / commits
                      if commits else 0),
    }


def api_level(args, auth, api, clients):
    """Fresh gantryd; --runs windows of `clients` clients of `api` (unary
    or stream). Returns
    (windows, every acknowledgement latency in ms), a window being a dict of
    its figures."""
    cluster = gantry_cluster.GantryCluster(agents=0, auth=auth, metrics=True,
                                           label=f"submit-{auth}-{api}-{clients}")
    try:
        cluster.start()
        return api_windows(args, cluster, cluster.controller.pid,
                           cluster.metrics_address(), auth, api, clients)
    finally:
        cluster.stop_processes()
        cluster.finish(False)


def api_windows(args, cluster, pid, metrics, auth, api, clients,
                client=None, extra_pids=None):
    """--runs windows of `clients` clients of `api` against the started
    `cluster` (its gantryd: process `pid`, /metrics at `metrics`; the
    client fleet: `client`, a bench_support.SubmitClient, by default one
    for `auth`). `extra_pids` ({label: [pid]}): other processes whose cores
    during each window go in the window's dict under that label (the etcd
    members, a standby). Returns (windows, every acknowledgement latency in
    ms)."""
    client = client or bench_support.SubmitClient(cluster, auth)
    extra_pids = extra_pids or {}
    windows, latencies_ms = [], []
    for run in range(args.runs):
        latency_file = os.path.join(cluster.dir, f"latencies.{api}.{clients}.{run}")
        options = ["--clients", str(clients), "--seconds", str(args.seconds),
                   "--latencies", latency_file, "--tag", f"r{run}"]
        if args.shared_channel:
            options.append("--shared-channel")
        if api == "stream":
            options += ["--stream", "--batch", str(args.batch),
                        "--window", str(args.window)]
        queued = cluster.status()["jobs"]["pending"]
        cpu_before = bench_support.cpu_seconds(pid)
        extra_before = {label: sum(map(bench_support.cpu_seconds, pids))
                        for label, pids in extra_pids.items()}
        metrics_before = bench_support.scrape_metrics(metrics, LOOP_METRICS)
        _, summary = client.run("submit", *options)
        seconds = summary["seconds"]
        window = loop_share(
            metrics_before,
            bench_support.scrape_metrics(metrics, LOOP_METRICS),
            seconds, summary["acknowledged"])
        window.update(
            queued=queued, rate=summary["per_second"],
            errors=summary["errors"],
            cores=(bench_support.cpu_seconds(pid) - cpu_before) / seconds,
            client_cores=summary["cpu_seconds"] / seconds)
        for label, pids in extra_pids.items():
            window[label] = (sum(map(bench_support.cpu_seconds, pids)) -
                             extra_before[label]) / seconds
        windows.append(window)
        with open(latency_file) as f:
            latencies_ms += [int(line) / 1000 for line in f]
    return windows, latencies_ms


def cli_submissions(cluster, script, count, parallel, options=(),
                    per_task=True):
    """Submits `script` `count` times with `gantry batch --parsable OPTIONS`,
    one process per submission, `parallel` at a time. Returns (submissions
    per second, each one's latency in ms, the job ids in order)."""

    def one(_):
        start = time.monotonic()
        # raises unless acknowledged with an id
        job_id = cluster.submit(script, *options, per_task=per_task)
        return (time.monotonic() - start) * 1000, job_id

    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(parallel) as pool:
        results = list(pool.map(one, range(count)))
    rate = count / (time.monotonic() - start)
    return rate, [ms for ms, _ in results], [job_id for _, job_id in results]


def cli_runs(auth, runs, jobs):
    """[(mode, rates, latencies_ms)] for serial and 4 in parallel."""
    cluster = gantry_cluster.GantryCluster(agents=0, auth=auth,
                                           label=f"submit-cli-{auth}")
    try:
        cluster.start()
        script = cluster.write_script("job.sh", bench_support.TRIVIAL_SCRIPT)
        results = []
        for mode, parallel in (("serial", 1), ("4 parallel", 4)):
            rates, latencies_ms = [], []
            for _ in range(runs):
                rate, latencies, _ = cli_submissions(cluster, script, jobs,
                                                     parallel)
                rates.append(rate)
                latencies_ms += latencies
            results.append((mode, rates, latencies_ms))
        return results
    finally:
        cluster.stop_processes()
        cluster.finish(False)


def main():
    args = parse_args()
    levels = [int(c) for c in args.clients.split(",") if c]
    auths = [a for a in args.auth.split(",") if a]
    apis = [a for a in args.api.split(",") if a]
    for api in apis:
        if api not in ("unary", "stream"):
            raise SystemExit(f"--api: unknown call {api!r} (unary, stream)")
    connection = ("one shared channel" if args.shared_channel else
                  "a channel and TCP connection per client")
    print(f"Submission benchmark: {bench_support.machine_line()}", flush=True)
    print(f"API: gantry-submit-bench, {connection}, closed loop; "
          f"{args.runs} windows of {args.seconds:g} s per client count, "
          "fresh gantryd per count, jobs pend (no nodes); stream: "
          f"SubmitStream, up to {args.window} unanswered per client, "
          f"{args.batch} to a message")
    print(f"  {'auth':<6} {'call':<6} {'clients':>7} {'median/s':>9} {'slowest/s':>10} "
          f"{'ack p50 ms':>10} {'ack p99 ms':>10} {'gantryd':>8} "
          f"{'client':>7}  errors", flush=True)
    results = []
    for auth, api, clients in ((a, c, n) for a in auths for c in apis
                               for n in levels):
        windows, latencies_ms = api_level(args, auth, api, clients)
        results.append((auth, api, clients, windows))
        rates = [w["rate"] for w in windows]
        p50, p99 = median_p99(latencies_ms)
        errors = {}
        for w in windows:
            for code, n in w["errors"].items():
                errors[code] = errors.get(code, 0) + n
        cores = statistics.median(w["cores"] for w in windows)
        client_cores = statistics.median(w["client_cores"] for w in windows)
        refused = ", ".join(f"{k} {v}" for k, v in errors.items())
        print(f"  {auth:<6} {api:<6} {clients:>7} "
              f"{statistics.median(rates):>9.0f} "
              f"{min(rates):>10.0f} {p50:>10.2f} {p99:>10.2f} "
              f"{cores:>6.2f} c {client_cores:>5.2f} c  {refused or 'none'}",
              flush=True)
    print()
    print("Where gantryd's loop went, window by window (from its /metrics): "
          "share of the window in scheduling passes and in synced commits, "
          "passes per second, submissions per commit; `queued` is the pending "
          "queue at the window's start")
    print(f"  {'auth':<6} {'call':<6} {'clients':>7} {'window':>6} {'queued':>7} "
          f"{'rate/s':>7} {'schedule':>8} {'passes/s':>8} {'commit':>7} "
          f"{'jobs/commit':>11}")
    for auth, api, clients, windows in results:
        for i, w in enumerate(windows, 1):
            print(f"  {auth:<6} {api:<6} {clients:>7} {i:>6} {w['queued']:>7} "
                  f"{w['rate']:>7.0f} {w['schedule']:>7.0%} "
                  f"{w['passes']:>8.0f} {w['commit']:>6.0%} "
                  f"{w['per_commit']:>11.1f}")
    if args.skip_cli:
        return
    print()
    print(f"CLI: `gantry batch --parsable job.sh`, a process per submission, "
          f"over the local socket; {args.cli_jobs} submissions x {args.runs} "
          "runs (Slurm anchor: 59.4/s serial, 78.5/s with 4 in parallel)")
    print(f"  {'auth':<6} {'mode':<11} {'median/s':>9} {'slowest/s':>10} "
          f"{'p50 ms':>8} {'p99 ms':>8}")
    for auth in auths:
        for mode, rates, latencies_ms in cli_runs(auth, args.runs,
                                                  args.cli_jobs):
            p50, p99 = median_p99(latencies_ms)
            print(f"  {auth:<6} {mode:<11} {statistics.median(rates):>9.1f} "
                  f"{min(rates):>10.1f} {p50:>8.2f} {p99:>8.2f}", flush=True)


if __name__ == "__main__":
    main()
