#!/usr/bin/env python3
"""The site's names, configured once in gantryd and the same everywhere:
--cluster-name is SLURM_CLUSTER_NAME in jobs and what sacct, sreport and
scontrol show config print; --default-account is the account of jobs that
name none (SLURM_JOB_ACCOUNT, squeue, sacct, scontrol show job), and a job's
QOS is normal unless it names one. A bad name stops gantryd at start."""

import subprocess

import gantry_cluster
from gantry_cluster import ClusterTestCase

VARIABLES = ("#!/bin/bash\n"
             "echo \"cluster=$SLURM_CLUSTER_NAME account=${SLURM_JOB_ACCOUNT-unset}"
             " qos=$SLURM_JOB_QOS\"\n")


class SiteNamesTest(ClusterTestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster = cls.start_class_cluster(
            agents=1, gantryd_args=["--cluster-name", "hpc-east",
                                    "--default-account", "physics"])
        cls.cluster.add_slurm_commands()

    def sh(self, command):
        result = subprocess.run(
            ["bash", "-c", command], cwd=self.cluster.work_dir,
            env=self.cluster.env, capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result.stdout

    def run_job(self, *options):
        cluster = self.cluster
        script = cluster.write_script("vars.sh", VARIABLES)
        job_id = cluster.submit(script, "-o", "vars-%j.out", *options,
                                per_task=False)
        cluster.wait_job(job_id, "COMPLETED", timeout=30)
        return job_id, cluster.read(f"vars-{job_id}.out").strip()

    def test_the_cluster_name_is_the_same_everywhere(self):
        job_id, output = self.run_job()
        self.assertEqual(output, "cluster=hpc-east account=physics qos=normal")
        self.assertEqual(
            self.sh(f"sacct -X -n -P -j {job_id} -o Cluster,JobID").strip(),
            f"hpc-east|{job_id}")
        config = self.sh("scontrol show config")
        self.assertRegex(config, r"\nClusterName\s+= hpc-east\n")
        report = self.sh("sreport -n -P cluster Utilization")
        self.assertTrue(report.startswith("hpc-east|"), report)
        users = self.sh("sreport -n -P cluster AccountUtilizationByUser")
        self.assertTrue(users.startswith("hpc-east|root|"), users)

    def test_default_account_and_qos_shown_consistently(self):
        job_id, output = self.run_job()
        self.assertIn("account=physics qos=normal", output)
        own_id, own = self.run_job("-A", "ml", "--qos=high")
        self.assertIn("account=ml qos=high", own)
        for job, account, qos in ((job_id, "physics", "normal"),
                                  (own_id, "ml", "high")):
            self.assertEqual(
                self.sh(f"sacct -X -n -P -j {job} -o Account,QOS").strip(),
                f"{account}|{qos}")
            self.assertEqual(
                self.sh(f"squeue -h -t all -j {job} -o '%a %q'").strip(),
                f"{account} {qos}")
            self.assertIn(f" Account={account} QOS={qos}\n",
                          self.sh(f"scontrol show job {job}"))
        # The filters select by them.
        self.assertEqual(
            self.sh("squeue -h -t all -A ml -o %i").split(), [str(own_id)])
        physics = self.sh("sacct -X -n -P -A physics -o JobID "
                          "-S 2000-01-01").split()
        self.assertIn(str(job_id), physics)
        self.assertNotIn(str(own_id), physics)

    def test_a_bad_name_stops_gantryd(self):
        for flag, value, message in (
                ("--cluster-name", "two words", "gantryd: --cluster-name "
                 "\"two words\" may hold only letters, digits"),
                ("--default-account", "a|b", "gantryd: --default-account "
                 "\"a|b\" may hold only letters")):
            result = subprocess.run(
                [self.cluster.gantryd_bin, "--state-dir", "/nonexistent",
                 flag, value], capture_output=True, text=True, timeout=30)
            self.assertEqual(result.returncode, 2, result.stderr)
            self.assertIn(message, result.stderr)


if __name__ == "__main__":
    gantry_cluster.main()
