#!/usr/bin/env python3
"""gantryd and the agent go on when their log has nowhere to go. Both log
to stderr; started outside systemd (a shell pipeline, a supervisor that
restarted, a closed terminal), stderr can be a pipe nobody reads any more,
and with SIGPIPE at its default the next log line ended the daemon without
a word. Here each daemon is started by a wrapper that points its stdout and
stderr at a pipe whose read end is closed, with SIGPIPE at its default, and
a job must still run and both daemons must still be there."""

import gantry_cluster
from gantry_cluster import ClusterTestCase

# Execs the daemon with stdout and stderr on a pipe that has no reader, and
# SIGPIPE at its default (Python itself ignores it, and exec keeps that).
BROKEN_PIPE_WRAPPER = [
    "/usr/bin/python3", "-c",
    "import os, signal, sys\n"
    "read_end, write_end = os.pipe()\n"
    "os.close(read_end)\n"
    "os.dup2(write_end, 1)\n"
    "os.dup2(write_end, 2)\n"
    "os.close(write_end)\n"
    "signal.signal(signal.SIGPIPE, signal.SIG_DFL)\n"
    "os.execv(sys.argv[1], sys.argv[1:])\n"]


class BrokenPipeTest(ClusterTestCase):

    def test_daemons_outlive_a_log_pipe_without_reader(self):
        cluster = self.start_cluster(agents=0)
        port = cluster.port
        cluster.kill_controller()
        controller = cluster.start_controller(port=port,
                                              wrapper=BROKEN_PIPE_WRAPPER)
        agent = cluster.start_agent("node01", wrapper=BROKEN_PIPE_WRAPPER)
        cluster.wait_nodes_up(["node01"])
        script = cluster.write_script("hello.sh", "#!/bin/bash\necho hello\n")
        job_id = cluster.submit(script, "-o", "hello.out")
        cluster.wait_job(job_id, "COMPLETED", timeout=30)
        self.assertEqual(cluster.read("hello.out"), "hello\n")
        self.assertTrue(controller.running(), "gantryd died of its log")
        self.assertTrue(agent.running(), "gantry-agent died of its log")


if __name__ == "__main__":
    gantry_cluster.main()
