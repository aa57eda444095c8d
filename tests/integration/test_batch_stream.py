#!/usr/bin/env python3
"""gantry batch-stream and the gantry_submit Python module (issue #36):
many jobs from one process on one SubmitStream call.

- Every input line gets one answer naming its line: a job id for a job
  stored, the reason for a line refused (not JSON, an unknown option, a
  script from standard input), and the stored jobs run as `gantry batch`
  would run them (their #SBATCH directives, arguments and the exported
  environment).
- A controller with room for one waiting submission refuses most of a
  burst as busy: the stream sends them again until each is stored, once.
- From Python, submit_many returns the ids in the order of the jobs and a
  SubmitError for a refused one; submit raises it.
"""

import json
import os
import subprocess
import sys
import unittest

import gantry_cluster
from gantry_cluster import ClusterTestCase

MODULE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                          "..", "packaging", "python")


class BatchStreamTest(ClusterTestCase):

    def stream(self, cluster, lines):
        """gantry batch-stream fed `lines`: (exit code, {line: answer})."""
        gantry = os.path.join(gantry_cluster.build_dir(), "cli", "gantry")
        result = subprocess.run(
            [gantry, "batch-stream"], input="".join(l + "\n" for l in lines),
            env=cluster.env, cwd=cluster.work_dir, capture_output=True,
            text=True, timeout=120)
        answers = {}
        for text in result.stdout.splitlines():
            answer = json.loads(text)
            self.assertNotIn(answer["line"], answers, result.stdout)
            answers[answer["line"]] = answer
        return result.returncode, answers

    def test_every_line_is_answered_and_stored_jobs_run(self):
        cluster = self.start_cluster(agents=2)
        script = cluster.write_script("job.sh", (
            "#!/bin/bash\n#SBATCH --job-name=from-directive\n"
            "echo \"$1 $SWEEP_TAG\" > \"$SLURM_SUBMIT_DIR/out-$1\"\n"))
        lines = [json.dumps([script, str(i)]) for i in range(12)]
        lines[3] = "not json"
        lines[5] = json.dumps(["--no-such-option", script])
        lines[7] = json.dumps(["-N", "1"])  # no script: stdin is the list
        lines.insert(9, "")  # skipped, still counted
        cluster.env["SWEEP_TAG"] = "tagged"
        code, answers = self.stream(cluster, lines)
        self.assertEqual(code, 1, answers)
        refused = {n: a["error"] for n, a in answers.items() if "error" in a}
        self.assertEqual(sorted(refused), [4, 6, 8], answers)
        self.assertIn("JSON array", refused[4])
        self.assertIn("--no-such-option", refused[6])
        self.assertIn("no batch script", refused[8])
        stored = {n: a["job_id"] for n, a in answers.items() if "job_id" in a}
        self.assertEqual(sorted(stored), [1, 2, 3, 5, 7, 9, 11, 12, 13])
        self.assertEqual(len(set(stored.values())), len(stored))
        for line, job_id in stored.items():
            cluster.wait_job(job_id, "COMPLETED", timeout=60)
            task = line - 1 if line < 10 else line - 2  # the blank line
            self.assertEqual(cluster.read(f"out-{task}").strip(),
                             f"{task} tagged")
            self.assertEqual(cluster.job(job_id)["name"], "from-directive")

    def test_a_busy_controller_gets_every_job_once(self):
        cluster = self.start_cluster(
            agents=0, gantryd_args=["--max-pending-submissions", "1"])
        script = cluster.write_script("q.sh", "#!/bin/bash\ntrue\n")
        code, answers = self.stream(
            cluster, [json.dumps(["--hold", script]) for _ in range(300)])
        self.assertEqual(code, 0, answers)
        ids = sorted(a["job_id"] for a in answers.values())
        self.assertEqual(len(set(ids)), 300)
        listed = cluster.cli_json("queue", "--all")["jobs"]
        self.assertEqual(sorted(j["job_id"] for j in listed), ids)

    def test_python_module_submits_a_list(self):
        cluster = self.start_cluster(agents=0)
        script = cluster.write_script("p.sh", "#!/bin/bash\ntrue\n")
        program = f"""
import json, sys
sys.path.insert(0, {MODULE_DIR!r})
import gantry_submit
jobs = [["--hold", "-J", f"py-{{i}}", {script!r}] for i in range(5)]
jobs.insert(2, ["--hold", "--bogus", {script!r}])
results = gantry_submit.submit_many(
    jobs, gantry={os.path.join(gantry_cluster.build_dir(), "cli", "gantry")!r})
print(json.dumps([r if isinstance(r, int) else "refused: " + str(r)
                  for r in results]))
try:
    gantry_submit.submit(["--bogus", {script!r}],
        gantry={os.path.join(gantry_cluster.build_dir(), "cli", "gantry")!r})
except gantry_submit.SubmitError as error:
    print(json.dumps(["raised", str(error), error.words]))
"""
        result = subprocess.run([sys.executable, "-c", program],
                                env=cluster.env, cwd=cluster.work_dir,
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        results, raised = [json.loads(l) for l in result.stdout.splitlines()]
        self.assertTrue(results[2].startswith("refused: "), results)
        self.assertIn("--bogus", results[2])
        ids = [r for i, r in enumerate(results) if i != 2]
        self.assertTrue(all(isinstance(r, int) for r in ids), results)
        names = [cluster.job(job_id)["name"] for job_id in ids]
        self.assertEqual(names, [f"py-{i}" for i in range(5)])
        self.assertEqual(raised[0], "raised")
        self.assertIn("--bogus", raised[1])
        self.assertEqual(raised[2], ["--bogus", script])


if __name__ == "__main__":
    gantry_cluster.main()
