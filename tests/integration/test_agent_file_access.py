#!/usr/bin/env python3
"""The root agent reads a job's files only with the job user's credentials.

A job's checkpoint markers (DeepSpeed's `latest`, Megatron's
`latest_checkpointed_iteration.txt`) are read by the agent, which runs as
root. A user who makes a marker a symbolic link to a root-only file, or
points the checkpoint directory at a directory only root may read, must
not get that file's first line published as the job's checkpoint (in
`gantry job`, in the job record, or as GANTRY_RESUME_FROM of the next
attempt). The user's own marker is still reported and resumed from.

Needs root: it creates (and removes) a throwaway user."""

import json
import os
import pwd
import secrets
import subprocess
import unittest

from gantry_cluster import ClusterTestCase, GantryCluster, main, wait_for

# Prints what the attempt resumes from; the first attempt runs `$1`
# (shell code run as the user), stays long enough for the agent to poll
# the markers (every 2 s) and fails, so that a second attempt follows.
SCRIPT = """#!/bin/sh
echo "attempt=$GANTRY_ATTEMPT resume=$GANTRY_RESUME_FROM"
if [ "$GANTRY_ATTEMPT" = 1 ]; then
  eval "$1"
  sleep 5
  exit 1
fi
"""


def run(*argv):
    subprocess.run(argv, check=True, capture_output=True, text=True)


@unittest.skipUnless(os.geteuid() == 0, "needs root to create users")
class AgentFileAccessTest(ClusterTestCase):

    @classmethod
    def setUpClass(cls):
        # One user for the class: the agent's user database (NSS) is not
        # to see a uid change hands between tests.
        cls.user = f"gtafs{secrets.token_hex(4)}"
        run("useradd", "-M", "-U", "-s", "/bin/sh", cls.user)
        cls.addClassCleanup(subprocess.run, ["userdel", cls.user],
                            capture_output=True)
        cls.entry = pwd.getpwnam(cls.user)
        cls.cluster = cls.start_class_cluster(agents=1)
        # The user reaches the socket and its own directory.
        os.chmod(cls.cluster.dir, 0o755)

    def setUp(self):
        c = self.cluster
        self.home = c.path(f"home-{secrets.token_hex(4)}")
        os.makedirs(self.home)
        os.chown(self.home, self.entry.pw_uid, self.entry.pw_gid)
        self.checkpoints = os.path.join(self.home, "ck")
        os.makedirs(self.checkpoints)
        os.chown(self.checkpoints, self.entry.pw_uid, self.entry.pw_gid)
        self.script = c.write_script("ck.sh", SCRIPT, directory=self.home)

    def root_secret(self, first_line):
        """A root-only file (0600, in a directory anyone may enter) whose
        first line is `first_line`; returns its path."""
        directory = self.cluster.path(f"root-{secrets.token_hex(4)}")
        os.makedirs(directory)
        os.chmod(directory, 0o755)
        path = os.path.join(directory, "secret")
        with open(path, "w") as f:
            f.write(first_line + "\nmore\n")
        os.chmod(path, 0o600)
        return path

    def run_job(self, first_attempt, checkpoint_dir=None):
        """Submits SCRIPT as the user; returns (job JSON, `gantry job`
        text, output file text)."""
        c = self.cluster
        # The first attempt fails on purpose: the job asks for a restart.
        job_id = c.submit(self.script, "--max-restarts=1", "--checkpoint-dir",
                          checkpoint_dir or self.checkpoints,
                          args=(first_attempt,), cwd=self.home,
                          uid=self.entry.pw_uid)
        job = c.wait_job(job_id, "COMPLETED", timeout=40)
        self.assertEqual(len(job["attempts"]), 2, job["attempts"])
        text = c.cli("job", str(job_id)).stdout
        # The agent's directory for each attempt (the script, handed to
        # the user) is gone with it: set aside as the rank's exit is
        # reported, then emptied as the user.
        jobs = os.path.join(c.dir, "agents", "node01", "jobs")
        self.assertEqual(
            [d for d in os.listdir(jobs) if d.startswith(f"{job_id}.")], [])
        wait_for(lambda: not [d for d in os.listdir(jobs)
                              if d.startswith(f".gone.{job_id}.")],
                 10, "the job's directories to be removed")
        self.assertNotIn("cannot empty a job directory", self.agent_log())
        with open(os.path.join(self.home, f"gantry-{job_id}.out")) as f:
            output = f.read()
        return job, text, output

    def assert_not_published(self, secret, job, text, output):
        self.assertNotIn(secret, json.dumps(job))
        self.assertNotIn(secret, text)
        self.assertNotIn(secret, output)
        self.assertEqual(job["latest_checkpoint"]["path"], "")
        self.assertEqual(job["attempts"][1]["resumed_from"], "")
        self.assertIn("attempt=2 resume=\n", output)

    def agent_log(self):
        return self.cluster.agents["node01"].log_text()

    def test_deepspeed_marker_linked_to_a_root_only_file(self):
        token = f"global_step{secrets.token_hex(8)}"
        secret = self.root_secret(token)
        job, text, output = self.run_job(
            f"ln -s {secret} $GANTRY_CHECKPOINT_DIR/latest")
        self.assert_not_published(token, job, text, output)
        # Not vacuous: the agent did look, and refused the link.
        self.assertIn(f"{self.checkpoints}/latest is a symbolic link",
                      self.agent_log())

    def test_megatron_marker_linked_to_a_root_only_file(self):
        token = str(secrets.randbelow(10**9) + 10**9)
        secret = self.root_secret(token)
        job, text, output = self.run_job(
            f"ln -s {secret} "
            "$GANTRY_CHECKPOINT_DIR/latest_checkpointed_iteration.txt")
        self.assert_not_published(token, job, text, output)
        self.assertIn(f"{self.checkpoints}/latest_checkpointed_iteration.txt "
                      "is a symbolic link", self.agent_log())

    def test_marker_in_a_directory_the_user_cannot_read(self):
        # The checkpoint directory is the user's link to their own
        # directory when they submit; the job then points it at a
        # directory only root may enter, which holds a marker.
        token = f"global_step{secrets.token_hex(8)}"
        closed = self.cluster.path(f"closed-{secrets.token_hex(4)}")
        os.makedirs(closed)
        os.chmod(closed, 0o700)
        with open(os.path.join(closed, "latest"), "w") as f:
            f.write(token + "\n")
        link = os.path.join(self.home, "ck-link")
        os.symlink(self.checkpoints, link)
        os.lchown(link, self.entry.pw_uid, self.entry.pw_gid)
        job, text, output = self.run_job(f"ln -sfn {closed} {link}",
                                         checkpoint_dir=link)
        self.assert_not_published(token, job, text, output)
        self.assertIn(f"may not read {link}/latest", self.agent_log())

    def test_the_users_own_marker_is_still_reported(self):
        job, text, output = self.run_job(
            "echo global_step77 > $GANTRY_CHECKPOINT_DIR/latest")
        checkpoint = os.path.join(self.checkpoints, "global_step77")
        self.assertEqual(job["latest_checkpoint"]["path"], checkpoint)
        self.assertEqual(job["latest_checkpoint"]["source"], "deepspeed")
        self.assertEqual(job["attempts"][1]["resumed_from"], checkpoint)
        self.assertIn(f"attempt=2 resume={checkpoint}\n", output)


if __name__ == "__main__":
    main()
