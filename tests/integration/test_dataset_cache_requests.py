#!/usr/bin/env python3
"""The real gantry-agent carrying out the controller's dataset cache
requests (DatasetPrefetch, DatasetEvict), each answered with one
DatasetCacheResult: a prefetch copies the tree into the node's cache as
its user (a copy only that user can read), a second one is a hit, an
eviction removes it, and the next heartbeat's cache report shows each
change with the cache's capacity and use. A prefetch for a waiting job
holds the copy for that job (listed among its pinning jobs, refused to an
eviction) until its hold lapses, or, once the job's own launch on the
node has staged it, until the job's ranks there end. Users are checked
as for a launch; a failure names the node, the dataset and the file; an
interrupted prefetch resumes after the agent restarts, and a helper
copying when the agent is killed dies with it.

The agent's stream ends at gantry-stream-controller (tests/tools), which
sends exactly what the test writes and prints what the agent answers, so
that the agent's side is tested alone. The real agent's tests need root
(the copies are made as `nobody`); gantry-fleet, which has no
cache and refuses both requests, is tested without."""

import json
import os
import pwd
import queue
import signal
import subprocess
import threading
import time
import unittest

import gantry_cluster
from gantry_cluster import ClusterTestCase

USER = "nobody"
KIB = 1 << 10


