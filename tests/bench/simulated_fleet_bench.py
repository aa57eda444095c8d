"""Simulated-fleet benchmark: what a large fleet costs the controller, and
how fast the controller starts a big gang on it.

For each fleet size (default 1,000 / 4,000 / 10,000 nodes) it starts a
fresh gantryd (1 s heartbeats, the product's 3 s node timeout) and one
`gantry-fleet --nodes N`, waits until every node is up, lets it settle,
and then measures over a window:
  gantryd CPU   fraction of one core, from utime+stime in /proc/PID/stat
  gantryd RSS   VmRSS at the end of the window (and VmHWM, the peak)
  fleet CPU/RSS the same for the gantry-agent process, for reference
  flaps         nodes the controller declared down during the window
                (heartbeats it did not hear in time; should be 0)
Then, on the same cluster, the gang start: a 256-node job (one rank per
node, GANTRY_SIMULATED_SECONDS=inf) submitted with `gantry batch`, from
just before the CLI runs to the moment the fleet has started every rank
(its "every rank of a simulated job started" log line), over repetitions;
also from the CLI's acknowledgement to that moment. Each job is cancelled,
and its ranks have ended, before the next is submitted.

Targets (issue #8): 10,000 nodes at 1 Hz under half a core and under
1 GiB RSS; 256-node gang start under 200 ms. This prints the figures; it
asserts nothing about them.

Run: python3 tests/bench/simulated_fleet_bench.py --build-dir build
       [--sizes 1000,4000,10000] [--window 10] [--gang-runs 20]
       [--heartbeat-interval 1.0] [--nodes-per-connection 1]
       [--auth none|munge]
"""
import argparse
import os
import re
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
import gantry_cluster  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--build-dir", required=True)
parser.add_argument("--sizes", default="1000,4000,10000",
                    help="fleet sizes, comma-separated")
parser.add_argument("--window", type=float, default=10.0,
                    help="seconds over which CPU is measured")
parser.add_argument("--settle", type=float, default=5.0,
                    help="seconds to wait after every node is up")
parser.add_argument("--gang-nodes", type=int, default=256)
parser.add_argument("--gang-runs", type=int, default=20,
                    help="gang starts per fleet size (0: none)")
parser.add_argument("--heartbeat-interval", type=float, default=1.0,
                    help="gantryd --heartbeat-interval (a site with 100,000 "
                    "nodes would set more than 1 s, as Slurm pings its "
                    "nodes every 100 s by default)")
parser.add_argument("--node-timeout", type=float, default=None,
                    help="gantryd --node-timeout (default: 3 heartbeats, "
                    "at least 3 s)")
parser.add_argument("--nodes-per-connection", type=int, default=1,
                    help="gantry-fleet --nodes-per-connection (one "
                    "TCP connection per node is what real agents make; "
                    "100,000 need more file descriptors than a test "
                    "machine allows)")
parser.add_argument("--threads", type=int, default=2,
                    help="gantry-fleet --threads")
parser.add_argument("--auth", choices=["none", "munge"], default="none")
args = parser.parse_args()
os.environ["GANTRY_BUILD_DIR"] = os.path.abspath(args.build_dir)
if args.node_timeout is None:
    args.node_timeout = max(3.0, 3 * args.heartbeat_interval)

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
GANG_LINE = re.compile(
    r'msg="every rank of a simulated job started" job=(\d+) attempt=\d+ '
    r'ranks=\d+ unix_ms=(\d+)')


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime


def memory_mib(pid):
    """(VmRSS, VmHWM) in MiB."""
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0]) / 1024
    return values["VmRSS"], values["VmHWM"]


def nodes_up(cluster):
    status = cluster.cli_json("status")
    nodes = status.get("nodes")
    return nodes["up"] if isinstance(nodes, dict) else status["nodes_up"]


def percentile(values, fraction):
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, int(round(fraction * len(ordered) + 0.4999)))
    return ordered[min(rank, len(ordered)) - 1]


def start_fleet(cluster, nodes):
    return cluster.start_fleet(nodes, "--threads", str(args.threads),
                               "--nodes-per-connection",
                               str(args.nodes_per_connection))


def gang_starts(cluster, fleet):
    """[(submit->all running, ack->all running)] in seconds."""
    script = cluster.write_script("gang.sh", "#!/bin/bash\ntrue\n")
    # Ranks run until cancelled, so that however long the launch takes
    # every rank is running at once at its end.
    cluster.env["GANTRY_SIMULATED_SECONDS"] = "inf"
    results = []
    for _ in range(args.gang_runs):
        before = time.time()
        job_id = cluster.submit(script, "-N", str(args.gang_nodes),
                                "--ntasks-per-node=1")
        acknowledged = time.time()

        def started():
            for match in GANG_LINE.finditer(fleet.log_text()):
                if int(match.group(1)) == job_id:
                    return int(match.group(2)) / 1000.0
            return None

        running = gantry_cluster.wait_for(started, 30, f"job {job_id} to run",
                                          interval=0.01)
        results.append((running - before, running - acknowledged))
        cluster.cli("cancel", str(job_id))
        # Every rank's exit in, so the nodes are free for the next run.
        gantry_cluster.wait_for(
            lambda: len(cluster.job(job_id)["rank_exits"]) == args.gang_nodes,
            60, f"the ranks of job {job_id} to end")
    return results


