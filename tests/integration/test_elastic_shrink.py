#!/usr/bin/env python3
"""Jobs with a node range (--nodes=MIN-MAX) on real agents: one that loses
a node with no replacement free restarts on the nodes it still has, with
every rank variable and the hostfile consistent for the smaller world; at
its next restart after the node returned it is back at its full size; an
--elastic job grows back by itself; a job without a range still waits for
a replacement. Bad ranges get one-line errors."""

import time

import gantry_cluster
from gantry_cluster import (WAIT_FOR_FILE, ClusterTestCase, expand_hostlist,
                            wait_for)

NODE_TIMEOUT = 2.0
ALL = ["node01", "node02", "node03", "node04"]

# Every rank writes its view of the world (the variables training code
# reads) to env.JOB.ATTEMPT.RANK; rank 0 also writes a DeepSpeed-style
# hostfile from the node list. Then it waits for release.ATTEMPT (or the
# attempt is stopped).
RANK_SCRIPT = """#!/bin/bash
""" + WAIT_FOR_FILE + """
out="env.$SLURM_JOB_ID.$GANTRY_ATTEMPT.$SLURM_PROCID"
for v in WORLD_SIZE RANK LOCAL_RANK LOCAL_WORLD_SIZE NODE_RANK MASTER_ADDR \\
         MASTER_PORT SLURM_NNODES SLURM_JOB_NUM_NODES SLURM_NTASKS \\
         SLURM_NPROCS SLURM_JOB_NODELIST SLURM_TASKS_PER_NODE SLURM_NODEID \\
         SLURMD_NODENAME GANTRY_NNODES GANTRY_NTASKS GANTRY_NODELIST; do
  echo "$v=${!v}"
done > "$out.tmp"
if [ "$SLURM_PROCID" = 0 ]; then
  "$GANTRY_CLI" hostnames "$SLURM_JOB_NODELIST" |
    sed "s/$/ slots=$SLURM_NTASKS_PER_NODE/" \\
    > "hostfile.$SLURM_JOB_ID.$GANTRY_ATTEMPT"
fi
mv "$out.tmp" "$out"
wait_for_file "release.$GANTRY_ATTEMPT"
"""


def read_env(cluster, job_id, attempt, rank):
    values = {}
    for line in cluster.read(f"env.{job_id}.{attempt}.{rank}").splitlines():
        name, _, value = line.partition("=")
        values[name] = value
    return values


