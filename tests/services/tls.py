"""Throw-away TLS certificates for the test servers, made with the ``openssl`` command at test time.

Two independent CAs are made: the servers present a certificate signed by the first, and a client
that trusts only the second sees exactly what a wrong certificate looks like in production
(``certificate verify failed``). The server certificate names ``localhost`` and ``127.0.0.1``,
so hostname checking stays on, as it is in pbem.
"""

from __future__ import annotations

import shutil
import ssl
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .requirements import missing


@dataclass(frozen=True)
class Certificates:
    ca: Path  # the CA that signed the server certificate: trust this one
    other_ca: Path  # a CA that signed nothing here: trusting only this one must fail
    cert: Path  # the server's certificate (PEM)
    key: Path  # the server's key (PEM, unencrypted)

    def server_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.cert, self.key)
        return context


def _openssl(*args: str, cwd: Path) -> None:
    proc = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)} failed: {proc.stderr.strip()}")


def _ca(name: str, folder: Path) -> tuple[Path, Path]:
    key, cert = folder / f"{name}.key", folder / f"{name}.pem"
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN={name}",
             "-keyout", str(key), "-out", str(cert), "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=folder)
    return key, cert


def make_certificates(folder: Path) -> Certificates:
    """A CA, a second CA, and a server certificate for localhost/127.0.0.1 signed by the first."""
    if shutil.which("openssl") is None:
        missing("openssl not installed: it makes the throw-away certificates of the TLS tests")
    folder.mkdir(parents=True, exist_ok=True)
    ca_key, ca_cert = _ca("pbem-test-ca", folder)
    _other_key, other_cert = _ca("pbem-other-ca", folder)
    key, csr, cert = folder / "server.key", folder / "server.csr", folder / "server.pem"
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", str(key),
             "-out", str(csr), cwd=folder)
    extensions = folder / "server.ext"
    extensions.write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n"
                          "extendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n")
    _openssl("x509", "-req", "-in", str(csr), "-CA", str(ca_cert), "-CAkey", str(ca_key),
             "-CAcreateserial", "-days", "2", "-out", str(cert), "-extfile", str(extensions),
             cwd=folder)
    for path in (key, cert, ca_cert, other_cert):
        path.chmod(0o644)  # the Dovecot user must read them
    return Certificates(ca=ca_cert, other_ca=other_cert, cert=cert, key=key)
