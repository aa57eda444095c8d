"""Certificates for TLS tests, made with the openssl command at test time: a
private CA, and a server certificate it signs for the names a test cluster's
gantryd answers to (DNS gantryd.test, IP 127.0.0.1), or client certificates
(etcd's users, by CN). A second CA, with nothing signed by it, plays the
wrong CA. EC keys: fast to make."""

import os
import shutil
import subprocess

OPENSSL = shutil.which("openssl") or "/usr/bin/openssl"
SERVER_NAME = "gantryd.test"


def openssl_available():
    return os.access(OPENSSL, os.X_OK)


# Environment for openssl from here on (None: the test's own). The lab's
# clock-step scenario runs it with a clock set back a day, so certificates
# are valid from yesterday: a daemon whose clock steps back must not also
# find its peers' certificates not yet valid, a fault of its own (a site's
# certificates are rarely minutes old).
_environment = None


def sign_with_clock(environment):
    """openssl's environment from now on; None: the test's own again."""
    global _environment
    _environment = None if environment is None else {**os.environ,
                                                     **environment}


def _openssl(*args):
    subprocess.run([OPENSSL, *args], check=True, capture_output=True,
                   timeout=60, env=_environment)


def make_ca(directory, name="ca"):
    """A self-signed CA in `directory`: returns (certificate, key) paths."""
    os.makedirs(directory, exist_ok=True)
    cert = os.path.join(directory, f"{name}.pem")
    key = os.path.join(directory, f"{name}.key")
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt",
             "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
             "-out", cert, "-days", "2", "-subj", f"/CN=Gantry test {name}",
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    return cert, key


def make_signed_certificate(directory, ca_cert, ca_key, name, common_name,
                            extensions):
    """A certificate signed by the CA, with `extensions` (openssl extfile
    lines): returns (certificate, key); the key is 0600."""
    cert = os.path.join(directory, f"{name}.pem")
    key = os.path.join(directory, f"{name}.key")
    request = os.path.join(directory, f"{name}.csr")
    extfile = os.path.join(directory, f"{name}.ext")
    with open(extfile, "w") as out:
        out.write("".join(line + "\n" for line in extensions))
    _openssl("req", "-newkey", "ec", "-pkeyopt",
             "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
             "-out", request, "-subj", f"/CN={common_name}")
    os.chmod(key, 0o600)
    _openssl("x509", "-req", "-in", request, "-CA", ca_cert, "-CAkey", ca_key,
             "-CAcreateserial", "-out", cert, "-days", "2",
             "-extfile", extfile)
    return cert, key


def make_server_certificate(directory, ca_cert, ca_key, name="server",
                            alt_names=f"DNS:{SERVER_NAME},IP:127.0.0.1",
                            client_too=False, common_name=SERVER_NAME,
                            extended_usage=None):
    """A server certificate signed by the CA: returns (certificate, key).
    `client_too`: also good for dialling (etcd members' peer traffic);
    `extended_usage` overrides the usage outright ("clientAuth" for etcd's
    users, named by `common_name`)."""
    usage = extended_usage or ("serverAuth,clientAuth" if client_too
                               else "serverAuth")
    return make_signed_certificate(
        directory, ca_cert, ca_key, name, common_name,
        [f"subjectAltName={alt_names}", "basicConstraints=CA:FALSE",
         "keyUsage=critical,digitalSignature,keyEncipherment",
         f"extendedKeyUsage={usage}"])


def make_client_certificate(directory, ca_cert, ca_key, common_name):
    """A client certificate (CN=`common_name`, which etcd takes as the
    user) signed by the CA: returns (certificate, key)."""
    return make_signed_certificate(
        directory, ca_cert, ca_key, f"client-{common_name}", common_name,
        ["basicConstraints=CA:FALSE",
         "keyUsage=critical,digitalSignature,keyEncipherment",
         "extendedKeyUsage=clientAuth"])


class TlsFiles:
    """A CA and a gantryd certificate signed by it, under `directory`."""

    def __init__(self, directory):
        self.directory = directory
        self.ca, self._ca_key = make_ca(directory)
        self.cert, self.key = make_server_certificate(directory, self.ca,
                                                      self._ca_key)
