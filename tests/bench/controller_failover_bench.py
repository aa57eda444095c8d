"""Controller failover benchmark: two gantryds on an etcd cluster (gantryd
--etcd), a 2-node job running and a client submitting jobs in a loop;
the leader is killed (kill -9) again and again, and each time restarted
as a standby (every third time with its state dir wiped).

Prints, over --failovers rounds, the median and worst of
  answering   kill -9 of the leader -> the next submission acknowledged
              (target: under 5 s)
and checks what must hold: no acknowledged job lost, no job id given
twice, the running job's ranks untouched (each started once).

Run: python3 tests/bench/controller_failover_bench.py --build-dir build
     [--failovers 20] [--etcd-members 3] [--lease-ttl 2]
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
import gantry_cluster  # noqa: E402
from gantry_cluster import wait_for  # noqa: E402
from ha_cluster import HaCluster  # noqa: E402
from test_high_availability import RANK_SCRIPT, SubmissionLoad, runs  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--build-dir", required=True)
parser.add_argument("--failovers", type=int, default=20)
parser.add_argument("--etcd-members", type=int, default=3)
parser.add_argument("--lease-ttl", type=int, default=2)
args = parser.parse_args()
os.environ["GANTRY_BUILD_DIR"] = os.path.abspath(args.build_dir)

cluster = HaCluster(agents=2, controllers=2, etcd_members=args.etcd_members,
                    lease_ttl=args.lease_ttl, label="controller-failover")
failed = True
try:
    cluster.start()
    script = cluster.write_script("rank.sh", RANK_SCRIPT)
    job = cluster.submit(script, "-N2", "--ntasks-per-node=1",
                         "--max-restarts=0")
    cluster.wait_job(job, "RUNNING")
    wait_for(lambda: len(runs(cluster, job)) == 2, 20, "both ranks")
    before = runs(cluster, job)
    gaps = []
    with SubmissionLoad(cluster) as load:
        for round_number in range(args.failovers):
            count = len(load.acknowledged)
            wait_for(lambda: len(load.acknowledged) >= count + 3, 60,
                     "submissions under load")
            leader = cluster.wait_leader()
            killed_at = time.monotonic()
            cluster.kill_named(leader)
            gap = wait_for(lambda: load.answered_after(killed_at), 60,
                           "a submission acknowledged after the kill")
            gaps.append(gap)
            print(f"failover {round_number + 1}: {leader} killed, "
                  f"submissions answered again after {gap:.2f} s", flush=True)
            cluster.wait_leader(other_than=leader)
            cluster.start_named_controller(leader, wipe=round_number % 3 == 1)
    lost = [j for j in load.acknowledged
            if cluster.cli("job", str(j), "--json", check=False).returncode != 0]
    duplicates = len(load.acknowledged) - len(set(load.acknowledged))
    untouched = runs(cluster, job) == before and \
        cluster.job(job)["state"] == "RUNNING"
    print(f"\n{len(gaps)} failovers, {len(load.acknowledged)} submissions "
          f"acknowledged, {len(load.failures)} refused")
    print(f"answering again after kill -9: median {statistics.median(gaps):.2f} s, "
          f"worst {max(gaps):.2f} s (target: under 5 s)")
    print(f"acknowledged jobs lost: {len(lost)} {lost[:10]}")
    print(f"job ids acknowledged twice: {duplicates}")
    print(f"running job untouched (same ranks, started once): {untouched}")
    failed = bool(lost) or duplicates > 0 or not untouched
finally:
    cluster.stop_processes()
    cluster.finish(failed)
sys.exit(1 if failed else 0)
