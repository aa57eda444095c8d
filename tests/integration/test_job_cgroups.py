#!/usr/bin/env python3
"""Job cgroups (cgroup v2): every process of a job's ranks on a node is in
the job's cgroup, including one that left its rank's session and process
group (setsid), and it is killed with the job, on cancel and when the
ranks end. Where the memory controller is available, a job that outgrows
its --mem ends OUT_OF_MEMORY. Where a controller is missing (a hybrid
v1/v2 host such as the test machine), the agent says so at start.

Needs root and a cgroup2 mount; skipped otherwise."""

import os
import unittest

import gantry_cluster
from gantry_cluster import WAIT_FOR_FILE, ClusterTestCase, cgroup2_mount, pid_alive

# Each rank starts a daemon in a new session (out of reach of a process
# group kill), records both pids, then waits for a file that never comes
# unless HOLD=0.
DAEMONISING_SCRIPT = """#!/bin/bash
""" + WAIT_FOR_FILE + """
setsid -f bash -c 'echo $$ > "$0.tmp"; mv "$0.tmp" "$0"; exec sleep 1000' \
  "daemon.$SLURM_JOB_ID.$SLURM_PROCID"
wait_for_file "daemon.$SLURM_JOB_ID.$SLURM_PROCID"
echo $$ > "rank.$SLURM_JOB_ID.$SLURM_PROCID"
[ "$HOLD" = 0 ] || wait_for_file release.$SLURM_JOB_ID
"""


def session_of(pid):
    with open(f"/proc/{pid}/stat") as stat:
        # After the command: state, ppid, pgrp, session.
        return int(stat.read().rsplit(")", 1)[1].split()[3])


def cgroup_of(pid):
    with open(f"/proc/{pid}/cgroup") as lines:
        for line in lines:
            if line.startswith("0::"):
                return line[3:].strip()
    return None


@unittest.skipUnless(os.geteuid() == 0 and cgroup2_mount(),
                     "needs root and a cgroup2 mount")
class JobCgroupsTest(ClusterTestCase):

    def start(self, **options):
        cluster = self.start_cluster(agents=1, **options)
        log = cluster.agents["node01"].log_text()
        if "jobs run without cgroups" in log:
            self.skipTest("the agent cannot use cgroups here")
        self.mount = cgroup2_mount()
        self.node_cgroup = cluster.cgroup_root + "/node01"
        return cluster, log

    def start_job(self, cluster, ranks, **env):
        cluster.env.update(env)
        try:
            job_id = cluster.submit(cluster.write_script(
                "daemonise.sh", DAEMONISING_SCRIPT), f"--ntasks={ranks}")
        finally:
            for key in env:
                cluster.env.pop(key)
        files = cluster.wait_files(
            [f"{kind}.{job_id}.{r}" for r in range(ranks)
             for kind in ("daemon", "rank")])
        daemons = [int(files[f"daemon.{job_id}.{r}"]) for r in range(ranks)]
        rank_pids = [int(files[f"rank.{job_id}.{r}"]) for r in range(ranks)]
        return job_id, daemons, rank_pids

    def assert_cgroup_removed(self, job_id):
        path = f"{self.mount}{self.node_cgroup}/job_{job_id}.1"
        gantry_cluster.wait_for(lambda: not os.path.exists(path), 10,
                                f"{path} to be removed")

    def test_agent_names_missing_controllers(self):
        cluster, log = self.start()
        with open(os.path.join(self.mount, "cgroup.controllers")) as f:
            available = set(f.read().split())
        missing = [c for c in ("cpu", "memory") if c not in available]
        if missing:
            self.assertIn(f"cgroup v2 has no {', '.join(missing)} controller",
                          log)
            self.assertIn("job cgroups still hold and kill every process", log)
        else:
            self.assertIn("job cgroups ready", log)

    def test_cancel_kills_a_daemon_that_left_the_process_group(self):
        cluster, _ = self.start()
        job_id, daemons, rank_pids = self.start_job(cluster, 2)
        job_cgroup = f"{self.node_cgroup}/job_{job_id}.1"
        for daemon, rank in zip(daemons, rank_pids):
            self.assertNotEqual(session_of(daemon), session_of(rank),
                                "the daemon left the rank's session")
            self.assertEqual(cgroup_of(rank), job_cgroup)
            self.assertEqual(cgroup_of(daemon), job_cgroup)
        cluster.wait_job(job_id, "RUNNING")

        cluster.cli("cancel", str(job_id))
        cluster.wait_job(job_id, "CANCELLED")
        self.assert_pids_gone(daemons + rank_pids, timeout=10,
                              what="the job's ranks and daemons")
        self.assert_cgroup_removed(job_id)

    def test_daemons_end_with_the_last_rank(self):
        cluster, _ = self.start()
        job_id, daemons, rank_pids = self.start_job(cluster, 2, HOLD="0")
        cluster.wait_job(job_id, "COMPLETED")
        self.assert_pids_gone(daemons + rank_pids, timeout=10,
                              what="the daemons of a finished job")
        self.assert_cgroup_removed(job_id)

    def test_job_over_its_memory_limit_is_out_of_memory(self):
        cluster, log = self.start()
        if "job cgroups ready" not in log:
            self.skipTest("no memory controller for job cgroups here")
        script = cluster.write_script(
            "hog.sh", "#!/bin/bash\n"
            "python3 -c 'b = bytearray(512 * 1024 * 1024); print(len(b))'\n")
        job_id = cluster.submit(script, "--mem=64M", "--max-restarts=0")
        job = cluster.wait_job(job_id, "OUT_OF_MEMORY", timeout=30)
        self.assertIn("ran out of memory", job["reason_detail"])
        self.assert_cgroup_removed(job_id)


if __name__ == "__main__":
    gantry_cluster.main()