class StreamController:
    """gantry-stream-controller on a unix socket: send() writes a
    ControllerMessage (text format), messages() are the JSON lines it has
    printed so far."""

    def __init__(self, socket_path, heartbeat_ms):
        binary = os.path.join(gantry_cluster.build_dir(), "tests", "tools",
                              "gantry-stream-controller")
        if not os.access(binary, os.X_OK):
            raise RuntimeError(f"{binary} is missing: build it first")
        self.target = "unix:" + socket_path
        self.process = subprocess.Popen(
            [binary, self.target, str(heartbeat_ms)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True,
            preexec_fn=gantry_cluster._die_with_parent)
        self._lines = queue.Queue()
        self._seen = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.wait(lambda m: "listening" in m, 10, "the stream controller")

    def _read(self):
        for line in self.process.stdout:
            self._lines.put(json.loads(line))

    def messages(self):
        while True:
            try:
                self._seen.append(self._lines.get_nowait())
            except queue.Empty:
                return list(self._seen)

    def wait(self, predicate, timeout, what, after=0):
        """The first message from index `after` on that satisfies
        `predicate`, waiting at most `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            for message in self.messages()[after:]:
                if predicate(message):
                    return message
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; got "
                                     f"{self.messages()[after:]}")
            time.sleep(0.05)

    def send(self, text):
        mark = len(self.messages())
        self.process.stdin.write(text.replace("\n", " ") + "\n")
        self.process.stdin.flush()
        sent = self.wait(lambda m: "sent" in m or "error" in m, 10,
                         "the message to be sent", after=mark)
        if "error" in sent:
            raise AssertionError(f"not sent: {sent['error']}")

    def stop(self):
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self._reader.join(timeout=5)
        self.process.stdout.close()


@unittest.skipUnless(os.geteuid() == 0, "needs root to copy as another user")
class DatasetCacheRequestsTest(ClusterTestCase):

    def setUp(self):
        # No agents of gantryd's own: the one agent dials the stream
        # controller.
        self.cluster = self.start_cluster(agents=0, auth="none")
        os.chmod(self.cluster.dir, 0o755)  # `nobody` reads the shared tree
        self.user = pwd.getpwnam(USER)
        self.shared = self.cluster.path("shared", "train")
        os.makedirs(os.path.join(self.shared, "sub"))
        for i in range(5):
            with open(os.path.join(self.shared, f"shard{i}.bin"), "wb") as f:
                f.write(bytes([65 + i]) * (64 * KIB))
        with open(os.path.join(self.shared, "sub", "labels"), "w") as f:
            f.write("cat\ndog\n")
        self.total = 5 * 64 * KIB + 8
        self.controller = StreamController(self.cluster.path("stream.sock"),
                                           heartbeat_ms=200)
        self.addCleanup(self.controller.stop)
        self.cluster.agent_controller = self.controller.target
        self.cache_dir = os.path.join(self.cluster.dir, "agents", "node01",
                                      "datasets")
        self.start_agent()
        self.next_id = 1
        self.last_request_mark = 0

    def start_agent(self, env=None, cache_size="64M"):
        mark = len(self.controller.messages())
        self.cluster.agent_args["node01"] = ["--cache-size", cache_size]
        self.cluster.start_agent("node01", env=env)
        self.controller.wait(lambda m: "register" in m, 20,
                             "the agent's Register", after=mark)

    def request(self, kind, **fields):
        """Sends a DatasetPrefetch or DatasetEvict; returns its answer."""
        request_id = self.next_id
        self.next_id += 1
        body = " ".join(f"{key}: {value}" for key, value in fields.items())
        mark = len(self.controller.messages())
        self.last_request_mark = mark
        self.controller.send(
            f"{kind} {{ request_id: {request_id} {body} }}")
        answer = self.controller.wait(
            lambda m: "dataset_cache_result" in m, 60,
            f"the answer to request {request_id}", after=mark)
        result = answer["dataset_cache_result"]
        self.assertEqual(int(result["request_id"]), request_id)
        # Exactly one answer to each request.
        time.sleep(0.3)
        answers = [m for m in self.controller.messages()[mark:]
                   if "dataset_cache_result" in m]
        self.assertEqual(len(answers), 1, answers)
        return result

    def prefetch(self, uid=None, user=None, path=None, name="train", job=0,
                 hold_ms=0):
        uid = self.user.pw_uid if uid is None else uid
        return self.request(
            "dataset_prefetch", uid=uid, gid=self.user.pw_gid,
            user=json.dumps(user or USER),
            dataset=f'{{ name: "{name}" path: {json.dumps(path or self.shared)} }}',
            job_id=job, hold_ms=hold_ms)

    def evict(self, name="train", uid=None):
        return self.request("dataset_evict",
                            owner_uid=self.user.pw_uid if uid is None else uid,
                            name=json.dumps(name))

    def next_report(self, predicate=lambda report: True, timeout=10):
        """The first cache report in a heartbeat since the last request was
        sent that satisfies `predicate`."""
        mark = self.last_request_mark
        message = self.controller.wait(
            lambda m: "dataset_cache" in m.get("heartbeat", {})
            and predicate(m["heartbeat"]["dataset_cache"]),
            timeout, "a heartbeat with the cache report", after=mark)
        return message["heartbeat"]["dataset_cache"]

    def test_prefetch_then_hit_then_evict(self):
        first = self.prefetch()
        self.assertTrue(first.get("ok"), first)
        self.assertEqual(int(first["bytes_total"]), self.total)
        self.assertEqual(int(first["bytes_copied"]), self.total)
        self.assertFalse(first.get("hit", False))
        version = first["version"]
        entry = os.path.join(self.cache_dir, str(self.user.pw_uid),
                             f"train.{version}")
        self.assertTrue(os.path.isdir(entry), entry)
        # Copied as the user: theirs, and private to them.
        user_dir = os.path.dirname(entry)
        self.assertEqual(os.stat(user_dir).st_uid, self.user.pw_uid)
        self.assertEqual(os.stat(user_dir).st_mode & 0o777, 0o700)
        self.assertEqual(os.stat(entry).st_uid, self.user.pw_uid)

        report = self.next_report(lambda r: r.get("entries"))
        self.assertEqual(int(report["capacity_bytes"]), 64 << 20)
        self.assertEqual(int(report["used_bytes"]), self.total)
        [listed] = report["entries"]
        self.assertEqual(listed["name"], "train")
        self.assertEqual(listed["version"], version)
        self.assertEqual(listed["source"], self.shared)
        self.assertEqual(int(listed["owner_uid"]), self.user.pw_uid)
        self.assertNotIn("pinned_by_jobs", listed)  # for no job: no pin

        again = self.prefetch()
        self.assertTrue(again.get("ok"), again)
        self.assertTrue(again.get("hit"), again)
        self.assertEqual(int(again.get("bytes_copied", 0)), 0)
        self.assertEqual(again["version"], version)

        evicted = self.evict()
        self.assertTrue(evicted.get("ok"), evicted)
        self.assertFalse(os.path.exists(entry))
        report = self.next_report(lambda r: not r.get("entries"))
        self.assertEqual(int(report.get("used_bytes", 0)), 0)
        gone = self.evict()
        self.assertFalse(gone.get("ok", False))
        self.assertEqual(gone["message"],
                         f"dataset train of uid {self.user.pw_uid} is not "
                         "cached on node node01")

    def test_a_copy_staged_ahead_is_held_for_its_job_until_the_hold_lapses(self):
        sent = time.monotonic()
        held = self.prefetch(job=42, hold_ms=6000)
        self.assertTrue(held.get("ok"), held)
        report = self.next_report(lambda r: r.get("entries"))
        self.assertEqual(report["entries"][0].get("pinned_by_jobs"), ["42"])
        refused = self.evict()
        self.assertFalse(refused.get("ok", False))
        self.assertEqual(refused["message"],
                         f"dataset train of uid {self.user.pw_uid} is in use "
                         "by job 42 (staged ahead for it) on node node01")
        # Job 42 went elsewhere: the hold lapses on a heartbeat's tick, and
        # that heartbeat reports it.
        report = self.next_report(
            lambda r: r.get("entries")
            and not r["entries"][0].get("pinned_by_jobs"), timeout=20)
        # Not before its time: the hold counts from the request's arrival.
        self.assertGreaterEqual(time.monotonic() - sent, 6.0)
        self.assertEqual(len(report["entries"]), 1)
        self.assertTrue(self.evict().get("ok"))

    def test_the_jobs_own_launch_keeps_the_copy_until_its_ranks_end(self):
        held = self.prefetch(job=42, hold_ms=1000)
        self.assertTrue(held.get("ok"), held)
        work = self.cluster.path("job42")
        os.makedirs(work)
        os.chown(work, self.user.pw_uid, self.user.pw_gid)
        go = os.path.join(work, "go")
        # The rank reads its copy, then runs until the test lets it end.
        script = ("#!/bin/bash\n"
                  "ls \"$GANTRY_DATASET_train\" > listed\n"
                  f"while [ ! -e {go} ]; do sleep 0.1; done\n")
        mark = len(self.controller.messages())
        self.controller.send(
            f"launch {{ job_id: 42 attempt: 1 script: {json.dumps(script)} "
            f"working_dir: {json.dumps(work)} "
            f"output_path: {json.dumps(work + '/out')} ranks {{ rank: 0 }} "
            f"uid: {self.user.pw_uid} gid: {self.user.pw_gid} "
            f'user: "{USER}" datasets {{ name: "train" '
            f"path: {json.dumps(self.shared)} }} }}")
        started = self.controller.wait(
            lambda m: "rank_event" in m, 30, "the rank to start", after=mark)
        self.assertEqual(started["rank_event"].get("kind"), "STARTED",
                         started)
        gantry_cluster.wait_for(
            lambda: os.path.exists(os.path.join(work, "listed")), 10,
            "the rank's listing of its copy")
        # Long past the hold: the running job's own pin has no time limit.
        time.sleep(2)
        mark = len(self.controller.messages())
        # Any beat: its tick has dropped every lapsed hold.
        self.controller.wait(lambda m: "heartbeat" in m, 5, "a heartbeat",
                             after=mark)
        refused = self.evict()
        self.assertFalse(refused.get("ok", False))
        self.assertEqual(refused["message"],
                         f"dataset train of uid {self.user.pw_uid} is in use "
                         "by job 42 on node node01")
        # The job's ranks end here: the copy is free, and the report says so.
        with open(go, "w"):
            pass
        self.controller.wait(
            lambda m: m.get("rank_event", {}).get("kind") == "EXITED", 30,
            "the rank to end", after=mark)
        self.last_request_mark = mark
        report = self.next_report(
            lambda r: r.get("entries")
            and not r["entries"][0].get("pinned_by_jobs"))
        self.assertEqual(len(report["entries"]), 1)
        self.assertTrue(self.evict().get("ok"))

    def test_users_are_checked_as_for_a_launch(self):
        as_root = self.prefetch(uid=0, user="root")
        self.assertFalse(as_root.get("ok", False))
        self.assertEqual(as_root["message"],
                         "dataset train on node node01: a dataset is not "
                         "prefetched as root (uid 0): name its owner")
        unknown_uid = 4_000_000_000
        self.assertRaises(KeyError, pwd.getpwuid, unknown_uid)
        unknown = self.prefetch(uid=unknown_uid, user="ghost")
        self.assertFalse(unknown.get("ok", False))
        self.assertEqual(unknown["message"],
                         f"dataset train on node node01: user ghost (uid "
                         f"{unknown_uid}) does not exist on node node01")
        other_name = self.prefetch(user="alice")
        self.assertFalse(other_name.get("ok", False))
        self.assertIn(f"uid {self.user.pw_uid} is user {USER} on node node01, "
                      "not alice", other_name["message"])
        self.assertFalse(os.path.exists(os.path.join(
            self.cache_dir, str(self.user.pw_uid))))

    def test_a_file_the_user_cannot_read_is_named(self):
        secret = os.path.join(self.shared, "shard3.bin")
        os.chmod(secret, 0o600)  # root's: nobody may not read it
        failed = self.prefetch()
        self.assertFalse(failed.get("ok", False))
        self.assertTrue(failed["message"].startswith(
            "dataset train on node node01: "), failed["message"])
        self.assertIn(secret, failed["message"])
        self.assertIn("Permission denied", failed["message"])
        for root, _, files in os.walk(self.cache_dir):
            self.assertNotIn("shard3.bin", files, root)

    def test_an_interrupted_prefetch_resumes_after_a_restart(self):
        # The copy dies after its second file (the helper process that
        # copies inherits the crash point); the agent answers, and is then
        # killed before anything else happens.
        self.cluster.kill_agent("node01")
        self.start_agent(
            env={"GANTRY_CRASH_AT": "agent.dataset.after_file_copied:2"})
        interrupted = self.prefetch()
        self.assertFalse(interrupted.get("ok", False))
        self.cluster.kill_agent("node01")
        user_dir = os.path.join(self.cache_dir, str(self.user.pw_uid))
        partial = [n for n in os.listdir(user_dir) if n.endswith(".partial")]
        self.assertEqual(len(partial), 1, os.listdir(user_dir))

        self.start_agent()
        resumed = self.prefetch()
        self.assertTrue(resumed.get("ok"), resumed)
        copied = int(resumed["bytes_copied"])
        self.assertLess(copied, self.total)
        self.assertGreater(copied, 0)
        log = self.cluster.agents["node01"].log_text()
        self.assertRegex(log, r'msg="dataset prefetched".* resumed=[1-9]')
        self.assertEqual(
            [n for n in os.listdir(user_dir) if n.endswith(".partial")], [])
        entry = os.path.join(user_dir, f"train.{resumed['version']}", "data")
        for i in range(5):
            with open(os.path.join(entry, f"shard{i}.bin"), "rb") as f:
                self.assertEqual(f.read(), bytes([65 + i]) * (64 * KIB))


    def test_a_copying_helper_dies_with_the_agent(self):
        # A tree that takes a while to copy (192 MiB, each file hashed
        # twice), and its helper caught copying and stopped there: when the
        # agent is killed the helper must die too, not write on beside the
        # next agent's resumed copy.
        big = self.cluster.path("shared", "big")
        os.makedirs(big)
        for i in range(96):
            with open(os.path.join(big, f"part{i:02d}"), "wb") as f:
                f.write(bytes([i]) * (2 << 20))
        self.cluster.kill_agent("node01")
        self.start_agent(cache_size="1G")
        agent_pid = self.cluster.agents["node01"].process.pid
        self.controller.send(
            'dataset_prefetch { request_id: 90 uid: %d gid: %d user: %s '
            'dataset { name: "big" path: %s } }'
            % (self.user.pw_uid, self.user.pw_gid, json.dumps(USER),
               json.dumps(big)))
        helper = None
        deadline = time.monotonic() + 20
        while helper is None and time.monotonic() < deadline:
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        words = f.read().split(b"\0")
                except OSError:
                    continue
                if (b"--dataset-worker" in words and b"copy" in words
                        and words[2] == str(agent_pid).encode()):
                    helper = int(pid)
                    break
            time.sleep(0.002)
        self.assertIsNotNone(helper, "no helper was seen copying")
        # Stopped only once it writes the copy, so past the point where it
        # arms its parent-death signal (it has become the user by then).
        user_dir = os.path.join(self.cache_dir, str(self.user.pw_uid))

        def writing():
            for name in os.listdir(user_dir) if os.path.isdir(user_dir) else []:
                data = os.path.join(user_dir, name, "data")
                if name.startswith("big.") and name.endswith(".partial") \
                        and os.path.isdir(data) and os.listdir(data):
                    return True
            return False
        while not writing() and time.monotonic() < deadline:
            time.sleep(0.002)
        self.assertTrue(writing(), "the helper wrote nothing")
        os.kill(helper, signal.SIGSTOP)
        self.cluster.kill_agent("node01")

        def gone():
            try:
                with open(f"/proc/{helper}/stat") as f:
                    return f.read().rsplit(")", 1)[1].split()[0] in "ZX"
            except OSError:
                return True
        deadline = time.monotonic() + 10
        while not gone() and time.monotonic() < deadline:
            time.sleep(0.05)
        if not gone():
            os.kill(helper, signal.SIGKILL)
            self.fail("the helper outlived the agent")


class SimulatedNodeRequestsTest(ClusterTestCase):
    """gantry-fleet's simulated nodes have no cache: it refuses both requests at
    once, so that none stays open in gantryd."""

    def test_a_simulated_node_refuses_both_requests(self):
        cluster = self.start_cluster(agents=0, auth="none")
        controller = StreamController(cluster.path("stream.sock"),
                                      heartbeat_ms=200)
        self.addCleanup(controller.stop)
        cluster.start_fleet(1, controller=controller.target)
        registered = controller.wait(lambda m: "register" in m, 20,
                                     "the simulated node's Register")
        node = registered["register"]["node_name"]
        for request_id, text in (
                (7, 'dataset_prefetch { request_id: 7 uid: 1000 gid: 1000 '
                    'user: "alice" dataset { name: "train" path: "/data" } '
                    'job_id: 3 hold_ms: 1000 }'),
                (8, 'dataset_evict { request_id: 8 owner_uid: 1000 '
                    'name: "train" }')):
            mark = len(controller.messages())
            controller.send(text)
            answer = controller.wait(lambda m: "dataset_cache_result" in m, 10,
                                     f"the answer to {request_id}",
                                     after=mark)["dataset_cache_result"]
            self.assertEqual(int(answer["request_id"]), request_id)
            self.assertFalse(answer.get("ok", False))
            self.assertEqual(answer["message"],
                             f"node {node} is simulated and has no dataset "
                             "cache")


if __name__ == "__main__":
    gantry_cluster.main()
