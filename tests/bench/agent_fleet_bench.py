"""Short jobs and gang starts on a fleet of real gantry-agent processes.

One gantryd and --nodes gantry-agents (node001, node002, ...) on loopback,
each agent describing itself from the same hwloc XML of a GPU server
(--hwloc-xml: no GPU, no root cgroup needed; --cgroups off by default, as
Slurm's anchor runs proctrack/pgid and task/none), gantryd with its
production timings (1 s heartbeats, nodes down after 3 s of silence).
What it measures mirrors the Slurm anchor lab
(../shared/tools/slurm-anchor/run.sh):

  held submissions  --jobs `gantry batch --hold --exclusive true`
                    processes one after another (cancelled afterwards), and
                    --jobs with 4 at a time, as the anchor's `sbatch
                    --hold`; submissions per second
  throughput        those 4-at-a-time jobs released at once (`gantry
                    release ID...`, the anchor's `scontrol release`); from
                    just before the release to the last "job ended" line of
                    gantryd's log, jobs per second (one job per node at a
                    time: --exclusive)
  submit to start   from just before `gantry batch` to the batch script's
                    first `date +%s.%N` (1 node) and to the last rank's
                    (N nodes, --exclusive, the script starting
                    `gantry run --ntasks-per-node=1 date +%s.%N`); median
                    and p99 over the repetitions

Every process is stopped by pid at the end, on Ctrl-C and on errors.

Run: python3 tests/bench/agent_fleet_bench.py --build-dir build
       [--nodes 128] [--jobs 1000] [--reps 3] [--sizes 1,16,64]
       [--latency-reps 10] [--hwloc-xml FILE] [--cgroups off|auto]
"""
import argparse
import datetime
import os
import pwd
import re
import signal
import statistics
import time

import bench_support
import submit_bench
from bench_support import gantry_cluster, median_p99

SHARED_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "..", "..", "..", "shared", "data")
DEFAULT_HWLOC_XML = os.path.join(SHARED_DATA, "hwloc",
                                 "dell-xe8640-4xH100-ndr.flux-ipa20.v2.xml")

SHORT_JOB_SCRIPT = "#!/bin/bash\ntrue\n"
BATCH_TIMESTAMP_SCRIPT = "#!/bin/bash\ndate +%s.%N\n"
STEP_TIMESTAMP_SCRIPT = """#!/bin/bash
date +%s.%N
{gantry} run --ntasks-per-node=1 date +%s.%N
"""

JOB_ENDED = re.compile(r'^ts=(\S+) .*msg="job ended".* job=(\d+)\b',
                       re.MULTILINE)
WARNING = re.compile(r'^ts=\S+ level=(?:warn|error) .*?msg=("[^"]*"|\S+)',
                     re.MULTILINE)
# What the benchmark itself causes.
EXPECTED_WARNINGS = frozenset({"job cgroups are off (--cgroups=off)"})


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", required=True)
    add_fleet_options(parser)
    args = parser.parse_args()
    os.environ["GANTRY_BUILD_DIR"] = os.path.abspath(args.build_dir)
    return args


def add_fleet_options(parser):
    """The options of this benchmark (slurm_side_by_side.py takes them
    too)."""
    parser.add_argument("--nodes", type=int, default=128,
                        help="gantry-agent processes")
    parser.add_argument("--jobs", type=int, default=1000,
                        help="held submissions per repetition")
    parser.add_argument("--reps", type=int, default=3,
                        help="repetitions of the submissions and throughput")
    parser.add_argument("--sizes", default="1,16,64",
                        help="node counts of the submit-to-start jobs")
    parser.add_argument("--latency-reps", type=int, default=10,
                        help="submit-to-start samples per size")
    parser.add_argument("--hwloc-xml", default=DEFAULT_HWLOC_XML,
                        help="topology every agent reports")
    parser.add_argument("--cgroups", choices=["off", "auto"], default="off",
                        help="gantry-agent --cgroups")


def stop_on_sigterm():
    """SIGTERM unwinds like Ctrl-C, so that the finally blocks stop what
    was started."""
    def interrupt(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, interrupt)


