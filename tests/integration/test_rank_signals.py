#!/usr/bin/env python3
"""Ranks start with every signal at its default disposition and none
blocked, whatever the agent inherited. An agent started in the background
by a non-interactive shell (as packaging/demo.sh starts them) has SIGINT
and SIGQUIT ignored; before, its ranks inherited that, and Ctrl-C in
`srun --pty bash` did nothing. Here the agent is started through a wrapper
that ignores SIGINT and SIGQUIT (and, being Python, SIGPIPE) and then execs
it, and a rank reads its own SigIgn and SigBlk from /proc: a program the
script execs (grep), so that what a shell sets for itself does not
count."""

import gantry_cluster
from gantry_cluster import ClusterTestCase

# What a non-interactive shell's `agent &` does: SIGINT and SIGQUIT
# ignored, then exec.
IGNORING_WRAPPER = [
    "/usr/bin/python3", "-c",
    "import os, signal, sys\n"
    "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
    "signal.signal(signal.SIGQUIT, signal.SIG_IGN)\n"
    "os.execv(sys.argv[1], sys.argv[1:])\n"]

SIGNALS_SCRIPT = """#!/bin/bash
exec grep -E '^Sig(Ign|Blk):' /proc/self/status
"""


class RankSignalsTest(ClusterTestCase):

    def test_ranks_do_not_inherit_the_agents_ignored_signals(self):
        cluster = self.start_cluster(agents=0)
        agent = cluster.start_agent("node01", wrapper=IGNORING_WRAPPER)
        cluster.wait_nodes_up(["node01"])
        # The agent itself does ignore them: the test's premise.
        with open(f"/proc/{agent.pid}/status") as status:
            ignored = next(int(line.split()[1], 16) for line in status
                           if line.startswith("SigIgn:"))
        self.assertTrue(ignored & (1 << 1) and ignored & (1 << 2),
                        f"agent SigIgn {ignored:x}")
        script = cluster.write_script("signals.sh", SIGNALS_SCRIPT)
        job_id = cluster.submit(script, "-o", "signals.out")
        cluster.wait_job(job_id, "COMPLETED", timeout=30)
        fields = dict(line.split(":") for line in
                      cluster.read("signals.out").splitlines())
        self.assertEqual(int(fields["SigIgn"], 16), 0, fields)
        self.assertEqual(int(fields["SigBlk"], 16), 0, fields)


if __name__ == "__main__":
    gantry_cluster.main()
