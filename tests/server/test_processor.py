"""Issue 3's behaviours through the real reader, processor and SQLite store (no network)."""

from __future__ import annotations

import json
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest

from pbem.cli.mailbox import reply_to
from pbem.record import replay_record
from tests.server.harness import Server, text_of, to
from tests.server.players import Player, attached_record

ALICE, BOB, MALLORY = "alice@example.org", "bob@example.org", "mallory@example.net"


@pytest.fixture
def server(tmp_path: Path):
    srv = Server(tmp_path)
    yield srv
    srv.close()


def start_game(server: Server, options: str = "") -> tuple[EmailMessage, EmailMessage]:
    """Alice challenges Bob (alice plays black); returns (alice's 'your move', bob's last mail)."""
    command = " ".join(f"new alien-city {options} with {BOB} as black".split())
    out = server.submit(server.mail(ALICE, command))
    invitation = to(out, BOB)[0]
    assert "Invitation" in invitation["Subject"]
    assert "+" in invitation["Reply-To"]
    out = server.submit(reply_to(invitation, BOB, "accept"))
    alice_mail = to(out, ALICE)[0]
    if not options:  # edition 1.2 draws the first seat by dice
        assert "Your move (ply 0)" in alice_mail["Subject"]
    return alice_mail, to(out, BOB)[0]


def test_a_whole_game_by_mail(server: Server) -> None:
    players = {ALICE: Player(ALICE, 1), BOB: Player(BOB, 2)}
    out = server.submit(server.mail(ALICE, f"new alien-city with {BOB} as black"))
    created = to(out, ALICE)[0]
    assert created["Subject"].startswith("[pbem ac-1]")
    pending = [(rcpt, m) for rcpt, m in out if rcpt == BOB]
    finished: dict[str, EmailMessage] = {}
    thread_root = None
    for _ in range(400):
        if not pending:
            break
        rcpt, message = pending.pop(0)
        assert message["Auto-Submitted"] in ("auto-replied", "auto-generated")
        assert message["Subject"].startswith("[pbem ac-1] ")
        if thread_root is None:
            thread_root = created["Message-ID"]
        assert thread_root in str(message.get("References", "")) or message["Message-ID"] == thread_root
        if "Game over" in message["Subject"]:
            finished[rcpt] = message
            continue
        reply = players[rcpt].respond(message)
        if reply is not None:
            pending += server.submit(reply)
    assert set(finished) == {ALICE, BOB}
    row = server.game("ac-1")
    assert row.status == "over"
    state = replay_record(row.record)
    assert state.is_over
    for message in finished.values():
        text = text_of(message)
        assert "Final scores" in text or "wins" in text or "draw" in text
        record = attached_record(message)
        assert record is not None and "pile" not in json.dumps(record["setup"])
        assert replay_record(record).is_over
        assert len(record["moves"]) == len(row.record["moves"])
    # the breakdown names every claimed tower's points
    assert state.score().text.strip() in text_of(finished[ALICE])


def test_board_mail_contents(server: Server) -> None:
    alice_mail, _ = start_game(server)
    text = text_of(alice_mail)
    assert "Legal builds for black" in text
    assert "Scores so far" in text
    html = alice_mail.get_body(preferencelist=("html",)).get_content()
    assert "<table" in html
    record = attached_record(alice_mail)
    assert record["id"] == "ac-1" and record["moves"] == []
    for raw in server.raw_sent:
        assert max(len(line) for line in raw.split(b"\r\n")) <= 998, "SMTP line limit"
        assert b"\n" not in raw.replace(b"\r\n", b""), "bare LF on the wire"


def test_illegal_move_explains_and_changes_nothing(server: Server) -> None:
    alice_mail, _ = start_game(server)
    before = server.game("ac-1").record
    out = server.submit(reply_to(alice_mail, ALICE, "tower purple Z99"))
    reply = to(out, ALICE)[0]
    text = text_of(reply)
    assert "not applied" in text.lower() or "not understood" in text.lower()
    assert "Legal builds for black" in text
    assert to(out, BOB) == []
    assert server.game("ac-1").record == before


def test_unknown_command_gets_suggestions(server: Server) -> None:
    start_game(server)  # from a player; a stranger's junk is not answered (test_hostile_processing)
    out = server.submit(server.mail(ALICE, "gmaes"))
    text = text_of(to(out, ALICE)[0])
    assert "unknown command" in text and "games" in text


