"""In-memory checkpoints (gantry batch --memory-checkpoints).

Each rank writes snapshots into GANTRY_MEMORY_CHECKPOINT_DIR; the agents
copy every complete one to a node in another failure domain (under another
leaf switch), and a restart restores the newest step every rank holds into
the directory of the rank on its new node, before the ranks start
(GANTRY_RESTORE_STEP). These tests run real agents on loopback with a
switch tree of two leaves, kill one node's agent, and check where the
copies went, that the restored bytes are the written ones, and that what a
user may not copy never leaves the node.
"""
import glob
import hashlib
import os
import socket
import time

from gantry_cluster import ClusterTestCase, main, wait_for

TWO_LEAVES = """SwitchName=leaf1 Nodes=node[01-02]
SwitchName=leaf2 Nodes=node[03-04]
SwitchName=spine Switches=leaf[1-2]
"""

# Each rank writes steps 1-3 (a small state file and a 300 kB blob in a
# subdirectory), records the blob's digest, and waits to be killed. A
# restored attempt records what it found instead, and ends.
SNAPSHOTS = r"""#!/bin/bash
set -e
dir="$GANTRY_MEMORY_CHECKPOINT_DIR"
rank="$SLURM_PROCID"
out="$SLURM_SUBMIT_DIR/rank-$rank.attempt-$GANTRY_ATTEMPT"
if [ -n "$GANTRY_RESTORE_STEP" ]; then
  { echo "restored $GANTRY_RESTORE_STEP"
    cat "$dir/step-$GANTRY_RESTORE_STEP/state"
    sha256sum < "$dir/step-$GANTRY_RESTORE_STEP/sub/blob" | cut -d' ' -f1
    stat -c %U "$dir/step-$GANTRY_RESTORE_STEP/sub/blob"; } > "$out.tmp"
  mv "$out.tmp" "$out"
  exit 0
fi
for step in 1 2 3; do
  mkdir -p "$dir/.partial/sub"
  echo "rank $rank step $step" > "$dir/.partial/state"
  head -c 300000 /dev/urandom > "$dir/.partial/sub/blob"
  sha256sum < "$dir/.partial/sub/blob" | cut -d' ' -f1 > "$out.step-$step"
  mv "$dir/.partial" "$dir/step-$step"
done
if [ "$1" = "plant-link" ]; then
  mkdir "$dir/.partial"
  ln -s /etc/shadow "$dir/.partial/state"
  mv "$dir/.partial" "$dir/step-9"
fi
echo ready > "$out.ready"
sleep 300
"""

# The way most Slurm scripts run: the batch script once, its tasks started
# with srun (gantry run), whose step launches carry the restore.
THROUGH_SRUN = """#!/bin/bash
exec srun bash "$SLURM_SUBMIT_DIR/snapshots.sh"
"""


def replica_steps(cluster, node, job_id):
    """rank -> steps of `job_id` that `node` holds as replicas."""
    root = os.path.join(cluster.dir, "agents", node, "memory", "replicas",
                        f"job-{job_id}")
    found = {}
    for path in glob.glob(os.path.join(root, "rank-*", "step-*")):
        rank = int(path.split("/rank-")[1].split("/")[0])
        found.setdefault(rank, set()).add(int(path.rsplit("step-", 1)[1]))
    return found


