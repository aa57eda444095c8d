"""The clients of a lab scenario: real unprivileged users submitting jobs
from the login host while faults happen, and what each was told.

Each submission carries a tag (the client's own id for it, a uuid) as the
job script's argument. The job script, every rank of it, appends one line
to its node's file in the cluster's shared directory:
  HOSTNAME JOB_ID ATTEMPT RANK UID TAG TIME
which is the agents' side of the history the checker reads.

Thread-safe: each user's submitter is a thread; `acks` is appended under
the GIL and read once they are joined.
"""

import os
import threading
import time
import uuid

JOB_SCRIPT = """#!/bin/bash
echo "$(hostname) $SLURM_JOB_ID ${GANTRY_RESTART_COUNT:-0} ${GANTRY_RANK:-$SLURM_PROCID} $(id -u) $1 $(date +%s.%N)" >> "RANKS/$(hostname).log"
sleep "$2"
"""


class Workload:
    def __init__(self, lab, users, time_limit=None):
        self.lab = lab
        self.users = users  # pwd entries
        # Every job's --time (Slurm's format), or the partition's default.
        self.time_limit = time_limit
        self.acks = []  # dict per submission: tag, uid, job_id, rc, error
        self._stop = threading.Event()
        self._threads = []
        self.script = os.path.join(lab.shared, "lab-job.sh")
        with open(self.script, "w") as out:
            out.write(JOB_SCRIPT.replace("RANKS", lab.ranks_dir))
        os.chmod(self.script, 0o755)
        # Every user's ranks append to their node's file: made writable by
        # all first (else the first user to write it would own it).
        for node in lab.node_names:
            path = os.path.join(lab.ranks_dir, f"{node}.log")
            open(path, "a").close()
            os.chmod(path, 0o666)
        for user in users:
            home = os.path.join(lab.shared, user.pw_name)
            os.makedirs(home, exist_ok=True)
            os.chown(home, user.pw_uid, user.pw_gid)

    def submit(self, user, nodes=1, seconds=1, options=()):
        tag = uuid.uuid4().hex
        result = self.lab.cli(
            "batch", "--parsable", "--per-task", "-N", str(nodes),
            "-o", "/dev/null",
            *(["--time", self.time_limit] if self.time_limit else []),
            *options,
            self.script, tag, str(seconds),
            user=user.pw_name, check=False, timeout=120,
            cwd=os.path.join(self.lab.shared, user.pw_name))
        text = result.stdout.strip()
        ack = {"tag": tag, "uid": user.pw_uid, "rc": result.returncode,
               "job_id": int(text) if result.returncode == 0 and text.isdigit()
               else None, "error": result.stderr.strip()[-300:],
               "time": time.time()}
        self.acks.append(ack)
        return ack

    def start(self, interval=0.5):
        for index, user in enumerate(self.users):
            def loop(user=user, index=index):
                count = 0
                while not self._stop.is_set():
                    self.submit(user, nodes=1 + (count + index) % 2)
                    count += 1
                    self._stop.wait(interval)
            thread = threading.Thread(target=loop, daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self):
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=180)
