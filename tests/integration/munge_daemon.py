"""A private munged for tests: its own 1024-byte key, socket, log and seed
in a directory of the test's, started in the foreground so that it is
stopped by its pid. Two of them with different keys play two clusters."""

import os
import shutil
import signal
import subprocess
import time

MUNGED = shutil.which("munged") or "/usr/sbin/munged"


def munge_available():
    return os.access(MUNGED, os.X_OK)


class Munged:
    def __init__(self, directory):
        # Other users' clients reach the socket through this directory.
        os.makedirs(directory, exist_ok=True)
        os.chmod(directory, 0o755)
        self.dir = directory
        self.socket = os.path.join(directory, "munge.sock")
        self.key = os.path.join(directory, "munge.key")
        with open(self.key, "wb") as key:
            key.write(os.urandom(1024))
        os.chmod(self.key, 0o400)
        self.log_path = os.path.join(directory, "munged.log")
        self.process = subprocess.Popen(
            [MUNGED, "--foreground", f"--socket={self.socket}",
             f"--key-file={self.key}",
             f"--pid-file={os.path.join(directory, 'munged.pid')}",
             f"--log-file={self.log_path}",
             f"--seed-file={os.path.join(directory, 'munged.seed')}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while not os.path.exists(self.socket):
            if self.process.poll() is not None:
                error = self.process.stderr.read().decode()
                self.process.stderr.close()
                raise RuntimeError("munged exited: " + error)
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("munged did not create its socket in 10 s")
            time.sleep(0.02)

    def credential(self, payload="", uid=None):
        """A credential from this munged (as `uid`, if given: needs root)."""
        result = subprocess.run(
            ["munge", f"--socket={self.socket}", "--string", payload],
            capture_output=True, text=True, check=True,
            user=uid)
        return result.stdout.strip()

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self.process.stderr.close()
