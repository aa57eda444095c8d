"""A Gantry cluster with several controllers on one etcd cluster
(gantryd --etcd): the controllers, each with its own state dir, port and
unix socket, the etcd members, the agents and the CLI all told every
controller's address, as an admin's configuration would.

Each controller reads a gantry.toml of its own with the keys the admin guide's
recipe sets (etcd, etcd-prefix, socket, replication-key, etcd-ca, etcd-cert,
etcd-key), and
takes its name on the command line as the shipped unit passes it. etcd is
secured as the recipe secures it (etcd_cluster.py) unless etcd_tls=False,
which gives gantryd etcd-insecure instead."""

import os
import re
import shutil
import signal
import time

import gantry_cluster
from etcd_cluster import EtcdCluster, free_port
from gantry_cluster import GantryCluster, _Daemon, wait_for


class HaCluster(GantryCluster):
    def __init__(self, controllers=2, etcd_members=1, lease_ttl=2,
                 etcd_tls=True, **options):
        super().__init__(**options)
        self.etcd_prefix = f"/gantry-test/{os.path.basename(self.dir)}/"
        self.etcd = EtcdCluster(os.path.join(self.dir, "etcd"), etcd_members,
                                tls=etcd_tls, gantry_prefix=self.etcd_prefix)
        self.lease_ttl = lease_ttl
        self.names = [f"ctl{i + 1}" for i in range(controllers)]
        self.ports = {name: free_port() for name in self.names}
        self.sockets = {name: os.path.join(self.dir, f"{name}.sock")
                        for name in self.names}
        # With metrics, a fixed port each: a controller that steps down
        # re-executes and serves them on the same port again.
        self.metrics_ports = ({name: free_port() for name in self.names}
                              if self.metrics else {})
        self.controllers = {}  # name -> _Daemon (the live process)
        self._starts = {name: 0 for name in self.names}
        # The cluster key every controller holds (--replication-key), made
        # as the admin guide's recipe makes it.
        self.replication_key = os.path.join(self.dir, "replication.key")
        with open(os.open(self.replication_key,
                          os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600),
                  "wb") as key:
            key.write(os.urandom(32))
        targets = ",".join(f"127.0.0.1:{self.ports[n]}" for n in self.names)
        self.env["GANTRY_CONTROLLER"] = targets
        self.agent_controller = targets

    def state_dir_of(self, name):
        return os.path.join(self.dir, f"state-{name}")

    def config_of(self, name):
        """Writes the controller's gantry.toml ([controller] as the admin guide's
        HA recipe has it) and returns its path."""
        path = os.path.join(self.dir, f"gantry-{name}.toml")
        lines = ["[controller]",
                 f'etcd = "{self.etcd.endpoints}"',
                 f'etcd-prefix = "{self.etcd_prefix}"',
                 f'socket = "{self.sockets[name]}"',
                 f'replication-key = "{self.replication_key}"']
        if self.etcd.tls:
            ca, cert, key = self.etcd.gantry_files
            lines += [f'etcd-ca = "{ca}"', f'etcd-cert = "{cert}"',
                      f'etcd-key = "{key}"']
        else:
            lines.append("etcd-insecure = true")
        with open(path, "w") as out:
            out.write("\n".join(lines) + "\n")
        return path

    def socket_env(self, name):
        """The CLI's environment for controller `name`'s unix socket."""
        return {**self.env, "GANTRY_CONTROLLER": "unix:" + self.sockets[name]}

    def start(self, only=None):
        """Starts etcd, the controllers (or those named in `only`; the
        others can be started later) and the agents."""
        self.etcd.start()
        for name in only or self.names:
            self.start_named_controller(name)
        leader = self.wait_leader()
        self.port = self.ports[leader]
        for i in range(1, self.agent_count + 1):
            self.start_agent(self.node_name(i))
        self.wait_nodes_up(list(self.agents))
        return self

    def start_named_controller(self, name, wipe=False, env=None):
        old = self.controllers.get(name)
        if old is not None:
            if old.running():
                raise RuntimeError(f"{name} is already running")
            self._retired.append(old)
        if wipe:
            shutil.rmtree(self.state_dir_of(name), ignore_errors=True)
        self._starts[name] += 1
        log_path = os.path.join(self.dir, f"gantryd-{name}.{self._starts[name]}.log")
        argv = [self.gantryd_bin,
                "--config", self.config_of(name),
                "--state-dir", self.state_dir_of(name),
                "--listen", f"127.0.0.1:{self.ports[name]}",
                "--name", name,
                "--lease-ttl", str(self.lease_ttl),
                "--heartbeat-interval", str(self.heartbeat_interval),
                "--node-timeout", str(self.node_timeout),
                "--reconnect-grace", str(self.reconnect_grace),
                "--kill-grace", str(self.kill_grace),
                "--restart-backoff", str(self.restart_backoff),
                "--metrics-listen",
                f"127.0.0.1:{self.metrics_ports[name]}" if self.metrics else "",
                *self.gantryd_args]
        self.controllers[name] = _Daemon(name, argv, log_path,
                                         {**self.env, **(env or {})})
        return self.controllers[name]

    def metrics_address(self, name=None):
        """HOST:PORT of the /metrics endpoint of the controller `name`
        (default: the leader), leader or standby (needs metrics=True), or
        of the agent `name`."""
        if name is not None and name not in self.names:
            return super().metrics_address(name)
        return f"127.0.0.1:{self.metrics_ports[name or self.wait_leader()]}"

    def handover(self, *args, check=True, uid=None):
        """`gantry handover ARGS`: the CompletedProcess."""
        return self.cli("handover", *args, check=check, uid=uid, timeout=60)

    def leader_name(self):
        """The controller that logged "gantryd ready" last in its current
        process life and is running, per `gantry status`; None if none
        answers."""
        result = self.cli("status", "--json", check=False, timeout=30)
        if result.returncode != 0:
            return None
        import json
        status = json.loads(result.stdout)
        return status.get("replication", {}).get("leader") or None

    def wait_leader(self, timeout=30, other_than=None):
        def elected():
            name = self.leader_name()
            if name and name != other_than and self.controllers[name].running():
                return name
            return None
        return wait_for(elected, timeout, "a controller to lead", 0.1)

    def kill_named(self, name, sig=signal.SIGKILL):
        daemon = self.controllers[name]
        daemon.send(sig)
        if sig == signal.SIGKILL:
            daemon.process.wait(timeout=10)

    def stop_processes(self):
        self._retired.extend(self.controllers.values())
        self.controllers = {}
        try:
            super().stop_processes()
        finally:
            self.etcd.stop()
