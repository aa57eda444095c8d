"""A thousand real gantry-agent processes on one machine: heartbeats,
gangs of a thousand starting, failing and ending, and what gantryd's loop
does meanwhile.

One gantryd with its production timings (1 s heartbeats, nodes down after
3 s of silence) and --gang + --spares real gantry-agents on loopback, the
last --spares of them hot spares, each describing itself from the same
hwloc XML of a GPU server (as agent_fleet_bench.py). Then:

  start        seconds until every agent is up; the agents' RSS and PSS
  idle         over --window seconds of heartbeats only: gantryd's CPU and
               the agents' CPU (fractions of one core), the loop's lag
  gang rounds  --rounds times: one --gang-node job, one rank per node,
               each rank writing a file and sleeping;
                 submit to every rank running (the last file)
                 one node's agent killed (kill -9) to every rank of the
                   next attempt running on the survivors and a hot spare
                 `gantry cancel` to the job ended and every rank gone
                   (gantryd's "job ended" line)

Throughout, gantryd's loop: the most its 250 ms tick was late
(gantry_controller_loop_lag_max_seconds, /metrics) and the "controller
loop was stalled; extending node deadlines" lines in its log (each one
time that gantryd gave every node back time it had not listened: the
issue's "node deadlines extended by the controller's own slowness"), and
every other warning in any log. With --perf, `perf record` samples
gantryd over the gang rounds and the top of its report is printed.

Every process is stopped by pid at the end, on Ctrl-C and on errors.

Run: python3 tests/bench/thousand_agents_bench.py --build-dir build
       [--gang 1000] [--spares 16] [--rounds 3] [--window 30]
       [--hwloc-xml FILE] [--perf]
"""
import argparse
import glob
import os
import re
import resource
import shutil
import subprocess
import time

import bench_support
from agent_fleet_bench import (DEFAULT_HWLOC_XML, AgentFleet, print_warnings,
                               stop_on_sigterm)
from bench_support import gantry_cluster
from cpu_weight_groups import CpuWeightGroups

UNITS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                     "packaging", "systemd")

RANK_SCRIPT = """#!/bin/bash
{join_ranks_group}touch "ran.$SLURM_JOB_ID.$GANTRY_ATTEMPT.$SLURM_PROCID"
exec sleep infinity
"""
STALLED = 'msg="controller loop was stalled; extending node deadlines"'
NODE_DOWN = re.compile(r'msg="node down" node=(\S+) reason="([^"]*)"')
LAG_MAX = "gantry_controller_loop_lag_max_seconds"


def unit_cpu_weight(unit):
    """The CPUWeight= of a shipped unit (systemd's default, 100, where it
    sets none)."""
    with open(os.path.join(UNITS, unit)) as f:
        for line in f:
            if line.startswith("CPUWeight="):
                return int(line.split("=", 1)[1])
    return 100


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--gang", type=int, default=1000,
                        help="nodes of each gang (the fleet is --gang + "
                        "--spares agents)")
    parser.add_argument("--spares", type=int, default=16,
                        help="hot spares (at least 1)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--window", type=float, default=30.0,
                        help="seconds of heartbeats only")
    parser.add_argument("--hwloc-xml", default=DEFAULT_HWLOC_XML)
    parser.add_argument("--perf", action="store_true",
                        help="perf record gantryd over the gang rounds")
    parser.add_argument("--equal-weights", action="store_true",
                        help="gantryd, the agents and their ranks all in "
                        "one cgroup, each process one among thousands, "
                        "instead of with the CPU weights of the shipped "
                        "units (gantryd.service, gantry-agent.service)")
    args = parser.parse_args()
    if args.spares < 1:
        parser.error("--spares must be at least 1 (a killed node's ranks "
                     "restart on one)")
    os.environ["GANTRY_BUILD_DIR"] = os.path.abspath(args.build_dir)
    return args


class LoopWatch:
    """gantryd's loop lag (its /metrics maximum) and stall lines."""

    def __init__(self, cluster):
        self.cluster = cluster
        self.address = cluster.metrics_address()

    def lag_max_seconds(self):
        return bench_support.scrape_metrics(self.address, [LAG_MAX])[LAG_MAX]

    def stalls(self):
        return self.cluster.controller.log_text().count(STALLED)


