"""Several ``pbem serve`` workers on one PostgreSQL database, as separate processes started the way an
operator starts them, each with its own SMTP listener and all watching one IMAP mailbox (Dovecot);
replies go to an SMTP sink."""

from __future__ import annotations

import contextlib
import itertools
import os
import random
import signal
import smtplib
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pbem.store import open_store
from pbem.store.sql import SqlStore
from tests.services.dovecot import Dovecot, ImapUser
from tests.services.postgres import Postgres
from tests.services.requirements import free_port, wait_for_port
from tests.services.smtp_sink import SmtpSink

REPO = Path(__file__).resolve().parents[2]
_numbers = itertools.count(1)


class Cluster:
    """Workers 0..n-1: ``start``, ``kill`` (SIGKILL), ``stop`` (SIGTERM); ``send`` a mail to some
    worker's SMTP listener (another one when that fails, as an MTA would); ``append`` to the mailbox."""

    def __init__(self, tmp_path: Path, dsn: str, sink: SmtpSink, dovecot: Dovecot, user: ImapUser,
                 size: int) -> None:
        self.dsn = dsn
        self.dovecot = dovecot
        self.user = user
        self.tmp_path = tmp_path
        self.ports = [free_port() for _ in range(size)]
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        self.rng = random.Random(11)
        self.configs = []
        for i, port in enumerate(self.ports):
            config = tmp_path / f"worker{i}.toml"
            config.write_text(
                f'[server]\ndata_dir = "{tmp_path / f"w{i}"}"\ndatabase = "{dsn}"\n'
                f'[smtp]\nenabled = true\nport = {port}\n'
                f'[imap]\nhost = "{dovecot.host}"\nport = {dovecot.port}\nsecurity = "none"\n'
                f'username = "{user.user}"\npassword = "{user.password}"\npoll_seconds = 0.5\n'
                f'[relay]\nhost = "{sink.host}"\nport = {sink.port}\nsecurity = "none"\n')
            self.configs.append(config)
        self.store: SqlStore = open_store(dsn)  # type: ignore[assignment]

    def start(self, i: int, **env: str) -> None:
        """Worker i, with ``env`` added to its environment (``PBEM_FAILPOINT``)."""
        log = (self.tmp_path / f"worker{i}.log").open("ab")
        self.procs[i] = subprocess.Popen(
            [sys.executable, "-m", "pbem.cli", "serve", "-c", str(self.configs[i])],
            env={**os.environ, "PYTHONPATH": str(REPO), **env}, stdout=log, stderr=log)
        log.close()
        assert wait_for_port("127.0.0.1", self.ports[i], timeout=60), self.log(i)

    def alive(self) -> list[int]:
        return [i for i, p in self.procs.items() if p.poll() is None]

    def kill(self, i: int) -> None:
        self.procs[i].send_signal(signal.SIGKILL)
        self.procs[i].wait(30)

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def log(self, i: int, whole: bool = False) -> str:
        text = (self.tmp_path / f"worker{i}.log").read_text(errors="replace")
        return text if whole else text[-3000:]

    def send(self, raw: bytes, sender: str, to: str, worker: int | None = None) -> int:
        """Deliver to a worker's listener; returns which one said 250."""
        candidates = [worker] if worker is not None else self.rng.sample(self.alive(), len(self.alive()))
        error: Exception | None = None
        for attempt in range(100):
            i = candidates[attempt % len(candidates)]
            try:
                with smtplib.SMTP("127.0.0.1", self.ports[i], timeout=30) as smtp:
                    smtp.sendmail(sender, [to], raw)
                return i
            except (OSError, smtplib.SMTPException) as exc:
                error = exc
                time.sleep(0.05)  # killed meanwhile: the next one (or the restarted one)
                candidates = [worker] if worker is not None else self.alive() or candidates
        raise AssertionError(f"no worker took the mail from {sender}: {error}")

    def append(self, raw: bytes) -> None:
        self.dovecot.deliver(self.user.user, raw)

    def holders(self, role: str, since: float) -> list[str]:
        """Workers whose heartbeat, written within the last ``since`` seconds, names the role."""
        from pbem.store.common import now_utc

        now = now_utc()
        return [w.id for w in self.store.workers()
                if role in w.roles and (now - w.seen_at).total_seconds() <= since]

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.stop()
        self.store.close()


@pytest.fixture
def cluster_of(tmp_path: Path, postgres: Postgres, smtp_sink: SmtpSink, dovecot: Dovecot,
               imap_user: ImapUser) -> Iterator:  # type: ignore[type-arg]
    made: list[Cluster] = []

    def make(size: int) -> Cluster:
        dsn = postgres.create_database(f"workers_{next(_numbers)}")
        cluster = Cluster(tmp_path, dsn, smtp_sink, dovecot, imap_user, size)
        made.append(cluster)
        return cluster

    yield make
    for cluster in made:
        cluster.close()
