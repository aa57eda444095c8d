#!/usr/bin/env python3
"""The corpus in slurm_scripts/ (see its README): batch scripts written as
public LLM training repositories write them for Slurm, run unchanged under
the sbatch/srun/scontrol names, each with its results checked.

The nodes are named by their addresses (127.0.X.N), names that resolve as
Slurm's NodeName must, since the scripts use node names from
SLURM_JOB_NODELIST as rendezvous hosts."""

import os
import re
import shutil
import subprocess
import time

import gantry_cluster
from gantry_cluster import ClusterTestCase

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "slurm_scripts")
SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin")


def torch_missing():
    return subprocess.run([SYSTEM_PYTHON or "python3", "-c", "import torch"],
                          capture_output=True).returncode != 0


class SlurmScriptsTest(ClusterTestCase):
    @classmethod
    def setUpClass(cls):
        cluster = cls.start_class_cluster(agents=0)
        cls.node_names = []
        for i in range(1, 4):
            name = f"{cluster.address_prefix}{i}"
            cluster.start_agent(name)
            assert cluster.addresses[name] == name, cluster.addresses
            cls.node_names.append(name)
        cluster.wait_nodes_up(cls.node_names)
        # The system Python (python3-torch) ahead of any other.
        cluster.add_slurm_commands(extra_path="/usr/bin")
        cluster.env["OMP_NUM_THREADS"] = "1"
        cls.cluster = cluster

    def setUp(self):
        # Each script in a fresh copy of the corpus, as a user's checkout.
        self.dir = self.cluster.path("runs", self.id().rsplit(".", 1)[-1])
        shutil.copytree(CORPUS, self.dir)

    def require_torch(self):
        if torch_missing():
            self.skipTest("python3-torch is not installed (Debian package "
                          "python3-torch)")

    def sbatch(self, script, *options):
        result = self.cluster.cli("batch", "--parsable", *options, script,
                                  cwd=self.dir)
        return int(result.stdout.split(";")[0])

    def read(self, name):
        with open(os.path.join(self.dir, name)) as f:
            return f.read()

    def wait(self, job_id, timeout=90):
        job = self.cluster.wait_job(job_id, "COMPLETED", "FAILED", "TIMEOUT",
                                    "CANCELLED", timeout=timeout)
        return job

    def test_torchrun_one_launcher_per_node(self):
        self.require_torch()
        job_id = self.sbatch("torchrun_multinode.sbatch")
        job = self.wait(job_id, timeout=150)
        out = self.read(f"torchrun-{job_id}.out")
        self.assertEqual(job["state"], "COMPLETED", out)
        self.assertIn("torchrun exit=0", out.splitlines(), out)
        ranks = sorted(re.sub(r"^\[default\d+\]:", "", line)
                       for line in out.splitlines()
                       if "rank " in line and "sum=" in line)
        self.assertEqual(ranks, [f"rank {r}/4 node_rank={r // 2} sum=10"
                                 for r in range(4)], out)

    def test_megatron_one_rank_per_task(self):
        self.require_torch()
        job_id = self.sbatch("megatron_pretrain.sbatch")
        job = self.wait(job_id, timeout=150)
        out = self.read(f"megatron-megatron-gpt-{job_id}.out")
        self.assertEqual(job["state"], "COMPLETED", out)
        self.assertIn("srun exit=0", out)
        nodes = gantry_cluster.expand_hostlist(job["nodelist"])
        lines = sorted(line for line in out.splitlines() if "rank=" in line)
        self.assertEqual(len(lines), 4, out)
        for line in lines:
            label, text = line.split(": ", 1)
            fields = dict(item.split("=", 1) for item in text.split()
                          if "=" in item)
            rank = int(fields["rank"])
            self.assertEqual(int(label), rank)  # srun --label
            self.assertEqual(fields["world"], "4")
            self.assertEqual(int(fields["local_rank"]), rank % 2)
            self.assertEqual(fields["node"], nodes[rank // 2])
            self.assertEqual(fields["sum"], "10")
            self.assertIn("--num-layers 2", text)

    def test_deepspeed_hostfile(self):
        job_id = self.sbatch("deepspeed_hostfile.sbatch")
        job = self.wait(job_id)
        out = self.read(f"deepspeed-{job_id}.out")
        self.assertEqual(job["state"], "COMPLETED", out)
        nodes = gantry_cluster.expand_hostlist(job["nodelist"])
        self.assertEqual(self.read(f"hostfile-{job_id}"),
                         "".join(f"{n} slots=2\n" for n in nodes))
        self.assertEqual(out.count(" ok"), 4, out)
        self.assertNotIn("MISMATCH", out)
        self.assertIn("srun exit=0", out)

    def test_sweep_array(self):
        os.makedirs(os.path.join(self.dir, "sweep"))
        job_id = self.sbatch("sweep_array.sbatch")
        jobs = {}
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            jobs = {j["job_id"]: j for j in self.cluster.cli_json(
                "queue", "--all", "-j", str(job_id))["jobs"]}
            if len(jobs) == 6 and all(j["state"] == "COMPLETED"
                                      for j in jobs.values()):
                break
            time.sleep(0.3)
        self.assertEqual(sorted(j["state"] for j in jobs.values()),
                         ["COMPLETED"] * 6, jobs)
        rates = ["1e-3", "6e-4", "3e-4", "1e-4", "6e-5", "3e-5"]
        for index, lr in enumerate(rates):
            log = self.read(f"sweep/lr-sweep-{job_id}_{index}.out")
            self.assertIn(f"task {index} of {job_id} (count 6) lr={lr}", log)
            self.assertIn("final_loss=",
                          self.read(f"sweep/result-lr{lr}.txt"))
        # %2: never more than two tasks at once.
        spans = []
        for index in range(6):
            times = dict(line.split() for line in
                         self.read(f"sweep/run-{index}.times").splitlines())
            spans.append((float(times["start"]), float(times["end"])))
        for start, _ in spans:
            running = sum(1 for s, e in spans if s <= start < e)
            self.assertLessEqual(running, 2, spans)

    def test_dependency_chain(self):
        result = subprocess.run(["bash", "chain_submit.sh"], cwd=self.dir,
                                env=self.cluster.env, capture_output=True,
                                text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        pre, train, evaluation = (int(x) for x in result.stdout.split())
        for job_id in (pre, train, evaluation):
            self.assertEqual(self.wait(job_id)["state"], "COMPLETED",
                             self.read("chain.log"))
        events = [line.split() for line in self.read("chain.log").splitlines()]
        self.assertEqual([f"{stage} {edge}" for stage, edge, _ in events],
                         ["preprocess start", "preprocess end", "train start",
                          "train end", "eval start", "eval end"])
        stamps = [float(t) for _, _, t in events]
        self.assertEqual(stamps, sorted(stamps))
        self.assertIn("shard 1: 50 rows", self.read("chain-train.out"))
        self.assertEqual(self.read("chain-eval.out").strip(), "2")

    def test_resubmit_on_signal_before_the_limit(self):
        first = self.sbatch("resubmit_on_signal.sbatch")
        self.assertEqual(self.wait(first, timeout=40)["state"], "COMPLETED")
        # The continuation: the same name, queued by the first piece.
        deadline = time.monotonic() + 60
        second = None
        while second is None and time.monotonic() < deadline:
            later = [j for j in self.cluster.cli_json("queue", "--all")["jobs"]
                     if j["name"] == "long-pretrain" and j["job_id"] > first]
            second = later[0]["job_id"] if later else None
            time.sleep(0.3)
        self.assertIsNotNone(second, self.read("resubmit.log"))
        self.assertEqual(self.wait(second, timeout=40)["state"], "COMPLETED")
        log = self.read("resubmit.log").splitlines()
        self.assertEqual(log[0], f"piece {first} resumes at step 0")
        saved = int(log[1].split()[-1])
        self.assertGreater(saved, 0)
        self.assertEqual(log[1], f"piece {first} saved step {saved}")
        self.assertEqual(log[2], f"piece {second} resumes at step {saved}")
        self.assertRegex(log[3], rf"piece {second} saved step \d+")
        self.assertEqual(len(log), 4, log)  # two pieces, then done

    def test_env_report(self):
        job_id = self.sbatch("env_report.sbatch")
        job = self.wait(job_id)
        out = self.read(f"env-{job_id}.out")
        self.assertEqual(job["state"], "COMPLETED", out)
        nodes = gantry_cluster.expand_hostlist(job["nodelist"])
        batch = dict(line[len("batch "):].split("=", 1)
                     for line in out.splitlines() if line.startswith("batch "))
        self.assertEqual(batch["SLURM_JOB_ID"], str(job_id))
        self.assertEqual(batch["SLURM_JOB_NAME"], "env-report")
        self.assertEqual(gantry_cluster.expand_hostlist(
            batch["SLURM_JOB_NODELIST"]), nodes)
        self.assertEqual(batch["SLURM_NNODES"], "2")
        self.assertEqual(batch["SLURM_JOB_NUM_NODES"], "2")
        self.assertEqual(batch["SLURM_NTASKS"], "4")
        self.assertEqual(batch["SLURM_NTASKS_PER_NODE"], "2")
        self.assertEqual(batch["SLURM_CPUS_PER_TASK"], "1")
        self.assertEqual(batch["SLURM_SUBMIT_DIR"], self.dir)
        self.assertEqual(batch["SLURM_RESTART_COUNT"], "0")
        self.assertEqual(batch["SLURM_JOB_CPUS_PER_NODE"], "2(x2)")
        self.assertEqual(batch["SLURM_MEM_PER_NODE"], "100")
        tasks = sorted(line for line in out.splitlines()
                       if line.startswith("task "))
        self.assertEqual(tasks, [
            f"task {r} local={r % 2} node={r // 2} name={nodes[r // 2]} "
            f"ntasks=4 step=0" for r in range(4)], out)


if __name__ == "__main__":
    gantry_cluster.main()
