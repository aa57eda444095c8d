#!/usr/bin/env python3
"""Prometheus metrics: gantryd and the agents serve /metrics (each on a port
the kernel picks, read from its start line). After a completed GPU job, a
job that fails, restarts and fails again, and a request for a job that does
not exist, the values must say so; promtool must find nothing wrong with
the text; and a real Prometheus must scrape both kinds of endpoint.

The agents describe a 4xH100 server from its hwloc XML (when the shared
data is there), so the GPU gauges have something to count."""

import json
import os
import re
import signal
import socket
import subprocess
import urllib.parse
import urllib.request

import gantry_cluster
from gantry_cluster import (H100_GPUS, H100_XML, ClusterTestCase,
                            GantryCluster, h100_node_with_fake_sysfs, wait_for)


PROMTOOL = "/usr/bin/promtool"
PROMETHEUS = "/usr/bin/prometheus"

_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def scrape(address):
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=5) as reply:
        return reply.read().decode()


def samples(text):
    """[(name, {label: value}, float)] of a /metrics text."""
    found = []
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if match:
            name, labels, value = match.groups()
            found.append((name, dict(_LABEL.findall(labels or "")), float(value)))
    return found


def value(text, name, **labels):
    """The sum of the samples of `name` whose labels include `labels`; None
    when there is none."""
    matching = [v for n, l, v in samples(text)
                if n == name and all(l.get(k) == x for k, x in labels.items())]
    return sum(matching) if matching else None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MetricsTest(ClusterTestCase):

    @classmethod
    def setUpClass(cls):
        cluster = GantryCluster(agents=2, label=cls.__name__, metrics=True)
        cls.addClassCleanup(lambda: cluster.finish(cls._class_failed))
        cls.addClassCleanup(cluster.stop_processes)
        try:
            cls.gpus_per_node = 0
            if os.path.exists(H100_XML):
                cls.gpus_per_node = len(H100_GPUS)
                for name in ("node01", "node02"):
                    h100_node_with_fake_sysfs(cluster, name)
            cluster.start()
            cls.cluster = cluster
            gpus = ["--gpus-per-node=2"] if cls.gpus_per_node else []
            ok = cluster.write_script("ok.sh", "#!/bin/bash\necho fine\n")
            cls.ok_job = cluster.submit(ok, "--nodes=2", *gpus)
            cluster.wait_job(cls.ok_job, "COMPLETED")
            # Exits 3 twice: restarted once, then failed as an application
            # bug (the same status again).
            bad = cluster.write_script("bad.sh", "#!/bin/bash\nexit 3\n")
            cls.bad_job = cluster.submit(bad, "--max-restarts=1")
            cluster.wait_job(cls.bad_job, "FAILED")
            missing = cluster.cli("job", "999999", check=False)
            assert missing.returncode != 0, missing.stdout
        except BaseException:
            cls._class_failed = True
            raise

    def controller_text(self, until=None, what="gantryd's metrics"):
        """gantryd's /metrics text; with `until`, the first scrape for which
        until(text) holds (gauges are refreshed on a timer)."""
        address = self.cluster.metrics_address()
        if until is None:
            return scrape(address)
        return wait_for(lambda: (lambda t: t if until(t) else None)(scrape(address)),
                        10, what)

    def test_gantryd_counts_jobs_nodes_gpus_restarts_and_rpcs(self):
        text = self.controller_text(
            until=lambda t: value(t, "gantry_nodes", state="up") == 2,
            what="gantry_nodes{state=up} to be 2")
        self.assertEqual(value(text, "gantry_jobs", state="completed"), 1)
        self.assertEqual(value(text, "gantry_jobs", state="failed"), 1)
        self.assertEqual(value(text, "gantry_jobs", state="running"), 0)
        self.assertEqual(value(text, "gantry_jobs", state="pending"), 0)
        self.assertEqual(value(text, "gantry_nodes", state="down"), 0)
        self.assertEqual(
            value(text, "gantry_job_restarts_total", reason="NonZeroExitCode"), 1)
        # Three attempts started: the good job's, and the bad job's two.
        self.assertEqual(value(text, "gantry_job_queue_wait_seconds_count"), 3)
        self.assertGreater(value(text, "gantry_scheduling_pass_duration_seconds_count"), 0)
        self.assertGreater(value(text, "gantry_store_commit_duration_seconds_count"), 0)
        if self.gpus_per_node:
            self.assertEqual(value(text, "gantry_gpus", state="idle"),
                             2 * self.gpus_per_node)
            self.assertEqual(value(text, "gantry_gpus", state="allocated"), 0)
        submit = "gantry.v1.ClientService/Submit"
        self.assertEqual(value(text, "gantry_rpc_started_total", method=submit), 2)
        self.assertEqual(value(text, "gantry_rpc_handled_total", method=submit,
                               code="OK"), 2)
        self.assertGreaterEqual(value(text, "gantry_rpc_started_total",
                                      method="gantry.v1.AgentService/Connect"), 2)
        self.assertGreaterEqual(value(text, "gantry_rpc_handled_total",
                                      method="gantry.v1.ClientService/GetJob",
                                      code="NOT_FOUND"), 1)

    def test_agents_count_rank_launches_exits_and_health(self):
        text = scrape(self.cluster.metrics_address("node01"))
        # node01 ran rank 0 of the good job; the bad job ran on either node.
        launched = value(text, "gantry_agent_rank_launches_total", outcome="started")
        self.assertGreaterEqual(launched, 1)
        self.assertEqual(value(text, "gantry_agent_rank_exits_total", outcome="success"), 1)
        self.assertEqual(value(text, "gantry_agent_rank_exits_total", outcome="failure"),
                         launched - 1)
        self.assertEqual(value(text, "gantry_agent_rank_launches_total", outcome="failed"), 0)
        text = wait_for(
            lambda: (lambda t: t if value(t, "gantry_agent_ranks_running") == 0
                     and value(t, "gantry_agent_controller_connected") == 1 else None)(
                scrape(self.cluster.metrics_address("node01"))),
            10, "node01 to report no ranks and a connected controller")
        healthy = value(text, "gantry_agent_node_healthy")
        problems = value(text, "gantry_agent_health_problems")
        self.assertEqual(healthy, 1 if problems == 0 else 0)
        if self.gpus_per_node:
            self.assertEqual(healthy, 1)  # every GPU is on the fake bus

    def test_every_served_metric_is_in_the_reference(self):
        # docs/reference.md's table is written by hand: a metric added to a
        # daemon without a row there fails here. Families by their # TYPE
        # line (a histogram's _bucket/_sum/_count are its family).
        reference = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 "..", "..", "docs", "reference.md")
        with open(reference, encoding="utf-8") as f:
            documented = set(re.findall(r"^\| `([a-z_]+)` \|", f.read(), re.M))
        self.assertIn("gantry_jobs", documented)  # the table was found
        for address in (self.cluster.metrics_address(),
                        self.cluster.metrics_address("node01")):
            served = set(re.findall(r"^# TYPE (gantry_[a-z_]+) ",
                                    scrape(address), re.M))
            self.assertTrue(served, f"no gantry_ metric at {address}")
            self.assertEqual(served - documented, set(),
                             f"served at {address} but not in "
                             "docs/reference.md's metric table")

    def test_idle_half_requests_do_not_block_scrapes(self):
        # Connections that send half a request and go quiet each hold one
        # of civetweb's threads; with one thread, two of them kept every
        # scraper out for civetweb's default 30 s request timeout.
        for address in (self.cluster.metrics_address(),
                        self.cluster.metrics_address("node01")):
            host, port = address.rsplit(":", 1)
            idle = []
            try:
                for _ in range(3):
                    connection = socket.create_connection((host, int(port)),
                                                          timeout=10)
                    connection.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
                    idle.append(connection)
                # A real scrape is answered though they hang (the timeout
                # is generous for a loaded machine, far below 30 s).
                with urllib.request.urlopen(f"http://{address}/metrics",
                                            timeout=15) as reply:
                    self.assertIn("# TYPE", reply.read().decode())
                # And the idle ones are dropped after the request timeout,
                # not kept for as long as they care to hang on.
                for connection in idle:
                    connection.settimeout(20)
                    try:
                        self.assertEqual(connection.recv(4096)[:0], b"")
                    except ConnectionResetError:
                        pass
            finally:
                for connection in idle:
                    connection.close()

    def test_promtool_finds_no_problem_in_either_endpoint(self):
        if not os.access(PROMTOOL, os.X_OK):
            self.skipTest(f"{PROMTOOL} is missing (Debian package prometheus)")
        for address in (self.cluster.metrics_address(),
                        self.cluster.metrics_address("node02")):
            checked = subprocess.run([PROMTOOL, "check", "metrics"], input=scrape(address),
                                     capture_output=True, text=True, timeout=30)
            self.assertEqual(checked.returncode, 0,
                             f"promtool check metrics on {address}:\n"
                             f"{checked.stdout}{checked.stderr}")
            self.assertEqual(checked.stdout + checked.stderr, "")

    def test_a_real_prometheus_scrapes_gantryd_and_the_agents(self):
        if not os.access(PROMETHEUS, os.X_OK):
            self.skipTest(f"{PROMETHEUS} is missing (Debian package prometheus): "
                          "not checking a real scrape")
        cluster = self.cluster
        home = os.path.join(cluster.dir, "prometheus")
        os.makedirs(home)
        agents = [cluster.metrics_address(n) for n in ("node01", "node02")]
        config = os.path.join(home, "prometheus.yml")
        with open(config, "w") as out:
            out.write(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                "scrape_configs:\n"
                "  - job_name: gantryd\n"
                f"    static_configs: [{{targets: ['{cluster.metrics_address()}']}}]\n"
                "  - job_name: gantry-agent\n"
                f"    static_configs: [{{targets: {agents!r}}}]\n")
        web = f"127.0.0.1:{free_port()}"
        with open(os.path.join(home, "prometheus.log"), "wb") as log:
            prometheus = subprocess.Popen(
                [PROMETHEUS, f"--config.file={config}",
                 f"--storage.tsdb.path={os.path.join(home, 'data')}",
                 f"--web.listen-address={web}"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                preexec_fn=gantry_cluster._die_with_parent)
        self.addCleanup(self.stop_by_pid, prometheus)

        def query(expression):
            url = f"http://{web}/api/v1/query?" + urllib.parse.urlencode(
                {"query": expression})
            try:
                with urllib.request.urlopen(url, timeout=5) as reply:
                    answer = json.load(reply)
            except OSError:
                if prometheus.poll() is not None:
                    raise AssertionError(f"prometheus exited {prometheus.returncode}")
                return None  # not listening yet
            return {r["metric"].get("instance", ""): float(r["value"][1])
                    for r in answer["data"]["result"]}

        up = wait_for(lambda: (lambda r: r if r and len(r) == 3
                               and all(v == 1 for v in r.values()) else None)(query("up")),
                      60, "Prometheus to see all three targets up", interval=0.5)
        self.assertEqual(sorted(up), sorted([cluster.metrics_address()] + agents))
        completed = wait_for(lambda: query('gantry_jobs{state="completed"}'), 20,
                             "Prometheus to have gantry_jobs", interval=0.5)
        self.assertEqual(list(completed.values()), [1])
        connected = query("gantry_agent_controller_connected")
        self.assertEqual(sorted(connected.values()), [1, 1])

    @staticmethod
    def stop_by_pid(process):
        if process.poll() is None:
            os.kill(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(process.pid, signal.SIGKILL)
                process.wait(timeout=10)


if __name__ == "__main__":
    gantry_cluster.main()
