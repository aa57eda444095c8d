"""What the submission benchmarks (submit_bench.py, restart_bench.py,
kill9_bench.py) and the kill -9 durability test share: figures from
samples, a process's CPU time, gantryd's own metrics, and driving
gantry-submit-bench (the C++ API client fleet, tests/bench/submit_bench.cc)
against a GantryCluster, including a flood with a kill -9 of gantryd in
the middle and the audit of what survived it.

Standard library only, like the integration harness it builds on.
"""
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
import gantry_cluster  # noqa: E402

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

# The Philly trace of the shared data folder beside the checkout, for the
# simulator benchmarks (goodput_sim_bench.py, trace_figures_bench.py).
PHILLY_TRACE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                            "..", "..", "shared", "data", "traces", "philly",
                            "pollux_philly.csv")

# A job that would do nothing if it ran; the benchmarks give gantryd no
# nodes, so it pends (what a sweep does on a full cluster).
TRIVIAL_SCRIPT = "#!/bin/bash\ntrue\n"


def gantry_sim(build_dir, bench):
    """The built gantry-sim; exits naming `bench` when it is not built."""
    sim = os.path.join(build_dir, "daemon", "simulator", "gantry-sim")
    if not os.path.exists(sim):
        sys.exit(f"{bench}: {sim} not found: build gantry-sim first")
    return sim


def percentile(values, fraction):
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, int(round(fraction * len(ordered) + 0.4999)))
    return ordered[min(rank, len(ordered)) - 1]


def median_p99(values):
    return statistics.median(values), percentile(values, 0.99)


def cpu_seconds(pid):
    """utime + stime of a live process, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def scrape_metrics(address, names):
    """{name: value} of the unlabelled samples `names` on the Prometheus
    endpoint at HOST:PORT (e.g. "gantry_store_commit_duration_seconds_sum")."""
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=10) as r:
        text = r.read().decode()
    values = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name in names:
            values[name] = float(value)
    missing = set(names) - set(values)
    if missing:
        raise AssertionError(f"no {sorted(missing)} at {address}/metrics")
    return values


def machine_line():
    """CPUs, kernel, date, and the load average: other work on the machine
    shows in every figure here."""
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"{os.cpu_count()} CPUs, {os.uname().release}; "
            f"{time.strftime('%Y-%m-%d %H:%M %Z')}; load average {load}")


class SubmitClient:
    """gantry-submit-bench bound to one cluster: the controller's TCP
    address, the cluster's environment (MUNGE socket) and its work dir,
    where the job script is written."""

    def __init__(self, cluster, auth, bare_environment=False):
        """bare_environment: the client runs with only PATH and the MUNGE
        socket in its environment, so the jobs export next to nothing
        (otherwise they export this process's, as `gantry batch` does)."""
        self.cluster = cluster
        self.auth = auth
        # The controller's TCP port; None: the cluster's (with several
        # controllers, set it to the one to talk to).
        self.port = None
        self.env = cluster.env
        if bare_environment:
            self.env = {k: v for k, v in cluster.env.items()
                        if k in ("PATH", gantry_cluster.MUNGE_SOCKET_VARIABLE)}
        self.binary = os.path.join(gantry_cluster.build_dir(), "tests", "bench",
                                   "gantry-submit-bench")
        if not os.access(self.binary, os.X_OK):
            raise RuntimeError(f"{self.binary} is missing: build first")
        self.script = cluster.write_script("job.sh", TRIVIAL_SCRIPT)

    def argv(self, command, *options, batch_words=()):
        port = self.port or self.cluster.port
        return [self.binary, "--controller", f"127.0.0.1:{port}",
                "--auth", self.auth, command, *options, "--",
                *batch_words, self.script]

    def start(self, command, *options, batch_words=()):
        """Starts the client; returns the Popen (stdout piped, text)."""
        return subprocess.Popen(
            self.argv(command, *options, batch_words=batch_words),
            cwd=self.cluster.work_dir, env=self.env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    @staticmethod
    def finish(process, timeout, check=True):
        """Waits for a started client; returns (exit code, its JSON line)."""
        out, err = process.communicate(timeout=timeout)
        if check and process.returncode != 0:
            raise RuntimeError(f"gantry-submit-bench exited "
                               f"{process.returncode}:\n{out}{err}")
        lines = out.strip().splitlines()
        return process.returncode, json.loads(lines[-1]) if lines else None

    def run(self, command, *options, timeout=600, check=True):
        return self.finish(self.start(command, *options), timeout, check)

    def fill(self, count, tag, clients=64):
        """Submits `count` jobs as fast as the fleet can; returns the
        client's summary."""
        return self.run("submit", "--clients", str(clients), "--count",
                        str(count), "--tag", tag)[1]


def read_acks(path):
    """[(job id, name, unix time)] from a --acks file."""
    acks = []
    with open(path) as f:
        for line in f:
            job_id, name, when = line.split()
            acks.append((int(job_id), name, float(when)))
    return acks


def flood_with_kill(cluster, client, clients, kill_at, down, after, tag,
                    options=()):
    """Floods `cluster` from `clients` clients (gantry-submit-bench submit
    `options`: --stream for SubmitStream), kill -9s gantryd `kill_at`
    seconds in and starts it again `down` seconds later; the flood goes on
    until `after` seconds after that. Returns (acks, acks file, unix time of
    the kill, of the restart, the flood's summary)."""
    acks_path = os.path.join(cluster.dir, f"acks.{tag}")
    # The flood outlasts the restart by `after` even if the restart is slow:
    # its length is fixed up front, so the restart is waited for below.
    seconds = kill_at + down + after
    flood = client.start("submit", "--clients", str(clients), "--seconds",
                         str(seconds), "--acks", acks_path, "--tag", tag,
                         *options)
    time.sleep(kill_at)
    killed_at = time.time()
    cluster.kill_controller()
    time.sleep(down)
    cluster.start_controller()
    restarted_at = time.time()
    _, summary = client.finish(flood, timeout=seconds + 120)
    return (read_acks(acks_path), acks_path, killed_at,
            restarted_at, summary)


def audit(cluster, client, acks, acks_path, killed_at, tag):
    """What survived the kill (see kill9_bench.py): acknowledged, before_kill,
    lost, wrong, twice, unacked, unverified (lookups that failed) and
    examples of problems."""
    _, verdict = client.run("verify", "--acks", acks_path, check=False)
    acked_ids = {job_id for job_id, _, _ in acks}
    stored = [j for j in cluster.cli_json("queue", "-a")["jobs"]
              if j["name"].startswith(tag + "-")]
    return {"acknowledged": len(acks),
            "before_kill": sum(1 for _, _, t in acks if t < killed_at),
            "lost": verdict["missing"],
            "wrong": verdict["mismatched"],
            "twice": verdict["duplicate_ids"],
            "unverified": verdict["failed_lookups"],
            "unacked": sum(1 for j in stored if j["job_id"] not in acked_ids),
            "examples": verdict["examples"]}
