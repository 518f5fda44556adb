"""``pbem deliver`` exit codes, which are the whole contract with the MTA that pipes mail in."""

from __future__ import annotations

import io
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from pbem.doors.deliver import EX_DATAERR, EX_OK, EX_TEMPFAIL, deliver, read_message
from pbem.store.sqlite import SQLiteStore
from tests.transport import inbound_rows, make_config, make_message


def test_stored_then_duplicate_is_still_ok(tmp_path: Path) -> None:
    db = tmp_path / "pbem.sqlite3"
    config = make_config(tmp_path)
    raw = make_message("piped")
    err = io.StringIO()
    assert deliver(config, raw, lambda: SQLiteStore(db), stderr=err) == EX_OK
    assert deliver(config, raw, lambda: SQLiteStore(db), stderr=err) == EX_OK
    assert err.getvalue() == ""
    with SQLiteStore(db) as store:
        rows = list(store.iter_inbound())
    assert [(r.source, r.status, r.raw) for r in rows] == [("deliver", "pending", raw)]


def test_locked_database_is_tempfail(tmp_path: Path) -> None:
    db = tmp_path / "pbem.sqlite3"
    SQLiteStore(db).close()
    blocker = sqlite3.connect(db, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    err = io.StringIO()
    try:
        code = deliver(make_config(tmp_path), make_message(),
                       lambda: SQLiteStore(db, busy_timeout=0.2), stderr=err)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert code == EX_TEMPFAIL
    message = err.getvalue()
    assert message.startswith("pbem deliver: cannot store the message now, try again later")
    assert "Traceback" not in message and message.count("\n") == 1
    with SQLiteStore(db) as store:
        assert inbound_rows(store) == []


def test_unopenable_database_is_tempfail(tmp_path: Path) -> None:
    # The database path is a directory: opening fails, as for a missing mount or a bad disk.
    (tmp_path / "db-is-a-dir").mkdir()
    err = io.StringIO()
    code = deliver(make_config(tmp_path), make_message(),
                   lambda: SQLiteStore(tmp_path / "db-is-a-dir"), stderr=err)
    assert code == EX_TEMPFAIL
    assert "Traceback" not in err.getvalue()


def test_empty_message_is_dataerr(tmp_path: Path) -> None:
    err = io.StringIO()
    opened: list[int] = []

    def factory() -> SQLiteStore:
        opened.append(1)
        return SQLiteStore(tmp_path / "pbem.sqlite3")

    assert deliver(make_config(tmp_path), b"", factory, stderr=err) == EX_DATAERR
    assert deliver(make_config(tmp_path), b"\r\n \n", factory, stderr=err) == EX_DATAERR
    assert opened == []  # refused before touching the database
    assert "empty message" in err.getvalue()


def test_oversized_message_is_dataerr(tmp_path: Path) -> None:
    config = make_config(tmp_path, max_message_bytes=10_000)
    err = io.StringIO()
    raw = read_message(io.BytesIO(make_message(size=50_000)), config.max_message_bytes)
    assert len(raw) == 10_001  # read_message stops one byte past the limit
    assert deliver(config, raw, lambda: SQLiteStore(tmp_path / "x.sqlite3"),
                   stderr=err) == EX_DATAERR
    line = err.getvalue()
    assert line.count("\n") == 1  # one line the MTA puts in its bounce
    assert "the limit is 10 KB (10000 bytes)" in line and "moves need no attachments" in line


def test_read_message_reads_whole_small_message() -> None:
    raw = make_message(size=200_000)
    assert read_message(io.BytesIO(raw), 1_000_000) == raw


def test_envelope_sender_from_f_or_return_path(tmp_path: Path) -> None:
    db = tmp_path / "pbem.sqlite3"
    config = make_config(tmp_path)
    with_path = b"Return-Path: <>\r\n" + make_message("bounce with return path")
    assert deliver(config, with_path, lambda: SQLiteStore(db)) == EX_OK
    assert deliver(config, make_message("f"), lambda: SQLiteStore(db), envelope_from="<>") == EX_OK
    assert deliver(config, make_message("g"), lambda: SQLiteStore(db),
                   envelope_from="player@example.net") == EX_OK
    assert deliver(config, make_message("none"), lambda: SQLiteStore(db)) == EX_OK
    with SQLiteStore(db) as store:
        assert [r.envelope_from for r in store.iter_inbound()] == ["", "", "player@example.net", None]


def test_deliver_command_line_takes_f(tmp_path: Path) -> None:
    """As Postfix's pipe runs it: ``pbem deliver -f ${sender}`` (empty for a bounce)."""
    config = tmp_path / "pbem.toml"
    config.write_text(f'[server]\ndata_dir = "{tmp_path / "data"}"\n')
    for sender in ("", "someone@example.net"):
        proc = subprocess.run([sys.executable, "-m", "pbem.cli", "deliver", "-c", str(config), "-f", sender],
                              input=make_message(f"via pipe {sender}"), capture_output=True, timeout=60,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
        assert proc.returncode == EX_OK, proc.stderr
    with SQLiteStore(tmp_path / "data" / "pbem.sqlite3") as store:
        assert [r.envelope_from for r in store.iter_inbound()] == ["", "someone@example.net"]
