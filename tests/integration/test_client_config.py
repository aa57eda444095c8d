#!/usr/bin/env python3
"""The login host knows its cluster: the CLI reads the controller address
from the [client] table of the shared config file (/etc/gantry/gantry.toml;
GANTRY_CONFIG names another), so users need no GANTRY_CONTROLLER, as
Slurm's clients read slurm.conf.

- With only the file, gantry and the Slurm names (squeue, sbatch) reach
  the controller; a list of addresses is a replicated cluster's.
- Precedence: --controller, then GANTRY_CONTROLLER, then the file, then the
  built-in socket.
- A bad file: a one-line error naming the file and line, exit 1.
- The daemons accept the [client] table in the same file.
"""

import os
import subprocess

import gantry_cluster
from gantry_cluster import ClusterTestCase

UNREACHABLE = "unix:/nonexistent/gantryd.sock"


class ClientConfigTest(ClusterTestCase):

    @classmethod
    def setUpClass(cls):
        cls.cluster = cls.start_class_cluster(agents=1)
        cls.cluster.add_slurm_commands()

    def write_config(self, text):
        path = self.cluster.path(f"gantry-{self.id().rsplit('.', 1)[1]}.toml")
        with open(path, "w") as f:
            f.write(text)
        return path

    def run_cli(self, config, *args, env_controller=None, program=None):
        env = dict(self.cluster.env)
        env.pop("GANTRY_CONTROLLER", None)
        if env_controller is not None:
            env["GANTRY_CONTROLLER"] = env_controller
        env["GANTRY_CONFIG"] = config
        binary = program or self.cluster.cli_bin
        return subprocess.run([binary, *args], cwd=self.cluster.work_dir,
                              env=env, capture_output=True, text=True,
                              timeout=30)

    def controller_address(self):
        return self.cluster.env["GANTRY_CONTROLLER"]

    def test_file_alone_reaches_the_controller(self):
        config = self.write_config(
            f'[client]\ncontroller = "{self.controller_address()}"\n')
        result = self.run_cli(config, "queue")
        self.assertEqual(result.returncode, 0, result.stderr)
        squeue = os.path.join(self.cluster.path("bin"), "squeue")
        result = self.run_cli(config, program=squeue)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("JOBID", result.stdout)
        script = self.cluster.write_script("hello.sh",
                                           "#!/bin/bash\necho hello\n")
        sbatch = os.path.join(self.cluster.path("bin"), "sbatch")
        result = self.run_cli(config, script, program=sbatch)
        self.assertEqual(result.returncode, 0, result.stderr)
        job_id = result.stdout.split()[-1]
        self.cluster.wait_job(job_id, "COMPLETED")

    def test_a_list_reaches_the_controller_that_answers(self):
        # The controllers of a replicated cluster: one that is down does
        # not stop the CLI.
        config = self.write_config(
            f'[client]\ncontroller = ["{UNREACHABLE}", '
            f'"{self.controller_address()}"]\n')
        result = self.run_cli(config, "queue")
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_environment_wins_over_the_file_and_the_flag_over_both(self):
        good = self.write_config(
            f'[client]\ncontroller = "{self.controller_address()}"\n')
        bad = self.write_config(f'[client]\ncontroller = "{UNREACHABLE}"\n')
        result = self.run_cli(good, "queue", env_controller=UNREACHABLE)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn(UNREACHABLE, result.stderr)
        result = self.run_cli(bad, "queue",
                              env_controller=self.controller_address())
        self.assertEqual(result.returncode, 0, result.stderr)
        result = self.run_cli(bad, "--controller", self.controller_address(),
                              "queue", env_controller=UNREACHABLE)
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_no_file_means_the_built_in_socket(self):
        result = self.run_cli(self.cluster.path("absent.toml"), "queue")
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("unix:/run/gantry/gantryd.sock", result.stderr)

    def test_bad_file_names_file_and_line(self):
        cases = {
            '[client]\ncontroler = "x:1"\n':
                ':2: unknown key "controler" in [client]',
            '[client]\ncontroller = 17\n':
                None,  # a number is taken as text: "17"
            '[client]\ncontroller = ""\n':
                ':2: key "controller" in [client] is empty',
            '[client]\ncontroller = "x:1\n': ":2:",
            'controller = "x:1"\n': ':1: key "controller" is outside any',
            '[clients]\ncontroller = "x:1"\n': ":1: unknown table [clients]",
        }
        for text, expected in cases.items():
            with self.subTest(text=text):
                config = self.write_config(text)
                result = self.run_cli(config, "queue")
                self.assertNotEqual(result.returncode, 0)
                if expected is None:
                    continue
                self.assertEqual(len(result.stderr.strip().splitlines()), 1,
                                 result.stderr)
                self.assertTrue(
                    result.stderr.startswith(f"gantry: error: {config}:"),
                    result.stderr)
                self.assertIn(expected, result.stderr)

    def test_daemons_accept_the_client_table(self):
        config = self.write_config(
            '[client]\ncontroller = "ctl:6817"\ntls-ca = "/etc/gantry/ca.pem"\n'
            'tls-server-name = "ctl"\n\n[controller]\n\n[agent]\n')
        for binary in (self.cluster.gantryd_bin, self.cluster.agent_bin):
            result = subprocess.run(
                [binary, f"--config={config}", "--check-config"],
                capture_output=True, text=True, timeout=30)
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)


if __name__ == "__main__":
    gantry_cluster.main()
