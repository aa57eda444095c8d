"""High-availability figures, side by side with the single controller, in
one run: gantryd --etcd with 2 controllers on a 3-member etcd cluster
(tests/integration/ha_cluster.py) against one gantryd with its own RocksDB,
on the same machine, one after the other. Phases (--phases):

  takeover    a client submitting in a loop (the CLI, which follows the
              leader); --rounds times the leader is killed with kill -9
              (and restarted as a standby), then --rounds times it is
              paused with SIGSTOP: the figure is the time from the signal
              to the first submission a standby answered. While a leader
              is paused, a fleet of clients asks it (and only it) to store
              jobs; once a standby answers, the paused leader gets SIGCONT
              and must acknowledge none of them (its lease lapsed).
  throughput  durable submissions/s of 64 SubmitStream clients (as
              submit_bench.py) and the CLI rate (one `gantry batch`
              process per submission, serial and 4 at a time), single
              then HA, with where each window's CPU went (gantryd, etcd,
              the standby, the client) and the leader's commit time.
  kills       --kills leader kill -9s under load (CLI loops following the
              leader, plus a flood of API clients aimed at the leader of
              the moment); then every acknowledged job is looked up:
              lost, stored differently, or an id acknowledged twice.
  lag         a flood of 64 SubmitStream clients at the highest rate the
              machine gives (closed loop, so it says what that rate was:
              the issue asks for 10,000/s); the log's head in etcd is
              read every 20 ms and the standby's member record (applied
              index and its clock, published every TTL/4) as it changes:
              entries and seconds the standby is behind, max and p99.

Figures are printed, never asserted; the run exits 1 only if an
acknowledged job was lost, stored differently or given twice, or a paused
leader acknowledged anything after SIGCONT.

Run: python3 tests/bench/ha_bench.py --build-dir build
       [--phases takeover,throughput,kills,lag] [--rounds 20] [--kills 100]
       [--seconds 3] [--runs 3] [--cli-jobs 200] [--lag-seconds 20]
       [--etcd-members 3] [--lease-ttl 2] [--auth munge|none]
"""
import argparse
import os
import signal
import statistics
import sys
import time

import bench_support
import ha_figures
import submit_bench
from bench_support import gantry_cluster, median_p99
from gantry_cluster import wait_for
from ha_cluster import HaCluster
from test_high_availability import SubmissionLoad

PHASES = ("takeover", "throughput", "kills", "lag")


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--phases", default=",".join(PHASES))
    parser.add_argument("--rounds", type=int, default=20,
                        help="kill -9 rounds and SIGSTOP rounds (each)")
    parser.add_argument("--kills", type=int, default=100,
                        help="leader kill -9s of the loss audit")
    parser.add_argument("--kill-clients", type=int, default=4,
                        help="API clients flooding the leader in each kill")
    parser.add_argument("--kill-at", type=float, default=1.0,
                        help="seconds of flood before each kill")
    parser.add_argument("--seconds", type=float, default=3.0,
                        help="length of one throughput window")
    parser.add_argument("--runs", type=int, default=3,
                        help="throughput windows, and CLI repetitions")
    parser.add_argument("--cli-jobs", type=int, default=200)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--window", type=int, default=256)
    parser.add_argument("--lag-seconds", type=float, default=20.0)
    parser.add_argument("--etcd-members", type=int, default=3)
    parser.add_argument("--lease-ttl", type=int, default=2)
    parser.add_argument("--auth", default="munge", choices=("munge", "none"))
    args = parser.parse_args()
    args.shared_channel = False  # submit_bench.api_windows reads it
    args.phases = [p for p in args.phases.split(",") if p]
    for phase in args.phases:
        if phase not in PHASES:
            parser.error(f"--phases: unknown phase {phase!r} ({', '.join(PHASES)})")
    os.environ["GANTRY_BUILD_DIR"] = os.path.abspath(args.build_dir)
    return args


def failing():
    """In a finally clause: whether an exception is on its way out (the
    cluster's temp dir and logs are then kept)."""
    return sys.exc_info()[0] is not None


def new_ha(args, label, metrics=False, etcd_tls=True):
    return HaCluster(agents=0, controllers=2, etcd_members=args.etcd_members,
                     lease_ttl=args.lease_ttl, auth=args.auth, metrics=metrics,
                     label=label, etcd_tls=etcd_tls)


def first_answer(loads, since):
    """Seconds from `since` to the first acknowledgement a standby gave
    to any of the SubmissionLoads; None if none yet."""
    gaps = [g for g in (load.answered_after(since) for load in loads)
            if g is not None]
    return min(gaps) if gaps else None


def wait_more_acks(loads, count=3):
    before = sum(len(load.acknowledged) for load in loads)
    wait_for(lambda: sum(len(load.acknowledged) for load in loads) >=
             before + count, 60, "submissions under load")