class AgentFleet:
    """A GantryCluster whose nodes are `nodes` real gantry-agents started
    from `hwloc_xml`. Use as a context manager: leaving it stops every
    process it started, by pid, and removes its temp dir."""

    def __init__(self, nodes, hwloc_xml, cgroups="off", auth="munge",
                 hot_spares=None, controller_metrics=False, cpu_groups=None):
        """hot_spares: gantryd's --hot-spares (a hostlist of these nodes).
        controller_metrics: gantryd serves /metrics (on a port the kernel
        picks; the agents serve none, as by default). cpu_groups: a
        CpuWeightGroups (cpu_weight_groups.py) with groups "controller"
        and "agents", where gantryd and the agents go as they start (and
        so their ranks, unless they move themselves)."""
        if not os.path.exists(hwloc_xml):
            raise RuntimeError(f"no hwloc XML at {hwloc_xml} (shared data)")
        self.cluster = gantry_cluster.GantryCluster(
            agents=0, auth=auth, heartbeat_interval=1.0, node_timeout=3.0,
            reconnect_grace=30.0, kill_grace=10, restart_backoff=1.0,
            hot_spares=hot_spares, metrics=controller_metrics,
            label=f"fleet-{nodes}")
        width = max(3, len(str(nodes)))
        self.names = [f"node{i:0{width}d}" for i in range(1, nodes + 1)]
        self.hwloc_xml = os.path.abspath(hwloc_xml)
        self.cgroups = cgroups
        self.cpu_groups = cpu_groups
        self.start_seconds = None

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *_):
        self.cluster.stop_processes()
        self.cluster.finish(False)

    def start(self):
        started = time.monotonic()
        self.cluster.start()
        if self.cpu_groups:
            self.cpu_groups.add("controller", self.cluster.controller.pid)
        # Only gantryd's /metrics: a thousand agents' listeners would be
        # what no site runs by default.
        self.cluster.metrics = False
        for name in self.names:
            self.cluster.agent_args[name] = [
                "--hwloc-xml", self.hwloc_xml, "--cgroups", self.cgroups]
            agent = self.cluster.start_agent(name)
            if self.cpu_groups:
                self.cpu_groups.add("agents", agent.pid)
        self.cluster.wait_nodes_up(self.names, timeout=60 + len(self.names))
        self.start_seconds = time.monotonic() - started

    def agents_memory_mib(self):
        """(RSS, PSS) of all agents together: RSS counts the shared
        libraries once per agent (as the anchor sums slurmd RSS), PSS
        splits them among the processes that map them. Agents no longer
        running are left out."""
        rss_kib = pss_kib = 0
        for daemon in self.cluster.agents.values():
            if not daemon.running():
                continue
            with open(f"/proc/{daemon.pid}/smaps_rollup") as rollup:
                for line in rollup:
                    if line.startswith("Rss:"):
                        rss_kib += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss_kib += int(line.split()[1])
        return rss_kib / 1024, pss_kib / 1024

    def warnings(self):
        """{(daemon, message): count} of the warning and error lines in
        the logs, "agents" standing for all agents, less
        EXPECTED_WARNINGS."""
        counts = {}
        daemons = [("gantryd", self.cluster.controller)] + [
            ("agents", d) for d in self.cluster.agents.values()]
        for role, daemon in daemons:
            for match in WARNING.finditer(daemon.log_text()):
                message = match.group(1).strip('"')
                if message not in EXPECTED_WARNINGS:
                    key = (role, message)
                    counts[key] = counts.get(key, 0) + 1
        return counts

    def controller_cpu_seconds(self):
        return bench_support.cpu_seconds(self.cluster.controller.pid)

    def release(self, job_ids):
        """`gantry release` of held jobs, 200 ids a call (as the anchor
        releases them with scontrol)."""
        for start in range(0, len(job_ids), 200):
            self.cluster.cli("release",
                             *[str(j) for j in job_ids[start:start + 200]],
                             timeout=120)

    def wait_queue_empty(self, timeout, interval=0.5):
        """Waits until no job is pending or running (polled gently: each
        listing is work for gantryd)."""
        gantry_cluster.wait_for(
            lambda: not self.cluster.cli_json("queue")["jobs"], timeout,
            "the queue to empty", interval)

    def job_states(self, job_ids):
        """{state: count} of `job_ids`."""
        wanted = set(job_ids)
        counts = {}
        for job in self.cluster.cli_json("queue", "-a")["jobs"]:
            if job["job_id"] in wanted:
                counts[job["state"]] = counts.get(job["state"], 0) + 1
        return counts

    def job_end_times(self):
        """{job id: unix time of its "job ended" log line}."""
        ends = {}
        for match in JOB_ENDED.finditer(self.cluster.controller.log_text()):
            when = datetime.datetime.strptime(match.group(1),
                                              "%Y-%m-%dT%H:%M:%S.%f%z")
            ends[int(match.group(2))] = when.timestamp()
        return ends


