#!/usr/bin/env python3
"""`gantry cache` end to end, with real agents on loopback: a prefetch
copies a dataset into two nodes' caches as the user who asks, the listing
shows each copy's size, version and last use, a job naming the dataset is
then served from the cache, `gantry status` counts the copies, an eviction
drops them; a copy a running job pins is refused with the job named; a
node without an agent fails at once, one that does not answer within
--timeout is named (and gantryd serves others meanwhile); a user sees only their own copies
and cannot evict another user's, an admin sees all; bad input and unknown
nodes are refused before anything is sent. The nodes copy no dataset as
root, so the tests create a user (needs root) and remove it."""

import json
import os
import pwd
import secrets
import signal
import subprocess
import threading
import time
import unittest

import gantry_cluster
from gantry_cluster import ClusterTestCase

MIB = 1 << 20


def make_tree(top, size, owner=None):
    """A dataset of one `size`-byte file and a small one; returns its
    bytes. `owner`: a pwd entry to give the whole tree to."""
    os.makedirs(os.path.join(top, "sub"))
    with open(os.path.join(top, "shard0.bin"), "wb") as f:
        f.write(b"a" * size)
    with open(os.path.join(top, "sub", "labels"), "w") as f:
        f.write("cat\ndog\n")
    if owner is not None:
        for root, dirs, files in os.walk(top):
            for name in [root] + [os.path.join(root, n) for n in dirs + files]:
                os.chown(name, owner.pw_uid, owner.pw_gid)
    return size + 8


@unittest.skipUnless(os.geteuid() == 0,
                     "needs root to create a user (the nodes copy no "
                     "dataset as root)")
class CacheCase(ClusterTestCase):
    """A cluster of two nodes and a user owning a 3 MiB dataset."""

    @classmethod
    def setUpClass(cls):
        cls.user = f"gtcache{secrets.token_hex(3)}"
        subprocess.run(["useradd", "-M", "-U", "-s", "/bin/sh", cls.user],
                       check=True, capture_output=True)
        cls.addClassCleanup(subprocess.run, ["userdel", cls.user],
                            capture_output=True)
        cls.entry = pwd.getpwnam(cls.user)
        cls.uid = cls.entry.pw_uid

    def setUp(self):
        c = self.cluster = self.start_cluster(agents=2)
        os.chmod(c.dir, 0o755)  # the user reaches the socket and the tree
        self.home = c.path("home")
        os.makedirs(self.home)
        os.chown(self.home, self.uid, self.entry.pw_gid)
        self.shared = os.path.join(self.home, "train")
        self.total = make_tree(self.shared, 3 * MIB, self.entry)

    def as_user(self, *args, check=True):
        return self.cluster.cli(*args, check=check, cwd=self.home,
                                uid=self.uid)

    def listing(self, *args, uid=None):
        return json.loads(self.cluster.cli("cache", "list", *args, "--json",
                                           uid=uid).stdout)

    def wait_copies(self, count, *args, uid=None):
        """The listing once it shows `count` copies (the agents report
        their caches with their heartbeats)."""
        def shown():
            listed = self.listing(*args, uid=uid)
            return listed if len(listed["copies"]) == count else None
        return gantry_cluster.wait_for(shown, 10, f"{count} cached copies")


