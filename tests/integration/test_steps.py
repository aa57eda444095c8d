#!/usr/bin/env python3
"""Batch scripts as sbatch runs them: once, on the first node of the
allocation, starting steps across it with `gantry run` (and the srun name):
task layout and environment, -N/-n/-w/--label, output back to the caller
(so $(srun ...) captures it), exit status, --kill-on-bad-exit and --wait,
bad step requests, a node lost between steps, and a cancelled job's step
tasks stopped on every node."""

import os
import time

import gantry_cluster
from gantry_cluster import ClusterTestCase, pid_alive

MAIN_SCRIPT = """#!/bin/bash
#SBATCH -N 2 --ntasks-per-node=2 -o steps.out -e steps.err
echo "batch on $SLURMD_NODENAME procid=$SLURM_PROCID ntasks=$SLURM_NTASKS"
srun --label bash -c 'echo "task $SLURM_PROCID/$SLURM_NTASKS on $SLURMD_NODENAME local=$SLURM_LOCALID node=$SLURM_NODEID step=$SLURM_STEP_ID world=$WORLD_SIZE rank=$RANK"'
echo "all-tasks exit=$?"
head=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)
last=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | tail -n1)
ip=$(srun --nodes=1 --ntasks=1 -w "$head" hostname --ip-address)
echo "head=$head ip=[$ip] expected=[$(hostname --ip-address)]"
srun -N1 -n1 -w "$last" bash -c 'echo "single on $SLURMD_NODENAME ntasks=$SLURM_NTASKS"'
gantry run --ntasks-per-node=1 bash -c 'echo "per-node $SLURM_PROCID on $SLURMD_NODENAME"'
srun -n 3 bash -c 'echo "failing $SLURM_PROCID"; exit $SLURM_PROCID'
echo "failing exit=$?"
srun -n1 bash -c 'echo to-stderr >&2'
captured=$(srun -n1 echo captured-output)
echo "captured=[$captured]"
exit 0
"""


