"""In-memory checkpoints on a real PyTorch job: what a node failure costs
with and without them.

Runs packaging/examples/train_ddp.py (gloo, CPU) on --nodes agents across
two leaf switches plus one hot spare, on loopback, twice per mode:
  file    checkpoints to the file system every --checkpoint-every steps;
  memory  the same, and with --memory-checkpoints every rank also snapshots
          its state into its node's memory (/dev/shm) every
          --memory-every steps, which the agents copy to a peer under the
          other leaf.
Mid-run the agent of node02 is killed (kill -9); Gantry restarts the job
on the spare. Printed per run: the step training had reached at the kill,
the step it resumed from, steps of work lost, seconds from the kill to
training running again, and for memory the snapshot size, the time a save
held training (median), and the restore (fetch from the peer, per rank).
The two modes' final parameters must match an uninterrupted run's.

Run: python3 tests/bench/memory_checkpoint_bench.py --build-dir build
       [--nodes 4] [--width 131072] [--runs 2]
"""
import argparse
import os
import re
import shutil
import statistics
import sys
import time

import bench_support
from bench_support import gantry_cluster

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
EXAMPLES = os.path.join(ROOT, "packaging", "examples")
PYTHON_MODULES = os.path.join(ROOT, "packaging", "python")


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--nodes", type=int, default=4)
    parser.add_argument("--width", type=int, default=131072,
                        help="hidden units: 131072 is about 38 MB of state "
                        "per rank (parameters and momentum, float64)")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--step-seconds", type=float, default=0.1)
    parser.add_argument("--checkpoint-every", type=int, default=50)
    parser.add_argument("--memory-every", type=int, default=5)
    parser.add_argument("--kill-at-step", type=int, default=93)
    parser.add_argument("--runs", type=int, default=2)
    return parser.parse_args()


def last_step(text):
    steps = [int(s) for s in re.findall(r"^step (\d+)", text, re.M)]
    return max(steps) if steps else 0


