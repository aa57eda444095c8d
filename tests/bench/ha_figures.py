"""The parts of ha_bench.py that are not its phases: the audit of
acknowledged job ids, the CLI rates against one or several controllers,
the standby lag sampler (reads etcd's JSON gateway: the log's head and the
controllers' member records), and the side-by-side report.

Standard library only, like the harness it builds on. LagSampler runs one
thread of its own; the rest runs on the caller's.
"""
import base64
import collections
import json
import os
import statistics
import threading
import time
import urllib.request

import bench_support
import submit_bench
from bench_support import median_p99, percentile


def audit_ids(cluster, ids, other_ids=()):
    """Acknowledged job ids `ids` checked against the cluster's whole
    queue: lost (acknowledged, not stored) and ids acknowledged twice
    (among `ids` and `other_ids`, acknowledged to other clients)."""
    stored = {j["job_id"] for j in cluster.cli_json("queue", "-a")["jobs"]}
    counts = collections.Counter(list(ids) + list(other_ids))
    return {"lost": [j for j in ids if j not in stored],
            "twice": sum(1 for n in counts.values() if n > 1)}


def verify_acks(cluster, client, paths, merged_name="acks.all"):
    """gantry-submit-bench verify over the acks files `paths` together
    (written to `merged_name` in the cluster's dir): every acknowledged
    job fetched and compared with what was sent."""
    merged = cluster.path(merged_name)
    with open(merged, "w") as out:
        for path in paths:
            with open(path) as f:
                out.write(f.read())
    client.port = None
    _, verdict = client.run("verify", "--acks", merged, check=False)
    return verdict


def cli_rates(cluster, runs, jobs, several):
    """{label: (rates, latencies ms)}: `gantry batch` processes one after
    another and 4 at a time on the cluster's own target (one controller:
    its unix socket; several: every controller's TCP address, the
    leader's first), then one after another on the other order (one
    controller: TCP; several: the leader second, so every call is first
    refused by the standby and sent on)."""
    script = cluster.write_script("cli-job.sh", bench_support.TRIVIAL_SCRIPT)
    if several:
        leader = cluster.wait_leader()
        order = [leader] + [n for n in cluster.names if n != leader]
        addresses = [f"127.0.0.1:{cluster.ports[n]}" for n in order]
        targets = {"": ",".join(addresses),
                   "leader 2nd, ": ",".join(reversed(addresses))}
    else:
        targets = {"": cluster.env["GANTRY_CONTROLLER"],
                   "TCP, ": f"127.0.0.1:{cluster.port}"}
    results = {}
    saved = cluster.env["GANTRY_CONTROLLER"]
    try:
        for prefix, target in targets.items():
            cluster.env["GANTRY_CONTROLLER"] = target
            for mode, parallel in (("serial", 1), ("4 parallel", 4)):
                if prefix and parallel > 1:
                    continue
                rates, latencies = [], []
                for _ in range(runs):
                    rate, each, _ = submit_bench.cli_submissions(
                        cluster, script, jobs, parallel)
                    rates.append(rate)
                    latencies += each
                results[prefix + mode] = (rates, latencies)
    finally:
        cluster.env["GANTRY_CONTROLLER"] = saved
    return results


def _prefix_end(key):
    return key[:-1] + bytes([key[-1] + 1])


def _varints(data):
    """{field number: value} of the varint fields of a protobuf message,
    strings skipped (ControllerMember: 3 applied_index, 5 updated_ms)."""
    fields, i = {}, 0
    while i < len(data):
        key, i = _varint(data, i)
        number, kind = key >> 3, key & 7
        if kind == 0:
            fields[number], i = _varint(data, i)
        elif kind == 2:
            length, i = _varint(data, i)
            i += length
        else:
            raise ValueError(f"unexpected protobuf wire type {kind}")
    return fields


def _varint(data, i):
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, i