def cpu_of(pids):
    total = 0.0
    for pid in pids:
        try:
            total += bench_support.cpu_seconds(pid)
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def idle_window(fleet, watch, seconds):
    """Heartbeats only: {"controller_core", "agents_core", "lag_max",
    "stalls"} over `seconds`."""
    cluster = fleet.cluster
    agent_pids = [d.pid for d in cluster.agents.values()]
    stalls = watch.stalls()
    controller = cluster.controller.pid
    c0, a0, t0 = (bench_support.cpu_seconds(controller), cpu_of(agent_pids),
                  time.monotonic())
    time.sleep(seconds)
    elapsed = time.monotonic() - t0
    return {
        "controller_core": (bench_support.cpu_seconds(controller) - c0) /
        elapsed,
        "agents_core": (cpu_of(agent_pids) - a0) / elapsed,
        "lag_max": watch.lag_max_seconds(),
        "stalls": watch.stalls() - stalls,
    }


def full_attempt(cluster, job, gang, after):
    """The latest attempt above `after` of which every one of the `gang`
    ranks has started (its file), or None."""
    counts = {}
    for path in glob.glob(cluster.path(f"ran.{job}.*")):
        attempt = int(path.rsplit(".", 2)[-2])
        counts[attempt] = counts.get(attempt, 0) + 1
    full = [a for a, n in counts.items() if a > after and n >= gang]
    return max(full) if full else None


def wait_full_attempt(cluster, job, gang, after, what):
    try:
        return gantry_cluster.wait_for(
            lambda: full_attempt(cluster, job, gang, after), 300, what, 0.02)
    except AssertionError as timed_out:
        record = cluster.job(job)
        raise AssertionError(
            f"{timed_out}: the job is {record['state']} (attempt "
            f"{record['attempt']}, {record.get('reason')}: "
            f"{record.get('reason_detail')})") from None


def gang_round(fleet, gang, script):
    """One gang: returns {"start", "restart", "end"} in seconds, the job,
    the node killed, and the attempts the job made."""
    cluster = fleet.cluster
    submitted = time.monotonic()
    job = cluster.submit(script, "-N", str(gang), "--exclusive",
                         "--max-restarts=5", "-o", "/dev/null")
    first = wait_full_attempt(cluster, job, gang, 0,
                              f"every rank of job {job}")
    started = time.monotonic() - submitted
    record = cluster.job(job)
    victim = gantry_cluster.expand_hostlist(record["nodelist"])[-1]
    fleet.killed.add(victim)
    cluster.kill_agent(victim)
    killed = time.monotonic()
    wait_full_attempt(cluster, job, gang, first,
                      f"every rank of job {job} running again")
    restarted = time.monotonic() - killed
    cancelled = time.monotonic()
    cluster.cli("cancel", str(job))
    gantry_cluster.wait_for(lambda: job in fleet.job_end_times(), 300,
                            f"job {job}'s \"job ended\" line", 0.05)
    ended = time.monotonic() - cancelled
    attempts = cluster.job(job)["attempt"]
    # The fleet whole again for the next gang: hot spares only take
    # restarts, so a gang of every other node needs the lost one back (and
    # any other that was drained).
    agent = cluster.start_agent(victim)
    if fleet.cpu_groups:
        fleet.cpu_groups.add("agents", agent.pid)
    cluster.wait_nodes_up([victim], timeout=60)
    drained = [name for name, node in cluster.nodes().items()
               if node.get("drained")]
    if drained:
        cluster.cli("resume", *drained)
    return {"start": started, "restart": restarted, "end": ended,
            "job": job, "victim": victim, "attempts": attempts}


def perf_start(pid, path):
    if shutil.which("perf") is None:
        print("  (perf is not installed: no profile)")
        return None
    return subprocess.Popen(
        ["perf", "record", "-F", "499", "-g", "-p", str(pid), "-o", path],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def perf_report(recorder, path):
    if recorder is None:
        return
    recorder.send_signal(2)
    recorder.wait(timeout=60)
    report = subprocess.run(
        ["perf", "report", "-i", path, "--no-children", "--sort",
         "symbol", "--stdio", "-g", "none", "--percent-limit", "1.5"],
        capture_output=True, text=True, timeout=300).stdout
    print("  gantryd's profile over the gang rounds (perf, self time):")
    for line in report.splitlines():
        if line.strip() and not line.startswith("#"):
            print("    " + " ".join(line.split()[:3]))


def main():
    stop_on_sigterm()
    args = parse_args()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    # As gantryd.service's LimitNOFILE: a thousand agent streams.
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))
    total = args.gang + args.spares
    width = max(3, len(str(total)))
    spares = (f"node[{args.gang + 1:0{width}d}-{total:0{width}d}]"
              if args.spares else None)
    print(f"Thousand agents benchmark: {bench_support.machine_line()}")
    # As deployed: gantryd's unit's weight; the agents' unit's, and their
    # ranks in a sibling group (as the job cgroups an agent makes on a
    # cgroup v2 host are siblings of its own leaf; here the rank script
    # moves itself, since --cgroups is off to measure what Slurm's anchor
    # measures). The one rig difference left: a thousand nodes' agents,
    # and their ranks, share two cores.
    weights = {"controller": unit_cpu_weight("gantryd.service"),
               "agents": unit_cpu_weight("gantry-agent.service"),
               "ranks": unit_cpu_weight("gantry-agent.service")}
    if args.equal_weights:
        print("  gantryd, agents and ranks in one cgroup, equal weights")
        groups = None
    else:
        print(f"  CPU weights as the units give them: gantryd "
              f"{weights['controller']}, the agents {weights['agents']}, "
              f"their ranks {weights['ranks']} (cgroups of their own)")
        try:
            groups = CpuWeightGroups(f"gantry-bench-{os.getpid()}", weights)
        except (OSError, RuntimeError) as cannot:
            raise SystemExit(f"cannot weigh the processes with cgroups "
                             f"({cannot}); run as root, or pass "
                             f"--equal-weights") from None
    try:
        run(args, total, spares, groups)
    finally:
        if groups:
            groups.remove()


