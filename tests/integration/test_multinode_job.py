#!/usr/bin/env python3
"""Multi-node batch jobs end to end: placement of ranks on agents, the rank
environment, the job lifecycle, a real rendezvous over MASTER_ADDR:PORT,
failure of one rank, and the sbatch options that shape a job's files."""

import os
import re

import gantry_cluster
from gantry_cluster import WAIT_FOR_FILE, ClusterTestCase, expand_hostlist

# Prints one line of the rank's environment, then waits for `release`.
ENV_REPORT_SCRIPT = """#!/bin/bash
echo "report rank=$SLURM_PROCID local=$SLURM_LOCALID nodeid=$SLURM_NODEID \
nnodes=$SLURM_NNODES ntasks=$SLURM_NTASKS world=$WORLD_SIZE \
torch_rank=$RANK torch_local=$LOCAL_RANK local_world=$LOCAL_WORLD_SIZE \
master=$MASTER_ADDR:$MASTER_PORT nodelist=$SLURM_JOB_NODELIST \
host=$SLURMD_NODENAME job=$SLURM_JOB_ID gantry_job=$GANTRY_JOB_ID \
gantry_rank=$GANTRY_RANK"
""" + WAIT_FOR_FILE + """
wait_for_file release
"""

# Rank 0 listens on MASTER_ADDR:MASTER_PORT; every other rank connects and
# sends its rank; rank 0 exits 0 only if it heard from all of them.
RENDEZVOUS_SCRIPT = """#!/usr/bin/env python3
import os, socket, sys, time
addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
if rank == 0:
    server = socket.create_server((addr, port))
    server.settimeout(30)
    heard = set()
    while len(heard) < world - 1:
        conn, _ = server.accept()
        with conn:
            heard.add(int(conn.makefile().readline()))
    print(f"rendezvous complete: heard ranks {sorted(heard)}", flush=True)
    sys.exit(0 if heard == set(range(1, world)) else 1)
deadline = time.time() + 30
while True:
    try:
        with socket.create_connection((addr, port), timeout=2) as conn:
            conn.sendall(f"{rank}\\n".encode())
        print(f"rank {rank} reached {addr}:{port}", flush=True)
        break
    except OSError:
        if time.time() > deadline:
            raise
        time.sleep(0.1)
"""


def parse_reports(text):
    """Lines `report k=v ...` -> list of dicts."""
    reports = []
    for line in text.splitlines():
        if line.startswith("report "):
            reports.append(dict(f.split("=", 1) for f in line.split()[1:]))
    return reports