def test_help_and_games(server: Server) -> None:
    start_game(server)
    out = server.submit(server.mail(ALICE, "games\nhelp alien-city"))
    text = text_of(to(out, ALICE)[0])
    assert "ac-1" in text and "your move" in text
    assert "Rulings" in text


def test_forged_from_is_not_applied_and_only_the_seat_gets_one_notice(server: Server) -> None:
    alice_mail, _ = start_game(server)
    move = Player(ALICE).choose_move(alice_mail)
    forged = reply_to(alice_mail, MALLORY, move)
    out = server.submit(forged)
    assert to(out, MALLORY) == []
    notices = to(out, ALICE)
    assert len(notices) == 1 and "not accepted" in notices[0]["Subject"]
    assert server.game("ac-1").record["moves"] == []
    again = reply_to(alice_mail, MALLORY, move + " ")
    assert server.submit(again) == []  # no second notice within the hour
    server.clock.advance(hours=2)
    third = reply_to(alice_mail, MALLORY, move + "  ")
    assert len(to(server.submit(third), ALICE)) == 1


def test_wrong_token_from_the_right_address_is_not_applied(server: Server) -> None:
    alice_mail, _ = start_game(server)
    move = Player(ALICE).choose_move(alice_mail)
    out = server.submit(server.mail(ALICE, f"move ac-1 {move}\ntoken {'a' * 26}"))
    assert [m["Subject"] for m in to(out, ALICE)] == ["[pbem ac-1] A mail for your seat was not accepted"]
    assert server.game("ac-1").record["moves"] == []


def test_body_token_line_works_for_a_fresh_mail(server: Server) -> None:
    alice_mail, _ = start_game(server)
    token = alice_mail["Reply-To"].addresses[0].username.split("+", 1)[1]
    move = Player(ALICE).choose_move(alice_mail)
    out = server.submit(server.mail(ALICE, f"move ac-1 {move}\ntoken {token}"))
    assert "Move applied" in to(out, ALICE)[0]["Subject"]
    assert [m["move"] for m in server.game("ac-1").record["moves"]] == [move]


def test_out_of_date_board_is_refused_with_the_current_board(server: Server) -> None:
    alice_mail, _ = start_game(server)
    player = Player(ALICE, 5)
    first = player.choose_move(alice_mail)
    out = server.submit(reply_to(alice_mail, ALICE, first))
    assert "Move applied" in to(out, ALICE)[0]["Subject"]
    # a resent reply to the same (now old) board must not move again
    second = player.choose_move(alice_mail)
    out = server.submit(reply_to(alice_mail, ALICE, second))
    text = text_of(to(out, ALICE)[0])
    assert "answers the board of ply 0" in text and "ply 1" in text
    assert len(server.game("ac-1").record["moves"]) == 1


def test_the_same_message_twice_is_applied_once(server: Server) -> None:
    alice_mail, _ = start_game(server)
    reply = reply_to(alice_mail, ALICE, Player(ALICE).choose_move(alice_mail))
    first = server.submit(reply)
    second = server.submit(reply)
    assert first and second == []
    assert len(server.game("ac-1").record["moves"]) == 1
    # same Message-ID, different bytes (a relay added a header): still once
    reply["X-Relay"] = "again"
    assert server.submit(reply) == []


def test_html_only_mail(server: Server) -> None:
    alice_mail, _ = start_game(server)
    move = Player(ALICE).choose_move(alice_mail)
    reply = reply_to(alice_mail, ALICE, "")
    reply.set_content(f"<html><body><p>{move}</p><blockquote>old board<br>red tower: A1 A2"
                      "</blockquote></body></html>", subtype="html")
    out = server.submit(reply)
    assert "Move applied" in to(out, ALICE)[0]["Subject"], text_of(to(out, ALICE)[0])


def test_json_turn_file_as_attachment(server: Server) -> None:
    alice_mail, _ = start_game(server)
    move = Player(ALICE).choose_move(alice_mail)
    reply = reply_to(alice_mail, ALICE, "my move is attached")
    reply.add_attachment(json.dumps({"commands": [{"command": "move", "game": "ac-1", "move": move}]})
                         .encode(), maintype="application", subtype="json", filename="turn.json")
    out = server.submit(reply)
    assert "Move applied" in to(out, ALICE)[0]["Subject"]
    assert len(server.game("ac-1").record["moves"]) == 1


