#!/usr/bin/env python3
"""Datasets staged into each node's cache before a job's ranks start
(--dataset=NAME:PATH): a 2-node job reads its dataset from
GANTRY_DATASET_<NAME>, a rerun is served from the cache (bytes copied and
bytes served are read from the agents' "dataset staged" log lines), a
changed file is staged again, and a file the job's user cannot read is a
clear job error naming the node and the file. Placement: the next job
reading a dataset lands on the node whose cache holds its user's copy, and
another user's job is neither steered by nor served from it. Needs root
for the tests that submit as another user."""

import hashlib
import os
import pwd
import re
import shutil
import time
import unittest
import urllib.request

import gantry_cluster
from gantry_cluster import ClusterTestCase

OTHER_USER = "nobody"
MIB = 1 << 20

READER = """#!/bin/bash
# Each rank: where its copy is, and the copy's digest.
out="$1/rank-$SLURM_PROCID"
{ echo "$GANTRY_DATASET_train"
  cat "$GANTRY_DATASET_train"/shard*.bin "$GANTRY_DATASET_train"/sub/labels \
    | sha256sum | cut -d' ' -f1
  # The original path stays valid.
  cat "$2"/shard*.bin "$2"/sub/labels | sha256sum | cut -d' ' -f1
} > "$out.tmp" && mv "$out.tmp" "$out"
"""


