#!/usr/bin/env python3
"""The pre-flight listener cannot be held by anyone who can reach it.

An unprivileged local user keeps 40 idle connections open to every agent's
pre-flight port, opening a new one each time the listener closes one (more
than the listener once served at a time, 32). Before, the ring peers'
connections found every slot taken: the 4-node check failed, two healthy
nodes were drained and a 2-node job was held as PreflightFailed. Now a
connection is served only once its header proves it belongs to a check
running on the node, the others wait apart and are dropped within a
second: both jobs pass their check and run, and no node is drained.
(agent/preflight/preflight_listener.h; the verdict's evidence rules in
daemon/scheduler/preflight_verdict.h.)

Needs root: it creates (and removes) the unprivileged user."""

import os
import random
import re
import select
import subprocess
import unittest

import gantry_cluster
from gantry_cluster import ClusterTestCase, wait_for
from test_hostile_users import add_user
from test_preflight import RANK_SCRIPT, passed_first_time, start

CONNECTIONS_PER_PORT = 40

# Keeps `per_port` idle connections open to each HOST:PORT; one the other
# end closes is opened again at once. Prints "flooding" once all are
# open, then "opened N" (connections made so far) every second.
FLOODER = r"""
import selectors, socket, sys, time
per_port = int(sys.argv[1])
targets = [(t.rsplit(":", 1)[0], int(t.rsplit(":", 1)[1])) for t in sys.argv[2:]]
selector = selectors.DefaultSelector()
opened = 0
def open_one(target):
    global opened
    while True:
        s = socket.socket()
        try:
            s.connect(target)
        except OSError:
            s.close()
            time.sleep(0.05)
            continue
        s.setblocking(False)
        selector.register(s, selectors.EVENT_READ, target)
        opened += 1
        return
for target in targets:
    for _ in range(per_port):
        open_one(target)
print("flooding", flush=True)
last = time.monotonic()
while True:
    for key, _ in selector.select(timeout=0.2):
        s = key.fileobj
        try:
            data = s.recv(4096)
        except OSError:
            data = b""
        if not data:
            selector.unregister(s)
            s.close()
            open_one(key.data)
    if time.monotonic() - last >= 1:
        last = time.monotonic()
        print("opened", opened, flush=True)
"""


def preflight_port(agent):
    """The pre-flight port the agent logged when its listener came up."""
    pattern = re.compile(r'msg="pre-flight listener ready".* port=(\d+)')

    def port():
        match = pattern.search(agent.log_text())
        return int(match.group(1)) if match else None

    return wait_for(port, 15, "the agent's pre-flight listener")


@unittest.skipUnless(os.geteuid() == 0, "needs root to create users")
class PreflightFloodTest(ClusterTestCase):

    def test_idle_reconnecting_connections_neither_fail_nor_drain(self):
        flooder_user = add_user(f"gtpf-{random.randint(10000, 99999)}")
        self.addCleanup(subprocess.run, ["userdel", flooder_user.pw_name])
        cluster = start(self, 4)
        targets = [f"{cluster.addresses[name]}:{preflight_port(agent)}"
                   for name, agent in cluster.agents.items()]
        flooder = subprocess.Popen(
            ["/usr/bin/python3", "-c", FLOODER, str(CONNECTIONS_PER_PORT),
             *targets],
            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
            user=flooder_user.pw_uid, group=flooder_user.pw_gid,
            extra_groups=[], cwd="/")
        # By pid (Popen.kill: nothing once it is reaped), then reaped.
        self.addCleanup(flooder.wait, 10)
        self.addCleanup(flooder.kill)
        # Until the listeners have closed idle connections and the flooder
        # has opened new ones: the flood is in its steady state.
        initial = CONNECTIONS_PER_PORT * len(targets)
        opened = 0
        while opened <= initial:
            ready, _, _ = select.select([flooder.stdout], [], [], 30)
            self.assertTrue(ready, "the flooder stopped reporting")
            line = flooder.stdout.readline().split()
            self.assertTrue(line, "the flooder died")
            if line[0] == "opened":
                opened = int(line[1])

        script = cluster.write_script("ranks.sh", RANK_SCRIPT)
        for nodes in (4, 2):
            job_id = cluster.submit(script, "-N", str(nodes))
            passed_first_time(
                self, cluster.wait_job(job_id, "COMPLETED", timeout=60))
        for name, node in cluster.nodes().items():
            self.assertFalse(node["drained"], (name, node))

        # The flood ran all along.
        self.assertIsNone(flooder.poll(), "the flooder died")


if __name__ == "__main__":
    gantry_cluster.main()
