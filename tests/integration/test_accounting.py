#!/usr/bin/env python3
"""Accounting (issue #20): sacct, sreport, sprio, sshare and sdiag under
Slurm's names, against real jobs that ran and left the live state for the
history (--min-job-age 1).

- sacct's rows (job, ID.batch, ID.0, array tasks ID_T) and fields in
  Slurm's spellings, -P/-p/fixed width byte for byte, -X, -j ID.STEP, the
  -S/-E window, -s, -u, and a user who is not an admin seeing only their
  own jobs; snakemake's query (sacct -P -n --format=JobIdRaw,State -j ID).
- sreport's usage equals what sacct says the jobs held (CPU seconds).
- sstat shows the CPU time and memory the agent measured of a running job.
- sprio lists the pending job, sshare the users' usage, sdiag the counts.
- An unknown option names the program and the closest option.
"""

import os
import pwd
import subprocess
import unittest

import gantry_cluster
from gantry_cluster import WAIT_FOR_FILE, ClusterTestCase, wait_for

OTHER_USER = "nobody"


def slurm(cluster, name, *args, uid=None, check=True, cwd=None):
    """Runs the Slurm name `name` (a link to gantry) with `args`."""
    identity = {}
    if uid is not None:
        entry = pwd.getpwuid(uid)
        identity = {"user": uid, "group": entry.pw_gid, "extra_groups": []}
    result = subprocess.run(
        [os.path.join(cluster.path("bin"), name), *args], env=cluster.env,
        cwd=cwd or cluster.work_dir, capture_output=True, text=True,
        timeout=30, **identity)
    if check and result.returncode != 0:
        raise AssertionError(f"{name} {' '.join(args)} exited "
                             f"{result.returncode}: {result.stderr}")
    return result


