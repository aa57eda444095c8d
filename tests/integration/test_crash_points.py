#!/usr/bin/env python3
"""Every crash point of gantryd and gantry-agent (common/crash_point.h),
walked: the process dies there exactly as to kill -9, is started again,
and the invariants hold.

- No acknowledged job is lost, and none runs twice: every (attempt, rank)
  of a job starts at most once.
- Our own crash spends nothing: jobs are submitted with --max-restarts=0,
  so a restart charged to the job would end it FAILED.
- No healthy node is drained: every node is up and undrained afterwards.
- Every rank is accounted for: the job ends, and none of its rank
  processes is left.

The test first checks that it knows every point each binary has
(GANTRY_CRASH_AT=list), so a point added to the code and not walked here
fails the suite."""

import os
import signal
import subprocess

import gantry_cluster
from gantry_cluster import WAIT_FOR_FILE, ClusterTestCase, wait_for

# Each rank logs "attempt rank node pid" once, then waits for the file
# `release.JOB` in the work dir. A rank of a failing-first-attempt job
# (FAIL_FIRST set) exits 3 on attempt 1.
RANK_SCRIPT = """#!/bin/bash
""" + WAIT_FOR_FILE + """
echo "$GANTRY_ATTEMPT $SLURM_PROCID $SLURMD_NODENAME $$" >> "runs.$SLURM_JOB_ID"
if [ -n "$FAIL_FIRST" ] && [ "$GANTRY_ATTEMPT" = 1 ] && [ "$SLURM_PROCID" = 1 ]; then
  exit 3
fi
wait_for_file "release.$SLURM_JOB_ID" || exit 1
"""

# A batch script (run once) that starts a step on both nodes of its job.
STEP_SCRIPT = """#!/bin/bash
""" + WAIT_FOR_FILE + """
echo "$GANTRY_ATTEMPT 0 $SLURMD_NODENAME $$" >> "runs.$SLURM_JOB_ID"
gantry run -N2 --ntasks-per-node=1 hostname > "step.$SLURM_JOB_ID" 2>&1
echo "step exit $?" >> "step.$SLURM_JOB_ID"
wait_for_file "release.$SLURM_JOB_ID" || exit 1
"""

CONTROLLER_POINTS = {
    "gantryd.submit.after_commit_before_reply",
    "gantryd.start.after_commit_before_launch",
    "gantryd.start.after_launch_sent",
    "gantryd.exit.after_commit_before_ack",
    "gantryd.register.before_commit",
    "gantryd.requeue.after_commit_before_kill",
    "gantryd.step.after_commit_before_launch",
    "gantryd.cancel.after_commit_before_kill",
    "gantryd.inactive.after_commit_before_kill",
}
# Points of a replicated controller (gantryd --etcd), walked by
# test_high_availability.py and test_log_truncation.py, which run etcd.
REPLICATED_CONTROLLER_POINTS = {
    "gantryd.replicate.after_append_before_apply",
    "gantryd.snapshot.after_ready_before_install",
    "gantryd.snapshot.between_renames",
}
# Points walked elsewhere: a dataset copy killed mid-tree, by
# tests/unit/agent/datasets/dataset_cache_test.cc ("an interrupted copy is never
# served and resumes"), and every point of the cache's records, by
# tests/unit/agent/datasets/dataset_cache_integrity_test.cc ("the cache opens
# consistently after a kill at each crash point").
DATASET_AGENT_POINTS = {
    "agent.dataset.after_file_copied",
    "agent.dataset.record_before_rename",
    "agent.dataset.after_partial_record",
    "agent.dataset.after_copy_before_record",
    "agent.dataset.after_unrecord_before_remove",
    "agent.dataset.before_unknown_removed",
}
AGENT_POINTS = {
    "agent.launch.after_receive_before_start",
    "agent.launch.after_start",
    "agent.exit.before_report",
    "agent.register.before_send",
    "agent.step.after_receive_before_start",
}


def listed_points(binary):
    result = subprocess.run([binary], env={**os.environ,
                                           "GANTRY_CRASH_AT": "list"},
                            capture_output=True, text=True, timeout=30,
                            check=True)
    return set(result.stdout.split())