def run(args, total, spares, groups):
    with AgentFleet(total, args.hwloc_xml, hot_spares=spares,
                    controller_metrics=True, cpu_groups=groups) as fleet:
        cluster = fleet.cluster
        fleet.killed = set()  # nodes whose agent a round killed
        watch = LoopWatch(cluster)
        rss, pss = fleet.agents_memory_mib()
        print(f"  {total} gantry-agents ({args.spares} hot spares) up in "
              f"{fleet.start_seconds:.1f} s; RSS {rss / total:.1f} MiB per "
              f"agent (PSS {pss / total:.1f}); loop lag so far at most "
              f"{watch.lag_max_seconds() * 1000:.0f} ms, "
              f"{watch.stalls()} stalls")
        idle = idle_window(fleet, watch, args.window)
        print(f"  heartbeats only, {args.window:.0f} s: gantryd "
              f"{idle['controller_core']:.3f} core, all agents "
              f"{idle['agents_core']:.3f} core; loop lag at most "
              f"{idle['lag_max'] * 1000:.0f} ms; {idle['stalls']} stalls")
        join = (f"echo $$ > {fleet.cpu_groups.procs_file('ranks')}\n"
                if fleet.cpu_groups else "")
        script = cluster.write_script(
            "rank.sh", RANK_SCRIPT.format(join_ranks_group=join))
        profile = os.path.join(cluster.dir, "perf.data")
        recorder = perf_start(cluster.controller.pid, profile) \
            if args.perf else None
        stalls_before = watch.stalls()
        cpu_before = fleet.controller_cpu_seconds()
        rounds_started = time.monotonic()
        rounds = []
        for _ in range(args.rounds):
            try:
                rounds.append(gang_round(fleet, args.gang, script))
            except AssertionError as failed:
                # A round that never got its gang running again (nodes
                # declared down faster than they came back): said, and the
                # figures of the run so far still printed.
                print(f"  ROUND FAILED: {failed}")
                break
            r = rounds[-1]
            print(f"  gang of {args.gang} (job {r['job']}): every rank "
                  f"running {r['start']:.2f} s after submit; {r['victim']}'s "
                  f"agent killed -> every rank running again "
                  f"{r['restart']:.2f} s later; cancel -> ended "
                  f"{r['end']:.2f} s; {r['attempts']} attempts")
        elapsed = time.monotonic() - rounds_started
        print(f"  over the gang rounds: gantryd "
              f"{(fleet.controller_cpu_seconds() - cpu_before) / elapsed:.3f}"
              f" core; loop lag at most {watch.lag_max_seconds() * 1000:.0f}"
              f" ms over the whole run; {watch.stalls() - stalls_before} "
              f"stalls in the rounds, {watch.stalls()} in all")
        wrongly_down = [(name, why) for name, why in NODE_DOWN.findall(
            cluster.controller.log_text()) if name not in fleet.killed]
        print(f"  nodes declared down that were not killed: "
              f"{len(wrongly_down)}"
              + (f" ({sorted(set(why for _, why in wrongly_down))})"
                 if wrongly_down else ""))
        perf_report(recorder, profile)
        rss, pss = fleet.agents_memory_mib()
        alive = sum(1 for d in cluster.agents.values() if d.running())
        print(f"  at the end: RSS {rss / alive:.1f} MiB per agent (PSS "
              f"{pss / alive:.1f})")
        warnings = fleet.warnings()
        print_warnings(warnings)


if __name__ == "__main__":
    main()
