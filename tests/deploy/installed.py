"""An installation of pbem made by deploy/install.sh, and the mail system around it, as the deploy
tests and bench/pipe_latency.py set them up (the fixtures are in conftest.py).

``install.sh`` installs into temporary folders (its ``--prefix``, ``--data-dir`` and
``--config-dir``) for a real system user, ``pbemdeploy``, whose address is ``pbemdeploy@games.test``;
the private Postfix and Dovecot of tests/services/ are set up from the files install.sh wrote for
that installation, with only their own paths and ports put in; ``pbem serve`` runs from the venv
install.sh made, as that user, in the data folder, as pbem.service starts it. Players live at
``players.test`` on the same Postfix, each with a Maildir that is read as a person would.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pwd
import signal
import smtplib
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path

from tests.e2e.conftest import raw
from tests.services.dovecot_lmtp import LmtpDovecot
from tests.services.postfix import Postfix

REPO = Path(__file__).resolve().parents[2]
INSTALL_SH = REPO / "deploy" / "install.sh"
SERVICE_USER = "pbemdeploy"
DOMAIN = "games.test"
ADDRESS = f"{SERVICE_USER}@{DOMAIN}"
PLAYERS = ["alice", "bob", "carol"]


@dataclass
class Installation:
    """What deploy/install.sh made: folders, the venv, pbem.toml, and what it printed."""

    root: Path
    prefix: Path
    data_dir: Path
    config_dir: Path
    door: str
    output: str

    @classmethod
    def of(cls, root: Path, door: str, output: str) -> Installation:
        """What ``run_install(root, door)`` made, ``output`` being what it printed."""
        return cls(root, root / "opt" / "pbem", root / "var" / "lib" / "pbem", root / "etc" / "pbem",
                   door, output)

    @property
    def config(self) -> Path:
        return self.config_dir / "pbem.toml"

    @property
    def pbem(self) -> Path:
        return self.prefix / "venv" / "bin" / "pbem"

    def steps(self, title: str) -> list[str]:
        """The commands install.sh printed under its next step whose title starts with ``title``."""
        found: list[str] | None = None
        for line in self.output.split("Next steps", 1)[1].splitlines():
            if line[:1].isdigit():
                if found is not None:
                    break
                if line.split(". ", 1)[1].startswith(title):
                    found = []
            elif found is not None and line.startswith("     "):
                found.append(line.strip())
        assert found, f"install.sh printed no step {title!r}:\n{self.output}"
        return found

    def as_documented(self, text: str) -> str:
        """``text`` with this installation's folders, user and address back at install.sh's
        defaults and the README's example address, as the README shows the commands."""
        for ours, default in [(self.prefix, "/opt/pbem"), (self.config_dir, "/etc/pbem"),
                              (self.data_dir, "/var/lib/pbem"), (ADDRESS, "pbem@games.example.org"),
                              (DOMAIN, "games.example.org"), (SERVICE_USER, "pbem")]:
            text = text.replace(str(ours), default)
        return text

    def rendered(self, name: str) -> str:
        """A file of deploy/ as install.sh wrote it for this installation (PREFIX/deploy/NAME)."""
        return (self.prefix / "deploy" / name).read_text()

    def set_ports(self, **ports: int) -> None:
        """Point the installed pbem.toml's ``[section] port`` at the test's private servers: the
        only change made to it (Postfix and Dovecot listen on 25 and 143 on a real host)."""
        text = self.config.read_text()
        for section, port in ports.items():
            head, sep, rest = text.partition(f"[{section}]\n")
            assert sep, f"no [{section}] in {self.config}"
            body, nxt, tail = rest.partition("\n[")
            lines = [f"port = {port}" if line.startswith("port = ") else line
                     for line in body.split("\n")]
            assert f"port = {port}" in lines, f"no port in [{section}] of {self.config}"
            text = head + sep + "\n".join(lines) + nxt + tail
        self.config.write_text(text)  # keeps its owner and mode

    def as_user(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """``pbem ARGS`` from the installed venv as the service user (``runuser -u pbem -- ...``)."""
        return subprocess.run(["runuser", "-u", SERVICE_USER, "--", str(self.pbem), *args],
                              capture_output=True, text=True, timeout=timeout, cwd="/")


LOCK = "/tmp/pbem-deploy-install.lock"


def build_wheel(folder: Path) -> Path:
    """This checkout built into a wheel in ``folder`` (the build is most of pip's time), unless a
    process before built it there."""
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not list(folder.glob("pbem-*.whl")):
            result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                                     "--wheel-dir", str(folder), str(REPO)], capture_output=True,
                                    text=True, timeout=600)
            assert result.returncode == 0, result.stderr
    (wheel,) = folder.glob("pbem-*.whl")
    return wheel


