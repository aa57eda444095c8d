#!/usr/bin/env python3
"""`gantry cache` end to end, with real agents on loopback: a prefetch
copies a dataset into two nodes' caches (as the caller), the listing
shows each copy's size, version and last use, a job naming the dataset is
then served from the cache, `gantry status` counts the copies, an eviction
drops them; a copy a running job pins is refused with the job named; a
user sees only their own copies and cannot evict another user's; bad
input and unknown nodes are refused before anything is sent. The privacy
test needs root (it creates a user, and removes it)."""

import json
import os
import pwd
import secrets
import subprocess
import unittest

import gantry_cluster
from gantry_cluster import ClusterTestCase

MIB = 1 << 20


def make_tree(top, size):
    os.makedirs(os.path.join(top, "sub"))
    with open(os.path.join(top, "shard0.bin"), "wb") as f:
        f.write(b"a" * size)
    with open(os.path.join(top, "sub", "labels"), "w") as f:
        f.write("cat\ndog\n")
    return size + 8


class DatasetCacheCliTest(ClusterTestCase):

    def setUp(self):
        self.cluster = self.start_cluster(agents=2)
        self.shared = self.cluster.path("shared", "train")
        self.total = make_tree(self.shared, 3 * MIB)

    def listing(self, *args, uid=None):
        return json.loads(
            self.cluster.cli("cache", "list", *args, "--json",
                             uid=uid).stdout)

    def wait_copies(self, count, *args):
        """The listing once it shows `count` copies (the agents report
        their caches with their heartbeats)."""
        def shown():
            listed = self.listing(*args)
            return listed if len(listed["copies"]) == count else None
        return gantry_cluster.wait_for(shown, 10, f"{count} cached copies")

    def test_prefetch_list_job_hit_status_evict(self):
        c = self.cluster
        done = c.cli("cache", "prefetch", f"train:{self.shared}",
                     "--nodes=node[01-02]")
        lines = done.stdout.splitlines()
        self.assertEqual(len(lines), 2, done.stdout)
        for node, line in zip(("node01", "node02"), lines):
            self.assertTrue(line.startswith(f"{node}: copied 3.0 MiB"), line)
        again = c.cli("cache", "prefetch", f"train:{self.shared}",
                      "--nodes=node01,node02", "--json")
        results = json.loads(again.stdout)["results"]
        self.assertEqual([r["node"] for r in results], ["node01", "node02"])
        self.assertTrue(all(r["ok"] and r["hit"] and r["bytes_copied"] == 0
                            for r in results), results)

        listed = self.wait_copies(2)
        copies = listed["copies"]
        self.assertEqual([x["node"] for x in copies], ["node01", "node02"])
        for copy in copies:
            self.assertEqual(copy["dataset"], "train")
            self.assertEqual(copy["bytes"], self.total)
            self.assertEqual(copy["source"], self.shared)
            self.assertEqual(copy["user"], pwd.getpwuid(os.getuid()).pw_name)
            self.assertGreater(copy["last_use_ms"], 0)
            self.assertEqual(copy["version"], results[0]["version"])
        for node in listed["nodes"]:
            self.assertTrue(node["reported"] and node["connected"], node)
            self.assertGreaterEqual(node["used_bytes"], self.total)
        text = c.cli("cache").stdout
        self.assertRegex(text, r"NODE +USER +DATASET +VERSION +SIZE +LAST_USE"
                               r" +PINNED +SOURCE")
        self.assertIn(copies[0]["version"][:12], text)
        self.assertRegex(text, r"node01 .*train .*3\.0 MiB +\d+s ago +- +"
                               + self.shared)
        only = self.listing("--nodes=node02", "--dataset=train")
        self.assertEqual([x["node"] for x in only["copies"]], ["node02"])

        status = c.cli_json("status")["dataset_cache"]
        self.assertEqual(status["nodes_reporting"], 2)
        self.assertEqual(status["copies"], 2)
        self.assertEqual(status["datasets"], 1)
        self.assertIn("Cache", c.cli("status").stdout)

        # A 2-node job naming the dataset: every byte from the caches.
        script = c.write_script("true.sh", "#!/bin/bash\ntrue\n")
        job_id = c.submit(script, "-N", "2", f"--dataset=train:{self.shared}")
        c.wait_job(job_id, "COMPLETED", timeout=60)
        staging = c.job(job_id)["dataset_staging"]
        self.assertEqual(len(staging), 2, staging)
        self.assertTrue(all(e["hit"] and e["bytes_copied"] == 0
                            for e in staging), staging)

        evicted = c.cli("cache", "evict", "train")
        self.assertEqual(evicted.stdout,
                         "node01: evicted\nnode02: evicted\n")
        self.wait_copies(0)
        gone = c.cli("cache", "evict", "train", check=False)
        self.assertEqual(gone.returncode, 1)
        self.assertIn("no node's cache holds dataset train", gone.stderr)

    def test_a_copy_a_running_job_uses_is_not_evicted(self):
        c = self.cluster
        marker = c.path("running")
        script = c.write_script(
            "hold.sh", f"#!/bin/bash\ntouch {marker}\nsleep 60\n")
        job_id = c.submit(script, "--nodelist=node01",
                          f"--dataset=train:{self.shared}")
        c.wait_files([marker], timeout=60)
        refused = c.cli("cache", "evict", "train", "--nodes=node01",
                        check=False)
        self.assertEqual(refused.returncode, 1, refused.stdout)
        self.assertRegex(refused.stdout, rf"node01: failed: .*\b{job_id}\b")
        self.assertEqual(len(self.listing()["copies"]), 1)
        c.cli("cancel", str(job_id))
        c.wait_job(job_id, "CANCELLED", timeout=30)

    def test_bad_input_and_unknown_nodes_change_nothing(self):
        c = self.cluster
        for args, message in (
                (("prefetch", f"bad-name:{self.shared}", "--nodes=node01"),
                 "letters, digits and underscores"),
                (("prefetch", "train", "--nodes=node01"), "NAME:PATH"),
                (("prefetch", "train:/shared/../etc", "--nodes=node01"),
                 "normal form"),
                (("prefetch", f"train:{self.shared}"), "--nodes"),
                (("prefetch", f"train:{self.shared}", "--nodes=node[01-"),
                 "invalid node list"),
                (("prefetch", f"train:{self.shared}", "--nodes=node[01-09]"),
                 "unknown nodes node[03-09]"),
                (("evict", "train", "--nodes=nodeX"), "unknown node nodeX"),
                (("evict", "a/b"), "letters, digits and underscores"),
                (("list", "--user=no-such-user-here"), "no user named"),
                (("list", "--dataset=x y"), "--dataset")):
            result = c.cli("cache", *args, check=False)
            self.assertNotEqual(result.returncode, 0, args)
            self.assertIn(message, result.stderr, args)
            self.assertTrue(result.stderr.startswith("gantry cache: error:")
                            or "--nodes is required" in result.stderr,
                            result.stderr)
        self.assertEqual(self.listing()["copies"], [])
        for name in c.agents:
            self.assertNotIn("dataset staged", c.agents[name].log_text())

    def test_node_without_agent_fails_at_once(self):
        c = self.cluster
        c.kill_agent("node02")
        c.wait_nodes(["node02"], "UNREACHABLE", timeout=20)
        result = c.cli("cache", "prefetch", f"train:{self.shared}",
                       "--nodes=node[01-02]", "--timeout=30", check=False)
        self.assertEqual(result.returncode, 1)
        self.assertIn("node01: copied", result.stdout)
        self.assertIn("node02: failed: node node02 has no connected agent",
                      result.stdout)
        nodes = {n["node"]: n for n in self.listing()["nodes"]}
        self.assertFalse(nodes["node02"]["connected"])


