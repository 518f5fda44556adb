"""Faults of the surroundings (issue 26): the database, the disk, Dovecot and the relay failing under a
running ``pbem serve``, each with the real program. Shared pieces: the server in a process of its
own with its log in a file, mail sent as an MTA sends it, and what a person reads in the log."""

from __future__ import annotations

import contextlib
import errno
import os
import smtplib
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from email.message import EmailMessage
from pathlib import Path

from pbem.cli.mailbox import new_mail
from tests.e2e.conftest import raw
from tests.services.requirements import missing, wait_for_port

REPO = Path(__file__).resolve().parents[2]
SERVER = "pbem@localhost"
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


class Served:
    """``pbem serve -c config`` with its log in ``log``; ``env``: more environment variables."""

    def __init__(self, config: Path, log: Path, port: int | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.config, self.log_path, self.port = config, log, port
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "pbem.cli", "serve", "-c", str(config)],
                env={**ENV, **(env or {})}, stdout=out, stderr=out)
        if port is not None:
            assert wait_for_port("127.0.0.1", port, timeout=60, alive=self.alive), self.log()
        else:  # no listener: wait for its socket
            wait_until(lambda: self.status()[0] in (0, 1), 60, "the server's socket")

    def alive(self) -> bool:
        return self.process.poll() is None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def fault_lines(self) -> list[str]:
        """The lines of the fault tracker: one when a fault starts, one when it ends."""
        return [line.split(" pbem.faults: ", 1)[1] for line in self.log().splitlines()
                if " pbem.faults: " in line]

    def status(self) -> tuple[int, str]:
        """``pbem status``: exit status and what it printed."""
        done = subprocess.run([sys.executable, "-m", "pbem.cli", "status", "-c", str(self.config)],
                              capture_output=True, text=True, env=ENV, timeout=60)
        return done.returncode, done.stdout + done.stderr

    def stop(self) -> None:
        if self.alive():
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def wait_until(predicate: Callable[[], object], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


def help_mail(n: int) -> EmailMessage:
    """A mail from a new player each time; each is answered with one reply."""
    return new_mail(f"player{n}@example.org", SERVER, "help")


def smtp_send(port: int, message: EmailMessage) -> tuple[int, str]:
    """One SMTP transaction as an MTA makes it: the code of the final answer (250, 4xx, 5xx)."""
    sender = message["From"].addresses[0].addr_spec
    try:
        with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
            smtp.sendmail(sender, [SERVER], raw(message))
    except smtplib.SMTPResponseException as exc:
        return exc.smtp_code, exc.smtp_error.decode(errors="replace")
    except smtplib.SMTPRecipientsRefused as exc:
        code, text = next(iter(exc.recipients.values()))
        return code, text.decode(errors="replace")
    return 250, "OK"


def deliver(config: Path, message: EmailMessage) -> subprocess.CompletedProcess[bytes]:
    """``pbem deliver`` as Postfix's pipe runs it."""
    return subprocess.run([sys.executable, "-m", "pbem.cli", "deliver", "-c", str(config),
                           "-f", message["From"].addresses[0].addr_spec],
                          input=raw(message), capture_output=True, env=ENV, timeout=60)


def replied_to(messages: list, message: EmailMessage) -> list:
    """The replies (from the relay sink) to ``message``: threaded by In-Reply-To."""
    return [m for m in messages if m.message["In-Reply-To"] == message["Message-ID"]]


def wait_answered(sink, messages: list[EmailMessage], timeout: float = 60) -> None:
    """Until each of ``messages`` has its reply at the relay sink."""
    wait_until(lambda: all(replied_to(sink.messages, m) for m in messages), timeout,
               "a reply to every mail")


@contextlib.contextmanager
def tmpfs(size: str = "4m") -> Iterator[Path]:
    """A size-limited tmpfs, as a small disk that can be filled (root only)."""
    path = Path(tempfile.mkdtemp(prefix="pbem-tmpfs-"))
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs",
                           str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        path.rmdir()
        missing(f"cannot mount a tmpfs for the disk tests (they need root): "
                f"{done.stderr.strip() or done.returncode}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)
        with contextlib.suppress(OSError):
            path.rmdir()


def fill(disk: Path) -> Path:
    """Fill ``disk`` to the last byte with one file; removing it gives the space back."""
    filler = disk / "filler"
    with filler.open("wb", buffering=0) as out:
        for size in (1 << 16, 4096, 512, 1):  # to the last block
            try:
                while True:
                    out.write(b"\0" * size)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
    return filler


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """``folder`` turned read-only (a read-only bind mount over it) while the server runs: what it
    has open stays writable, as after a chmod; every file opened, or created, from now on is not."""
    subprocess.run(["mount", "--bind", str(folder), str(folder)], check=True, capture_output=True)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(folder)], check=True,
                       capture_output=True)
        yield
    finally:
        # lazily: a file opened through it meanwhile may still be open
        subprocess.run(["umount", "-l", str(folder)], check=True, capture_output=True)
