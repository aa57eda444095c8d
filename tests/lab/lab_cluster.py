"""A Gantry cluster laid out as a site lays it out, on this one machine.

Hosts (lab_hosts.py), each at its own loopback address (NET below
differs between labs running at once):
  etcd1..3  127.NET.3.N  etcd members: TLS for clients and peers, client
                       certificates required, etcd's auth (RBAC) on with a
                       `gantry` user (its certificate's CN) limited to the
                       /gantry prefix
  ctl1..    127.NET.1.N  gantryd, run from the installed gantryd.service
  node01..  127.NET.2.N  gantry-agent, from gantry-agent.service
  login     127.NET.4.1  where users run the gantry command
Every host but the etcd members runs its own munged (/run/munge, one key
for the cluster). The binaries and units come from `cmake --install` of a
build into a staging root; each host's /etc/gantry/gantry.toml is the
shipped file with the site's keys set in its tables, and the controllers'
per-host flags are in /etc/default/gantryd as the unit expects.

Not thread-safe: one thread builds and stops a Lab; cli() may be called
from several.
"""

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

import tls_certificates  # noqa: E402
from lab_hosts import CGROUP2_ROOT, Host, cgroup2_mount  # noqa: E402
from unit_runner import Unit  # noqa: E402

GANTRYD_PORT = 6817
METRICS_PORT = 9817
AGENT_METRICS_PORT = 9818
ETCD_CLIENT_PORT = 2379
ETCD_PEER_PORT = 2380
ETCD_PREFIX = "/gantry"
SERVICE_USER = "gantry"  # packaging/sysusers.d/gantry.conf


