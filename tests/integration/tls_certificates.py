"""Certificates for TLS tests, made with the openssl command at test time: a
private CA, and a server certificate it signs for the names a test cluster's
gantryd answers to (DNS gantryd.test, IP 127.0.0.1). A second CA, with
nothing signed by it, plays the wrong CA. EC keys: fast to make."""

import os
import shutil
import subprocess

OPENSSL = shutil.which("openssl") or "/usr/bin/openssl"
SERVER_NAME = "gantryd.test"


def openssl_available():
    return os.access(OPENSSL, os.X_OK)


def _openssl(*args):
    subprocess.run([OPENSSL, *args], check=True, capture_output=True,
                   timeout=60)


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


def make_server_certificate(directory, ca_cert, ca_key, name="server",
                            alt_names=f"DNS:{SERVER_NAME},IP:127.0.0.1",
                            common_name=SERVER_NAME,
                            extended_usage="serverAuth"):
    """A certificate signed by the CA: returns (certificate, key). A
    server's by default; extended_usage "clientAuth" (etcd's users, named
    by common_name) or "serverAuth,clientAuth" (etcd members, which are
    both to each other) for others."""
    cert = os.path.join(directory, f"{name}.pem")
    key = os.path.join(directory, f"{name}.key")
    request = os.path.join(directory, f"{name}.csr")
    extensions = os.path.join(directory, f"{name}.ext")
    with open(extensions, "w") as out:
        out.write(f"subjectAltName={alt_names}\n"
                  "basicConstraints=CA:FALSE\n"
                  "keyUsage=critical,digitalSignature,keyEncipherment\n"
                  f"extendedKeyUsage={extended_usage}\n")
    _openssl("req", "-newkey", "ec", "-pkeyopt",
             "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
             "-out", request, "-subj", f"/CN={common_name}")
    _openssl("x509", "-req", "-in", request, "-CA", ca_cert, "-CAkey", ca_key,
             "-CAcreateserial", "-out", cert, "-days", "2",
             "-extfile", extensions)
    os.chmod(key, 0o600)
    return cert, key


class TlsFiles:
    """A CA and a gantryd certificate signed by it, under `directory`."""

    def __init__(self, directory):
        self.directory = directory
        self.ca, self._ca_key = make_ca(directory)
        self.cert, self.key = make_server_certificate(directory, self.ca,
                                                      self._ca_key)
