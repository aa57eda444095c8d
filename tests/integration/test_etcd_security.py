#!/usr/bin/env python3
"""etcd as a site secures it for Gantry (docs/admin-guide.md "An HA pair, step by step";
packaging/gantry-etcd-setup), tried by a hostile local user and by an
admin who gets the setup wrong.

etcd runs with TLS on client and peer ports, --client-cert-auth, and auth
on with the `gantry` role limited to the cluster's prefix:
- an unprivileged user cannot read or write etcd: not in plain gRPC, not
  over TLS without a client certificate, not with a certificate of
  another CA; the shipped script makes keys no one else can read;
- gantryd's own certificate reads and writes its prefix only;
- gantryd refuses plain etcd unless --etcd-insecure (and warns with it),
  refuses TLS etcd without its certificate, a world-readable key, or half
  the TLS keys, each with a message that says what to give.

Skips where etcd is absent, and the user tests where not root."""

import os
import pwd
import random
import stat
import subprocess
import tempfile
import unittest

import gantry_cluster
from etcd_cluster import SETUP_SCRIPT, EtcdCluster, etcd_binary
from gantry_cluster import ClusterTestCase
from ha_cluster import HaCluster
from test_ha_deployment import run_gantryd, tls_config
from tls_certificates import make_ca, make_client_certificate


def add_user(name):
    subprocess.run(["useradd", "-M", "-U", "-s", "/bin/sh", name], check=True)
    return pwd.getpwnam(name)


@unittest.skipUnless(etcd_binary(), "etcd is not installed (apt-get install "
                     "etcd-server): the replicated controller is not tested")
