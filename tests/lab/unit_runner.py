"""A small stand-in for systemd (PID 1 here is not systemd): runs a shipped
unit file's service inside a lab host the way systemd would.

What it honours, read from the unit as installed: ExecStart (with $VAR
split into words and ${VAR} kept whole, as systemd does), EnvironmentFile
(a leading '-': may be missing), User/Group, StateDirectory and
RuntimeDirectory with their modes (made, owned by User, at start),
UMask, LimitNOFILE/LimitMEMLOCK, Type=notify (READY=1 awaited on a
NOTIFY_SOCKET), WatchdogSec (WATCHDOG_USEC passed; a daemon that stops
pinging gets SIGABRT, as systemd sends), Restart=on-failure with
RestartSec, and stop as KillMode=mixed (SIGTERM to the main process,
SIGKILL to the unit's cgroup after TimeoutStopSec). The sandbox
directives (ProtectSystem= and the like) are not applied.

Each unit runs in its own cgroup under its host's. Thread-safe: one
supervising thread per unit owns the process; the fault injector may
signal main_pid() from any thread.
"""

import os
import re
import resource
import shlex
import shutil
import signal
import socket
import subprocess
import threading
import time

_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


def parse_unit(text):
    """The [Service] section of a unit: {key: [values...]}."""
    section, keys = None, {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        if section == "Service" and "=" in line:
            key, value = line.split("=", 1)
            keys.setdefault(key.strip(), []).append(value.strip())
    return keys


def parse_environment_file(text):
    """KEY=VALUE lines, values unquoted as systemd does."""
    environment = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        match = _ASSIGNMENT.match(line)
        if match:
            value = match.group(2)
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            environment[match.group(1)] = value
    return environment


def expand_command(command, environment):
    """ExecStart's words: $VAR becomes its value split at whitespace,
    ${VAR} its value as one word (systemd.service, Command lines)."""
    words = []
    for word in shlex.split(command):
        whole = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", word)
        if whole:
            words.extend(environment.get(whole.group(1), "").split())
            continue
        words.append(re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}",
                            lambda m: environment.get(m.group(1), ""), word))
    return words


def _seconds(value):
    value = value.strip()
    for suffix, factor in (("ms", 0.001), ("min", 60), ("s", 1)):
        if value.endswith(suffix):
            return float(value[:-len(suffix)]) * factor
    return float(value)


# Begins the thread dump of a daemon that outlived TimeoutStopSec.
STUCK_AT_STOP = "stop timed out; its threads:"

