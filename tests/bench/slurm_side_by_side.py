"""Slurm and Gantry side by side on this machine, in one run.

First the Slurm anchor lab (../shared/tools/slurm-anchor/run.sh: Debian's
Slurm, one slurmctld and --nodes slurmds on loopback; needs root), then,
once it has stopped everything it started, the same measurements on Gantry
(never both at once: they would share the cores):

  sbatch serial, 4 parallel  `gantry batch` processes on a held cluster
                             (agent_fleet_bench.py, submit_bench.py's CLI)
  short-job throughput       --jobs exclusive `true` jobs released at once
  submit to start            1 node: to the batch script; N nodes: to the
                             last rank (agent_fleet_bench.py)
  kill -9 of the controller  serving again (the 1 s pause included, as the
                             anchor measures it) and acknowledged jobs lost
                             (kill9_bench.py: --crash-clients API clients,
                             each submitting one job after another, as the
                             anchor's 2 looping sbatch processes do)
  restart with many jobs     Gantry only (restart_bench.py)

Then one table: metric, Slurm, Gantry, and how many times better or worse
Gantry is. Slurm's figures come from the lab's results/summary.txt (median;
p99 is the slowest sample, what nearest-rank p99 is for under 100 samples);
--slurm-results reads an earlier summary (or the lab's
reference-results.txt) instead of running the lab.

Every process either side starts is stopped by pid on exit, Ctrl-C and
errors (the lab stops its own on SIGTERM, which it gets from here).

Run: python3 tests/bench/slurm_side_by_side.py --build-dir build
       [--smoke] [--slurm-results FILE] [agent_fleet_bench.py options]
       [--crash-runs 3] [--crash-clients 2] [--restart-jobs 100000]
"""
import argparse
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import agent_fleet_bench
import bench_support
import kill9_bench
import restart_bench
from bench_support import median_p99

ANCHOR_DIR = os.path.join(agent_fleet_bench.SHARED_DATA, "..", "tools",
                          "slurm-anchor")
SLURM_PHASES = "latency submit_serial submit_par_drain crash latency_tuned"
# Small sizes for both sides, to check that everything works (a few minutes).
SMOKE = {"nodes": 16, "jobs": 50, "reps": 1, "sizes": "1,8",
         "latency_reps": 2, "slurm_latency_reps": 2, "crash_runs": 1,
         "restart_jobs": 2000, "restart_runs": 1}


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", required=True)
    agent_fleet_bench.add_fleet_options(parser)
    parser.add_argument("--smoke", action="store_true",
                        help=f"small sizes on both sides: {SMOKE}")
    parser.add_argument("--slurm-results",
                        help="an earlier summary.txt (or the lab's "
                        "reference-results.txt) instead of running the lab")
    parser.add_argument("--slurm-latency-reps", type=int, default=5,
                        help="the lab's 1-node samples (its multi-node "
                        "ones: 3)")
    parser.add_argument("--crash-runs", type=int, default=3)
    parser.add_argument("--crash-clients", type=int, default=2,
                        help="API clients of the kill -9 flood (the "
                        "anchor: 2 sbatch loops)")
    parser.add_argument("--restart-jobs", type=int, default=100_000,
                        help="jobs in gantryd for the restart figure (0: "
                        "skip it)")
    parser.add_argument("--restart-runs", type=int, default=3)
    args = parser.parse_args()
    if args.smoke:
        for name, value in SMOKE.items():
            setattr(args, name, value)
    os.environ["GANTRY_BUILD_DIR"] = os.path.abspath(args.build_dir)
    return args


# --- Slurm ---

def slurm_knobs(args):
    """The lab's environment knobs for the sizes of this run."""
    sizes = args.sizes.replace(",", " ")
    return {"NODES": str(args.nodes), "LEAF": str(min(16, args.nodes)),
            "NJOBS": str(args.jobs), "REPS": str(args.reps),
            "LAT_REPS": str(args.slurm_latency_reps),
            "LAT_REPS_MULTI": str(min(3, args.slurm_latency_reps)),
            "LAT_SIZES": sizes,
            "PHASES": SLURM_PHASES}


def run_slurm_lab(knobs, workdir):
    """Runs the lab (its progress on stderr, its stdout in workdir) and
    returns its summary.txt. The lab runs in its own session, so that a
    Ctrl-C reaches it once, from here, as the SIGTERM it cleans up on."""
    env = dict(os.environ, TMPDIR=workdir, **knobs)
    with open(os.path.join(workdir, "slurm-lab.out"), "w") as out:
        lab = subprocess.Popen(["bash", os.path.join(ANCHOR_DIR, "run.sh")],
                               env=env, stdout=out, start_new_session=True)
        try:
            code = lab.wait()
        except BaseException:
            lab.send_signal(signal.SIGTERM)
            lab.wait(timeout=300)
            raise
    summaries = glob.glob(os.path.join(workdir, "slurm-anchor.*", "results",
                                       "summary.txt"))
    if code != 0 or not summaries:
        raise RuntimeError(f"the Slurm lab exited {code} without a summary "
                           f"(see {workdir})")
    return summaries[0]


