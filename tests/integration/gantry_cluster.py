"""A throwaway Gantry cluster on loopback, for integration tests.

GantryCluster starts the real binaries: one gantryd (state, log and unix
socket in a fresh temp dir, TCP on a port the kernel picks) and N
gantry-agents (node01, node02, ...), each with its own work dir and its own
loopback address. All "nodes" share the host's file system, which plays the
part of a cluster's shared file system: jobs write pid files and markers in
the cluster's work dir and the tests read them.

ClusterTestCase gives a test (or a class of tests) its own cluster, stops
every process the cluster started (by pid: SIGTERM, then SIGKILL after a
few seconds), and removes the temp dir, or keeps it and prints its path and
the daemon logs when a test failed (or when GANTRY_KEEP_TMP=1).

GantryCluster(tls=True) makes a CA and a certificate for gantryd
(tls_certificates.py) and turns TLS on for its TCP listener; agents get the
CA, and tls_env() is a CLI environment for the TCP target with it.

Every test file ends with `gantry_cluster.main()`, which takes
`--build-dir DIR` (or GANTRY_BUILD_DIR) to find the binaries.

Not thread-safe: drive a cluster from one thread. cli() may be called from
several threads (it only runs short-lived client processes).
"""

import ctypes
import functools
import json
import os
import pwd
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from munge_daemon import Munged
from tls_certificates import TlsFiles

TERMINAL_STATES = frozenset(
    {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL",
     "OUT_OF_MEMORY", "DEADLINE"})

# Jobs inherit the submitter's environment; this variable marks every rank a
# cluster's jobs start, so that cleanup can find ranks orphaned by a killed
# agent (they run in their own sessions and outlive it).
MARKER_VARIABLE = "GANTRY_IT_CLUSTER"

# A bash snippet for job scripts: wait (at most a minute, so that nothing
# outlives a broken run for long) until the file named by $1 exists in the
# working directory.
WAIT_FOR_FILE = """
wait_for_file() {
  for _ in $(seq 600); do [ -e "$1" ] && return 0; sleep 0.1; done
  echo "gave up waiting for $1" >&2; return 1
}
"""

MUNGE_SOCKET_VARIABLE = "GANTRY_MUNGE_SOCKET"

_PR_SET_PDEATHSIG = 1


def _die_with_parent():
    """preexec_fn: the daemon gets SIGKILL if the test process dies (e.g.
    killed by the CTest timeout) instead of lingering."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def build_dir():
    """The CMake build dir: GANTRY_BUILD_DIR, else <repo>/build."""
    configured = os.environ.get("GANTRY_BUILD_DIR")
    if configured:
        return os.path.abspath(configured)
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.abspath(os.path.join(here, "..", "..", "build"))


# The exit code of a test file all of whose tests were skipped (no
# ../shared/data, not root, a tool missing): CTest's SKIP_RETURN_CODE
# (tests/CMakeLists.txt), so it reports the file as skipped, not passed.
SKIPPED_EXIT_CODE = 4


def shared_data(*parts):
    """A path in the real-server data of ../shared/data (hwloc XML, fabric
    dumps, traces), which a clone may lack: tests skip, naming the path,
    when it is absent. The directory is GANTRY_SHARED_DATA if set (as for
    the unit tests), else shared/data beside the checkout."""
    root = os.environ.get("GANTRY_SHARED_DATA")
    if not root:
        here = os.path.dirname(os.path.abspath(__file__))
        root = os.path.join(here, "..", "..", "..", "shared", "data")
    return os.path.join(root, *parts)


# A real 4-GPU server (NVIDIA H100, many CPUs) as hwloc saw it, and the PCI
# bus ids of its GPUs.
H100_XML = shared_data("hwloc", "dell-xe8640-4xH100-ndr.flux-ipa20.v2.xml")
H100_GPUS = ["0000:4e:00.0", "0000:5f:00.0", "0000:cb:00.0", "0000:db:00.0"]


def gpu_node_agent_args(*names):
    """Agent arguments that make each named node a 4-GPU server (H100_XML)."""
    return {name: ["--hwloc-xml", H100_XML] for name in names}


def h100_node_with_fake_sysfs(cluster, name):
    """Makes the agent `name` of `cluster` (before it starts) the H100
    server whose GPUs sit on the PCI bus of a fake sysfs tree of its own
    (--sysfs-root), so that a test can pull one (pull_gpu). Returns the
    tree's root."""
    root = os.path.join(cluster.dir, f"sysfs-{name}")
    for bus_id in H100_GPUS:
        os.makedirs(os.path.join(root, "bus", "pci", "devices", bus_id))
    cluster.agent_args[name] = ["--hwloc-xml", H100_XML, "--sysfs-root", root]
    return root