def tree_digest(top):
    digest = hashlib.sha256()
    names = sorted(n for n in os.listdir(top) if n.startswith("shard"))
    for name in names + ["sub/labels"]:
        with open(os.path.join(top, name), "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


class DatasetCacheTest(ClusterTestCase):

    def setUp(self):
        self.cluster = self.start_cluster(agents=2)
        self.shared = self.cluster.path("shared", "train")
        os.makedirs(os.path.join(self.shared, "sub"))
        for i in range(3):
            with open(os.path.join(self.shared, f"shard{i}.bin"), "wb") as f:
                f.write(bytes([65 + i]) * MIB)
        with open(os.path.join(self.shared, "sub", "labels"), "w") as f:
            f.write("cat\ndog\n")
        self.total = 3 * MIB + 8
        self.script = self.cluster.write_script("reader.sh", READER)

    def staged_lines(self):
        """Every "dataset staged" log line of every agent, as dicts, oldest
        first."""
        lines = []
        for name in sorted(self.cluster.agents):
            for line in self.cluster.agents[name].log_text().splitlines():
                if "dataset staged" in line:
                    fields = dict(re.findall(r'(\w+)=("[^"]*"|\S+)', line))
                    fields["node"] = name
                    lines.append(fields)
        # In time order, so a slice is one run's lines.
        return sorted(lines, key=lambda fields: fields["ts"])

    def run_job(self, out_dir, name="train"):
        os.makedirs(self.cluster.path(out_dir), exist_ok=True)
        job_id = self.cluster.submit(
            self.script, "-N", "2", f"--dataset={name}:{self.shared}",
            args=(self.cluster.path(out_dir), self.shared))
        self.cluster.wait_job(job_id, "COMPLETED", timeout=60)
        ranks = {}
        for rank in (0, 1):
            with open(self.cluster.path(out_dir, f"rank-{rank}")) as f:
                ranks[rank] = f.read().split()
        return job_id, ranks

    def test_stage_reuse_and_change(self):
        expected = tree_digest(self.shared)
        job_id, ranks = self.run_job("first")
        paths = {ranks[r][0] for r in ranks}
        self.assertEqual(len(paths), 2, "each node has its own copy")
        for rank, (path, copy_digest, original_digest) in ranks.items():
            self.assertTrue(path.endswith("/data"), path)
            self.assertNotEqual(path, self.shared)
            self.assertEqual(copy_digest, expected, f"rank {rank}'s copy")
            self.assertEqual(original_digest, expected)
        first = self.staged_lines()
        self.assertEqual(len(first), 2, first)
        for line in first:
            self.assertEqual(line["hit"], "no")
            self.assertEqual(int(line["copied"]), self.total)
        shown = self.cluster.cli("job", str(job_id)).stdout
        self.assertIn("Dataset=train:" + self.shared, shown)
        # Bytes staged per node, as the nodes reported them.
        for node in ("node01", "node02"):
            self.assertIn(f"DatasetStaging={node}:train {self.total}/"
                          f"{self.total} bytes copied Copied={self.total}",
                          shown)
        staging = self.cluster.job(job_id)["dataset_staging"]
        self.assertEqual(sorted(e["node"] for e in staging),
                         ["node01", "node02"])
        self.assertTrue(all(e["done"] and not e["hit"] for e in staging))

        # A rerun: every byte from the nodes' caches.
        rerun_id, again = self.run_job("second")
        self.assertEqual({again[r][0] for r in again}, paths)
        rerun = self.staged_lines()[len(first):]
        self.assertEqual(len(rerun), 2, rerun)
        served = sum(int(l["bytes"]) for l in rerun if l["hit"] == "yes")
        copied = sum(int(l["copied"]) for l in rerun)
        print(f"rerun: {served} bytes served from cache, {copied} copied "
              f"({100.0 * served / (2 * self.total):.1f}% from cache)")
        self.assertEqual(served, 2 * self.total)
        self.assertEqual(copied, 0)
        rerun_staging = self.cluster.job(rerun_id)["dataset_staging"]
        self.assertTrue(all(e["hit"] and e["bytes_copied"] == 0
                            for e in rerun_staging), rerun_staging)
        self.assertEqual(len(rerun_staging), 2)

        # A changed file: a new version, staged again, the old one gone.
        with open(os.path.join(self.shared, "shard1.bin"), "wb") as f:
            f.write(b"Z" * MIB)
        changed_digest = tree_digest(self.shared)
        _, changed = self.run_job("third")
        for rank, (path, copy_digest, _) in changed.items():
            self.assertNotIn(path, paths, "a new version has its own entry")
            self.assertEqual(copy_digest, changed_digest, f"rank {rank}")
        restaged = self.staged_lines()[len(first) + len(rerun):]
        self.assertEqual([l["hit"] for l in restaged], ["no", "no"])
        # Only the changed file came from shared storage; the others from
        # each node's copy of the earlier version.
        for line in restaged:
            self.assertEqual(int(line["copied"]), MIB, line)
            self.assertEqual(int(line["reused"]), 2 * MIB + 8, line)
        for old in paths:
            self.assertFalse(os.path.exists(old), f"{old} was not dropped")

    def test_a_content_version_sees_what_rsync_t_changes(self):
        # rsync -t and tar restore modification times: a file rewritten
        # with the same size and mtime is the same version by metadata, a
        # new one by content.
        _, first = self.run_job("first", name="train,version=content")
        shard = os.path.join(self.shared, "shard0.bin")
        before = os.stat(shard)
        with open(shard, "wb") as f:
            f.write(b"Q" * MIB)
        os.utime(shard, ns=(before.st_atime_ns, before.st_mtime_ns))
        changed_digest = tree_digest(self.shared)
        job_id, second = self.run_job("second", name="train,version=content")
        for rank, (path, copy_digest, _) in second.items():
            self.assertEqual(copy_digest, changed_digest, f"rank {rank}")
            self.assertNotIn(path, {first[r][0] for r in first})
        self.assertIn("Dataset=train,version=content:" + self.shared,
                      self.cluster.cli("job", str(job_id)).stdout)
        self.assertEqual(self.cluster.job(job_id)["datasets"][0]["version_by"],
                         "content")
        # Unchanged content: both nodes serve their copies.
        self.run_job("third", name="train,version=content")
        self.assertEqual([l["hit"] for l in self.staged_lines()[-2:]],
                         ["yes", "yes"])

    def test_cache_directory_is_private_to_its_user(self):
        _, ranks = self.run_job("first")
        path = ranks[0][0]
        user_dir = os.path.dirname(os.path.dirname(path))
        self.assertEqual(os.stat(user_dir).st_mode & 0o777, 0o700)
        self.assertEqual(os.stat(os.path.dirname(user_dir)).st_mode & 0o777,
                         0o711)

    def test_bad_declarations_are_refused_with_the_form(self):
        for value, message in (
                ("train", "expected NAME:PATH"),
                ("bad-name:/tmp", "letters, digits and underscores"),
                (f"train:{self.cluster.path('missing')}",
                 "does not exist or is not a directory")):
            result = self.cluster.cli("batch", f"--dataset={value}",
                                      self.script, check=False)
            self.assertNotEqual(result.returncode, 0, value)
            self.assertIn(message, result.stderr, value)
        self.assertIn("--dataset NAME:PATH",
                      self.cluster.cli("batch", "--help").stdout)

    @unittest.skipUnless(os.geteuid() == 0, "needs root to act as another user")
    def test_file_the_user_cannot_read_is_a_clear_job_error(self):
        other = pwd.getpwnam(OTHER_USER)
        os.chmod(self.cluster.dir, 0o755)
        user_dir = self.cluster.path("user")
        os.makedirs(user_dir)
        os.chown(user_dir, other.pw_uid, other.pw_gid)
        secret = os.path.join(self.shared, "shard2.bin")
        os.chmod(secret, 0o600)  # root's; nobody may not read it
        script = self.cluster.write_script(
            "true.sh", "#!/bin/bash\ntrue\n", directory=user_dir)
        job_id = self.cluster.submit(
            script, "-N", "2", f"--dataset=train:{self.shared}",
            "--no-requeue", cwd=user_dir, uid=other.pw_uid)
        job = self.cluster.wait_job(job_id, "FAILED", timeout=60)
        detail = job["reason_detail"]
        self.assertIn(secret, detail)
        self.assertIn("Permission denied", detail)
        self.assertRegex(detail, r"on node node0[12]")
        # Nothing of the secret reached any cache.
        for name in self.cluster.agents:
            cache = os.path.join(self.cluster.dir, "agents", name, "datasets")
            for root, _, files in os.walk(cache):
                self.assertNotIn("shard2.bin", files, root)


class DatasetNodeFaultTest(ClusterTestCase):
    """A node whose cache is unusable fails the attempt as the node's
    fault: the job restarts on the other node, which has no copy and
    stages one."""

    def test_unusable_cache_is_a_node_fault_and_the_restart_stages_again(self):
        not_a_directory = "/proc/version"  # the agent cannot make it a cache
        self.cluster = self.start_cluster(
            agents=2, agent_args={"node01": ["--cache-dir", not_a_directory]})
        shared = self.cluster.path("shared", "data")
        os.makedirs(shared)
        with open(os.path.join(shared, "x.bin"), "wb") as f:
            f.write(b"x" * 4096)
        script = self.cluster.write_script(
            "list.sh", "#!/bin/bash\nls \"$GANTRY_DATASET_data\" > listed\n")
        # Placed first on node01 (the scheduler takes the lowest names at
        # equal cost), which cannot stage: a node fault, and the restart on
        # node02, which has no copy, stages one.
        job_id = self.cluster.submit(script, f"--dataset=data:{shared}")
        job = self.cluster.wait_job(job_id, "COMPLETED", timeout=60)
        self.assertEqual(self.cluster.read("listed").strip(), "x.bin")
        attempts = job["attempts"]
        self.assertEqual([a["nodes"] for a in attempts],
                         [["node01"], ["node02"]], attempts)
        first = attempts[0]
        self.assertTrue(first["node_fault"], first)
        self.assertIn("has no usable dataset cache", first["end_detail"])
        self.assertIn("node01", first["end_detail"])
        staged = [line for line in
                  self.cluster.agents["node02"].log_text().splitlines()
                  if "dataset staged" in line]
        self.assertEqual(len(staged), 1, staged)
        self.assertIn("hit=no", staged[0])


class DatasetMetricsTest(ClusterTestCase):
    """The agent's Prometheus endpoint counts the cache's misses, hits and
    bytes staged, and shows the bytes it holds."""

    def test_a_stage_and_a_hit_show_in_the_agents_metrics(self):
        cluster = self.start_cluster(agents=1, metrics=True)
        source = cluster.path("shared", "small")
        os.makedirs(source)
        with open(os.path.join(source, "data.bin"), "wb") as f:
            f.write(b"x" * 100000)
        script = cluster.write_script("true.sh", "#!/bin/bash\nexit 0\n")
        for _ in range(2):
            job_id = cluster.submit(script, f"--dataset=small:{source}")
            cluster.wait_job(job_id, "COMPLETED", timeout=60)
        url = f"http://{cluster.metrics_address('node01')}/metrics"

        def samples():
            text = urllib.request.urlopen(url, timeout=5).read().decode()
            values = dict(line.rsplit(" ", 1) for line in text.splitlines()
                          if line.startswith("gantry_agent_dataset"))
            # Heartbeats update them: wait for the one after the hit.
            hits = values.get("gantry_agent_dataset_cache_hits_total")
            return values if hits is not None and float(hits) == 1 else None

        values = gantry_cluster.wait_for(samples, 10, "the hit in the metrics")
        self.assertEqual(float(values["gantry_agent_dataset_cache_misses_total"]),
                         1)
        self.assertEqual(
            float(values["gantry_agent_dataset_bytes_staged_total"]), 100000)
        self.assertEqual(float(values["gantry_agent_dataset_cache_bytes"]),
                         100000)
        self.assertEqual(
            float(values["gantry_agent_dataset_bytes_evicted_total"]), 0)


class DatasetPlacementTest(ClusterTestCase):
    """gantryd places a job where its user's copy of its dataset is: the
    agents report their caches, and between two equally good free nodes the
    one holding the copy wins, though the scheduler would otherwise take
    the lowest name (node01)."""

    def setUp(self):
        self.cluster = self.start_cluster(agents=2)
        self.shared = self.cluster.path("shared", "train")
        os.makedirs(self.shared)
        with open(os.path.join(self.shared, "shard.bin"), "wb") as f:
            f.write(b"s" * MIB)
        self.total = MIB
        self.reader = "#!/bin/bash\nls \"$GANTRY_DATASET_train\" >/dev/null\n"

    def place(self, *options, directory=None, uid=None, name="train"):
        """Submits a 1-node job reading the dataset under `name`; returns
        (node, its staging entry)."""
        reader = self.reader.replace("GANTRY_DATASET_train",
                                     f"GANTRY_DATASET_{name}")
        script = self.cluster.write_script(
            f"reader{uid or ''}-{name}.sh", reader, directory=directory)
        job_id = self.cluster.submit(
            script, *options, f"--dataset={name}:{self.shared}",
            "--no-requeue", cwd=directory, uid=uid)
        job = self.cluster.wait_job(job_id, "COMPLETED", timeout=60)
        nodes = job["attempts"][-1]["nodes"]
        self.assertEqual(len(nodes), 1, job["attempts"])
        staging = job["dataset_staging"]
        self.assertEqual(len(staging), 1, staging)
        self.assertEqual(staging[0]["node"], nodes[0])
        return nodes[0], staging[0]

    def test_next_job_lands_where_its_users_copy_is(self):
        node, first = self.place("--nodelist=node02")
        self.assertEqual(node, "node02")
        self.assertFalse(first["hit"], first)
        self.assertEqual(first["bytes_copied"], self.total)
        # node01 is as free and comes first by name: only the cache makes
        # the difference.
        node, again = self.place()
        self.assertEqual(node, "node02", "not placed where the copy is")
        self.assertTrue(again["hit"], again)
        self.assertEqual(again["bytes_copied"], 0)

    def test_the_same_directory_under_another_name_is_the_same_copy(self):
        # Placement keys a dataset by its owner and path, so a job naming
        # it differently is placed where the copy is: the cache must serve
        # that copy rather than copy the directory a second time.
        node, first = self.place("--nodelist=node02")
        self.assertEqual(node, "node02")
        self.assertFalse(first["hit"], first)
        node, renamed = self.place(name="corpus")
        self.assertEqual(node, "node02", "not placed where the copy is")
        self.assertTrue(renamed["hit"], renamed)
        self.assertEqual(renamed["bytes_copied"], 0)
        listed = self.cluster.cli("cache", "list", "--json").stdout
        self.assertEqual(listed.count(self.shared), 1, listed)

    def test_a_restarted_agent_still_steers_placement(self):
        node, _ = self.place("--nodelist=node02")
        self.assertEqual(node, "node02")
        # Both restarted: all gantryd knows of node02's cache comes from
        # the new agent's registration, whose source paths come from the
        # cache's records.
        self.cluster.kill_agent("node02")
        self.cluster.restart_controller()
        self.cluster.start_agent("node02")
        self.cluster.wait_nodes_up(["node01", "node02"])
        node, again = self.place()
        self.assertEqual(node, "node02", "not placed where the copy is")
        self.assertTrue(again["hit"], again)

    @unittest.skipUnless(os.geteuid() == 0, "needs root to act as another user")
    def test_another_users_copy_neither_steers_nor_serves(self):
        node, _ = self.place("--nodelist=node02")
        self.assertEqual(node, "node02")
        other = pwd.getpwnam(OTHER_USER)
        os.chmod(self.cluster.dir, 0o755)
        user_dir = self.cluster.path("user")
        os.makedirs(user_dir)
        os.chown(user_dir, other.pw_uid, other.pw_gid)
        node, theirs = self.place(directory=user_dir, uid=other.pw_uid)
        self.assertEqual(node, "node01", "steered by another user's copy")
        self.assertFalse(theirs["hit"], theirs)
        self.assertEqual(theirs["bytes_copied"], self.total)
        # Their own copy now steers their next job, and still not root's.
        node, again = self.place(directory=user_dir, uid=other.pw_uid)
        self.assertEqual(node, "node01")
        self.assertTrue(again["hit"], again)


class DatasetAgentUpgradeTest(ClusterTestCase):
    """A package upgrade renames a new gantry-agent over the running one's
    path (or removes it): the dataset helper a running agent starts is still
    its own build, since it is started as /proc/self/exe, which names the
    inode the agent runs from, not the path. Here the "new build" is a
    program that only fails, so a helper started by path would fail every
    stage."""

    def test_staging_survives_the_binary_being_replaced_and_removed(self):
        cluster = self.start_cluster(agents=1)
        installed = cluster.path("bin", "gantry-agent")
        os.makedirs(os.path.dirname(installed))
        shutil.copy2(cluster.agent_bin, installed)
        cluster.kill_agent("node01")
        cluster.agent_bin = installed
        cluster.start_agent("node01")
        gantry_cluster.wait_for(
            lambda: "agent starting" in cluster.agents["node01"].log_text(),
            15, "the agent started from its copy")
        shared = cluster.path("shared", "data")
        os.makedirs(shared)
        with open(os.path.join(shared, "x.bin"), "wb") as f:
            f.write(b"x" * 4096)
        script = cluster.write_script(
            "list.sh", "#!/bin/bash\nls \"$GANTRY_DATASET_data\" > listed\n")
        # As dpkg installs a file: written beside the old one, renamed over.
        new = installed + ".dpkg-new"
        with open(new, "w") as f:
            f.write("#!/bin/sh\nexit 3\n")
        os.chmod(new, 0o755)
        os.rename(new, installed)
        job_id = cluster.submit(script, f"--dataset=data:{shared}",
                                "--no-requeue")
        cluster.wait_job(job_id, "COMPLETED", timeout=60)
        self.assertEqual(cluster.read("listed").strip(), "x.bin")
        # Removed outright: still the agent's own build.
        os.unlink(installed)
        with open(os.path.join(shared, "y.bin"), "wb") as f:
            f.write(b"y" * 4096)
        job_id = cluster.submit(script, f"--dataset=data:{shared}",
                                "--no-requeue")
        cluster.wait_job(job_id, "COMPLETED", timeout=60)
        self.assertEqual(cluster.read("listed").split(), ["x.bin", "y.bin"])
        staged = [line for line in
                  cluster.agents["node01"].log_text().splitlines()
                  if "dataset staged" in line]
        self.assertEqual(len(staged), 2, staged)
        self.assertTrue(all("hit=no" in line for line in staged), staged)


class DatasetUserDirectoryTest(ClusterTestCase):
    """A user can write into their own cache directory (their copies are
    theirs to read, so the directory is theirs), but what they write there
    is not free: before the next stage the agent removes what it does not
    know and drops a copy whose files changed, so a job that fills the
    directory past the node's cache size neither keeps the space nor gets a
    doctored copy served to the next job."""

    VANDAL = """#!/bin/bash
# The copy is DIR/<uid>/train.<version>/data: its user's directory is two
# levels up.
copy="$GANTRY_DATASET_train"
head -c 8388608 /dev/zero > "$copy/../../junk"
echo extra >> "$copy/shard.bin"
dirname "$(dirname "$copy")" > user_dir
"""
    READER = """#!/bin/bash
sha256sum "$GANTRY_DATASET_train/shard.bin" | cut -d' ' -f1 > digest
"""

    def vandalize_then_read(self, directory=None, uid=None):
        """A job of user `uid` (None: this test's) fills its cache directory
        past the node's cache size and changes its copy; the next job of
        the same user must get a fresh, true copy."""
        cluster = self.start_cluster(
            agents=1, agent_args={"node01": ["--cache-size", "4M"]})
        shared = cluster.path("shared", "train")
        os.makedirs(shared)
        with open(os.path.join(shared, "shard.bin"), "wb") as f:
            f.write(b"s" * MIB)
        expected = hashlib.sha256(b"s" * MIB).hexdigest()
        if uid is not None:
            os.chmod(cluster.dir, 0o755)
            directory = cluster.path("user")
            os.makedirs(directory)
            os.chown(directory, uid, pwd.getpwuid(uid).pw_gid)
        out = directory or cluster.path()
        for name, text in (("vandal.sh", self.VANDAL),
                           ("reader.sh", self.READER)):
            script = cluster.write_script(name, text, directory=directory)
            job_id = cluster.submit(script, f"--dataset=train:{shared}",
                                    "--no-requeue", cwd=directory, uid=uid)
            cluster.wait_job(job_id, "COMPLETED", timeout=60)
            if name == "vandal.sh":
                with open(os.path.join(out, "user_dir")) as f:
                    user_dir = f.read().strip()
                junk = os.path.join(user_dir, "junk")
                self.assertEqual(os.path.getsize(junk), 8 * MIB,
                                 "the job could not write its junk")
                if uid is not None:
                    self.assertEqual(os.stat(junk).st_uid, uid)
        with open(os.path.join(out, "digest")) as f:
            self.assertEqual(f.read().strip(), expected)
        self.assertFalse(os.path.exists(junk))
        left = os.listdir(user_dir)
        self.assertEqual(len(left), 1, left)
        self.assertTrue(left[0].startswith("train."), left)
        staged = [line for line in
                  cluster.agents["node01"].log_text().splitlines()
                  if "dataset staged" in line]
        self.assertEqual(len(staged), 2, staged)
        self.assertIn("hit=no", staged[1], "the changed copy was served")

    def test_junk_and_a_changed_copy_are_gone_before_the_next_stage(self):
        self.vandalize_then_read()

    @unittest.skipUnless(os.geteuid() == 0, "needs root to act as another user")
    def test_another_user_cleans_up_as_themselves(self):
        # Removed by a helper that became the user: their own files.
        self.vandalize_then_read(uid=pwd.getpwnam(OTHER_USER).pw_uid)

if __name__ == "__main__":
    gantry_cluster.main()
