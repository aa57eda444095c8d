#!/usr/bin/env python3
"""The query surface as Slurm users, their workflow tools and their admins'
scripts use it, through the Slurm names (links to gantry): squeue's
selections, layouts, sort keys and -O fields; sinfo's default output byte
for byte, -n, -R, -s, -N, -O; scontrol show job/partition/config/hostlist,
update, requeue, ping and version; scancel --me, -i, -v; ClusterShell's
Slurm group source; unknown options named with the closest one."""

import os
import pwd
import re
import shutil
import subprocess
import tempfile

import gantry_cluster
from gantry_cluster import WAIT_FOR_FILE, ClusterTestCase

SLURM_NAMES = ("sbatch", "squeue", "scancel", "sinfo", "scontrol", "srun")

# Runs until release.<job id> appears.
WAITER = """#!/bin/bash
""" + WAIT_FOR_FILE + """
echo ready > ready.$SLURM_JOB_ID
wait_for_file release.$SLURM_JOB_ID
"""


class SlurmQueriesTest(ClusterTestCase):

    @classmethod
    def setUpClass(cls):
        cls.cluster = cls.start_class_cluster(agents=2)
        cls.links = tempfile.mkdtemp(prefix="gantry-slurm-links-")
        cls.addClassCleanup(lambda: shutil.rmtree(cls.links, True))
        for name in SLURM_NAMES:
            os.symlink(cls.cluster.cli_bin, os.path.join(cls.links, name))
        cls.env = dict(cls.cluster.env)
        cls.env["PATH"] = cls.links + os.pathsep + cls.env.get("PATH", "")
        for variable in ("SQUEUE_FORMAT", "SQUEUE_FORMAT2", "SQUEUE_SORT",
                         "SINFO_FORMAT", "SCANCEL_INTERACTIVE",
                         "SCANCEL_VERBOSE"):
            cls.env.pop(variable, None)
        cls.user = pwd.getpwuid(os.getuid()).pw_name

    def slurm(self, name, *args, check=True, env=None, input=None):
        result = subprocess.run(
            [os.path.join(self.links, name), *args], cwd=self.cluster.work_dir,
            env=env or self.env, capture_output=True, text=True, timeout=30,
            input=input)
        if check and result.returncode != 0:
            self.fail(f"{name} {' '.join(args)} exited {result.returncode}\n"
                      f"stdout: {result.stdout}\nstderr: {result.stderr}")
        return result

    def waiter(self, *options, name="waiter"):
        """A running job (on one node unless `options` say otherwise)."""
        script = self.cluster.write_script("waiter.sh", WAITER)
        job_id = int(self.slurm("sbatch", "--parsable", "-J", name, *options,
                                script).stdout)
        self.cluster.wait_job(job_id, "RUNNING")
        self.cluster.wait_files([f"ready.{job_id}"])
        self.addCleanup(self.release, job_id)
        return job_id

    def release(self, job_id):
        self.cluster.touch(f"release.{job_id}")
        self.slurm("scancel", str(job_id), check=False)

    def test_squeue_selections_and_unknown_ids(self):
        job_id = self.waiter(name="rjob")
        node = self.cluster.job(job_id)["nodelist"]
        ids = lambda *args: self.slurm("squeue", "-h", "-o", "%i",
                                       *args).stdout.split()
        self.assertEqual(ids("-n", "rjob"), [str(job_id)])
        self.assertEqual(ids("--name=nosuch"), [])
        self.assertIn(str(job_id), ids("-w", node))
        other = "node02" if node == "node01" else "node01"
        self.assertNotIn(str(job_id), ids("-w", other))
        self.assertIn(str(job_id), ids("-w", "node[01-02]"))
        self.assertIn(str(job_id), ids("--me"))
        self.assertIn(str(job_id), ids("-u", str(os.getuid())))
        nobody = self.slurm("squeue", "-u", "no-such-user-x", check=False)
        self.assertEqual(nobody.returncode, 1)
        self.assertIn("Invalid user: no-such-user-x", nobody.stderr)
        self.assertEqual(ids("-A", "physics"), [])
        self.assertIn(str(job_id), ids("-q", "normal"))
        # An id the controller does not know: squeue's words and status.
        unknown = self.slurm("squeue", "-j", "999999", check=False)
        self.assertEqual(unknown.returncode, 1)
        self.assertEqual(unknown.stderr,
                         "slurm_load_jobs error: Invalid job id specified\n")
        # A known job filtered out by state is no error.
        self.assertEqual(ids("-j", str(job_id), "-t", "PD"), [])
        # Slurm's states no Gantry job is in: nothing, and no error.
        self.assertEqual(ids("-t", "CG,SUSPENDED"), [])
        self.assertEqual(self.slurm("sinfo", "-h", "-t", "maint").stdout, "")

    def test_squeue_layouts(self):
        job_id = self.waiter(name="layouts")
        script = os.path.join(self.cluster.work_dir, "waiter.sh")
        line = self.slurm("squeue", "-h", "-j", str(job_id), "-o",
                          "%i|%Z|%o|%a|%q|%u|%D|%C").stdout
        self.assertEqual(line, f"{job_id}|{self.cluster.work_dir}|{script}|"
                         f"(null)|normal|{self.user}|1|1\n")
        long = self.slurm("squeue", "-l", "-j", str(job_id)).stdout
        lines = long.splitlines()
        # A date line first, then squeue -l's columns.
        self.assertRegex(lines[0], r"^\w{3} \w{3} \d\d \d\d:\d\d:\d\d \d{4}$")
        self.assertEqual(lines[1].split(),
                         ["JOBID", "PARTITION", "NAME", "USER", "STATE",
                          "TIME", "TIME_LIMI", "NODES", "NODELIST(REASON)"])
        self.assertIn("RUNNING", lines[2])
        fields = self.slurm("squeue", "-j", str(job_id), "-O",
                            "JobID:8,Name:.10,StateCompact,WorkDir:60"
                            ).stdout.splitlines()
        self.assertEqual(fields[0], "JOBID   " + "      NAME" + "ST" + " " * 18
                         + "WORK_DIR" + " " * 52)
        self.assertEqual(fields[1][:19], f"{job_id:<8}{'layouts':>10}R")
        typo = self.slurm("squeue", "-O", "JobID,Nmae", check=False)
        self.assertEqual(typo.returncode, 1)
        self.assertIn("did you mean Name?", typo.stderr)
        env = dict(self.env, SQUEUE_FORMAT="%j:%t", SQUEUE_SORT="-i")
        self.assertIn("layouts:R\n",
                      self.slurm("squeue", "-h", env=env).stdout)
        env = dict(self.env, SQUEUE_FORMAT2="Name:12,UserName")
        header = self.slurm("squeue", env=env).stdout.splitlines()[0]
        self.assertEqual(header, "NAME        USER                ")

    def test_squeue_sort_start_steps_and_iterate(self):
        # Time limits, so the backfill scheduler knows when they end.
        first = self.waiter("-t", "10", name="sortme")
        second = self.waiter("-t", "10", name="sortme")
        ordered = self.slurm("squeue", "-h", "-n", "sortme", "-S", "-i", "-o",
                             "%i").stdout.split()
        self.assertEqual(ordered, [str(second), str(first)])
        ordered = self.slurm("squeue", "-h", "-n", "sortme", "--sort=+JobID",
                             "-o", "%i").stdout.split()
        self.assertEqual(ordered, [str(first), str(second)])
        bad = self.slurm("squeue", "-S", "~", check=False)
        self.assertNotEqual(bad.returncode, 0)
        self.assertIn("invalid sort key", bad.stderr)
        # --start: pending jobs only, with START_TIME; both nodes are busy,
        # so a 2-node job waits, and the backfill scheduler reserves for it.
        script = self.cluster.write_script("short.sh", "#!/bin/sh\ntrue\n")
        big = int(self.slurm("sbatch", "--parsable", "-N", "2", "--exclusive",
                             "-t", "5", script).stdout)
        self.addCleanup(self.slurm, "scancel", str(big), check=False)
        start = self.slurm("squeue", "--start").stdout.splitlines()
        self.assertEqual(start[0].split(),
                         ["JOBID", "PARTITION", "NAME", "USER", "ST",
                          "START_TIME", "NODES", "SCHEDNODES",
                          "NODELIST(REASON)"])
        mine = [row for row in start[1:] if row.split()[0] == str(big)]
        self.assertEqual(len(mine), 1, start)
        self.assertEqual(mine[0].split()[4], "PD")
        # Where the scheduler reserved nodes: when it expects the start.
        gantry_cluster.wait_for(
            lambda: re.search(
                rf"^ +{big} .* PD \d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\d ",
                self.slurm("squeue", "--start").stdout, re.M),
            10, "an expected start time for the waiting job")
        # Running jobs are not listed.
        self.assertNotIn(str(first), [row.split()[0] for row in start[1:]])
        self.slurm("scancel", str(big))
        # -s: the running steps of the jobs.
        step_script = self.cluster.write_script("stepper.sh", """#!/bin/bash
""" + WAIT_FOR_FILE + """
srun sleep 30 &
wait_for_file release.$SLURM_JOB_ID
kill %1
""")
        env = dict(self.env)
        stepper = int(self.slurm("sbatch", "--parsable", "-J", "stepper",
                                 step_script, env=env).stdout)
        self.addCleanup(self.release, stepper)
        self.cluster.wait_job(stepper, "RUNNING")

        def step_rows():
            rows = self.slurm("squeue", "-s", "-j", str(stepper)).stdout
            return rows.splitlines()
        gantry_cluster.wait_for(lambda: len(step_rows()) > 1, 15,
                                "the step to show in squeue -s")
        rows = step_rows()
        self.assertEqual(rows[0].split(), ["STEPID", "NAME", "PARTITION",
                                           "USER", "TIME", "NODELIST"])
        self.assertEqual(rows[1].split()[:2], [f"{stepper}.0", "sleep"])
        # -i: again and again, each time under a date line.
        proc = subprocess.Popen(
            [os.path.join(self.links, "squeue"), "-i", "1", "-o", "%i"],
            env=self.env, stdout=subprocess.PIPE, text=True,
            cwd=self.cluster.work_dir)
        try:
            subprocess.run(["sleep", "2.5"], check=True)
        finally:
            proc.terminate()
            out, _ = proc.communicate(timeout=10)
        self.assertGreaterEqual(out.count("JOBID\n"), 2, out)
        self.assertRegex(out, r"^\w{3} \w{3} \d\d \d\d:\d\d:\d\d \d{4}\nJOBID\n")

    def test_sinfo(self):
        summary = self.slurm("sinfo").stdout
        self.assertEqual(summary.splitlines()[0],
                         "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST")
        self.assertRegex(summary.splitlines()[1],
                         r"^main\*        up   infinite      2   idle "
                         r"node\[01-02\]$")
        self.assertEqual(self.slurm("sinfo", "-h", "-o", "%N").stdout,
                         "node[01-02]\n")
        self.assertEqual(self.slurm("sinfo", "-h", "-o", "%P").stdout,
                         "main*\n")
        self.assertEqual(self.slurm("sinfo", "-h", "-n", "node02", "-o",
                                    "%P %N").stdout, "main* node02\n")
        self.assertEqual(self.slurm("sinfo", "-h", "-N", "-o", "%R",
                                    "-n", "node01").stdout, "main\n")
        self.assertEqual(
            self.slurm("sinfo", "-s").stdout,
            "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T)  NODELIST\n"
            "main*        up   infinite          0/2/0/2  node[01-02]\n")
        self.assertEqual(
            self.slurm("sinfo", "-N").stdout,
            "NODELIST   NODES PARTITION STATE \n"
            "node01         1     main* idle  \n"
            "node02         1     main* idle  \n")
        self.assertEqual(self.slurm("sinfo", "-h", "-O",
                                    "NodeList:8,StateLong").stdout,
                         "node[01-idle                \n")
        env = dict(self.env, SINFO_FORMAT="%D|%t")
        self.assertEqual(self.slurm("sinfo", "-h", env=env).stdout, "2|idle\n")
        long = self.slurm("sinfo", "-l").stdout.splitlines()
        self.assertRegex(long[0], r"^\w{3} \w{3} \d\d \d\d:\d\d:\d\d \d{4}$")
        self.assertEqual(long[1].split(),
                         ["PARTITION", "AVAIL", "TIMELIMIT", "JOB_SIZE",
                          "ROOT", "OVERSUBS", "GROUPS", "NODES", "STATE",
                          "NODELIST"])

    def test_drain_through_scontrol_update_and_sinfo_reasons(self):
        self.slurm("scontrol", "update", "NodeName=node02", "State=DRAIN",
                   "Reason=bad fan")
        self.addCleanup(self.slurm, "scontrol", "update", "NodeName=node02",
                        "State=RESUME", check=False)
        reasons = self.slurm("sinfo", "-R").stdout.splitlines()
        self.assertEqual(reasons[0], "REASON               USER      "
                         "TIMESTAMP           NODELIST")
        self.assertRegex(reasons[1], r"^bad fan              \S+\s+"
                         r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d node02$")
        self.assertEqual(self.slurm("sinfo", "-h", "-t", "drain", "-o",
                                    "%N %t").stdout, "node02 drain\n")
        self.slurm("scontrol", "update", "NodeName=node02", "State=RESUME")
        self.assertEqual(self.slurm("sinfo", "-R", "-h").stdout, "")
        missing = self.slurm("scontrol", "update", "NodeName=node02",
                             "State=DRAIN", check=False)
        self.assertNotEqual(missing.returncode, 0)
        self.assertIn("Reason", missing.stderr)

    def test_clustershell_slurm_groups(self):
        if shutil.which("nodeset") is None:
            self.skipTest("clustershell (nodeset) is not installed")
        example = "/etc/clustershell/groups.conf.d/slurm.conf.example"
        if not os.path.exists(example):
            self.skipTest(f"{example} is missing")
        job_id = self.waiter(name="cs")
        node = self.cluster.job(job_id)["nodelist"]
        config = tempfile.mkdtemp(prefix="gantry-clustershell-")
        self.addCleanup(shutil.rmtree, config, True)
        os.makedirs(os.path.join(config, "groups.conf.d"))
        shutil.copy(example, os.path.join(config, "groups.conf.d",
                                          "slurm.conf"))
        with open(os.path.join(config, "groups.conf"), "w") as f:
            f.write(f"[Main]\ndefault: slurmpart\n"
                    f"groupsdir: {config}/groups.conf.d\n"
                    f"cache_time: 0\n")
        env = dict(self.env, CLUSTERSHELL_CFGDIR=config)

        def nodeset(*args):
            result = subprocess.run(["nodeset", *args], env=env,
                                    capture_output=True, text=True,
                                    timeout=30)
            self.assertEqual(result.returncode, 0, result.stderr)
            return result.stdout.strip()
        self.assertEqual(nodeset("-s", "slurmpart", "-l"), "@slurmpart:main")
        self.assertEqual(nodeset("-f", "@slurmpart:main"), "node[01-02]")
        self.assertEqual(nodeset("-s", "slurmpart", "-f", "@*"), "node[01-02]")
        self.assertEqual(nodeset("-f", f"@slurmjob:{job_id}"), node)
        self.assertIn(f"@slurmjob:{job_id}", nodeset("-s", "slurmjob", "-l"))
        self.assertIn(f"@slurmuser:{self.user}",
                      nodeset("-s", "slurmuser", "-l"))
        self.assertIn("@slurmjob:", nodeset("-s", "slurmjob", "-r", node))
        self.assertIn("@slurmstate:", nodeset("-s", "slurmstate", "-l"))

    def test_scontrol_show(self):
        job_id = self.waiter(name="shown")
        record = self.slurm("scontrol", "show", "jobid", "-dd",
                            str(job_id)).stdout
        # snakemake's status query.
        self.assertEqual(re.search(r"JobState=(\w+)", record).group(1),
                         "RUNNING")
        for field in (f"JobId={job_id} JobName=shown\n",
                      f"   UserId={self.user}({os.getuid()}) GroupId=",
                      "\n   Priority=", " QOS=normal\n",
                      "\n   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 "
                      "ExitCode=0:0\n",
                      "\n   Command=" + os.path.join(self.cluster.work_dir,
                                                     "waiter.sh") + "\n",
                      f"\n   WorkDir={self.cluster.work_dir}\n",
                      "\n     Nodes=node0"):
            self.assertIn(field, record)
        every = self.slurm("scontrol", "show", "job").stdout
        self.assertIn(f"JobId={job_id} ", every)
        one_line = self.slurm("scontrol", "-o", "show", "job",
                              str(job_id)).stdout
        self.assertEqual(one_line.count("\n"), 1)
        unknown = self.slurm("scontrol", "show", "job", "999999", check=False)
        self.assertEqual(unknown.returncode, 1)
        self.assertIn("Invalid job id specified", unknown.stderr)
        partition = self.slurm("scontrol", "show", "partition").stdout
        self.assertTrue(partition.startswith("PartitionName=main\n"))
        self.assertIn(" Default=YES ", partition)
        self.assertIn("\n   Nodes=node[01-02]\n", partition)
        self.assertIn("TotalNodes=2 ", partition)
        self.assertNotEqual(self.slurm("scontrol", "show", "partition",
                                       "nosuch", check=False).returncode, 0)
        self.assertEqual(self.slurm("scontrol", "show", "hostlist",
                                    "node3,node1,node2").stdout,
                         "node[3,1-2]\n")
        self.assertEqual(self.slurm("scontrol", "show", "hostlist",
                                    "n01 n02 n03").stdout, "n[01-03]\n")
        ping = self.slurm("scontrol", "ping").stdout
        self.assertRegex(ping, r"^Slurmctld\(primary\) at \S+ is UP\n$")
        self.assertRegex(self.slurm("scontrol", "version").stdout,
                         r"^slurm 22\.05\.\d+ \(gantry \d+\.\d+\.\d+\)\n$")
        config = self.slurm("scontrol", "show", "config").stdout
        self.assertRegex(config, r"SLURM_VERSION\s+= 22\.05")
        unsupported = self.slurm("scontrol", "reconfigure", check=False)
        self.assertNotEqual(unsupported.returncode, 0)
        self.assertIn("requeue", unsupported.stderr)

    def test_scontrol_update_job_and_requeue(self):
        script = self.cluster.write_script("waiter.sh", WAITER)
        job_id = int(self.slurm("sbatch", "--parsable", "-t", "30", "-J",
                                "upd", script).stdout)
        self.addCleanup(self.release, job_id)
        self.cluster.wait_job(job_id, "RUNNING")
        self.slurm("scontrol", "update", f"JobId={job_id}", "TimeLimit=20")
        self.assertEqual(self.cluster.job(job_id)["time_limit_seconds"], 1200)
        self.slurm("scontrol", "update", f"JobId={job_id}", "TimeLimit=-5")
        self.assertEqual(self.cluster.job(job_id)["time_limit_seconds"], 900)
        self.slurm("scontrol", "update", f"jobid={job_id}", "JobName=renamed")
        self.assertEqual(self.slurm("squeue", "-h", "-j", str(job_id), "-o",
                                    "%j").stdout, "renamed\n")
        running = self.slurm("scontrol", "update", f"JobId={job_id}",
                             "Partition=main2", check=False)
        self.assertNotEqual(running.returncode, 0)
        self.assertIn("pending", running.stderr)
        # requeue: stopped, pending, and run again.
        self.cluster.wait_files([f"ready.{job_id}"])
        os.unlink(os.path.join(self.cluster.work_dir, f"ready.{job_id}"))
        self.slurm("scontrol", "requeue", str(job_id))
        self.cluster.wait_job(job_id, "RUNNING", timeout=30)
        self.cluster.wait_files([f"ready.{job_id}"], timeout=30)
        record = self.slurm("scontrol", "show", "job", str(job_id)).stdout
        self.assertIn(" Restarts=1 ", record)
        self.cluster.touch(f"release.{job_id}")
        self.cluster.wait_job(job_id, "COMPLETED")
        # A finished job goes back to pending, held with requeuehold.
        self.slurm("scontrol", "requeuehold", str(job_id))
        self.cluster.wait_job(job_id, "PENDING")
        self.assertEqual(self.slurm("squeue", "-h", "-j", str(job_id), "-o",
                                    "%r").stdout, "JobHeldUser\n")
        pending = self.slurm("scontrol", "requeue", str(job_id), check=False)
        self.assertNotEqual(pending.returncode, 0)
        self.assertIn("pending", pending.stderr)
        self.slurm("scancel", str(job_id))

    def test_scancel_me_interactive_verbose(self):
        keep = self.waiter(name="ask")
        drop = self.waiter(name="ask")
        # Answers: keep the first, cancel the second.
        asked = self.slurm("scancel", "-i", "-n", "ask", input="n\ny\n")
        self.assertEqual(
            asked.stdout,
            f"Cancel job_id={keep} name=ask partition=main [y/n]? "
            f"Cancel job_id={drop} name=ask partition=main [y/n]? ")
        self.cluster.wait_job(drop, "CANCELLED", timeout=10)
        self.assertEqual(self.cluster.job(keep)["state"], "RUNNING")
        verbose = self.slurm("scancel", "-v", "--me", "-n", "ask")
        self.assertEqual(verbose.stderr, f"scancel: Terminating job {keep}\n")
        self.cluster.wait_job(keep, "CANCELLED", timeout=10)

    def test_unknown_and_foreign_options(self):
        typo = self.slurm("squeue", "--nme", "x", check=False)
        self.assertEqual(typo.returncode, 1)
        self.assertEqual(typo.stderr,
                         "squeue: unrecognized option '--nme' (did you mean "
                         "'--name'?)\nTry \"squeue --help\" for more "
                         "information\n")
        for program, option, closest in (("sinfo", "--nodez", "nodes"),
                                         ("scancel", "--interactiv",
                                          "interactive")):
            result = self.slurm(program, option, check=False)
            self.assertEqual(result.returncode, 1)
            self.assertIn(f"{program}: unrecognized option '{option}' (did "
                          f"you mean '--{closest}'?)", result.stderr)
        native = self.cluster.cli("queue", "--nme", "x", check=False)
        self.assertIn("gantry queue: unrecognized option '--nme'",
                      native.stderr)
        # One cluster: -M changes nothing, and says so.
        clusters = self.slurm("squeue", "-M", "other", "-h", "-o", "%i")
        self.assertIn("squeue: warning: -M/--clusters ignored",
                      clusters.stderr)
        reservation = self.slurm("squeue", "--reservation=r1", check=False)
        self.assertEqual(reservation.returncode, 1)
        self.assertIn("--reservation", reservation.stderr)
        self.assertNotIn("unrecognized", reservation.stderr)
        self.assertRegex(self.slurm("squeue", "-V").stdout, r"^slurm 22\.05")


if __name__ == "__main__":
    gantry_cluster.main()
