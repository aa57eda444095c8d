#!/usr/bin/env python3
"""Steps share their job's allocation as Slurm's do: concurrent steps are
bounded by the job's CPUs and GPUs on each node (--exact/--exclusive packs
small steps, a step that does not fit waits with Slurm's message, --overlap
shares everything, one that could never fit is refused at once); srun
-o/-e filename patterns; --export lists."""

import os
import re

import gantry_cluster
from gantry_cluster import ClusterTestCase

class StepSharingTest(ClusterTestCase):
    @classmethod
    def setUpClass(cls):
        # Nodes with 4 GPUs and many CPUs (the job's share bounds its steps).
        cls.cluster = cls.start_class_cluster(
            agents=2, agent_args=gantry_cluster.gpu_node_agent_args(
                "node01", "node02"))
        cls.cluster.add_slurm_commands()

    def starts(self, text):
        """{step label: start time} from 'start LABEL TIME' lines."""
        return {m.group(1): float(m.group(2))
                for m in re.finditer(r"start (\S+) ([\d.]+)", text)}

    def test_exact_steps_pack_and_a_fifth_waits(self):
        # 4 CPUs in the job: four one-CPU steps at once, the fifth waits.
        # Each holds its CPU for 4 s: the first four overlap (all started
        # before the first ends) and the fifth starts only once one ended,
        # with room for a loaded machine (two suites beside each other
        # stretched the four starts over 2.3 s).
        result = self.sh(
            "salloc -n4 bash -c 'for i in 1 2 3 4 5; do "
            "srun --exact -n1 bash -c \"echo start $i \\$(date +%s.%N); "
            "sleep 4\" 2> step-$i.err & sleep 0.2; done; wait; "
            "cat step-*.err >&2'")
        self.assertEqual(result.returncode, 0, result.stderr)
        starts = self.starts(result.stdout)
        self.assertEqual(sorted(starts), ["1", "2", "3", "4", "5"],
                         result.stdout)
        first = min(starts[s] for s in "1234")
        self.assertLess(max(starts[s] for s in "1234") - first, 3.5)
        self.assertGreater(starts["5"] - first, 3.9, result.stdout)
        job_id = re.search(r"Granted job allocation (\d+)",
                           result.stderr).group(1)
        waited = self.cluster.read("step-5.err")
        self.assertIn(f"srun: Job {job_id} step creation temporarily "
                      "disabled, retrying (Requested nodes are busy)", waited)
        self.assertIn(f"srun: Step created for StepId={job_id}.4", waited)
        for i in "1234":
            self.assertEqual(self.cluster.read(f"step-{i}.err"), "")

    def test_whole_steps_wait_overlap_does_not_never_fitting_refused(self):
        result = self.sh(
            "salloc -N1 -n2 bash -c '"
            "srun -n1 bash -c \"echo start A \\$(date +%s.%N); sleep 2\" & "
            "sleep 0.5; "
            "srun --overlap -n1 bash -c \"echo start O \\$(date +%s.%N)\"; "
            "srun -n1 bash -c \"echo start B \\$(date +%s.%N)\" 2> b.err; "
            "wait; srun --exact -n1 -c 64 true; echo never=$?'")
        self.assertEqual(result.returncode, 0, result.stderr)
        starts = self.starts(result.stdout)
        # A step holds all of the job's CPUs on its node by default.
        self.assertLess(starts["O"] - starts["A"], 1.5, result.stdout)
        self.assertGreater(starts["B"] - starts["A"], 1.5, result.stdout)
        self.assertIn("step creation temporarily disabled",
                      self.cluster.read("b.err"))
        self.assertIn("never=1", result.stdout)
        self.assertIn("64 CPU(s) on node01 but the job holds 2 CPU(s)",
                      result.stderr)

    def test_gpu_steps_get_distinct_gpus(self):
        result = self.sh(
            "salloc -N1 -n2 --gpus-per-node=2 bash -c '"
            "for s in A B C; do srun --exact -n1 --gpus-per-task=1 bash -c "
            "\"echo start $s \\$(date +%s.%N) gpus=\\$CUDA_VISIBLE_DEVICES; "
            "sleep 2\" & sleep 0.3; done; wait'")
        self.assertEqual(result.returncode, 0, result.stderr)
        gpus = dict(re.findall(r"start (\S) \S+ gpus=(\S+)", result.stdout))
        starts = self.starts(result.stdout)
        self.assertEqual(sorted(gpus), ["A", "B", "C"], result.stdout)
        self.assertNotEqual(gpus["A"], gpus["B"])
        self.assertGreater(starts["C"] - starts["A"], 1.5, result.stdout)
        self.assertIn("Requested nodes are busy", result.stderr)

    def test_output_patterns(self):
        result = self.sh(
            "srun -N2 -n4 -J pat -o 'out-%j-%s-%t-%N-%n-%x-%u.txt' "
            "-e 'err-%J-%3t.txt' bash -c "
            "'echo out $SLURM_PROCID; echo err $SLURM_PROCID >&2; "
            "echo $SLURM_JOB_ID > job-$SLURM_PROCID'")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, "")
        job_id = self.cluster.read("job-0").strip()
        user = os.environ.get("USER") or "root"
        for task in range(4):
            node = f"node0{1 + task // 2}"
            out = (f"out-{job_id}-0-{task}-{node}-{task // 2}-pat-"
                   f"{user}.txt")
            self.assertEqual(self.cluster.read(out), f"out {task}\n")
            self.assertEqual(
                self.cluster.read(f"err-{job_id}.0-{task:03d}.txt"),
                f"err {task}\n")
        # One file for the step; only task 1's output; none at all.
        result = self.sh("srun -n3 -o 'all-%j.txt' bash -c "
                         "'echo $SLURM_PROCID; echo $SLURM_JOB_ID > last'")
        self.assertEqual(result.returncode, 0, result.stderr)
        job_id = self.cluster.read("last").strip()
        self.assertEqual(
            sorted(self.cluster.read(f"all-{job_id}.txt").split()),
            ["0", "1", "2"])
        result = self.sh("srun -n3 -o 1 bash -c 'echo task $SLURM_PROCID'")
        self.assertEqual(result.stdout, "task 1\n", result.stderr)
        result = self.sh("srun -n2 -o none bash -c 'echo task $SLURM_PROCID'")
        self.assertEqual(result.stdout, "")

    def test_export(self):
        env = {"BAR": "kept"}
        show = "bash -c 'echo FOO=$FOO BAR=$BAR'"
        result = self.sh(f"srun -n1 --export=ALL,FOO=1 {show}", env=env)
        self.assertEqual(result.stdout, "FOO=1 BAR=kept\n", result.stderr)
        result = self.sh(f"srun -n1 --export=NONE {show}", env=env)
        self.assertEqual(result.stdout, "FOO= BAR=\n", result.stderr)
        result = self.sh(f"srun -n1 --export=BAR,FOO=2 {show}", env=env)
        self.assertEqual(result.stdout, "FOO=2 BAR=kept\n", result.stderr)
        result = self.sh(f"srun -n1 --export=1BAD=x {show}", env=env)
        self.assertEqual(result.returncode, 1)
        self.assertIn("srun: error: --export=1BAD=x", result.stderr)


if __name__ == "__main__":
    gantry_cluster.main()
