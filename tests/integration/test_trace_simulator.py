"""gantry-sim: the scheduler core in virtual time over the public traces in
../shared/data/traces and small files in the published Alibaba and Acme
schemas. One table with the three policies and sane numbers;
malformed rows are skipped with a counted warning; a missing file or a trace
without run times is a clear error. `gantry-sim goodput`: failure injection
into a long job, five recovery policies, reproducible by seed, bad settings
refused. Needs no daemons."""
import json
import os
import subprocess
import tempfile
import unittest

from gantry_cluster import build_dir, main, shared_data

TRACES = shared_data("traces")
PHILLY = os.path.join(TRACES, "philly", "pollux_philly.csv")
POLICIES = {"gantry", "fifo", "backfill"}


def simulator():
    return os.path.join(build_dir(), "daemon", "simulator", "gantry-sim")


def run_sim(*args, check=True):
    binary = simulator()
    if not os.path.exists(binary):
        raise unittest.SkipTest(f"{binary} is missing: build gantry-sim first")
    result = subprocess.run([binary, *args], capture_output=True, text=True,
                            timeout=60)
    if check and result.returncode != 0:
        raise AssertionError(f"gantry-sim {' '.join(args)} failed "
                             f"({result.returncode}):\n{result.stderr}")
    return result


class TraceSimulatorTest(unittest.TestCase):

    def require_data(self, path):
        if not os.path.exists(path):
            self.skipTest(f"shared trace data not found at {path}")

    def test_philly_slice_three_policies(self):
        self.require_data(PHILLY)
        # The first 1,000 Philly jobs on 128 GPUs: a few seconds.
        report = json.loads(run_sim(
            "--trace", PHILLY, "--limit", "1000", "--nodes", "16",
            "--gpus-per-node", "8", "--nodes-per-leaf", "4",
            "--leaves-per-spine", "2", "--json").stdout)
        self.assertEqual(report["format"], "philly")
        self.assertEqual(report["jobs_in_window"], 1000)
        self.assertEqual(report["cluster"]["spines"], 2)
        by_name = {p["policy"]: p for p in report["policies"]}
        self.assertEqual(set(by_name), POLICIES)
        for name, p in by_name.items():
            with self.subTest(policy=name):
                self.assertEqual(p["jobs_run"], 1000)
                self.assertGreater(p["utilization"], 0)
                self.assertLessEqual(p["utilization"], 1)
                self.assertGreaterEqual(p["delay_p50_s"], 0)
                self.assertLessEqual(p["delay_p50_s"], p["delay_p99_s"])
                self.assertGreaterEqual(p["jct_mean_s"], p["delay_mean_s"])
                self.assertGreater(p["multi_node_jobs"], 0)
                self.assertGreaterEqual(p["mean_leaves"], 1)
                self.assertLessEqual(p["fewest_leaves_share"], 1)
        self.assertLessEqual(by_name["gantry"]["mean_leaves"],
                             by_name["fifo"]["mean_leaves"])
        self.assertEqual(by_name["fifo"]["backfilled_jobs"], 0)
        # Backfill must not do worse on delay than strict FIFO here.
        self.assertLess(by_name["gantry"]["delay_mean_s"],
                        by_name["fifo"]["delay_mean_s"])

    def test_tiresias_trace_table_and_json(self):
        path = os.path.join(TRACES, "tiresias", "60_job.csv")
        self.require_data(path)
        table = run_sim("--trace", path, "--nodes", "4",
                        "--gpus-per-node", "4").stdout
        for policy in POLICIES:
            self.assertRegex(table, rf"(?m)^{policy}\s+60\s")
        for column in ("UTIL", "DELAY_MEAN", "DELAY_P50", "DELAY_P99",
                       "JCT_MEAN", "JCT_P99", "FEWEST", "LEAVES",
                       "MULTI_DELAY", "WALL_S"):
            self.assertIn(column, table)
        report = json.loads(run_sim("--trace", path, "--nodes", "4",
                                    "--gpus-per-node", "4", "--json").stdout)
        self.assertEqual(report["format"], "tiresias")
        for p in report["policies"]:
            self.assertEqual(p["jobs_run"], 60)
            self.assertGreater(p["utilization"], 0)
            self.assertLessEqual(p["utilization"], 1)

    def test_malformed_rows_are_counted_and_skipped(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bad.csv")
            with open(path, "w") as f:
                f.write("timestamp,duration,num_gpus,gpu_time,cluster\n"
                        "2017-10-09 07:01:55,66.0,1,66.0,a\n"
                        "2017-10-09 07:02:55,oops,1,66.0,a\n"
                        "garbage\n"
                        "2017-10-09 07:03:55,30,2,60,b\n"
                        "2017-10-09 07:04:55,30,0,0,b\n")
            result = run_sim("--trace", path, "--nodes", "2", "--json")
            self.assertIn("skipped 2 malformed rows; first: line 3: bad "
                          "duration", result.stderr)
            report = json.loads(result.stdout)
            self.assertEqual(report["skipped_rows"], 2)
            # The 0-GPU row is a CPU job, left out by rule, not malformed.
            self.assertEqual(report["cpu_only_rows"], 1)
            self.assertEqual([p["jobs_run"] for p in report["policies"]],
                             [2, 2, 2])

    def test_missing_file_and_unusable_traces_are_clear_errors(self):
        result = run_sim("--trace", "/nonexistent/trace.csv", check=False)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("trace file not found: /nonexistent/trace.csv",
                      result.stderr)
        workload = os.path.join(TRACES, "pollux_workloads", "workload-1.csv")
        if os.path.exists(workload):
            result = run_sim("--trace", workload, check=False)
            self.assertNotEqual(result.returncode, 0)
            self.assertIn("no run times", result.stderr)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "other.csv")
            with open(path, "w") as f:
                f.write("a,b,c\n1,2,3\n")
            result = run_sim("--trace", path, check=False)
            self.assertNotEqual(result.returncode, 0)
            self.assertIn("unknown trace format", result.stderr)

    def write(self, tmp, name, text):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_published_formats_replay(self):
        # Small files in the published schemas of Alibaba's 2020 task table
        # (headerless, as released), its 2023 openb pod lists and Acme's
        # Seren trace; the real ones are checked by trace_formats_test.
        with tempfile.TemporaryDirectory() as tmp:
            pai = self.write(tmp, "pai_task_table.csv",
                             "j1,tensorflow,1.0,Terminated,100.0,400.0,600.0,"
                             "29.3,50.0,MISC\n"
                             "j2,ps,1.0,Terminated,200.0,900.0,600.0,29.3,,\n"
                             "j2,worker,3.0,Failed,210.0,800.0,800.0,58.6,"
                             "400.0,V100\n"
                             "j3,worker,1.0,Running,300.0,,600.0,29.3,100.0,"
                             "T4\n")
            result = run_sim("--trace", pai, "--nodes", "4", check=False)
            self.assertNotEqual(result.returncode, 0)
            self.assertIn("give --format alibaba2020", result.stderr)
            report = json.loads(run_sim(
                "--trace", pai, "--format", "alibaba2020", "--nodes", "4",
                "--json").stdout)
            self.assertEqual(report["format"], "alibaba2020")
            # j1 (half a GPU -> 1) and j2 (3 workers x 4 GPUs, one gang).
            self.assertEqual(report["rows_read"], 2)
            self.assertEqual(report["cpu_only_rows"], 1)
            self.assertEqual(report["not_run_rows"], 1)
            self.assertEqual(report["fractional_gpu_rows"], 1)
            self.assertEqual(report["skipped_rows"], 0)
            for p in report["policies"]:
                self.assertEqual(p["jobs_run"], 2)
                # 12 GPUs on 8-GPU nodes: j2 is a 2-node job.
                self.assertEqual(p["multi_node_jobs"], 1)

            openb = self.write(
                tmp, "openb_pod_list_default.csv",
                "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,"
                "pod_phase,creation_time,deletion_time,scheduled_time\n"
                "openb-pod-0000,12000,16384,1,1000,,LS,Running,0,600,0\n"
                "openb-pod-0001,6000,12288,1,460,,LS,Running,10,700,12\n"
                "openb-pod-0002,88000,327680,8,1000,,Burstable,Succeeded,20,"
                "900,25\n"
                "openb-pod-0003,20000,65536,0,0,,LS,Running,30,800,31\n"
                "openb-pod-0004,8000,30720,2,1000,,LS,Pending,40,950,\n")
            table = run_sim("--trace", openb, "--nodes", "2").stdout
            self.assertIn("(alibaba2023): 3 jobs read, 0 malformed rows "
                          "skipped, 1 CPU-only rows and 1 never-run rows "
                          "left out, 1 GPU shares rounded up", table)
            for policy in POLICIES:
                self.assertRegex(table, rf"(?m)^{policy}\s+3\s")

            seren = self.write(
                tmp, "trace_seren.csv",
                "job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,"
                "start_time,end_time,duration,queue,gpu_time\n"
                "5778432,u5907,1,8,128,Other,FAILED,2023-03-01 00:18:22+08:00,"
                "2023-03-01 00:18:54+08:00,2023-03-01 00:20:51+08:00,117,32,"
                "936.0\n"
                "5778469,u5907,2,16,256,Pretrain,COMPLETED,"
                "2023-03-01 00:23:58+08:00,2023-03-01 00:24:11+08:00,"
                "2023-03-01 01:09:04+08:00,2693,13,43088.0\n")
            report = json.loads(run_sim("--trace", seren, "--nodes", "4",
                                        "--json").stdout)
            self.assertEqual(report["format"], "acme")
            for p in report["policies"]:
                self.assertEqual(p["jobs_run"], 2)
                self.assertEqual(p["multi_node_jobs"], 1)

            job_table = self.write(
                tmp, "pai_job_table.csv",
                "job_name,inst_id,user,status,start_time,end_time\n"
                "j1,i1,u1,Terminated,100.0,400.0\n")
            result = run_sim("--trace", job_table, check=False)
            self.assertNotEqual(result.returncode, 0)
            self.assertIn("no GPU counts", result.stderr)

    def test_goodput_long_job_policies_and_seed(self):
        # A 512-GPU job with 20 days of work at 20x Llama 3's rate: dozens
        # of failures, the five policies in order, shares that add up, and
        # the same seed giving the same figures.
        args = ["goodput", "--job-gpus", "512", "--job-days", "20",
                "--node-rate", "0.00316", "--leaf-rate", "0.001",
                "--spares", "4", "--seed", "9", "--json"]
        first = json.loads(run_sim(*args).stdout)
        again = json.loads(run_sim(*args).stdout)
        self.assertEqual(first, again)
        policies = first["policies"]
        self.assertEqual([p["policy"] for p in policies],
                         ["gantry", "gantry+jit", "gantry+memory", "slurm",
                          "kueue"])
        for p in policies:
            self.assertEqual(p["jobs_finished"], 1, p)
            self.assertGreater(p["job_failures"], 20, p)
            self.assertAlmostEqual(sum(p["shares"].values()), 1.0, places=6)
            self.assertAlmostEqual(p["ettr"], p["shares"]["productive"])
        by = {p["policy"]: p for p in policies}
        # Saving at the failure loses less than periodic checkpoints; Slurm
        # waits for repairs and an operator.
        self.assertLess(by["gantry+jit"]["shares"]["lost"],
                        by["gantry"]["shares"]["lost"])
        self.assertGreater(by["gantry"]["ettr"], by["slurm"]["ettr"])
        self.assertGreater(by["kueue"]["evictions"], 0)
        # Snapshots in peers' memory: every restart restores from memory or
        # falls back, and less work is lost than with checkpoints alone.
        memory = by["gantry+memory"]
        self.assertEqual(memory["memory_restores"] +
                         memory["memory_fallbacks"], memory["restarts"])
        self.assertGreater(memory["memory_restores"], 0)
        self.assertLess(memory["shares"]["lost"], by["gantry"]["shares"]["lost"])
        self.assertEqual(by["gantry"]["memory_restores"], 0)
        table = run_sim(*args[:-1]).stdout
        self.assertIn("ETTR", table)
        self.assertIn("gantry+jit", table)

    def test_goodput_bad_settings_are_clear_errors(self):
        for args, message in (
                (["--checkpoint-interval", "0"],
                 "--checkpoint-interval must be > 0"),
                (["--node-rate", "-1"], "failure rates must be finite"),
                (["--job-gpus", "64", "--nodes", "4"],
                 "the job needs 8 nodes; --nodes is 4"),
                (["--policy", "nope"], "--policy names none of"),
                (["--memory-interval", "often"],
                 "--memory-interval: not a number of seconds or auto"),
                (["--memory-interval", "0"], "--memory-interval must be > 0"),
                (["--memory-replicate", "-1"],
                 "--memory-write, --memory-replicate and --memory-restore "
                 "must be finite and >= 0"),
                (["--trace", "/nonexistent/trace.csv"],
                 "trace file not found")):
            result = run_sim("goodput", "--job-days", "1", *args, check=False)
            self.assertNotEqual(result.returncode, 0, args)
            self.assertEqual(result.stdout, "", args)
            self.assertIn(message, result.stderr, args)
            self.assertTrue(result.stderr.startswith("gantry-sim: "), args)


    def test_cache_placements_and_bad_settings(self):
        self.require_data(PHILLY)
        args = ["cache", "--trace", PHILLY, "--limit", "500", "--nodes",
                "16", "--nodes-per-leaf", "4", "--leaves-per-spine", "2",
                "--cache-gb", "1000", "--seed", "3", "--json"]
        report = json.loads(run_sim(*args).stdout)
        self.assertEqual(json.loads(run_sim(*args).stdout), report)
        rows = {r["placement"]: r for r in report["placements"]}
        self.assertEqual(set(rows),
                         {"topology", "cache+topology", "cache-first"})
        read = rows["topology"]["dataset_bytes"]
        self.assertGreater(read, 0)
        for name, r in rows.items():
            with self.subTest(placement=name):
                self.assertEqual(r["jobs_run"], 500)
                self.assertEqual(r["dataset_bytes"], read)
                self.assertLessEqual(r["shared_bytes"], read)
                self.assertGreater(r["shared_bytes"], 0)
        for flags, message in (
                (["--dataset-gb", "0-10"], "--dataset-gb must be MIN-MAX"),
                (["--dataset-gb", "big"], "--dataset-gb big: expected"),
                (["--datasets-per-user", "0"], "--datasets-per-user must be"),
                (["--job-share", "2"], "--job-share must be 0 to 1")):
            result = run_sim("cache", "--trace", PHILLY, *flags, check=False)
            self.assertNotEqual(result.returncode, 0, flags)
            self.assertEqual(result.stdout, "", flags)
            self.assertIn(message, result.stderr, flags)
            self.assertTrue(result.stderr.startswith("gantry-sim: "), flags)
        result = run_sim("cache", check=False)
        self.assertIn("cache: --trace is required", result.stderr)

if __name__ == "__main__":
    main()