@unittest.skipUnless(os.geteuid() == 0, "needs root to create a user")
class DatasetCachePrivacyTest(ClusterTestCase):
    """A user sees their own copies and every node's totals, never another
    user's names or paths, and cannot evict another user's copy; an admin
    sees all and may narrow to one user."""

    @classmethod
    def setUpClass(cls):
        cls.user = f"gtcache{secrets.token_hex(3)}"
        subprocess.run(["useradd", "-M", "-U", "-s", "/bin/sh", cls.user],
                       check=True, capture_output=True)
        cls.addClassCleanup(subprocess.run, ["userdel", cls.user],
                            capture_output=True)
        cls.entry = pwd.getpwnam(cls.user)

    def test_users_see_and_evict_only_their_own(self):
        c = self.cluster = self.start_cluster(agents=2)
        os.chmod(c.dir, 0o755)
        secret = c.path("shared", "rootsecret")
        make_tree(secret, MIB)
        home = c.path("home")
        os.makedirs(home)
        os.chown(home, self.entry.pw_uid, self.entry.pw_gid)
        mine = os.path.join(home, "mine")
        make_tree(mine, MIB)
        for root, dirs, files in os.walk(home):
            for name in dirs + files:
                os.chown(os.path.join(root, name), self.entry.pw_uid,
                         self.entry.pw_gid)
        uid = self.entry.pw_uid
        c.cli("cache", "prefetch", f"rootsecret:{secret}", "--nodes=node01")
        c.cli("cache", "prefetch", f"mine:{mine}", "--nodes=node01", uid=uid)

        def both():
            listed = json.loads(
                c.cli("cache", "--json").stdout)
            return listed if len(listed["copies"]) == 2 else None
        gantry_cluster.wait_for(both, 10, "both users' copies")

        theirs = json.loads(
            c.cli("cache", "--json", uid=uid).stdout)
        self.assertEqual([x["dataset"] for x in theirs["copies"]], ["mine"])
        self.assertEqual(theirs["copies"][0]["user"], self.user)
        node01 = [n for n in theirs["nodes"] if n["node"] == "node01"][0]
        self.assertEqual(node01["copies"], 2)  # the totals count root's too
        text = c.cli("cache", uid=uid).stdout
        self.assertNotIn("rootsecret", text)
        self.assertNotIn(secret, text)

        refused = c.cli("cache", "list", "--user=root", uid=uid, check=False)
        self.assertEqual(refused.returncode, 1)
        self.assertIn("only an admin", refused.stderr)
        refused = c.cli("cache", "evict", "rootsecret", "--user=root",
                        uid=uid, check=False)
        self.assertEqual(refused.returncode, 1)
        self.assertIn("only an admin", refused.stderr)
        # Their own eviction of that name finds nothing of theirs.
        refused = c.cli("cache", "evict", "rootsecret", uid=uid, check=False)
        self.assertEqual(refused.returncode, 1)
        self.assertIn("no node's cache holds dataset rootsecret of yours",
                      refused.stderr)

        # The admin sees both, or one user's, and may evict theirs.
        one = json.loads(
            c.cli("cache", f"--user={self.user}", "--json").stdout)
        self.assertEqual([x["dataset"] for x in one["copies"]], ["mine"])
        self.assertEqual(
            c.cli("cache", "evict", "mine", f"--user={self.user}").stdout,
            "node01: evicted\n")

        def only_root():
            listed = json.loads(
                c.cli("cache", "--json").stdout)
            names = [x["dataset"] for x in listed["copies"]]
            return names if names == ["rootsecret"] else None
        gantry_cluster.wait_for(only_root, 10, "the user's copy gone")


if __name__ == "__main__":
    gantry_cluster.main()
