"""Restart benchmark: how long gantryd takes to come back with a big state.

Fills a gantryd (no nodes) with --jobs jobs through the API
(gantry-submit-bench, 64 clients): first --finished of them, which are then
cancelled with one `gantry cancel -u USER` (finished jobs, with their
events), then the rest, which stay pending. Then, --runs times each, stops
gantryd (SIGTERM, and kill -9, which leaves RocksDB's log to replay) and
starts it again on the same state dir and port, measuring from just before
the exec to:
  loaded    the "state loaded" log line (RocksDB opened, every record read)
  ready     READY=1 on $NOTIFY_SOCKET (what systemd's Type=notify waits
            for; sent once the listeners serve)
  first RPC the first ClusterStatus answered (a probe retries every few ms
            from before the exec)
  queue     the queue listed as `gantry queue` lists it (every pending job)
Each restart checks that every job is back (pending and finished counts).

Target (issue #8): restart with 100,000 jobs under 2 s. This prints the
figures; it asserts nothing about them.

Run: python3 tests/bench/restart_bench.py --build-dir build
       [--jobs 100000] [--finished 0.5] [--runs 5] [--auth munge|none]
       [--bare-environment]
"""
import argparse
import datetime
import os
import pwd
import re
import signal
import socket
import threading
import time

import bench_support
from bench_support import gantry_cluster, median_p99

def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--finished", type=float, default=0.5,
                        help="share of the jobs that are finished (cancelled)")
    parser.add_argument("--runs", type=int, default=5,
                        help="restarts per way of stopping")
    parser.add_argument("--auth", choices=["none", "munge"], default="munge")
    parser.add_argument("--bare-environment", action="store_true",
                        help="submit with an almost empty environment (each "
                        "job otherwise carries the exported submit "
                        "environment)")
    args = parser.parse_args()
    os.environ["GANTRY_BUILD_DIR"] = os.path.abspath(args.build_dir)
    return args


class NotifyListener:
    """A $NOTIFY_SOCKET, as systemd has for a Type=notify service: records
    when each READY=1 arrives."""

    def __init__(self, path):
        self.path = path
        self.ready_times = []
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._socket.bind(path)
        threading.Thread(target=self._receive, daemon=True).start()

    def _receive(self):
        while True:
            message = self._socket.recv(4096)
            if b"READY=1" in message.split(b"\n"):
                self.ready_times.append(time.time())

    def wait_ready(self, count, timeout=60):
        return gantry_cluster.wait_for(
            lambda: self.ready_times[count - 1]
            if len(self.ready_times) >= count else None,
            timeout, "READY=1 from gantryd", interval=0.005)