class LagSampler:
    """Samples, every 20 ms, the log's head in etcd (the leader's last
    appended entry: its key holds the index) and the member records of
    the controllers (each one's applied index and, in its own clock, when
    it published it). Serializable reads from one member: no quorum round
    per read."""

    def __init__(self, cluster, period=0.02):
        port = cluster.etcd.client_ports[cluster.etcd.names[0]]
        self.url = f"http://127.0.0.1:{port}/v3/kv/range"
        prefix = f"/gantry-test/{os.path.basename(cluster.dir)}/".encode()
        self.log_prefix = prefix + b"log/"
        self.members_prefix = prefix + b"members/"
        self.period = period
        self.heads = []      # (unix time, last index in etcd)
        self.published = {}  # name -> {updated_ms: applied index}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def _range(self, prefix, **options):
        body = {"key": base64.b64encode(prefix).decode(),
                "range_end": base64.b64encode(_prefix_end(prefix)).decode(),
                "serializable": True, **options}
        request = urllib.request.Request(
            self.url, data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=5) as response:
            return json.loads(response.read()).get("kvs", [])

    def sample(self):
        head = self._range(self.log_prefix, keys_only=True, limit=1,
                           sort_order="DESCEND", sort_target="KEY")
        now = time.time()
        if head:
            key = base64.b64decode(head[0]["key"])
            self.heads.append((now, int(key[len(self.log_prefix):])))
        for kv in self._range(self.members_prefix):
            name = base64.b64decode(kv["key"])[len(self.members_prefix):]
            fields = _varints(base64.b64decode(kv.get("value", "")))
            self.published.setdefault(name.decode(), {})[
                fields.get(5, 0)] = fields.get(3, 0)

    def run(self):
        while not self.stop.is_set():
            try:
                self.sample()
            except OSError:
                pass  # etcd busy past the timeout: the next sample counts
            self.stop.wait(self.period)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(timeout=30)

    def lag(self, exclude):
        """Lag of every controller but `exclude` (the leader), over its
        publications during the sampling: entries behind the log's head as
        sampled just before, and seconds since the first entry it lacked
        was seen in etcd (0 when it lacked none)."""
        heads = self.heads
        entries, seconds = [], []
        first = heads[0][0] if heads else 0
        for name, records in self.published.items():
            if name == exclude:
                continue
            for updated_ms, applied in records.items():
                at = updated_ms / 1000
                if not heads or at < first:
                    continue
                seen = [index for t, index in heads if t <= at]
                entries.append(max(0, seen[-1] - applied) if seen else 0)
                appeared = next((t for t, index in heads if index > applied),
                                None)
                seconds.append(max(0.0, at - appeared)
                               if appeared is not None and appeared < at
                               else 0.0)
        rate = ((heads[-1][1] - heads[0][1]) / (heads[-1][0] - heads[0][0])
                if len(heads) > 1 and heads[-1][0] > heads[0][0] else 0)
        return {"entries": entries, "seconds": seconds,
                "entries_per_second": rate, "head_samples": len(heads)}


