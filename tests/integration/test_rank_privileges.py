#!/usr/bin/env python3
"""Ranks run as the submitting user with nothing of root left: uid, gid and
the user's supplementary groups (from the node's user database) are set,
every way back to root fails (checked by the rank itself), no capability
and no_new_privs, no descriptor of the agent's, and an environment built
from the job's request (HOME the submitter's, as Slurm's --export=ALL)
with USER/LOGNAME/SHELL of the user, never the agent's own variables. A
user the node does not know fails the job with a clear reason and starts
none of its ranks, and nothing else is lost.

Needs root: it creates (and removes) a throwaway user and group."""

import os
import pwd
import grp
import secrets
import subprocess
import unittest

import gantry_cluster
from gantry_cluster import WAIT_FOR_FILE, ClusterTestCase, GantryCluster

# Set in the agents' environment only: no rank may see them.
AGENT_ONLY = {"GANTRY_IT_AGENT_ONLY": "agent-secret",
              "LD_LIBRARY_PATH": "/nonexistent/agent-only/lib"}

# Writes what the rank is (id), what it could regain (each attempt's errno,
# or SUCCEEDED), its privileges, descriptors and environment, into files
# in its working directory.
PROBE_SCRIPT = r"""#!/bin/bash
echo "uid=$(id -u) gid=$(id -g) groups=$(id -G)" > identity.txt
# No pipeline: bash holds a pipe's end while the left side runs.
ls /proc/$$/fd > fds.txt
grep -E '^(CapInh|CapPrm|CapEff|CapAmb|NoNewPrivs):' /proc/self/status > status.txt
env > env.txt
python3 - > regain.txt <<'PYTHON'
import os
attempts = {
    "setuid(0)": lambda: os.setuid(0),
    "seteuid(0)": lambda: os.seteuid(0),
    "setresuid(0,0,0)": lambda: os.setresuid(0, 0, 0),
    "setgid(0)": lambda: os.setgid(0),
    "setresgid(0,0,0)": lambda: os.setresgid(0, 0, 0),
    "setgroups([0])": lambda: os.setgroups([0]),
}
for name, attempt in attempts.items():
    try:
        attempt()
        print(name, "SUCCEEDED", os.getresuid(), os.getresgid())
    except OSError as error:
        print(name, "failed", error.errno)
PYTHON
"""


def run(*argv):
    subprocess.run(argv, check=True, capture_output=True, text=True)


