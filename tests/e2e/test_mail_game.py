"""Two players with only a mail client play whole games of Alien City through each door of the
server: a real Dovecot mailbox watched with IMAP IDLE, the embedded SMTP listener, and ``pbem
deliver`` from an MTA pipe. Replies leave through a real SMTP relay (aiosmtpd)."""

from __future__ import annotations

import smtplib
import subprocess
import sys
import time
from collections.abc import Callable
from email.message import EmailMessage
from pathlib import Path

from pbem.cli.mailbox import new_mail, reply_to
from pbem.record import replay_record
from pbem.store import open_store
from tests.e2e.conftest import listening, raw, relay, serve, serve_toml, stop
from tests.server.mailcheck import MailCheck
from tests.server.players import Player, attached_record, headline, text_of
from tests.services.requirements import free_port, wait_for_port

ALICE, BOB, SERVER = "alice@example.org", "bob@example.org", "pbem@localhost"


def drive_game(submit: Callable[[EmailMessage], None], sink, timeout: float = 300,
               check: MailCheck | None = None, *, alice: str = ALICE, bob: str = BOB,
               server: str = SERVER) -> dict[str, EmailMessage]:
    """Alice challenges Bob; both answer every mail they get until both have the result. Every mail
    is read as its recipient would (``MailCheck``). ``sink``: what the players receive, in arrival
    order (``wait_for(count, timeout)``, as the SMTP sink and the Postfix harness's Maildirs have)."""
    check = check or MailCheck()
    players = {alice: Player(alice, 1), bob: Player(bob, 2)}
    challenge = new_mail(alice, server, f"new alien-city with {bob} as black")
    check.sent(alice, challenge)
    submit(challenge)
    seen, finished = 0, {}
    deadline = time.monotonic() + timeout
    while len(finished) < 2:
        assert time.monotonic() < deadline, f"game not over after {timeout}s"
        received = sink.wait_for(seen + 1, timeout=60)
        for item in received[seen:]:
            message, rcpt = item.message, item.rcpt_tos[0]
            assert message["Auto-Submitted"] in ("auto-replied", "auto-generated")
            check.read(rcpt, message, item.data)
            if headline(message).startswith("Game over"):
                finished[rcpt] = message
                continue
            if headline(message).startswith("Game ac-1 created"):
                # alice plays from her phone: one-tap moves; bob keeps the defaults
                reply = reply_to(message, alice, "set mail tap")
                check.sent(alice, reply)
                submit(reply)
                continue
            reply = players[rcpt].respond(message)
            if reply is not None:
                check.sent(rcpt, reply)
                submit(reply)
        seen = len(received)
    # bob, on the defaults: about twenty mails, not forty, and no more than 300 KB in all
    assert check.count[bob] <= 25 and check.bytes[bob] <= 300_000, (dict(check.count), dict(check.bytes))
    assert check.count[alice] <= 26  # her "set" was answered once
    return finished


def check_result(finished: dict[str, EmailMessage], store) -> None:
    row = store.get_game("ac-1")
    assert row.status == "over"
    state = replay_record(row.record)
    assert state.is_over
    for message in finished.values():
        record = attached_record(message)
        assert replay_record(record).is_over
        assert "Final scores" in text_of(message)


def test_whole_game_over_imap_idle(dovecot, imap_user, smtp_sink, daemon_for) -> None:
    user, password = imap_user
    _config, daemon = daemon_for({
        "imap": {"host": dovecot.host, "port": dovecot.port, "security": "none", "username": user,
                 "password": password, "idle": True, "poll_seconds": 30},
        "smtp": {"enabled": False}, "relay": relay(smtp_sink)})
    finished = drive_game(lambda m: dovecot.deliver(user, raw(m)), smtp_sink)
    check_result(finished, daemon.store)
    deadline = time.monotonic() + 10
    while dovecot.list_messages(user, "INBOX") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert dovecot.list_messages(user, "INBOX") == [], "processed mail left in INBOX"
    assert len(dovecot.list_messages(user, "processed")) >= 40


def test_whole_game_through_the_embedded_smtp_listener(smtp_sink, daemon_for) -> None:
    port = free_port()
    _config, daemon = daemon_for({"smtp": {"enabled": True, "host": "127.0.0.1", "port": port},
                                  "relay": relay(smtp_sink)})

    def submit(message: EmailMessage) -> None:
        with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
            smtp.sendmail(message["From"].addresses[0].addr_spec,
                          [message["To"].addresses[0].addr_spec], raw(message))

    check_result(drive_game(submit, smtp_sink), daemon.store)


def test_whole_game_through_pbem_deliver(tmp_path: Path, smtp_sink) -> None:
    """A real ``pbem serve`` whose processor polls only every 600 s: every move piped in by ``pbem
    deliver`` is answered at once (each reply is awaited for 60 s at most), because deliver wakes
    the server through its wake socket."""
    port = free_port()
    toml = tmp_path / "pbem.toml"
    toml.write_text(f'[server]\ndata_dir = "{tmp_path / "data"}"\npoll_seconds = 600\n'
                    f'[smtp]\nport = {port}\n[relay]\nhost = "{smtp_sink.host}"\n'
                    f'port = {smtp_sink.port}\nsecurity = "none"\n')
    log = tmp_path / "serve.log"
    server = serve(toml, None, log)
    try:
        assert wait_for_port("127.0.0.1", port, timeout=30), log.read_text()

        def submit(message: EmailMessage) -> None:
            result = subprocess.run(
                [sys.executable, "-m", "pbem.cli", "deliver", "-c", str(toml),
                 "-f", message["From"].addresses[0].addr_spec],
                input=raw(message), capture_output=True, timeout=60)
            assert result.returncode == 0, result.stderr.decode()

        finished = drive_game(submit, smtp_sink)
    finally:
        stop(server)
    store = open_store(tmp_path / "data" / "pbem.sqlite3")
    try:
        check_result(finished, store)
    finally:
        store.close()