class Figures:
    """What the phases measured, and the report of it all."""

    def __init__(self, args):
        self.args = args
        self.load_before = os.getloadavg()
        self.load_after = None
        self.takeover = None
        self.throughput = {}
        self.kills = None
        self.lag = None

    @staticmethod
    def row(label, single, ha, ratio=""):
        print(f"  {label:<46} {single:>13} {ha:>17} {ratio:>9}")

    def report(self):
        """Prints the side-by-side table; returns True if something that
        must hold did not (a job lost, an id twice, a paused leader's
        acknowledgement)."""
        a = self.args
        print(f"HA figures: 2 controllers on {a.etcd_members} etcd members "
              f"(lease TTL {a.lease_ttl} s) vs one gantryd, auth {a.auth}; "
              f"load average before {self.load_before[0]:.2f}, after "
              f"{self.load_after[0]:.2f}")
        self.row("figure", "single", "HA", "HA/single")
        failed = False
        if self.takeover:
            failed |= self._takeover()
        if len(self.throughput) == 2:
            self._throughput()
        if self.kills:
            failed |= self._kills()
        if self.lag:
            self._lag()
        return failed

    def _takeover(self):
        t = self.takeover
        for key, label in (("kill", "kill -9"), ("stop", "SIGSTOP")):
            self.row(f"takeover after {label}, s (median / worst)", "-",
                     f"{statistics.median(t[key]):.2f} / {max(t[key]):.2f}")
        probe = t["probe"]
        self.row("paused leader: its clients' acks, after SIGCONT", "-",
                 f"{t['probe_acks']}, {t['paused_acks']}")
        self.row("  those acks lost, stored differently, twice", "-",
                 f"{probe['missing']}, {probe['mismatched']}, "
                 f"{probe['duplicate_ids']}")
        late = t["late"]
        if late:
            # Stored: committed through the log (whose appends only the
            # leader of the moment can make) before the pause, sent after.
            self.row("  acks after SIGCONT that are not stored", "-",
                     str(late["missing"] + late["mismatched"]))
        self.row("paused leader: SIGCONT to step-down, s (max)", "-",
                 f"{max(t['step_down']):.2f}")
        self.row("takeover load: acked, lost, ids twice", "-",
                 f"{t['acknowledged']}, {len(t['lost'])}, {t['twice']}")
        late_bad = late and (late["missing"] or late["mismatched"])
        return bool(late_bad or t["lost"] or t["twice"] or
                    probe["missing"] or probe["mismatched"] or
                    probe["duplicate_ids"] or probe["failed_lookups"])

    def _throughput(self):
        single, ha = self.throughput["single"], self.throughput["ha"]
        rate = {m: statistics.median(w["rate"] for w in f["windows"])
                for m, f in self.throughput.items()}
        self.row(f"{self.args.clients} stream clients, submissions/s (median)",
                 f"{rate['single']:.0f}", f"{rate['ha']:.0f}",
                 f"{rate['ha'] / rate['single']:.2f}")
        p99 = {m: median_p99(f["latencies"])[1]
               for m, f in self.throughput.items()}
        self.row("  ack p99 ms", f"{p99['single']:.1f}", f"{p99['ha']:.1f}")
        for key, label in (("cores", "gantryd (leader) cores"),
                           ("etcd", "etcd cores (all members)"),
                           ("standby", "standby gantryd cores"),
                           ("client_cores", "client cores"),
                           ("commit", "share of window in commits"),
                           ("commit_ms", "ms per commit"),
                           ("per_commit", "submissions per commit")):
            values = {m: statistics.median(w.get(key, 0) for w in f["windows"])
                      for m, f in self.throughput.items()}
            self.row(f"  {label}", f"{values['single']:.2f}",
                     f"{values['ha']:.2f}")
        for label, (rates, latencies) in ha["cli"].items():
            mine = statistics.median(rates)
            theirs = single["cli"].get(label)
            base = statistics.median(theirs[0]) if theirs else None
            self.row(f"CLI {label}, submissions/s (median)",
                     f"{base:.1f}" if base else "-", f"{mine:.1f}",
                     f"{mine / base:.2f}" if base else "")
        for label, (rates, _) in single["cli"].items():
            if label not in ha["cli"]:
                self.row(f"CLI {label}, submissions/s (median)",
                         f"{statistics.median(rates):.1f}", "-")

    def _kills(self):
        k = self.kills
        flood, cli = k["flood"], k["cli"]
        lost = len(cli["lost"]) + flood["missing"]
        twice = cli["twice"]  # over the CLI's and the flood's ids together
        self.row(f"{len(k['gaps'])} leader kill -9s: acked (CLI + API)", "-",
                 f"{k['cli_acknowledged']} + {flood['acknowledged']}")
        self.row("  lost, stored differently, ids twice", "-",
                 f"{lost}, {flood['mismatched']}, {twice}")
        if flood["failed_lookups"]:
            self.row("  lookups that failed (not checked)", "-",
                     str(flood["failed_lookups"]))
        self.row("  answered again, s (median / worst)", "-",
                 f"{statistics.median(k['gaps']):.2f} / {max(k['gaps']):.2f}")
        return bool(lost or twice or flood["mismatched"] or
                    flood["failed_lookups"])

    def _lag(self):
        g = self.lag
        self.row("lag flood: acked submissions/s", "-", f"{g['rate']:.0f}")
        self.row("  log entries appended/s", "-",
                 f"{g['entries_per_second']:.0f}")
        if not g["entries"]:
            self.row("  standby lag", "-", "no samples")
            return
        self.row("  standby lag, entries (p99 / max)", "-",
                 f"{percentile(g['entries'], 0.99)} / {max(g['entries'])}")
        self.row("  standby lag, s (p99 / max)", "-",
                 f"{percentile(g['seconds'], 0.99):.3f} / "
                 f"{max(g['seconds']):.3f}")
        self.row("  standby publications sampled", "-", str(len(g["entries"])))
