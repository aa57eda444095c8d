"""An etcd cluster of one or more members on loopback, for tests of the
replicated controller: each member with its own data dir and free ports,
started and stopped by pid (Debian's etcd-server)."""

import os
import shutil
import signal
import socket
import subprocess
import time


def free_port():
    """A TCP port free on 127.0.0.1 at the time of asking."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def etcd_binary():
    return shutil.which("etcd") or (
        "/usr/bin/etcd" if os.access("/usr/bin/etcd", os.X_OK) else None)


class EtcdCluster:
    def __init__(self, directory, members=1):
        self.directory = directory
        self.names = [f"e{i + 1}" for i in range(members)]
        self.client_ports = {name: free_port() for name in self.names}
        self.peer_ports = {name: free_port() for name in self.names}
        self.processes = {}  # name -> Popen
        self.initial = ",".join(
            f"{name}=http://127.0.0.1:{self.peer_ports[name]}"
            for name in self.names)

    @property
    def endpoints(self):
        return ",".join(f"127.0.0.1:{self.client_ports[name]}"
                        for name in self.names)

    def start(self, timeout=30):
        for name in self.names:
            self.start_member(name)
        self.wait_healthy(self.names, timeout)
        return self

    def start_member(self, name):
        data = os.path.join(self.directory, name)
        os.makedirs(self.directory, exist_ok=True)
        state = "existing" if os.path.isdir(data) else "new"
        client = f"http://127.0.0.1:{self.client_ports[name]}"
        peer = f"http://127.0.0.1:{self.peer_ports[name]}"
        log = open(os.path.join(self.directory, f"{name}.log"), "ab")
        self.processes[name] = subprocess.Popen(
            [etcd_binary(), "--name", name, "--data-dir", data,
             "--listen-client-urls", client, "--advertise-client-urls", client,
             "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
             "--initial-cluster", self.initial,
             "--initial-cluster-state", state,
             "--initial-cluster-token", os.path.basename(self.directory)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        log.close()

    def etcdctl(self, *args, endpoints=None, check=True):
        env = {**os.environ, "ETCDCTL_API": "3"}
        return subprocess.run(
            ["etcdctl", "--endpoints", endpoints or self.endpoints,
             "--command-timeout=2s", *args],
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
