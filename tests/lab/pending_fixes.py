"""The one place where the lab adapts to a gantryd that predates issue 34's
HA fixes. Remove each detection (and its fallback in lab_cluster.py, found
by the names below) once the fix is in every gantryd the lab runs.

- etcd_tls: gantryd's --etcd-ca/--etcd-cert/--etcd-key (and
  --etcd-insecure). Without them gantryd cannot speak TLS to etcd, so the
  lab's etcd members also serve plain HTTP on ETCD_PLAIN_PORT without
  etcd's auth (RBAC) for the controllers. The same change fixes gantryd
  aborting at start in HA mode with a unix socket configured, so without
  it the controllers' socket is set to "" (the shipped default is on).
- replication_key: gantryd's --replication-key (signed log entries).
"""

import subprocess

ETCD_PLAIN_PORT = 2381


def gantryd_features(gantryd):
    """Which pending fixes `gantryd` (a path on this machine) has."""
    help_text = subprocess.run([gantryd, "--help"], capture_output=True,
                               text=True, timeout=60).stdout
    return {
        "etcd_tls": "--etcd-ca" in help_text,
        "replication_key": "--replication-key" in help_text,
    }