def log_time(daemon, message):
    """Unix time of the first log line with msg="MESSAGE" (ms resolution)."""
    match = re.search(r'^ts=(\S+) .*msg="' + re.escape(message) + '"',
                      daemon.log_text(), re.MULTILINE)
    if not match:
        raise AssertionError(f"no {message!r} line in {daemon.log_path}")
    return datetime.datetime.strptime(
        match.group(1), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()


def fill(cluster, client, total, finished_share):
    finished = int(total * finished_share)
    started = time.monotonic()
    if finished:
        client.fill(finished, "finished")
        user = pwd.getpwuid(os.getuid()).pw_name
        cluster.cli("cancel", "-u", user, timeout=300)
    client.fill(total - finished, "pending")
    jobs = cluster.status()["jobs"]
    if (jobs["pending"], jobs["finished"]) != (total - finished, finished):
        raise AssertionError(f"after the fill gantryd has {jobs}")
    return time.monotonic() - started, jobs


def restart(cluster, client, notify, how):
    """One stop and start; returns seconds from exec to each milestone."""
    if how == "kill -9":
        cluster.kill_controller()
    else:
        cluster.controller.send(signal.SIGTERM)
        cluster.controller.process.wait(timeout=60)
    probe = client.start("probe", "--timeout", "120")
    time.sleep(0.05)  # the probe connecting, not the daemon starting
    readies = len(notify.ready_times)
    exec_at = time.time()
    cluster.start_controller()
    ready_at = notify.wait_ready(readies + 1)
    _, answered = client.finish(probe, timeout=180)
    return {"loaded": log_time(cluster.controller, "state loaded") - exec_at,
            "ready": ready_at - exec_at,
            "rpc": answered["status_unix"] - exec_at,
            "queue": answered["queue_unix"] - exec_at,
            "queue_jobs": answered["queue_jobs"]}


def state_size_mib(path):
    total = 0
    for directory, _, files in os.walk(path):
        for name in files:
            total += os.path.getsize(os.path.join(directory, name))
    return total / 2**20


def measure_restarts(total, finished_share, runs, auth,
                     bare_environment=False):
    """A gantryd filled with `total` jobs, restarted `runs` times after a
    SIGTERM and after a kill -9. Returns a dict: fill_seconds, jobs (the
    status counts), state_mib (before and after), environment (bytes and
    variables each job carries), and restarts: {"SIGTERM": [...],
    "kill -9": [...]}, one restart()'s figures each."""
    cluster = gantry_cluster.GantryCluster(agents=0, auth=auth,
                                           label="restart")
    notify = NotifyListener(os.path.join(cluster.dir, "notify.sock"))
    cluster.env["NOTIFY_SOCKET"] = notify.path
    try:
        cluster.start()
        client = bench_support.SubmitClient(cluster, auth, bare_environment)
        fill_seconds, jobs = fill(cluster, client, total, finished_share)
        figures = {"fill_seconds": fill_seconds, "jobs": jobs,
                   "state_mib": [state_size_mib(cluster.state_dir)],
                   "environment": (
                       len("".join(f"{k}={v}" for k, v in client.env.items())),
                       len(client.env)),
                   "restarts": {}}
        for how in ("SIGTERM", "kill -9"):
            figures["restarts"][how] = []
            for _ in range(runs):
                r = restart(cluster, client, notify, how)
                back = cluster.status()["jobs"]
                if (back["pending"], back["finished"]) != (
                        jobs["pending"], jobs["finished"]):
                    raise AssertionError(f"after the restart gantryd has {back}")
                figures["restarts"][how].append(r)
        figures["state_mib"].append(state_size_mib(cluster.state_dir))
        return figures
    finally:
        cluster.stop_processes()
        cluster.finish(False)


def main():
    args = parse_args()
    figures = measure_restarts(args.jobs, args.finished, args.runs, args.auth,
                               args.bare_environment)
    jobs = figures["jobs"]
    env_bytes, env_variables = figures["environment"]
    print(f"Restart benchmark: {bench_support.machine_line()}")
    print(f"  state: {jobs['pending']} pending + {jobs['finished']} "
          f"finished jobs, filled in {figures['fill_seconds']:.1f} s; "
          f"{figures['state_mib'][0]:.0f} MiB on disk "
          f"(each job carries the exported submit environment, "
          f"{env_bytes} bytes in {env_variables} variables); "
          f"--auth {args.auth}")
    print(f"  seconds from exec, {args.runs} restarts each "
          "(target: < 2 s to serving)")
    print(f"  {'stopped by':<10} {'milestone':<10} {'median':>7} "
          f"{'p99':>7} {'best':>7}")
    for how, runs in figures["restarts"].items():
        for key, label in (("loaded", "loaded"), ("ready", "READY=1"),
                           ("rpc", "first RPC"), ("queue", "queue")):
            values = [r[key] for r in runs]
            median, p99 = median_p99(values)
            print(f"  {how:<10} {label:<10} {median:>7.3f} {p99:>7.3f} "
                  f"{min(values):>7.3f}")
    print(f"  the queue listing returned {runs[-1]['queue_jobs']} jobs; "
          f"state now {figures['state_mib'][1]:.0f} MiB; logs "
          "have the per-step timestamps")


if __name__ == "__main__":
    main()