class DatasetCacheCliTest(CacheCase):

    def test_prefetch_list_job_hit_status_evict(self):
        c = self.cluster
        done = self.as_user("cache", "prefetch", f"train:{self.shared}",
                            "--nodes=node[01-02]")
        lines = done.stdout.splitlines()
        self.assertEqual(len(lines), 2, done.stdout)
        for node, line in zip(("node01", "node02"), lines):
            self.assertTrue(line.startswith(f"{node}: copied 3.0 MiB"), line)
        again = self.as_user("cache", "prefetch", f"train:{self.shared}",
                             "--nodes=node01,node02", "--json")
        results = json.loads(again.stdout)["results"]
        self.assertEqual([r["node"] for r in results], ["node01", "node02"])
        self.assertTrue(all(r["ok"] and r["hit"] and r["bytes_copied"] == 0
                            for r in results), results)

        listed = self.wait_copies(2, uid=self.uid)
        copies = listed["copies"]
        self.assertEqual([x["node"] for x in copies], ["node01", "node02"])
        for copy in copies:
            self.assertEqual(copy["dataset"], "train")
            self.assertEqual(copy["bytes"], self.total)
            self.assertEqual(copy["source"], self.shared)
            self.assertEqual(copy["user"], self.user)
            self.assertGreater(copy["last_use_ms"], 0)
            self.assertEqual(copy["version"], results[0]["version"])
            self.assertEqual(copy["pinned_by_jobs"], [])
        for node in listed["nodes"]:
            self.assertTrue(node["reported"] and node["connected"], node)
            self.assertGreater(node["capacity_bytes"], 0, node)
            self.assertGreaterEqual(node["used_bytes"], self.total)
        text = self.as_user("cache").stdout
        self.assertRegex(text, r"NODE +USER +DATASET +VERSION +SIZE +LAST_USE"
                               r" +PINNED +SOURCE")
        self.assertIn(copies[0]["version"][:12], text)
        self.assertRegex(text, rf"node01 +{self.user} +train .*3\.0 MiB +"
                               rf"\d+s ago +- +{self.shared}")
        self.assertRegex(text, r"node02 +3\.0 MiB of [\d.]+ GiB")
        only = self.listing("--nodes=node02", "--dataset=train")
        self.assertEqual([x["node"] for x in only["copies"]], ["node02"])

        status = c.cli_json("status")["dataset_cache"]
        self.assertEqual(status["nodes_reporting"], 2)
        self.assertEqual(status["copies"], 2)
        self.assertEqual(status["datasets"], 1)
        self.assertEqual(status["pinned_copies"], 0)
        self.assertRegex(c.cli("status").stdout,
                         r"Cache +6\.0 MiB of .* on 2 nodes, 1 dataset "
                         r"\(2 copies, 0 pinned by jobs\)")

        # A 2-node job naming the dataset: every byte from the caches.
        script = c.write_script("true.sh", "#!/bin/bash\ntrue\n",
                                directory=self.home)
        job_id = c.submit(script, "-N", "2", f"--dataset=train:{self.shared}",
                          cwd=self.home, uid=self.uid)
        c.wait_job(job_id, "COMPLETED", timeout=60)
        staging = c.job(job_id)["dataset_staging"]
        self.assertEqual(len(staging), 2, staging)
        self.assertTrue(all(e["hit"] and e["bytes_copied"] == 0
                            for e in staging), staging)

        evicted = self.as_user("cache", "evict", "train")
        self.assertEqual(evicted.stdout,
                         "node01: evicted\nnode02: evicted\n")
        self.wait_copies(0)
        gone = self.as_user("cache", "evict", "train", check=False)
        self.assertEqual(gone.returncode, 1)
        self.assertIn("no node's cache holds dataset train of yours",
                      gone.stderr)

    def test_a_copy_a_running_job_uses_is_not_evicted(self):
        c = self.cluster
        marker = os.path.join(self.home, "running")
        script = c.write_script(
            "hold.sh", f"#!/bin/bash\necho up > {marker}\nsleep 60\n",
            directory=self.home)
        job_id = c.submit(script, "--nodelist=node01",
                          f"--dataset=train:{self.shared}", cwd=self.home,
                          uid=self.uid)
        gantry_cluster.wait_for(lambda: os.path.exists(marker), 60,
                                "the job to run")
        refused = self.as_user("cache", "evict", "train", "--nodes=node01",
                               check=False)
        self.assertEqual(refused.returncode, 1, refused.stdout)
        self.assertRegex(refused.stdout,
                         rf"^node01: failed: .*in use by job {job_id}\b")
        listed = self.wait_copies(1)
        self.assertEqual(listed["copies"][0]["pinned_by_jobs"], [job_id])
        self.assertEqual(c.cli_json("status")["dataset_cache"]
                         ["pinned_copies"], 1)
        c.cli("cancel", str(job_id))
        c.wait_job(job_id, "CANCELLED", timeout=30)

    def test_bad_input_and_unknown_nodes_change_nothing(self):
        c = self.cluster
        for args, message in (
                (("prefetch", f"bad-name:{self.shared}", "--nodes=node01"),
                 "letters, digits and underscores"),
                (("prefetch", "train", "--nodes=node01"), "NAME:PATH"),
                (("prefetch", "train:/", "--nodes=node01"), "not / itself"),
                (("prefetch", f"train:{self.home}/missing",
                  "--nodes=node01"), "does not exist"),
                (("prefetch", f"train:{self.shared}"), "--nodes"),
                (("prefetch", f"train:{self.shared}", "--nodes=node[01-"),
                 "invalid node list"),
                (("prefetch", f"train:{self.shared}", "--nodes=node[01-09]"),
                 "unknown nodes node[03-09]"),
                (("prefetch", f"train:{self.shared}", "--nodes=node01",
                  "--timeout=0"), "--timeout"),
                (("evict", "train", "--nodes=nodeX"), "unknown node nodeX"),
                (("evict", "a/b"), "letters, digits and underscores"),
                (("list", "--user=no-such-user-here"), "no user named"),
                (("list", "--dataset=x y"), "--dataset")):
            result = self.as_user("cache", *args, check=False)
            self.assertNotEqual(result.returncode, 0, args)
            self.assertIn(message, result.stderr, args)
            self.assertNotIn("Traceback", result.stderr)
        # Root's own prefetch: refused once, with what to do.
        result = c.cli("cache", "prefetch", f"train:{self.shared}",
                       "--nodes=node01", check=False)
        self.assertEqual(result.returncode, 1)
        self.assertIn("gantry cache: error: a prefetch copies the dataset as "
                      "you", result.stderr)
        self.assertEqual(self.listing()["copies"], [])
        for name in c.agents:
            self.assertNotIn("dataset staged", c.agents[name].log_text())

    def test_hostile_requests_are_refused_whole(self):
        """Requests no CLI would send, straight to gantryd: each refused as
        INVALID_ARGUMENT naming the field, nothing sent to any node."""
        c = self.cluster
        tool = os.path.join(gantry_cluster.build_dir(), "tests", "tools",
                            "gantry-raw-request")
        if not os.access(tool, os.X_OK):
            self.skipTest(f"{tool} is not built")

        def raw(method, text):
            result = subprocess.run(
                [tool, f"127.0.0.1:{c.port}", method], input=text.encode(),
                capture_output=True, env=c.env, timeout=30)
            self.assertNotEqual(result.returncode, 2, result.stderr)
            return result.stdout.decode(errors="replace")

        def prefetch(path='"/shared/train"', name='"train"',
                     nodes='nodes: "node01"', wait=60):
            return (f"dataset {{ name: {name} path: {path} }} {nodes} "
                    f"wait_seconds: {wait}")
        many = " ".join(['nodes: "node01"'] * 70000)
        for method, text, says in (
                ("PrefetchDataset", prefetch(path='"/shared/\\033[2J"'),
                 "control"),
                ("PrefetchDataset", prefetch(path='"shared/train"'),
                 "absolute"),
                ("PrefetchDataset", prefetch(path='"/shared/../etc"'),
                 "normal form"),
                ("PrefetchDataset", prefetch(name='"1bad"'), "name"),
                ("PrefetchDataset", prefetch(nodes=""), "--nodes"),
                ("PrefetchDataset", prefetch(nodes='nodes: "node\\n01"'),
                 "not a node name"),
                ("PrefetchDataset", prefetch(nodes=many), "limit"),
                ("PrefetchDataset", prefetch(wait=4294967295),
                 "wait_seconds"),
                ("EvictDataset", 'name: ""', "name"),
                ("EvictDataset", 'name: "train" nodes: "../etc"',
                 "not a node name"),
                ("ListDatasetCache", 'dataset: "a b"', "dataset"),
                ("ListDatasetCache", 'user: "a\\nb"', "user")):
            out = raw(method, text)
            self.assertTrue(out.startswith("3: "), (method, text[:80], out))
            self.assertIn(says, out, (method, text[:80]))
        # Well formed: refused only for what it asks (root copies nothing).
        self.assertTrue(raw("PrefetchDataset", prefetch()).startswith("7: "))
        self.assertEqual(self.listing()["copies"], [])
        for name in c.agents:
            self.assertNotIn("prefetch", c.agents[name].log_text())

    def test_node_without_agent_fails_at_once(self):
        c = self.cluster
        c.kill_agent("node02")

        def cut_off():
            nodes = {n["node"]: n for n in self.listing()["nodes"]}
            return not nodes["node02"]["connected"]
        gantry_cluster.wait_for(cut_off, 20, "node02's stream to end")
        result = self.as_user("cache", "prefetch", f"train:{self.shared}",
                              "--nodes=node[01-02]", "--timeout=30",
                              check=False)
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stdout.splitlines()[1],
                         "node02: failed: node node02 has no connected agent")
        self.assertTrue(result.stdout.startswith("node01: copied"),
                        result.stdout)

    def test_a_node_that_does_not_answer_in_time_is_named(self):
        c = self.cluster
        c.signal_agent("node02", signal.SIGSTOP)  # connected, silent
        outcome = {}

        def prefetch():
            outcome["result"] = self.as_user(
                "cache", "prefetch", f"train:{self.shared}",
                "--nodes=node[01-02]", "--timeout=3", check=False)
        waiting = threading.Thread(target=prefetch)
        try:
            started = time.monotonic()
            waiting.start()
            # gantryd's loop serves others while the call waits.
            time.sleep(1)
            asked = time.monotonic()
            c.cli("cache", "list")
            self.assertLess(time.monotonic() - asked, 1.5)
            self.assertTrue(waiting.is_alive(), "answered before its wait")
            waiting.join(30)
            waited = time.monotonic() - started
        finally:
            c.signal_agent("node02", signal.SIGCONT)
        result = outcome["result"]
        self.assertEqual(result.returncode, 1, result.stdout)
        lines = result.stdout.splitlines()
        self.assertTrue(lines[0].startswith("node01: copied"), lines)
        self.assertEqual(lines[1], "node02: no answer within 3 s (the node "
                                   "carries on; gantry cache list shows when "
                                   "it is done)")
        self.assertLess(waited, 10)
        # The late answer still lands: the copy shows once node02 resumes.
        self.wait_copies(2)


