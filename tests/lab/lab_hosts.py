"""Hosts of the test lab: each a mount and UTS namespace on this machine.

A Host has its own hostname and its own /etc, /var/lib, /var/spool (each an
overlay on the machine's, so its writes stay its own) and a fresh /run,
hence its own /etc/gantry, /etc/default, /var/lib/gantry, /run/gantry and
/run/munge. The staged install (cmake --install into STAGE) is laid over
/usr/sbin, /usr/bin and /lib/systemd/system, so the binaries and units sit
at the paths the shipped units name; nothing is installed into the
machine's own /usr. All hosts share the root network namespace: a host is
reached at its own loopback address (127.0.x.y) and faults drop traffic
between hosts' cgroups and addresses (faults.py).

A namespace lives as long as its holder process (`sleep infinity` after
the mounts); every process of the host enters it with nsenter and joins
the host's cgroup v2 (HOST_CGROUP/NAME), which is how nftables tells the
hosts' packets apart on the shared `lo`.

Users must exist before hosts start: /etc is an overlay, and files the
machine changes under it afterwards (useradd rewrites /etc/passwd) may not
be seen inside. Not thread-safe: create and stop hosts from one thread;
run() may be called from several.
"""

import ctypes
import os
import resource
import signal
import subprocess
import time

CGROUP2_ROOT = "/sys/fs/cgroup"
_PR_SET_PDEATHSIG = 1


def cgroup2_mount():
    """Where the cgroup2 file system is mounted, or None."""
    with open("/proc/self/mountinfo") as mounts:
        for line in mounts:
            fields = line.split()
            separator = fields.index("-", 6)
            if fields[separator + 1] == "cgroup2":
                return fields[4]
    return None


def die_with_parent():
    """A process of the lab gets SIGKILL if the test dies (e.g. killed by
    the CTest timeout) instead of lingering."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


# The directories each host gets its own copy of (an overlay on the
# machine's: reads see the machine's files, writes stay in the host).
OVERLAID = ("/etc", "/var/lib", "/var/spool")
# Read-only overlays of the staged install on the machine's directories.
STAGED = ("/usr/sbin", "/usr/bin", "/lib/systemd/system")


class Host:
    def __init__(self, lab_dir, stage, name, address, cgroup_parent):
        self.name = name
        self.address = address
        self.dir = os.path.join(lab_dir, "hosts", name)
        self.cgroup = os.path.join(cgroup_parent, name)
        os.makedirs(self.cgroup, exist_ok=True)
        mounts = [f"hostname {name}"]
        for index, path in enumerate(OVERLAID):
            upper = os.path.join(self.dir, f"upper{index}")
            work = os.path.join(self.dir, f"work{index}")
            os.makedirs(upper)
            os.makedirs(work)
            mounts.append(f"mount -t overlay overlay -o lowerdir={path},"
                          f"upperdir={upper},workdir={work} {path}")
        mounts.append("mount -t tmpfs -o mode=0755 tmpfs /run")
        for path in STAGED:
            staged = stage + path
            if os.path.isdir(staged) and os.path.isdir(path):
                mounts.append(f"mount -t overlay overlay -o ro,lowerdir="
                              f"{staged}:{path} {path}")
        mounts.append("echo ready")
        self.holder = subprocess.Popen(
            ["unshare", "--mount", "--uts", "--propagation", "private", "--",
             "/bin/sh", "-ec", "; ".join(mounts) + "; exec sleep infinity"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, preexec_fn=self._enter_cgroup)
        line = self.holder.stdout.readline().decode().strip()
        if line != "ready":
            error = self.holder.stderr.read().decode()
            self.holder.wait()
            raise RuntimeError(f"host {name}: namespace setup failed: {error}")

    def _enter_cgroup(self, sub=None):
        directory = os.path.join(self.cgroup, sub) if sub else self.cgroup
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, "cgroup.procs"), "w") as procs:
            procs.write("0")
        die_with_parent()

    def enter_command(self, argv, user=None):
        """argv run inside this host (as `user`, a name, if given)."""
        prefix = ["nsenter", "-t", str(self.holder.pid), "-m", "-u", "--"]
        if user is not None:
            prefix += ["setpriv", f"--reuid={user}", f"--regid={user}",
                       "--init-groups", "--"]
        return prefix + list(argv)

    def popen(self, argv, user=None, cgroup=None, umask=None, env=None,
              stdout=None, stderr=None, limits=()):
        """Starts argv inside the host; its pid is the program's own (nsenter
        and setpriv exec it)."""

        def prepare():
            self._enter_cgroup(cgroup)
            if umask is not None:
                os.umask(umask)
            for limit, value in limits:
                try:
                    resource.setrlimit(limit, (value, value))
                except (ValueError, OSError):
                    pass  # a container may cap it below the unit's value
            os.setsid()

        return subprocess.Popen(self.enter_command(argv, user),
                                stdin=subprocess.DEVNULL, stdout=stdout,
                                stderr=stderr, env=env, preexec_fn=prepare)

    def run(self, argv, user=None, check=True, timeout=60, input=None,
            env=None):
        """Runs argv inside the host to completion: the CompletedProcess."""
        return subprocess.run(self.enter_command(argv, user), input=input,
                              capture_output=True, text=True, check=check,
                              timeout=timeout, env=env,
                              preexec_fn=self._enter_cgroup)

    def sh(self, script, **options):
        return self.run(["/bin/sh", "-ec", script], **options)

    def write_file(self, path, text, mode=0o644, owner="root"):
        """Writes a file at `path` as this host sees it."""
        self.run(["/bin/sh", "-ec",
                  'mkdir -p "$(dirname "$1")"; cat > "$1"; chmod "$2" "$1"; '
                  'chown "$3:$3" "$1"',
                  "sh", path, oct(mode)[2:], owner], input=text)

    def read_file(self, path):
        return self.run(["cat", path]).stdout

    def stop(self):
        """Kills every process left in the host's cgroup, then the holder
        (the namespace and its mounts go with it)."""
        kill = os.path.join(self.cgroup, "cgroup.kill")
        if os.path.exists(kill):
            with open(kill, "w") as out:
                out.write("1")
        if self.holder.poll() is None:
            self.holder.kill()
        self.holder.wait(timeout=10)
        self.holder.stdout.close()
        self.holder.stderr.close()
        for directory, _, _ in sorted(os.walk(self.cgroup), reverse=True):
            for _ in range(50):
                try:
                    os.rmdir(directory)
                    break
                except OSError:
                    time.sleep(0.1)