def pull_gpu(sysfs_root, index):
    """Takes GPU `index` of H100_GPUS off the fake PCI bus at sysfs_root,
    as if it had died."""
    os.rmdir(os.path.join(sysfs_root, "bus", "pci", "devices",
                          H100_GPUS[index]))


def main():
    """Entry point of each test file: strips --build-dir DIR (or
    --build-dir=DIR) from argv into GANTRY_BUILD_DIR, then runs unittest.
    Exits 1 on a failure, SKIPPED_EXIT_CODE when every test skipped, else
    0 (the skipped tests of a file that ran others are listed in its
    output)."""
    argv = [sys.argv[0]]
    args = sys.argv[1:]
    i = 0
    while i < len(args):
        if args[i] == "--build-dir" and i + 1 < len(args):
            os.environ["GANTRY_BUILD_DIR"] = args[i + 1]
            i += 2
            continue
        if args[i].startswith("--build-dir="):
            os.environ["GANTRY_BUILD_DIR"] = args[i].split("=", 1)[1]
        else:
            argv.append(args[i])
        i += 1
    result = unittest.main(argv=argv, verbosity=2, exit=False).result
    if not result.wasSuccessful():
        sys.exit(1)
    # A skip in setUpClass is recorded once, for no test that ran.
    skipped_tests = sum(1 for test, _ in result.skipped
                        if isinstance(test, unittest.TestCase))
    if result.skipped and skipped_tests == result.testsRun:
        sys.exit(SKIPPED_EXIT_CODE)
    sys.exit(0)


def pid_alive(pid):
    """True if the process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return fields[0] != "Z"


def cgroup2_mount():
    """Where the cgroup2 file system is mounted, or None."""
    with open("/proc/self/mountinfo") as mounts:
        for line in mounts:
            fields = line.split()
            if "-" in fields[6:] and fields[fields.index("-", 6) + 1] == "cgroup2":
                return fields[4]
    return None


def remove_cgroup_tree(root):
    """Removes the job cgroups under `root`, a path under the cgroup2
    mount, deepest first, once their (killed) processes are gone; what is
    still busy a second later stays."""
    mount = cgroup2_mount()
    if mount is None:
        return
    for _ in range(20):
        if not os.path.isdir(mount + root):
            return
        for directory, _, _ in sorted(os.walk(mount + root), reverse=True):
            try:
                os.rmdir(directory)
            except OSError:
                pass
        time.sleep(0.05)


def wait_for(predicate, timeout, what, interval=0.1):
    """Polls predicate() until it returns something truthy, which is
    returned; raises AssertionError naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def expand_hostlist(expression):
    """node[01-03,07],gpu1 -> [node01, node02, node03, node07, gpu1]."""
    names = []
    for prefix, ranges, plain in re.findall(
            r"([^,\[]+)\[([^\]]+)\]|([^,\[\]]+)", expression):
        if plain:
            names.append(plain)
            continue
        for part in ranges.split(","):
            low, _, high = part.partition("-")
            high = high or low
            for n in range(int(low), int(high) + 1):
                names.append(f"{prefix}{n:0{len(low)}d}")
    return names


class CliError(AssertionError):
    pass


# What ASan, UBSan and LSan write when they find something; with
# packaging/test.sh's sanitizer tier (binaries from build-asan) a daemon
# that reports one fails the test even when it carried on.
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                     ": runtime error: ")


@functools.lru_cache(maxsize=None)
def _sanitized(binary):
    """Whether `binary` links ASan or UBSan."""
    linked = subprocess.run(["ldd", binary], capture_output=True,
                            text=True).stdout
    return "libasan" in linked or "libubsan" in linked


def sanitizer_reports(daemons):
    """'LOG: LINE' for each sanitizer report in the logs of sanitized
    daemons (none for a plain build: nothing to scan)."""
    found = []
    for daemon in daemons:
        if daemon is None or not _sanitized(daemon.argv[0]):
            continue
        for line in daemon.log_text().splitlines():
            if any(marker in line for marker in SANITIZER_MARKERS):
                found.append(f"{daemon.log_path}: {line}")
    return found