# --- crash safety ------------------------------------------------------------------------------------

def test_kill_9_after_commit_loses_nothing_and_repeats_nothing(tmp_path: Path, dovecot, imap_user,
                                                               smtp_sink) -> None:
    """SIGKILL right after a message's transaction committed, before the IMAP move and before the
    replies went out; after a restart every move is applied once and every reply is sent."""
    user, password = imap_user
    config_path = tmp_path / "pbem.toml"
    config_path.write_text(f"""
[server]
data_dir = "{tmp_path / 'data'}"
[smtp]
enabled = false
[imap]
host = "{dovecot.host}"
port = {dovecot.port}
security = "none"
username = "{user}"
password = "{password}"
poll_seconds = 1
[relay]
host = "{smtp_sink.host}"
port = {smtp_sink.port}
security = "none"
""")
    players = {ALICE: Player(ALICE, 1), BOB: Player(BOB, 2)}
    first = new_mail(ALICE, SERVER, f"new alien-city with {BOB} as black")
    dovecot.deliver(user, raw(first))
    # new: alice's confirmation, bob's invitation; accept: bob's answer, alice's "your move";
    # black's move: bob's "your move"; white's move: alice's "your move"
    per_round = [2, 2, 1, 1]
    expected_mails = 0
    for mails in per_round:  # each round's message crashes the server once, right after commit
        expected_mails += mails
        crashing = serve(config_path, "after-commit")
        assert crashing.wait(60) == -9, crashing.stderr.read().decode()[-2000:]
        assert len(dovecot.list_messages(user, "INBOX")) == 1, "the message left INBOX before the crash"
        assert len(smtp_sink.messages) == expected_mails - mails, "a reply was sent before the crash"
        server = serve(config_path, None)
        try:
            received = smtp_sink.wait_for(expected_mails, timeout=60)
            deadline = time.monotonic() + 20
            while dovecot.list_messages(user, "INBOX") and time.monotonic() < deadline:
                time.sleep(0.1)
            assert dovecot.list_messages(user, "INBOX") == []
            time.sleep(1.0)  # anything sent twice would arrive now
            received = smtp_sink.messages
            assert len(received) == expected_mails, [m.message["Subject"] for m in received]
            ids = [m.message["Message-ID"] for m in received]
            assert len(set(ids)) == len(ids)
        finally:
            stop(server)
        # the next mail: whoever has a mail to answer answers the newest one
        reply = None
        for item in reversed(received[-mails:]):
            reply = players[item.rcpt_tos[0]].respond(item.message)
            if reply is not None:
                break
        assert reply is not None
        dovecot.deliver(user, raw(reply))
    store = open_store(tmp_path / "data" / "pbem.sqlite3")
    try:
        row = store.get_game("ac-1")
        assert row is not None and row.status in ("invited", "active")
        moves = [e for e in row.record["moves"] if "move" in e]
        assert len(moves) == 2  # the mail answering the 4th round is still waiting in INBOX
        assert sum(1 for m in store.iter_inbound() if m.status == "done") == 4
    finally:
        store.close()


def test_kill_9_during_an_optimistic_commit_applies_the_move_once(tmp_path: Path, smtp_sink) -> None:
    """With several processors SQLite processes a message optimistically, outside the write lock,
    and commits it under the lock (pbem.store.optimistic). SIGKILL after its statements ran again
    under the lock, before COMMIT: nothing of it is kept; after a restart the message is processed
    once, every reply sent once."""
    port = free_port()
    config_path = serve_toml(tmp_path, port, smtp_sink, "processors = 2")

    def submit(message: EmailMessage) -> None:
        with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
            smtp.sendmail(message["From"].addresses[0].addr_spec,
                          [message["To"].addresses[0].addr_spec], raw(message))

    crashing = serve(config_path, "optimistic-commit")
    try:
        listening(port, crashing)
        # a new game is made in an ordinary transaction (its id counter cannot be held back)
        submit(new_mail(ALICE, SERVER, f"new alien-city with {BOB} as black"))
        invitation = next(m for m in smtp_sink.wait_for(2, timeout=60) if m.rcpt_tos == [BOB])
        submit(Player(BOB, 2).respond(invitation.message))  # "accept": 250, then the crash
        assert crashing.wait(60) == -9, crashing.stderr.read().decode()[-2000:]
    finally:
        stop(crashing)
    time.sleep(0.5)
    assert len(smtp_sink.messages) == 2
    store = open_store(tmp_path / "data" / "pbem.sqlite3")
    try:
        assert store.get_game("ac-1").status == "invited"
        assert store.inbound_counts().get("pending") == 1
        assert store.outbound_counts() == {"pending": 0, "sent": 2, "given_up": 0}
    finally:
        store.close()
    server = serve(config_path, None)
    try:
        smtp_sink.wait_for(4, timeout=60)
        time.sleep(1.0)  # anything sent twice would arrive now
        received = smtp_sink.messages
        assert len(received) == 4, [m.message["Subject"] for m in received]
        assert len({m.message["Message-ID"] for m in received}) == 4
        to_alice = [m.message for m in received[2:] if m.rcpt_tos == [ALICE]]
        assert [headline(m).split(" (")[0] for m in to_alice] == ["Your move"]
    finally:
        stop(server)
    store = open_store(tmp_path / "data" / "pbem.sqlite3")
    try:
        assert store.get_game("ac-1").status == "active"
        assert store.inbound_counts()["pending"] == 0
        assert store.outbound_counts() == {"pending": 0, "sent": 4, "given_up": 0}
    finally:
        store.close()
