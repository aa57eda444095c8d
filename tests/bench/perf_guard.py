"""The performance guard (issue 36): a few figures of the benchmarks in a
size CI can afford, each checked against a stored baseline, so that a
change cannot make the hot paths several times slower unnoticed (wave 2's
features once cost 2-3x of the lead and nothing failed).

  scheduling pass   the scheduler core's pass over 10,000 pending jobs on
                    4,096 nodes, and one 512-node gang decision
                    (gantry-scheduler-bench): thread CPU time, median
  controller CPU    gantryd's CPU per job while 16 real agents run 300
                    exclusive `true` jobs released at once
  agent CPU         the agents' own CPU per job over the same jobs (not
                    their children's: the job scripts are the same work
                    whatever Gantry does)
  submit to start   `gantry batch` to the batch script's first line on one
                    node: median wall time of 7

CPU time is what the guard mostly checks: it barely moves when the machine
is shared with another test, where wall time does. Each figure fails when
it exceeds its baseline (tests/bench/perf_baseline.json, measured on a
2-core machine of the kind CI uses) by more than the factor stored beside
it; every figure is printed either way. After a change that is meant to
cost more, measure again and update the baseline in the same commit,
saying why.

Run: python3 tests/bench/perf_guard.py --build-dir build
       [--write-baseline FILE]   (prints figures and stores them)
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
import gantry_cluster  # noqa: E402
from bench_support import cpu_seconds, machine_line  # noqa: E402

BASELINE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "perf_baseline.json")
AGENTS = 16
JOBS = 300
LATENCY_SAMPLES = 7
SCHEDULER_REPETITIONS = 20


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--write-baseline", metavar="FILE",
                        help="store the figures measured as a baseline")
    args = parser.parse_args()
    os.environ["GANTRY_BUILD_DIR"] = os.path.abspath(args.build_dir)
    return args


def scheduler_figures(build_dir):
    """{"scheduling_pass_cpu_ms", "gang_decision_cpu_ms"} from the
    scheduler core's benchmark."""
    binary = os.path.join(build_dir, "tests", "bench", "gantry-scheduler-bench")
    out = subprocess.run([binary, str(SCHEDULER_REPETITIONS)], check=True,
                         capture_output=True, text=True, timeout=300).stdout
    cpu = [float(m) for m in
           re.findall(r"thread CPU time: median ([0-9.]+) ms", out)]
    if len(cpu) != 2:
        raise AssertionError(f"unexpected gantry-scheduler-bench output:\n{out}")
    return {"scheduling_pass_cpu_ms": cpu[0], "gang_decision_cpu_ms": cpu[1]}


def wait_all_ended(cluster, job_ids, timeout):
    wanted = set(job_ids)

    def ended():
        jobs = cluster.cli_json("queue", "-a")["jobs"]
        left = [j for j in jobs if j["job_id"] in wanted
                and j["state"] in ("PENDING", "RUNNING", "COMPLETING")]
        return not left
    gantry_cluster.wait_for(ended, timeout, f"{len(job_ids)} jobs to end", 0.5)


def fleet_figures():
    """CPU per job of gantryd and of the agents, and submit to start."""
    cluster = gantry_cluster.GantryCluster(
        agents=AGENTS, heartbeat_interval=1.0, node_timeout=3.0,
        reconnect_grace=30.0, kill_grace=10, restart_backoff=1.0,
        label="perf-guard")
    try:
        cluster.start()
        script = cluster.write_script("short.sh", "#!/bin/bash\ntrue\n")
        job_ids = [cluster.submit(script, "--hold", "--exclusive", "-o",
                                  "/dev/null", per_task=False)
                   for _ in range(JOBS)]
        agents = [a.pid for a in cluster.agents.values()]
        controller_before = cpu_seconds(cluster.controller.pid)
        agents_before = sum(cpu_seconds(pid) for pid in agents)
        for start in range(0, JOBS, 150):
            cluster.cli("release", *map(str, job_ids[start:start + 150]),
                        timeout=120)
        wait_all_ended(cluster, job_ids, 600)
        controller_cpu = cpu_seconds(cluster.controller.pid) - controller_before
        agents_cpu = sum(cpu_seconds(pid) for pid in agents) - agents_before
        states = {j["state"] for j in cluster.cli_json("queue", "-a")["jobs"]
                  if j["job_id"] in set(job_ids)}
        if states != {"COMPLETED"}:
            raise AssertionError(f"jobs ended as {sorted(states)}")

        stamp = cluster.write_script("stamp.sh", "#!/bin/bash\ndate +%s.%N\n")
        latencies = []
        for sample in range(LATENCY_SAMPLES):
            out = cluster.path(f"stamp.{sample}")
            submitted = time.time()
            job = cluster.submit(stamp, "-N", "1", "-o", out, per_task=False)
            cluster.wait_job(job, "COMPLETED", timeout=60)
            with open(out) as f:
                latencies.append(float(f.read().split()[0]) - submitted)
            time.sleep(0.5)
    finally:
        cluster.stop_processes()
        cluster.finish(False)
    return {"controller_cpu_ms_per_job": 1000 * controller_cpu / JOBS,
            "agent_cpu_ms_per_job": 1000 * agents_cpu / JOBS,
            "submit_to_start_ms": 1000 * statistics.median(latencies)}


def main():
    args = parse_args()
    figures = scheduler_figures(os.environ["GANTRY_BUILD_DIR"])
    figures.update(fleet_figures())
    print(f"perf guard: {machine_line()}")
    if args.write_baseline:
        baseline = {name: {"value": round(value, 3),
                           "factor": 3.0 if name.endswith("_ms") and
                           "cpu" not in name else 2.0}
                    for name, value in figures.items()}
        with open(args.write_baseline, "w") as out:
            json.dump(baseline, out, indent=2, sort_keys=True)
            out.write("\n")
        for name, value in sorted(figures.items()):
            print(f"  {name:28} {value:9.3f}")
        return 0
    with open(BASELINE) as f:
        baseline = json.load(f)
    failed = []
    for name, value in sorted(figures.items()):
        stored = baseline[name]  # "_measured" says where they come from
        limit = stored["value"] * stored["factor"]
        verdict = "ok" if value <= limit else "TOO SLOW"
        print(f"  {name:28} {value:9.3f}  baseline {stored['value']:9.3f} "
              f"x{stored['factor']:.1f} = {limit:9.3f}  {verdict}")
        if value > limit:
            failed.append(name)
    if failed:
        print(f"perf guard: FAILED: {', '.join(failed)} grew past the "
              "factor the baseline allows (tests/bench/perf_baseline.json). "
              "Profile the change (perf record -g), or, if the cost is "
              "meant, measure again with --write-baseline and say why in "
              "the commit.")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
