#!/usr/bin/env python3
"""TLS on gantryd's TCP listener (common/tls_credentials.h), with a CA and a
certificate made by the openssl command for this test: agents and the CLI
with the CA reach gantryd and a job runs (its script calling gantry over
TLS, as the agent hands it the CA); a CLI without the CA, with another CA,
or expecting another name fails at once with a clear message; a plaintext
client is refused; the unix socket stays plain; an agent with the wrong CA
says so in its log; and bad TLS files stop gantryd and the agent at start."""

import json
import os
import subprocess
import time
import unittest

import gantry_cluster
from gantry_cluster import ClusterTestCase, build_dir, wait_for
from munge_daemon import munge_available
from tls_certificates import TlsFiles, make_ca, openssl_available


def probe_binary():
    return os.path.join(build_dir(), "tests", "tools", "gantry-auth-probe")


@unittest.skipUnless(openssl_available(), "openssl is not installed")
@unittest.skipUnless(munge_available(), "munged is not installed")
class TlsClusterTest(ClusterTestCase):

    @classmethod
    def setUpClass(cls):
        cls.cluster = cls.start_class_cluster(agents=1, tls=True)
        cls.other_ca, _ = make_ca(cls.cluster.path("other-ca"), "other")

    def cli(self, *args, env):
        started = time.monotonic()
        result = subprocess.run([self.cluster.cli_bin, *args], env=env,
                                cwd=self.cluster.work_dir, capture_output=True,
                                text=True, timeout=60)
        return result, time.monotonic() - started

    def test_agent_and_cli_with_the_ca_run_a_job(self):
        self.assertIn("tcp=tls", self.cluster.controller.log_text())
        env = self.cluster.tls_env()
        listing, _ = self.cli("nodes", "--json", env=env)
        self.assertEqual(listing.returncode, 0, listing.stderr)
        self.assertIn("node01", listing.stdout)
        # The script reaches gantryd over TCP with what its agent gave it.
        script = self.cluster.write_script("tls.sh", f"""#!/bin/bash
echo "controller=$GANTRY_CONTROLLER ca=$GANTRY_TLS_CA"
{self.cluster.cli_bin} job "$SLURM_JOB_ID" --json > job-over-tls.json
""")
        submitted, _ = self.cli("batch", "--parsable", script, env=env)
        self.assertEqual(submitted.returncode, 0, submitted.stderr)
        job_id = int(submitted.stdout.strip().split(";")[0])
        job = self.cluster.wait_job(job_id, "COMPLETED")
        self.assertEqual(job["state"], "COMPLETED")
        self.assertEqual(
            json.loads(self.cluster.read("job-over-tls.json"))["job_id"], job_id)
        output = self.cluster.read(f"gantry-{job_id}.out")
        self.assertIn(f"controller=127.0.0.1:{self.cluster.port}", output)
        self.assertIn(f"ca={self.cluster.tls.ca}", output)

    def test_cli_without_the_ca_fails_at_once_with_a_hint(self):
        result, took = self.cli("nodes", env=self.cluster.tls_env(ca=""))
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn("cannot reach the controller at 127.0.0.1:", result.stderr)
        self.assertIn("if the controller uses TLS, give its CA with --tls-ca "
                      "or GANTRY_TLS_CA", result.stderr)
        self.assertLess(took, 15, "no hang")
        # The flag does what the variable does.
        result, _ = self.cli("--tls-ca", self.cluster.tls.ca, "nodes",
                             env=self.cluster.tls_env(ca=""))
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_cli_with_another_ca_fails_at_once_with_a_hint(self):
        result, took = self.cli("nodes", env=self.cluster.tls_env(ca=self.other_ca))
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn("certificate verify failed", result.stderr)
        self.assertIn(f"TLS with the CA {self.other_ca}: check that it signed "
                      "the controller's certificate", result.stderr)
        self.assertLess(took, 15, "no hang")

    def test_cli_expecting_another_name_is_refused(self):
        env = self.cluster.tls_env()
        env["GANTRY_TLS_SERVER_NAME"] = "not-gantryd.test"
        result, _ = self.cli("nodes", env=env)
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn("cannot reach the controller", result.stderr)
        env["GANTRY_TLS_SERVER_NAME"] = "gantryd.test"  # in the certificate
        result, _ = self.cli("nodes", env=env)
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_cli_with_an_unreadable_ca_file_says_so(self):
        missing = self.cluster.path("no-such-ca.pem")
        result, _ = self.cli("nodes", env=self.cluster.tls_env(ca=missing))
        self.assertEqual(result.returncode, 1)
        self.assertIn(f"cannot read the CA file {missing}", result.stderr)

    def test_plaintext_client_is_refused_and_the_unix_socket_stays_plain(self):
        credential = self.cluster.munged.credential(
            subprocess.run([probe_binary(), "--payload", "ListNodes"],
                           capture_output=True, text=True,
                           check=True).stdout.strip())
        result = subprocess.run(
            [probe_binary(), f"127.0.0.1:{self.cluster.port}", "ListNodes",
             credential], capture_output=True, text=True, timeout=30)
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertTrue(result.stdout.startswith("14: "), result.stdout)
        self.assertIn("node01", self.cluster.cli("nodes").stdout)  # unix socket

    def test_agent_with_another_ca_logs_why_it_cannot_connect(self):
        self.cluster.agent_args["wrong-ca"] = ["--tls-ca", self.other_ca]
        agent = self.cluster.start_agent("wrong-ca", node_name="node09")
        try:
            wait_for(lambda: "cannot connect to the controller over TLS"
                     in agent.log_text(), 15, "the agent's TLS error")
            self.assertIn("check that it signed the controller's certificate",
                          agent.log_text())
            self.assertNotIn("node09", self.cluster.nodes())
        finally:
            agent.kill()


    def test_agent_without_the_ca_says_the_controller_speaks_tls(self):
        # No CA: the agent dials in plain TCP and the TLS listener closes
        # the connection; it used to retry without a word.
        self.cluster.agent_args["no-ca"] = ["--tls-ca", ""]
        agent = self.cluster.start_agent("no-ca", node_name="node08")
        try:
            wait_for(lambda: "the controller speaks TLS" in agent.log_text(),
                     30, "the agent's error about TLS")
            self.assertIn("--tls-ca", agent.log_text())
            self.assertIn("tls-ca in the [agent] table", agent.log_text())
            self.assertNotIn("node08", self.cluster.nodes())
        finally:
            agent.kill()


