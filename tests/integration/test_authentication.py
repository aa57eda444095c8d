#!/usr/bin/env python3
"""MUNGE authentication and what each user may do, against a real munged
with a temp key (the cluster's own) and a second munged with another key
(another cluster). gantry-auth-probe presents hand-made credentials: none,
forged, replayed, bound to another method or to another body of the same
method (one user's credential on another's request), from the other
cluster, and from a non-root "agent". Needs root (to act as other users)."""

import json
import os
import pwd
import random
import subprocess
import unittest

import gantry_cluster
from gantry_cluster import WAIT_FOR_FILE, ClusterTestCase, build_dir
from munge_daemon import Munged, munge_available

OTHER_USER = "nobody"


def probe_binary():
    return os.path.join(build_dir(), "tests", "tools", "gantry-auth-probe")


def payload_for(method, *body):
    """The payload a credential for this exact request carries."""
    if method == "Connect":
        return "gantry:Connect"  # agents' streams: bound to the method
    return subprocess.run([probe_binary(), "--payload", method, *body],
                          capture_output=True, text=True, check=True,
                          timeout=30).stdout.strip()


@unittest.skipUnless(os.geteuid() == 0, "needs root to act as other users")
@unittest.skipUnless(munge_available(), "munged is not installed (apt-get install munge)")
class CredentialTest(ClusterTestCase):
    """Requests with bad credentials are refused, with the reason."""

    @classmethod
    def setUpClass(cls):
        cls.cluster = cls.start_class_cluster(agents=1)
        # Other users reach the munged and gantryd sockets through it.
        os.chmod(cls.cluster.dir, 0o755)
        cls.target = f"127.0.0.1:{cls.cluster.port}"
        cls.other = pwd.getpwnam(OTHER_USER)

    def probe(self, method, credential=None, body=()):
        argv = [probe_binary(), self.target, method]
        if credential is not None:
            argv.append(credential)
        result = subprocess.run(argv + list(body), capture_output=True,
                                text=True, timeout=30)
        self.assertIn(result.returncode, (0, 1), result.stderr)
        return result.stdout.strip()

    def credential(self, method, uid=None, munged=None, body=()):
        return (munged or self.cluster.munged).credential(
            payload_for(method, *body), uid=uid)

    def test_valid_credential_is_accepted_once_then_refused_as_replayed(self):
        credential = self.credential("ListNodes")
        self.assertEqual(self.probe("ListNodes", credential), "OK")
        refused = self.probe("ListNodes", credential)
        self.assertIn("16: request refused: MUNGE credential replayed", refused)

    def test_request_without_credential_is_refused(self):
        self.assertIn("16: request refused: it carries no MUNGE credential",
                      self.probe("ListNodes"))

    def test_job_stream_needs_a_credential_bound_to_it(self):
        # StreamJobs authenticates as every unary call does: none refused,
        # one made for another request refused, its own accepted once.
        self.assertIn("16: request refused: it carries no MUNGE credential",
                      self.probe("StreamJobs"))
        self.assertIn("made for another request (ListNodes), not for this "
                      "StreamJobs",
                      self.probe("StreamJobs", self.credential("ListNodes")))
        credential = self.credential("StreamJobs")
        self.assertTrue(self.probe("StreamJobs", credential).startswith("OK"))
        self.assertIn("MUNGE credential replayed",
                      self.probe("StreamJobs", credential))

    def test_forged_credentials_are_refused(self):
        credential = self.credential("ListNodes")
        # Flip one character of the encrypted body.
        middle = len(credential) // 2
        flipped = "A" if credential[middle] != "A" else "B"
        tampered = credential[:middle] + flipped + credential[middle + 1:]
        self.assertIn("16: request refused", self.probe("ListNodes", tampered))
        self.assertIn("16: request refused",
                      self.probe("ListNodes", "MUNGE:not-a-credential:"))
        self.assertIn("16: request refused", self.probe("ListNodes", "x" * 200))

    def test_credential_of_another_cluster_key_is_refused(self):
        other_cluster = Munged(self.cluster.path("other-munge"))
        try:
            credential = self.credential("ListNodes", munged=other_cluster)
        finally:
            other_cluster.stop()
        self.assertIn("not made with this cluster's key",
                      self.probe("ListNodes", credential))

    def test_credential_bound_to_another_request_is_refused(self):
        credential = self.credential("ListNodes")
        refused = self.probe("Drain", credential)
        self.assertIn("made for another request (ListNodes), not for this Drain",
                      refused)
        # A credential bound to the method alone, as clients made before
        # credentials named their request, is refused too.
        refused = self.probe("Drain", self.cluster.munged.credential("gantry:Drain"))
        self.assertIn("16: request refused: the MUNGE credential is not bound to a "
                      "request", refused)

    def test_claimed_identity_does_not_count(self):
        # The probe's Drain claims to be root; the credential says nobody.
        credential = self.credential("Drain", uid=self.other.pw_uid)
        refused = self.probe("Drain", credential)
        self.assertIn("7: draining and resuming nodes needs an admin", refused)
        self.assertIn(f"you are {OTHER_USER}", refused)
        self.assertFalse(self.cluster.nodes()["node01"]["drained"])

    def test_only_root_may_serve_a_node(self):
        credential = self.credential("Connect", uid=self.other.pw_uid)
        refused = self.probe("Connect", credential)
        self.assertIn("7: agent refused: it runs as nobody", refused)
        self.assertEqual(self.probe("Connect", self.credential("Connect")), "OK")

    def test_cli_without_munged_says_what_is_wrong(self):
        env = dict(self.cluster.env)
        env["GANTRY_MUNGE_SOCKET"] = self.cluster.path("no-such-munged.sock")
        for controller in (f"unix:{self.cluster.socket}", self.target):
            result = subprocess.run(
                [self.cluster.cli_bin, "--controller", controller, "nodes"],
                capture_output=True, text=True, env=env, timeout=30)
            self.assertEqual(result.returncode, 1)
            self.assertIn("carries no MUNGE credential", result.stderr)
            self.assertIn("cannot get a MUNGE credential", result.stderr)
            self.assertIn("is munged running?", result.stderr)

    def test_cli_over_tcp_and_unix_socket_is_authenticated(self):
        for controller in (f"unix:{self.cluster.socket}", self.target):
            result = self.cluster.cli("--controller", controller, "nodes", "--json",
                                      uid=self.other.pw_uid)
            self.assertIn("node01", result.stdout)