def missing_prerequisites():
    """Why the lab cannot run here, or None."""
    if os.geteuid() != 0:
        return "the lab needs root (namespaces, mounts, nftables, users)"
    for tool in ("unshare", "nsenter", "setpriv", "nft", "etcd", "etcdctl",
                 "munged", "openssl", "useradd"):
        if not shutil.which(tool) and not os.access(f"/usr/sbin/{tool}", os.X_OK):
            return f"the lab needs {tool} (packaging/debian-packages-test.txt)"
    if cgroup2_mount() is None:
        return "the lab needs a cgroup v2 mount (nftables tells hosts apart by it)"
    probe = subprocess.run(["unshare", "--mount", "--uts", "true"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return f"unshare --mount --uts fails here: {probe.stderr.strip()}"
    return None


def site_config(shipped, tables):
    """The shipped gantry.toml with `tables` ({table: {key: value}}) set
    right under each table's header, as an admin edits it."""
    lines = []
    for line in shipped.splitlines():
        lines.append(line)
        table = line.strip()
        if table.startswith("[") and table.strip("[]") in tables:
            lines.append("# Set for this site (the lab):")
            for key, value in tables[table.strip("[]")].items():
                if isinstance(value, str):
                    value = '"' + value + '"'
                lines.append(f"{key} = {value}")
    return "\n".join(lines) + "\n"


class Lab:
    def __init__(self, build_dir, controllers=2, agents=3, etcd_members=3,
                 sanitizer_build_dir=None, state_tmpfs_mb=None,
                 stepped_clock_hosts=(), keep=False):
        self.build_dir = build_dir
        # Hosts whose daemon reads the wall clock through the clock-step
        # library, so that faults.step_clock() can step it for that daemon
        # alone.
        self.stepped_clock_hosts = set(stepped_clock_hosts)
        # With a size: each controller's /var/lib/gantry is a tmpfs that
        # small, so faults.fill_disk() can fill it.
        self.state_tmpfs_mb = state_tmpfs_mb
        self.sanitizer_build_dir = sanitizer_build_dir
        self.keep = keep or os.environ.get("GANTRY_KEEP_TMP") == "1"
        self.dir = tempfile.mkdtemp(prefix="gantry-lab-")
        os.chmod(self.dir, 0o755)
        self.stage = os.path.join(self.dir, "stage")
        self.shared = os.path.join(self.dir, "shared")  # the cluster's NFS
        self.ranks_dir = os.path.join(self.shared, "ranks")
        self.logs = os.path.join(self.dir, "logs")
        for directory in (self.shared, self.ranks_dir, self.logs,
                          os.path.join(self.dir, "notify")):
            os.makedirs(directory)
            os.chmod(directory, 0o1777 if directory == self.ranks_dir else 0o755)
        self.etcd_names = [f"etcd{i + 1}" for i in range(etcd_members)]
        self.controller_names = [f"ctl{i + 1}" for i in range(controllers)]
        self.node_names = [f"node{i + 1:02d}" for i in range(agents)]
        # 127.NET.ROLE.N: NET differs between labs running at once on the
        # machine (several checkouts), so they never share an address.
        net = os.getpid() % 200 + 20
        self.addresses = {}
        for role, names in ((1, self.controller_names), (2, self.node_names),
                            (3, self.etcd_names), (4, ["login"])):
            for index, name in enumerate(names):
                self.addresses[name] = f"127.{net}.{role}.{index + 1}"
        self.cgroup_parent = os.path.join(cgroup2_mount(),
                                          f"gantry-lab-{os.getpid()}")
        self.hosts = {}
        self.units = {}  # host name -> Unit (gantryd or gantry-agent)
        self.processes = []  # (host, Popen) of munged, etcd, the watcher
        self.created_service_user = False

    # --- Start-up ---

    def start(self):
        self._stage_install()
        self._ensure_service_user()
        self._make_secrets()
        for name in self.addresses:
            self.hosts[name] = Host(self.dir, self.stage, name,
                                    self.addresses[name], self.cgroup_parent)
            self._common_files(self.hosts[name])
        for name in self.etcd_names:
            self._start_etcd(self.hosts[name])
        self.wait_etcd_healthy()
        self._secure_etcd()
        self._start_etcd_watcher()
        for name in self.addresses:
            if name not in self.etcd_names:
                self._start_munged(self.hosts[name])
        for name in self.controller_names:
            self._configure(self.hosts[name])
            if self.state_tmpfs_mb:
                self.hosts[name].sh(
                    "mkdir -p /var/lib/gantry; mount -t tmpfs -o "
                    f"size={self.state_tmpfs_mb}m tmpfs /var/lib/gantry")
            self._start_unit(name, "gantryd")
        for name in self.node_names + ["login"]:
            self._configure(self.hosts[name])
        for name in self.node_names:
            self._start_unit(name, "gantry-agent")
        return self

    def _stage_install(self):
        for component in ("controller", "agent", "client"):
            result = subprocess.run(
                ["cmake", "--install", self.build_dir, "--prefix", "/usr",
                 "--component", component],
                env={**os.environ, "DESTDIR": self.stage},
                capture_output=True, text=True, timeout=300)
            if result.returncode != 0:
                raise RuntimeError(f"cmake --install {component} failed:\n"
                                   f"{result.stdout}{result.stderr}")
        if self.sanitizer_build_dir:
            # The site installs the sanitized daemons and CLI in their place.
            for relative, target in (("daemon/gantryd", "usr/sbin/gantryd"),
                                     ("agent/gantry-agent", "usr/sbin/gantry-agent"),
                                     ("cli/gantry", "usr/bin/gantry")):
                shutil.copy2(os.path.join(self.sanitizer_build_dir, relative),
                             os.path.join(self.stage, target))

    def _ensure_service_user(self):
        try:
            pwd.getpwnam(SERVICE_USER)
        except KeyError:
            subprocess.run(["useradd", "--system", "--no-create-home",
                            "--shell", "/usr/sbin/nologin", SERVICE_USER],
                           check=True)
            self.created_service_user = True

    def _make_secrets(self):
        secrets = os.path.join(self.dir, "secrets")
        if self.stepped_clock_hosts:
            tls_certificates.sign_with_clock(
                self.clock_step_environment(self._clock_file("openssl", -86400)))
        self.ca, ca_key = tls_certificates.make_ca(secrets)
        self.certificates = {}
        for name in self.etcd_names:
            self.certificates[name] = tls_certificates.make_server_certificate(
                secrets, self.ca, ca_key, name=name, common_name=name,
                alt_names=f"DNS:{name},IP:{self.addresses[name]},IP:127.0.0.1",
                extended_usage="serverAuth,clientAuth")
        controller_names = ",".join(
            f"DNS:{n},IP:{self.addresses[n]}" for n in self.controller_names)
        self.certificates["gantryd"] = tls_certificates.make_server_certificate(
            secrets, self.ca, ca_key, name="gantryd", common_name="gantryd",
            alt_names=controller_names)
        for user in ("gantry", "root"):
            self.certificates[f"etcd-{user}"] = (
                tls_certificates.make_server_certificate(
                    secrets, self.ca, ca_key, name=f"etcd-client-{user}",
                    common_name=user, alt_names=f"DNS:{user}",
                    extended_usage="clientAuth"))
        tls_certificates.sign_with_clock(None)
        self.munge_key = os.urandom(1024)
        self.replication_key = os.urandom(64)

    def _common_files(self, host):
        hosts = "".join(f"{address} {name}\n"
                        for name, address in self.addresses.items())
        host.write_file("/etc/hosts", "127.0.0.1 localhost\n" + hosts)
        with open(self.ca) as ca:
            host.write_file("/etc/gantry/tls/ca.pem", ca.read())

    def _copy_secret(self, host, source, path, owner="root", mode=0o600):
        with open(source) as text:
            host.write_file(path, text.read(), mode=mode, owner=owner)

    # --- etcd ---

    def etcd_endpoints(self):
        return ",".join(f"https://{self.addresses[n]}:{ETCD_CLIENT_PORT}"
                        for n in self.etcd_names)

    def _start_etcd(self, host):
        cert, key = self.certificates[host.name]
        self._copy_secret(host, cert, "/etc/etcd/server.pem", mode=0o644)
        self._copy_secret(host, key, "/etc/etcd/server.key")
        address = host.address
        clients = f"https://{address}:{ETCD_CLIENT_PORT}"
        initial = ",".join(f"{n}=https://{self.addresses[n]}:{ETCD_PEER_PORT}"
                           for n in self.etcd_names)
        argv = ["etcd", "--name", host.name,
                "--data-dir", "/var/lib/etcd/default",
                "--listen-client-urls", clients,
                "--advertise-client-urls", f"https://{address}:{ETCD_CLIENT_PORT}",
                "--listen-peer-urls", f"https://{address}:{ETCD_PEER_PORT}",
                "--initial-advertise-peer-urls",
                f"https://{address}:{ETCD_PEER_PORT}",
                "--initial-cluster", initial, "--initial-cluster-state", "new",
                "--initial-cluster-token", os.path.basename(self.dir),
                "--cert-file", "/etc/etcd/server.pem",
                "--key-file", "/etc/etcd/server.key",
                "--client-cert-auth", "--trusted-ca-file",
                "/etc/gantry/tls/ca.pem",
                "--peer-cert-file", "/etc/etcd/server.pem",
                "--peer-key-file", "/etc/etcd/server.key",
                "--peer-client-cert-auth", "--peer-trusted-ca-file",
                "/etc/gantry/tls/ca.pem"]
        self._spawn(host, "etcd", argv)

    def etcdctl(self, *args, check=True, user="root", endpoints=None, timeout=30):
        cert, key = self.certificates[f"etcd-{user}"]
        return subprocess.run(
            ["etcdctl", "--endpoints", endpoints or self.etcd_endpoints(),
             "--cacert", self.ca, "--cert", cert, "--key", key,
             "--command-timeout=5s", *args],
            env={**os.environ, "ETCDCTL_API": "3"}, capture_output=True,
            text=True, timeout=timeout, check=check)

    def wait_etcd_healthy(self, timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            result = self.etcdctl("endpoint", "health", check=False)
            if result.returncode == 0:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"etcd not healthy: {result.stderr}")
            time.sleep(0.5)

    def _secure_etcd(self):
        """etcd's second layer: RBAC, the gantry user limited to the
        prefix (a user's certificate names it: CN=gantry)."""
        for args in (("user", "add", "root", "--no-password"),
                     ("role", "add", "root"),
                     ("user", "grant-role", "root", "root"),
                     ("role", "add", "gantry"),
                     ("role", "grant-permission", "gantry", "--prefix=true",
                      "readwrite", ETCD_PREFIX),
                     ("user", "add", "gantry", "--no-password"),
                     ("user", "grant-role", "gantry", "gantry"),
                     ("auth", "enable")):
            self.etcdctl(*args)

    def _start_etcd_watcher(self):
        """Every change under the prefix, as etcd applied it: the checker's
        etcd side (checker.py)."""
        cert, key = self.certificates["etcd-root"]
        self.etcd_history = os.path.join(self.logs, "etcd-watch.jsonl")
        with open(self.etcd_history, "wb") as out:
            watcher = subprocess.Popen(
                ["etcdctl", "--endpoints", self.etcd_endpoints(), "--cacert",
                 self.ca, "--cert", cert, "--key", key, "watch", "--prefix",
                 ETCD_PREFIX, "--rev", "1", "-w", "json"],
                env={**os.environ, "ETCDCTL_API": "3"}, stdout=out,
                stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        self.processes.append((None, watcher))

    # --- MUNGE ---

    def _start_munged(self, host):
        """munged as Debian's munge.service runs it: as the munge user,
        the key in /etc/munge, the socket in /run/munge."""
        # One key for the cluster (hex: the lab writes text).
        host.write_file("/etc/munge/munge.key", self.munge_key.hex(),
                        mode=0o400, owner="munge")
        host.run(["install", "-d", "-m", "0755", "-o", "munge", "-g", "munge",
                  "/run/munge"])
        self._spawn(host, "munged", [
            "munged", "--foreground", "--key-file=/etc/munge/munge.key",
            "--log-file=/run/munge/munged.log",
            "--seed-file=/run/munge/munged.seed"], user="munge")
        deadline = time.monotonic() + 20
        while host.run(["test", "-S", "/run/munge/munge.socket.2"],
                       check=False).returncode != 0:
            if time.monotonic() > deadline:
                raise AssertionError(f"{host.name}: munged has no socket")
            time.sleep(0.1)

    def _spawn(self, host, name, argv, user=None):
        log = open(os.path.join(self.logs, f"{host.name}-{name}.log"), "ab")
        self.processes.append((host, host.popen(argv, user=user, cgroup=name,
                                                stdout=log, stderr=log)))
        log.close()

    # --- Gantry ---

    def controller_targets(self):
        return ",".join(f"{self.addresses[n]}:{GANTRYD_PORT}"
                        for n in self.controller_names)

    def _configure(self, host):
        with open(os.path.join(self.stage, "etc", "gantry", "gantry.toml")) as f:
            shipped = f.read()
        controller = {
            "listen": f"{host.address}:{GANTRYD_PORT}",
            "metrics-listen": f"{host.address}:{METRICS_PORT}",
            "tls-cert": "/etc/gantry/tls/gantryd.pem",
            "tls-key": "/etc/gantry/tls/gantryd.key",
            "tls-ca": "/etc/gantry/tls/ca.pem",
        }
        controller.update({
            "etcd": ",".join(f"{self.addresses[n]}:{ETCD_CLIENT_PORT}"
                             for n in self.etcd_names),
            "etcd-ca": "/etc/gantry/tls/ca.pem",
            "etcd-cert": "/etc/gantry/tls/etcd-gantry.pem",
            "etcd-key": "/etc/gantry/tls/etcd-gantry.key",
            "replication-key": "/etc/gantry/replication.key"})
        tables = {
            "client": {"controller": self.controller_targets(),
                       "tls-ca": "/etc/gantry/tls/ca.pem"},
            "controller": controller,
            "agent": {"controller": self.controller_targets(),
                      "tls-ca": "/etc/gantry/tls/ca.pem",
                      "address": host.address,
                      "metrics-listen": f"{host.address}:{AGENT_METRICS_PORT}"},
        }
        host.write_file("/etc/gantry/gantry.toml", site_config(shipped, tables))
        if host.name in self.controller_names:
            cert, key = self.certificates["gantryd"]
            self._copy_secret(host, cert, "/etc/gantry/tls/gantryd.pem",
                              mode=0o644)
            self._copy_secret(host, key, "/etc/gantry/tls/gantryd.key",
                              owner=SERVICE_USER)
            cert, key = self.certificates["etcd-gantry"]
            self._copy_secret(host, cert, "/etc/gantry/tls/etcd-gantry.pem",
                              mode=0o644)
            self._copy_secret(host, key, "/etc/gantry/tls/etcd-gantry.key",
                              owner=SERVICE_USER)
            host.run(["/bin/sh", "-ec", "cat > /etc/gantry/replication.key; "
                      "chown gantry:gantry /etc/gantry/replication.key; "
                      "chmod 600 /etc/gantry/replication.key"],
                     input=self.replication_key.hex())
            host.write_file(
                "/etc/default/gantryd",
                f'GANTRYD_ARGS="--name {host.name} '
                f'--advertise {host.address}:{GANTRYD_PORT}"\n')

    def _start_unit(self, host_name, unit_name, environment=None):
        host = self.hosts[host_name]
        unit = Unit(host, f"/lib/systemd/system/{unit_name}.service",
                    os.path.join(self.logs, f"{host_name}-{unit_name}.log"),
                    os.path.join(self.dir, "notify"),
                    environment={**self.sanitizer_environment(),
                                 **self.clock_environment(host_name)})
        self.units[host_name] = unit
        unit.start()
        return unit

    def sanitizer_environment(self):
        """ASan and UBSan report and stop at the first error, into the
        unit's log, which the sanitizer scenario scans."""
        if not self.sanitizer_build_dir:
            return {}
        return {"ASAN_OPTIONS": "halt_on_error=1:abort_on_error=1:"
                                "detect_leaks=0:print_summary=1",
                "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"}

    def clock_path(self, host_name):
        """The file the clock-step library reads the host's offset from."""
        return os.path.join(self.dir, "clock", host_name)

    def _clock_file(self, name, seconds):
        path = self.clock_path(name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as out:
            out.write(f"{seconds:+d}\n")
        os.chmod(path, 0o644)
        return path

    def clock_step_environment(self, clock_file):
        """tests/lab/clock_step.cc under a process: CLOCK_REALTIME (and
        time(), gettimeofday()) offset by the seconds `clock_file` holds,
        read again every second; the monotonic clocks untouched, as a real
        step (NTP, an admin's `date -s`) leaves them."""
        library = os.path.join(self.build_dir, "tests", "lab",
                               "libgantry_lab_clock_step.so")
        if not os.access(library, os.R_OK):
            raise AssertionError(f"no {library}: build gantry_lab_clock_step")
        return {"LD_PRELOAD": library, "GANTRY_LAB_CLOCK_FILE": clock_file}

    def clock_environment(self, host_name):
        """The host's daemon's wall clock, steppable by faults.step_clock()
        when the lab was made with the host in `stepped_clock_hosts`."""
        if host_name not in self.stepped_clock_hosts:
            return {}
        path = self.clock_path(host_name)
        if not os.path.exists(path):
            self._clock_file(host_name, 0)
        return self.clock_step_environment(path)

    def cli(self, *args, user=None, check=True, timeout=60, cwd=None):
        """`gantry ARGS` on the login host (as `user`, a name)."""
        argv = ["gantry", *args]
        if cwd:
            argv = ["/bin/sh", "-ec", 'cd "$0"; exec "$@"', cwd, *argv]
        result = self.hosts["login"].run(
            argv, user=user, check=False, timeout=timeout,
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
                 **self.sanitizer_environment()})
        if check and result.returncode != 0:
            raise AssertionError(f"gantry {' '.join(args)}: "
                                 f"{result.returncode}\n{result.stderr}")
        return result

    def leader(self):
        """The controller `gantry status` names as leader, or None."""
        import json
        result = self.cli("status", "--json", check=False, timeout=30)
        if result.returncode != 0:
            return None
        try:
            return json.loads(result.stdout).get("replication", {}).get("leader")
        except ValueError:
            return None

    def wait_leader(self, timeout=90, other_than=None):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            name = self.leader()
            if name and name != other_than:
                return name
            time.sleep(0.5)
        raise AssertionError(f"no controller leads after {timeout} s")

    def daemon_logs(self):
        """{file name: text} of every daemon's log."""
        logs = {}
        for name in sorted(os.listdir(self.logs)):
            with open(os.path.join(self.logs, name), errors="replace") as f:
                logs[name] = f.read()
        return logs

    # --- Shut-down ---

    def stop(self, failed=False):
        for unit in list(self.units.values()):
            try:
                unit.stop()
            except Exception as error:  # keep stopping the others
                print(f"stopping {unit.host.name} {unit.name}: {error}")
        for host, process in self.processes:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=10)
        for host in self.hosts.values():
            host.stop()
        if os.path.isdir(self.cgroup_parent):
            os.rmdir(self.cgroup_parent)
        if self.created_service_user:
            subprocess.run(["userdel", SERVICE_USER], check=False)
        if failed or self.keep:
            print(f"lab kept in {self.dir}")
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


def nft_cgroup_path(cgroup_dir):
    """nft's `socket cgroupv2` path (relative to /sys/fs/cgroup, where nft
    looks) and level (depth below the cgroup2 root) of a cgroup dir."""
    relative_to_mount = os.path.relpath(cgroup_dir, cgroup2_mount())
    return (os.path.relpath(cgroup_dir, CGROUP2_ROOT),
            len(relative_to_mount.split(os.sep)))
