"""Another user's everyday calls while gantryd works on something big: a
thread runs one CLI command again and again and records how each went, so
a test or benchmark can tell whether the controller kept answering.

Standard library only, like the rest of the harness.
"""
import threading
import time


class QuickCalls:
    """`gantry ARGS` (default: `gantry queue`) as `uid` (None: the test's
    own user), again and again on a thread until stop(). `calls` holds
    (end, seconds, failure) per call: time.monotonic() at its end, how long
    it took, and its stderr when it failed (else None)."""

    def __init__(self, cluster, uid=None, args=("queue",), pause=0.05):
        self.cluster = cluster
        self.uid = uid
        self.args = tuple(args)
        self.pause = pause
        self.calls = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            start = time.monotonic()
            result = self.cluster.cli(*self.args, uid=self.uid, check=False,
                                      timeout=120)
            end = time.monotonic()
            self.calls.append(
                (end, end - start,
                 None if result.returncode == 0 else result.stderr))
            time.sleep(self.pause)

    def slowest(self, since=0.0, until=float("inf")):
        """The longest call that ended between `since` and `until` (or up
        to a second after it: one still running at the phase's end)."""
        return max((seconds for end, seconds, _ in self.calls
                    if since <= end <= until + 1), default=0.0)

    def failures(self):
        return [failure for _, _, failure in self.calls if failure]

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=150)
