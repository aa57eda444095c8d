#!/usr/bin/env python3
"""Tools nobody on the team wrote, driving Gantry through Slurm's names as
they drive Slurm: Snakemake's --slurm executor (Debian's snakemake), a
shell script of the kind sites write around sbatch/squeue/sacct, and bash
completion of the Slurm names against a live cluster.

Each tool gets the Slurm names (links to gantry) first on its PATH, as the
gantry-slurm-compat package installs them, so a Slurm client installed on
the machine is never the one that answers."""

import os
import shutil
import signal
import subprocess
import time

import gantry_cluster
from gantry_cluster import ClusterTestCase, wait_for

# Every Slurm name a client here calls.
CLIENT_NAMES = ("sbatch", "srun", "squeue", "scancel", "sinfo", "scontrol",
                "sacct")

SNAKEFILE = """
SAMPLES = ["a", "b", "c"]

rule all:
    input: "summary.txt"

rule count:
    output: "counts/{sample}.txt"
    shell: "echo {wildcards.sample} job=$SLURM_JOB_ID > {output}"

rule summarize:
    input: expand("counts/{sample}.txt", sample=SAMPLES)
    output: "summary.txt"
    shell: "cat {input} > {output}"
"""

SLOW_SNAKEFILE = """
rule all:
    input: expand("slow/{n}.txt", n=[1, 2])

rule slow:
    output: "slow/{n}.txt"
    shell: "sleep 120; touch {output}"
"""

# What a site's pipeline script does around Slurm: submit, poll squeue
# until its jobs are no longer active, then read their fate from sacct -P.
SHELL_CLIENT = r"""#!/bin/bash
set -euo pipefail
ok=$(sbatch --parsable -J shell-ok --wrap 'echo fine')
bad=$(sbatch --parsable -J shell-bad --wrap 'exit 3')
ids="$ok,$bad"
# squeue -j lists a job that just ended too (for MinJobAge), as Slurm's.
for _ in $(seq 300); do
  left=$(squeue -h -o '%i %T' -j "$ids" |
         grep -cE ' (PENDING|RUNNING|CONFIGURING|COMPLETING)$' || true)
  [ "$left" -eq 0 ] && break
  sleep 0.2
done
[ "$left" -eq 0 ] || { echo "jobs still active" >&2; exit 1; }
# A finished job leaves squeue before sacct has its end: poll sacct too,
# as careful scripts do.
for _ in $(seq 100); do
  states=$(sacct -P -n -X -o JobID,JobName,State,ExitCode -j "$ids")
  echo "$states" | grep -q PENDING || echo "$states" | grep -q RUNNING ||
    break
  sleep 0.2
done
echo "$states"
"""


# R's rslurm: slurm_apply writes an array job script and submits it with
# sbatch; get_slurm_out(wait = TRUE) waits with `squeue -hn NAME` and a
# `sbatch --wait --dependency=singleton` job, then reads each task's result.
RSLURM_SCRIPT = """
library(rslurm)
double_it <- function(x) x * 2
job <- slurm_apply(double_it, data.frame(x = 1:6), jobname = "rslurm_it",
                   nodes = 2, cpus_per_node = 1, submit = TRUE)
out <- get_slurm_out(job, outtype = "table", wait = TRUE)
cat("rslurm result:", sort(unlist(out)), "\n")
"""


def snakemake_binary():
    return shutil.which("snakemake", path="/usr/bin")