class _Daemon:
    """One started process: its Popen, argv, log path and role."""

    def __init__(self, role, argv, log_path, env):
        self.role = role
        self.argv = argv
        self.log_path = log_path
        with open(log_path, "ab") as log:
            self.process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                env=env, preexec_fn=_die_with_parent)

    @property
    def pid(self):
        return self.process.pid

    def running(self):
        return self.process.poll() is None

    def log_text(self):
        with open(self.log_path, errors="replace") as log:
            return log.read()

    def send(self, sig):
        if self.running():
            os.kill(self.pid, sig)

    def kill(self):
        """kill -9, and reap."""
        self.send(signal.SIGKILL)
        self.process.wait(timeout=10)


class GantryCluster:
    """gantryd plus `agents` gantry-agents in a temp dir. Call start()."""

    # Timings are short (the product's defaults are seconds) so that the
    # suite is fast; tests that need other values pass them.
    def __init__(self, agents=2, heartbeat_interval=0.2, node_timeout=5.0,
                 reconnect_grace=10.0, kill_grace=1, restart_backoff=0.2,
                 hot_spares=None, gantryd_args=(), label="cluster",
                 auth="munge", metrics=False, agent_args=None, tls=False):
        bindir = build_dir()
        self.gantryd_bin = os.path.join(bindir, "daemon", "gantryd")
        self.agent_bin = os.path.join(bindir, "agent", "gantry-agent")
        self.cli_bin = os.path.join(bindir, "cli", "gantry")
        # Simulated nodes (tests that start a fleet check it themselves).
        self.fleet_bin = os.path.join(bindir, "agent", "simulated",
                                      "gantry-fleet")
        for binary in (self.gantryd_bin, self.agent_bin, self.cli_bin):
            if not os.access(binary, os.X_OK):
                raise RuntimeError(
                    f"{binary} is missing: build first, and pass --build-dir "
                    "or set GANTRY_BUILD_DIR")
        self.label = label
        # /tmp keeps the unix socket path under its 108-byte limit.
        self.dir = tempfile.mkdtemp(prefix="gantry-it-", dir="/tmp")
        self.state_dir = os.path.join(self.dir, "state")
        self.socket = os.path.join(self.dir, "ctl.sock")
        self.work_dir = os.path.join(self.dir, "work")
        os.makedirs(self.work_dir)
        self.agent_count = agents
        self.heartbeat_interval = heartbeat_interval
        self.node_timeout = node_timeout
        self.reconnect_grace = reconnect_grace
        self.kill_grace = kill_grace
        self.restart_backoff = restart_backoff
        self.gantryd_args = list(gantryd_args)
        # With metrics, every daemon serves /metrics on a port the kernel
        # picks (metrics_address() reads it back); without, none listens,
        # so clusters running at once do not fight over the default port.
        self.metrics = metrics
        if hot_spares:
            self.gantryd_args += ["--hot-spares", hot_spares]
        # A random 127.0.X.0/24 per cluster: the MASTER_PORT of a job is a
        # function of its id, so two clusters running at once (ctest -j)
        # would otherwise give job 1 the same MASTER_ADDR:MASTER_PORT.
        self.address_prefix = f"127.0.{random.randint(2, 253)}."
        self.port = None
        # What agents dial (--controller): gantryd's TCP port unless a
        # subclass sets a list (several controllers).
        self.agent_controller = None
        self.controller = None
        self.agents = {}  # agent name (its node name, usually) -> _Daemon
        # agent name -> extra gantry-agent arguments (set before start()).
        self.agent_args = dict(agent_args or {})
        # Job cgroups (where the host has cgroup v2): a subtree per cluster,
        # since clusters running at once all have a node01.
        self.cgroup_root = "/" + os.path.basename(self.dir)
        self.addresses = {}  # agent name -> its --address
        self._retired = []  # daemons that were killed or replaced
        self._controller_starts = 0
        self.env = dict(os.environ)
        self.env["GANTRY_CONTROLLER"] = "unix:" + self.socket
        self.env[MARKER_VARIABLE] = self.dir
        self.env.pop("GANTRY_BUILD_DIR", None)
        self.env.pop("GANTRY_TLS_CA", None)
        self.env.pop("GANTRY_TLS_SERVER_NAME", None)
        # Authentication as in production: a munged of this cluster's own
        # (key, socket), used by gantryd, the agents, the CLI and the jobs.
        self.munged = None
        if auth == "munge":
            # munged insists that everyone may reach its socket: others may
            # pass through the cluster dir (not list it).
            os.chmod(self.dir, 0o711)
            self.munged = Munged(os.path.join(self.dir, "munge"))
            self.env[MUNGE_SOCKET_VARIABLE] = self.munged.socket
            self.gantryd_args += ["--munge-socket", self.munged.socket]
        else:
            self.gantryd_args += ["--auth", "none"]
        # TLS on gantryd's TCP listener (tls_certificates.py makes a CA and
        # a certificate for 127.0.0.1): agents get --tls-ca; the CLI keeps
        # the unix socket, and tls_env() gives a client the TCP target with
        # the CA.
        self.tls = TlsFiles(os.path.join(self.dir, "tls")) if tls else None
        if self.tls:
            self.gantryd_args += ["--tls-cert", self.tls.cert,
                                  "--tls-key", self.tls.key]

    # --- Lifecycle ---

    def start(self):
        self.start_controller()
        for i in range(1, self.agent_count + 1):
            self.start_agent(self.node_name(i))
        self.wait_nodes_up(list(self.agents))
        return self

    @staticmethod
    def node_name(index):
        return f"node{index:02d}"

    def start_controller(self, port=None, env=None, wrapper=()):
        """Starts gantryd (on `port`, else the last one, else a free one)
        and waits for its ready line. Sets self.port. `env`: variables
        added to its environment (GANTRY_CRASH_AT, say). `wrapper`: a
        command line that execs gantryd's, put before it; one that takes
        its log away must be given a `port`, and then gantryd is waited
        for by its Unix socket instead."""
        if self.controller is not None and self.controller.running():
            raise RuntimeError("gantryd is already running")
        if self.controller is not None:
            self._retired.append(self.controller)
        if port is None:
            port = self.port or 0
        self._controller_starts += 1
        log_path = os.path.join(self.dir, f"gantryd.{self._controller_starts}.log")
        argv = [self.gantryd_bin,
                "--state-dir", self.state_dir,
                "--listen", f"127.0.0.1:{port}",
                "--socket", self.socket,
                "--heartbeat-interval", str(self.heartbeat_interval),
                "--node-timeout", str(self.node_timeout),
                "--reconnect-grace", str(self.reconnect_grace),
                "--kill-grace", str(self.kill_grace),
                "--restart-backoff", str(self.restart_backoff),
                "--metrics-listen", "127.0.0.1:0" if self.metrics else "",
                *self.gantryd_args]
        self.controller = _Daemon("gantryd", [*wrapper, *argv], log_path,
                                  {**self.env, **(env or {})})
        if wrapper and port:
            self.port = port
            wait_for(lambda: self.cli("status", check=False).returncode == 0,
                     15, "gantryd to answer on its socket", 0.05)
            return self.controller
        ready = re.compile(r'msg="gantryd ready".* listen=127\.0\.0\.1:(\d+)')

        def ready_port():
            match = ready.search(self.controller.log_text())
            if match:
                return int(match.group(1))
            if not self.controller.running():
                raise AssertionError(
                    f"gantryd exited with {self.controller.process.returncode} "
                    f"before it was ready:\n{self.controller.log_text()}")
            return None

        self.port = wait_for(ready_port, 15, "gantryd to log ready", 0.02)
        return self.controller

    def kill_controller(self):
        """kill -9 gantryd, and reap it."""
        self.controller.kill()

    def restart_controller(self):
        """kill -9 gantryd, then start it again on the same state and port."""
        self.kill_controller()
        return self.start_controller()

    def start_fleet(self, nodes, *extra, name="fleet", controller=None):
        """Starts `gantry-fleet --nodes NODES EXTRA...` as the agent `name`
        (so stop_processes stops it by pid), against this cluster's
        gantryd or `controller`, with its MUNGE socket when it has one."""
        argv = [self.fleet_bin, "--controller",
                controller or f"127.0.0.1:{self.port}",
                "--nodes", str(nodes), *extra]
        if self.munged:
            argv += ["--munge-socket", self.munged.socket]
        log_path = os.path.join(self.dir, f"agent-{name}.1.log")
        self.agents[name] = _Daemon(name, argv, log_path, self.env)
        return self.agents[name]

    def start_agent(self, name, node_name=None, env=None, wrapper=()):
        """Starts (or restarts, with the same work dir) the agent `name`,
        which registers as `node_name` (default: `name`). `env`: variables
        added to its environment (GANTRY_CRASH_AT, say). `wrapper`: a
        command line that execs the agent's, put before it (to start it
        as a shell or a service manager would)."""
        old = self.agents.get(name)
        if old is not None:
            if old.running():
                raise RuntimeError(f"agent {name} is already running")
            self._retired.append(old)
        address = self.addresses.get(name) or self._next_agent_address()
        self.addresses[name] = address
        work = os.path.join(self.dir, "agents", name)
        os.makedirs(work, exist_ok=True)
        starts = sum(1 for d in self._retired if d.role == name) + 1
        log_path = os.path.join(self.dir, f"agent-{name}.{starts}.log")
        argv = [self.agent_bin,
                "--controller", self.agent_controller or f"127.0.0.1:{self.port}",
                "--node-name", node_name or name,
                "--address", address,
                "--work-dir", work,
                "--stop-grace", "1",
                "--cgroup-root", self.cgroup_root] + self.agent_args.get(name, [])
        if "--memory-checkpoint-dir" not in argv:
            # Beside the work dir, not the shared /dev/shm/gantry/NODE: two
            # clusters on one machine name their nodes alike.
            argv += ["--memory-checkpoint-dir", os.path.join(work, "memory")]
        if self.metrics:
            argv += ["--metrics-listen", "127.0.0.1:0"]
        if self.munged:
            argv += ["--munge-socket", self.munged.socket]
        if self.tls and "--tls-ca" not in argv:  # a test's own CA wins
            argv += ["--tls-ca", self.tls.ca]
        self.agents[name] = _Daemon(name, [*wrapper, *argv], log_path,
                                    {**self.env, **(env or {})})
        return self.agents[name]

    def _next_agent_address(self):
        """127.0.X.1, 127.0.X.2, ... for the first 250 agents, then
        127.1.X.1 and on: a fleet of thousands gets an address each."""
        index = len(self.addresses)
        block, host = divmod(index, 250)
        prefix = self.address_prefix.replace("127.0.", f"127.{block}.", 1)
        return f"{prefix}{host + 1}"

    def metrics_address(self, name=None):
        """HOST:PORT of the /metrics endpoint of gantryd (name None) or of
        the agent `name`, from its start line's metrics= field."""
        daemon = self.controller if name is None else self.agents[name]
        line = "gantryd ready" if name is None else "agent starting"
        pattern = re.compile(r'msg="' + line + r'".* metrics=([0-9.]+:\d+)')

        def address():
            match = pattern.search(daemon.log_text())
            return match.group(1) if match else None

        return wait_for(address, 15, f"the metrics address of {daemon.role}")

    def kill_agent(self, name):
        """kill -9 the agent `name`, and reap it."""
        self.agents[name].kill()

    def signal_agent(self, name, sig):
        self.agents[name].send(sig)

    def stop_processes(self):
        """Stops every process this cluster started, by pid: agents first
        (they stop their ranks), then gantryd, then any rank left behind."""
        daemons = list(self.agents.values()) + [self.controller] + self._retired
        for daemon in daemons:
            if daemon is not None and daemon.running():
                os.kill(daemon.pid, signal.SIGCONT)  # in case a test froze it
                os.kill(daemon.pid, signal.SIGTERM)
        deadline = time.monotonic() + 5
        for daemon in daemons:
            if daemon is None:
                continue
            try:
                daemon.process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.kill(daemon.pid, signal.SIGKILL)
                daemon.process.wait(timeout=10)
        for pid in self.marked_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        remove_cgroup_tree(self.cgroup_root)
        if self.munged:
            self.munged.stop()
        reports = sanitizer_reports(daemons)
        if reports:
            raise AssertionError("sanitizer reports in the daemons' logs:\n"
                                 + "\n".join(reports))

    def marked_pids(self):
        """Pids of live processes carrying this cluster's marker (ranks, and
        processes they started), other than this one."""
        needle = f"{MARKER_VARIABLE}={self.dir}\0".encode()
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                with open(f"/proc/{entry}/environ", "rb") as environ:
                    if needle in environ.read() and pid_alive(int(entry)):
                        found.append(int(entry))
            except OSError:
                continue
        return found

    def finish(self, failed):
        """Removes the temp dir, or (failed, or GANTRY_KEEP_TMP=1) keeps it
        and prints its path and the logs."""
        if not failed and os.environ.get("GANTRY_KEEP_TMP") != "1":
            shutil.rmtree(self.dir, ignore_errors=True)
            return
        out = sys.stderr
        print(f"\n=== {self.label}: kept {self.dir}", file=out)
        for name in sorted(os.listdir(self.dir)):
            if not name.endswith(".log"):
                continue
            path = os.path.join(self.dir, name)
            with open(path, errors="replace") as log:
                lines = log.readlines()
            limit = 80 if name.startswith("gantryd") else 25
            print(f"--- {name} (last {min(limit, len(lines))} of {len(lines)} lines)",
                  file=out)
            out.writelines(lines[-limit:])
        out.flush()

    # --- Client ---

    def cli(self, *args, check=True, cwd=None, timeout=30, input=None, uid=None):
        """Runs `gantry ARGS` (as user id `uid`, if given: needs root);
        returns the CompletedProcess (text). With check, a non-zero exit
        raises CliError with both streams."""
        identity = {}
        if uid is not None:
            entry = pwd.getpwuid(uid)
            identity = {"user": uid, "group": entry.pw_gid, "extra_groups": []}
        result = subprocess.run(
            [self.cli_bin, *args], cwd=cwd or self.work_dir, env=self.env,
            input=input, capture_output=True, text=True, timeout=timeout,
            **identity)
        if check and result.returncode != 0:
            raise CliError(
                f"gantry {' '.join(args)} exited {result.returncode}\n"
                f"stdout: {result.stdout}\nstderr: {result.stderr}")
        return result

    def tls_env(self, ca=None):
        """The CLI's environment for gantryd's TCP listener over TLS, with
        `ca` (default: the cluster's CA; "" for none)."""
        env = dict(self.env)
        env["GANTRY_CONTROLLER"] = f"127.0.0.1:{self.port}"
        env.pop("GANTRY_TLS_CA", None)
        if ca is None:
            ca = self.tls.ca
        if ca:
            env["GANTRY_TLS_CA"] = ca
        return env

    def add_slurm_commands(self, extra_path=""):
        """Puts the sbatch, srun, salloc, sattach, squeue, scancel and
        scontrol names (links
        to gantry, as the gantry-slurm-compat package installs them) first
        on the PATH of the CLI and of jobs (jobs inherit the submitter's
        environment), then `extra_path`. Returns the directory."""
        bin_dir = self.path("bin")
        os.makedirs(bin_dir, exist_ok=True)
        for name in ("gantry", "sbatch", "srun", "salloc", "sattach",
                     "squeue", "scancel", "sinfo", "scontrol", "sacct",
                     "sstat", "sreport", "sprio", "sshare", "sdiag"):
            link = os.path.join(bin_dir, name)
            if not os.path.lexists(link):
                os.symlink(self.cli_bin, link)
        prefix = bin_dir + (":" + extra_path if extra_path else "")
        self.env["PATH"] = prefix + ":" + self.env["PATH"]
        return bin_dir

    def cli_json(self, *args):
        return json.loads(self.cli(*args, "--json").stdout)

    def sh(self, command, timeout=50, env=None, input=None):
        """Runs a shell command line in the work dir with the cluster's
        environment (the Slurm names too, after add_slurm_commands)."""
        return subprocess.run(
            ["bash", "-c", command], cwd=self.work_dir,
            env={**self.env, **(env or {})}, input=input,
            capture_output=True, text=True, timeout=timeout)

    def write_script(self, name, text, directory=None):
        """Writes an executable script in the work dir; returns its path."""
        path = os.path.join(directory or self.work_dir, name)
        with open(path, "w") as script:
            script.write(text)
        os.chmod(path, 0o755)
        return path

    def submit(self, script, *options, args=(), cwd=None, uid=None,
               per_task=True):
        """`gantry batch --parsable OPTIONS SCRIPT ARGS`; returns the id.
        With per_task (the default here) the script is every task (each a
        rank: what the fault-tolerance tests exercise); without, it runs
        once on the first node, as sbatch runs it, and starts steps with
        gantry run."""
        mode = ("--per-task",) if per_task else ()
        result = self.cli("batch", "--parsable", *mode, *options, script,
                          *args, cwd=cwd, uid=uid)
        text = result.stdout.strip()
        if not text.isdigit():
            raise AssertionError(f"--parsable printed {result.stdout!r}")
        return int(text)

    def job(self, job_id):
        return self.cli_json("job", str(job_id))

    def nodes(self):
        """node name -> node JSON."""
        return {n["name"]: n for n in self.cli_json("nodes")["nodes"]}

    def status(self):
        return self.cli_json("status")

    def wait_job(self, job_id, *states, timeout=20):
        """Polls `gantry job ID --json` until the state is one of `states`
        and returns the job JSON. Fails early if the job ends in another."""
        deadline = time.monotonic() + timeout
        while True:
            job = self.job(job_id)
            if job["state"] in states:
                return job
            if job["state"] in TERMINAL_STATES:
                raise AssertionError(
                    f"job {job_id} ended {job['state']} while waiting for "
                    f"{'/'.join(states)}:\n{json.dumps(job, indent=1)}")
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"job {job_id} still {job['state']} after {timeout} s "
                    f"(waiting for {'/'.join(states)}):\n"
                    f"{json.dumps(job, indent=1)}")
            time.sleep(0.1)

    def wait_nodes(self, names, state, timeout=20):
        def reached():
            nodes = self.nodes()
            return all(n in nodes and nodes[n]["state"] == state for n in names)
        wait_for(reached, timeout, f"nodes {names} to be {state}")
        return self.nodes()

    def wait_nodes_up(self, names, timeout=20):
        return self.wait_nodes(names, "up", timeout)

    # --- Files the jobs write ---

    def path(self, *parts):
        return os.path.join(self.work_dir, *parts)

    def read(self, *parts):
        with open(self.path(*parts)) as f:
            return f.read()

    def touch(self, *parts):
        with open(self.path(*parts), "a"):
            pass

    def wait_files(self, names, timeout=20):
        """Waits until every file in `names` (in the work dir) exists and is
        not empty; returns {name: stripped content}."""
        def all_there():
            for name in names:
                path = self.path(name)
                if not os.path.exists(path) or os.path.getsize(path) == 0:
                    return None
            return {name: self.read(name).strip() for name in names}
        return wait_for(all_there, timeout, f"files {sorted(names)}")


