#!/usr/bin/env python3
"""Two real unprivileged users on one cluster, one of them hostile.

`mallory` tries every call of the API on `alice`'s jobs, and every path
option against alice's and root's files and at symbolic links she plants.
Each attempt is refused with a clear message (or, for paths, runs as
mallory and cannot reach the file), and nothing changes: alice's jobs keep
their state, her files their contents and times, the nodes stay in
service.

Strings with control characters, numbers at their extremes and oversized
requests are in test_hostile_input.py; credentials replayed on other
requests in test_authentication.py; what listings show other users in
test_bounded_state.py; checkpoint markers planted as links in
test_agent_file_access.py."""

import json
import os
import pwd
import random
import subprocess
import unittest

import gantry_cluster
from gantry_cluster import WAIT_FOR_FILE, ClusterTestCase, build_dir

HOLD_SCRIPT = "#!/bin/bash\n" + WAIT_FOR_FILE + "wait_for_file release\n"


def add_user(name):
    subprocess.run(["useradd", "-M", "-U", "-s", "/bin/sh", name], check=True)
    return pwd.getpwnam(name)


@unittest.skipUnless(os.geteuid() == 0, "needs root to create users")
class HostileUserTest(ClusterTestCase):

    @classmethod
    def setUpClass(cls):
        tag = random.randint(10000, 99999)
        cls.alice = add_user(f"gthu-a{tag}")
        cls.addClassCleanup(subprocess.run, ["userdel", cls.alice.pw_name])
        cls.mallory = add_user(f"gthu-m{tag}")
        cls.addClassCleanup(subprocess.run, ["userdel", cls.mallory.pw_name])
        cls.cluster = cls.start_class_cluster(agents=2)
        os.chmod(cls.cluster.dir, 0o755)
        os.chmod(cls.cluster.work_dir, 0o755)
        cls.homes = {}
        for user in (cls.alice, cls.mallory):
            home = cls.cluster.path(user.pw_name)
            os.makedirs(home)
            os.chown(home, user.pw_uid, user.pw_gid)
            os.chmod(home, 0o700)
            cls.homes[user.pw_name] = home

    # --- Helpers ---

    def as_user(self, user, *args):
        """Runs `gantry ARGS` as `user` in their home; returns the result."""
        return self.cluster.cli(*args, check=False, uid=user.pw_uid,
                                cwd=self.homes[user.pw_name])

    def submit_as(self, user, *options, script=HOLD_SCRIPT):
        home = self.homes[user.pw_name]
        path = os.path.join(home, "job.sh")
        with open(path, "w") as f:
            f.write(script)
        os.chown(path, user.pw_uid, user.pw_gid)
        os.chmod(path, 0o755)
        return self.cluster.submit(path, *options, cwd=home, uid=user.pw_uid)

    def owned_file(self, user, name, text, mode=0o600):
        path = os.path.join(self.homes[user.pw_name], name)
        with open(path, "w") as f:
            f.write(text)
        os.chown(path, user.pw_uid, user.pw_gid)
        os.chmod(path, mode)
        return path

    def fingerprint(self, path):
        st = os.lstat(path)
        with open(path, "rb") as f:
            return (f.read(), st.st_mtime_ns, st.st_uid, st.st_mode)

    def assert_refused(self, result, what):
        self.assertNotEqual(result.returncode, 0,
                            f"{what} was allowed: {result.stdout}")
        self.assertTrue(result.stderr.strip(), f"{what}: no message")
        self.assertNotIn("Traceback", result.stderr)
        self.assertNotIn("core dumped", result.stderr)

    def tool_as(self, user, name, *args, input=None):
        """A test tool (tests/tools) run as `user` against the cluster's
        socket; (exit code, stdout)."""
        result = subprocess.run(
            [os.path.join(build_dir(), "tests", "tools", name),
             "unix:" + self.cluster.socket, *args],
            env=self.cluster.env, input=input, capture_output=True,
            text=True, timeout=60, user=user.pw_uid, group=user.pw_gid,
            extra_groups=[])
        self.assertNotEqual(result.returncode, 2, result.stderr)
        return result.returncode, result.stdout

    def raw_submit_as(self, user, token):
        """A submission with `token` sent as it is (gantry-raw-request);
        the job id gantryd answers."""
        home = self.homes[user.pw_name]
        request = (f'spec {{ name: "raw" script: "#!/bin/sh\\ntrue\\n" '
                   f'working_dir: "{home}" hold: true }} '
                   f'user: "{user.pw_name}" uid: {user.pw_uid} '
                   f'gid: {user.pw_gid} submission_token: "{token}"')
        code, out = self.tool_as(user, "gantry-raw-request", "Submit",
                                 input=request)
        self.assertEqual(code, 0, out)
        return int(out.split("job_id:")[1])

    # --- The tests ---

    def test_submission_tokens_and_datasets_are_private(self):
        c = self.cluster
        corpus = os.path.join(self.homes[self.alice.pw_name], "secret-corpus")
        os.makedirs(corpus, exist_ok=True)
        job_id = self.submit_as(self.alice, "--hold",
                                f"--dataset=corpus:{corpus}")
        own = json.loads(self.as_user(self.alice, "job", str(job_id),
                                      "--json").stdout)
        token = own["submission_token"]
        self.assertEqual(len(token), 32, own)
        self.assertIn(corpus, json.dumps(own))
        # Mallory sees neither, in any view (sacct shows her none of
        # alice's jobs at all).
        views = [("job", str(job_id)), ("job", str(job_id), "--json"),
                 ("queue", "--all"), ("queue", "--all", "--json"),
                 ("queue", "--all", "-O", "JobID,Name,UserName,WorkDir"),
                 ("queue", "--all", "-l"),
                 ("acct", "--json", "-a")]
        for view in views:
            result = self.as_user(self.mallory, *view)
            with self.subTest(view=view):
                for secret in (token, corpus, "secret-corpus"):
                    self.assertNotIn(secret, result.stdout + result.stderr)
        # Nor does the API itself.
        for args in (("ListJobs", "--all"), ("StreamJobs", "--all"),
                     ("GetJob", str(job_id))):
            code, out = self.tool_as(self.mallory, "gantry-api-probe", *args)
            self.assertEqual(code, 0, out)
            for secret in (token, corpus):
                self.assertNotIn(secret, out, args)
        # Using alice's token makes mallory a job of her own, and does not
        # re-point it: alice asking again with it still gets her job.
        mallorys = self.raw_submit_as(self.mallory, token)
        self.assertNotEqual(mallorys, job_id)
        self.assertEqual(self.raw_submit_as(self.alice, token), job_id)
        self.assertEqual(self.raw_submit_as(self.mallory, token), mallorys)
        self.assertEqual(c.job(job_id)["user"], self.alice.pw_name)
        for job in (job_id, mallorys):
            c.cli("cancel", str(job))


    def test_every_call_on_another_users_job_is_refused(self):
        c = self.cluster
        running = self.submit_as(self.alice, "-N", "1")
        held = self.submit_as(self.alice, "-N", "1", "--hold")
        c.wait_job(running, "RUNNING")
        before = {i: c.job(i) for i in (running, held)}
        m = self.mallory
        attempts = {
            "cancel": ("cancel", str(running)),
            "cancel a held job": ("cancel", str(held)),
            "cancel by user": ("cancel", "-u", self.alice.pw_name),
            "signal": ("cancel", "--signal=USR1", str(running)),
            "signal the batch script": ("cancel", "--signal=KILL", "-b",
                                        str(running)),
            "hold": ("hold", str(running)),
            "release": ("release", str(held)),
            "step": ("run", "--jobid", str(running), "true"),
            "checkpoint": ("checkpoint", "/tmp/x", "--job", str(running)),
            "progress": ("progress", "--job", str(running)),
            "drain": ("drain", "node01", "--reason", "mine now"),
            "resume": ("resume", "node01"),
        }
        for what, args in attempts.items():
            result = self.as_user(m, *args)
            if what == "cancel by user":
                # scancel -u OTHER: nothing of theirs is touched, and it
                # says so.
                self.assertIn(self.alice.pw_name, result.stdout + result.stderr)
            else:
                self.assert_refused(result, what)
        # The script of another user's job is not shown, even on request.
        result = self.as_user(m, "job", str(running), "--script")
        self.assert_refused(result, "job --script")
        self.assertNotIn("wait_for_file", result.stdout)
        shown = self.as_user(m, "job", str(running), "--json")
        self.assertNotIn("wait_for_file", shown.stdout)

        for job_id, old in before.items():
            now = c.job(job_id)
            for field in ("state", "attempt", "held", "steps",
                          "latest_checkpoint", "reason"):
                self.assertEqual(now.get(field), old.get(field),
                                 f"job {job_id}'s {field} changed")
        for name, node in c.nodes().items():
            self.assertFalse(node["drained"], f"{name} drained by a user")
        with open(os.path.join(self.homes[self.alice.pw_name], "release"), "a"):
            pass
        c.wait_job(running, "COMPLETED")
        c.cli("cancel", str(held))

    def test_path_options_cannot_reach_other_users_or_roots_files(self):
        c = self.cluster
        secret = self.owned_file(self.alice, "secret.txt", "alice's secret\n")
        root_file = c.path("root-only.txt")
        with open(root_file, "w") as f:
            f.write("root's\n")
        os.chmod(root_file, 0o644)
        # Links mallory plants in her own directory.
        mallory_home = self.homes[self.mallory.pw_name]
        to_secret = os.path.join(mallory_home, "out-link")
        os.symlink(secret, to_secret)
        os.lchown(to_secret, self.mallory.pw_uid, self.mallory.pw_gid)
        to_root = os.path.join(mallory_home, "err-link")
        os.symlink(root_file, to_root)
        os.lchown(to_root, self.mallory.pw_uid, self.mallory.pw_gid)
        protected = [secret, root_file]
        before = {p: self.fingerprint(p) for p in protected}
        alice_entries = sorted(os.listdir(self.homes[self.alice.pw_name]))

        writes = "#!/bin/bash\necho overwritten\necho overwritten >&2\n"
        jobs = [
            self.submit_as(self.mallory, "-o", secret, script=writes),
            self.submit_as(self.mallory, "-e", root_file, script=writes),
            self.submit_as(self.mallory, "-o", to_secret, "-e", to_root,
                           "--open-mode=append", script=writes),
            self.submit_as(self.mallory, "-D", self.homes[self.alice.pw_name],
                           script="#!/bin/bash\necho x > planted\n"),
        ]
        # Refused at once: she cannot write there.
        home = self.homes[self.mallory.pw_name]
        self.assert_refused(
            self.as_user(self.mallory, "batch", "--checkpoint-dir",
                         self.homes[self.alice.pw_name],
                         os.path.join(home, "job.sh")),
            "--checkpoint-dir in another user's directory")
        for job_id in jobs:
            c.wait_job(job_id, *gantry_cluster.TERMINAL_STATES, timeout=30)
        for path, old in before.items():
            self.assertEqual(self.fingerprint(path), old,
                             f"{path} changed by another user's job")
        self.assertEqual(sorted(os.listdir(self.homes[self.alice.pw_name])),
                         alice_entries, "a file appeared in alice's directory")
        for job_id in jobs:
            job = c.job(job_id)
            self.assertEqual(job["user"], self.mallory.pw_name)
            self.assertNotIn("alice's secret", str(job))


if __name__ == "__main__":
    gantry_cluster.main()
