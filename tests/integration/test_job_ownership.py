#!/usr/bin/env python3
"""Whose jobs are whose: a job runs as the user who submitted it (never as
the agent's root), its files belong to that user, and users can only
cancel their own jobs. Needs root, to submit as another user."""

import os
import pwd
import unittest

import gantry_cluster
from gantry_cluster import WAIT_FOR_FILE, ClusterTestCase

OTHER_USER = "nobody"


@unittest.skipUnless(os.geteuid() == 0, "needs root to act as another user")
class JobOwnershipTest(ClusterTestCase):

    def setUp(self):
        self.other = pwd.getpwnam(OTHER_USER)
        self.cluster = self.start_cluster(agents=1)
        # The other user needs to reach the socket and write in its own
        # submit directory.
        os.chmod(self.cluster.dir, 0o755)
        self.user_dir = self.cluster.path("user")
        os.makedirs(self.user_dir)
        os.chown(self.user_dir, self.other.pw_uid, self.other.pw_gid)

    def test_job_runs_as_the_submitting_user_not_as_root(self):
        script = self.cluster.write_script(
            "whoami.sh", "#!/bin/bash\necho \"uid=$(id -u) gid=$(id -g)\"\n",
            directory=self.user_dir)
        job_id = self.cluster.submit(script, cwd=self.user_dir, uid=self.other.pw_uid)
        job = self.cluster.wait_job(job_id, "COMPLETED")
        self.assertEqual(job["user"], OTHER_USER)
        self.assertEqual(job["uid"], self.other.pw_uid)
        output = os.path.join(self.user_dir, f"gantry-{job_id}.out")
        with open(output) as f:
            self.assertEqual(f.read(), f"uid={self.other.pw_uid} gid={self.other.pw_gid}\n")
        self.assertEqual(os.stat(output).st_uid, self.other.pw_uid,
                         "the output file belongs to the job's user")

    def test_user_cannot_cancel_another_users_job(self):
        script = self.cluster.write_script(
            "hold.sh", "#!/bin/bash\n" + WAIT_FOR_FILE + "wait_for_file release\n")
        job_id = self.cluster.submit(script)  # as root
        self.cluster.wait_job(job_id, "RUNNING")
        result = self.cluster.cli("cancel", str(job_id), check=False,
                                  cwd=self.user_dir, uid=self.other.pw_uid)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("access denied", result.stderr)
        self.assertEqual(self.cluster.job(job_id)["state"], "RUNNING")
        self.cluster.touch("release")
        self.cluster.wait_job(job_id, "COMPLETED")


if __name__ == "__main__":
    gantry_cluster.main()