class Unit:
    def __init__(self, host, unit_path, log_path, notify_dir, environment=None):
        self.host = host
        self.name = os.path.basename(unit_path).removesuffix(".service")
        self.keys = parse_unit(host.read_file(unit_path))
        self.log_path = log_path
        self.extra_environment = environment or {}
        self.notify_path = os.path.join(notify_dir, f"{host.name}-{self.name}")
        self.starts = 0
        self.exits = []  # (returncode, time) of every exit
        self._process = None
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._stopping = False
        # Set: the unit's restarts wait (as a host kept down would), until
        # allow_restarts; the fault injector's kill9(keep_down=True).
        self._restarts_allowed = threading.Event()
        self._restarts_allowed.set()
        self._last_ping = time.monotonic()
        self._notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._notify.bind(self.notify_path)
        os.chmod(self.notify_path, 0o666)  # User= must reach it
        self._notify.settimeout(0.5)
        self._threads = [threading.Thread(target=self._listen, daemon=True),
                         threading.Thread(target=self._supervise, daemon=True)]

    def _one(self, key, default=None):
        values = self.keys.get(key)
        return values[-1] if values else default

    def start(self, wait_ready=True, timeout=120):
        for thread in self._threads:
            thread.start()
        if wait_ready and self._one("Type") == "notify":
            if not self._ready.wait(timeout):
                raise AssertionError(
                    f"{self.host.name}: {self.name} not READY in {timeout} s; "
                    f"log:\n{self.log_text()[-3000:]}")

    def main_pid(self):
        with self._lock:
            return self._process.pid if self._process else None

    def signal(self, sig):
        pid = self.main_pid()
        if pid:
            os.kill(pid, sig)

    def hold_restarts(self):
        """Its next exit is not followed by a restart until allow_restarts."""
        self._restarts_allowed.clear()

    def allow_restarts(self):
        self._restarts_allowed.set()

    def log_text(self):
        try:
            with open(self.log_path, errors="replace") as log:
                return log.read()
        except FileNotFoundError:
            return ""

    # --- The supervising thread: start, wait, restart on failure. ---

    def _command_and_environment(self):
        environment = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8",
                       "NOTIFY_SOCKET": self.notify_path}
        for entry in self.keys.get("EnvironmentFile", []):
            optional = entry.startswith("-")
            path = entry.lstrip("-")
            result = self.host.run(["cat", path], check=False)
            if result.returncode != 0:
                if optional:
                    continue
                raise RuntimeError(f"{self.name}: EnvironmentFile {path} missing")
            environment.update(parse_environment_file(result.stdout))
        environment.update(self.extra_environment)
        watchdog = self._one("WatchdogSec")
        if watchdog:
            environment["WATCHDOG_USEC"] = str(int(_seconds(watchdog) * 1e6))
        return expand_command(self._one("ExecStart"), environment), environment

    def _make_directories(self):
        user = self._one("User", "root")
        group = self._one("Group", user)
        for key, base in (("StateDirectory", "/var/lib"),
                          ("RuntimeDirectory", "/run")):
            mode = self._one(f"{key}Mode", "0755")
            for name in (self._one(key) or "").split():
                path = os.path.join(base, name)
                self.host.run(["install", "-d", "-m", mode, "-o", user,
                               "-g", group, path])
                self.host.run(["chmod", mode, path])

    def _spawn(self):
        self._make_directories()
        argv, environment = self._command_and_environment()
        limits = []
        for key, limit in (("LimitNOFILE", resource.RLIMIT_NOFILE),
                           ("LimitMEMLOCK", resource.RLIMIT_MEMLOCK)):
            value = self._one(key)
            if value:
                limits.append((limit, resource.RLIM_INFINITY
                               if value == "infinity" else int(value)))
        user = self._one("User")
        umask = self._one("UMask")
        with open(self.log_path, "ab") as log:
            log.write(f"--- unit-runner: start {self.starts + 1}: "
                      f"{shlex.join(argv)}\n".encode())
            log.flush()
            process = self.host.popen(
                argv, user=user, cgroup=self.name, env=environment,
                umask=int(umask, 8) if umask else None, stdout=log,
                stderr=log, limits=limits)
        with self._lock:
            self._process = process
            self.starts += 1
            self._last_ping = time.monotonic()

    def _supervise(self):
        restart_delay = _seconds(self._one("RestartSec", "0.1s"))
        watchdog = self._one("WatchdogSec")
        watchdog_seconds = _seconds(watchdog) if watchdog else None
        self._spawn()
        while True:
            process = self._process
            try:
                code = process.wait(timeout=1)
            except subprocess.TimeoutExpired:
                if (watchdog_seconds and self._ready.is_set()
                        and time.monotonic() - self._last_ping > watchdog_seconds
                        and not self._stopping):
                    self._append_log(f"watchdog timeout: SIGABRT to {process.pid}")
                    process.send_signal(signal.SIGABRT)
                    self._last_ping = time.monotonic()
                continue
            self.exits.append((code, time.time()))
            self._append_log(f"exited: {code}")
            if self._stopping:
                return
            if code == 0 or self._one("Restart", "no") != "on-failure":
                return
            time.sleep(restart_delay)
            while not self._restarts_allowed.wait(0.5):
                if self._stopping:
                    return
            if self._stopping:
                return
            self._ready.clear()
            self._spawn()

    def _listen(self):
        while True:
            try:
                message = self._notify.recv(4096).decode(errors="replace")
            except socket.timeout:
                if self._stopping:
                    return
                continue
            except OSError:
                return
            for line in message.splitlines():
                if line == "READY=1":
                    self._ready.set()
                elif line == "WATCHDOG=1":
                    self._last_ping = time.monotonic()

    def _append_log(self, text):
        with open(self.log_path, "ab") as log:
            log.write(f"--- unit-runner: {text}\n".encode())

    def _append_threads(self, pid):
        """A daemon that outlives TimeoutStopSec is stuck somewhere: its
        threads' stacks go to its log before the SIGKILL, so a run that
        cannot be repeated still says where."""
        gdb = shutil.which("gdb")
        if not gdb:
            self._append_log("stop timed out; no gdb to print its threads")
            return
        try:
            stacks = subprocess.run(
                [gdb, "-p", str(pid), "-batch", "-nx",
                 "-ex", "set pagination off",
                 "-ex", "thread apply all bt"],
                capture_output=True, text=True, timeout=60).stdout
        except subprocess.TimeoutExpired:
            stacks = "(gdb did not finish in 60 s)"
        self._append_log(STUCK_AT_STOP + "\n" + stacks)

    def wait_ready(self, timeout=120):
        return self._ready.wait(timeout)

    def stop(self):
        """KillMode=mixed: SIGTERM to the main process, SIGKILL to all of
        the unit's cgroup after TimeoutStopSec."""
        self._stopping = True
        process = self._process
        if process and process.poll() is None:
            try:
                os.kill(process.pid, signal.SIGCONT)
                process.terminate()
                process.wait(timeout=_seconds(self._one("TimeoutStopSec", "90s")))
            except subprocess.TimeoutExpired:
                self._append_threads(process.pid)
                self._append_log("stop timed out: SIGKILL")
        kill = os.path.join(self.host.cgroup, self.name, "cgroup.kill")
        if os.path.exists(kill):
            with open(kill, "w") as out:
                out.write("1")
        if process:
            process.wait(timeout=10)
        for thread in self._threads:
            if thread.is_alive():
                thread.join(timeout=5)
        self._notify.close()
        os.unlink(self.notify_path)