def restart_standby(cluster, name):
    """Starts `name` again and waits until it follows the log."""
    daemon = cluster.start_named_controller(name)
    wait_for(lambda: "standby serving" in daemon.log_text(), 60,
             f"{name} to serve as a standby")


def pause_round(cluster, load, client, round_number):
    """SIGSTOP of the leader while API clients submit to it (and only to
    it), SIGCONT once a standby answered. Returns (seconds to a standby's
    answer, seconds from SIGCONT to the old leader stepping down, the acks
    its clients received after SIGCONT, the acks file, the refusals they
    got by gRPC code, how many acks they got). An ack received after
    SIGCONT may be one the leader committed before it stopped and had not
    sent yet; one it committed after would be missing from the log, so
    the audit looks each up."""
    leader = cluster.wait_leader()
    daemon = cluster.controllers[leader]
    log_mark = len(daemon.log_text())
    client.port = cluster.ports[leader]
    acks_path = cluster.path(f"acks.paused.{round_number}")
    # Submitting before the pause, so that requests are in flight in the
    # leader (read, waiting for their commit, or in its sockets) when it
    # stops; they go on (retrying a standby's refusals) until 4 s after
    # the SIGCONT at the latest.
    probe = client.start("submit", "--clients", "4", "--seconds", "10",
                         "--acks", acks_path, "--tag", f"paused{round_number}")
    time.sleep(1.0)  # connected and submitting
    stopped_at = time.monotonic()
    daemon.send(signal.SIGSTOP)
    gap = wait_for(lambda: load.answered_after(stopped_at), 60,
                   "a standby to answer submissions")
    continued_wall = time.time()
    continued_at = time.monotonic()
    daemon.send(signal.SIGCONT)
    wait_for(lambda: "stepping down" in daemon.log_text()[log_mark:], 30,
             f"the paused {leader} to step down")
    stepped = time.monotonic() - continued_at
    _, summary = client.finish(probe, timeout=60, check=False)
    acks = bench_support.read_acks(acks_path)
    after = [(job_id, name, when) for job_id, name, when in acks
             if when > continued_wall]
    wait_for(lambda: "standby serving" in daemon.log_text()[log_mark:], 60,
             f"{leader} to serve as a standby again")
    return (gap, stepped, after, acks_path,
            (summary or {}).get("errors", {}), len(acks))


def takeover(args, figures):
    cluster = new_ha(args, "ha-takeover")
    try:
        cluster.start()
        client = bench_support.SubmitClient(cluster, args.auth,
                                            bare_environment=True)
        kill_gaps, stop_gaps, step_downs, paused_acks = [], [], [], []
        acks_paths, probe_acks = [], 0
        late_path = cluster.path("acks.late")  # received after SIGCONT
        with SubmissionLoad(cluster) as load:
            for round_number in range(args.rounds):
                wait_more_acks([load])
                leader = cluster.wait_leader()
                killed_at = time.monotonic()
                cluster.kill_named(leader)
                kill_gaps.append(wait_for(
                    lambda: load.answered_after(killed_at), 60,
                    "a standby to answer submissions"))
                cluster.wait_leader(other_than=leader)
                restart_standby(cluster, leader)
                print(f"  kill -9 {round_number + 1}: {leader}, answered again "
                      f"after {kill_gaps[-1]:.2f} s", flush=True)
            for round_number in range(args.rounds):
                wait_more_acks([load])
                gap, stepped, acks, path, refused, acked = pause_round(
                    cluster, load, client, round_number)
                stop_gaps.append(gap)
                step_downs.append(stepped)
                paused_acks += acks
                acks_paths.append(path)
                if acks:
                    with open(late_path, "a") as late:
                        late.writelines(f"{j} {n} {w:.6f}\n" for j, n, w in acks)
                probe_acks += acked
                print(f"  SIGSTOP {round_number + 1}: answered again after "
                      f"{gap:.2f} s; after SIGCONT the old leader stepped "
                      f"down in {stepped:.2f} s; its API clients: {acked} "
                      f"acked, {len(acks)} of them after SIGCONT, refused "
                      f"{refused}",
                      flush=True)
        cluster.port = cluster.ports[cluster.wait_leader()]
        audit = ha_figures.audit_ids(cluster, load.acknowledged)
        verdict = ha_figures.verify_acks(cluster, client, acks_paths)
        late = (ha_figures.verify_acks(cluster, client, [late_path],
                                        "acks.late.all")
                if paused_acks else None)
        figures.takeover = {"kill": kill_gaps, "stop": stop_gaps,
                            "step_down": step_downs,
                            "paused_acks": len(paused_acks),
                            "probe": verdict, "probe_acks": probe_acks,
                            "late": late,
                            "acknowledged": len(load.acknowledged),
                            "refused": len(load.failures), **audit}
    finally:
        cluster.stop_processes()
        cluster.finish(failing())