def held_submissions(fleet, jobs, reps):
    """The anchor's submit_serial and submit_par_drain phases. Returns
    {"serial": [rates], "parallel": [rates], "throughput": [jobs/s],
    "drain_seconds": [s], "not_completed": {state: count}, "controller_cpu":
    seconds of gantryd CPU over it all}."""
    cluster = fleet.cluster
    script = cluster.write_script("short.sh", SHORT_JOB_SCRIPT)
    options = ("--hold", "--exclusive", "-o", "/dev/null")
    figures = {"serial": [], "parallel": [], "throughput": [],
               "drain_seconds": [], "not_completed": {}}
    cpu_before = fleet.controller_cpu_seconds()
    for _ in range(reps):
        rate, _, _ = submit_bench.cli_submissions(
            cluster, script, jobs, 1, ("-J", "serial", *options),
            per_task=False)
        figures["serial"].append(rate)
        cluster.cli("cancel", "-u", pwd.getpwuid(os.getuid()).pw_name,
                    "-t", "PD", timeout=120)
        fleet.wait_queue_empty(120)
    for _ in range(reps):
        rate, _, job_ids = submit_bench.cli_submissions(
            cluster, script, jobs, 4, ("-J", "parallel", *options),
            per_task=False)
        figures["parallel"].append(rate)
        released_at = time.time()
        fleet.release(job_ids)
        fleet.wait_queue_empty(900)
        ends = fleet.job_end_times()
        last_end = max(ends.get(j, time.time()) for j in job_ids)
        figures["drain_seconds"].append(last_end - released_at)
        figures["throughput"].append(jobs / (last_end - released_at))
        for state, count in fleet.job_states(job_ids).items():
            if state != "COMPLETED":
                figures["not_completed"][state] = (
                    figures["not_completed"].get(state, 0) + count)
    figures["controller_cpu"] = fleet.controller_cpu_seconds() - cpu_before
    return figures


def read_timestamps(path):
    try:
        with open(path) as f:
            return [float(line) for line in f if line.strip()]
    except (FileNotFoundError, ValueError):
        return []


def submit_to_start(fleet, nodes, sample):
    """One sample: seconds from just before `gantry batch` to the batch
    script's start, and to the last rank's start (None for one node)."""
    cluster = fleet.cluster
    if nodes == 1:
        script = cluster.write_script("stamp1.sh", BATCH_TIMESTAMP_SCRIPT)
        options = ["-N", "1"]
    else:
        script = cluster.write_script(
            "stamp.sh", STEP_TIMESTAMP_SCRIPT.format(gantry=cluster.cli_bin))
        options = ["-N", str(nodes), "--exclusive"]
    out = cluster.path(f"stamps.{nodes}.{sample}")
    submitted_at = time.time()
    job_id = cluster.submit(script, *options, "-J", f"lat{nodes}", "-o", out,
                            per_task=False)
    expected = 1 if nodes == 1 else 1 + nodes
    gantry_cluster.wait_for(lambda: len(read_timestamps(out)) >= expected,
                            120, f"{expected} timestamps from job {job_id}",
                            0.02)
    cluster.wait_job(job_id, "COMPLETED", timeout=120)
    stamps = read_timestamps(out)
    batch_start = stamps[0] - submitted_at
    all_ranks = None if nodes == 1 else max(stamps[1:]) - submitted_at
    return batch_start, all_ranks


