"""A complete 3-player game of Space Truckin' by mail through Dovecot (IMAP IDLE), as in the Alien City
end-to-end test: every mail is read as its recipient would (``MailCheck``), waiting players are not
mailed by default, and no player-facing mail ever carries the draw pile."""

from __future__ import annotations

import json
import time

from pbem.cli.mailbox import new_mail
from pbem.record import replay_record
from tests.e2e.conftest import raw, relay
from tests.e2e.test_mail_game import SERVER
from tests.server.mailcheck import MailCheck
from tests.server.players import Player, attached_record, headline

PLAYERS = ["ann@example.org", "bo@example.org", "cy@example.org"]


def test_three_player_space_truckin_over_imap(dovecot, imap_user, smtp_sink, daemon_for) -> None:
    user, password = imap_user
    _config, daemon = daemon_for({
        "imap": {"host": dovecot.host, "port": dovecot.port, "security": "none", "username": user,
                 "password": password, "idle": True, "poll_seconds": 30},
        "smtp": {"enabled": False}, "relay": relay(smtp_sink)})
    players = {address: Player(address, n) for n, address in enumerate(PLAYERS)}
    check = MailCheck()
    challenge = new_mail(PLAYERS[0], SERVER, f"new space-truckin with {PLAYERS[1]} {PLAYERS[2]}")
    check.sent(PLAYERS[0], challenge)
    dovecot.deliver(user, raw(challenge))
    seen, finished = 0, set()
    deadline = time.monotonic() + 400
    while len(finished) < 3:
        assert time.monotonic() < deadline
        received = smtp_sink.wait_for(seen + 1, timeout=60)
        for item in received[seen:]:
            message, rcpt = item.message, item.rcpt_tos[0]
            record = attached_record(message)
            if record is not None:
                assert "pile" not in record["setup"], "hidden draw pile sent to a player"
            assert b'"pile"' not in item.data
            check.read(rcpt, message, item.data)
            if headline(message).startswith("Game over"):
                finished.add(rcpt)
                continue
            reply = players[rcpt].respond(message)
            if reply is not None:
                check.sent(rcpt, reply)
                dovecot.deliver(user, raw(reply))
        seen = len(received)
    row = daemon.store.get_game("st-1")
    assert row.status == "over" and len(row.seats) == 3
    assert "pile" in row.record["setup"]  # the server keeps it
    state = replay_record(row.record)
    assert state.is_over
    # players' copies replay to the same final scores without the pile
    final = [m for m in smtp_sink.messages if headline(m.message).startswith("Game over")]
    for item in final:
        copy = attached_record(item.message)
        assert replay_record(copy).score().totals == state.score().totals
    # by default a player waiting for the others hears nothing: every mail during the game was a
    # "your move" (or the start), so each player got about one mail per own turn
    turns = {p: 0 for p in PLAYERS}
    for item in smtp_sink.messages:
        if "Your move" in headline(item.message):
            turns[item.rcpt_tos[0]] += 1
    moves = {p: 0 for p in PLAYERS}
    seat_of = {s.seat: s.email for s in row.seats}
    for entry in row.record["moves"]:
        if "move" in entry:
            moves[seat_of[entry["seat"]]] += 1
    assert turns == moves, json.dumps([turns, moves])
    others = {p: [headline(i.message) for i in smtp_sink.messages
                  if i.rcpt_tos[0] == p and "Your move" not in headline(i.message)] for p in PLAYERS}
    # besides the turns: the invitation (or "created"), "accepted", the start and the end
    assert all(check.count[p] == moves[p] + len(others[p]) and len(others[p]) <= 4 for p in PLAYERS), \
        json.dumps([check.count, others])
