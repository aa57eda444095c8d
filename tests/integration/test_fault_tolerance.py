"""Failures of ranks, agents and jobs: what Gantry restarts, what it does not,
and what it tells the user. (The PyTorch end-to-end run is in
test_pytorch_restart.py; controller crashes in test_controller_restart.py.)
"""
import os
import signal
import time

from gantry_cluster import ClusterTestCase, main, pid_alive, wait_for


class RestartPolicyTest(ClusterTestCase):

    @classmethod
    def setUpClass(cls):
        cls.cluster = cls.start_class_cluster(agents=2)

    def test_application_error_is_retried_once_then_fails(self):
        c = self.cluster
        c.write_script("fails.sh", "#!/bin/bash\necho attempt $GANTRY_ATTEMPT\nexit 3\n")
        job_id = c.submit("fails.sh", "--max-restarts=3")
        job = c.wait_job(job_id, "FAILED", timeout=30)
        self.assertEqual(job["exit_code"], 3)
        self.assertEqual(len(job["attempts"]), 2, job["attempts"])
        self.assertIn("application error", job["reason_detail"])
        self.assertEqual(c.read(f"gantry-{job_id}.out").split(),
                         ["attempt", "1", "attempt", "2"])

    def test_application_error_is_not_retried_unless_asked(self):
        # Slurm's rule: a script that fails on a healthy node is FAILED, not
        # re-run; only --max-restarts N asks for restarts.
        c = self.cluster
        c.write_script("fails1.sh",
                       "#!/bin/bash\necho attempt $GANTRY_ATTEMPT\nexit 4\n")
        job_id = c.submit("fails1.sh")
        job = c.wait_job(job_id, "FAILED", timeout=30)
        self.assertEqual(job["exit_code"], 4)
        self.assertEqual(len(job["attempts"]), 1, job["attempts"])
        self.assertIn("not restarted", job["reason_detail"])
        self.assertIn("--max-restarts", job["reason_detail"])
        self.assertEqual(c.read(f"gantry-{job_id}.out").split(),
                         ["attempt", "1"])

    def test_max_restarts_zero_fails_at_once(self):
        c = self.cluster
        c.write_script("once.sh", "#!/bin/bash\nexit 5\n")
        job_id = c.submit("once.sh", "--max-restarts=0")
        job = c.wait_job(job_id, "FAILED", timeout=20)
        self.assertEqual(len(job["attempts"]), 1)
        self.assertIn("restart budget of 0 exhausted", job["reason_detail"])

    def test_hang_timeout_stops_a_silent_job(self):
        c = self.cluster
        c.write_script("silent.sh", "#!/bin/bash\nsleep 300\n")
        job_id = c.submit("silent.sh", "--hang-timeout=0:02", "--max-restarts=0")
        job = c.wait_job(job_id, "FAILED", timeout=20)
        self.assertEqual(job["reason"], "Hang")
        self.assertIn("no progress for 2 s", job["reason_detail"])

    def test_progress_reports_keep_a_job_alive(self):
        c = self.cluster
        c.write_script("busy.sh", "#!/bin/bash\nfor i in 1 2 3 4 5 6; do\n"
                       f"  {c.cli_bin} progress --step $i || exit 9\n"
                       "  sleep 0.5\ndone\n")
        job_id = c.submit("busy.sh", "--hang-timeout=0:02", "--max-restarts=0")
        job = c.wait_job(job_id, "COMPLETED", timeout=30)
        self.assertEqual(len(job["attempts"]), 1)

    def test_reported_checkpoint_is_given_to_the_restart(self):
        c = self.cluster
        os.makedirs(c.path("ck-report"), exist_ok=True)
        c.write_script("report.sh", "#!/bin/bash\n"
                       "echo \"resume=$GANTRY_RESUME_FROM step=$GANTRY_RESUME_STEP\"\n"
                       "if [ \"$GANTRY_ATTEMPT\" = 1 ]; then\n"
                       "  mkdir -p $GANTRY_CHECKPOINT_DIR/step42\n"
                       f"  {c.cli_bin} checkpoint $GANTRY_CHECKPOINT_DIR/step42 --step 42 || exit 9\n"
                       "  exit 1\nfi\n")
        job_id = c.submit("report.sh", "--checkpoint-dir", "ck-report",
                          "--max-restarts=3")
        job = c.wait_job(job_id, "COMPLETED", timeout=30)
        checkpoint = c.path("ck-report", "step42")
        self.assertEqual(job["latest_checkpoint"]["path"], checkpoint)
        self.assertEqual(job["latest_checkpoint"]["source"], "report")
        self.assertEqual(job["attempts"][1]["resumed_from"], checkpoint)
        lines = c.read(f"gantry-{job_id}.out").splitlines()
        self.assertEqual(lines, ["resume= step=", f"resume={checkpoint} step=42"])

    def test_garbage_marker_is_ignored_not_fatal(self):
        c = self.cluster
        os.makedirs(c.path("ck-garbage"), exist_ok=True)
        c.write_script("garbage.sh", "#!/bin/bash\n"
                       "echo 'not a number' > $GANTRY_CHECKPOINT_DIR/latest_checkpointed_iteration.txt\n"
                       "sleep 3\n")
        job_id = c.submit("garbage.sh", "--checkpoint-dir", "ck-garbage",
                          "--max-restarts=3")
        job = c.wait_job(job_id, "COMPLETED", timeout=30)
        self.assertEqual(job["latest_checkpoint"]["path"], "")

    def test_checkpoint_dir_must_exist(self):
        c = self.cluster
        c.write_script("plain.sh", "#!/bin/bash\ntrue\n")
        before = c.status()["next_job_id"]
        result = c.cli("batch", "--checkpoint-dir", "no/such/dir", "plain.sh", check=False)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("does not exist", result.stderr)
        self.assertEqual(c.status()["next_job_id"], before)

    def test_restart_request_for_finished_job_is_refused(self):
        c = self.cluster
        c.write_script("quick.sh", "#!/bin/bash\ntrue\n")
        job_id = c.submit("quick.sh")
        c.wait_job(job_id, "COMPLETED")
        result = c.cli("checkpoint", "/tmp/x", "--job", str(job_id), check=False)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("is not running", result.stderr)