class CrashPointTest(ClusterTestCase):

    @classmethod
    def setUpClass(cls):
        cls.cluster = cls.start_class_cluster(agents=2)
        cls.cluster.add_slurm_commands()

    # --- Helpers ---

    def crash_controller_at(self, point):
        """Restarts gantryd with `point` armed."""
        self.cluster.kill_controller()
        self.cluster.start_controller(env={"GANTRY_CRASH_AT": point})
        self.current_point = point

    def crash_agent_at(self, name, point):
        self.cluster.kill_agent(name)
        self.cluster.start_agent(name, env={"GANTRY_CRASH_AT": point})
        self.current_point = point

    def wait_crashed(self, daemon):
        wait_for(lambda: not daemon.running(), 30,
                 f"{daemon.role} to die at {self.current_point}")
        self.assertIn(f"crash point {self.current_point} reached",
                      daemon.log_text())
        self.assertEqual(daemon.process.returncode, -9)

    def restart_controller(self):
        self.cluster.start_controller()
        self.cluster.wait_nodes_up(list(self.cluster.agents), timeout=30)

    def restart_agent(self, name):
        self.cluster.start_agent(name)
        self.cluster.wait_nodes_up(list(self.cluster.agents), timeout=30)

    def submit(self, *options, env=None, script=RANK_SCRIPT, per_task=True):
        path = self.cluster.write_script("crash.sh", script)
        argv = [self.cluster.cli_bin, "batch", "--parsable",
                "--max-restarts=0", "-N2", "--ntasks-per-node=1",
                *(["--per-task"] if per_task else []), *options, path]
        return subprocess.run(argv, cwd=self.cluster.work_dir,
                              env={**self.cluster.env, **(env or {})},
                              capture_output=True, text=True, timeout=60)

    def submitted(self, *options, **kwargs):
        result = self.submit(*options, **kwargs)
        self.assertEqual(result.returncode, 0, result.stderr)
        return int(result.stdout)

    def runs(self, job_id):
        try:
            lines = self.cluster.read(f"runs.{job_id}").split("\n")
        except FileNotFoundError:
            return []
        return [line.split() for line in lines if line.strip()]

    def wait_runs(self, job_id, count, timeout=30):
        wait_for(lambda: len(self.runs(job_id)) >= count, timeout,
                 f"{count} rank start(s) of job {job_id}")

    def finish(self, job_id, *states):
        self.cluster.touch(f"release.{job_id}")
        return self.cluster.wait_job(job_id, *(states or ("COMPLETED",)),
                                     timeout=60)

    def check_invariants(self, job_id, max_attempts=1):
        runs = self.runs(job_id)
        starts = [(attempt, rank) for attempt, rank, _, _ in runs]
        self.assertEqual(len(starts), len(set(starts)),
                         f"a rank of job {job_id} started twice in one "
                         f"attempt at {self.current_point}: {runs}")
        # Every rank accounted for: none of them is still running.
        pids = [int(pid) for _, _, _, pid in runs]
        self.assert_pids_gone(pids, what=f"ranks of job {job_id}")
        for name, node in self.cluster.nodes().items():
            self.assertEqual(node["state"], "up",
                             f"{name} after {self.current_point}: {node}")
            self.assertFalse(node.get("drained"),
                             f"{name} drained after {self.current_point}: "
                             f"{node}")
        job = self.cluster.job(job_id)
        charged = job.get("attempt", 1) - job.get("uncharged_attempts", 0)
        self.assertLessEqual(charged, max_attempts,
                             f"restart budget spent at {self.current_point}: "
                             f"{job}")

    # --- The walk ---

    def test_walks_every_crash_point(self):
        self.assertEqual(listed_points(self.cluster.gantryd_bin),
                         CONTROLLER_POINTS | REPLICATED_CONTROLLER_POINTS)
        self.assertEqual(listed_points(self.cluster.agent_bin),
                         AGENT_POINTS | DATASET_AGENT_POINTS)
        for point in CONTROLLER_POINTS | AGENT_POINTS:
            method = "test_point_" + point.replace(".", "_")
            self.assertTrue(hasattr(self, method),
                            f"crash point {point} has no {method} here")

    def test_an_unknown_point_is_refused_at_start(self):
        result = subprocess.run(
            [self.cluster.gantryd_bin, "--state-dir", "/nonexistent"],
            env={**os.environ, "GANTRY_CRASH_AT": "gantryd.no.such.point"},
            capture_output=True, text=True, timeout=30)
        self.assertEqual(result.returncode, 2)
        self.assertIn("no crash point 'gantryd.no.such.point'", result.stderr)

    # gantryd

    def test_point_gantryd_submit_after_commit_before_reply(self):
        self.crash_controller_at("gantryd.submit.after_commit_before_reply")
        path = self.cluster.write_script("crash.sh", RANK_SCRIPT)
        batch = subprocess.Popen(
            [self.cluster.cli_bin, "batch", "--parsable", "--max-restarts=0",
             "-N2", "--ntasks-per-node=1", "--per-task", "-J", "unanswered",
             path], cwd=self.cluster.work_dir, env=self.cluster.env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.wait_crashed(self.cluster.controller)
        self.restart_controller()
        # The CLI asked again with the submission's token and got the job
        # that was stored; it exists once.
        out, err = batch.communicate(timeout=150)
        self.assertEqual(batch.returncode, 0, err)
        jobs = [j for j in self.cluster.cli_json("queue", "--all")["jobs"]
                if j["name"] == "unanswered"]
        self.assertEqual([j["job_id"] for j in jobs], [int(out)], jobs)
        self.wait_runs(jobs[0]["job_id"], 2)
        self.finish(jobs[0]["job_id"])
        self.check_invariants(jobs[0]["job_id"])

    def test_point_gantryd_start_after_commit_before_launch(self):
        # The defect this point was made for: the restarted controller used
        # to find the node without the rank, drain it and charge the job.
        self.crash_controller_at("gantryd.start.after_commit_before_launch")
        job_id = self.submitted()
        self.wait_crashed(self.cluster.controller)
        self.assertEqual(self.runs(job_id), [])
        self.restart_controller()
        self.wait_runs(job_id, 2)
        job = self.finish(job_id)
        self.assertEqual(job["attempt"], 1, job)
        self.check_invariants(job_id)

    def test_point_gantryd_start_after_launch_sent(self):
        self.crash_controller_at("gantryd.start.after_launch_sent")
        job_id = self.submitted()
        self.wait_crashed(self.cluster.controller)
        self.restart_controller()
        self.wait_runs(job_id, 2)
        self.finish(job_id)
        self.check_invariants(job_id)

    def test_point_gantryd_exit_after_commit_before_ack(self):
        job_id = self.submitted()
        self.wait_runs(job_id, 2)
        self.cluster.wait_job(job_id, "RUNNING")
        self.crash_controller_at("gantryd.exit.after_commit_before_ack")
        self.cluster.touch(f"release.{job_id}")
        self.wait_crashed(self.cluster.controller)
        self.restart_controller()
        self.finish(job_id)
        self.check_invariants(job_id)

    def test_point_gantryd_register_before_commit(self):
        self.crash_controller_at("gantryd.register.before_commit")
        self.wait_crashed(self.cluster.controller)
        self.restart_controller()
        job_id = self.submitted()
        self.wait_runs(job_id, 2)
        self.finish(job_id)
        self.check_invariants(job_id)

    def test_point_gantryd_requeue_after_commit_before_kill(self):
        self.crash_controller_at("gantryd.requeue.after_commit_before_kill")
        # Rank 1 fails its first attempt: an application failure, one
        # restart allowed and charged; rank 0 of attempt 1 waits to be
        # killed when the controller dies.
        job_id = self.submitted("--max-restarts=1", env={"FAIL_FIRST": "1"})
        self.wait_crashed(self.cluster.controller)
        self.restart_controller()
        self.wait_runs(job_id, 4)
        job = self.finish(job_id)
        self.assertEqual(job["attempt"], 2, job)
        self.check_invariants(job_id, max_attempts=2)

    def test_point_gantryd_cancel_after_commit_before_kill(self):
        job_id = self.submitted()
        self.wait_runs(job_id, 2)
        self.cluster.wait_job(job_id, "RUNNING")
        self.crash_controller_at("gantryd.cancel.after_commit_before_kill")
        self.cluster.cli("cancel", str(job_id), check=False)
        self.wait_crashed(self.cluster.controller)
        self.restart_controller()
        # Cancelled for good, and its ranks stopped by the new controller.
        self.cluster.wait_job(job_id, "CANCELLED", timeout=30)
        self.check_invariants(job_id)

    def test_point_gantryd_step_after_commit_before_launch(self):
        self.crash_controller_at("gantryd.step.after_commit_before_launch")
        job_id = self.submitted(script=STEP_SCRIPT, per_task=False)
        self.wait_crashed(self.cluster.controller)
        self.restart_controller()
        # The step was lost with the controller (gantry run says so); the
        # batch script carries on and the job ends as it decides.
        job = self.finish(job_id)
        self.assertEqual(job["attempt"], 1, job)
        self.check_invariants(job_id)

    def test_point_gantryd_inactive_after_commit_before_kill(self):
        # This controller start only: a short inactive limit.
        usual = list(self.cluster.gantryd_args)
        self.cluster.gantryd_args += ["--inactive-limit", "2"]
        try:
            self.crash_controller_at(
                "gantryd.inactive.after_commit_before_kill")
        finally:
            self.cluster.gantryd_args = usual
        # srun outside a job holds the allocation, its step on both nodes;
        # then it is killed, and its allocation ends when it falls silent.
        client = subprocess.Popen(
            [self.cluster.cli_bin, "run", "-N2", "--ntasks-per-node=1",
             "bash", "-c", 'echo "$SLURM_JOB_ID" > inactive.job; echo '
             '"$GANTRY_ATTEMPT $SLURM_PROCID $SLURMD_NODENAME $$" >> '
             '"runs.$SLURM_JOB_ID"; exec sleep 300'],
            cwd=self.cluster.work_dir, env=self.cluster.env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(client.wait)
        self.addCleanup(client.kill)
        job_id = int(self.cluster.wait_files(["inactive.job"], 30)
                     ["inactive.job"])
        self.wait_runs(job_id, 2)
        client.send_signal(signal.SIGKILL)
        self.wait_crashed(self.cluster.controller)
        self.restart_controller()
        # Over for good, and its step tasks stopped by the new controller.
        job = self.cluster.wait_job(job_id, "TIMEOUT", timeout=30)
        self.assertEqual(job["reason"], "InactiveLimit", job)
        self.check_invariants(job_id)

    # gantry-agent

    def test_point_agent_launch_after_receive_before_start(self):
        self.crash_agent_at("node01", "agent.launch.after_receive_before_start")
        job_id = self.submitted()
        self.wait_crashed(self.cluster.agents["node01"])
        self.restart_agent("node01")
        self.wait_runs(job_id, 2)
        self.finish(job_id)
        self.check_invariants(job_id)

    def test_point_agent_launch_after_start(self):
        self.crash_agent_at("node01", "agent.launch.after_start")
        job_id = self.submitted()
        self.wait_crashed(self.cluster.agents["node01"])
        self.restart_agent("node01")
        job = self.finish(job_id)
        # The restarted agent lost the ranks it had started: the attempt
        # is restarted, uncharged (--max-restarts=0 and still COMPLETED).
        self.assertGreaterEqual(job["attempt"], 2, job)
        self.check_invariants(job_id)

    def test_point_agent_exit_before_report(self):
        self.crash_agent_at("node01", "agent.exit.before_report")
        job_id = self.submitted()
        self.wait_runs(job_id, 2)
        self.cluster.wait_job(job_id, "RUNNING")
        self.cluster.touch(f"release.{job_id}")
        self.wait_crashed(self.cluster.agents["node01"])
        self.restart_agent("node01")
        self.cluster.wait_job(job_id, "COMPLETED", timeout=60)
        self.check_invariants(job_id)

    def test_point_agent_register_before_send(self):
        self.crash_agent_at("node02", "agent.register.before_send")
        self.wait_crashed(self.cluster.agents["node02"])
        self.restart_agent("node02")
        job_id = self.submitted()
        self.wait_runs(job_id, 2)
        self.finish(job_id)
        self.check_invariants(job_id)

    def test_point_agent_step_after_receive_before_start(self):
        self.crash_agent_at("node02", "agent.step.after_receive_before_start")
        job_id = self.submitted(script=STEP_SCRIPT, per_task=False)
        self.wait_crashed(self.cluster.agents["node02"])
        self.restart_agent("node02")
        self.finish(job_id)
        self.check_invariants(job_id)


if __name__ == "__main__":
    gantry_cluster.main()
