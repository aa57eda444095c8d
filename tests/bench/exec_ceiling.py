"""The machine's own ceilings: how many processes it starts and reaps per
second, from 1 and from N loops at once, with nothing of Gantry running.

  `#!/bin/bash` running `true`  what a short job runs: compare with
                                agent_fleet_bench.py's short-job throughput
  /bin/true                     a program that does nothing: no command
                                that is a process per submission (gantry
                                batch, sbatch) can go faster
  gantry --version              (with --build-dir) the CLI's own start and
                                exit, without gRPC or the controller

Run: python3 tests/bench/exec_ceiling.py [--loops 1,2] [--count 300]
       [--build-dir build]
"""
import argparse
import os
import subprocess
import tempfile
import time

import bench_support


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--loops", default="1,2",
                        help="numbers of loops running at once, comma-separated")
    parser.add_argument("--count", type=int, default=300,
                        help="processes each loop starts")
    parser.add_argument("--build-dir",
                        help="also time `gantry --version` from this build")
    return parser.parse_args()


def run_loops(command, loops, count):
    """(processes per second, CPU ms of each and its start) with `loops`
    processes each running `command` `count` times one after another."""
    started = time.monotonic()
    before = os.times()
    pids = []
    for _ in range(loops):
        pid = os.fork()
        if pid == 0:
            try:
                for _ in range(count):
                    subprocess.run(command, check=True,
                                   stdout=subprocess.DEVNULL)
            finally:
                os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)
    elapsed = time.monotonic() - started
    after = os.times()
    cpu = (after.children_user + after.children_system -
           before.children_user - before.children_system)
    return loops * count / elapsed, cpu / (loops * count) * 1000


def main():
    args = parse_args()
    print(f"Exec ceiling: {bench_support.machine_line()}")
    print("  each started with subprocess.run (fork, exec, wait), one after "
          "another in each loop")
    print(f"  {'program':<30} {'loops':>5} {'per second':>11} "
          f"{'CPU ms each':>12}")
    with tempfile.TemporaryDirectory() as work:
        script = os.path.join(work, "true.sh")
        with open(script, "w") as f:
            f.write("#!/bin/bash\ntrue\n")
        os.chmod(script, 0o755)
        programs = [("`#!/bin/bash` running `true`", [script]),
                    ("/bin/true", ["/bin/true"])]
        if args.build_dir:
            gantry = os.path.join(os.path.abspath(args.build_dir), "cli",
                                  "gantry")
            programs.append(("gantry --version", [gantry, "--version"]))
        for name, command in programs:
            for loops in (int(n) for n in args.loops.split(",") if n):
                rate, cpu_ms = run_loops(command, loops, args.count)
                print(f"  {name:<30} {loops:>5} {rate:>11.1f} {cpu_ms:>12.2f}",
                      flush=True)


if __name__ == "__main__":
    main()
