"""The disk fills, or turns read-only, under a running ``pbem serve``: the data folder on a 4 MB tmpfs.

While it lasts the doors say "try again later" (SMTP 4xx, ``pbem deliver`` exit 75), never 250 for
a mail that is not stored and never a 5xx; replies that cannot be written wait in the database; the
log says it once when it starts and once when it ends; ``pbem status`` shows it. When space returns,
everything resumes by itself: every mail acknowledged is answered once, and the mails refused
meanwhile, sent again as an MTA would, too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faults import (
    Served,
    deliver,
    fill,
    help_mail,
    read_only,
    replied_to,
    smtp_send,
    tmpfs,
    wait_answered,
    wait_until,
)
from tests.services.requirements import free_port

pytestmark = pytest.mark.slow


def _config(tmp_path: Path, data: Path, port: int, sink=None, database: Path | None = None) -> Path:
    config = tmp_path / "pbem.toml"
    text = f'[server]\ndata_dir = "{data}"\n'
    if database is not None:
        text += f'database = "{database}"\n'
    text += f"[smtp]\nport = {port}\n"
    if sink is not None:
        text += f'[relay]\nhost = "{sink.host}"\nport = {sink.port}\nsecurity = "none"\n'
    config.write_text(text)
    return config


def _refused_until_accepted(port: int, message, timeout: float = 30) -> list[int]:
    """Send ``message`` as an MTA would: again after each temporary refusal, until it is taken."""
    codes: list[int] = []

    def attempt() -> bool:
        codes.append(smtp_send(port, message)[0])
        return codes[-1] == 250

    wait_until(attempt, timeout, f"the mail to be accepted (answers: {codes})")
    return codes


def test_the_database_disk_full_then_freed(tmp_path: Path, smtp_sink) -> None:
    with tmpfs() as disk:
        port = free_port()
        config = _config(tmp_path, disk / "data", port, smtp_sink)
        server = Served(config, tmp_path / "serve.log", port)
        try:
            first = help_mail(0)
            assert smtp_send(port, first)[0] == 250
            smtp_sink.wait_for(1, timeout=30)
            filler = fill(disk)

            # The disk is full: mail is refused for now, never taken without being stored.
            accepted, refused = [first], []
            for n in range(1, 40):
                message = help_mail(n)
                code, text = smtp_send(port, message)
                assert code == 250 or 400 <= code < 500, (code, text)
                (accepted if code == 250 else refused).append(message)
                if code != 250:
                    assert code == 452 and "insufficient system storage" in text, (code, text)
                    break
            assert refused, "a full disk never refused a mail"
            piped = help_mail(100)
            result = deliver(config, piped)
            assert result.returncode == 75, result.stderr
            assert result.stderr.decode().count("\n") == 1
            assert "try again later" in result.stderr.decode()
            code, report = server.status()
            assert code == 1, report
            assert "FAULT: the database cannot be used" in report and "disk is full" in report
            assert "heartbeat" not in server.log()
            wait_until(server.fault_lines, 30, "the fault (once it has lasted 2 s)")
            (started,) = server.fault_lines()
            assert started.startswith("fault: the database cannot be used: ")
            assert "database or disk is full (free space on that disk)" in started
            assert "incoming mail is refused with a temporary error" in started

            filler.unlink()  # space is back
            for message in refused:
                _refused_until_accepted(port, message)
            assert deliver(config, piped).returncode == 0
            everything = [*accepted, *refused, piped]
            wait_answered(smtp_sink, everything)
            wait_until(lambda: len(server.fault_lines()) == 2, 30, "the end of the fault")
        finally:
            server.stop()
        for message in everything:
            assert len(replied_to(smtp_sink.messages, message)) == 1  # once, not twice
        started, ended = server.fault_lines()
        assert ended.startswith("fault over: the database works again after ")
        log = server.log()
        assert "Traceback" not in log, log[-3000:]


def test_the_outbox_folder_disk_full_then_freed(tmp_path: Path) -> None:
    """The database elsewhere, the outbox Maildir on the full disk: mail is still taken (it is
    stored), its reply waits in the database and is written when space returns."""
    with tmpfs() as disk:
        port = free_port()
        config = _config(tmp_path, disk / "data", port, database=tmp_path / "pbem.sqlite3")
        server = Served(config, tmp_path / "serve.log", port)
        outbox = disk / "data" / "outbox" / "new"

        def written() -> int:
            return len(list(outbox.iterdir())) if outbox.is_dir() else 0

        try:
            assert smtp_send(port, help_mail(0))[0] == 250
            wait_until(lambda: written() == 1, 30, "the first reply")
            filler = fill(disk)
            assert smtp_send(port, help_mail(1))[0] == 250  # stored: the database has room
            wait_until(lambda: server.fault_lines(), 30, "the fault")
            (started,) = server.fault_lines()
            assert started.startswith("fault: the outbox folder cannot be written: No space left "
                                      "on device")
            assert "replies wait in the database" in started
            code, report = server.status()
            assert code == 1 and "FAULT: the outbox folder cannot be written" in report, report
            assert written() == 1
            filler.unlink()
            wait_until(lambda: written() == 2, 30, "the reply that waited")
            wait_until(lambda: len(server.fault_lines()) == 2, 30, "the end of the fault")
            assert server.status()[0] == 0
        finally:
            server.stop()
        assert server.fault_lines()[1].startswith("fault over: the outbox folder works again")
        assert "Traceback" not in server.log()


def test_a_read_only_data_folder(tmp_path: Path) -> None:
    """The data folder turns read-only under the running server (a read-only bind mount): what the
    server has open stays writable, so the SMTP door still stores mail and answers 250; ``pbem
    deliver`` cannot open the database for writing and exits 75; replies cannot be created in the
    outbox folder and wait. Everything resumes when the folder is writable again."""
    with tmpfs() as disk:
        port = free_port()
        data = disk / "data"
        config = _config(tmp_path, data, port)
        server = Served(config, tmp_path / "serve.log", port)
        outbox = data / "outbox" / "new"

        def written() -> int:
            return len(list(outbox.iterdir())) if outbox.is_dir() else 0

        try:
            assert smtp_send(port, help_mail(0))[0] == 250
            wait_until(lambda: written() == 1, 30, "the first reply")
            with read_only(data):
                taken, piped = help_mail(1), help_mail(2)
                assert smtp_send(port, taken)[0] == 250  # stored through what is open
                result = deliver(config, piped)
                assert result.returncode == 75, result.stderr
                err = result.stderr.decode()
                assert err.count("\n") == 1 and "Read-only file system" in err and "try again later" in err
                wait_until(lambda: server.fault_lines(), 30, "the fault")
                code, report = server.status()
                assert code == 1, report
                assert "FAULT: the outbox folder cannot be written" in report
                assert "Read-only file system" in report
                assert written() == 1
            assert deliver(config, piped).returncode == 0
            wait_until(lambda: written() == 3, 30, "the replies that waited")
            wait_until(lambda: len(server.fault_lines()) == 2, 30, "the end of the fault")
        finally:
            server.stop()
        started, ended = server.fault_lines()
        assert started.startswith("fault: the outbox folder cannot be written: Read-only file "
                                  "system")
        assert ended.startswith("fault over: the outbox folder works again")
        assert "Traceback" not in server.log()