SUMMARY_ROW = re.compile(
    r"^(\w+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+(\d+)\s+(\S+)$")


def read_slurm_summary(path):
    """({metric: (median, p99)}, header line, slurmd RSS MiB after start).
    p99 is the slowest sample (nearest rank, under 100 samples)."""
    figures, header, rss = {}, "", None
    with open(path) as f:
        for line in f:
            line = line.strip()
            match = SUMMARY_ROW.match(line)
            if match:
                low, high = float(match.group(3)), float(match.group(4))
                median = float(match.group(2))
                # For rates the worst sample is the lowest.
                worst = low if match.group(6) == "jobs/s" else high
                figures[match.group(1)] = (median, worst)
            elif line.startswith("Slurm anchor results"):
                header = line
            elif line.startswith("slurmd x"):
                rss = float(re.search(r"RSS: ([\d.]+) MB", line).group(1))
    return figures, header, rss


# --- Gantry ---

def measure_gantry(args):
    """{"fleet": agent_fleet_bench.measure(), "crash": [kill9 runs],
    "restart": restart_bench.measure_restarts() or None}."""
    figures = {"fleet": agent_fleet_bench.measure(args), "crash": []}
    for index in range(1, args.crash_runs + 1):
        figures["crash"].append(kill9_bench.one_run(
            index, args.crash_clients, kill_at=3.0, down=1.0, after=2.0,
            auth="munge"))
    figures["restart"] = None
    if args.restart_jobs:
        figures["restart"] = restart_bench.measure_restarts(
            args.restart_jobs, 0.5, args.restart_runs, "munge")
    return figures


# --- The table ---

def compare(slurm, gantry, higher_is_better):
    """'3.2x better' / '1.5x worse' for Gantry."""
    if slurm is None or gantry is None:
        return "-"
    if slurm == gantry:
        return "same"
    if min(slurm, gantry) <= 0:
        better = (gantry > slurm) == higher_is_better
        return "better" if better else "worse"
    factor = gantry / slurm if higher_is_better else slurm / gantry
    return (f"{factor:.1f}x better" if factor >= 1
            else f"{1 / factor:.1f}x worse")


def fmt(value, digits):
    return "-" if value is None else f"{value:.{digits}f}"


def gantry_pick(values, which):
    """The median (which=0) or p99 (1) of samples; for rates the p99 is
    the slowest."""
    if not values:
        return None
    return median_p99(values)[which]


class Table:
    def __init__(self, slurm):
        self.slurm = slurm
        self.rows = []

    def add(self, label, metric, gantry, higher_is_better, digits=3,
            which=0):
        pair = self.slurm.get(metric)
        slurm = pair[which] if pair else None
        self.rows.append((label, fmt(slurm, digits), fmt(gantry, digits),
                          compare(slurm, gantry, higher_is_better)))

    def add_text(self, label, slurm, gantry, verdict):
        self.rows.append((label, slurm, gantry, verdict))

    def print(self):
        header = ("metric", "Slurm", "Gantry", "Gantry vs Slurm")
        widths = [max(len(row[i]) for row in self.rows + [header])
                  for i in range(4)]
        for row in [header] + self.rows:
            print(f"  {row[0]:<{widths[0]}}  {row[1]:>{widths[1]}}  "
                  f"{row[2]:>{widths[2]}}  {row[3]}")


def slowest_rates(values):
    return min(values) if values else None


def add_submission_rows(table, args, held):
    table.add("sbatch serial, jobs/s (median)", "submit_serial_rate",
              gantry_pick(held["serial"], 0), True, 1)
    table.add("sbatch 4 in parallel, jobs/s (median)", "submit_par4_rate",
              gantry_pick(held["parallel"], 0), True, 1)
    drain_metric = next((m for m in table.slurm if m.startswith("drain_")
                         and m.endswith("_release_to_all_done")), None)
    table.add(f"{args.jobs} exclusive `true` jobs, release to all done, s",
              drain_metric, gantry_pick(held["drain_seconds"], 0), False, 2)
    table.add("short-job throughput, jobs/s (median)", "drain_rate",
              gantry_pick(held["throughput"], 0), True, 1)
    table.add("short-job throughput, jobs/s (slowest rep)", "drain_rate",
              slowest_rates(held["throughput"]), True, 1, which=1)


