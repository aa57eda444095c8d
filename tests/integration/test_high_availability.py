#!/usr/bin/env python3
"""Several gantryds on one etcd cluster (gantryd --etcd): a hot standby
takes over from a leader that dies or freezes, with no acknowledged job
lost, none started twice, running jobs untouched, and a deposed leader
that acts on nothing; etcd losing a member changes nothing, etcd losing
its quorum stops acknowledgements with a clear error until it returns.
An admin hands leadership over on purpose (gantry handover, scontrol
takeover) under load with the same guarantees, and a refused hand-over
changes nothing; leader and standby export the replication metrics.

Skips, with a message, where etcd (Debian's etcd-server) is absent. The
figures over 20 failovers are tests/bench/failover_bench.py's."""

import json
import os
import re
import signal
import subprocess
import threading
import time
import unittest

import gantry_cluster
from etcd_cluster import etcd_binary
from gantry_cluster import WAIT_FOR_FILE, ClusterTestCase, wait_for
from ha_cluster import HaCluster
from test_metrics import scrape, value

NOBODY = 65534

# Each rank records "attempt rank node pid" once, then waits for release.
RANK_SCRIPT = """#!/bin/bash
""" + WAIT_FOR_FILE + """
echo "$GANTRY_ATTEMPT $SLURM_PROCID $SLURMD_NODENAME $$" >> "runs.$SLURM_JOB_ID"
wait_for_file "release.$SLURM_JOB_ID" || exit 1
"""


class SubmissionLoad:
    """Submits small jobs in a loop from a thread, recording the id of
    every submission the controller acknowledged and when each ended."""

    def __init__(self, cluster):
        self.cluster = cluster
        self.acknowledged = []  # job ids
        self.answered_at = []   # monotonic time of each acknowledgement
        self.asked_at = []      # ... and of its request
        self.failures = []      # stderr of refused submissions
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop.is_set():
            asked = time.monotonic()
            result = self.cluster.cli("batch", "--parsable", "--wrap", "true",
                                      check=False, timeout=60)
            if result.returncode == 0 and result.stdout.strip().isdigit():
                self.acknowledged.append(int(result.stdout.strip()))
                self.answered_at.append(time.monotonic())
                self.asked_at.append(asked)
            else:
                self.failures.append(result.stderr.strip())

    def answered_after(self, killed_at):
        """Seconds from `killed_at` to the first acknowledgement the old
        leader cannot have given (a request made before the kill and
        answered within 50 ms of it was the old leader's); None if none
        yet."""
        for asked, answered in zip(self.asked_at, self.answered_at):
            if answered > killed_at + 0.05 or (asked > killed_at and
                                               answered > killed_at):
                return answered - killed_at
        return None

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(timeout=90)


def start_long_job(cluster, rank_script=RANK_SCRIPT):
    """A 2-node job whose ranks run until released; its id once both
    ranks have recorded themselves (runs())."""
    script = cluster.write_script("rank.sh", rank_script)
    job = cluster.submit(script, "-N2", "--ntasks-per-node=1",
                         "--max-restarts=0")
    cluster.wait_job(job, "RUNNING")
    wait_for(lambda: len(runs(cluster, job)) == 2, 20, "both ranks")
    return job


def acknowledgement_gap(acknowledged_at, start, end):
    """The longest wait between consecutive acknowledgements (monotonic
    times) that spans part of [start, end]: how long submissions went
    unacknowledged around it, give or take one submission's own time."""
    times = sorted(acknowledged_at)
    gaps = [b - a for a, b in zip(times, times[1:]) if b > start and a < end]
    return max(gaps) if gaps else None


def standing_by(cluster, name):
    """Whether `name` has published its member record as a standby."""
    try:
        controllers = cluster.status()["replication"]["controllers"]
    except Exception:  # noqa: BLE001 (no leader answers at the moment)
        return False
    return any(c["name"] == name and c["role"] == "standby"
               for c in controllers)


