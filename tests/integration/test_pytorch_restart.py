"""Real PyTorch training survives the loss of a node.

The example job packaging/examples/train_ddp.sbatch trains a small
deterministic model with torch.distributed (gloo) across two agents and
checkpoints every 10 steps. Killing one agent (kill -9) mid-run must make
Gantry drain that node, restart the job on the hot spare from the latest
checkpoint, and finish with exactly the parameters of an uninterrupted run.
"""
import os
import shutil
import subprocess
import unittest

from gantry_cluster import ClusterTestCase, main, wait_for

# Debian's python3, which is where python3-torch installs.
SYSTEM_PYTHON = "/usr/bin/python3"
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "..", "..", "packaging", "examples")
# gantry_checkpoint, as the agent package installs it on every node.
PYTHON_MODULES = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                              "..", "..", "packaging", "python")


def torch_available():
    try:
        return subprocess.run([SYSTEM_PYTHON, "-c", "import torch"],
                              capture_output=True, timeout=120).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@unittest.skipUnless(torch_available(),
                     "python3-torch is not installed (Debian package "
                     "python3-torch): the PyTorch restart test needs it")
class PyTorchRestartTest(ClusterTestCase):

    def test_training_resumes_on_the_spare_with_identical_result(self):
        cluster = self.start_cluster(agents=3, hot_spares="node03",
                                     node_timeout=2.0)
        cluster.env["PATH"] = "/usr/bin:" + cluster.env.get("PATH", "")
        for name in ("train_ddp.py", "train_ddp.sbatch"):
            shutil.copy(os.path.join(EXAMPLES, name), cluster.path(name))
        train_args = ["--steps", "60", "--step-seconds", "0.1"]

        # The reference: the same training, never interrupted.
        os.makedirs(cluster.path("ckpt-reference"))
        reference = cluster.submit(
            "train_ddp.sbatch", "--checkpoint-dir", "ckpt-reference",
            args=train_args + ["--result", "reference.txt"])
        cluster.wait_job(reference, "COMPLETED", timeout=120)

        os.makedirs(cluster.path("ckpt"))
        job_id = cluster.submit(
            "train_ddp.sbatch", "--checkpoint-dir", "ckpt",
            args=train_args + ["--result", "interrupted.txt"])
        job = cluster.wait_job(job_id, "RUNNING", timeout=30)
        self.assertEqual(job["nodelist"], "node[01-02]",
                         "the hot spare must not take a first attempt")

        def checkpointed_step():
            marker = cluster.path("ckpt", "latest_checkpointed_iteration.txt")
            if not os.path.exists(marker):
                return None
            step = int(open(marker).read())
            return step if step >= 20 else None
        wait_for(checkpointed_step, 60, "a checkpoint at step 20 or later")
        cluster.kill_agent("node02")

        job = cluster.wait_job(job_id, "COMPLETED", timeout=120)
        attempts = job["attempts"]
        self.assertEqual(len(attempts), 2, attempts)
        self.assertTrue(attempts[0]["node_fault"], attempts[0])
        self.assertEqual(attempts[0]["end_reason"], "NodeFail")
        self.assertIn("node03", attempts[1]["nodes"])
        self.assertNotIn("node02", attempts[1]["nodes"])
        self.assertRegex(attempts[1]["resumed_from"], r"/ckpt/iter_00000[2-6]0$")
        node = cluster.nodes()["node02"]
        self.assertTrue(node["drained"], node)

        output = cluster.read(f"train-{job_id}.out")
        self.assertIn("resuming from", output)
        self.assertEqual(cluster.read("interrupted.txt"),
                         cluster.read("reference.txt"),
                         "the resumed run must end with the parameters of "
                         "the uninterrupted one")

    def test_training_restores_from_peer_memory_past_the_file_checkpoint(self):
        """--memory-checkpoints: every rank snapshots every 5 steps; the
        file checkpoint comes every 20. After node02 is lost, the restart
        restores the newest snapshot both ranks hold (node02's from its
        peer) rather than the older file checkpoint, and still ends with
        the uninterrupted run's parameters."""
        cluster = self.start_cluster(agents=3, hot_spares="node03",
                                     node_timeout=2.0)
        cluster.env["PATH"] = "/usr/bin:" + cluster.env.get("PATH", "")
        cluster.env["PYTHONPATH"] = PYTHON_MODULES
        for name in ("train_ddp.py", "train_ddp.sbatch"):
            shutil.copy(os.path.join(EXAMPLES, name), cluster.path(name))
        train_args = ["--steps", "80", "--step-seconds", "0.1",
                      "--checkpoint-every", "20",
                      "--memory-checkpoint-every", "5"]

        os.makedirs(cluster.path("ckpt-reference"))
        reference = cluster.submit(
            "train_ddp.sbatch", "--checkpoint-dir", "ckpt-reference",
            "--memory-checkpoints",
            args=train_args + ["--result", "reference.txt"])
        cluster.wait_job(reference, "COMPLETED", timeout=120)

        os.makedirs(cluster.path("ckpt"))
        job_id = cluster.submit(
            "train_ddp.sbatch", "--checkpoint-dir", "ckpt",
            "--memory-checkpoints",
            args=train_args + ["--result", "interrupted.txt"])
        cluster.wait_job(job_id, "RUNNING", timeout=30)

        # A memory checkpoint protected past the file checkpoint at 20.
        def protected_step():
            step = (cluster.job(job_id).get("memory_checkpoint") or {}).get(
                "step", 0)
            return step if step >= 25 and step % 20 != 0 else None
        step = wait_for(protected_step, 60, "a memory checkpoint past step 20")
        cluster.kill_agent("node02")

        job = cluster.wait_job(job_id, "COMPLETED", timeout=120)
        self.assertEqual(len(job["attempts"]), 2, job["attempts"])
        restored = job.get("memory_restore_step")
        self.assertIsNotNone(restored, "the restart must restore from memory")
        self.assertGreaterEqual(restored, step)
        persistent = job["attempts"][1]["resumed_from"]
        self.assertLess(int(persistent.rsplit("_", 1)[1]) if persistent else 0,
                        restored, "memory is newer than the file checkpoint")
        output = cluster.read(f"train-{job_id}.out")
        self.assertIn(f"restoring step {restored} from memory", output)
        self.assertEqual(cluster.read("interrupted.txt"),
                         cluster.read("reference.txt"),
                         "the restored run must end with the parameters of "
                         "the uninterrupted one")


if __name__ == "__main__":
    main()
