"""Faults the lab injects, each undone by heal() or by its own end.

Partitions drop packets on the shared loopback with nftables: a rule
matches the sending socket's cgroup (the host's, lab_hosts.py) and the
destination address of a host on the other side, in both directions, so
neither side reaches the other while both still reach everyone else.
(Source addresses cannot tell hosts apart: on `lo` every connection a
host opens leaves from 127.0.0.1.)

A clock step is confined to one daemon: CLOCK_REALTIME is one for the
whole machine (a time namespace offsets only the monotonic clocks), so a
host the lab made with `stepped_clock_hosts` runs its daemon under
clock_step.cc's LD_PRELOAD library, which reads the offset step_clock()
writes.

Every fault is recorded in `log` (what, when) for the checker's report.
Not thread-safe: inject from one thread.
"""

import os
import signal
import subprocess
import time

from lab_cluster import nft_cgroup_path


class Faults:
    def __init__(self, lab):
        self.lab = lab
        self.table = f"gantry_lab_{os.getpid()}"
        self.log = []
        # Agents' hosts cut from a controller at some point: gantryd drains
        # a node that goes silent under a job, as documented.
        self.cut_from_controllers = set()
        subprocess.run(["nft", "add", "table", "inet", self.table], check=True)
        subprocess.run(["nft", "add", "chain", "inet", self.table, "out",
                        "{ type filter hook output priority 0; }"], check=True)

    def _record(self, what):
        self.log.append((time.time(), what))

    def kill9(self, host, keep_down=False):
        """SIGKILL to the host's daemon; its unit restarts it (Restart=),
        or, with keep_down, only after let_restart(host): a scenario that
        needs another controller to take over must not race the killed
        one's restart (after its lease expires either may win, and either
        is right)."""
        unit = self.lab.units[host]
        self._record(f"kill -9 {unit.name} on {host}"
                     + (" (kept down)" if keep_down else ""))
        if keep_down:
            unit.hold_restarts()
        unit.signal(signal.SIGKILL)

    def let_restart(self, host):
        """A daemon kill9(keep_down=True) kept down restarts now."""
        self._record(f"{self.lab.units[host].name} on {host} may restart")
        self.lab.units[host].allow_restarts()

    def pause(self, host, seconds):
        """SIGSTOP, then SIGCONT after `seconds`."""
        self._record(f"SIGSTOP {seconds} s {self.lab.units[host].name} on {host}")
        unit = self.lab.units[host]
        unit.signal(signal.SIGSTOP)
        time.sleep(seconds)
        unit.signal(signal.SIGCONT)

    def partition(self, side_a, side_b):
        """Cuts every host of side_a from every host of side_b."""
        self._record(f"partition {sorted(side_a)} | {sorted(side_b)}")
        for one, other in ((side_a, side_b), (side_b, side_a)):
            if set(other) & set(self.lab.controller_names):
                self.cut_from_controllers |= set(one) & set(self.lab.node_names)
        for senders, receivers in ((side_a, side_b), (side_b, side_a)):
            for sender in senders:
                path, level = nft_cgroup_path(self.lab.hosts[sender].cgroup)
                addresses = ", ".join(self.lab.addresses[r] for r in receivers)
                subprocess.run(
                    ["nft", "add", "rule", "inet", self.table, "out",
                     "socket", "cgroupv2", "level", str(level), f'"{path}"',
                     "ip", "daddr", f"{{ {addresses} }}", "drop"], check=True)

    def heal(self):
        self._record("heal")
        subprocess.run(["nft", "flush", "chain", "inet", self.table, "out"],
                       check=True)

    def step_clock(self, host, seconds):
        """Steps the wall clock of the host's daemon to `seconds` away from
        the machine's (negative: into the past), as an NTP step or an
        admin's `date -s` does; the monotonic clock does not move. Takes
        effect within a second."""
        if host not in self.lab.stepped_clock_hosts:
            raise ValueError(f"{host} was not started with a steppable clock")
        self._record(f"wall clock of {self.lab.units[host].name} on {host} "
                     f"set {seconds:+d} s from the machine's")
        path = self.lab.clock_path(host)
        with open(path + ".new", "w") as out:
            out.write(f"{seconds:+d}\n")
        os.replace(path + ".new", path)

    def fill_disk(self, host, path="/var/lib/gantry"):
        """Fills the file system under `path` on `host` (a small tmpfs the
        lab mounted there) with one file; free_disk() removes it."""
        self._record(f"disk full under {path} on {host}")
        self.lab.hosts[host].run(
            ["/bin/sh", "-c", f"cat /dev/zero > {path}/.lab-filler"],
            check=False, timeout=120)

    def free_disk(self, host, path="/var/lib/gantry"):
        self._record(f"disk freed under {path} on {host}")
        self.lab.hosts[host].run(["rm", "-f", f"{path}/.lab-filler"])

    def stop(self):
        subprocess.run(["nft", "delete", "table", "inet", self.table],
                       check=False)