@unittest.skipUnless(os.geteuid() == 0, "needs root to act as other users")
@unittest.skipUnless(munge_available(), "munged is not installed (apt-get install munge)")
class RequestBindingTest(ClusterTestCase):
    """A credential vouches for the exact request it was made for: one that
    user B made for B's own Cancel (or Submit), sent with user A's different
    body, is refused and changes nothing, as a credential captured on the
    network and kept from gantryd would be."""

    @classmethod
    def setUpClass(cls):
        suffix = random.randint(10000, 99999)
        cls.users = {}
        for role in ("a", "b"):
            name = f"gantry-h18{role}-{suffix}"
            subprocess.run(["useradd", "--no-create-home", name], check=True)
            cls.addClassCleanup(subprocess.run, ["userdel", name])
            cls.users[role] = pwd.getpwnam(name)
        cls.cluster = cls.start_class_cluster(agents=0)
        os.chmod(cls.cluster.dir, 0o755)
        cls.target = f"127.0.0.1:{cls.cluster.port}"

    def send(self, method, credential, body):
        result = subprocess.run(
            [probe_binary(), self.target, method, credential, *body],
            capture_output=True, text=True, timeout=30)
        self.assertIn(result.returncode, (0, 1), result.stderr)
        return result.stdout.strip()

    def credential(self, role, method, body):
        return self.cluster.munged.credential(payload_for(method, *body),
                                              uid=self.users[role].pw_uid)

    def submit_as(self, role, name):
        body = ["--name", name, "--dir", "/tmp"]
        answer = self.send("Submit", self.credential(role, "Submit", body), body)
        self.assertTrue(answer.startswith("OK "), answer)
        job_id = int(answer.split()[1])
        self.assertEqual(self.cluster.job(job_id)["user"], self.users[role].pw_name)
        return job_id

    def jobs_named(self, name):
        listing = json.loads(self.cluster.cli("queue", "--json", "--all").stdout)
        return [job for job in listing["jobs"] if job["name"] == name]

    def test_cancel_credential_of_b_on_a_different_cancel_body_is_refused(self):
        b_first = self.submit_as("b", "b-first")
        b_second = self.submit_as("b", "b-second")
        a_job = self.submit_as("a", "a-own")
        # B's credential for cancelling b_first, carried on bodies that
        # cancel b_second (cancelling as B) and A's own job.
        for target in (b_second, a_job):
            stolen = self.credential("b", "Cancel", ["--job", str(b_first)])
            refused = self.send("Cancel", stolen, ["--job", str(target)])
            self.assertIn("16: request refused: the MUNGE credential was made "
                          "for a different Cancel request", refused)
        # The credential of the report: bound to the method alone, as
        # clients made them before, it vouched for any Cancel.
        method_only = self.cluster.munged.credential(
            "gantry:Cancel", uid=self.users["b"].pw_uid)
        refused = self.send("Cancel", method_only, ["--job", str(b_second)])
        self.assertIn("16: request refused: the MUNGE credential is not bound "
                      "to a request", refused)
        for job_id in (b_first, b_second, a_job):
            self.assertEqual(self.cluster.job(job_id)["state"], "PENDING")
        # The matching credential still works, once.
        body = ["--job", str(b_first)]
        genuine = self.credential("b", "Cancel", body)
        self.assertTrue(self.send("Cancel", genuine, body).startswith("OK"))
        self.assertEqual(self.cluster.job(b_first)["state"], "CANCELLED")
        self.assertIn("16: request refused: MUNGE credential replayed",
                      self.send("Cancel", genuine, body))
        self.assertEqual(self.cluster.job(b_second)["state"], "PENDING")
        self.assertEqual(self.cluster.job(a_job)["state"], "PENDING")

    def test_submit_credential_of_b_on_a_different_submit_body_is_refused(self):
        b_body = ["--name", "b-wanted", "--dir", "/tmp"]
        stolen = self.credential("b", "Submit", b_body)
        refused = self.send("Submit", stolen,
                            ["--name", "a-smuggled", "--dir", "/tmp"])
        self.assertIn("16: request refused: the MUNGE credential was made for a "
                      "different Submit request", refused)
        self.assertEqual(self.jobs_named("a-smuggled"), [])
        self.assertEqual(self.jobs_named("b-wanted"), [])
        # munged decoded it, so the refusal spent it: not even B's own body
        # can use it now. A fresh credential for that body goes through.
        self.assertIn("16: request refused: MUNGE credential replayed",
                      self.send("Submit", stolen, b_body))
        answer = self.send("Submit", self.credential("b", "Submit", b_body), b_body)
        self.assertTrue(answer.startswith("OK "), answer)
        [job] = self.jobs_named("b-wanted")
        self.assertEqual(job["user"], self.users["b"].pw_name)