def one_size(nodes):
    cluster = gantry_cluster.GantryCluster(
        agents=0, heartbeat_interval=args.heartbeat_interval,
        node_timeout=args.node_timeout,
        auth=args.auth, label=f"fleet-{nodes}")
    try:
        cluster.start()
        started = time.monotonic()
        fleet = start_fleet(cluster, nodes)
        gantry_cluster.wait_for(lambda: nodes_up(cluster) == nodes,
                                120 + nodes / 20, f"{nodes} nodes up", 0.5)
        register_s = time.monotonic() - started
        time.sleep(args.settle)
        downs_before = cluster.controller.log_text().count('msg="node down"')
        pids = {"gantryd": cluster.controller.pid, "fleet": fleet.pid}
        cpu0 = {k: cpu_seconds(p) for k, p in pids.items()}
        t0 = time.monotonic()
        time.sleep(args.window)
        elapsed = time.monotonic() - t0
        cpu = {k: (cpu_seconds(p) - cpu0[k]) / elapsed for k, p in pids.items()}
        memory = {k: memory_mib(p) for k, p in pids.items()}
        flaps = cluster.controller.log_text().count('msg="node down"') - downs_before
        up_after = nodes_up(cluster)
        gang = gang_starts(cluster, fleet) if args.gang_runs > 0 else []
        return {"nodes": nodes, "register_s": register_s, "cpu": cpu,
                "memory": memory, "flaps": flaps, "up_after": up_after,
                "gang": gang}
    finally:
        cluster.stop_processes()
        cluster.finish(False)


def main():
    sizes = [int(s) for s in args.sizes.split(",") if s]
    print(f"Simulated fleet benchmark: gantryd --heartbeat-interval "
          f"{args.heartbeat_interval} --node-timeout {args.node_timeout} "
          f"--auth {args.auth}; gantry-fleet --nodes N --threads "
          f"{args.threads} --nodes-per-connection "
          f"{args.nodes_per_connection}; "
          f"{os.cpu_count()} CPUs; {time.strftime('%Y-%m-%d %H:%M')}",
          flush=True)
    results = []
    for nodes in sizes:
        result = one_size(nodes)
        results.append(result)
        r = result
        print(f"  {nodes:>6} nodes: registered in {r['register_s']:.1f} s; "
              f"gantryd {r['cpu']['gantryd']:.3f} core, "
              f"RSS {r['memory']['gantryd'][0]:.0f} MiB "
              f"(peak {r['memory']['gantryd'][1]:.0f}); "
              f"fleet {r['cpu']['fleet']:.3f} core, "
              f"RSS {r['memory']['fleet'][0]:.0f} MiB; "
              f"{r['flaps']} node(s) down in the window, "
              f"{r['up_after']} up after", flush=True)
    print()
    print(f"Controller at one heartbeat per node every "
          f"{args.heartbeat_interval:g} s, {args.window:.0f} s window "
          "(target at 10,000 nodes: < 0.5 core, < 1024 MiB)")
    print(f"  {'nodes':>6} {'register_s':>10} {'cpu_core':>9} "
          f"{'rss_MiB':>8} {'peak_MiB':>9} {'fleet_cpu':>9} "
          f"{'fleet_MiB':>9} {'flaps':>6}")
    for r in results:
        print(f"  {r['nodes']:>6} {r['register_s']:>10.1f} "
              f"{r['cpu']['gantryd']:>9.3f} {r['memory']['gantryd'][0]:>8.0f} "
              f"{r['memory']['gantryd'][1]:>9.0f} {r['cpu']['fleet']:>9.3f} "
              f"{r['memory']['fleet'][0]:>9.0f} {r['flaps']:>6}")
    if args.gang_runs > 0:
        print()
        print(f"Gang start: {args.gang_nodes} nodes x 1 rank, {args.gang_runs} "
              "runs per fleet (target: < 200 ms)")
        print(f"  {'fleet':>6} {'submit->running median':>23} {'p99':>8} "
              f"{'ack->running median':>20} {'p99':>8}")
        for r in results:
            total = [g[0] * 1000 for g in r["gang"]]
            after_ack = [g[1] * 1000 for g in r["gang"]]
            print(f"  {r['nodes']:>6} {statistics.median(total):>20.1f} ms "
                  f"{percentile(total, 0.99):>5.1f} ms "
                  f"{statistics.median(after_ack):>17.1f} ms "
                  f"{percentile(after_ack, 0.99):>5.1f} ms")


if __name__ == "__main__":
    main()
