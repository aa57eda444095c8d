"""Pre-flight benchmark: the time of a job's pre-flight gang check (from
the attempt's start to the verdict, as the attempt records it) for jobs of
16 and 64 nodes on loopback, each node a real gantry-agent on its own
127.0.X.N address (the TCP ring moves --megabytes per node for real), and
the same sizes on simulated nodes (gantry-fleet, whose checks
answer after --simulated-ms: the controller's side alone). With real
agents it runs once with the gloo all-reduce off and, where python3 has
torch, once with it on.

Prints per size and mode the median and worst over --rounds jobs, the
time from submission to every rank running, and how many nodes the checks
swapped out (the clusters have 4 spare nodes for that; a loaded host can
starve one agent long enough to look slow).

Run: python3 tests/bench/preflight_bench.py --build-dir build
     [--sizes 16,64] [--rounds 3] [--megabytes 4] [--modes real,gloo,simulated]
"""
import argparse
import os
import subprocess
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
from gantry_cluster import GantryCluster  # noqa: E402
from test_simulated_fleet import start_fleet  # noqa: E402
from bench_support import machine_line  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--build-dir", required=True)
parser.add_argument("--sizes", default="16,64")
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--megabytes", type=float, default=4.0)
parser.add_argument("--simulated-ms", type=int, default=200)
parser.add_argument("--modes", default="real,gloo,simulated")
args = parser.parse_args()
SPARES = 4
os.environ["GANTRY_BUILD_DIR"] = os.path.abspath(args.build_dir)


def has_torch():
    """Whether the agents' python3 (/usr/bin/python3) has torch, as the
    agent finds it."""
    return subprocess.run(
        ["/usr/bin/python3", "-c", "import importlib.util, sys; "
         "sys.exit(0 if importlib.util.find_spec('torch') else 1)"],
        check=False).returncode == 0


def preflight_seconds(cluster, nodes, simulated):
    """Runs one job of `nodes` nodes; returns (pre-flight s, submit to
    every rank running s)."""
    script = cluster.write_script("bench.sh", "#!/bin/bash\nsleep 0.2\n")
    if simulated:
        cluster.env["GANTRY_SIMULATED_SECONDS"] = "0.2"
    began = time.monotonic()
    job_id = cluster.submit(script, "-N", str(nodes))
    job = cluster.wait_job(job_id, "RUNNING", "COMPLETED", timeout=120)
    while not job["attempts"][-1]["preflight"] or \
            "seconds" not in job["attempts"][-1]["preflight"]:
        time.sleep(0.05)
        job = cluster.job(job_id)
    ready = time.monotonic() - began
    job = cluster.wait_job(job_id, "COMPLETED", timeout=120)
    first = job["attempts"][0]["preflight"]
    # A node swapped out (a loaded host can starve one agent for long
    # enough to look slow) is reported, not hidden: the spares take over.
    swapped = [f"{s['node']}: {s['reason']}" for s in first["swapped"]]
    return first["seconds"], ready, first["summary"], swapped


def run(mode, nodes):
    simulated = mode == "simulated"
    gantryd_args = ["--preflight", "all", "--preflight-timeout", "30",
                    "--preflight-megabytes", str(args.megabytes),
                    "--preflight-gloo", "auto" if mode == "gloo" else "off"]
    # SPARES more nodes than the job needs, so that a swap finds one.
    cluster = GantryCluster(agents=0 if simulated else nodes + SPARES,
                            heartbeat_interval=1.0, node_timeout=10.0,
                            gantryd_args=gantryd_args, label="preflight-bench")
    figures = []
    try:
        cluster.start()
        if simulated:
            start_fleet(cluster, nodes + SPARES, "--preflight-ms",
                        str(args.simulated_ms))
            cluster.wait_nodes_up(
                [f"sim{i:05d}" for i in range(1, nodes + SPARES + 1)],
                timeout=60)
        for _ in range(args.rounds):
            figures.append(preflight_seconds(cluster, nodes, simulated))
            print(f"  {mode} {nodes} nodes: pre-flight "
                  f"{figures[-1][0]:.2f} s, submit to ranks "
                  f"{figures[-1][1]:.2f} s ({figures[-1][2]})", flush=True)
            for line in figures[-1][3]:
                print(f"    swapped out {line}", flush=True)
    finally:
        cluster.stop_processes()
    return figures


results = []
for mode in args.modes.split(","):
    if mode == "gloo" and not has_torch():
        print("gloo: python3 has no torch here; skipped")
        continue
    for size in (int(s) for s in args.sizes.split(",")):
        figures = run(mode, size)
        checks = [f[0] for f in figures]
        ready = [f[1] for f in figures]
        results.append((mode, size, statistics.median(checks), max(checks),
                        statistics.median(ready),
                        sum(len(f[3]) for f in figures)))

print(machine_line())
print(f"pre-flight gang check, {args.rounds} jobs each, "
      f"{args.megabytes:g} MB per node in the TCP ring:")
labels = {"real": "real agents, TCP ring",
          "gloo": "real agents, TCP ring + gloo all-reduce",
          "simulated": f"simulated nodes ({args.simulated_ms} ms answers)"}
for mode, size, median, worst, ready, swapped in results:
    print(f"  {labels[mode]:45} {size:3} nodes: median {median:.2f} s, "
          f"worst {worst:.2f} s; submit to ranks running {ready:.2f} s; "
          f"{swapped} node(s) swapped out")