@unittest.skipUnless(os.geteuid() == 0, "needs root to act as other users")
@unittest.skipUnless(munge_available(), "munged is not installed (apt-get install munge)")
class UserRightsTest(ClusterTestCase):
    """Users see everyone's jobs as squeue does, but manage and read only
    their own; admin operations need root or the admin group."""

    @classmethod
    def setUpClass(cls):
        suffix = random.randint(10000, 99999)
        cls.admin_group = f"gantry-it-admins-{suffix}"
        cls.admin_user = f"gantry-it-admin-{suffix}"
        subprocess.run(["groupadd", cls.admin_group], check=True)
        subprocess.run(["useradd", "--no-create-home", "--groups", cls.admin_group,
                        cls.admin_user], check=True)
        cls.addClassCleanup(subprocess.run, ["groupdel", cls.admin_group])
        cls.addClassCleanup(subprocess.run, ["userdel", cls.admin_user])
        cls.cluster = cls.start_class_cluster(
            agents=2, gantryd_args=["--admin-group", cls.admin_group])
        os.chmod(cls.cluster.dir, 0o755)
        cls.other = pwd.getpwnam(OTHER_USER)
        cls.admin = pwd.getpwnam(cls.admin_user)

    def test_others_see_the_job_but_not_its_script(self):
        script = self.cluster.write_script(
            "secret.sh", "#!/bin/bash\n# the-secret-recipe\n" + WAIT_FOR_FILE
            + "wait_for_file release-secret\n")
        job_id = self.cluster.submit(script)  # as root
        self.cluster.wait_job(job_id, "RUNNING")
        try:
            listing = self.cluster.cli("queue", "--json", uid=self.other.pw_uid)
            self.assertIn(job_id, [j["job_id"] for j in json.loads(listing.stdout)["jobs"]])
            shown = self.cluster.cli("job", str(job_id), "--json", uid=self.other.pw_uid)
            self.assertNotIn("the-secret-recipe", shown.stdout)
            refused = self.cluster.cli("job", str(job_id), "--script", check=False,
                                       uid=self.other.pw_uid)
            self.assertEqual(refused.returncode, 1)
            self.assertIn("shown only to its owner and admins", refused.stderr)
            own = self.cluster.cli("job", str(job_id), "--script")
            self.assertIn("the-secret-recipe", own.stdout)
            cancel = self.cluster.cli("cancel", str(job_id), check=False,
                                      uid=self.other.pw_uid)
            self.assertNotEqual(cancel.returncode, 0)
            self.assertIn("access denied", cancel.stderr)
            self.assertEqual(self.cluster.job(job_id)["state"], "RUNNING")
        finally:
            self.cluster.touch("release-secret")
        self.cluster.wait_job(job_id, "COMPLETED")

    def test_submitted_job_belongs_to_the_proven_user(self):
        user_dir = self.cluster.path("nobody-home")
        os.makedirs(user_dir, exist_ok=True)
        os.chown(user_dir, self.other.pw_uid, self.other.pw_gid)
        script = self.cluster.write_script("who.sh", "#!/bin/bash\nid -u\n",
                                           directory=user_dir)
        job_id = self.cluster.submit(script, cwd=user_dir, uid=self.other.pw_uid)
        job = self.cluster.wait_job(job_id, "COMPLETED")
        self.assertEqual((job["user"], job["uid"]), (OTHER_USER, self.other.pw_uid))

    def test_admin_operations_need_root_or_the_admin_group(self):
        refused = self.cluster.cli("drain", "node02", "--reason", "test", check=False,
                                   uid=self.other.pw_uid)
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn("needs an admin", refused.stderr)
        self.cluster.cli("drain", "node02", "--reason", "by the admin group",
                         uid=self.admin.pw_uid)
        self.assertTrue(self.cluster.nodes()["node02"]["drained"])
        self.cluster.cli("resume", "node02", uid=self.admin.pw_uid)
        self.assertFalse(self.cluster.nodes()["node02"]["drained"])


