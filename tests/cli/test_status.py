"""`pbem status` as an operator reads it: who is alive, who went silent, who holds which role, and
how much mail waits and since when; and which configuration and database it (and every command that
inspects a server) reads, refusing to create an empty one."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pbem.cli import main
from pbem.cli.status import status_lines
from pbem.clock import ManualClock
from pbem.daemon.roles import RoleKeeper
from pbem.store import open_store
from pbem.store.base import Worker

NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)


def test_status_lines(tmp_path: Path) -> None:
    with open_store(tmp_path / "pbem.sqlite3") as store:
        assert status_lines(store, NOW, imap=True) == [
            "workers: 0 alive", "imap role: nobody", "scheduler role: nobody", "inbound: 0 pending",
            "outbox: 0 waiting", "games: 0 active"]
        store.heartbeat(Worker("a:1:x", "a", 1, NOW - timedelta(hours=3), NOW - timedelta(seconds=4),
                               ["imap", "scheduler"]))
        store.heartbeat(Worker("b:2:x", "b", 2, NOW - timedelta(days=3), NOW - timedelta(minutes=5),
                               ["imap"]))
        store.accept_inbound(b"Message-ID: <1@x>\r\n\r\n", "smtp", NOW - timedelta(seconds=90))
        store.accept_inbound(b"Message-ID: <2@x>\r\n\r\n", "smtp", NOW - timedelta(seconds=3))
        with store.transaction() as tx:
            tx.queue_outbound(message_id="<o@x>", sender="s", recipients=["r"], raw=b"",
                              now=NOW - timedelta(minutes=7))
        assert status_lines(store, NOW, imap=True) == [
            "workers: 1 alive, 1 silent",
            "  a pid 1: alive, up 3 h, last heartbeat 4 s ago, holds imap and scheduler",
            "  b pid 2: silent (stopped without saying so?), up 3 days, last heartbeat 5 min ago",
            "imap role: a pid 1",
            "scheduler role: a pid 1",
            "inbound: 2 pending, the oldest received 90 s ago",
            "outbox: 1 waiting, the oldest due 7 min ago",
            "games: 0 active"]
        assert "imap role" not in " ".join(status_lines(store, NOW, imap=False))


def test_after_the_clock_stepped_back_a_dead_worker_is_not_taken_for_alive(tmp_path: Path) -> None:
    # An NTP correction of an hour: every heartbeat written before it is "in the future". The
    # worker that died just before it stays silent (it was alive for an hour after its death
    # before); the live one writes again within seconds, on the corrected clock, and is alive.
    clock = ManualClock(NOW + timedelta(hours=1))
    stop = threading.Event()
    with open_store(tmp_path / "pbem.sqlite3") as store:
        store.heartbeat(Worker("dead:1:x", "dead", 1, NOW - timedelta(hours=2),
                               NOW + timedelta(minutes=59), ["scheduler"]))
        keeper = RoleKeeper(store, clock, [], stop, check_seconds=0.1)
        keeper.start()  # its heartbeat: NOW + 1 h
        try:
            clock.set(NOW)
            lines = status_lines(store, NOW, imap=False, look_again_seconds=1.0)
        finally:
            stop.set()
            keeper.stop()
    live = f"{keeper.worker.host} pid {keeper.worker.pid}"
    assert lines[:3] == ["workers: 1 alive, 1 silent", lines[1], lines[2]]
    assert f"  {live}: alive, up " in "\n".join(lines)
    assert ("  dead pid 1: silent (stopped without saying so?), up 2 h, last heartbeat 59 min ahead "
            "of this clock (written before it went back)") in lines
    assert "scheduler role: nobody" in lines


# --- which server a command looks at (issue 22) ----------------------------------------------------------

INSPECTING = (["admin", "status"], ["status"], ["admin", "list"], ["admin", "show", "ac-1"],
              ["admin", "pause", "ac-1"], ["archive", "search"], ["standings"],
              ["archive", "export", "-o", "out"])


@pytest.mark.parametrize("command", INSPECTING, ids=" ".join)
def test_a_command_run_in_a_folder_without_a_server_creates_no_database(
        command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Run without -c where there is no pbem.toml, it says where it looked and what to do, and
    leaves the folder as it was: an empty database there would answer "0 sent" as if the server
    were new."""
    monkeypatch.chdir(tmp_path)
    assert main(command) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    assert f"no pbem.toml in {tmp_path} and no database at {tmp_path}/pbem-data/pbem.sqlite3" in err
    assert "pass -c with the server's pbem.toml, or run this in the server's folder" in err
    assert list(tmp_path.iterdir()) == []


def test_status_commands_say_which_configuration_and_database_they_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "srv" / "pbem.toml"
    config.parent.mkdir()
    config.write_text('[server]\ndata_dir = "data"\n')
    monkeypatch.chdir(tmp_path)
    assert main(["admin", "status", "-c", "srv/pbem.toml"]) == 2  # no server has run there yet
    err = capsys.readouterr().err
    assert f"there is no database {tmp_path}/srv/data/pbem.sqlite3 (as {config} says)" in err
    (tmp_path / "srv" / "data").mkdir()
    with open_store(tmp_path / "srv" / "data" / "pbem.sqlite3"):
        pass  # what `pbem serve` creates
    for command in (["admin", "status"], ["status"]):
        assert main([*command, "-c", "srv/pbem.toml"]) == 0
        first = capsys.readouterr().out.split("\n")[0]
        assert first == f"Configuration: {config}; database: {tmp_path}/srv/data/pbem.sqlite3"
    monkeypatch.chdir(config.parent)  # in the server's folder its pbem.toml is found
    assert main(["admin", "status"]) == 0
    assert capsys.readouterr().out.startswith(f"Configuration: {config}; database: ")