class EtcdSecurityTest(ClusterTestCase):

    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.mkdtemp(prefix="gantry-it-", dir="/tmp")
        os.chmod(cls.directory, 0o755)
        cls.addClassCleanup(subprocess.run, ["rm", "-rf", cls.directory])
        cls.etcd = EtcdCluster(os.path.join(cls.directory, "etcd"),
                               members=1, gantry_prefix="/gantry/")
        cls.addClassCleanup(cls.etcd.stop)
        cls.etcd.start()
        cls.etcd.etcdctl("put", "/gantry/log/1", "an entry")
        cls.etcd.etcdctl("put", "/other/secret", "not gantry's")
        cls.mallory = None
        if os.geteuid() == 0:
            cls.mallory = add_user(f"gtes-m{random.randint(10000, 99999)}")
            cls.addClassCleanup(subprocess.run,
                                ["userdel", cls.mallory.pw_name])

    def etcdctl_as_mallory(self, *args):
        """etcdctl run by the unprivileged user, with ARGS (TLS options)."""
        if self.mallory is None:
            self.skipTest("needs root to create a user")
        return subprocess.run(
            ["etcdctl", "--endpoints", self.etcd.endpoints,
             "--command-timeout=3s", "--dial-timeout=3s", *args],
            env={"ETCDCTL_API": "3", "PATH": os.environ["PATH"]},
            capture_output=True, text=True, timeout=60,
            user=self.mallory.pw_uid, group=self.mallory.pw_gid,
            extra_groups=[], cwd="/")

    def assert_untouched(self):
        """etcd holds what setUpClass put there, and nothing more."""
        keys = self.etcd.etcdctl("get", "--prefix", "/").stdout.split("\n")
        self.assertEqual([k for k in keys if k],
                         ["/gantry/log/1", "an entry",
                          "/other/secret", "not gantry's"])

    def test_no_client_certificate_is_refused(self):
        for args in ([], ["--insecure-transport=false",
                          "--insecure-skip-tls-verify"],
                     ["--cacert", self.etcd.files.ca]):
            for command in (["get", "--prefix", "/gantry"],
                            ["put", "/gantry/log/2", "a job as root"]):
                result = self.etcdctl_as_mallory(*args, *command)
                self.assertNotEqual(result.returncode, 0,
                                    f"{args} {command}: {result.stdout}")
        self.assert_untouched()

    def test_certificate_of_another_ca_is_refused(self):
        if self.mallory is None:
            self.skipTest("needs root to create a user")
        own = os.path.join(self.directory, "mallory")
        os.makedirs(own, exist_ok=True)
        ca, ca_key = make_ca(own, "mallory-ca")
        # Her own CA signs a certificate with etcd's users' names.
        for name in ("gantry", "root"):
            cert, key = make_client_certificate(own, ca, ca_key, name)
            os.chown(key, self.mallory.pw_uid, self.mallory.pw_gid)
            for command in (["get", "--prefix", "/gantry"],
                            ["put", "/gantry/log/2", "a job as root"]):
                result = self.etcdctl_as_mallory(
                    "--cacert", self.etcd.files.ca, "--cert", cert,
                    "--key", key, *command)
                self.assertNotEqual(result.returncode, 0, result.stdout)
        self.assert_untouched()

    def test_gantry_role_is_limited_to_its_prefix(self):
        own = self.etcd.etcdctl("get", "/gantry/log/1", identity="gantry")
        self.assertIn("an entry", own.stdout)
        for command in (["get", "/other/secret"],
                        ["put", "/other/secret", "x"],
                        ["auth", "disable"],
                        ["user", "add", "mallory", "--no-password"]):
            result = self.etcd.etcdctl(*command, identity="gantry",
                                       check=False)
            self.assertNotEqual(result.returncode, 0, command)
            self.assertIn("permission denied", result.stderr.lower())

    def test_shipped_script_keys_are_private(self):
        out = os.path.join(self.directory, "site-pki")
        subprocess.run(["bash", SETUP_SCRIPT, "certs", out,
                        "etcd1=IP:127.0.0.1", "etcd2"],
                       check=True, capture_output=True, timeout=120)
        self.assertEqual(stat.S_IMODE(os.stat(out).st_mode), 0o700)
        keys = [n for n in os.listdir(out) if n.endswith(".key")]
        self.assertEqual(sorted(keys), ["ca.key", "etcd1.key", "etcd2.key",
                                        "gantry.key", "root.key"])
        for name in keys:
            mode = stat.S_IMODE(os.stat(os.path.join(out, name)).st_mode)
            self.assertEqual(mode, 0o600, name)
        subject = subprocess.run(
            ["openssl", "x509", "-noout", "-subject", "-in",
             os.path.join(out, "gantry.pem")],
            capture_output=True, text=True, check=True).stdout
        self.assertIn("CN = gantry", subject)
        if self.mallory is not None:
            for name in keys:
                result = subprocess.run(
                    ["cat", os.path.join(out, name)], capture_output=True,
                    user=self.mallory.pw_uid, group=self.mallory.pw_gid,
                    extra_groups=[])
                self.assertNotEqual(result.returncode, 0, name)

    # --- gantryd's side ---

    def gantryd(self, *config_lines, etcd=None):
        directory = tempfile.mkdtemp(prefix="gantryd-", dir=self.directory)
        return run_gantryd([f'etcd = "{etcd or self.etcd.endpoints}"',
                            'etcd-prefix = "/gantry/"', *config_lines],
                           directory)

    def test_gantryd_without_tls_settings_refuses(self):
        result = self.gantryd()
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("refusing to speak to etcd without TLS", result.stderr)
        self.assertIn("--etcd-ca, --etcd-cert and --etcd-key", result.stderr)
        https = self.gantryd(etcd=f"https://{self.etcd.endpoints}")
        self.assertIn("speaks TLS: give --etcd-ca", https.stderr)

    def test_gantryd_with_half_the_tls_settings_refuses(self):
        ca, (cert, key) = self.etcd.files.ca, self.etcd.files.gantry
        result = self.gantryd(f'etcd-ca = "{ca}"', f'etcd-cert = "{cert}"')
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("missing: --etcd-key", result.stderr)
        both = self.gantryd(*tls_config(self.etcd.files),
                            "etcd-insecure = true")
        self.assertIn("--etcd-insecure cannot go with", both.stderr)

    def test_gantryd_refuses_a_key_others_can_read(self):
        cert, key = self.etcd.files.gantry
        shared = os.path.join(self.directory, "shared-gantry.key")
        with open(key) as source, open(shared, "w") as out:
            out.write(source.read())
        os.chmod(shared, 0o644)
        result = self.gantryd(f'etcd-ca = "{self.etcd.files.ca}"',
                              f'etcd-cert = "{cert}"',
                              f'etcd-key = "{shared}"')
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn(f"the private key {shared} is accessible by others",
                      result.stderr)


@unittest.skipUnless(etcd_binary(), "etcd is not installed")
class PlainEtcdTest(ClusterTestCase):

    def test_plain_etcd_needs_etcd_insecure_and_warns(self):
        directory = tempfile.mkdtemp(prefix="gantry-it-", dir="/tmp")
        self.addCleanup(subprocess.run, ["rm", "-rf", directory])
        etcd = EtcdCluster(os.path.join(directory, "etcd"), tls=False)
        self.addCleanup(etcd.stop)
        etcd.start()
        refused = run_gantryd([f'etcd = "{etcd.endpoints}"'], directory)
        self.assertEqual(refused.returncode, 1, refused.stderr)
        self.assertIn("refusing to speak to etcd without TLS",
                      refused.stderr)
        # With etcd-insecure (HaCluster(etcd_tls=False) gives it) it runs,
        # and says why that is unsafe.
        cluster = HaCluster(label=self.id(), agents=1, controllers=1,
                            etcd_tls=False)
        self._clusters.append(cluster)
        self.addCleanup(cluster.stop_processes)
        cluster.start()
        leader = cluster.wait_leader()
        self.assertIn("speaking to etcd without TLS (--etcd-insecure)",
                      cluster.controllers[leader].log_text())


if __name__ == "__main__":
    gantry_cluster.main()