class MemoryCheckpointTest(ClusterTestCase):

    def start_two_leaves(self):
        cluster = self.start_cluster(agents=4, node_timeout=2.0)
        with open(cluster.path("tree.conf"), "w") as tree:
            tree.write(TWO_LEAVES)
        cluster.cli("topology", "import", "tree.conf")
        cluster.write_script("snapshots.sh", SNAPSHOTS)
        return cluster

    def wait_ready(self, cluster, ranks):
        wait_for(lambda: all(os.path.exists(cluster.path(
            f"rank-{r}.attempt-1.ready")) for r in ranks), 30,
            "every rank's snapshots written")

    def test_replicas_go_to_another_leaf_and_a_restart_restores_them(self):
        cluster = self.start_two_leaves()
        job_id = cluster.submit("snapshots.sh", "--nodes", "2",
                                "--memory-checkpoints")
        job = cluster.wait_job(job_id, "RUNNING", timeout=30)
        self.assertEqual(job["nodelist"], "node[01-02]",
                         "a 2-node job fits in one leaf")
        self.wait_ready(cluster, (0, 1))

        # Every rank's newest snapshots are copied under the other leaf,
        # none within its own.
        def replicated_elsewhere():
            held = {}
            for node in ("node03", "node04"):
                for rank, steps in replica_steps(cluster, node,
                                                 job_id).items():
                    held.setdefault(rank, set()).update(steps)
            return held if all(3 in held.get(r, ()) for r in (0, 1)) else None
        wait_for(replicated_elsewhere, 30,
                 "step 3 of both ranks replicated under leaf2")
        for node in ("node01", "node02"):
            self.assertEqual(replica_steps(cluster, node, job_id), {},
                             f"{node} shares a leaf with the job")
        wait_for(lambda: (cluster.job(job_id).get("memory_checkpoint") or {})
                 .get("step") == 3, 20,
                 "the job's memory checkpoint at step 3 (gantry job)")

        cluster.kill_agent("node01")
        job = cluster.wait_job(job_id, "COMPLETED", timeout=60)
        attempts = job["attempts"]
        self.assertEqual(len(attempts), 2, attempts)
        self.assertNotIn("node01", attempts[1]["nodes"])
        self.assertEqual(job.get("memory_restore_step"), 3, job)
        for rank in (0, 1):
            restored = cluster.read(f"rank-{rank}.attempt-2").split("\n")
            written = cluster.read(f"rank-{rank}.attempt-1.step-3").strip()
            self.assertEqual(restored[0], "restored 3")
            self.assertEqual(restored[1], f"rank {rank} step 3")
            self.assertEqual(restored[2], written,
                             f"rank {rank}: the restored blob is the written one")
            self.assertEqual(restored[3], "root",
                             "the restored files belong to the job's user")

    def test_tasks_started_by_srun_are_restored_too(self):
        cluster = self.start_two_leaves()
        cluster.add_slurm_commands()
        cluster.write_script("through_srun.sh", THROUGH_SRUN)
        job_id = cluster.submit("through_srun.sh", "--nodes", "2",
                                "--memory-checkpoints", per_task=False)
        job = cluster.wait_job(job_id, "RUNNING", timeout=30)
        self.assertEqual(job["nodelist"], "node[01-02]")
        self.wait_ready(cluster, (0, 1))
        wait_for(lambda: (cluster.job(job_id).get("memory_checkpoint") or {})
                 .get("step") == 3, 30, "step 3 protected")
        cluster.kill_agent("node02")
        job = cluster.wait_job(job_id, "COMPLETED", timeout=60)
        self.assertEqual(len(job["attempts"]), 2, job["attempts"])
        for rank in (0, 1):
            restored = cluster.read(f"rank-{rank}.attempt-2").split("\n")
            self.assertEqual(restored[:2], ["restored 3", f"rank {rank} step 3"])
            self.assertEqual(
                restored[2],
                cluster.read(f"rank-{rank}.attempt-1.step-3").strip())

    def test_a_link_in_a_snapshot_is_never_copied(self):
        cluster = self.start_two_leaves()
        job_id = cluster.submit("snapshots.sh", "--nodes", "2",
                                "--memory-checkpoints", args=["plant-link"])
        cluster.wait_job(job_id, "RUNNING", timeout=30)
        self.wait_ready(cluster, (0, 1))
        wait_for(lambda: os.path.isdir(os.path.join(
            cluster.dir, "agents", "node01", "memory", f"job-{job_id}",
            "rank-0", "step-9")), 10, "the planted step 9")
        # Step 3 goes out; step 9 (a link to /etc/shadow) never does.
        wait_for(lambda: (cluster.job(job_id).get("memory_checkpoint") or {})
                 .get("step") == 3, 30, "step 3 protected")
        time.sleep(3)  # several replication rounds
        for node in ("node01", "node02", "node03", "node04"):
            for rank, steps in replica_steps(cluster, node, job_id).items():
                self.assertNotIn(9, steps, f"{node} got rank {rank}'s link")
        logs = "".join(cluster.agents[n].log_text()
                       for n in ("node01", "node02"))
        self.assertIn("is not a regular file or a directory", logs)
        shadow = hashlib.sha256(open("/etc/shadow", "rb").read()).hexdigest()
        for path in glob.glob(os.path.join(cluster.dir, "agents", "*",
                                           "memory", "replicas", "**"),
                              recursive=True):
            if os.path.isfile(path):
                digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
                self.assertNotEqual(digest, shadow, path)
        cluster.cli("cancel", str(job_id))
        cluster.wait_job(job_id, "CANCELLED", timeout=20)
        # The job is over: every node drops what it held of it.
        wait_for(lambda: not glob.glob(os.path.join(
            cluster.dir, "agents", "*", "memory", "*", f"job-{job_id}")) and
            not glob.glob(os.path.join(cluster.dir, "agents", "*", "memory",
                                       f"job-{job_id}")), 20,
            "the job's snapshots dropped everywhere")

    def test_a_wrong_token_gets_nothing(self):
        cluster = self.start_two_leaves()
        job_id = cluster.submit("snapshots.sh", "--nodes", "2",
                                "--memory-checkpoints")
        cluster.wait_job(job_id, "RUNNING", timeout=30)
        self.wait_ready(cluster, (0, 1))
        port = int(wait_for(lambda: _logged_port(cluster.agents["node01"]), 15,
                            "node01's peer listener port"))
        for line in (f"GMC1 GET {'0' * 32} {job_id} 0 3\n",
                     f"GMC1 PUT {'0' * 32} {job_id} 0 4 1 5\n",
                     "GMC1 GET ../../etc 1 0 3\n"):
            with socket.create_connection((cluster.addresses["node01"], port),
                                          timeout=5) as conn:
                conn.sendall(line.encode())
                conn.settimeout(5)
                self.assertEqual(conn.recv(100), b"",
                                 f"{line.strip()} must be closed unanswered")
        cluster.cli("cancel", str(job_id))


def _logged_port(agent):
    for line in agent.log_text().splitlines():
        if 'msg="pre-flight listener ready"' in line and " port=" in line:
            return line.split(" port=")[1].split()[0]
    return None


if __name__ == "__main__":
    main()
