"""The end of a lab run: waits until every acknowledged job has ended,
gathers the three sides of the history (the clients' acknowledgements,
the nodes' rank starts, etcd's watch) and the final job and node states,
and runs checker.py over them. Shared by the scenarios (test_lab.py) and
the soak benchmark (tests/bench/lab_soak.py). Not thread-safe."""

import json
import time

import checker
from lab_cluster import ETCD_PREFIX

TERMINAL_STATES = frozenset(
    {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL",
     "OUT_OF_MEMORY", "DEADLINE"})


def wait_jobs_terminal(lab, job_ids, timeout=300):
    """{job id: the job as gantry shows it} once each is terminal (or the
    timeout ran out: those missing are left out). One `gantry queue --all`
    a round; `gantry job` only for jobs already moved to the history."""
    deadline = time.monotonic() + timeout
    final = {}
    pending = set(job_ids)
    while pending and time.monotonic() < deadline:
        result = lab.cli("queue", "--all", "--json", check=False, timeout=60)
        listed = {}
        if result.returncode == 0:
            listed = {job["job_id"]: job for job in json.loads(result.stdout)["jobs"]}
        for job_id in sorted(pending):
            job = listed.get(job_id)
            if job is None and result.returncode == 0:
                shown = lab.cli("job", str(job_id), "--json", check=False,
                                timeout=30)
                job = json.loads(shown.stdout) if shown.returncode == 0 else None
            if job and job.get("state") in TERMINAL_STATES:
                final[job_id] = job
                pending.discard(job_id)
        if pending:
            time.sleep(2)
    return final


def collect(lab, workload, faults):
    """(verdicts, counts, report text) of a finished run."""
    acked = [a["job_id"] for a in workload.acks if a["job_id"] is not None]
    final = wait_jobs_terminal(lab, acked)
    nodes = {node["name"]: node for node in
             json.loads(lab.cli("nodes", "--json").stdout)["nodes"]}
    starts = checker.read_rank_starts(lab.ranks_dir)
    puts = checker.read_etcd_puts(lab.etcd_history, ETCD_PREFIX)
    verdicts, counts = checker.check(workload.acks, starts, final, nodes, puts,
                                     excused_drains=faults.cut_from_controllers)
    return verdicts, counts, checker.report(verdicts, counts, faults.log)