class ClusterTestCase(unittest.TestCase):
    """A TestCase whose start_cluster() clusters are stopped after the test
    and removed, or kept and reported when the test failed."""

    _class_failed = False

    def sh(self, command, timeout=50, env=None, input=None):
        """GantryCluster.sh on the cluster of the test (self.cluster)."""
        return self.cluster.sh(command, timeout=timeout, env=env, input=input)

    def start_cluster(self, **options):
        """A cluster for this test only."""
        cluster = GantryCluster(label=self.id(), **options)
        self._clusters.append(cluster)
        self.addCleanup(cluster.stop_processes)
        return cluster.start()

    @classmethod
    def start_class_cluster(cls, **options):
        """A cluster shared by the tests of the class (call it from
        setUpClass), for tests that cannot disturb each other; it is kept
        if any of them failed."""
        cluster = GantryCluster(label=cls.__name__, **options)
        # Class cleanups run last-in first-out: stop, then finish.
        cls.addClassCleanup(lambda: cluster.finish(cls._class_failed))
        cls.addClassCleanup(cluster.stop_processes)
        try:
            return cluster.start()
        except BaseException:
            cls._class_failed = True
            raise

    def run(self, result=None):
        # The outcome is only known after the cleanups ran, so the temp dir
        # is dealt with here rather than in a cleanup.
        self._clusters = []
        if result is None:
            result = self.defaultTestResult()
        problems = len(result.failures) + len(result.errors)
        try:
            return super().run(result)
        finally:
            failed = len(result.failures) + len(result.errors) > problems
            if failed:
                type(self)._class_failed = True
            for cluster in self._clusters:
                cluster.finish(failed)

    def assert_pids_gone(self, pids, timeout=10, what="processes"):
        """Waits until none of `pids` is alive."""
        try:
            wait_for(lambda: not [p for p in pids if pid_alive(p)], timeout, what)
        except AssertionError:
            alive = sorted(p for p in pids if pid_alive(p))
            self.fail(f"{what}: pid(s) {alive} still alive {timeout} s later")