def latency(fleet, sizes, reps):
    """{nodes: {"batch": [s], "ranks": [s]}} over `reps` samples each,
    a second apart as in the anchor."""
    figures = {}
    for nodes in sizes:
        batch, ranks = [], []
        for sample in range(reps):
            to_batch, to_ranks = submit_to_start(fleet, nodes, sample)
            batch.append(to_batch)
            if to_ranks is not None:
                ranks.append(to_ranks)
            time.sleep(1)
        figures[nodes] = {"batch": batch, "ranks": ranks}
    return figures


def measure(args):
    """Everything above on one fleet. Returns {"start_seconds",
    "agents_memory_mib": [(RSS, PSS) at the start, at the end], "held":
    held_submissions(), "latency": latency(), "warnings":
    AgentFleet.warnings()}."""
    sizes = [int(n) for n in args.sizes.split(",") if n]
    with AgentFleet(args.nodes, args.hwloc_xml, args.cgroups) as fleet:
        figures = {"start_seconds": fleet.start_seconds,
                   "agents_memory_mib": [fleet.agents_memory_mib()]}
        figures["latency"] = latency(fleet, sizes, args.latency_reps)
        figures["held"] = held_submissions(fleet, args.jobs, args.reps)
        figures["agents_memory_mib"].append(fleet.agents_memory_mib())
        figures["warnings"] = fleet.warnings()
        return figures


def describe(values, unit):
    """Median, p99 and best of durations."""
    median, p99 = median_p99(values)
    return (f"median {median:.3f} {unit}, p99 {p99:.3f}, "
            f"best {min(values):.3f} (n={len(values)})")


def describe_rates(values, unit):
    """Median and slowest of rates."""
    return (f"median {statistics.median(values):.1f} {unit}, slowest "
            f"{min(values):.1f} (n={len(values)})")


def main():
    stop_on_sigterm()
    args = parse_args()
    figures = measure(args)
    held = figures["held"]
    (rss, pss), (rss_end, pss_end) = figures["agents_memory_mib"]
    print(f"Agent fleet benchmark: {bench_support.machine_line()}")
    print(f"  {args.nodes} gantry-agents ({os.path.basename(args.hwloc_xml)}, "
          f"--cgroups {args.cgroups}) up in {figures['start_seconds']:.1f} s; "
          f"all together RSS {rss:.0f} MiB (PSS {pss:.0f}) at the start, "
          f"{rss_end:.0f} MiB (PSS {pss_end:.0f}) at the end")
    print(f"  held submissions, {args.jobs} per repetition:")
    print(f"    serial      {describe_rates(held['serial'], 'jobs/s')}")
    print(f"    4 parallel  {describe_rates(held['parallel'], 'jobs/s')}")
    print(f"  throughput, {args.jobs} exclusive `true` jobs from release to "
          "all ended:")
    print(f"    {describe_rates(held['throughput'], 'jobs/s')}; "
          f"{describe(held['drain_seconds'], 's')}")
    if held["not_completed"]:
        print(f"    NOT COMPLETED: {held['not_completed']}")
    print(f"  gantryd CPU over the submissions and throughput: "
          f"{held['controller_cpu']:.1f} s")
    print("  submit to start:")
    for nodes, samples in figures["latency"].items():
        print(f"    {nodes:>3} node(s), batch script  "
              f"{describe(samples['batch'], 's')}")
        if samples["ranks"]:
            print(f"    {nodes:>3} nodes,   every rank    "
                  f"{describe(samples['ranks'], 's')}")
    print_warnings(figures["warnings"])


def print_warnings(warnings):
    if not warnings:
        print("  no warnings in the logs")
        return
    print("  warnings in the logs:")
    for (role, message), count in sorted(warnings.items()):
        print(f"    {role}: {message!r} x{count}")


if __name__ == "__main__":
    main()
