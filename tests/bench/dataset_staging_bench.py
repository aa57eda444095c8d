"""Dataset staging benchmark (--dataset=NAME:PATH, docs/user-guide.md "Datasets cached
on the nodes").

Writes a tree of --files files, --mib MiB in all, under a temp dir, then:
  cp -r     the disk's own copy rate: `cp -r` of the tree and a `sync`
            (staging syncs and reads back every file it copies)
  stage     a one-node job declaring the tree: the agent's own time to
            stage it (its "dataset staged" log line), copied from scratch
  rerun     the same job again: bytes served from the node's cache
  restart   a job whose first attempt fails (--max-restarts=1): bytes of
            both attempts served from the node's cache
The page cache is dropped before `cp -r` and before the first stage when
the bench runs as root (otherwise both read from memory, which it says).

Run: python3 tests/bench/dataset_staging_bench.py --build-dir build
     [--mib 512] [--files 64]
"""
import argparse
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
import gantry_cluster  # noqa: E402
from bench_support import machine_line  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--build-dir", required=True)
parser.add_argument("--mib", type=int, default=512, help="size of the tree")
parser.add_argument("--files", type=int, default=64, help="files in it")
args = parser.parse_args()
os.environ["GANTRY_BUILD_DIR"] = os.path.abspath(args.build_dir)
MIB = 1 << 20

# Every attempt but the first succeeds, so a job with --max-restarts=1
# stages twice on its node.
FAIL_FIRST = """#!/bin/bash
[ "$GANTRY_ATTEMPT" = 1 ] && exit 1
exit 0
"""


def drop_page_cache():
    """True when the page cache was dropped (needs root)."""
    subprocess.run(["sync"], check=True)
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def write_tree(top):
    os.makedirs(os.path.join(top, "sub"))
    per_file = args.mib * MIB // args.files
    block = os.urandom(MIB)
    for i in range(args.files):
        # Half the files one level down: a tree, not a flat directory.
        where = top if i % 2 == 0 else os.path.join(top, "sub")
        with open(os.path.join(where, f"shard{i:04d}.bin"), "wb") as f:
            left = per_file
            while left > 0:
                # Each file its own bytes, so nothing is deduplicated.
                chunk = block[: min(left, MIB)]
                f.write(i.to_bytes(8, "little") + chunk[8:])
                left -= len(chunk)
    return per_file * args.files


def staged_lines(cluster):
    """Every "dataset staged" log line of the agent, as dicts, in order."""
    lines = []
    for line in cluster.agents["node01"].log_text().splitlines():
        if "dataset staged" in line:
            lines.append(dict(re.findall(r'(\w+)=("[^"]*"|\S+)', line)))
    return lines


def served_share(lines):
    total = sum(int(line["bytes"]) for line in lines)
    served = sum(int(line["bytes"]) for line in lines if line["hit"] == "yes")
    return served, total


def main():
    cluster = gantry_cluster.GantryCluster(agents=1, label="staging")
    try:
        cluster.start()
        source = cluster.path("shared", "train")
        size = write_tree(source)

        dropped = drop_page_cache()
        copy_to = cluster.path("cp-copy")
        started = time.monotonic()
        subprocess.run(["cp", "-r", source, copy_to], check=True)
        subprocess.run(["sync"], check=True)
        cp_seconds = time.monotonic() - started

        script = cluster.write_script("true.sh", "#!/bin/bash\nexit 0\n")
        dataset = f"--dataset=train:{source}"
        drop_page_cache()
        first = cluster.submit(script, dataset)
        cluster.wait_job(first, "COMPLETED", timeout=600)
        stage = staged_lines(cluster)[-1]
        if stage["hit"] != "no" or int(stage["copied"]) != size:
            raise AssertionError(f"the first stage was not a full copy: {stage}")
        stage_seconds = int(stage["ms"]) / 1000.0

        before = len(staged_lines(cluster))
        rerun = cluster.submit(script, dataset)
        cluster.wait_job(rerun, "COMPLETED", timeout=600)
        rerun_lines = staged_lines(cluster)[before:]

        failing = cluster.write_script("fail-first.sh", FAIL_FIRST)
        before = len(staged_lines(cluster))
        restarted = cluster.submit(failing, dataset, "--max-restarts=1")
        job = cluster.wait_job(restarted, "COMPLETED", timeout=600)
        restart_lines = staged_lines(cluster)[before:]
        if len(restart_lines) != 2:
            raise AssertionError(f"expected a stage per attempt, got "
                                 f"{restart_lines} (job {job})")
    finally:
        cluster.stop_processes()
        cluster.finish(False)

    print(machine_line())
    print(f"dataset staging: {size / MIB:.0f} MiB in {args.files} files, "
          f"one node; page cache "
          f"{'dropped before each copy' if dropped else 'NOT dropped (not root)'}")
    print(f"  cp -r + sync   {cp_seconds:7.2f} s  {size / MIB / cp_seconds:8.1f} MiB/s")
    print(f"  stage          {stage_seconds:7.2f} s  "
          f"{size / MIB / stage_seconds:8.1f} MiB/s  "
          f"({cp_seconds / stage_seconds:.2f}x cp's rate)")
    for name, lines in (("rerun", rerun_lines), ("restart", restart_lines)):
        served, total = served_share(lines)
        print(f"  {name:<14} {served / MIB:7.0f} of {total / MIB:.0f} MiB from "
              f"the node cache ({100.0 * served / total:.1f}%)")


if __name__ == "__main__":
    main()