class StepTest(ClusterTestCase):
    def setUp(self):
        self.cluster = self.start_cluster(agents=2)
        self.cluster.add_slurm_commands()

    def submit(self, text, *options):
        script = self.cluster.write_script("job.sh", text)
        return self.cluster.submit(script, *options, per_task=False)

    def test_script_runs_once_and_steps_span_the_allocation(self):
        cluster = self.cluster
        job_id = self.submit(MAIN_SCRIPT)
        job = cluster.wait_job(job_id, "COMPLETED", timeout=60)
        out = cluster.read("steps.out")
        err = cluster.read("steps.err")
        lines = out.splitlines()
        batch = [line for line in lines if line.startswith("batch on")]
        self.assertEqual(batch, ["batch on node01 procid=0 ntasks=4"], out)

        tasks = sorted(line for line in lines if ": task " in line)
        self.assertEqual(len(tasks), 4, out)
        for task in range(4):
            node = "node01" if task < 2 else "node02"
            expected = (f"{task}: task {task}/4 on {node} local={task % 2} "
                        f"node={task // 2} step=0 world=4 rank={task}")
            self.assertIn(expected, tasks, out)
        self.assertIn("all-tasks exit=0", lines, out)

        head = [line for line in lines if line.startswith("head=")]
        self.assertEqual(len(head), 1, out)
        ip = head[0].split("ip=[")[1].split("]")[0]
        expected_ip = head[0].split("expected=[")[1].split("]")[0]
        self.assertTrue(head[0].startswith("head=node01 "), out)
        self.assertEqual(ip, expected_ip, out)
        self.assertIn("single on node02 ntasks=1", lines, out)
        self.assertEqual(
            sorted(line for line in lines if line.startswith("per-node")),
            ["per-node 0 on node01", "per-node 1 on node02"], out)

        self.assertEqual(
            sorted(line for line in lines
                   if line.startswith("failing ") and "exit=" not in line),
            ["failing 0", "failing 1", "failing 2"], out)
        # srun's status: the highest task exit code; each failure named.
        self.assertIn("failing exit=2", lines, out)
        self.assertIn("task 1: Exited with exit code 1", err)
        self.assertIn("task 2: Exited with exit code 2", err)
        self.assertIn("to-stderr", err.splitlines())
        self.assertNotIn("to-stderr", out)
        self.assertIn("captured=[captured-output]", lines, out)

        # gantry job lists the steps with their exit statuses.
        steps = {s["id"]: s for s in job["steps"]}
        self.assertEqual(len(steps), 7, job["steps"])
        self.assertEqual(steps[1]["exit_code"], 0)
        self.assertEqual(steps[1]["tasks"], 4)
        self.assertEqual(steps[5]["exit_code"], 2)

    def test_step_commands_are_found_as_srun_finds_them(self):
        """The task's own PATH, a path relative to the working directory,
        a script without #! (run by /bin/sh, as execvp does), and the
        errors for a missing and a non-executable command."""
        cluster = self.cluster
        tools = cluster.path("tools")
        os.makedirs(tools, exist_ok=True)
        with open(os.path.join(tools, "gantry-probe"), "w") as probe:
            probe.write("#!/bin/sh\necho \"probe $SLURM_PROCID $1\"\n")
        os.chmod(os.path.join(tools, "gantry-probe"), 0o755)
        with open(os.path.join(cluster.work_dir, "no-shebang.sh"),
                  "w") as f:
            f.write("echo \"no-shebang $SLURM_PROCID\"\n")
        os.chmod(os.path.join(cluster.work_dir, "no-shebang.sh"), 0o755)
        with open(os.path.join(cluster.work_dir, "not-executable.sh"),
                  "w") as f:
            f.write("#!/bin/sh\necho never\n")
        job_id = self.submit(f"""#!/bin/bash
#SBATCH -N 2 --ntasks-per-node=1 -o found.out -e found.err
PATH={tools}:$PATH srun gantry-probe arg1
echo "probe exit=$?"
srun ./no-shebang.sh
echo "no-shebang exit=$?"
srun gantry-no-such-command
echo "missing exit=$?"
srun ./not-executable.sh
echo "not-executable exit=$?"
""")
        cluster.wait_job(job_id, "COMPLETED", timeout=60)
        out = cluster.read("found.out")
        err = cluster.read("found.err")
        lines = out.splitlines()
        self.assertEqual(sorted(l for l in lines if l.startswith("probe ")
                                and "exit=" not in l),
                         ["probe 0 arg1", "probe 1 arg1"], out)
        self.assertIn("probe exit=0", lines, out)
        self.assertEqual(sorted(l for l in lines
                                if l.startswith("no-shebang ")
                                and "exit=" not in l),
                         ["no-shebang 0", "no-shebang 1"], out)
        self.assertIn("no-shebang exit=0", lines, out)
        self.assertIn("missing exit=127", lines, out)
        self.assertIn("gantry: gantry-no-such-command: command not found",
                      err)
        self.assertIn("not-executable exit=127", lines, out)
        self.assertIn("gantry: ./not-executable.sh: permission denied", err)
        self.assertNotIn("never", out)

    def test_kill_on_bad_exit_and_wait_stop_the_rest(self):
        cluster = self.cluster
        job_id = self.submit("""#!/bin/bash
#SBATCH -N 2 --ntasks-per-node=1 -o limits.out
start=$SECONDS
srun -K bash -c '[ "$SLURM_PROCID" = 1 ] && exit 3; sleep 60'
echo "kill-on-bad-exit exit=$? after=$((SECONDS - start))"
start=$SECONDS
srun --wait=1 bash -c '[ "$SLURM_PROCID" = 0 ] && exit 0; sleep 60'
echo "wait exit=$? after=$((SECONDS - start))"
""")
        cluster.wait_job(job_id, "COMPLETED", timeout=60)
        out = cluster.read("limits.out")
        results = {}
        for line in out.splitlines():
            if " exit=" in line:
                name, rest = line.split(" exit=")
                code, after = rest.split(" after=")
                results[name] = (int(code), int(after))
        self.assertEqual(results["kill-on-bad-exit"][0], 3, out)
        self.assertLess(results["kill-on-bad-exit"][1], 20, out)
        self.assertEqual(results["wait"][0], 128 + 15, out)
        self.assertLess(results["wait"][1], 20, out)

    def test_bad_step_requests_are_refused(self):
        cluster = self.cluster
        job_id = self.submit("""#!/bin/bash
#SBATCH -N 2 -o bad.out -e bad.err
srun -N 5 true; echo "too-many-nodes exit=$?"
srun -w node09 true; echo "foreign-node exit=$?"
srun -N 2 -n 1 true; echo "fewer-tasks exit=$?"
srun --bogus true; echo "unknown-option exit=$?"
srun; echo "no-command exit=$?"
srun --gpus-per-task=1 true; echo "no-gpus exit=$?"
""")
        cluster.wait_job(job_id, "COMPLETED", timeout=60)
        out = cluster.read("bad.out")
        err = cluster.read("bad.err")
        for name in ("too-many-nodes", "foreign-node", "fewer-tasks",
                     "unknown-option", "no-command", "no-gpus"):
            self.assertIn(f"{name} exit=1", out.splitlines(), out + err)
        self.assertIn("asks for 5 nodes; job", err)
        self.assertIn("node node09 is not in job", err)
        self.assertIn("fewer than the 2 nodes", err)
        self.assertIn("unrecognized option '--bogus'", err)
        self.assertIn("no command given", err)
        self.assertIn("GPU(s)", err)
        # --jobid of a job that is not running: no step, no allocation.
        result = cluster.cli("run", "--jobid", str(job_id), "true",
                             check=False)
        self.assertEqual(result.returncode, 1)
        self.assertIn("steps start only inside a running job", result.stderr)

    def test_node_lost_between_steps_fails_the_job(self):
        cluster = self.cluster
        job_id = self.submit("""#!/bin/bash
#SBATCH -N 2 -o lost.out
srun hostname > /dev/null
echo done > step-done
sleep 120
""", "--max-restarts", "0")
        cluster.wait_files(["step-done"], timeout=30)
        # node02 runs nothing now, but it is part of the job.
        cluster.kill_agent("node02")
        job = cluster.wait_job(job_id, "NODE_FAIL", timeout=30)
        self.assertIn("node02", job["reason_detail"])

    def test_cancel_stops_step_tasks_on_every_node(self):
        cluster = self.cluster
        job_id = self.submit("""#!/bin/bash
#SBATCH -N 2 --ntasks-per-node=1 -o cancel.out
srun bash -c 'echo $$ > task-$SLURM_PROCID.pid; sleep 120'
""")
        pids = cluster.wait_files(["task-0.pid", "task-1.pid"], timeout=30)
        pids = [int(pid) for pid in pids.values()]
        cluster.cli("cancel", str(job_id))
        cluster.wait_job(job_id, "CANCELLED", timeout=30)
        self.assert_pids_gone(pids, timeout=15, what="step tasks")


if __name__ == "__main__":
    gantry_cluster.main()