def run_once(args, mode, shm_root, run):
    spare = f"node{args.nodes + 1:02d}"
    cluster = gantry_cluster.GantryCluster(
        agents=args.nodes + 1, hot_spares=spare, node_timeout=2.0,
        label=f"memory-bench-{mode}")
    # Snapshots in memory, as the agent's default puts them (/dev/shm), one
    # directory per agent of this run.
    for index in range(1, args.nodes + 2):
        name = f"node{index:02d}"
        cluster.agent_args[name] = [
            "--memory-checkpoint-dir", os.path.join(shm_root, f"{mode}{run}",
                                                    name)]
    finished = False
    try:
        cluster.start()
        half = (args.nodes + 2) // 2
        with open(cluster.path("tree.conf"), "w") as tree:
            tree.write(f"SwitchName=leaf1 Nodes=node[01-{half:02d}]\n"
                       f"SwitchName=leaf2 Nodes=node[{half + 1:02d}-"
                       f"{args.nodes + 1:02d}]\n"
                       "SwitchName=spine Switches=leaf[1-2]\n")
        cluster.cli("topology", "import", "tree.conf")
        cluster.env["PATH"] = "/usr/bin:" + cluster.env.get("PATH", "")
        cluster.env["PYTHONPATH"] = PYTHON_MODULES
        for name in ("train_ddp.py", "train_ddp.sbatch"):
            shutil.copy(os.path.join(EXAMPLES, name), cluster.path(name))
        os.makedirs(cluster.path("ckpt"))
        train = ["--steps", str(args.steps), "--step-seconds",
                 str(args.step_seconds), "--checkpoint-every",
                 str(args.checkpoint_every), "--width", str(args.width),
                 "--print-every", "1", "--result", "result.txt"]
        options = ["--nodes", str(args.nodes), "--checkpoint-dir", "ckpt"]
        if mode == "memory":
            train += ["--memory-checkpoint-every", str(args.memory_every)]
            options.append("--memory-checkpoints")
        job_id = cluster.submit("train_ddp.sbatch", *options, args=train)
        cluster.wait_job(job_id, "RUNNING", timeout=60)
        output = cluster.path(f"train-{job_id}.out")

        def reached():
            text = open(output).read() if os.path.exists(output) else ""
            step = last_step(text)
            return step if step >= args.kill_at_step else None
        gantry_cluster.wait_for(reached, 300, f"step {args.kill_at_step}")
        snapshot_bytes = 0
        for dirpath, _, files in os.walk(os.path.join(shm_root,
                                                      f"{mode}{run}",
                                                      "node01")):
            if "/replicas" not in dirpath and "/step-" in dirpath:
                snapshot_bytes = max(snapshot_bytes, sum(
                    os.path.getsize(os.path.join(dirpath, f)) for f in files))
        killed_at = time.monotonic()
        at_kill = last_step(open(output).read())
        cluster.kill_agent("node02")

        def resumed():
            text = open(output).read()
            match = re.search(r"restoring step (\d+) from memory|"
                              r"resuming from \S+ at step (\d+)", text)
            if not match:
                return None
            return int(match.group(1)) if match.group(1) else \
                int(match.group(2)) - 1
        resumed_step = gantry_cluster.wait_for(resumed, 120, "the restart")
        back_s = time.monotonic() - killed_at
        cluster.wait_job(job_id, "COMPLETED", timeout=600)
        text = open(output).read()
        saves = [float(ms) for ms in re.findall(
            r"memory snapshot saved in ([\d.]+) ms", text)]
        restores = []
        for agent in cluster.agents.values():
            restores += [int(ms) for ms in re.findall(
                r'msg="memory checkpoint restored".* ms=(\d+)',
                agent.log_text())]
        figures = {"at_kill": at_kill, "resumed": resumed_step,
                   "lost": at_kill - resumed_step, "back_s": back_s,
                   "save_ms": statistics.median(saves) if saves else None,
                   "restore_ms": restores, "bytes": snapshot_bytes,
                   "result": cluster.read("result.txt")}
        finished = True
        return figures
    finally:
        cluster.stop_processes()
        if finished:
            shutil.rmtree(cluster.dir, ignore_errors=True)
        else:
            print(f"  kept {cluster.dir} (its logs) after the failure",
                  flush=True)


def main():
    args = parse_args()
    os.environ["GANTRY_BUILD_DIR"] = os.path.abspath(args.build_dir)
    print(f"memory checkpoint benchmark: {bench_support.machine_line()}")
    print(f"  {args.nodes} nodes + 1 spare on two leaves, train_ddp.py width "
          f"{args.width}, {args.steps} steps of {args.step_seconds} s, file "
          f"checkpoint every {args.checkpoint_every}, memory every "
          f"{args.memory_every}, node02's agent killed at step "
          f"{args.kill_at_step}", flush=True)
    shm_root = f"/dev/shm/gantry-memory-bench-{os.getpid()}"
    results = {}
    try:
        for run in range(1, args.runs + 1):
            for mode in ("file", "memory"):
                figures = run_once(args, mode, shm_root, run)
                results.setdefault(mode, []).append(figures)
                restore = figures["restore_ms"]
                print(f"  {mode:6} run {run}: killed at step "
                      f"{figures['at_kill']}, resumed from "
                      f"{figures['resumed']} ({figures['lost']} steps lost), "
                      f"training again {figures['back_s']:.2f} s after the "
                      "kill" +
                      (f"; snapshot {figures['bytes'] / 1e6:.1f} MB per rank, "
                       f"save {figures['save_ms']:.1f} ms (median), restore "
                       f"{', '.join(str(ms) for ms in restore)} ms"
                       if mode == "memory" else ""), flush=True)
    finally:
        shutil.rmtree(shm_root, ignore_errors=True)
    finals = {f["result"] for runs in results.values() for f in runs}
    print(f"  final parameters identical across all runs: {len(finals) == 1}")
    return 0 if len(finals) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
