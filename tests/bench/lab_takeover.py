#!/usr/bin/env python3
"""HA takeover in the test lab (tests/lab/README.md), as a site sees it:
etcd with TLS and auth, every record sealed, MUNGE, the shipped units.
Each round breaks the leader, then a user on the login host submits one
job; the figure is the time from the fault to that submission's
acknowledgement (the CLI follows the new leader by itself). Two faults,
alternating:

  kill9      kill -9 of the leader (its unit restarts it as a standby)
  cut        the leader cut from every etcd member (not from its agents or
             clients), healed once the other controller has taken over

Needs root.

  python3 tests/bench/lab_takeover.py --build-dir build [--rounds 5]

Prints the machine line, each round, and median / worst per fault."""

import argparse
import os
import platform
import pwd
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lab"))

from faults import Faults  # noqa: E402
from lab_cluster import Lab, missing_prerequisites  # noqa: E402
from workload import Workload  # noqa: E402


def both_controllers_up(lab, timeout=120):
    """Until gantry status shows every controller (the broken one back as
    a standby)."""
    import json
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = lab.cli("status", "--json", check=False, timeout=30)
        if result.returncode == 0:
            members = json.loads(result.stdout).get("replication", {}).get(
                "controllers", [])
            if len(members) >= len(lab.controller_names):
                return
        time.sleep(1)
    raise AssertionError("the broken controller did not come back")


def one_round(lab, faults, workload, user, kind):
    leader = lab.wait_leader()
    began = time.monotonic()
    if kind == "kill9":
        faults.kill9(leader)
    else:
        faults.partition([leader], lab.etcd_names)
    ack = workload.submit(user)
    took = time.monotonic() - began
    if kind == "cut":
        lab.wait_leader(other_than=leader)
        faults.heal()
    if ack["job_id"] is None:
        raise AssertionError(f"{kind}: the submission failed: {ack['error']}")
    new_leader = lab.wait_leader()
    both_controllers_up(lab)
    return took, leader, new_leader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--rounds", type=int, default=5,
                        help="rounds of each fault")
    args = parser.parse_args()
    why = missing_prerequisites()
    if why:
        sys.exit(f"lab_takeover: {why}")
    load = os.getloadavg()[0]
    print(f"{platform.node()} {os.cpu_count()} CPUs {platform.release()} "
          f"{time.strftime('%Y-%m-%d')} load average {load:.1f}")
    name = f"glabto{os.getpid()}"
    subprocess.run(["useradd", "-M", "-U", "-s", "/bin/sh", name], check=True)
    user = pwd.getpwnam(name)
    lab = Lab(os.path.abspath(args.build_dir))
    faults = None
    failed = True
    figures = {"kill9": [], "cut": []}
    try:
        lab.start()
        faults = Faults(lab)
        workload = Workload(lab, [user])
        workload.submit(user)  # warm: the first submission makes the home
        for number in range(args.rounds):
            for kind in ("kill9", "cut"):
                took, old, new = one_round(lab, faults, workload, user, kind)
                figures[kind].append(took)
                print(f"  {kind} {number + 1}: acknowledged after {took:.2f} s "
                      f"({old} -> {new})", flush=True)
        for kind, label in (("kill9", "kill -9 of the leader"),
                            ("cut", "leader cut from etcd")):
            values = figures[kind]
            print(f"{label}: median {statistics.median(values):.2f} s, worst "
                  f"{max(values):.2f} s ({len(values)} rounds)")
        failed = False
    finally:
        if faults:
            faults.stop()
        lab.stop(failed=failed)
        subprocess.run(["userdel", name], check=False)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