@unittest.skipUnless(os.geteuid() == 0, "needs root to act as another user")
class AccountingTest(ClusterTestCase):

    def test_accounting_commands(self):
        cluster = self.start_cluster(agents=2,
                                     gantryd_args=["--min-job-age", "1"])
        cluster.add_slurm_commands()
        os.chmod(cluster.dir, 0o755)
        other = pwd.getpwnam(OTHER_USER)
        user_dir = cluster.path("user")
        os.makedirs(user_dir)
        os.chown(user_dir, other.pw_uid, other.pw_gid)

        steps = cluster.write_script(
            "steps.sh", "#!/bin/bash\nsrun -N1 -n1 hostname\n"
            "srun -N2 -n2 true\nsleep 2\n")
        failing = cluster.write_script("fail.sh", "#!/bin/bash\nexit 3\n")
        waiting = cluster.write_script(
            "wait.sh", "#!/bin/bash\n" + WAIT_FOR_FILE +
            "wait_for_file never\n")
        quick = cluster.write_script("quick.sh", "#!/bin/bash\ntrue\n")
        mine = cluster.write_script("mine.sh", "#!/bin/bash\ntrue\n",
                                    directory=user_dir)

        ok_id = cluster.submit(steps, "-J", "stepsjob", "-N", "2",
                               per_task=False)
        fail_id = cluster.submit(failing, "-J", "failjob", "--no-requeue",
                                 per_task=False)
        cancel_id = cluster.submit(waiting, "-J", "canceljob", per_task=False)
        array_id = cluster.submit(quick, "--array=0-1", per_task=False)
        other_id = cluster.submit(mine, cwd=user_dir, uid=other.pw_uid,
                                  per_task=False)
        cluster.wait_job(cancel_id, "RUNNING")
        # snakemake's status query works on live jobs too.
        self.assertEqual(
            slurm(cluster, "sacct", "-P", "-n", "--format=JobIdRaw,State",
                  "-X", "-j", str(cancel_id)).stdout,
            f"{cancel_id}|RUNNING\n")
        # sstat: what the agent measures of the running job.
        def measured():
            return slurm(cluster, "sstat", "-P", "-n", "-o",
                         "JobID,NTasks,MaxRSS,MaxRSSNode,AveCPU", "-j",
                         str(cancel_id)).stdout.strip()
        line = wait_for(measured, 10, "sstat to show the running job")
        fields = line.split("|")
        self.assertEqual(fields[:2], [str(cancel_id), "1"], line)
        self.assertRegex(fields[2], r"^[1-9]\d*K$")
        self.assertRegex(fields[3], r"^node0[12]$")
        self.assertRegex(fields[4], r"^\d\d:\d\d:\d\d$")
        result = slurm(cluster, "sstat", "-j", f"{cancel_id}.0", check=False)
        self.assertIn("sstat: error: Gantry measures a job's processes "
                      "together", result.stderr)
        cluster.cli("cancel", str(cancel_id))
        for job_id in (ok_id, array_id, array_id + 1, other_id):
            cluster.wait_job(job_id, "COMPLETED", timeout=30)
        cluster.wait_job(fail_id, "FAILED")
        cluster.wait_job(cancel_id, "CANCELLED")
        held_id = cluster.submit(quick, "--hold", "-J", "heldjob",
                                 per_task=False)

        # Everything but the held job leaves the live state.
        def live():
            return cluster.cli("queue", "--all", "-h", "-o", "%i").stdout.split()
        wait_for(lambda: live() == [str(held_id)], 20,
                 "finished jobs to move to the history")

        # snakemake's query, from the history.
        query = ["-P", "-n", "--format=JobIdRaw,State", "-j"]
        self.assertEqual(
            slurm(cluster, "sacct", *query, str(ok_id)).stdout,
            f"{ok_id}|COMPLETED\n{ok_id}.batch|COMPLETED\n"
            f"{ok_id}.0|COMPLETED\n{ok_id}.1|COMPLETED\n")
        self.assertEqual(
            slurm(cluster, "sacct", *query, str(ok_id), "-X").stdout,
            f"{ok_id}|COMPLETED\n")
        self.assertEqual(
            slurm(cluster, "sacct", *query, f"{ok_id}.0").stdout,
            f"{ok_id}.0|COMPLETED\n")
        self.assertEqual(
            slurm(cluster, "sacct", "-X", "-n", "-P", "-o",
                  "JobID,JobName,State,ExitCode", "-j",
                  f"{fail_id},{cancel_id},{array_id}").stdout,
            f"{fail_id}|failjob|FAILED|3:0\n"
            f"{cancel_id}|canceljob|CANCELLED by 0|0:0\n"
            f"{array_id}_0|quick.sh|COMPLETED|0:0\n"
            f"{array_id}_1|quick.sh|COMPLETED|0:0\n")
        # -p ends with the delimiter; --delimiter replaces it.
        self.assertEqual(
            slurm(cluster, "sacct", "-X", "-p", "-o", "JobID,NNodes",
                  "-j", str(ok_id)).stdout,
            f"JobID|NNodes|\n{ok_id}|2|\n")
        self.assertEqual(
            slurm(cluster, "sacct", "-X", "-P", "-n", "--delimiter=,", "-o",
                  "JobID,NodeList,AllocTRES", "-j", str(ok_id)).stdout
            .split(",")[:2],
            [str(ok_id), "node[01-02]"])
        # Slurm's default layout.
        lines = slurm(cluster, "sacct", "-j", str(ok_id)).stdout.splitlines()
        self.assertEqual(
            lines[0], "JobID           JobName  Partition    Account  "
            "AllocCPUS      State ExitCode ")
        self.assertEqual(
            lines[1], "------------ ---------- ---------- ---------- "
            "---------- ---------- -------- ")
        self.assertRegex(lines[2], rf"^{ok_id} +stepsjob .* COMPLETED      0:0 $")
        self.assertTrue(lines[3].startswith(f"{ok_id}.batch     "), lines[3])
        # Fields: times, elapsed, nodes.
        fields = slurm(cluster, "sacct", "-X", "-n", "-P", "-o",
                       "Submit,Start,End,Elapsed,ElapsedRaw,NNodes,User",
                       "-j", str(ok_id)).stdout.strip().split("|")
        self.assertRegex(fields[0], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$")
        self.assertLessEqual(fields[0], fields[1])
        self.assertLessEqual(fields[1], fields[2])
        self.assertRegex(fields[3], r"^00:00:\d\d$")
        self.assertGreaterEqual(int(fields[4]), 2)
        self.assertEqual(fields[5:], ["2", "root"])

        # -s, -S/-E, -u and --name.
        def ids(*args, uid=None):
            return slurm(cluster, "sacct", "-X", "-n", "-P", "-o", "JobID",
                         *args, uid=uid, cwd=user_dir).stdout.split()
        # With -s, the window is an instant unless -E is given (man sacct).
        self.assertEqual(ids("-a", "-s", "F", "-S", "now-1hour", "-E", "now"),
                         [str(fail_id)])
        self.assertEqual(ids("-a", "-s", "F", "-S", "now-1hour"), [])
        self.assertEqual(ids("-a", "-s", "CA,to", "-S", "now-1hour",
                             "-E", "now"), [str(cancel_id)])
        self.assertEqual(ids("-a", "-S", "now-2hours", "-E", "now-1hour"), [])
        self.assertEqual(ids("-a", "--name", "failjob,heldjob"),
                         [str(fail_id), str(held_id)])
        self.assertEqual(ids("-u", OTHER_USER), [str(other_id)])
        everyone = ids("-a")
        self.assertEqual(len(everyone), 7, everyone)
        # A user who is no admin sees only their own, whatever they ask.
        self.assertEqual(ids("-a", uid=other.pw_uid), [str(other_id)])
        self.assertEqual(ids("-u", "root", uid=other.pw_uid), [])

        # sreport: the CPU seconds sacct says the jobs held.
        cpu_seconds = 0
        for line in slurm(cluster, "sacct", "-a", "-X", "-n", "-P", "-o",
                          "User,CPUTimeRAW").stdout.split():
            user, used = line.split("|")
            if user == "root":
                cpu_seconds += int(used)
        self.assertGreaterEqual(cpu_seconds, 2)
        report = slurm(cluster, "sreport", "-t", "seconds", "-P", "-n",
                       "cluster", "AccountUtilizationByUser",
                       "start=now-1hour", "end=now+1hour").stdout
        rows = [line.split("|") for line in report.split()]
        root_rows = [row for row in rows if row[2] == "root"]
        self.assertEqual(len(root_rows), 1, report)
        # sacct floors each job's seconds; sreport counts milliseconds.
        self.assertGreaterEqual(int(root_rows[0][4]), cpu_seconds)
        self.assertLessEqual(int(root_rows[0][4]), cpu_seconds + 7 * 4, report)
        banner = slurm(cluster, "sreport", "cluster",
                       "AccountUtilizationByUser", "start=now-1hour",
                       "end=now").stdout.splitlines()
        self.assertEqual(banner[0], "-" * 80)
        self.assertTrue(banner[1].startswith(
            "Cluster/Account/User Utilization "), banner[1])
        self.assertEqual(banner[2], "Usage reported in CPU Minutes")
        self.assertEqual(banner[4].split(),
                         ["Cluster", "Account", "Login", "Proper", "Name",
                          "Used", "Energy"])
        # -T gres/gpu: GPU time (none here), named in a column of its own.
        gpu_rows = slurm(cluster, "sreport", "-T", "gres/gpu", "-P", "-n",
                         "cluster", "AccountUtilizationByUser",
                         "start=now-1hour", "end=now+1hour").stdout.split()
        self.assertEqual(gpu_rows[0], "gantry|root|||gres/gpu|0")
        top = slurm(cluster, "sreport", "-P", "-n", "user", "TopUsage",
                    "start=now-1hour", "end=now+1hour",
                    "-t", "seconds").stdout.split()
        self.assertEqual(top[0].split("|")[1], "root", top)

        # sprio: the held job waits; sshare: root used the cluster; sdiag.
        prio = slurm(cluster, "sprio").stdout.splitlines()
        self.assertEqual(prio[0].split(), ["JOBID", "PARTITION", "USER",
                                           "PRIORITY", "AGE", "FAIRSHARE",
                                           "JOBSIZE"])
        self.assertEqual([line.split()[0] for line in prio[1:]],
                         [str(held_id)])
        self.assertEqual(slurm(cluster, "sprio", "-w", "-h").stdout.split()[0],
                         "Weights")
        share = [line.split("|") for line in
                 slurm(cluster, "sshare", "-a", "-P", "-n").stdout.split("\n")
                 if line]
        users = {row[1]: row for row in share}
        self.assertIn("root", users, share)
        self.assertGreater(int(users["root"][4]), 0)
        self.assertIn(OTHER_USER, users)
        diag = slurm(cluster, "sdiag").stdout
        self.assertIn("Jobs submitted: 7\n", diag)
        self.assertIn("Jobs completed: 4\n", diag)
        self.assertIn("Jobs canceled:  1\n", diag)
        self.assertIn("Jobs failed:    1\n", diag)
        self.assertIn("Jobs pending:   1\n", diag)

        # Bad input: the program, and what it should have been.
        result = slurm(cluster, "sacct", "--fromat=JobID", check=False)
        self.assertEqual(result.returncode, 1)
        self.assertIn("sacct: unknown option --fromat=JobID (did you mean "
                      "--format?)", result.stderr)
        result = slurm(cluster, "sacct", "-o", "JobID,Stat", check=False)
        self.assertIn("sacct: error: invalid field \"Stat\" (did you mean "
                      "Start or State?)", result.stderr)
        result = slurm(cluster, "sacct", "-S", "yesterdayish", check=False)
        self.assertIn("sacct: error: invalid time", result.stderr)
        result = slurm(cluster, "sprio", "--bogus", check=False)
        self.assertIn("sprio: unknown option --bogus", result.stderr)
        result = cluster.cli("acct", "--stat=R", check=False)
        self.assertIn("gantry acct: unknown option --stat=R (did you mean "
                      "--state?)", result.stderr)


if __name__ == "__main__":
    gantry_cluster.main()