@unittest.skipUnless(munge_available(), "munged is not installed (apt-get install munge)")
class StartupTest(unittest.TestCase):

    def test_gantryd_without_munged_refuses_to_start(self):
        gantryd = os.path.join(build_dir(), "daemon", "gantryd")
        with gantry_cluster.tempfile.TemporaryDirectory(prefix="gantry-it-") as tmp:
            result = subprocess.run(
                [gantryd, "--state-dir", os.path.join(tmp, "state"),
                 "--listen", "127.0.0.1:0", "--socket", os.path.join(tmp, "s.sock"),
                 "--munge-socket", os.path.join(tmp, "none.sock")],
                capture_output=True, text=True, timeout=30)
            self.assertEqual(result.returncode, 1)
            self.assertIn("cannot get a MUNGE credential", result.stderr)
            self.assertIn("start munged, set --munge-socket", result.stderr)
            self.assertFalse(os.path.exists(os.path.join(tmp, "state", "db")),
                             "nothing is created before the check")

    def test_unknown_admin_group_is_an_error(self):
        gantryd = os.path.join(build_dir(), "daemon", "gantryd")
        result = subprocess.run(
            [gantryd, "--state-dir", "/nonexistent/never", "--admin-group",
             "no-such-group-here"], capture_output=True, text=True, timeout=30)
        self.assertEqual(result.returncode, 2)
        self.assertIn('admin group "no-such-group-here" does not exist', result.stderr)


if __name__ == "__main__":
    gantry_cluster.main()
