"""The classic PBEM commands end to end, through the embedded SMTP listener and a real SMTP relay
(aiosmtpd): a queue used on the opponent's move, a preview, a draw agreed and rated, an open
challenge joined by a third address, a change of address confirmed from the new address with the old
token refused; ``pbem admin`` mail leaving at once; and a SIGKILL of ``pbem serve`` between the
opponent's move and the queued reply, which loses and doubles nothing."""

from __future__ import annotations

import re
import smtplib
import time
from collections.abc import Callable
from email.message import EmailMessage
from pathlib import Path

from engine import get_game
from pbem.archive.names import pseudonym
from pbem.cli import main
from pbem.cli.mailbox import new_mail, reply_to
from pbem.record import replay_record
from pbem.store import open_store
from pbem.store.secret import server_secret
from tests.classic.test_queue_preview import answers
from tests.e2e.conftest import listening, raw, relay, serve, serve_toml, stop
from tests.server.mailcheck import MailCheck
from tests.server.players import Player, follow, headline, mailto_links, text_of
from tests.services.requirements import free_port

ANN, BO, CY, SERVER = "ann@example.org", "bo@example.org", "cy@example.org", "pbem@localhost"
CY_NEW = "cy@new.example.net"


class Mailer:
    """People with mail clients: each mail goes to the server's SMTP listener, and the test waits
    for the mails it causes at the relay, reading each as its recipient would."""

    def __init__(self, port: int, sink) -> None:
        self.port, self.sink = port, sink
        self.check = MailCheck()
        self.seen = 0

    def send(self, message: EmailMessage, expect: int) -> dict[str, list[EmailMessage]]:
        sender = message["From"].addresses[0].addr_spec
        self.check.sent(sender, message)
        with smtplib.SMTP("127.0.0.1", self.port, timeout=30) as smtp:
            smtp.sendmail(sender, [SERVER], raw(message))
        received = self.sink.wait_for(self.seen + expect, timeout=60)[self.seen:]
        self.seen += len(received)
        got: dict[str, list[EmailMessage]] = {}
        for item in received:
            mail, rcpt = item.message, item.rcpt_tos[0]
            if not headline(mail).startswith("Not "):  # a refusal: not a board mail (see tests.classic)
                self.check.read(rcpt, mail)
            got.setdefault(rcpt, []).append(mail)
        return got


def position(store, game_id: str):
    row = store.get_game(game_id)
    return replay_record(row.record, get_game(row.game))


def test_classic_commands_by_mail(smtp_sink, daemon_for) -> None:
    port = free_port()
    _config, daemon = daemon_for({"smtp": {"enabled": True, "host": "127.0.0.1", "port": port},
                                  "relay": relay(smtp_sink)})
    people = Mailer(port, smtp_sink)
    store = daemon.store
    got = people.send(new_mail(ANN, SERVER, f"new alien-city with {BO} as black"), 2)
    got = people.send(reply_to(got[BO][0], BO, "accept"), 2)
    ann_turn, bo_started = got[ANN][0], got[BO][0]
    # a two-line queue, used on Ann's move
    (first, reply_one), (second, reply_two) = answers(position(store, "ac-1"))
    got = people.send(reply_to(bo_started, BO, f"queue\nif {first} then {reply_one}\n"
                                               f"if {second} then {reply_two}"), 1)
    assert headline(got[BO][0]).startswith("Queued for ac-1: 2 lines")
    got = people.send(reply_to(ann_turn, ANN, second), 2)
    assert f"{BO} replied {reply_two} (queued). Your move (move 3)." in headline(got[ANN][0])
    assert f"you replied {reply_two} (queued)" in headline(got[BO][0])
    ann_turn = got[ANN][0]
    # a preview changes nothing
    before = store.get_game("ac-1").record
    move = Player(ANN, 5).choose_move(ann_turn)
    got = people.send(reply_to(ann_turn, ANN, f"preview {move}"), 1)
    assert headline(got[ANN][0]) == f"Preview of your {move} in ac-1 (nothing was played)"
    assert store.get_game("ac-1").record == before
    # a draw proposed, accepted and rated
    got = people.send(reply_to(got[BO][0] if BO in got else bo_started, BO, "propose ac-1 draw"), 2)
    offer = got[ANN][0]
    accept = next(link for link in mailto_links(offer) if link["text"] == "Accept")
    got = people.send(follow(accept, ANN), 2)
    assert all(headline(mail[0]).startswith("Game over: drawn by agreement") for mail in got.values())
    got = people.send(new_mail(CY, SERVER, "standings alien-city"), 1)
    table = text_of(got[CY][0])
    key = server_secret(store)  # anyone may ask: players by the archive site's pseudonyms
    assert re.search(rf"{re.escape(pseudonym(ANN, key))}\s+1\s+0\s+0\s+1\s+1500", table)
    assert re.search(rf"{re.escape(pseudonym(BO, key))}\s+1\s+0\s+0\s+1\s+1500", table)
    assert ANN not in table and BO not in table
    # an open challenge, joined by a third address
    got = people.send(new_mail(ANN, SERVER, "new alien-city open as black"), 1)
    assert headline(got[ANN][0]) == "Open challenge ac-2 posted: Alien City, waiting for 1 player"
    got = people.send(new_mail(CY, SERVER, "challenges"), 1)
    join = next(link for link in mailto_links(got[CY][0]) if link["text"] == "Join ac-2")
    got = people.send(follow(join, CY), 2)
    ann_turn, cy_started = got[ANN][0], got[CY][0]
    assert headline(ann_turn).startswith("Your move (move 1). Game ac-2 has started")
    # Cy moves to a new address: the code goes there, the answer from there moves everything
    got = people.send(reply_to(cy_started, CY, f"set address {CY_NEW}"), 2)
    assert headline(got[CY][0]) == f"Confirmation sent to {CY_NEW}"
    confirm = mailto_links(got[CY_NEW][0])[0]
    got = people.send(follow(confirm, CY_NEW), 3)
    assert headline(got[CY_NEW][0]) == f"Your address is now {CY_NEW}: 1 game moved here"
    assert len(got[CY]) == 1
    got = people.send(reply_to(ann_turn, ANN, Player(ANN, 6).choose_move(ann_turn)), 1)
    cy_turn = got[CY_NEW][0]
    assert headline(cy_turn).startswith(f"Your move (move 2). {ANN} played ")
    # the old token is refused with a notice, and the game goes on from the new address
    move = Player(CY, 7).choose_move(cy_turn)
    got = people.send(reply_to(cy_started, CY, move), 1)
    assert headline(got[CY][0]) == "Not done: an old token of ac-2"
    got = people.send(reply_to(cy_turn, CY_NEW, move), 1)
    assert headline(got[ANN][0]).startswith("Your move (move 3). ")
    row = store.get_game("ac-2")
    assert {s.seat: s.email for s in row.seats} == {"black": ANN, "white": CY_NEW}
    assert [e["seat"] for e in row.record["moves"] if "move" in e] == ["black", "white"]