class DatasetCachePrivacyTest(CacheCase):
    """A user sees their own copies and every node's totals, never another
    user's names or paths, and cannot evict another user's copy; an admin
    sees all and may narrow to one user or evict theirs."""

    def test_users_see_and_evict_only_their_own(self):
        c = self.cluster
        other = pwd.getpwnam("nobody")
        secret_home = c.path("nobody")
        os.makedirs(secret_home)
        os.chown(secret_home, other.pw_uid, other.pw_gid)
        secret = os.path.join(secret_home, "secretset")
        make_tree(secret, MIB, other)
        c.cli("cache", "prefetch", f"secretset:{secret}", "--nodes=node01",
              cwd=secret_home, uid=other.pw_uid)
        self.as_user("cache", "prefetch", f"mine:{self.shared}",
                     "--nodes=node01")
        self.wait_copies(2)  # root, an admin, sees both

        theirs = self.listing(uid=self.uid)
        self.assertEqual([x["dataset"] for x in theirs["copies"]], ["mine"])
        self.assertEqual(theirs["copies"][0]["user"], self.user)
        node01 = [n for n in theirs["nodes"] if n["node"] == "node01"][0]
        self.assertEqual(node01["copies"], 2)  # the totals count nobody's
        text = self.as_user("cache").stdout
        self.assertNotIn("secretset", text)
        self.assertNotIn(secret, text)

        refused = self.as_user("cache", "list", "--user=nobody", check=False)
        self.assertEqual(refused.returncode, 1)
        self.assertIn("only an admin", refused.stderr)
        refused = self.as_user("cache", "evict", "secretset", "--user=nobody",
                               check=False)
        self.assertEqual(refused.returncode, 1)
        self.assertIn("only an admin", refused.stderr)
        # Their own eviction of that name finds nothing of theirs.
        refused = self.as_user("cache", "evict", "secretset", check=False)
        self.assertEqual(refused.returncode, 1)
        self.assertIn("no node's cache holds dataset secretset of yours",
                      refused.stderr)

        # The admin sees one user's with --user, and may evict theirs.
        one = self.listing(f"--user={self.user}")
        self.assertEqual([x["dataset"] for x in one["copies"]], ["mine"])
        self.assertEqual(
            c.cli("cache", "evict", "secretset", "--user=nobody").stdout,
            "node01: evicted\n")
        listed = self.wait_copies(1)
        self.assertEqual(listed["copies"][0]["dataset"], "mine")


if __name__ == "__main__":
    gantry_cluster.main()