def test_malformed_json_turn_file(server: Server) -> None:
    alice_mail, _ = start_game(server)
    out = server.submit(reply_to(alice_mail, ALICE, '{"commands": [{"command": "move", "move": }]}'))
    text = text_of(to(out, ALICE)[0])
    assert "line 1" in text and "column" in text
    out = server.submit(reply_to(alice_mail, ALICE, '{"commands": [{"command": "move", "game": "ac-1"}]}'))
    text = text_of(to(out, ALICE)[0])
    assert "$.commands[0]" in text and "'move' is a required property" in text
    assert server.game("ac-1").record["moves"] == []


def test_bounce_and_vacation_get_no_answer(server: Server) -> None:
    start_game(server)
    vacation = server.mail(BOB, "I am away until Monday.", "Out of Office: your move")
    vacation["Auto-Submitted"] = "auto-replied"
    assert server.submit(vacation) == []
    bounce = EmailMessage()
    bounce["From"] = "MAILER-DAEMON@example.org"
    bounce["To"] = "pbem@localhost"
    bounce["Subject"] = "Undelivered Mail Returned to Sender"
    bounce.set_content("This is the mail system. I'm sorry to have to inform you that your message "
                       f"could not be delivered.\n<{BOB}>: mailbox full")
    out = server.submit(bounce)  # never answered; Bob's opponent learns why he is silent
    assert [rcpt for rcpt, _ in out] == [ALICE]
    assert "bounces" in text_of(out[0][1])
    statuses = [m.status for m in server.store.iter_inbound()]
    assert statuses.count("ignored") == 2


def test_several_commands_run_in_order_and_are_all_reported(server: Server) -> None:
    out = server.submit(server.mail(ALICE, f"help\nnew alien-city with {BOB} as white\nfoo\ngames"))
    text = text_of(to(out, ALICE)[0])
    order = [text.index("Your command: help"), text.index("Your command: new alien-city"),
             text.index("unknown command 'foo'"), text.index("Your command: games")]
    assert order == sorted(order)
    assert "ac-1" in text[order[3]:]
    assert len(to(out, BOB)) == 1


def test_decline_and_resign(server: Server) -> None:
    out = server.submit(server.mail(ALICE, f"new alien-city with {BOB}"))
    invitation = to(out, BOB)[0]
    out = server.submit(reply_to(invitation, BOB, "decline"))
    assert "declined" in to(out, ALICE)[0]["Subject"].lower()
    assert server.game("ac-1").status == "declined"
    _alice_mail, bob_mail = start_game(server)
    out = server.submit(reply_to(bob_mail, BOB, "resign"))
    assert "Game over" in to(out, ALICE)[0]["Subject"]
    row = server.game("ac-2")
    assert row.status == "over" and row.record["result"]["winners"] == ["black"]


def test_move_when_it_is_not_your_turn(server: Server) -> None:
    _alice_mail, bob_mail = start_game(server)
    out = server.submit(reply_to(bob_mail, BOB, "tower red A1"))
    assert "black's turn" in text_of(to(out, BOB)[0])


def test_options_on_new(server: Server) -> None:
    start_game(server, "edition 1.2 symmetric location-bonus handicap white:3:1")
    options = server.game("ac-1").record["options"]
    assert options["edition"] == "1.2" and options["symmetric"] and options["location_bonus"]
    assert options["handicap"]["white"] == {"reach": 3, "extra_claims": 1}
    out = server.submit(server.mail(ALICE, f"new alien-city edition 3.0 with {BOB}"))
    assert "edition" in text_of(to(out, ALICE)[0])


def test_own_mail_is_ignored(server: Server) -> None:
    alice_mail, _ = start_game(server)
    assert server.submit(alice_mail) == []


def test_clock_is_used_for_record_times(server: Server) -> None:
    alice_mail, _ = start_game(server)
    server.clock.advance(timedelta(minutes=5).total_seconds())
    server.submit(reply_to(alice_mail, ALICE, Player(ALICE).choose_move(alice_mail)))
    assert server.game("ac-1").record["moves"][0]["at"] == "2026-11-20T10:05:00Z"


def test_a_reply_that_reattaches_the_game_record_is_read_as_text(server: Server) -> None:
    alice_mail, _ = start_game(server)
    move = Player(ALICE).choose_move(alice_mail)
    reply = reply_to(alice_mail, ALICE, move)
    record = attached_record(alice_mail)
    reply.add_attachment(json.dumps(record).encode(), maintype="application", subtype="json",
                         filename="ac-1.json")
    out = server.submit(reply)
    assert "Move applied" in to(out, ALICE)[0]["Subject"]
