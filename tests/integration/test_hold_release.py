#!/usr/bin/env python3
"""sbatch --hold, scontrol hold / release and sbatch --wrap: a held job stays
pending with reason JobHeldUser (through a controller restart) until it is
released, then runs; an array's id holds and releases all its pending tasks;
only pending jobs can be held, only their owner (or an admin) may, and a
refused request changes nothing. --wrap submits a command as a script."""

import os
import pwd
import subprocess
import time

from gantry_cluster import ClusterTestCase

OTHER_USER = "nobody"


class HoldReleaseTest(ClusterTestCase):
    def setUp(self):
        self.cluster = self.start_cluster(agents=1)
        self.cluster.add_slurm_commands()

    def slurm(self, *argv, check=True):
        """Runs a Slurm command name (a link to gantry) as the test user."""
        result = subprocess.run(list(argv), env=self.cluster.env,
                                cwd=self.cluster.work_dir, capture_output=True,
                                text=True, timeout=30)
        if check and result.returncode != 0:
            self.fail(f"{argv} failed: {result.stderr}")
        return result

    def test_held_job_waits_until_released_and_survives_a_restart(self):
        cluster = self.cluster
        script = cluster.write_script("h.sh", "#!/bin/bash\necho ran\n")
        job_id = cluster.submit(script, "--hold", "-o", "held.out")
        time.sleep(1)  # scheduling passes come and go; it stays held
        job = cluster.job(job_id)
        self.assertEqual(job["state"], "PENDING")
        self.assertEqual(job["reason"], "JobHeldUser")
        self.assertIn(f"gantry release {job_id}", job["reason_detail"])
        queue = cluster.cli("queue", "-o", "%i %t %r").stdout
        self.assertRegex(queue, rf"\b{job_id} PD \(?JobHeldUser")

        cluster.restart_controller()
        cluster.wait_nodes_up(list(cluster.agents), timeout=30)
        time.sleep(1)
        job = cluster.job(job_id)
        self.assertEqual((job["state"], job["reason"]),
                         ("PENDING", "JobHeldUser"))

        self.slurm("scontrol", "release", str(job_id))
        cluster.wait_job(job_id, "COMPLETED", timeout=30)
        self.assertEqual(cluster.read("held.out"), "ran\n")
        events = [e["kind"] for e in cluster.job(job_id)["history"]]
        self.assertIn("released", events)

    def test_hold_a_pending_job_and_every_task_of_an_array(self):
        cluster = self.cluster
        cluster.cli("drain", *list(cluster.agents), "--reason", "keep pending")
        script = cluster.write_script("a.sh", "#!/bin/bash\ntrue\n")
        plain = cluster.submit(script)
        array = cluster.submit(script, "--array=0-3")
        cluster.cli("hold", str(plain), str(array))
        for job in cluster.cli_json("queue", "-r")["jobs"]:
            self.assertEqual(job["reason"], "JobHeldUser", job)
        cluster.cli("resume", *list(cluster.agents))
        time.sleep(1.5)
        states = {j["job_id"]: j["state"]
                  for j in cluster.cli_json("queue", "-r")["jobs"]}
        self.assertEqual(len(states), 5, states)
        self.assertEqual(set(states.values()), {"PENDING"}, states)
        # One task, then the rest of the array (scontrol's id forms).
        self.slurm("scontrol", "release", f"jobid={array}_2")
        tasks = {j["array_task_id"]: j["job_id"]
                 for j in cluster.cli_json("queue", "-r", "--all")["jobs"]
                 if j.get("array_job_id") == array}
        cluster.wait_job(tasks[2], "COMPLETED", timeout=30)
        self.assertEqual(cluster.job(tasks[0])["reason"], "JobHeldUser")
        self.slurm("scontrol", "release", f"{array},{plain}")
        for job_id in [plain] + list(tasks.values()):
            cluster.wait_job(job_id, "COMPLETED", timeout=30)

    def test_refusals_change_nothing(self):
        cluster = self.cluster
        script = cluster.write_script("r.sh", "#!/bin/bash\nsleep 30\n")
        # Exclusive: the released job stays pending behind the running one.
        running = cluster.submit(script, "--exclusive")
        cluster.wait_job(running, "RUNNING", timeout=20)
        held = cluster.submit(script, "-H", "--exclusive")

        result = cluster.cli("hold", str(running), check=False)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn(f"job {running} is RUNNING, not pending", result.stderr)
        self.assertEqual(cluster.job(running)["state"], "RUNNING")

        other = pwd.getpwnam(OTHER_USER)
        result = cluster.cli("release", str(held), check=False,
                             uid=other.pw_uid)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("access denied", result.stderr)
        self.assertEqual(cluster.job(held)["reason"], "JobHeldUser")

        for bad, message in ((["hold"], "JOBID is required"),
                             (["release", "12x"], "invalid job id \"12x\""),
                             (["hold", "999999"], "invalid job id 999999")):
            result = cluster.cli(*bad, check=False)
            self.assertNotEqual(result.returncode, 0, bad)
            self.assertIn(message, result.stderr, bad)
        self.assertEqual(cluster.job(held)["reason"], "JobHeldUser")
        # Releasing what is not held is no error (as scontrol).
        cluster.cli("release", str(held))
        cluster.cli("release", str(held))
        self.assertEqual(cluster.job(held)["state"], "PENDING")
        self.assertNotEqual(cluster.job(held)["reason"], "JobHeldUser")
        cluster.cli("cancel", str(running), str(held))

    def test_wrap_submits_a_command(self):
        cluster = self.cluster
        job_id = int(self.slurm(
            "sbatch", "--parsable", "-o", "wrap.out",
            "--wrap", "echo wrapped; echo $SLURM_JOB_NAME").stdout.strip())
        cluster.wait_job(job_id, "COMPLETED", timeout=30)
        self.assertEqual(cluster.read("wrap.out"), "wrapped\nwrap\n")
        script = cluster.write_script("x.sh", "#!/bin/bash\ntrue\n")
        before = cluster.cli_json("queue", "--all")
        both = self.slurm("sbatch", "--wrap", "true", script, check=False)
        self.assertNotEqual(both.returncode, 0)
        self.assertIn("--wrap is the script", both.stderr)
        directive = cluster.write_script(
            "d.sh", "#!/bin/bash\n#SBATCH --wrap=true\ntrue\n")
        refused = self.slurm("sbatch", directive, check=False)
        self.assertIn("--wrap belongs on the command line", refused.stderr)
        empty = self.slurm("sbatch", "--wrap=", check=False)
        self.assertIn("empty value for --wrap", empty.stderr)
        blank = self.slurm("sbatch", "--wrap", " ", check=False)
        self.assertIn("--wrap needs a command", blank.stderr)
        self.assertEqual(cluster.cli_json("queue", "--all"), before)


if __name__ == "__main__":
    import gantry_cluster
    gantry_cluster.main()