class NodeFaultTest(ClusterTestCase):

    def test_agent_crash_kills_its_ranks_and_restarts_uncharged(self):
        # The agent dies (kill -9) and comes back before the node timeout:
        # its ranks died with it, so the new agent process does not know
        # them. That is our own crash, not the node's or the job's: the job
        # restarts without spending its budget (none here) and the node
        # stays in service.
        c = self.start_cluster(agents=3, node_timeout=5.0)
        c.write_script("pids.sh", "#!/bin/bash\n"
                       "echo $$ > pid.$GANTRY_ATTEMPT.$SLURMD_NODENAME\n"
                       "sleep 300 & echo $! > child.$GANTRY_ATTEMPT.$SLURMD_NODENAME\n"
                       "wait\n")
        job_id = c.submit("pids.sh", "-N", "2", "--max-restarts=0")
        job = c.wait_job(job_id, "RUNNING")
        first_nodes = [a["node"] for a in job["allocation"]]
        victim = first_nodes[1]
        pids = c.wait_files([f"pid.1.{victim}", f"child.1.{victim}"])
        c.kill_agent(victim)
        c.start_agent(victim)
        job = c.wait_job(job_id, "RUNNING", timeout=20)
        wait_for(lambda: len(c.job(job_id)["attempts"]) == 2, 20,
                 "a second attempt")
        job = c.job(job_id)
        self.assertFalse(job["attempts"][0]["node_fault"])
        self.assertIn("restarted and lost rank", job["attempts"][0]["end_detail"])
        self.assertEqual(job["uncharged_attempts"], 1)
        node = c.wait_nodes_up([victim])[victim]
        self.assertFalse(node["drained"])
        # Nothing of the first attempt runs on the victim any more.
        for name in (f"pid.1.{victim}", f"child.1.{victim}"):
            pid = int(pids[name])
            wait_for(lambda: not pid_alive(pid), 10, f"{name} ({pid}) to die")
        c.cli("cancel", str(job_id))

    def test_stopped_agent_is_caught_by_missed_heartbeats(self):
        c = self.start_cluster(agents=2, node_timeout=1.5)
        c.write_script("sleepy.sh", "#!/bin/bash\nsleep 300\n")
        job_id = c.submit("sleepy.sh", "-N", "2", "--max-restarts=0")
        c.wait_job(job_id, "RUNNING")
        c.signal_agent("node02", signal.SIGSTOP)
        try:
            job = c.wait_job(job_id, "NODE_FAIL", timeout=15)
            self.assertIn("heartbeats stopped", job["reason_detail"])
        finally:
            c.signal_agent("node02", signal.SIGCONT)

    def test_drained_node_takes_no_new_work(self):
        c = self.start_cluster(agents=2)
        c.cli("drain", "node01", "--reason", "maintenance")
        self.assertEqual(c.nodes()["node01"]["drain_reason"], "maintenance")
        c.write_script("one.sh", "#!/bin/bash\ntrue\n")
        for _ in range(3):
            single = c.submit("one.sh")
            self.assertEqual(c.wait_job(single, "COMPLETED")["nodelist"], "node02")
        job_id = c.submit("one.sh", "-N", "2")
        time.sleep(1)
        self.assertEqual(c.job(job_id)["state"], "PENDING")
        c.cli("resume", "node01")
        c.wait_job(job_id, "COMPLETED")
        result = c.cli("drain", "node09", "--reason", "x", check=False)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("unknown node node09", result.stderr)


if __name__ == "__main__":
    main()
