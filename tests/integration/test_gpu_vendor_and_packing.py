#!/usr/bin/env python3
"""GPU variables per vendor and GPU choice by job shape, with the real
gantryd, agents whose nodes are real servers' hwloc exports
(../shared/data/hwloc) and the CLI under Slurm's names:

- node01, an HPE EX235a (8 MI250X GCDs, AMD): a job's ranks get
  ROCR_VISIBLE_DEVICES with the node's GPU numbers and HIP/CUDA_VISIBLE_
  DEVICES and GPU_DEVICE_ORDINAL renumbered from 0, as ROCm reads them;
  srun --gpus-per-task narrows them per task; a job without GPUs gets an
  empty ROCR_VISIBLE_DEVICES (no GPU);
- node02 and node03, MeluXina A100 nodes (4 GPUs, two per HDR HCA, two per
  socket): a one-node 2-GPU job gets two GPUs of one socket; a 2-node job
  gets one GPU per HCA on each node; NVIDIA ranks see CUDA_VISIBLE_DEVICES
  as before and no ROCm variable.
"""

import os
import re
import subprocess
import unittest

import gantry_cluster
from gantry_cluster import ClusterTestCase

MI250X_XML = gantry_cluster.shared_data(
    "hwloc", "hpe-ex235a-8xMI250X-gcd-slingshot.mpibind-tioga.v2.xml")
A100_XML = gantry_cluster.shared_data(
    "hwloc", "meluxina-gpu-4xA100-2xHDR.psmgmt-mel2001.v1.xml")

SHOW = ("echo rocr=${ROCR_VISIBLE_DEVICES-unset} "
        "hip=${HIP_VISIBLE_DEVICES-unset} cvd=${CUDA_VISIBLE_DEVICES-unset} "
        "ord=${GPU_DEVICE_ORDINAL-unset}")


class GpuVendorAndPackingTest(ClusterTestCase):
    @classmethod
    def setUpClass(cls):
        for path in (MI250X_XML, A100_XML):
            if not os.path.exists(path):
                raise unittest.SkipTest(f"{path} is absent (../shared/data)")
        cls.cluster = cls.start_class_cluster(
            agents=3, agent_args={
                "node01": ["--hwloc-xml", MI250X_XML],
                "node02": ["--hwloc-xml", A100_XML],
                "node03": ["--hwloc-xml", A100_XML]})
        cls.cluster.add_slurm_commands()

    def sbatch(self, options, command):
        result = subprocess.run(
            ["sbatch", "--parsable", *options, "--wrap", command],
            cwd=self.cluster.work_dir, env=self.cluster.env,
            capture_output=True, text=True, timeout=30)
        self.assertEqual(result.returncode, 0, result.stderr)
        return int(result.stdout)

    def output(self, job_id):
        return self.cluster.read(f"gantry-{job_id}.out")

    def test_amd_node_sets_what_rocm_reads(self):
        c = self.cluster
        # Holds GPUs 0 and 1, so the next job's are 2 and 3.
        holder = self.sbatch(["-w", "node01", "-G", "2"], "sleep 60")
        c.wait_job(holder, "RUNNING")
        job_id = self.sbatch(
            ["-w", "node01", "-G", "2", "-n", "2"],
            f"{SHOW}; srun --gpus-per-task=1 bash -c "
            f"'echo task $SLURM_PROCID $ROCR_VISIBLE_DEVICES "
            f"$HIP_VISIBLE_DEVICES $CUDA_VISIBLE_DEVICES'")
        job = c.wait_job(job_id, "COMPLETED", timeout=40)
        self.assertEqual(job["allocation"][0]["gpus"], [2, 3])
        out = self.output(job_id)
        self.assertIn("rocr=2,3 hip=0,1 cvd=0,1 ord=0,1", out)
        tasks = sorted(re.findall(r"task (\d) (\S+) (\S+) (\S+)", out))
        self.assertEqual(tasks, [("0", "2", "0", "0"), ("1", "3", "0", "0")],
                         out)
        c.cli("cancel", str(holder))

        job_id = self.sbatch(["-w", "node01"], SHOW)
        c.wait_job(job_id, "COMPLETED")
        self.assertIn("rocr= hip= cvd= ord=", self.output(job_id))

    def test_nvidia_node_unchanged(self):
        c = self.cluster
        job_id = self.sbatch(["-w", "node02", "-G", "2"], SHOW)
        job = c.wait_job(job_id, "COMPLETED")
        gpus = job["allocation"][0]["gpus"]
        self.assertIn(
            "rocr=unset hip=unset cvd=%s ord=%s" % (
                ",".join(map(str, gpus)), ",".join(map(str, gpus))),
            self.output(job_id))

    def test_gpus_by_job_shape(self):
        c = self.cluster
        # Where the agent found each GPU, as the scheduler sees it.
        gpus = c.cli_json("nodes", "node02")["gpus"]
        self.assertEqual([(g["pcie_switches"], g["host_bridge"], g["package"])
                          for g in gpus],
                         [(["0000:01:00.0"], "0000:[00-07]", 0),
                          (["0000:41:00.0"], "0000:[40-47]", 0),
                          (["0000:81:00.0"], "0000:[80-87]", 1),
                          (["0000:c1:00.0"], "0000:[c0-c8]", 1)])
        self.assertEqual([g["nearest_hca"] for g in gpus],
                         ["mlx5_0", "mlx5_0", "mlx5_1", "mlx5_1"])
        # The text view says the same, one row per GPU.
        text = c.cli("nodes", "node02").stdout
        self.assertIn("PCIE_SWITCH", text)
        row = next(line for line in text.splitlines()
                   if "0000:81:00.0" in line and "0000:[80-87]" in line)
        self.assertEqual(row.split()[0], "2")
        # One node: both GPUs on one socket (0 and 1 share package 0 and
        # HCA mlx5_0), not one per HCA across the sockets.
        job_id = self.sbatch(["-w", "node02", "-N", "1", "-G", "2"], "true")
        job = c.wait_job(job_id, "COMPLETED")
        self.assertEqual(job["allocation"][0]["gpus"], [0, 1])
        # Two nodes: each rank's GPU on its own HCA rail.
        job_id = self.sbatch(
            ["-w", "node[02-03]", "-N", "2", "--gpus-per-node=2"], "true")
        job = c.wait_job(job_id, "COMPLETED")
        self.assertEqual([share["gpus"] for share in job["allocation"]],
                         [[0, 2], [0, 2]])


if __name__ == "__main__":
    gantry_cluster.main()
