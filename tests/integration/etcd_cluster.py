"""An etcd cluster of one or more members on loopback, for tests of the
replicated controller: each member with its own data dir and free ports,
started and stopped by pid (Debian's etcd-server).

Secured by default as the admin guide's recipe secures a site's etcd: TLS on
client and peer ports with certificates of the cluster's own CA, every
client asked for its certificate (--client-cert-auth), and etcd's auth on
with a `gantry` user (CN=gantry) whose role may read and write
`gantry_prefix` only, set up by the shipped packaging/gantry-etcd-setup.
`gantry_files` are gantryd's --etcd-ca/--etcd-cert/--etcd-key; etcdctl()
runs as etcd's root user. tls=False: plain http, no auth (what
--etcd-insecure is for)."""

import os
import shutil
import signal
import socket
import subprocess
import time

from tls_certificates import (make_ca, make_client_certificate,
                              make_server_certificate)

SETUP_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            "..", "..", "packaging", "gantry-etcd-setup")


def free_port():
    """A TCP port free on 127.0.0.1 at the time of asking."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def etcd_binary():
    return shutil.which("etcd") or (
        "/usr/bin/etcd" if os.access("/usr/bin/etcd", os.X_OK) else None)


class EtcdFiles:
    """A CA, a certificate per member (server and peer), and the client
    certificates of etcd's users gantry and root, under `directory`."""

    def __init__(self, directory, members):
        self.directory = directory
        self.ca, self._ca_key = make_ca(directory, "etcd-ca")
        self.members = {
            name: make_server_certificate(
                directory, self.ca, self._ca_key, name=f"member-{name}",
                alt_names="DNS:localhost,IP:127.0.0.1", client_too=True)
            for name in members}
        self.gantry = make_client_certificate(directory, self.ca,
                                              self._ca_key, "gantry")
        self.root = make_client_certificate(directory, self.ca, self._ca_key,
                                            "root")


class EtcdCluster:
    def __init__(self, directory, members=1, tls=True,
                 gantry_prefix="/gantry", files=None, token=None):
        """`files`: an EtcdFiles to share (one CA for several clusters);
        `token`: the --initial-cluster-token (default: the directory's
        name)."""
        self.directory = directory
        self.names = [f"e{i + 1}" for i in range(members)]
        self.client_ports = {name: free_port() for name in self.names}
        self.peer_ports = {name: free_port() for name in self.names}
        self.processes = {}  # name -> Popen
        self.tls = tls
        self.scheme = "https" if tls else "http"
        self.gantry_prefix = gantry_prefix
        self.token = token or os.path.basename(directory)
        self.files = None
        if tls:
            self.files = files or EtcdFiles(
                os.path.join(directory, "pki"), self.names)
        self.initial = ",".join(
            f"{name}={self.scheme}://127.0.0.1:{self.peer_ports[name]}"
            for name in self.names)

    @property
    def endpoints(self):
        return ",".join(f"127.0.0.1:{self.client_ports[name]}"
                        for name in self.names)

    @property
    def gantry_files(self):
        """(ca, cert, key) for gantryd's --etcd-ca, --etcd-cert and
        --etcd-key; None without TLS."""
        if not self.tls:
            return None
        return (self.files.ca, *self.files.gantry)

    def start(self, timeout=30):
        for name in self.names:
            self.start_member(name)
        self.wait_healthy(self.names, timeout)
        if self.tls:
            self.enable_auth()
        return self

    def enable_auth(self):
        """etcd's auth on, with the gantry role limited to the prefix, by
        the shipped script (as the admin guide's recipe has it)."""
        cert, key = self.files.root
        pki = os.path.join(self.directory, "pki-root")
        os.makedirs(pki, exist_ok=True)
        for source, name in ((self.files.ca, "ca.pem"), (cert, "root.pem"),
                             (key, "root.key")):
            target = os.path.join(pki, name)
            if not os.path.exists(target):
                os.symlink(source, target)
        subprocess.run(["bash", SETUP_SCRIPT, "auth", self.endpoints, pki,
                        self.gantry_prefix], check=True, capture_output=True,
                       text=True, timeout=120)

    def start_member(self, name):
        data = os.path.join(self.directory, name)
        os.makedirs(self.directory, exist_ok=True)
        state = "existing" if os.path.isdir(data) else "new"
        client = f"{self.scheme}://127.0.0.1:{self.client_ports[name]}"
        peer = f"{self.scheme}://127.0.0.1:{self.peer_ports[name]}"
        security = []
        if self.tls:
            cert, key = self.files.members[name]
            security = [
                "--cert-file", cert, "--key-file", key,
                "--client-cert-auth", "--trusted-ca-file", self.files.ca,
                "--peer-cert-file", cert, "--peer-key-file", key,
                "--peer-client-cert-auth",
                "--peer-trusted-ca-file", self.files.ca]
        log = open(os.path.join(self.directory, f"{name}.log"), "ab")
        self.processes[name] = subprocess.Popen(
            [etcd_binary(), "--name", name, "--data-dir", data,
             "--listen-client-urls", client, "--advertise-client-urls", client,
             "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
             "--initial-cluster", self.initial,
             "--initial-cluster-state", state,
             "--initial-cluster-token", self.token, *security],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        log.close()

    def etcdctl(self, *args, endpoints=None, check=True, identity="root"):
        """etcdctl as etcd's root user (`identity`: "gantry" for gantryd's
        certificate, None for none)."""
        env = {**os.environ, "ETCDCTL_API": "3"}
        security = []
        if self.tls:
            security = ["--cacert", self.files.ca]
            if identity:
                cert, key = getattr(self.files, identity)
                security += ["--cert", cert, "--key", key]
        return subprocess.run(
            ["etcdctl", "--endpoints", endpoints or self.endpoints,
             "--command-timeout=2s", *security, *args],
            env=env, capture_output=True, text=True, timeout=30, check=check)

    def wait_healthy(self, names, timeout=30):
        deadline = time.monotonic() + timeout
        endpoints = ",".join(f"127.0.0.1:{self.client_ports[n]}" for n in names)
        while time.monotonic() < deadline:
            result = self.etcdctl("endpoint", "health", endpoints=endpoints,
                                  check=False)
            if result.returncode == 0:
                return
            time.sleep(0.2)
        raise AssertionError(f"etcd {names} not healthy: {result.stderr}")

    def kill_member(self, name):
        process = self.processes.get(name)
        if process and process.poll() is None:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)

    def stop(self):
        for process in self.processes.values():
            if process.poll() is None:
                process.terminate()
        for process in self.processes.values():
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
