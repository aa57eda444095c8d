#!/usr/bin/env python3
"""Choosing nodes and talking to the job near its end, as sbatch does:
-w/--nodelist, -x/--exclude and -C/--constraint (node features from
gantry-agent --features) and GPU types (--gres=gpu:h100:2, matched with
the GPU models of real servers' hwloc XML, named from pci.ids where a file
has only PCI ids) place jobs where they say and refuse what can never hold,
a GPU type no node has and nodes the restrictions leave too few of at
submit; sinfo -o prints the nodes' features; --signal warns a job
before its time limit and scancel --signal [-b|-f] reaches the steps, the
batch script or both; --open-mode decides whether output files start
afresh."""

import os
import unittest

import gantry_cluster
from gantry_cluster import ClusterTestCase

FEATURES = {
    "node01": "a100,ib,rack1",
    "node02": "a100,rack2",
    "node03": "h100,ib,rack2",
}


class NodeSelectionTest(ClusterTestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster = cls.start_class_cluster(
            agents=3,
            agent_args={name: ["--features", features]
                        for name, features in FEATURES.items()})

    def run_on(self, *options, nodes_expected):
        cluster = self.cluster
        script = cluster.write_script("where.sh", "#!/bin/bash\ntrue\n")
        job_id = cluster.submit(script, *options)
        job = cluster.wait_job(job_id, "COMPLETED")
        self.assertEqual(
            gantry_cluster.expand_hostlist(job["nodelist"]), nodes_expected,
            f"options {options}")
        return job

    def test_nodelist_gets_exactly_the_listed_nodes(self):
        job = self.run_on("-w", "node[02-03]", nodes_expected=["node02", "node03"])
        self.assertEqual(job["required_nodes"], ["node02", "node03"])
        # --nodes below the list is raised to it, with a warning.
        cluster = self.cluster
        script = cluster.write_script("raise.sh", "#!/bin/bash\ntrue\n")
        result = cluster.cli("batch", "--parsable", "-N", "1", "-w",
                             "node01,node03", script)
        self.assertIn("raised to 2", result.stderr)
        job = cluster.wait_job(int(result.stdout), "COMPLETED")
        self.assertEqual(gantry_cluster.expand_hostlist(job["nodelist"]),
                         ["node01", "node03"])
        detail = cluster.cli("job", result.stdout.strip()).stdout
        self.assertIn("ReqNodeList=node[01,03]", detail)

    def test_exclude_keeps_the_job_off_nodes(self):
        self.run_on("-N", "2", "-x", "node01", nodes_expected=["node02", "node03"])

    def test_constraint_matches_node_features(self):
        self.run_on("-C", "a100&ib", nodes_expected=["node01"])
        self.run_on("-C", "h100|rack1", "-N", "2",
                    nodes_expected=["node01", "node03"])
        # Matching OR: both nodes from the same rack (only rack2 has two).
        self.run_on("-N", "2", "--constraint=[rack1|rack2]",
                    nodes_expected=["node02", "node03"])

    def test_impossible_requests_wait_or_are_refused(self):
        cluster = self.cluster
        script = cluster.write_script("never.sh", "#!/bin/bash\ntrue\n")
        # As sbatch: what the restrictions leave could never hold the job
        # (one node has h100; node01 has none; two nodes are left).
        for options in (["-N", "2", "-C", "h100"],
                        ["-w", "node01", "-C", "h100"],
                        ["-N", "3", "-x", "node02"]):
            result = cluster.cli("batch", *options, script, check=False)
            self.assertNotEqual(result.returncode, 0, options)
            self.assertIn("requested node configuration is not available",
                          result.stderr, options)
            self.assertIn("--constraint", result.stderr, options)
        # One that could run is queued; squeue %f shows what it asked.
        job_id = cluster.submit(script, "-H", "-C", "h100")
        job = cluster.job(job_id)
        self.assertEqual((job["state"], job["reason"]),
                         ("PENDING", "JobHeldUser"))
        queue = cluster.cli("queue", "-j", str(job_id), "-o", "%i %f").stdout
        self.assertIn(f"{job_id} h100", queue)
        cluster.cli("cancel", str(job_id))

        before = cluster.cli_json("queue", "--all")
        for options, message in [
                (["-w", "node09"], "node09 is unknown"),
                (["-w", "node01", "-x", "node[01-02]"], "both in --nodelist"),
                (["-C", "a100&"], "feature name is missing"),
                (["-C", "a100*2"], "counts"),
                (["-w", "node[3-1]"], "--nodelist"),
                (["--signal=USR9"], "invalid signal"),
                (["--open-mode=overwrite"], "append or truncate")]:
            result = cluster.cli("batch", *options, script, check=False)
            self.assertNotEqual(result.returncode, 0, options)
            self.assertIn(message, result.stderr, options)
        self.assertEqual(cluster.cli_json("queue", "--all"), before)

    def test_sinfo_format_shows_features(self):
        cluster = self.cluster
        lines = cluster.cli("nodes", "-N", "-o", "%N|%f|%t|%c").stdout.splitlines()
        self.assertEqual(lines[0], "NODELIST|AVAIL_FEATURES|STATE|CPUS")
        rows = {line.split("|")[0]: line.split("|") for line in lines[1:]}
        for name, features in FEATURES.items():
            self.assertEqual(rows[name][1], features)
            self.assertIn(rows[name][2], ("idle", "mix", "alloc"))
        # Without -N, nodes whose fields print the same share a row.
        summary = cluster.cli("nodes", "-h", "-o", "%P %.3D %t").stdout
        self.assertRegex(summary, r"main\* +3 idle")
        # A letter sinfo does not know is left out, with sinfo's message.
        odd = cluster.cli("nodes", "-h", "-o", "%D|%~|")
        self.assertEqual(odd.stdout, "3||\n")
        self.assertIn("Invalid node format specification: ~", odd.stderr)
        node = cluster.cli_json("nodes", "node03")
        self.assertEqual(node["features"], ["h100", "ib", "rack2"])


SHARED_HWLOC = gantry_cluster.shared_data("hwloc")
GPU_SERVERS = {
    "node01": "dell-xe8640-4xH100-ndr.flux-ipa20.v2.xml",  # 4x H100
    "node02": "ibm-power9-4xV100-2xCX5.flux-sierra.v1.xml",  # 4x V100
    # 4x A100 known only by PCI ids (10de:20b0): named from pci.ids.
    "node03": "meluxina-gpu-4xA100-2xHDR.psmgmt-mel2001.v1.xml",
}
# Where Debian's pci.ids package puts the database (the agent's default).
SYSTEM_PCI_IDS = "/usr/share/misc/pci.ids"


class GpuTypeTest(ClusterTestCase):
    """--gres=gpu:TYPE:N on nodes described by real servers' hwloc XML:
    placed by type, named from pci.ids where the file has only PCI ids,
    refused at submit (and on scontrol update) where no node has it."""

    @classmethod
    def setUpClass(cls):
        missing = [xml for xml in GPU_SERVERS.values()
                   if not os.path.exists(os.path.join(SHARED_HWLOC, xml))]
        if missing:
            raise unittest.SkipTest(
                f"{SHARED_HWLOC} lacks {missing}: the GPU type test "
                "needs the real servers' topologies")
        if not os.path.exists(SYSTEM_PCI_IDS):
            raise unittest.SkipTest(
                f"{SYSTEM_PCI_IDS} is absent (apt-get install pci.ids): the "
                "A100 node is known only by its PCI ids")
        cls.cluster = cls.start_class_cluster(
            agents=3,
            agent_args={name: ["--hwloc-xml", os.path.join(SHARED_HWLOC, xml)]
                        for name, xml in GPU_SERVERS.items()})
        cls.cluster.add_slurm_commands()

    def test_gpu_type_picks_the_model(self):
        cluster = self.cluster
        script = cluster.write_script("gpu.sh", "#!/bin/bash\ntrue\n")
        for options, node in [(["--gres=gpu:h100:2"], "node01"),
                              (["--gpus-per-node=V100:1"], "node02"),
                              (["--gres=gpu:a100:4"], "node03"),
                              (["--gres=gpu:2"], None)]:
            job_id = cluster.submit(script, *options)
            job = cluster.wait_job(job_id, "COMPLETED")
            if node:
                self.assertEqual(job["nodelist"], node, options)
        node = cluster.cli_json("nodes", "node03")
        models = {gpu["model"] for gpu in node["gpus"]}
        self.assertEqual(models, {"GA100 [A100 SXM4 40GB]"})
        # sinfo and scontrol name the types that select each node.
        gres = cluster.sh("sinfo -N -h -o '%N %G'").stdout.split("\n")
        self.assertEqual(sorted(filter(None, gres)),
                         ["node01 gpu:h100:4", "node02 gpu:v100:4",
                          "node03 gpu:a100:4"])
        self.assertIn("Gres=gpu:a100:4",
                      cluster.sh("scontrol show node node03").stdout)

    def test_a_type_no_node_has_is_refused_at_submit(self):
        cluster = self.cluster
        script = cluster.write_script("gpu.sh", "#!/bin/bash\ntrue\n")
        before = cluster.cli_json("queue", "--all")
        expected = ("no node in partition main has GPU type mi250x "
                    "(GPU types there: a100, h100, v100)")
        for command in [["batch", "--gres=gpu:mi250x:1", script],
                        ["run", "--gres=gpu:mi250x:1", "true"]]:
            result = cluster.cli(*command, check=False)
            self.assertNotEqual(result.returncode, 0, command)
            self.assertIn(expected, result.stderr, command)
        sbatch = cluster.sh(f"sbatch --gres=gpu:a10:1 {script}")
        self.assertNotEqual(sbatch.returncode, 0)
        self.assertIn("has GPU type a10 (GPU types there", sbatch.stderr)
        self.assertEqual(cluster.cli_json("queue", "--all"), before)

    def test_update_of_the_gres_is_checked_too(self):
        cluster = self.cluster
        script = cluster.write_script("gpu.sh", "#!/bin/bash\ntrue\n")
        job_id = cluster.submit(script, "--hold", "--gres=gpu:h100:1")
        refused = cluster.sh(
            f"scontrol update JobId={job_id} Gres=gpu:mi250x:1")
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn("no node in partition main has GPU type mi250x",
                      refused.stderr)
        self.assertEqual(cluster.job(job_id)["gpu_type"], "h100")
        update = cluster.sh(
            f"scontrol update JobId={job_id} TresPerNode=gres/gpu:a100:2")
        self.assertEqual(update.returncode, 0, update.stderr)
        cluster.cli("release", str(job_id))
        job = cluster.wait_job(job_id, "COMPLETED")
        self.assertEqual(job["nodelist"], "node03")
        self.assertEqual((job["gpu_type"], job["gpus_per_node"]), ("a100", 2))


class JobSignalsTest(ClusterTestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster = cls.start_class_cluster(agents=2)
        cls.cluster.add_slurm_commands()

    def test_signal_to_the_batch_script_before_the_limit(self):
        cluster = self.cluster
        marker = cluster.path("batch-signal")
        script = cluster.write_script("trap.sh", f"""#!/bin/bash
#SBATCH --time=0:12
#SBATCH --signal=B:USR1@8
start=$(date +%s)
trap 'echo "USR1 after $(( $(date +%s) - start )) s" > {marker}; exit 0' USR1
sleep 60 &
wait
""")
        job_id = cluster.submit(script, per_task=False)
        job = cluster.wait_job(job_id, "COMPLETED", "TIMEOUT", timeout=30)
        self.assertEqual(job["state"], "COMPLETED", job)
        with open(marker) as f:
            seconds = int(f.read().split()[2])
        # 12 s limit, warned 8 s before: about 4 s in.
        self.assertGreaterEqual(seconds, 3)
        self.assertLessEqual(seconds, 7)

    def test_signal_without_b_reaches_the_step_tasks_not_the_script(self):
        cluster = self.cluster
        out = cluster.path("steps-signal.out")
        script = cluster.write_script("steps.sh", f"""#!/bin/bash
#SBATCH -N 2 --time=0:10 --signal=USR2@7 -o {out}
trap 'echo "script got USR2"' USR2
srun bash -c 'trap "echo task $SLURM_PROCID got USR2; exit 0" USR2; sleep 60 & wait'
echo "step ended with $?"
""")
        job_id = cluster.submit(script, per_task=False)
        job = cluster.wait_job(job_id, "COMPLETED", "TIMEOUT", "FAILED",
                               timeout=30)
        with open(out) as f:
            text = f.read()
        self.assertEqual(job["state"], "COMPLETED", text)
        self.assertIn("task 0 got USR2", text)
        self.assertIn("task 1 got USR2", text)
        self.assertIn("step ended with 0", text)
        self.assertNotIn("script got USR2", text)

    def test_scancel_signal_reaches_steps_batch_or_both(self):
        cluster = self.cluster
        for flags, expected in [((), ["task got USR1"]),
                                (("-b",), ["script got USR1"]),
                                (("-f",), ["script got USR1", "task got USR1"])]:
            out = cluster.path(f"scancel{''.join(flags)}.out")
            started = cluster.path(f"started{''.join(flags)}")
            script = cluster.write_script("s.sh", f"""#!/bin/bash
#SBATCH -o {out}
trap 'echo "script got USR1"' USR1
srun bash -c 'trap "echo task got USR1; exit 0" USR1; echo up > {started}; sleep 30 & wait' &
wait
sleep 2 & wait
""")
            job_id = cluster.submit(script, per_task=False)
            cluster.wait_files([started])
            cluster.cli("cancel", "--signal=USR1", *flags, str(job_id))
            cluster.wait_job(job_id, "COMPLETED", "FAILED", "CANCELLED",
                             timeout=60)
            with open(out) as f:
                lines = sorted(line for line in f.read().splitlines()
                               if "got USR1" in line)
            self.assertEqual(lines, expected, flags)
        bad = cluster.cli("cancel", "-b", "1", check=False)
        self.assertIn("give --signal too", bad.stderr)

    def test_open_mode_truncates_by_default_and_appends_when_asked(self):
        cluster = self.cluster
        for mode, keeps_old in [(None, False), ("append", True)]:
            out = cluster.path(f"open-{mode}.out")
            with open(out, "w") as f:
                f.write("old content\n")
            script = cluster.write_script("o.sh", "#!/bin/bash\necho new\n")
            options = ["-o", out] + ([f"--open-mode={mode}"] if mode else [])
            job_id = cluster.submit(script, *options, per_task=False)
            cluster.wait_job(job_id, "COMPLETED")
            with open(out) as f:
                text = f.read()
            self.assertIn("new", text)
            self.assertEqual("old content" in text, keeps_old, (mode, text))


if __name__ == "__main__":
    gantry_cluster.main()