@unittest.skipUnless(openssl_available(), "openssl is not installed")
class TlsStartupTest(unittest.TestCase):
    """Bad TLS files stop gantryd and gantry-agent at start, naming them."""

    @classmethod
    def setUpClass(cls):
        cls.dir = gantry_cluster.tempfile.mkdtemp(prefix="gantry-it-tls-")
        cls.addClassCleanup(gantry_cluster.shutil.rmtree, cls.dir, True)
        cls.files = TlsFiles(cls.dir)
        _, cls.other_key = make_ca(os.path.join(cls.dir, "other"), "other")
        os.chmod(cls.other_key, 0o600)
        # The right key, but readable by everyone on the host.
        cls.open_key = os.path.join(cls.dir, "open.key")
        gantry_cluster.shutil.copyfile(cls.files.key, cls.open_key)
        os.chmod(cls.open_key, 0o644)

    def gantryd(self, *args):
        return subprocess.run(
            [os.path.join(build_dir(), "daemon", "gantryd"),
             "--state-dir", os.path.join(self.dir, "state"), "--auth", "none",
             "--listen", "127.0.0.1:0", "--socket", "", "--metrics-listen", "",
             *args], capture_output=True, text=True, timeout=30)

    def test_gantryd_refuses_bad_tls_files(self):
        cases = [
            (["--tls-cert", self.files.cert],
             "TLS needs both --tls-cert and --tls-key"),
            (["--tls-cert", self.files.cert, "--tls-key",
              os.path.join(self.dir, "missing.key")],
             f"cannot read the private key {self.dir}/missing.key"),
            (["--tls-cert", self.files.key, "--tls-key", self.files.key],
             f"the certificate {self.files.key} holds no PEM certificate"),
            (["--tls-cert", self.files.cert, "--tls-key", self.other_key],
             f"the private key {self.other_key} does not belong to the "
             f"certificate {self.files.cert}"),
            # As ssh refuses an identity file others can read.
            (["--tls-cert", self.files.cert, "--tls-key", self.open_key],
             f"the private key {self.open_key} is accessible by others "
             f"(mode 0644)"),
        ]
        for args, message in cases:
            result = self.gantryd(*args)
            self.assertEqual(result.returncode, 2, (args, result.stderr))
            self.assertIn(message, result.stderr)
        self.assertIn(f"chmod 600 {self.open_key}", result.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "state", "db")),
                         "nothing is created before the check")

    def test_agent_refuses_an_unreadable_ca_file(self):
        missing = os.path.join(self.dir, "missing-ca.pem")
        result = subprocess.run(
            [os.path.join(build_dir(), "agent", "gantry-agent"),
             "--controller", "127.0.0.1:1", "--tls-ca", missing,
             "--work-dir", os.path.join(self.dir, "agent")],
            capture_output=True, text=True, timeout=30)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(f"gantry-agent: --tls-ca: cannot read the CA file {missing}",
                      result.stderr)


if __name__ == "__main__":
    gantry_cluster.main()