class SlurmClientsTest(ClusterTestCase):
    @classmethod
    def setUpClass(cls):
        cluster = cls.start_class_cluster(agents=2)
        # /usr/bin after the Slurm names: the system Python and snakemake,
        # which jobs also run (they inherit this PATH, --export=ALL).
        cls.bin_dir = cluster.add_slurm_commands(extra_path="/usr/bin")
        for name in CLIENT_NAMES:
            link = os.path.join(cls.bin_dir, name)
            if not os.path.lexists(link):
                os.symlink(cluster.cli_bin, link)
        cluster.env.setdefault("USER", "root")
        cls.cluster = cluster

    def run_client(self, argv, cwd, timeout=120, **kwargs):
        return subprocess.run(argv, cwd=cwd, env=self.cluster.env,
                              capture_output=True, text=True, timeout=timeout,
                              **kwargs)

    def workflow_dir(self, name, snakefile):
        directory = self.cluster.path("workflows", name)
        os.makedirs(directory)
        with open(os.path.join(directory, "Snakefile"), "w") as f:
            f.write(snakefile)
        return directory

    def snakemake_argv(self, directory, jobs):
        # Snakemake's Slurm executor checks each job's state every 30 s
        # unless told it may ask more often (at most once a second, its
        # own cap): Gantry answers sacct from memory, so ask every second.
        return [snakemake_binary(), "--slurm", "--jobs", str(jobs),
                "--max-status-checks-per-second", "1",
                "--default-resources", "runtime=5", "mem_mb=64",
                "--latency-wait", "10", "--directory", directory]

    def test_snakemake_runs_a_workflow_to_completion(self):
        if snakemake_binary() is None:
            self.skipTest("snakemake is not installed (Debian package "
                          "snakemake)")
        directory = self.workflow_dir("counts", SNAKEFILE)
        result = self.run_client(self.snakemake_argv(directory, 3), directory,
                                 timeout=240)
        self.assertEqual(result.returncode, 0,
                         f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}")
        with open(os.path.join(directory, "summary.txt")) as f:
            lines = f.read().splitlines()
        self.assertEqual([line.split()[0] for line in lines], ["a", "b", "c"])
        # Each rule ran as its own Slurm job, inside it (SLURM_JOB_ID set).
        job_ids = {line.split("job=")[1] for line in lines}
        self.assertEqual(len(job_ids), 3, lines)
        self.assertTrue(all(j.isdigit() for j in job_ids), lines)
        # And the accounting agrees: every job snakemake submitted ended
        # COMPLETED, named as snakemake names them.
        accounting = self.run_client(
            ["sacct", "-P", "-n", "-X", "-o", "JobName,State", "-S",
             "now-1hour"], directory)
        self.assertEqual(accounting.returncode, 0, accounting.stderr)
        rows = [row.split("|") for row in accounting.stdout.splitlines()]
        snake_rows = [r for r in rows
                      if r[0].startswith(("snakejob_count", "snakejob_summ"))]
        self.assertEqual(len(snake_rows), 4, accounting.stdout)
        self.assertTrue(all(r[1] == "COMPLETED" for r in snake_rows),
                        accounting.stdout)

    def test_snakemake_cancels_its_jobs_on_interrupt(self):
        if snakemake_binary() is None:
            self.skipTest("snakemake is not installed (Debian package "
                          "snakemake)")
        directory = self.workflow_dir("slow", SLOW_SNAKEFILE)
        process = subprocess.Popen(
            self.snakemake_argv(directory, 2), cwd=directory,
            env=self.cluster.env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True)
        try:
            def running_jobs():
                out = self.cluster.cli("queue", "-h", "-o", "%i %j %T").stdout
                return [line.split() for line in out.splitlines()
                        if "snakejob" in line and line.endswith("RUNNING")]
            wait_for(lambda: len(running_jobs()) == 2, 60,
                     "snakemake's two jobs to run")
            job_ids = [int(fields[0]) for fields in running_jobs()]
            process.send_signal(signal.SIGINT)
            output, _ = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        for job_id in job_ids:
            job = self.cluster.wait_job(job_id, "CANCELLED", timeout=30)
            self.assertEqual(job["state"], "CANCELLED", output)

    def test_shell_client_polls_squeue_and_reads_sacct(self):
        script = self.cluster.write_script("pipeline.sh", SHELL_CLIENT)
        result = self.run_client(["bash", script], self.cluster.work_dir)
        self.assertEqual(result.returncode, 0,
                         f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}")
        rows = {fields[1]: fields for fields in
                (line.split("|") for line in result.stdout.splitlines())}
        self.assertEqual(rows["shell-ok"][2:], ["COMPLETED", "0:0"],
                         result.stdout)
        self.assertEqual(rows["shell-bad"][2:], ["FAILED", "3:0"],
                         result.stdout)

    def test_rslurm_applies_a_function_over_an_array_job(self):
        rscript = shutil.which("Rscript", path="/usr/bin")
        if rscript is None or not os.path.isdir(
                "/usr/lib/R/site-library/rslurm"):
            self.skipTest("R's rslurm is not installed (Debian package "
                          "r-cran-rslurm)")
        directory = self.cluster.path("rslurm")
        os.makedirs(directory)
        with open(os.path.join(directory, "apply.R"), "w") as f:
            f.write(RSLURM_SCRIPT)
        result = self.run_client([rscript, "--vanilla", "apply.R"], directory,
                                 timeout=150)
        self.assertEqual(result.returncode, 0,
                         f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}")
        self.assertIn("rslurm result: 2 4 6 8 10 12", result.stdout,
                      result.stderr)

    def complete(self, line):
        """What bash completion offers for `line` (the last word being
        completed), with gantry's completion loaded as bash-completion
        loads it for a Slurm name."""
        library = "/usr/share/bash-completion/bash_completion"
        script = os.path.join(os.path.dirname(__file__), "..", "..",
                              "packaging", "bash-completion", "gantry")
        program = (
            f"source {library}; source {script}; "
            "COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); "
            "COMP_LINE=\"$*\"; COMP_POINT=${#COMP_LINE}; _gantry; "
            "echo \"${COMPREPLY[*]}\"")
        result = subprocess.run(["bash", "-c", program, "bash",
                                 *line.split(" ")], env=self.cluster.env,
                                capture_output=True, text=True, timeout=30)
        return sorted(result.stdout.split())

    def test_completion_of_job_ids_and_node_names(self):
        if not os.path.exists("/usr/share/bash-completion/bash_completion"):
            self.skipTest("bash-completion is not installed")
        job_id = self.cluster.submit(
            self.cluster.write_script("hold.sh", "#!/bin/sh\nsleep 30\n"),
            "--hold")
        try:
            for line in ("scancel ", "gantry cancel ", "scontrol show job ",
                         "squeue -j ", "scontrol release "):
                self.assertIn(str(job_id), self.complete(line), line)
            nodes = ["node01", "node02"]
            for line in ("sinfo -n ", "squeue -w ", "sbatch -w ",
                         "gantry drain ", "scontrol show node "):
                self.assertEqual(self.complete(line), nodes, line)
            self.assertEqual(self.complete("squeue -t P"), ["PD"])
            self.assertEqual(self.complete("scontrol sh"), ["show"])
            self.assertEqual(self.complete("sbatch --wr"), ["--wrap"])
        finally:
            self.cluster.cli("cancel", str(job_id))


if __name__ == "__main__":
    gantry_cluster.main()
