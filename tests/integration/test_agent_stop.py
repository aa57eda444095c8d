#!/usr/bin/env python3
"""An agent stopped with ranks running ends cleanly: SIGTERM (as
`systemctl stop` sends it) after its controller went away stops the ranks,
reports each exit, logs `stopped` last and exits 0. Before, the rank
watcher could still be handing an exit over after the agent had begun
tearing itself down: `rank exited` after `stopped`, then SIGSEGV. It is a
race, so the test runs several rounds."""

import re
import signal
import time

import gantry_cluster
from gantry_cluster import ClusterTestCase, wait_for

ROUNDS = 3

# Rank 0 fills the job's directory on the node (where its progress file
# is) with files: removing it is the last thing the agent does for the
# job before reporting the last exit, and a slow removal (as on a busy
# file system) holds the reaper's hand-over long enough for the agent to
# have torn itself down. Then both ranks sleep.
LONG_SCRIPT = """#!/bin/bash
if [ "$SLURM_PROCID" = 0 ]; then
  python3 -c '
import os
fill = os.path.join(os.path.dirname(os.environ["GANTRY_PROGRESS_FILE"]), "fill")
os.mkdir(fill)
for i in range(30000):
    open(os.path.join(fill, str(i)), "w").close()
'
  echo done > filled
fi
exec sleep 300
"""


def lines_after_stopped(log_text):
    """The log lines after the agent's last `stopped` line (None: none)."""
    lines = log_text.splitlines()
    for index in range(len(lines) - 1, -1, -1):
        if re.search(r'\bmsg=(stopped|"stopped")( |$)', lines[index]):
            return lines[index + 1:]
    return None


class AgentStopTest(ClusterTestCase):

    def test_sigterm_with_ranks_running_and_no_controller_exits_cleanly(self):
        for round_number in range(1, ROUNDS + 1):
            with self.subTest(round=round_number):
                cluster = self.start_cluster(agents=1)
                script = cluster.write_script("long.sh", LONG_SCRIPT)
                # Two ranks: more than one exit to hand over.
                job_id = cluster.submit(script, "-n", "2")
                cluster.wait_job(job_id, "RUNNING", timeout=30)
                agent = cluster.agents["node01"]
                wait_for(lambda: agent.log_text().count('msg="rank started"')
                         >= 2, 20, "both ranks to start")
                cluster.wait_files(["filled"], timeout=60)
                cluster.kill_controller()
                # Long enough for the link to notice and wait to redial.
                time.sleep(1.5)
                agent.send(signal.SIGTERM)
                try:
                    code = agent.process.wait(timeout=60)
                except Exception:
                    self.fail(f"agent still running 60 s after SIGTERM:\n"
                              f"{agent.log_text()[-3000:]}")
                log = agent.log_text()
                self.assertEqual(
                    code, 0, f"round {round_number}: exit {code} "
                    f"({'SIGSEGV' if code == -signal.SIGSEGV else 'not 0'}):\n"
                    f"{log[-3000:]}")
                after = lines_after_stopped(log)
                self.assertIsNotNone(after, f"no 'stopped' line:\n{log[-3000:]}")
                self.assertEqual(after, [], f"round {round_number}")
                self.assertEqual(log.count('msg="rank exited"'), 2, log[-3000:])


if __name__ == "__main__":
    gantry_cluster.main()