class ElasticShrinkTest(ClusterTestCase):

    def submit_ranks(self, cluster, *options):
        script = cluster.write_script("ranks.sh", RANK_SCRIPT)
        cluster.env["GANTRY_CLI"] = cluster.cli_bin
        return cluster.submit(script, "--ntasks-per-node=2", *options)

    def wait_world(self, cluster, job_id, attempt, nodes):
        """Waits for every rank of the attempt, checks that all of them see
        one consistent world of `nodes` (names) with 2 ranks per node, and
        returns rank 0's variables."""
        ranks = 2 * len(nodes)
        cluster.wait_files([f"env.{job_id}.{attempt}.{r}" for r in range(ranks)],
                           timeout=NODE_TIMEOUT + 20)
        envs = [read_env(cluster, job_id, attempt, r) for r in range(ranks)]
        first = envs[0]
        self.assertEqual(expand_hostlist(first["SLURM_JOB_NODELIST"]), nodes)
        for rank, env in enumerate(envs):
            with self.subTest(attempt=attempt, rank=rank):
                self.assertEqual(env["WORLD_SIZE"], str(ranks))
                self.assertEqual(env["SLURM_NTASKS"], str(ranks))
                self.assertEqual(env["SLURM_NPROCS"], str(ranks))
                self.assertEqual(env["GANTRY_NTASKS"], str(ranks))
                self.assertEqual(env["SLURM_NNODES"], str(len(nodes)))
                self.assertEqual(env["SLURM_JOB_NUM_NODES"], str(len(nodes)))
                self.assertEqual(env["GANTRY_NNODES"], str(len(nodes)))
                self.assertEqual(env["SLURM_TASKS_PER_NODE"], f"2(x{len(nodes)})")
                self.assertEqual(env["RANK"], str(rank))
                self.assertEqual(env["LOCAL_WORLD_SIZE"], "2")
                self.assertEqual(env["LOCAL_RANK"], str(rank % 2))
                self.assertEqual(env["NODE_RANK"], str(rank // 2))
                self.assertEqual(env["SLURM_NODEID"], str(rank // 2))
                self.assertEqual(env["SLURMD_NODENAME"], nodes[rank // 2])
                for same in ("SLURM_JOB_NODELIST", "GANTRY_NODELIST",
                             "MASTER_ADDR", "MASTER_PORT"):
                    self.assertEqual(env[same], first[same])
        # The rendezvous is on the first node of this attempt.
        self.assertEqual(first["MASTER_ADDR"], cluster.addresses[nodes[0]])
        hostfile = cluster.wait_files([f"hostfile.{job_id}.{attempt}"])
        self.assertEqual(hostfile[f"hostfile.{job_id}.{attempt}"].splitlines(),
                         [f"{n} slots=2" for n in nodes])
        return first

    def lose_node(self, cluster, name):
        cluster.kill_agent(name)
        cluster.wait_nodes([name], "down", timeout=NODE_TIMEOUT + 8)

    def bring_back(self, cluster, name):
        cluster.start_agent(name)
        cluster.wait_nodes_up([name])
        cluster.cli("resume", name)  # it failed under a job: drained

    def test_range_job_shrinks_then_is_back_at_full_size_at_next_restart(self):
        cluster = self.start_cluster(agents=4, node_timeout=NODE_TIMEOUT)
        job_id = self.submit_ranks(cluster, "--nodes=3-4")
        job = cluster.wait_job(job_id, "RUNNING")
        self.assertEqual((job["min_nodes"], job["nodes"]), (3, 4))
        self.wait_world(cluster, job_id, 1, ALL)

        self.lose_node(cluster, "node04")
        # No spare: attempt 2 on the three nodes it still has.
        self.wait_world(cluster, job_id, 2, ALL[:3])
        job = cluster.wait_job(job_id, "RUNNING")
        self.assertEqual(job["attempt"], 2)
        self.assertEqual(job["allocated_nodes"], 3)
        shown = cluster.cli("job", str(job_id)).stdout
        self.assertIn("NodeRange=3-4 CurrentNodes=3", shown)
        self.assertIn("NumNodes=3 ", shown)
        self.assertIn("NumTasks=6 ", shown)
        queue = cluster.cli("queue", "-h", "-o", "%i %D %T").stdout.split()
        self.assertEqual(queue, [str(job_id), "3", "RUNNING"])
        sizes = cluster.cli("queue", "-h", "-O", "NumNodes,MaxNodes").stdout
        self.assertEqual(sizes.split(), ["3", "4"])

        # The node returns. Without --elastic the job is not disturbed ...
        self.bring_back(cluster, "node04")
        time.sleep(1.5)
        self.assertEqual(cluster.job(job_id)["attempt"], 2)
        # ... and its next restart is on all four again.
        cluster.cli("requeue", str(job_id))
        self.wait_world(cluster, job_id, 3, ALL)
        self.assertEqual(cluster.job(job_id)["allocated_nodes"], 4)
        cluster.touch("release.3")
        cluster.wait_job(job_id, "COMPLETED", timeout=20)

    def test_two_lost_of_3_4_waits_like_a_fixed_job(self):
        cluster = self.start_cluster(agents=4, node_timeout=NODE_TIMEOUT)
        job_id = self.submit_ranks(cluster, "--nodes=3-4")
        cluster.wait_job(job_id, "RUNNING")
        self.wait_world(cluster, job_id, 1, ALL)
        cluster.kill_agent("node03")
        self.lose_node(cluster, "node04")
        cluster.wait_nodes(["node03"], "down", timeout=NODE_TIMEOUT + 8)
        # Below its minimum: pending until a node returns.
        job = cluster.wait_job(job_id, "PENDING", timeout=10)
        time.sleep(1.0)
        job = cluster.job(job_id)
        self.assertEqual(job["state"], "PENDING")
        # A reason of its own: it waits for nodes to come back, not for
        # a running job to end (issue 35 point 4).
        job = wait_for(lambda: (lambda j: j if j["reason"] == "NodeDown"
                                else None)(cluster.job(job_id)),
                       10, "reason NodeDown")
        self.assertRegex(job["reason_detail"],
                         r"up: 2 of the \d nodes that could hold it")
        self.bring_back(cluster, "node04")
        self.wait_world(cluster, job_id, job["attempt"] + 1,
                        ["node01", "node02", "node04"])
        cluster.cli("cancel", str(job_id))

    def test_job_without_a_range_still_waits_for_a_replacement(self):
        cluster = self.start_cluster(agents=4, node_timeout=NODE_TIMEOUT)
        job_id = self.submit_ranks(cluster, "-N", "4")
        job = cluster.wait_job(job_id, "RUNNING")
        self.assertEqual(job["min_nodes"], 4)
        self.wait_world(cluster, job_id, 1, ALL)
        self.lose_node(cluster, "node04")
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            job = cluster.job(job_id)
            self.assertFalse(job["attempt"] > 1 and job["state"] == "RUNNING",
                             "restarted on fewer nodes")
            time.sleep(0.2)
        self.assertEqual(job["state"], "PENDING")
        self.assertEqual(job["attempt"], 1)
        self.bring_back(cluster, "node04")
        self.wait_world(cluster, job_id, 2, ALL)
        cluster.touch("release.2")
        cluster.wait_job(job_id, "COMPLETED", timeout=20)

    def shrunk_elastic_job(self, cluster, checkpoint=False):
        """A --nodes=3-4 --elastic job that lost node04 and runs on three
        (attempt 2), having reported a checkpoint first when asked."""
        job_id = self.submit_ranks(cluster, "--nodes=3-4", "--elastic")
        cluster.wait_job(job_id, "RUNNING")
        self.wait_world(cluster, job_id, 1, ALL)
        if checkpoint:
            cluster.cli("checkpoint", cluster.path("ckpt-1"), "--step", "10",
                        "--job", str(job_id))
        self.lose_node(cluster, "node04")
        self.wait_world(cluster, job_id, 2, ALL[:3])
        return job_id

    def test_elastic_job_grows_back_when_the_node_returns(self):
        cluster = self.start_cluster(agents=4, node_timeout=NODE_TIMEOUT)
        job_id = self.shrunk_elastic_job(cluster)
        # No checkpoint reported: once the node is back, at once.
        self.bring_back(cluster, "node04")
        self.wait_world(cluster, job_id, 3, ALL)
        job = cluster.job(job_id)
        self.assertEqual(job["allocated_nodes"], 4)
        self.assertIn("resized", job["attempts"][1]["end_detail"])
        # The grow was the job's choice: only the node fault is charged.
        self.assertEqual(job["uncharged_attempts"], 1)
        cluster.touch("release.3")
        cluster.wait_job(job_id, "COMPLETED", timeout=20)

    def test_elastic_job_with_checkpoints_grows_at_its_next_checkpoint(self):
        cluster = self.start_cluster(agents=4, node_timeout=NODE_TIMEOUT)
        job_id = self.shrunk_elastic_job(cluster, checkpoint=True)
        self.bring_back(cluster, "node04")
        time.sleep(1.5)
        self.assertEqual(cluster.job(job_id)["attempt"], 2,
                         "waits for the next checkpoint")
        cluster.cli("checkpoint", cluster.path("ckpt-2"), "--step", "20",
                    "--job", str(job_id))
        self.wait_world(cluster, job_id, 3, ALL)
        cluster.touch("release.3")
        cluster.wait_job(job_id, "COMPLETED", timeout=20)

    def test_survivors_without_ranks_are_heard_before_the_size_is_chosen(self):
        # sbatch's way: the script runs once, on the first node; the other
        # nodes hold no ranks, so after the fault they are heard from only
        # at their next heartbeat (1 s here). The restart must not be sized
        # before that, or the job would shrink to its first node.
        cluster = self.start_cluster(agents=4, node_timeout=NODE_TIMEOUT,
                                     heartbeat_interval=1.0)
        script = cluster.write_script("once.sh", """#!/bin/bash
""" + WAIT_FOR_FILE + """
echo "$SLURM_NNODES $SLURM_JOB_NODELIST" > "batch.$SLURM_JOB_ID.$GANTRY_ATTEMPT"
wait_for_file never
""")
        job_id = cluster.submit(script, "--nodes=1-4", per_task=False)
        first = cluster.wait_files([f"batch.{job_id}.1"])
        self.assertEqual(first[f"batch.{job_id}.1"], "4 node[01-04]")
        self.lose_node(cluster, "node04")
        second = cluster.wait_files([f"batch.{job_id}.2"], timeout=15)
        self.assertEqual(second[f"batch.{job_id}.2"], "3 node[01-03]")
        cluster.cli("cancel", str(job_id))

    def test_bad_and_impossible_ranges_are_refused(self):
        cluster = self.start_cluster(agents=2)
        script = cluster.write_script("true.sh", "#!/bin/bash\ntrue\n")
        for bad, words in (("--nodes=4-2", "range maximum is below minimum"),
                           ("--nodes=0-2", "min-max range such as 2-4"),
                           ("--nodes=3-4", "needs 3-4 node(s)")):
            result = cluster.cli("batch", bad, script, check=False)
            self.assertNotEqual(result.returncode, 0, bad)
            self.assertIn(words, result.stderr)
            self.assertEqual(len(result.stderr.strip().splitlines()), 1,
                             result.stderr)
        self.assertEqual(cluster.cli_json("queue")["jobs"], [])
        checked = cluster.cli("batch", "--test-only", "--nodes=1-8", script)
        self.assertIn("would accept this job (1-8 node(s)", checked.stderr)
        # A range reaching past the cluster starts on what there is.
        job_id = cluster.submit(script, "--nodes=1-8")
        job = cluster.wait_job(job_id, "COMPLETED")
        self.assertEqual(job["allocated_nodes"], 2)


if __name__ == "__main__":
    gantry_cluster.main()