def run_install(root: Path, door: str, *extra: str,
                source: Path = REPO) -> subprocess.CompletedProcess[str]:
    """``deploy/install.sh`` into folders below ``root``, as root; one at a time on this machine (two
    test processes would otherwise build the same checkout at once)."""
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return subprocess.run(
            [str(INSTALL_SH), "--prefix", str(root / "opt" / "pbem"),
             "--data-dir", str(root / "var" / "lib" / "pbem"), "--config-dir", str(root / "etc" / "pbem"),
             "--user", SERVICE_USER, "--address", ADDRESS, "--door", door, "--source", str(source), *extra],
            capture_output=True, text=True, timeout=600, cwd="/")


@contextlib.contextmanager
def pipe_mail_system(inst: Installation) -> Iterator[Postfix]:
    """A private Postfix, running, to which the Postfix step install.sh printed is applied as
    printed; the installed pbem.toml's relay pointed at it."""
    with Postfix(domain=DOMAIN, players=PLAYERS) as postfix:
        postfix.apply(inst.steps("Postfix"))
        inst.set_ports(relay=postfix.relay_port)
        yield postfix


@contextlib.contextmanager
def dovecot_mail_system(inst: Installation) -> Iterator[tuple[Postfix, LmtpDovecot]]:
    """The Dovecot door's steps as install.sh printed them, in their order: Dovecot's files (into a
    folder standing for /etc/dovecot; ``systemctl restart dovecot`` starts the private Dovecot
    with them), then Postfix's commands on a private, running Postfix. The installed pbem.toml's
    IMAP and relay ports pointed at them."""
    with Postfix(domain=DOMAIN, players=PLAYERS) as postfix:
        etc = inst.root / "etc-dovecot"
        (etc / "conf.d").mkdir(parents=True, exist_ok=True)
        for command in inst.steps("Dovecot"):
            result = subprocess.run(["bash", "-c", "systemctl() { :; }\n"
                                     + command.replace("/etc/dovecot/", f"{etc}/")],
                                    capture_output=True, text=True, timeout=30)
            assert result.returncode == 0, f"{command!r}: {result.stderr}"
        postfix.apply(inst.steps("Postfix"))
        with LmtpDovecot(etc, postfix.local_paths) as dovecot:
            inst.set_ports(imap=dovecot.port, relay=postfix.relay_port)
            yield postfix, dovecot


class Serve:
    """``pbem serve -c CONFIG`` from the venv, as pbem.service runs it: as the service user, in the
    data folder, with a service's environment; its log in ROOT/serve.log."""

    def __init__(self, inst: Installation) -> None:
        self.inst = inst
        self.log_path = inst.root / "serve.log"
        user = pwd.getpwnam(SERVICE_USER)
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                [str(inst.pbem), "serve", "-c", str(inst.config)], user=user.pw_uid,
                group=user.pw_gid, extra_groups=[], cwd=inst.data_dir, stdin=subprocess.DEVNULL,
                stdout=log, stderr=log, start_new_session=True,
                env={"PATH": "/usr/bin:/bin", "HOME": user.pw_dir, "USER": SERVICE_USER,
                     "LOGNAME": SERVICE_USER, "LANG": "C.UTF-8"})
        deadline = time.monotonic() + 60
        while "daemon: started" not in self.log():
            assert self.proc.poll() is None, f"pbem serve exited {self.proc.returncode}:\n{self.log()}"
            assert time.monotonic() < deadline, f"pbem serve did not start:\n{self.log()}"
            time.sleep(0.05)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> int:
        """SIGTERM, as systemctl stop sends it; the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        return self.proc.returncode


def submitter(port: int) -> Callable[[EmailMessage], None]:
    """A player's mail client: submits each mail to Postfix over SMTP, envelope from the From
    address to the To address (the server's, or its seat address from a Reply-To)."""

    def submit(message: EmailMessage) -> None:
        with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
            smtp.sendmail(message["From"].addresses[0].addr_spec,
                          [message["To"].addresses[0].addr_spec], raw(message))

    return submit
