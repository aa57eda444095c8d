"""CPU weights for processes a benchmark starts, as systemd gives them.

gantryd.service sets CPUWeight= (packaging/systemd): under contention its
cgroup gets that weight against its siblings, whatever the number of
processes in theirs. A benchmark that runs gantryd beside a whole fleet of
agents and their ranks on one machine puts each in a cgroup of its own
with the weight the units give (the fleet's stands for other hosts, or an
agent's service on the controller's host), so the controller's share of
the CPU is what it would be as deployed, not one process's among
thousands.

cgroup v2 (cpu.weight) where the cpu controller is enabled at the root,
else cgroup v1's cpu hierarchy (cpu.shares, 1024 for weight 100, as
systemd maps it). Use as a context manager: leaving it moves what is left
in the groups back to the root and removes them.
"""
import os

V2_ROOT = "/sys/fs/cgroup"
V1_CPU_ROOT = "/sys/fs/cgroup/cpu"


def _v2_has_cpu():
    try:
        with open(os.path.join(V2_ROOT, "cgroup.subtree_control")) as f:
            return "cpu" in f.read().split()
    except OSError:
        return False


class CpuWeightGroups:
    """Named cgroups with CPU weights (systemd's CPUWeight= scale, 1 to
    10,000, default 100), under a prefix unique to this run."""

    def __init__(self, prefix, weights):
        if _v2_has_cpu():
            self.root, self.v2 = V2_ROOT, True
        elif os.path.isfile(os.path.join(V1_CPU_ROOT, "cpu.shares")):
            self.root, self.v2 = V1_CPU_ROOT, False
        else:
            raise RuntimeError("no cgroup cpu controller to weigh processes "
                               "with (neither cgroup v2's cpu nor v1's)")
        self.paths = {}
        try:
            for name, weight in weights.items():
                path = os.path.join(self.root, f"{prefix}-{name}")
                os.mkdir(path)
                self.paths[name] = path
                if self.v2:
                    self._write(path, "cpu.weight", weight)
                else:
                    self._write(path, "cpu.shares", weight * 1024 // 100)
        except BaseException:
            self.remove()
            raise

    @staticmethod
    def _write(path, name, value):
        with open(os.path.join(path, name), "w") as f:
            f.write(f"{value}\n")

    def add(self, name, pid):
        """Moves process `pid` (all its threads; what it starts later
        follows it) into the group `name`."""
        self._write(self.paths[name], "cgroup.procs", pid)

    def procs_file(self, name):
        """The file that a process writing its pid into joins `name` by."""
        return os.path.join(self.paths[name], "cgroup.procs")

    def remove(self):
        for path in self.paths.values():
            try:
                with open(os.path.join(path, "cgroup.procs")) as f:
                    left = [int(p) for p in f.read().split()]
            except OSError:
                continue
            for pid in left:
                try:
                    self._write(self.root, "cgroup.procs", pid)
                except OSError:
                    pass  # it exited meanwhile
            try:
                os.rmdir(path)
            except OSError:
                pass
        self.paths = {}

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.remove()