def add_latency_rows(table, latency, tuned):
    """Submit-to-start rows; with tuned, against Slurm with
    batch_sched_delay=0 (the lab's latency_tuned: 1 and 16 nodes)."""
    tag = "tuned" if tuned else "default"
    note = " [Slurm batch_sched_delay=0]" if tuned else ""
    for nodes, samples in latency.items():
        if tuned and nodes not in (1, 16):
            continue
        if nodes == 1:
            label, metric, values = ("1 node, submit to start",
                                     "lat_{}_1node_submit_to_batch_start",
                                     samples["batch"])
        else:
            label, metric, values = (f"{nodes} nodes, submit to all ranks",
                                     f"lat_{{}}_{nodes}node_submit_to_all_ranks",
                                     samples["ranks"])
        for which, stat in ((0, "median"), (1, "p99")):
            table.add(f"{label}, s ({stat}){note}", metric.format(tag),
                      gantry_pick(values, which), False, 3, which)


def add_crash_rows(table, slurm, crash):
    back = [r["back_seconds"] for r in crash]
    table.add("controller kill -9 to serving, 1 s down incl., s",
              "crash_ctld_kill_to_ping_up", gantry_pick(back, 0), False, 3)
    lost = [r["lost"] + r["wrong"] + r["twice"] for r in crash]
    before = [r["before_kill"] for r in crash]
    slurm_lost = slurm.get("crash_acked_but_missing", (None,))[0]
    slurm_before = slurm.get("crash_acked_before_kill", (None,))[0]
    gantry_lost = gantry_pick(lost, 0)
    table.add_text(
        "acked jobs lost to kill -9 / acked before it (median run)",
        "-" if slurm_lost is None else f"{slurm_lost:.0f} / {slurm_before:.0f}",
        "-" if gantry_lost is None else
        f"{gantry_lost:.0f} / {gantry_pick(before, 0):.0f}",
        "-" if gantry_lost is None or slurm_lost is None else
        "none lost" if gantry_lost == 0 else
        compare(slurm_lost, gantry_lost, False))


def add_restart_rows(table, restart):
    if restart is None:
        return
    total = restart["jobs"]["pending"] + restart["jobs"]["finished"]
    for how, runs in restart["restarts"].items():
        table.add_text(
            f"gantryd restart ({how}) with {total} jobs, exec to first "
            "RPC, s (median)", "n/a",
            fmt(gantry_pick([r["rpc"] for r in runs], 0), 3), "-")


def print_report(args, slurm_path, before_line, gantry):
    slurm, header, slurmd_rss = read_slurm_summary(slurm_path)
    fleet = gantry["fleet"]
    table = Table(slurm)
    add_submission_rows(table, args, fleet["held"])
    add_latency_rows(table, fleet["latency"], tuned=False)
    add_latency_rows(table, fleet["latency"], tuned=True)
    add_crash_rows(table, slurm, gantry["crash"])
    agents_rss = fleet["agents_memory_mib"][0][0]
    table.rows.append(("node daemons, RSS summed after start, MiB",
                       fmt(slurmd_rss, 0), fmt(agents_rss, 0),
                       compare(slurmd_rss, agents_rss, False)))
    add_restart_rows(table, gantry["restart"])
    print()
    print(f"Slurm and Gantry side by side, {args.nodes} node daemons each on "
          "loopback, measured one after the other")
    print(f"  machine before: {before_line}")
    print(f"  machine after:  {bench_support.machine_line()}")
    print("  (2 cores shared with whatever else ran meanwhile, e.g. builds: "
          "see the load averages)")
    print(f"  Slurm: {header or 'summary'} from {slurm_path}")
    print(f"  Gantry: {args.nodes} gantry-agents from "
          f"{os.path.basename(args.hwloc_xml)}, --cgroups {args.cgroups}, "
          f"up in {fleet['start_seconds']:.1f} s; kill -9 runs flood from "
          f"{args.crash_clients} API clients")
    table.print()
    print(f"  Gantry agents' PSS (shared libraries counted once): "
          f"{fleet['agents_memory_mib'][0][1]:.0f} MiB after start")
    not_completed = fleet["held"]["not_completed"]
    if not_completed:
        print(f"  Gantry jobs that did not complete: {not_completed}")
    agent_fleet_bench.print_warnings(fleet["warnings"])


def main():
    agent_fleet_bench.stop_on_sigterm()
    args = parse_args()
    before_line = bench_support.machine_line()
    workdir = tempfile.mkdtemp(prefix="side-by-side-", dir="/tmp")
    os.chmod(workdir, 0o755)
    slurm_path = args.slurm_results
    if slurm_path is None:
        print(f"Slurm lab: {slurm_knobs(args)} (results under {workdir})",
              file=sys.stderr, flush=True)
        started = time.monotonic()
        slurm_path = run_slurm_lab(slurm_knobs(args), workdir)
        print(f"Slurm lab done in {time.monotonic() - started:.0f} s",
              file=sys.stderr, flush=True)
    print("Gantry measurements", file=sys.stderr, flush=True)
    gantry = measure_gantry(args)
    print_report(args, slurm_path, before_line, gantry)
    if args.slurm_results is not None:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
