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

parser = argparse.ArgumentParser()
parser.add_argument("--build-dir", required=True)
parser.add_argument("--jobs", type=int, default=100_000)
parser.add_argument("--finished", type=float, default=0.5,
                    help="share of the jobs that are finished (cancelled)")
parser.add_argument("--runs", type=int, default=5,
                    help="restarts per way of stopping")
parser.add_argument("--auth", choices=["none", "munge"], default="munge")
parser.add_argument("--bare-environment", action="store_true",
                    help="submit with an almost empty environment (each job "
                    "otherwise carries the exported submit environment)")
args = parser.parse_args()
os.environ["GANTRY_BUILD_DIR"] = os.path.abspath(args.build_dir)


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


def fill(cluster, client):
    finished = int(args.jobs * args.finished)
    started = time.monotonic()
    if finished:
        client.fill(finished, "finished")
        user = pwd.getpwuid(os.getuid()).pw_name
        cluster.cli("cancel", "-u", user, timeout=300)
    client.fill(args.jobs - finished, "pending")
    jobs = cluster.status()["jobs"]
    if (jobs["pending"], jobs["finished"]) != (args.jobs - finished, finished):
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


def main():
    cluster = gantry_cluster.GantryCluster(agents=0, auth=args.auth,
                                           label="restart")
    notify = NotifyListener(os.path.join(cluster.dir, "notify.sock"))
    cluster.env["NOTIFY_SOCKET"] = notify.path
    try:
        cluster.start()
        client = bench_support.SubmitClient(cluster, args.auth,
                                            args.bare_environment)
        fill_seconds, jobs = fill(cluster, client)
        print(f"Restart benchmark: {bench_support.machine_line()}")
        print(f"  state: {jobs['pending']} pending + {jobs['finished']} "
              f"finished jobs, filled in {fill_seconds:.1f} s; "
              f"{state_size_mib(cluster.state_dir):.0f} MiB on disk "
              f"(each job carries the exported submit environment, "
              f"{len(''.join(f'{k}={v}' for k, v in client.env.items()))} "
              f"bytes in {len(client.env)} variables); --auth {args.auth}",
              flush=True)
        results = {}
        for how in ("SIGTERM", "kill -9"):
            results[how] = []
            for _ in range(args.runs):
                r = restart(cluster, client, notify, how)
                back = cluster.status()["jobs"]
                if (back["pending"], back["finished"]) != (
                        jobs["pending"], jobs["finished"]):
                    raise AssertionError(f"after the restart gantryd has {back}")
                results[how].append(r)
        print(f"  seconds from exec, {args.runs} restarts each "
              "(target: < 2 s to serving)")
        print(f"  {'stopped by':<10} {'milestone':<10} {'median':>7} "
              f"{'p99':>7} {'best':>7}")
        for how, runs in results.items():
            for key, label in (("loaded", "loaded"), ("ready", "READY=1"),
                               ("rpc", "first RPC"), ("queue", "queue")):
                values = [r[key] for r in runs]
                median, p99 = median_p99(values)
                print(f"  {how:<10} {label:<10} {median:>7.3f} {p99:>7.3f} "
                      f"{min(values):>7.3f}")
        print(f"  the queue listing returned {runs[-1]['queue_jobs']} jobs; "
              f"state now {state_size_mib(cluster.state_dir):.0f} MiB; logs "
              "have the per-step timestamps")
    finally:
        cluster.stop_processes()
        cluster.finish(False)


if __name__ == "__main__":
    main()
