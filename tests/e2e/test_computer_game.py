"""A person plays the computer by mail through the running server: the embedded SMTP listener in,
a real SMTP relay out, the computer thinking in a worker process of the daemon and its moves coming
in through the durable intake. And the server killed while the computer thinks (or right after its
move was stored) neither loses nor doubles the move."""

from __future__ import annotations

import smtplib
import time
from email.message import EmailMessage
from pathlib import Path

import pytest

from pbem.cli.mailbox import new_mail
from pbem.processing import computer
from pbem.record import replay_record
from pbem.store import open_store
from tests.e2e.conftest import raw, relay, serve, stop
from tests.server.mailcheck import MailCheck
from tests.server.players import Player, attached_record, headline, text_of
from tests.services.requirements import free_port, wait_for_port

ANN, SERVER = "ann@example.org", "pbem@localhost"


def send(port: int, message: EmailMessage) -> None:
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
        smtp.sendmail(message["From"].addresses[0].addr_spec, [SERVER], raw(message))


@pytest.mark.parametrize("level", [1, 3])
def test_whole_game_against_the_computer_by_mail(level: int, smtp_sink, daemon_for) -> None:
    port = free_port()
    _config, daemon = daemon_for({"smtp": {"enabled": True, "host": "127.0.0.1", "port": port},
                                  "relay": relay(smtp_sink), "computer": {"level3_seconds": 0.02}})
    check, ann = MailCheck(), Player(ANN, level)
    challenge = new_mail(ANN, SERVER, f"new alien-city with computer:{level}")
    check.sent(ANN, challenge)
    send(port, challenge)
    seen, deadline, last = 0, time.monotonic() + 240, None
    while last is None or not headline(last).startswith("Game over"):
        assert time.monotonic() < deadline, "game not over in time"
        received = smtp_sink.wait_for(seen + 1, timeout=60)
        for item in received[seen:]:
            assert item.rcpt_tos == [ANN], "only the person gets mail"
            check.read(ANN, item.message, item.data)
            last = item.message
            reply = ann.respond(item.message)
            if reply is not None:
                check.sent(ANN, reply)
                send(port, reply)
        seen = len(received)
    name = f"computer level {level}"
    assert name in headline(last) and "Final scores" in text_of(last)
    record = attached_record(last)
    assert replay_record(record).is_over
    entry = next(p for p in record["players"].values() if p.get("engine") == "pbem-ai")
    assert entry["level"] == level and entry["name"] == name
    turns = [i for i in smtp_sink.messages if headline(i.message).startswith("Your move")]
    assert all(f"{name} played" in headline(i.message) for i in turns[1:])
    inbound = list(daemon.store.iter_inbound())
    from_computer = [m for m in inbound if m.source == computer.SOURCE]
    moves = [e for e in daemon.store.get_game("ac-1").record["moves"] if "move" in e]
    assert len(from_computer) == sum(1 for e in moves if e["seat"] == "white")
    assert all(m.status == "done" for m in inbound)
    assert daemon.thinker is not None and daemon.thinker.moves_stored == len(from_computer)


@pytest.mark.slow
@pytest.mark.parametrize("failpoint", ["computer-move", "computer-stored"])
def test_a_crash_while_the_computer_thinks_neither_loses_nor_doubles_its_move(
        failpoint: str, tmp_path: Path, smtp_sink) -> None:
    """The computer (black) moves first. The server is killed once its move is found (not stored
    yet), or once it is stored (not processed yet); after a restart the person gets exactly one
    "Your move", and the game has exactly one move."""
    port = free_port()
    config_path = tmp_path / "pbem.toml"
    config_path.write_text(f'[server]\ndata_dir = "{tmp_path / "data"}"\n[smtp]\nport = {port}\n[relay]\n'
                           f'host = "{smtp_sink.host}"\nport = {smtp_sink.port}\nsecurity = "none"\n')
    crashing = serve(config_path, failpoint)
    try:
        assert wait_for_port("127.0.0.1", port, timeout=30)
        send(port, new_mail(ANN, SERVER, "new alien-city with computer:2 as white"))
        assert crashing.wait(60) == -9, crashing.stderr.read().decode()[-2000:]
    finally:
        stop(crashing)
    started = smtp_sink.wait_for(1, timeout=30)
    assert "black (computer level 2) moves first" in headline(started[0].message)
    store = open_store(tmp_path / "data" / "pbem.sqlite3")
    try:
        assert store.get_game("ac-1").record["moves"] == []
        stored = [m for m in store.iter_inbound() if m.source == computer.SOURCE]
        assert len(stored) == (1 if failpoint == "computer-stored" else 0)
    finally:
        store.close()
    server = serve(config_path, None)
    try:
        received = smtp_sink.wait_for(2, timeout=60)
        time.sleep(1.5)  # a doubled move would have answered by now
        received = smtp_sink.messages
        assert [headline(i.message).split(".")[0] for i in received] == [
            headline(started[0].message).split(".")[0], "Your move (move 2)"]
    finally:
        stop(server)
    store = open_store(tmp_path / "data" / "pbem.sqlite3")
    try:
        row = store.get_game("ac-1")
        assert [e["seat"] for e in row.record["moves"]] == ["black"]
        stored = [m for m in store.iter_inbound() if m.source == computer.SOURCE]
        assert len(stored) == 1 and stored[0].status == "done"
    finally:
        store.close()


def test_other_mail_is_answered_while_the_computer_thinks(smtp_sink, daemon_for) -> None:
    """Level 4 thinks for 3 s; a mail from someone else meanwhile is answered at once."""
    port = free_port()
    daemon_for({"smtp": {"enabled": True, "host": "127.0.0.1", "port": port},
                "relay": relay(smtp_sink), "computer": {"level4_seconds": 3.0}})
    send(port, new_mail(ANN, SERVER, "new alien-city with computer:4 as white"))
    smtp_sink.wait_for(1, timeout=30)  # the start: the computer (black) is to move and thinks
    time.sleep(0.5)
    asked = time.monotonic()
    send(port, new_mail("bo@example.org", SERVER, "help"))
    received = smtp_sink.wait_for(2, timeout=30)
    answered = time.monotonic() - asked
    assert received[1].rcpt_tos == ["bo@example.org"] and answered < 1.5, answered
    received = smtp_sink.wait_for(3, timeout=30)
    assert headline(received[2].message).startswith("Your move (move 2). computer level 4 played")
    assert time.monotonic() - asked > 1.5  # it did think for its budget