class MultiNodeJobTest(ClusterTestCase):
    # Each test shapes the cluster it needs (node count, what is busy).

    def test_two_node_job_runs_four_ranks_with_slurm_and_torch_environment(self):
        cluster = self.start_cluster(agents=4)
        script = cluster.write_script("env.sh", ENV_REPORT_SCRIPT)
        job_id = cluster.submit(script, "-N", "2", "--ntasks-per-node=2")
        job = cluster.wait_job(job_id, "RUNNING")
        output = f"gantry-{job_id}.out"
        gantry_cluster.wait_for(
            lambda: os.path.exists(cluster.path(output)) and
            len(parse_reports(cluster.read(output))) >= 4,
            15, "four rank reports")
        cluster.touch("release")
        job = cluster.wait_job(job_id, "COMPLETED")

        reports = parse_reports(cluster.read(output))
        self.assertEqual(sorted(int(r["rank"]) for r in reports), [0, 1, 2, 3],
                         "each rank runs exactly once")
        hosts = {r["host"] for r in reports}
        self.assertEqual(len(hosts), 2, "the ranks run on two agents")
        self.assertEqual(sorted(expand_hostlist(job["nodelist"])), sorted(hosts))
        addresses = {name: node["address"] for name, node in cluster.nodes().items()}
        first_node = next(r["host"] for r in reports if r["nodeid"] == "0")
        for r in reports:
            rank = int(r["rank"])
            with self.subTest(rank=rank):
                # Block distribution: ranks 0-1 on node 0, 2-3 on node 1.
                self.assertEqual(int(r["nodeid"]), rank // 2)
                self.assertEqual(int(r["local"]), rank % 2)
                self.assertEqual(r["torch_rank"], r["rank"])
                self.assertEqual(r["gantry_rank"], r["rank"])
                self.assertEqual(r["torch_local"], r["local"])
                self.assertEqual(r["nnodes"], "2")
                self.assertEqual(r["ntasks"], "4")
                self.assertEqual(r["world"], "4")
                self.assertEqual(r["local_world"], "2")
                self.assertEqual(r["job"], str(job_id))
                self.assertEqual(r["gantry_job"], str(job_id))
                self.assertEqual(r["master"],
                                 f"{addresses[first_node]}:{job['master_port']}")
                self.assertEqual(sorted(expand_hostlist(r["nodelist"])), sorted(hosts))
                self.assertRegex(r["nodelist"], r"^node\[\d\d[-,]\d\d\]$")
        # The two ranks sharing a node agree on it.
        for nodeid in ("0", "1"):
            self.assertEqual(len({r["host"] for r in reports if r["nodeid"] == nodeid}), 1)
        self.assertEqual(job["exit_code"], 0)
        self.assertEqual(len(job["rank_exits"]), 4)

    def test_job_pends_for_resources_then_runs_then_completes(self):
        cluster = self.start_cluster(agents=4)
        wait_script = cluster.write_script("wait.sh", "#!/bin/bash\n" + WAIT_FOR_FILE +
                                           'wait_for_file "release-$SLURM_JOB_ID"\n')
        # Takes every CPU of every agent (their count comes from this
        # machine), so the next job must wait.
        cpus = min(n["cpus"] for n in cluster.nodes().values())
        blocker = cluster.submit(wait_script, "-N", "4", f"--ntasks-per-node={cpus}")
        cluster.wait_job(blocker, "RUNNING")
        job_id = cluster.submit(wait_script, "-N", "2", "--ntasks-per-node=2")
        pending = cluster.wait_job(job_id, "PENDING")
        gantry_cluster.wait_for(lambda: cluster.job(job_id)["reason"] == "Resources",
                                10, "reason Resources")
        self.assertEqual(cluster.job(job_id)["state"], "PENDING")
        self.assertEqual(pending["nodelist"], "")

        cluster.touch(f"release-{blocker}")
        cluster.wait_job(blocker, "COMPLETED")
        running = cluster.wait_job(job_id, "RUNNING")
        self.assertEqual(len(expand_hostlist(running["nodelist"])), 2)
        cluster.touch(f"release-{job_id}")
        done = cluster.wait_job(job_id, "COMPLETED")
        self.assertEqual([e["kind"] for e in done["history"]],
                         ["submitted", "started", "completed"])
        self.assertEqual(done["reason"], "None")

    def test_ranks_rendezvous_on_master_addr_and_master_port(self):
        cluster = self.start_cluster(agents=2)
        script = cluster.write_script("rendezvous.py", RENDEZVOUS_SCRIPT)
        job_id = cluster.submit(script, "-N", "2", "--ntasks-per-node=2")
        job = cluster.wait_job(job_id, "COMPLETED", timeout=40)
        output = cluster.read(f"gantry-{job_id}.out")
        self.assertIn("rendezvous complete: heard ranks [1, 2, 3]", output)
        self.assertEqual(job["exit_code"], 0)

    def test_rank_exiting_3_fails_the_job_and_stops_the_other_ranks(self):
        cluster = self.start_cluster(agents=2)
        script = cluster.write_script("fail.sh", "#!/bin/bash\n" + WAIT_FOR_FILE + """
echo $$ > "pid.$SLURM_JOB_ID.$SLURM_PROCID"
if [ "$SLURM_PROCID" = 3 ]; then
  wait_for_file "pid.$SLURM_JOB_ID.0" && wait_for_file "pid.$SLURM_JOB_ID.1" &&
    wait_for_file "pid.$SLURM_JOB_ID.2"
  exit 3
fi
sleep 60
""")
        # No restarts: the first failure is final (restarts have their own
        # tests).
        job_id = cluster.submit(script, "-N", "2", "--ntasks-per-node=2",
                                "--max-restarts=0")
        pids = cluster.wait_files([f"pid.{job_id}.{r}" for r in range(4)])
        job = cluster.wait_job(job_id, "FAILED")
        self.assertEqual(job["exit_code"], 3)
        self.assertEqual(job["reason"], "NonZeroExitCode")
        self.assertIn("rank 3", job["reason_detail"])
        self.assertIn("exited with code 3", job["reason_detail"])
        survivors = [int(pids[f"pid.{job_id}.{r}"]) for r in range(3)]
        self.assert_pids_gone(survivors, timeout=10, what="ranks 0-2")

    def test_uneven_task_count_puts_the_extra_task_on_the_first_node(self):
        cluster = self.start_cluster(agents=2)
        script = cluster.write_script("layout.sh", """#!/bin/bash
echo "report rank=$SLURM_PROCID nodeid=$SLURM_NODEID local=$SLURM_LOCALID \
local_world=$LOCAL_WORLD_SIZE ntasks=$SLURM_NTASKS per_node=$SLURM_TASKS_PER_NODE \
host=$SLURMD_NODENAME"
""")
        job_id = cluster.submit(script, "-N", "2", "-n", "3")
        job = cluster.wait_job(job_id, "COMPLETED")
        self.assertEqual(job["ntasks"], 3)
        reports = {int(r["rank"]): r for r in parse_reports(
            cluster.read(f"gantry-{job_id}.out"))}
        self.assertEqual(sorted(reports), [0, 1, 2])
        expected = {0: ("0", "0", "2"), 1: ("0", "1", "2"), 2: ("1", "0", "1")}
        for rank, (nodeid, local, local_world) in expected.items():
            with self.subTest(rank=rank):
                r = reports[rank]
                self.assertEqual((r["nodeid"], r["local"], r["local_world"]),
                                 (nodeid, local, local_world))
                self.assertEqual(r["ntasks"], "3")
                self.assertEqual(r["per_node"], "2,1")
        self.assertNotEqual(reports[0]["host"], reports[2]["host"])

    def test_nodelist_of_non_adjacent_nodes_is_a_valid_hostlist(self):
        cluster = self.start_cluster(agents=3)
        cpus = cluster.nodes()["node01"]["cpus"]
        hold = cluster.write_script("hold.sh", "#!/bin/bash\n" + WAIT_FOR_FILE +
                                    'wait_for_file "release-$SLURM_JOB_ID"\n')
        # Fill node01 then node02, and free node01 again: the next
        # two-node job gets node01 and node03.
        first = cluster.submit(hold, f"--ntasks-per-node={cpus}")
        self.assertEqual(cluster.wait_job(first, "RUNNING")["nodelist"], "node01")
        second = cluster.submit(hold, f"--ntasks-per-node={cpus}")
        self.assertEqual(cluster.wait_job(second, "RUNNING")["nodelist"], "node02")
        cluster.touch(f"release-{first}")
        cluster.wait_job(first, "COMPLETED")
        gantry_cluster.wait_for(
            lambda: cluster.nodes()["node01"]["cpus_allocated"] == 0, 10, "node01 free")
        script = cluster.write_script("nodelist.sh",
                                      "#!/bin/bash\necho $SLURM_JOB_NODELIST\n")
        job_id = cluster.submit(script, "-N", "2")
        job = cluster.wait_job(job_id, "COMPLETED")
        self.assertEqual(expand_hostlist(job["nodelist"]), ["node01", "node03"])
        lines = cluster.read(f"gantry-{job_id}.out").split()
        self.assertEqual(len(lines), 2)
        for line in lines:
            self.assertEqual(expand_hostlist(line), ["node01", "node03"], line)
        cluster.touch(f"release-{second}")



class SbatchOptionsTest(ClusterTestCase):
    # Jobs that run to the end on their own and leave nothing behind, so
    # the tests share one cluster.

    @classmethod
    def setUpClass(cls):
        cls.shared = cls.start_class_cluster(agents=2)

    def test_command_line_options_override_sbatch_directives(self):
        cluster = self.shared
        script = cluster.write_script("directives.sh", """#!/bin/bash
#SBATCH --job-name=from-script
#SBATCH -N 1
#SBATCH --output=directive-%j.out
echo "name=$SLURM_JOB_NAME nnodes=$SLURM_NNODES rank=$SLURM_PROCID"
""")
        job_id = cluster.submit(script, "-J", "from-cli", "--nodes=2")
        job = cluster.wait_job(job_id, "COMPLETED")
        self.assertEqual(job["name"], "from-cli")
        self.assertEqual(job["nodes"], 2)
        # A directive the command line did not repeat still applies.
        self.assertEqual(job["output"], cluster.path(f"directive-{job_id}.out"))
        lines = sorted(cluster.read(f"directive-{job_id}.out").splitlines())
        self.assertEqual(lines, ["name=from-cli nnodes=2 rank=0",
                                 "name=from-cli nnodes=2 rank=1"])

    def test_output_and_error_patterns_expand_job_id_and_name(self):
        cluster = self.shared
        script = cluster.write_script("streams.sh", """#!/bin/bash
echo "to stdout"
echo "to stderr" >&2
""")
        job_id = cluster.submit(script, "-J", "streams", "-o", "out-%x-%j.txt",
                                "-e", "err-%x-%j.txt")
        job = cluster.wait_job(job_id, "COMPLETED")
        self.assertEqual(job["output"], cluster.path(f"out-streams-{job_id}.txt"))
        self.assertEqual(job["error"], cluster.path(f"err-streams-{job_id}.txt"))
        self.assertEqual(cluster.read(f"out-streams-{job_id}.txt"), "to stdout\n")
        self.assertEqual(cluster.read(f"err-streams-{job_id}.txt"), "to stderr\n")
        self.assertFalse(os.path.exists(cluster.path(f"gantry-{job_id}.out")))

    def test_chdir_sets_the_working_directory_and_relative_output(self):
        cluster = self.shared
        os.makedirs(cluster.path("elsewhere"))
        script = cluster.write_script("pwd.sh", "#!/bin/bash\npwd\n")
        job_id = cluster.submit(script, "-D", "elsewhere")
        job = cluster.wait_job(job_id, "COMPLETED")
        self.assertEqual(job["working_dir"], cluster.path("elsewhere"))
        # The default output file lands in the working directory.
        self.assertEqual(cluster.read("elsewhere", f"gantry-{job_id}.out"),
                         cluster.path("elsewhere") + "\n")

    def test_parsable_prints_only_the_job_id(self):
        cluster = self.shared
        script = cluster.write_script("true.sh", "#!/bin/bash\ntrue\n")
        plain = cluster.cli("batch", script).stdout
        match = re.fullmatch(r"Submitted batch job (\d+)\n", plain)
        self.assertIsNotNone(match, plain)
        parsable = cluster.cli("batch", "--parsable", script).stdout
        self.assertEqual(parsable, f"{int(match.group(1)) + 1}\n")
        # --parsable is also honoured as a directive.
        directive = cluster.write_script(
            "parsable.sh", "#!/bin/bash\n#SBATCH --parsable\ntrue\n")
        self.assertEqual(cluster.cli("batch", directive).stdout,
                         f"{int(match.group(1)) + 2}\n")

    def test_script_arguments_are_passed_through(self):
        cluster = self.shared
        script = cluster.write_script("args.sh", """#!/bin/bash
echo "argc=$#"
for arg in "$@"; do echo "arg=[$arg]"; done
""")
        # Words after the script belong to it, even ones that look like
        # options of gantry batch.
        job_id = cluster.submit(script, "-J", "args",
                                args=("first", "two words", "--nodes=9", "-o", ""))
        cluster.wait_job(job_id, "COMPLETED")
        self.assertEqual(cluster.read(f"gantry-{job_id}.out").splitlines(),
                         ["argc=5", "arg=[first]", "arg=[two words]",
                          "arg=[--nodes=9]", "arg=[-o]", "arg=[]"])

    def test_script_can_come_from_standard_input(self):
        cluster = self.shared
        result = cluster.cli("batch", "--parsable", "-J", "piped",
                             input="#!/bin/bash\necho piped $SLURM_JOB_NAME\n")
        job_id = int(result.stdout)
        cluster.wait_job(job_id, "COMPLETED")
        self.assertEqual(cluster.read(f"gantry-{job_id}.out"), "piped piped\n")

    def test_job_name_defaults_to_the_script_file_name_as_in_sbatch(self):
        # sbatch: "the default job name is the name of the batch script";
        # scripts and -o patterns (%x) rely on it.
        cluster = self.shared
        script = cluster.write_script("train_model.sh",
                                      "#!/bin/bash\necho $SLURM_JOB_NAME\n")
        job_id = cluster.submit(script, "-o", "%x-%j.out")
        job = cluster.wait_job(job_id, "COMPLETED")
        self.assertEqual(job["name"], "train_model.sh")
        self.assertEqual(cluster.read(f"train_model.sh-{job_id}.out"), "train_model.sh\n")

    def test_rank_killed_by_a_signal_fails_the_job_with_that_signal(self):
        cluster = self.shared
        script = cluster.write_script("selfkill.sh", "#!/bin/bash\nkill -KILL $$\n")
        job_id = cluster.submit(script, "--max-restarts=0")
        job = cluster.wait_job(job_id, "FAILED")
        self.assertEqual(job["reason"], "Signal")
        self.assertEqual(job["exit_signal"], 9)
        self.assertIn("signal 9", job["reason_detail"])


if __name__ == "__main__":
    gantry_cluster.main()