def runs(cluster, job_id):
    path = cluster.path(f"runs.{job_id}")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.split() for line in f if line.strip()]


@unittest.skipUnless(etcd_binary(), "etcd is not installed (apt-get install "
                     "etcd-server): the replicated controller is not tested")
class HighAvailabilityTest(ClusterTestCase):

    def start_ha(self, **options):
        cluster = HaCluster(label=self.id(), **options)
        self._clusters.append(cluster)
        self.addCleanup(cluster.stop_processes)
        return cluster.start()

    def start_long_job(self, cluster):
        return start_long_job(cluster)

    def assert_load_survived(self, cluster, load, long_job, before):
        self.assert_all_known(cluster, load.acknowledged)
        # Jobs are numbered once: no id acknowledged twice.
        self.assertEqual(len(load.acknowledged), len(set(load.acknowledged)))
        # The running job was not touched: the same two rank processes, each
        # started once.
        self.assertEqual(runs(cluster, long_job), before)
        self.assertEqual(cluster.job(long_job)["state"], "RUNNING")
        cluster.touch(f"release.{long_job}")
        cluster.wait_job(long_job, "COMPLETED", timeout=30)
        self.assertEqual(runs(cluster, long_job), before)

    def assert_all_known(self, cluster, job_ids):
        known = set()
        for job_id in job_ids:
            if cluster.cli("job", str(job_id), "--json",
                           check=False).returncode == 0:
                known.add(job_id)
        lost = sorted(set(job_ids) - known)
        self.assertEqual(lost, [], f"acknowledged jobs lost: {lost}")

    def test_leader_killed_under_load_and_state_wiped(self):
        cluster = self.start_ha(agents=2, controllers=2)
        long_job = self.start_long_job(cluster)
        before = runs(cluster, long_job)
        gaps = []
        with SubmissionLoad(cluster) as load:
            for round_number in range(3):
                wait_for(lambda: len(load.acknowledged) >= 3 * (round_number + 1),
                         30, "submissions under load")
                leader = cluster.wait_leader()
                killed_at = time.monotonic()
                cluster.kill_named(leader)
                # The first acknowledgement after the kill comes from the
                # new leader.
                gaps.append(wait_for(lambda: load.answered_after(killed_at),
                                     30, "a submission acknowledged after the kill"))
                new_leader = cluster.wait_leader(other_than=leader)
                self.assertNotEqual(new_leader, leader)
                # The old leader comes back as a standby; on the second
                # round its disk is gone too.
                cluster.start_named_controller(leader, wipe=round_number == 1)
        print(f"\nfailover: submissions answered again after "
              f"{', '.join(f'{g:.2f}' for g in gaps)} s")
        for gap in gaps:
            # The goal is 5 s, which tests/bench/controller_failover_bench.py
            # measures on a quiet machine (median 2.4 s). Under a parallel
            # ctest a failover has taken 10 s (agents back late), so this
            # test bounds it loosely and prints what clients were told.
            self.assertLess(gap, 20, f"a failover took {gap:.1f} s; "
                            f"refusals: {load.failures[-5:]}")
        if max(gaps) > 5:
            print(f"slow failover; the last refusals: {load.failures[-5:]}")
        self.assert_load_survived(cluster, load, long_job, before)

    def test_paused_leader_is_replaced_and_acts_on_nothing(self):
        cluster = self.start_ha(agents=2, controllers=2, metrics=True)
        long_job = self.start_long_job(cluster)
        before = runs(cluster, long_job)
        leader = cluster.wait_leader()
        paused = cluster.controllers[leader]
        paused.send(signal.SIGSTOP)
        try:
            # A client that only knows the paused leader: its request waits
            # in the socket until the leader resumes.
            env = dict(cluster.env)
            env["GANTRY_CONTROLLER"] = f"127.0.0.1:{cluster.ports[leader]}"
            script = cluster.write_script("late.sh", "#!/bin/bash\ntrue\n")
            late = subprocess.Popen(
                [cluster.cli_bin, "batch", "--parsable", "-J", "late-submit",
                 script], cwd=cluster.work_dir, env=env,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            new_leader = cluster.wait_leader(other_than=leader, timeout=20)
            # The new leader serves, and the agents follow it.
            job = cluster.submit(cluster.write_script("ok.sh", "#!/bin/bash\ntrue\n"))
            cluster.wait_job(job, "COMPLETED", timeout=30)
        finally:
            woken_at = len(paused.log_text())
            paused.send(signal.SIGCONT)
        # Woken past its lease, it is no leader by its own clock at once:
        # its metrics never say otherwise (until it re-executes).
        metrics = f"127.0.0.1:{cluster.metrics_ports[leader]}"
        seen = []
        sample_until = time.monotonic() + 1.5
        while time.monotonic() < sample_until:
            try:
                seen.append(value(scrape(metrics), "gantry_replication_is_leader"))
            except OSError:
                pass  # re-executing
            time.sleep(0.05)
        self.assertNotIn(1, seen)
        # It stepped down and follows.
        wait_for(lambda: "stepping down" in paused.log_text(), 20,
                 "the resumed leader to step down")
        # ... and it started nothing, nor said it did, on the way out.
        self.assertNotIn("job started", paused.log_text()[woken_at:])
        self.assertEqual(cluster.wait_leader(), new_leader)
        self.assertEqual(runs(cluster, long_job), before)
        self.assertEqual(cluster.job(long_job)["state"], "RUNNING")
        cluster.touch(f"release.{long_job}")
        cluster.wait_job(long_job, "COMPLETED", timeout=30)
        # The CLI asks again with the submission's token for up to two
        # minutes when it gets no answer (cli/client/controller_client.cc).
        out, err = late.communicate(timeout=180)
        # The deposed leader acknowledged nothing: its client got no job id,
        # or an id the new leader gave (the CLI followed it there), or was
        # told the outcome is unknown, never a job id that does not exist.
        if late.returncode == 0:
            late_id = int(out.strip())
            self.assertEqual(cluster.job(late_id)["name"], "late-submit")
        else:
            self.assertRegex(err, "controller|outcome unknown")
        self.assertEqual(runs(cluster, long_job), before)

    def test_etcd_member_down_and_quorum_lost(self):
        cluster = self.start_ha(agents=2, controllers=2, etcd_members=3)
        long_job = self.start_long_job(cluster)
        before = runs(cluster, long_job)
        script = cluster.write_script("ok.sh", "#!/bin/bash\ntrue\n")
        # One member of three down: nothing changes.
        cluster.etcd.kill_member("e3")
        cluster.wait_job(cluster.submit(script), "COMPLETED", timeout=30)
        # gantry status says so (its etcd figures may be a second old).
        wait_for(lambda: sorted(m["reachable"] for m in
                                cluster.status()["replication"]["etcd"])
                 == [False, True, True], 10, "status to show e3 unreachable")
        # Two of three down: no quorum. Nothing is acknowledged: a
        # submission waits (the CLI asks again with its token) instead of
        # being told it failed; the job keeps running.
        cluster.etcd.kill_member("e2")
        # No hand-over either (asked at once: without a quorum the leader
        # steps down within seconds).
        refused = cluster.handover(check=False)
        self.assertNotEqual(refused.returncode, 0, refused.stdout)
        # The CLI asks again while the leader answers UNAVAILABLE, so it
        # may end only once the leader has stepped down for want of quorum.
        self.assertRegex(refused.stderr,
                         "etcd|quorum|cannot reach a leading controller")
        waiting = subprocess.Popen(
            [cluster.cli_bin, "batch", "--parsable", "-J", "during-no-quorum",
             script], cwd=cluster.work_dir, env=cluster.env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(waiting.kill)
        time.sleep(2)
        if waiting.poll() is not None:
            self.fail("a submission was answered without a quorum: "
                      f"{waiting.communicate()}")
        self.assertEqual(runs(cluster, long_job), before)
        # Quorum back: it recovers by itself.
        cluster.etcd.start_member("e2")
        cluster.etcd.start_member("e3")
        cluster.etcd.wait_healthy(cluster.etcd.names)
        job = wait_for(lambda: self.try_submit(cluster, script), 60,
                       "a submission accepted after quorum returned", 0.5)
        cluster.wait_job(job, "COMPLETED", timeout=30)
        self.assertEqual(runs(cluster, long_job), before)
        # The leader that stepped down for want of quorum waited for etcd
        # as a standby (it did not exit): both controllers run.
        for name, controller in cluster.controllers.items():
            self.assertTrue(controller.running(), f"{name} exited")
        cluster.touch(f"release.{long_job}")
        cluster.wait_job(long_job, "COMPLETED", timeout=40)
        # The submission that waited got its answer: one job, or word
        # that its outcome is unknown, never a plain failure.
        out, err = waiting.communicate(timeout=180)
        if waiting.returncode == 0:
            cluster.wait_job(int(out.strip()), "COMPLETED", timeout=30)
        else:
            self.assertIn("outcome unknown", err)
        named = [j for j in json.loads(cluster.cli(
            "queue", "--all", "--json").stdout)["jobs"]
            if j.get("name") == "during-no-quorum"]
        self.assertLessEqual(len(named), 1, named)

    def test_etcd_raft_leader_down_keeps_the_gantry_leader(self):
        """etcd electing a new raft leader is no reason for a Gantry
        election: the leader's renewals wait it out."""
        cluster = self.start_ha(agents=1, controllers=2, etcd_members=3)
        leader = cluster.wait_leader()
        script = cluster.write_script("ok.sh", "#!/bin/bash\ntrue\n")
        cluster.wait_job(cluster.submit(script), "COMPLETED", timeout=30)
        status = json.loads(cluster.etcd.etcdctl(
            "endpoint", "status", "-w", "json").stdout)
        raft_leader = next(
            name for name, member in zip(cluster.etcd.names, status)
            if member["Status"]["leader"] == member["Status"]["header"]["member_id"])
        cluster.etcd.kill_member(raft_leader)
        # Well past a lease and an etcd election.
        for _ in range(3):
            cluster.wait_job(cluster.submit(script), "COMPLETED", timeout=40)
        time.sleep(max(cluster.lease_ttl, 2) + 4)
        self.assertEqual(cluster.wait_leader(), leader)
        self.assertNotIn("stepping down",
                         cluster.controllers[leader].log_text())

    def test_handover_twice_under_load(self):
        """gantry handover, twice under a submission loop: the other
        controller leads each time, the old leader re-executes as a
        standby, no acknowledged job is lost or numbered twice, and a
        running 2-node job keeps its ranks."""
        cluster = self.start_ha(agents=2, controllers=2)
        long_job = self.start_long_job(cluster)
        before = runs(cluster, long_job)
        gaps = []
        with SubmissionLoad(cluster) as load:
            for round_number in range(2):
                wait_for(lambda: len(load.acknowledged) >= 3 * (round_number + 1),
                         30, "submissions under load")
                leader = cluster.wait_leader()
                standby = next(n for n in cluster.names if n != leader)
                wait_for(lambda: standing_by(cluster, standby), 30,
                         f"{standby} to stand by")
                started = time.monotonic()
                handed = cluster.handover()
                ended = time.monotonic()
                self.assertIn(f"{leader} handed leadership to {standby}",
                              handed.stdout)
                # The command returns once the successor answers.
                self.assertEqual(cluster.leader_name(), standby)
                wait_for(lambda: any(t > ended for t in load.answered_at), 30,
                         "a submission acknowledged after the hand-over")
                gaps.append(acknowledgement_gap(load.answered_at, started, ended))
                old = cluster.controllers[leader]
                wait_for(lambda: "stepping down" in old.log_text(), 10,
                         f"{leader} to re-execute as a standby")
                self.assertTrue(old.running())
                self.assertIn("leadership handed over", old.log_text())
        print(f"\nhand-over: submissions unacknowledged for at most "
              f"{', '.join(f'{g:.2f}' for g in gaps)} s")
        for gap in gaps:
            # The goal is under 1 s, which tests/bench/
            # controller_handover_bench.py measures; a loaded machine
            # (parallel ctest) may take longer.
            self.assertLess(gap, 10, f"refusals: {load.failures[-5:]}")
        self.assert_load_survived(cluster, load, long_job, before)

    def test_handover_refused_changes_nothing(self):
        cluster = self.start_ha(agents=1, controllers=2)
        cluster.add_slurm_commands()
        leader = cluster.wait_leader()
        standby = next(n for n in cluster.names if n != leader)
        wait_for(lambda: standing_by(cluster, standby), 30,
                 f"{standby} to stand by")
        # Admins only, checked by gantryd (the credential says nobody).
        refused = cluster.handover(check=False, uid=NOBODY)
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn("gantry handover: error:", refused.stderr)
        self.assertIn("needs an admin", refused.stderr)
        # A standby nobody has, by name or by position.
        refused = cluster.handover("ctl9", check=False)
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn("no standby named ctl9", refused.stderr)
        refused = cluster.sh("scontrol takeover 2")
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn("no standby number 2", refused.stderr)
        # No standby at all: its member record goes with its lease.
        cluster.kill_named(standby)
        wait_for(lambda: standby not in
                 [c["name"] for c in cluster.status()["replication"]["controllers"]],
                 20, f"{standby}'s record to expire")
        refused = cluster.handover(check=False)
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn("no standby to hand leadership to", refused.stderr)
        # Nothing changed: the same process leads and acknowledges.
        self.assertEqual(cluster.leader_name(), leader)
        script = cluster.write_script("ok.sh", "#!/bin/bash\ntrue\n")
        cluster.wait_job(cluster.submit(script), "COMPLETED", timeout=30)
        self.assertNotIn("stepping down", cluster.controllers[leader].log_text())
        # With the standby back, Slurm's name for it hands over.
        cluster.start_named_controller(standby)
        wait_for(lambda: standing_by(cluster, standby), 30,
                 f"{standby} to stand by again")
        taken = cluster.sh("scontrol takeover")
        self.assertEqual(taken.returncode, 0, taken.stderr)
        self.assertIn(f"handed leadership to {standby}", taken.stdout)
        self.assertEqual(cluster.wait_leader(), standby)

    def test_replication_metrics_on_leader_and_standby(self):
        cluster = self.start_ha(agents=1, controllers=2, metrics=True)
        leader = cluster.wait_leader()
        standby = next(n for n in cluster.names if n != leader)
        script = cluster.write_script("ok.sh", "#!/bin/bash\ntrue\n")
        cluster.wait_job(cluster.submit(script), "COMPLETED", timeout=30)

        def figures(name):
            try:
                text = scrape(cluster.metrics_address(name))
            except OSError:
                return None
            names = ("is_leader", "leader_term", "leader_changes_total",
                     "applied_index", "leader_index", "lag_entries",
                     "lag_seconds")
            found = {n: value(text, f"gantry_replication_{n}") for n in names}
            found["etcd_reachable"] = value(
                text, "gantry_replication_etcd_members", state="reachable")
            return found

        def settled():
            ours, theirs = figures(leader), figures(standby)
            if not ours or not theirs or ours["is_leader"] != 1 or \
                    theirs["is_leader"] != 0 or theirs["lag_entries"] != 0 or \
                    not ours["applied_index"] or \
                    ours["applied_index"] != theirs["applied_index"] or \
                    theirs["leader_index"] != ours["applied_index"] or \
                    ours["etcd_reachable"] != 1:
                return None
            return ours, theirs

        # Sampled every second (is_leader every 100 ms): wait for a sample
        # taken after the job's commits.
        ours, theirs = wait_for(settled, 20, "both controllers' metrics")
        self.assertGreater(ours["applied_index"], 0)
        self.assertEqual(theirs["lag_seconds"], 0)
        self.assertGreater(ours["leader_term"], 0)
        self.assertEqual(theirs["leader_term"], ours["leader_term"])
        # The controller's own metrics are the leader's alone.
        self.assertIsNotNone(value(scrape(cluster.metrics_address(leader)),
                                   "gantry_jobs"))
        self.assertIsNone(value(scrape(cluster.metrics_address(standby)),
                                "gantry_jobs"))
        # After a hand-over the roles swap, the term moves on, and the new
        # leader counted the change; the old one serves again on its port
        # once re-executed.
        cluster.handover()

        def swapped():
            now, before = figures(standby), figures(leader)
            if not now or not before or now["is_leader"] != 1 or \
                    before["is_leader"] != 0 or now["leader_changes_total"] < 1:
                return None
            return now, before

        now, before = wait_for(swapped, 20, "the metrics to show the hand-over")
        self.assertGreater(now["leader_term"], ours["leader_term"])
        wait_for(lambda: (figures(leader) or {}).get("leader_term") ==
                 now["leader_term"], 10, "the old leader to see the new term")

    @staticmethod
    def try_submit(cluster, script):
        result = cluster.cli("batch", "--parsable", script, check=False,
                             timeout=60)
        text = result.stdout.strip()
        return int(text) if result.returncode == 0 and text.isdigit() else None

    def test_point_gantryd_replicate_after_append_before_apply(self):
        """A leader dies with a batch in the log in etcd, not yet in its
        RocksDB nor acknowledged: the next leader applies it, and the
        client that retried gets the job it submitted, once."""
        point = "gantryd.replicate.after_append_before_apply"
        cluster = self.start_ha(agents=2, controllers=2)
        long_job = self.start_long_job(cluster)
        before = runs(cluster, long_job)
        leader = cluster.wait_leader()
        standby = next(n for n in cluster.names if n != leader)
        # The standby, armed, is made the leader: it dies at its first
        # append, after etcd holds the batch.
        cluster.kill_named(standby)
        cluster.start_named_controller(standby, env={"GANTRY_CRASH_AT": point})
        wait_for(lambda: "standing by" in cluster.controllers[standby].log_text(),
                 20, "the armed standby to follow the log")
        cluster.kill_named(leader)
        wait_for(lambda: not cluster.controllers[standby].running(), 30,
                 f"{standby} to die at {point}")
        prefix = f"/gantry-test/{os.path.basename(cluster.dir)}/log/"
        in_etcd = len(cluster.etcd.etcdctl("get", "--prefix", "--keys-only",
                                           prefix).stdout.split())
        cluster.start_named_controller(leader)
        new_leader = cluster.wait_leader(timeout=30)
        self.assertEqual(new_leader, leader)
        # It applied every entry, the dead leader's last one included.
        elected = re.findall(r'msg="elected leader" applied_index=(\d+)',
                             cluster.controllers[leader].log_text())
        self.assertGreaterEqual(int(elected[-1]), in_etcd)
        # A submission through the whole episode: acknowledged once.
        script = cluster.write_script("once.sh", "#!/bin/bash\ntrue\n")
        job = cluster.submit(script, "-J", "once", per_task=False)
        cluster.wait_job(job, "COMPLETED", timeout=30)
        named = [j["job_id"] for j in cluster.cli_json("queue", "--all")["jobs"]
                 if j["name"] == "once"]
        self.assertEqual(named, [job])
        cluster.start_named_controller(standby)
        self.assertEqual(runs(cluster, long_job), before)
        cluster.touch(f"release.{long_job}")
        cluster.wait_job(long_job, "COMPLETED", timeout=30)

    def test_leader_stops_with_a_batch_etcd_has_not_answered(self):
        """systemctl stop of the leader while a batch waits for etcd: the
        stop resigns the leadership, and the batch's commit must then give
        up (not committed; the client retries with its token) instead of
        waiting for a renewal that can no longer come. It once waited
        forever, and systemd killed gantryd after TimeoutStopSec."""
        cluster = self.start_ha(agents=1, controllers=1)
        leader = cluster.wait_leader()
        daemon = cluster.controllers[leader]
        script = cluster.write_script("ok.sh", "#!/bin/bash\ntrue\n")
        etcd = cluster.etcd.processes[cluster.etcd.names[0]]
        os.kill(etcd.pid, signal.SIGSTOP)
        self.addCleanup(lambda: etcd.poll() is None
                        and os.kill(etcd.pid, signal.SIGCONT))
        waiting = subprocess.Popen(
            [cluster.cli_bin, "batch", "--parsable", "-J", "in-flight", script],
            cwd=cluster.work_dir, env=cluster.env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(waiting.kill)
        time.sleep(0.5)
        daemon.send(signal.SIGTERM)
        # A stop may not wait for etcd: it is often down when admins stop
        # things.
        try:
            daemon.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.fail("gantryd did not stop within 15 s of SIGTERM with "
                      "etcd not answering: " + daemon.log_text()[-3000:])
        finally:
            os.kill(etcd.pid, signal.SIGCONT)
        self.assertEqual(daemon.process.returncode, 0, daemon.log_text()[-3000:])
        self.assertNotIn("starting over as a standby", daemon.log_text())
        # Nothing acknowledged was lost: started again, the controller
        # has the job if (and only if) the client was told its id.
        cluster.start_named_controller(leader)
        cluster.wait_leader()
        out, _ = waiting.communicate(timeout=120)
        named = [j["job_id"] for j in cluster.cli_json("queue", "--all")["jobs"]
                 if j["name"] == "in-flight"]
        if waiting.returncode == 0:
            self.assertEqual(named, [int(out.strip())])
        self.assertLessEqual(len(named), 1, named)

    def test_status_shows_roles_lag_and_etcd(self):
        cluster = self.start_ha(agents=1, controllers=2)
        leader = cluster.wait_leader()
        standby = next(n for n in cluster.names if n != leader)
        # A standby's record appears with its first lease renewal, and
        # status answers may be a second old.
        wait_for(lambda: standing_by(cluster, standby), 10,
                 f"{standby}'s member record")
        status = cluster.status()["replication"]
        self.assertEqual(status["leader"], leader)
        roles = {c["name"]: c["role"] for c in status["controllers"]}
        self.assertEqual(roles[leader], "leader")
        self.assertEqual(sorted(roles.values()), ["leader", "standby"])
        for controller in status["controllers"]:
            self.assertGreaterEqual(controller["lag_entries"], 0)
        self.assertTrue(all(m["reachable"] for m in status["etcd"]))
        screen = cluster.cli("status", "--color=never").stdout
        self.assertIn(f"Leader", screen)
        self.assertIn("standby", screen)
        # A standby asked directly names the leader, and the CLI, given
        # only the standby, asks the leader.
        env = dict(cluster.env)
        env["GANTRY_CONTROLLER"] = f"127.0.0.1:{cluster.ports[standby]}"
        direct = subprocess.run([cluster.cli_bin, "status", "--json"],
                                env=env, capture_output=True, text=True,
                                timeout=30)
        self.assertEqual(direct.returncode, 0, direct.stderr)
        self.assertEqual(json.loads(direct.stdout)["replication"]["leader"],
                         leader)


if __name__ == "__main__":
    gantry_cluster.main()