def throughput(args, figures):
    for mode in ("single", "ha"):
        if mode == "single":
            cluster = gantry_cluster.GantryCluster(
                agents=0, auth=args.auth, metrics=True, label="ha-bench-single")
        else:
            cluster = new_ha(args, "ha-bench-throughput", metrics=True)
        try:
            cluster.start()
            if mode == "single":
                daemon, extra = cluster.controller, {}
                metrics = cluster.metrics_address()
            else:
                leader = cluster.wait_leader()
                daemon = cluster.controllers[leader]
                metrics = cluster.metrics_address(leader)
                extra = {"etcd": [p.pid for p in cluster.etcd.processes.values()],
                         "standby": [d.pid for n, d in cluster.controllers.items()
                                     if n != leader]}
            windows, latencies = submit_bench.api_windows(
                args, cluster, daemon.pid, metrics, args.auth, "stream",
                args.clients, extra_pids=extra)
            cli = ha_figures.cli_rates(cluster, args.runs, args.cli_jobs,
                                       mode == "ha")
            figures.throughput[mode] = {"windows": windows,
                                        "latencies": latencies, "cli": cli}
            rates = [w["rate"] for w in windows]
            print(f"  {mode}: {args.clients} stream clients "
                  f"{statistics.median(rates):.0f}/s (windows: "
                  f"{', '.join(f'{r:.0f}' for r in rates)}); CLI "
                  + "; ".join(f"{k} {statistics.median(v[0]):.1f}/s"
                              for k, v in cli.items()), flush=True)
        finally:
            cluster.stop_processes()
            cluster.finish(failing())


def kills(args, figures):
    cluster = new_ha(args, "ha-kills")
    loads = []
    try:
        cluster.start()
        client = bench_support.SubmitClient(cluster, args.auth,
                                            bare_environment=True)
        loads = [SubmissionLoad(cluster) for _ in range(2)]
        for load in loads:
            load.__enter__()
        gaps, acks_paths = [], []
        for round_number in range(args.kills):
            wait_more_acks(loads)
            leader = cluster.wait_leader()
            client.port = cluster.ports[leader]
            acks_paths.append(cluster.path(f"acks.kill.{round_number}"))
            flood = client.start(
                "submit", "--clients", str(args.kill_clients), "--seconds",
                str(args.kill_at + 0.3), "--acks", acks_paths[-1],
                "--tag", f"k{round_number}")
            time.sleep(args.kill_at)
            killed_at = time.monotonic()
            cluster.kill_named(leader)
            gaps.append(wait_for(lambda: first_answer(loads, killed_at), 60,
                                 "a standby to answer submissions"))
            client.finish(flood, timeout=60, check=False)
            cluster.wait_leader(other_than=leader)
            restart_standby(cluster, leader)
            if (round_number + 1) % 10 == 0 or round_number < 3:
                print(f"  kill {round_number + 1}: answered again after "
                      f"{gaps[-1]:.2f} s", flush=True)
        for load in loads:
            load.__exit__(None, None, None)
        cluster.port = cluster.ports[cluster.wait_leader()]
        cli_ids = [j for load in loads for j in load.acknowledged]
        flood_acks = []
        for path in acks_paths:
            flood_acks += bench_support.read_acks(path)
        figures.kills = {
            "gaps": gaps,
            "cli": ha_figures.audit_ids(cluster, cli_ids,
                                        [j for j, _, _ in flood_acks]),
            "flood": ha_figures.verify_acks(cluster, client, acks_paths),
            "cli_acknowledged": len(cli_ids),
            "refused": sum(len(load.failures) for load in loads)}
    finally:
        for load in loads:
            load.stop.set()
        cluster.stop_processes()
        cluster.finish(failing())


def lag(args, figures):
    # Plain etcd (gantryd --etcd-insecure): the sampler reads etcd's JSON
    # gateway every 20 ms, and the gateway does not carry a client
    # certificate's user to etcd's auth.
    cluster = new_ha(args, "ha-lag", etcd_tls=False)
    try:
        cluster.start()
        leader = cluster.wait_leader()
        client = bench_support.SubmitClient(cluster, args.auth)
        client.port = cluster.ports[leader]
        sampler = ha_figures.LagSampler(cluster)
        with sampler:
            _, summary = client.run(
                "submit", "--clients", str(args.clients), "--seconds",
                str(args.lag_seconds), "--stream", "--batch", str(args.batch),
                "--window", str(args.window), "--tag", "lag")
        figures.lag = {"rate": summary["per_second"],
                       "acknowledged": summary["acknowledged"],
                       **sampler.lag(exclude=leader)}
    finally:
        cluster.stop_processes()
        cluster.finish(failing())


def main():
    args = parse_args()
    figures = ha_figures.Figures(args)
    print(f"HA benchmark: {bench_support.machine_line()}", flush=True)
    for phase in args.phases:
        print(f"\n{phase}:", flush=True)
        globals()[phase](args, figures)
    figures.load_after = os.getloadavg()
    print()
    failed = figures.report()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