def test_mail_queued_by_pbem_admin_leaves_at_once(tmp_path: Path, smtp_sink, daemon_for) -> None:
    port = free_port()
    config, daemon = daemon_for({"smtp": {"enabled": True, "host": "127.0.0.1", "port": port},
                                 "relay": relay(smtp_sink)})
    people = Mailer(port, smtp_sink)
    got = people.send(new_mail(ANN, SERVER, f"new alien-city with {BO} as black"), 2)
    people.send(reply_to(got[BO][0], BO, "accept"), 2)
    toml = tmp_path / "pbem.toml"
    toml.write_text(f'[server]\ndata_dir = "{config.data_dir}"\n[smtp]\nenabled = false\n')
    assert daemon.sender.idle_poll_seconds >= 30  # without a wake-up it would wait this long
    started = time.monotonic()
    assert main(["admin", "resend", "ac-1", "--by", "referee", "-c", str(toml)]) == 0
    received = smtp_sink.wait_for(people.seen + 2, timeout=20)
    assert time.monotonic() - started < 10
    assert {item.rcpt_tos[0] for item in received[people.seen:]} == {ANN, BO}


# --- a crash between the opponent's move and the queued reply ----------------------------------------

def test_kill_9_between_the_move_and_the_queued_reply(tmp_path: Path, smtp_sink) -> None:
    port = free_port()
    config_path = serve_toml(tmp_path, port, smtp_sink)
    people = Mailer(port, smtp_sink)
    database = tmp_path / "data" / "pbem.sqlite3"

    def in_store(read: Callable):
        store = open_store(database)
        try:
            return read(store)
        finally:
            store.close()

    server = serve(config_path, None)
    try:
        listening(port, server)
        got = people.send(new_mail(ANN, SERVER, f"new alien-city with {BO} as black"), 2)
        got = people.send(reply_to(got[BO][0], BO, "accept"), 2)
        ann_turn = got[ANN][0]
        (first, reply_one), _ = in_store(lambda s: answers(position(s, "ac-1")))
        people.send(reply_to(got[BO][0], BO, f"queue\nif {first} then {reply_one}"), 1)
    finally:
        stop(server)
    crashing = serve(config_path, "queued-reply")
    listening(port, crashing)
    message = reply_to(ann_turn, ANN, first)
    people.check.sent(ANN, message)
    unanswered = False
    try:
        with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
            smtp.sendmail(ANN, [SERVER], raw(message))  # 250: stored durably before the crash
    except smtplib.SMTPServerDisconnected:
        # The mail is stored before the 250 is written, and the processor may crash the server
        # in between: the sending MTA then never saw the 250 and sends the mail again later.
        unanswered = True
    assert crashing.wait(60) == -9, crashing.stderr.read().decode()[-2000:]
    row = in_store(lambda s: s.get_game("ac-1"))
    assert [e for e in row.record["moves"] if "move" in e] == [] and "queue" in row.record
    assert len(smtp_sink.messages) == people.seen  # nothing left before the crash
    server = serve(config_path, None)
    try:
        if unanswered:  # the MTA's retry: the same mail again, kept once
            listening(port, server)
            with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
                smtp.sendmail(ANN, [SERVER], raw(message))
        received = smtp_sink.wait_for(people.seen + 2, timeout=60)
        time.sleep(1.0)  # anything sent twice would arrive now
        received = smtp_sink.messages[people.seen:]
        assert sorted(item.rcpt_tos[0] for item in received) == [ANN, BO]
        by = {item.rcpt_tos[0]: item.message for item in received}
        assert f"{BO} replied {reply_one} (queued). Your move (move 3)." in headline(by[ANN])
        assert f"you replied {reply_one} (queued)" in headline(by[BO])
    finally:
        stop(server)
    row = in_store(lambda s: s.get_game("ac-1"))
    moves = [(e["seat"], e["move"], e.get("queued", False)) for e in row.record["moves"] if "move" in e]
    assert moves == [("black", first, False), ("white", reply_one, True)]
    assert "queue" not in row.record
    statuses = in_store(lambda s: [m.status for m in s.iter_inbound()])
    assert statuses == ["done"] * 4
