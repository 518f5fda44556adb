"""PostgreSQL restarting under load (``pg_ctl restart -m immediate``), then away for a while, under two
``pbem serve`` workers: mail is answered 451 while it is away (never 250 unless stored, never a
5xx), every mail acknowledged is answered once, the workers reconnect by themselves, each says it
in one line when the database goes and one when it is back, and ``pbem status`` shows the fault."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.faults import Served, help_mail, replied_to, smtp_send, wait_answered, wait_until
from tests.services.postgres import Postgres
from tests.services.requirements import free_port

pytestmark = [pytest.mark.slow, pytest.mark.services]


@pytest.fixture
def database() -> Iterator[Postgres]:
    """A PostgreSQL of this test's own, restarted and stopped here; with fsync and synchronous
    commit as shipped (the test clusters' shortcuts lose the last commits in a crash, which a real
    server does not)."""
    with Postgres(durable=True) as server:
        yield server


class Load:
    """Mail to both workers, one after the other, each sent again after a temporary refusal as an
    MTA would, until stopped; the answers are kept."""

    def __init__(self, ports: list[int]) -> None:
        self.ports = ports
        self.codes: list[int] = []
        self.sent: list = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        n = 0
        while not self.stop.is_set():
            message = help_mail(1000 + n)
            while True:
                code = smtp_send(self.ports[n % 2], message)[0]
                self.codes.append(code)
                if code == 250 or not 400 <= code < 500 or self.stop.is_set():
                    break
                time.sleep(0.2)
            if code == 250:
                self.sent.append(message)
            n += 1
            time.sleep(0.05)


def test_postgres_restart_and_outage_under_two_workers(tmp_path: Path, database: Postgres,
                                                       smtp_sink) -> None:
    dsn = database.create_database("faults")
    ports = [free_port(), free_port()]
    servers = []
    for i, port in enumerate(ports):
        config = tmp_path / f"worker{i}.toml"
        config.write_text(f'[server]\ndata_dir = "{tmp_path / f"w{i}"}"\ndatabase = "{dsn}"\n'
                          f'[smtp]\nport = {port}\n[relay]\nhost = "{smtp_sink.host}"\n'
                          f'port = {smtp_sink.port}\nsecurity = "none"\n')
        servers.append(Served(config, tmp_path / f"worker{i}.log", port))
    load = Load(ports)
    try:
        wait_until(lambda: len(load.sent) >= 5, 30, "mail before the faults")
        database.crash_restart()
        wait_until(lambda: len(load.sent) >= 10, 30, "mail after the restart")
        database.stop()
        wait_until(lambda: any(400 <= c < 500 for c in load.codes[-3:]), 30, "a refusal")
        time.sleep(3)  # away for a while: every worker retries many times meanwhile
        code, report = servers[0].status()
        assert code == 1, report
        assert "FAULT: the database cannot be used" in report
        assert "database: cannot open the database postgresql://" in report
        assert "Connection refused" in report
        database.start()
        back = len(load.sent)
        wait_until(lambda: len(load.sent) >= back + 10, 30, "mail after the database's return")
    finally:
        load.stop.set()
        load.thread.join(30)
    try:
        wait_answered(smtp_sink, load.sent)
        wait_until(lambda: all(len(s.fault_lines()) % 2 == 0 and s.fault_lines()
                               for s in servers), 30, "the end of each worker's fault")
        assert all(s.status()[0] == 0 for s in servers)
    finally:
        for server in servers:
            server.stop()
    assert all(c == 250 or 400 <= c < 500 for c in load.codes), sorted(set(load.codes))
    assert any(c == 451 for c in load.codes)
    for message in load.sent:
        # processed once: one reply; sent again (the same mail, the same Message-ID) only when
        # the database crashed after it left and before its mark was on disk (marks are written
        # without waiting for the disk: README "When things around pbem fail")
        replies = replied_to(smtp_sink.messages, message)
        assert len({r.message["Message-ID"] for r in replies}) == 1, message["From"]
        assert len({r.data for r in replies}) == 1
    for server in servers:
        lines = server.fault_lines()
        # the restart passes unnoticed when it is over within 2 s (pbem.faults.CONFIRM_SECONDS; the
        # fault of a restart that took longer is one short fault); the outage is one fault
        assert 2 <= len(lines) <= 4, lines
        for started, ended in zip(lines[::2], lines[1::2], strict=True):
            assert started.startswith("fault: the database cannot be used: "), started
            assert ended.startswith("fault over: the database works again after "), ended
        log = server.log()
        assert "Traceback" not in log, log[-3000:]
        assert log.count(" ERROR ") == len(lines) // 2, log[-3000:]