@unittest.skipUnless(os.geteuid() == 0, "needs root to create users")
class RankPrivilegesTest(ClusterTestCase):

    def setUp(self):
        suffix = secrets.token_hex(4)
        self.user = f"gtrank{suffix}"
        self.extra_group = f"gtgrp{suffix}"
        run("groupadd", self.extra_group)
        self.addCleanup(subprocess.run, ["groupdel", self.extra_group],
                        capture_output=True)
        run("useradd", "-M", "-U", "-s", "/bin/sh", "-G", self.extra_group,
            self.user)
        # userdel also removes the user's own group.
        self.addCleanup(subprocess.run, ["userdel", self.user],
                        capture_output=True)
        self.entry = pwd.getpwnam(self.user)
        self.extra_gid = grp.getgrnam(self.extra_group).gr_gid

    def start_cluster_with_agent_environment(self):
        """A one-node cluster whose agent (only) has AGENT_ONLY set."""
        cluster = GantryCluster(label=self.id(), agents=1)
        self._clusters.append(cluster)
        self.addCleanup(cluster.stop_processes)
        cluster.env.update(AGENT_ONLY)
        cluster.start()
        for key in AGENT_ONLY:
            cluster.env.pop(key)
        # The user reaches the socket and writes in its own directory.
        os.chmod(cluster.dir, 0o755)
        return cluster

    def user_dir(self, cluster):
        path = cluster.path(f"user-{self.user}")
        os.makedirs(path)
        os.chown(path, self.entry.pw_uid, self.entry.pw_gid)
        return path

    def read(self, directory, name):
        with open(os.path.join(directory, name)) as f:
            return f.read()

    def test_rank_is_the_user_and_cannot_regain_root(self):
        cluster = self.start_cluster_with_agent_environment()
        home = self.user_dir(cluster)
        script = cluster.write_script("probe.sh", PROBE_SCRIPT, directory=home)
        job_id = cluster.submit(script, cwd=home, uid=self.entry.pw_uid)
        job = cluster.wait_job(job_id, "COMPLETED")
        self.assertEqual(job["user"], self.user)

        uid, gid = self.entry.pw_uid, self.entry.pw_gid
        identity = self.read(home, "identity.txt").split()
        self.assertEqual(identity[0], f"uid={uid}")
        self.assertEqual(identity[1], f"gid={gid}")
        groups = {int(g) for g in identity[2].removeprefix("groups=").split()
                  + identity[3:]}
        self.assertEqual(groups, {gid, self.extra_gid},
                         "the user's groups from the node's database, "
                         "none of root's")

        regain = self.read(home, "regain.txt").splitlines()
        self.assertEqual(len(regain), 6, regain)
        for line in regain:
            self.assertIn(" failed ", line, f"a rank regained privilege: {line}")

        status = dict(line.split(":\t") for line in
                      self.read(home, "status.txt").splitlines())
        self.assertEqual(status["NoNewPrivs"], "1")
        for capabilities in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
            self.assertEqual(int(status[capabilities], 16), 0,
                             f"{capabilities} {status[capabilities]}")

        # 255: bash's own descriptor for the script it reads.
        fds = {int(fd) for fd in self.read(home, "fds.txt").split()}
        self.assertLessEqual(fds, {0, 1, 2, 255},
                             "descriptors inherited from the agent")

        env = dict(line.split("=", 1) for line in
                   self.read(home, "env.txt").splitlines() if "=" in line)
        # HOME as the submitter's environment had it (Slurm's --export=ALL):
        # the rank runs as the user, so it only affects the user's own files.
        self.assertEqual(env["HOME"], cluster.env.get("HOME", self.entry.pw_dir))
        self.assertEqual(env["USER"], self.user)
        self.assertEqual(env["LOGNAME"], self.user)
        self.assertEqual(env["SHELL"], "/bin/sh")
        self.assertNotIn("GANTRY_IT_AGENT_ONLY", env)
        self.assertNotEqual(env.get("LD_LIBRARY_PATH"),
                            AGENT_ONLY["LD_LIBRARY_PATH"])
        # The submitter's exported environment does arrive.
        self.assertEqual(env[gantry_cluster.MARKER_VARIABLE], cluster.dir)
        self.assertEqual(env["SLURM_JOB_ID"], str(job_id))

        output = os.path.join(home, f"gantry-{job_id}.out")
        self.assertEqual(os.stat(output).st_uid, uid)

    def test_user_unknown_on_the_node_fails_the_job_and_starts_nothing(self):
        cluster = self.start_cluster_with_agent_environment()
        home = self.user_dir(cluster)
        # Hold every CPU so that the user's job waits in the queue while
        # the user is removed from the node.
        cpus = cluster.nodes()["node01"]["cpus"]
        blocker_script = cluster.write_script(
            "blocker.sh", "#!/bin/bash\n" + WAIT_FOR_FILE + "wait_for_file release\n")
        blocker = cluster.submit(blocker_script, f"--ntasks-per-node={cpus}")
        cluster.wait_job(blocker, "RUNNING")
        script = cluster.write_script(
            "ranks.sh", "#!/bin/bash\ntouch started.$SLURM_PROCID\n",
            directory=home)
        job_id = cluster.submit(script, "--ntasks=2", "--max-restarts=0",
                                cwd=home, uid=self.entry.pw_uid)
        cluster.wait_job(job_id, "PENDING")
        uid = self.entry.pw_uid
        run("userdel", self.user)

        cluster.touch("release")
        cluster.wait_job(blocker, "COMPLETED")
        job = cluster.wait_job(job_id, "FAILED")
        self.assertIn(f"user {self.user} (uid {uid}) does not exist on node node01",
                      job["reason_detail"])
        self.assertEqual([n for n in os.listdir(home) if n.startswith("started.")],
                         [], "no rank of the job started")
        self.assertFalse(os.path.exists(os.path.join(home, f"gantry-{job_id}.out")))
        # Nothing else is lost: the node is up, not drained, and runs the
        # next job.
        node = cluster.nodes()["node01"]
        self.assertEqual(node["state"], "up")
        self.assertFalse(node["drained"], node.get("drain_reason"))
        after = cluster.submit(cluster.write_script(
            "after.sh", "#!/bin/bash\ntouch after.$SLURM_JOB_ID\n"))
        cluster.wait_job(after, "COMPLETED")
        self.assertTrue(os.path.exists(cluster.path(f"after.{after}")))
        self.assertFalse(os.listdir(os.path.join(
            cluster.dir, "agents", "node01", "ranks")), "no rank records left")


if __name__ == "__main__":
    gantry_cluster.main()
