#!/usr/bin/env python3
"""The test lab's soak (tests/lab/README.md): the lab's cluster under two
users' submissions for --minutes, with a random fault every --every
seconds (kill -9 or SIGSTOP of any daemon, the leader cut from etcd or
from its clients, an agent cut from the controllers), each healed before
the next; then the checker's verdicts and counts. Needs root.

  python3 tests/bench/lab_soak.py --build-dir build [--minutes 30]
      [--every 20] [--sanitizer-build-dir build-asan]

Prints the machine line, each fault, the counts and each property's
verdict; exits 1 when one is violated."""

import argparse
import os
import platform
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lab"))

from faults import Faults  # noqa: E402
from lab_cluster import Lab, missing_prerequisites  # noqa: E402
from verdicts import collect  # noqa: E402
from workload import Workload  # noqa: E402


def random_fault(lab, faults, rng):
    leader = lab.wait_leader()
    kind = rng.choice(["kill_leader", "kill_any", "pause_leader",
                       "leader_from_etcd", "leader_from_clients",
                       "agent_from_controllers"])
    if kind == "kill_leader":
        faults.kill9(leader)
    elif kind == "kill_any":
        faults.kill9(rng.choice(sorted(lab.units)))
    elif kind == "pause_leader":
        faults.pause(leader, rng.uniform(1, 8))
    else:
        sides = {"leader_from_etcd": ([leader], lab.etcd_names),
                 "leader_from_clients": ([leader], ["login"] + lab.node_names),
                 "agent_from_controllers": ([rng.choice(lab.node_names)],
                                            lab.controller_names)}[kind]
        faults.partition(*sides)
        time.sleep(rng.uniform(3, 12))
        faults.heal()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--sanitizer-build-dir")
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--every", type=float, default=20)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    args = parser.parse_args()
    why = missing_prerequisites()
    if why:
        sys.exit(f"lab_soak: {why}")
    print(f"{platform.node()} {os.cpu_count()} CPUs {platform.release()} "
          f"{time.strftime('%Y-%m-%d')} seed {args.seed}")
    rng = random.Random(args.seed)
    import pwd
    users = []
    for role in ("a", "b"):
        name = f"glabsoak{role}{os.getpid()}"
        subprocess.run(["useradd", "-M", "-U", "-s", "/bin/sh", name], check=True)
        users.append(pwd.getpwnam(name))
    lab = Lab(os.path.abspath(args.build_dir),
              sanitizer_build_dir=args.sanitizer_build_dir and
              os.path.abspath(args.sanitizer_build_dir))
    faults = None
    failed = True
    try:
        lab.start()
        faults = Faults(lab)
        workload = Workload(lab, users)
        workload.start()
        end = time.monotonic() + args.minutes * 60
        while time.monotonic() < end:
            time.sleep(args.every)
            random_fault(lab, faults, rng)
        workload.stop()
        verdicts, _, report = collect(lab, workload, faults)
        print(report)
        failed = any(verdicts.values())
    finally:
        if faults:
            faults.stop()
        lab.stop(failed=failed)
        for user in users:
            subprocess.run(["userdel", user.pw_name], check=False)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
