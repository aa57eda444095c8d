"""The machine's own ceiling for short jobs: how many `#!/bin/bash` scripts
running `true` it starts and reaps per second, from 1 and from N loops at
once, with nothing of Gantry running. Compare with agent_fleet_bench.py's
short-job throughput: no resource manager can launch its jobs faster than
the machine starts their scripts.

Run: python3 tests/bench/exec_ceiling.py [--loops 1,2] [--count 300]
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
                        help="scripts each loop starts")
    return parser.parse_args()


def run_loops(script, loops, count):
    """(scripts per second, CPU ms of each script and its start) with
    `loops` processes each starting `count` scripts one after another."""
    started = time.monotonic()
    before = os.times()
    pids = []
    for _ in range(loops):
        pid = os.fork()
        if pid == 0:
            try:
                for _ in range(count):
                    subprocess.run([script], check=True)
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
    print("  `#!/bin/bash` + `true`, started with subprocess.run (fork, exec, "
          "wait) in each loop")
    print(f"  {'loops':>5} {'scripts/s':>10} {'CPU ms each':>12}")
    with tempfile.TemporaryDirectory() as work:
        script = os.path.join(work, "true.sh")
        with open(script, "w") as f:
            f.write("#!/bin/bash\ntrue\n")
        os.chmod(script, 0o755)
        for loops in (int(n) for n in args.loops.split(",") if n):
            rate, cpu_ms = run_loops(script, loops, args.count)
            print(f"  {loops:>5} {rate:>10.1f} {cpu_ms:>12.2f}", flush=True)


if __name__ == "__main__":
    main()
