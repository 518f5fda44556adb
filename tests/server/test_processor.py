"""Issue 3's behaviours through the real reader, processor and SQLite store (no network)."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest

from pbem.cli.mailbox import reply_to
from pbem.record import replay_record
from tests.server.harness import Server, headline, html_of, text_of, to
from tests.server.players import Player, attached_record, follow, mailto_links, move_links, with_taps

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
    assert headline(invitation).endswith("invites you to Alien City")
    assert "+" in invitation["Reply-To"]
    out = server.submit(reply_to(invitation, BOB, "accept"))
    alice_mail = to(out, ALICE)[0]
    if not options:  # edition 1.2 draws the first seat by dice
        assert re.fullmatch(r"Your move \(move 1\)\. Game ac-\d+ has started\.", headline(alice_mail))
    return alice_mail, to(out, BOB)[0]


def token_of(mail: EmailMessage) -> str:
    return mail["Reply-To"].addresses[0].username.split("+", 1)[1].split("-")[0]


def applied(server: Server, out: list, game_id: str = "ac-1") -> EmailMessage:
    """After a move under the default notification level the mover hears nothing and the opponent
    gets "your move": returns that mail."""
    assert [rcpt for rcpt, _m in out] == [BOB if server.game(game_id).to_move == "white" else ALICE]
    mail = out[0][1]
    assert "played" in headline(mail) and "Your move" in headline(mail)
    return mail


def test_a_whole_game_by_mail(server: Server) -> None:
    players = {ALICE: Player(ALICE, 1), BOB: Player(BOB, 2)}
    out = server.submit(server.mail(ALICE, f"new alien-city with {BOB} as black"))
    created = to(out, ALICE)[0]
    assert created["Subject"] == "[pbem ac-1] alice vs bob"
    pending = [(rcpt, m) for rcpt, m in out if rcpt == BOB]
    finished: dict[str, EmailMessage] = {}
    thread_root = None
    for _ in range(400):
        if not pending:
            break
        rcpt, message = pending.pop(0)
        assert message["Auto-Submitted"] in ("auto-replied", "auto-generated")
        assert message["Subject"] == "[pbem ac-1] alice vs bob"
        if thread_root is None:
            thread_root = created["Message-ID"]
        if rcpt == ALICE:  # her thread starts at the mail she got first
            assert thread_root in str(message.get("References", ""))
        if headline(message).startswith("Game over"):
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
        assert "Final scores" in text and ("win" in headline(message) or "draw" in headline(message))
        record = attached_record(message)
        assert record is not None and "pile" not in json.dumps(record["setup"])
        assert replay_record(record).is_over
        assert len(record["moves"]) == len(row.record["moves"])
    # the breakdown names every claimed tower's points
    assert state.score().text.strip() in text_of(finished[ALICE])


def test_board_mail_contents(server: Server) -> None:
    alice_mail, _ = start_game(server)
    text = text_of(alice_mail)
    assert "Legal builds for black (you)" in text
    assert "Scores: black (you) 0, white (bob@example.org) 0" in text
    html = html_of(alice_mail)
    assert "<table" in html and "Legal builds for black (you)" in html  # the listing, not links
    assert attached_record(alice_mail) is None  # the record comes at the end, or on request
    assert move_links(alice_mail) == []  # one-tap moves are a choice (set mail tap)
    alice_mail = with_taps(server, ALICE, alice_mail, "ac-1")
    links = move_links(alice_mail)
    assert links and all(link["to"] == alice_mail["Reply-To"].addresses[0].addr_spec for link in links)
    assert all(link["subject"] == "[pbem ac-1] alice vs bob" for link in links)
    assert all(link["to"].split("@")[0].endswith("-1") for link in links)  # keyed with move 1
    for raw in server.raw_sent:
        assert max(len(line) for line in raw.split(b"\r\n")) <= 998, "SMTP line limit"
        assert b"\n" not in raw.replace(b"\r\n", b""), "bare LF on the wire"


def test_illegal_move_explains_and_changes_nothing(server: Server) -> None:
    alice_mail, _ = start_game(server)
    before = server.game("ac-1").record
    out = server.submit(reply_to(alice_mail, ALICE, "tower purple Z99"))
    reply = to(out, ALICE)[0]
    text = text_of(reply)
    assert headline(reply).startswith("Not applied: tower purple Z99")
    assert reply["Subject"] == alice_mail["Subject"] and reply["In-Reply-To"] is not None
    assert reply["Reply-To"] == alice_mail["Reply-To"]  # the next reply still authenticates
    assert "Legal builds for black" in text
    assert to(out, BOB) == []
    assert server.game("ac-1").record == before


def test_unknown_command_gets_suggestions(server: Server) -> None:
    start_game(server)  # from a player; a stranger's junk is not answered (test_hostile_processing)
    out = server.submit(server.mail(ALICE, "gmaes"))
    reply = to(out, ALICE)[0]
    text = text_of(reply)
    assert "unknown command" in text and "Did you mean games" in text
    assert headline(reply) == "Not understood: gmaes"


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
    assert len(notices) == 1 and "was not accepted" in headline(notices[0])
    assert "YOURTOKEN" not in text_of(notices[0]) and "+" in notices[0]["Reply-To"]
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
    assert [headline(m) for m in to(out, ALICE)] == [
        f"A mail about ac-1 from {ALICE} was not accepted"]
    assert server.game("ac-1").record["moves"] == []


def test_body_token_line_works_for_a_fresh_mail(server: Server) -> None:
    alice_mail, _ = start_game(server)
    token = token_of(alice_mail)
    move = Player(ALICE).choose_move(alice_mail)
    out = server.submit(server.mail(ALICE, f"move ac-1 {move}\ntoken {token}"))
    applied(server, out)
    assert [m["move"] for m in server.game("ac-1").record["moves"]] == [move]


def test_out_of_date_board_is_refused_with_the_current_board(server: Server) -> None:
    alice_mail, _ = start_game(server)
    alice_mail = with_taps(server, ALICE, alice_mail, "ac-1")
    player = Player(ALICE, 5)
    first = player.choose_move(alice_mail)
    out = server.submit(reply_to(alice_mail, ALICE, first))
    applied(server, out)
    # a resent reply to the same (now old) board must not move again: neither a reply (In-Reply-To
    # and the Reply-To key), nor a tapped link (its key), nor a new mail with "(move 1)"
    second = player.choose_move(alice_mail)
    for mail in (reply_to(alice_mail, ALICE, second), follow(mailto_links(alice_mail)[0], ALICE),
                 server.mail(ALICE, f"move ac-1 {second} (move 1)\ntoken {token_of(alice_mail)}")):
        out = server.submit(mail)
        refusal = to(out, ALICE)[0]
        assert "answers the board of move 1" in text_of(refusal) and "at move 2" in text_of(refusal)
        assert headline(refusal).startswith("Not applied")
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
    applied(server, out)


def test_json_turn_file_as_attachment(server: Server) -> None:
    alice_mail, _ = start_game(server)
    move = Player(ALICE).choose_move(alice_mail)
    reply = reply_to(alice_mail, ALICE, "my move is attached")
    reply.add_attachment(json.dumps({"commands": [{"command": "move", "game": "ac-1", "move": move}]})
                         .encode(), maintype="application", subtype="json", filename="turn.json")
    out = server.submit(reply)
    applied(server, out)
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
    out = server.submit(server.mail(ALICE, f"help\nnew alien-city with {BOB} as white\ngames\nfoo\ngmaes"))
    text = text_of(to(out, ALICE)[0])
    order = [text.index("> help"), text.index("> new alien-city"), text.index("> games")]
    assert order == sorted(order)
    assert "ac-1" in text[order[2]:]
    assert "I did not read these lines as commands:\n  foo" in text  # said, not swallowed
    assert "unknown command 'gmaes'. Did you mean games" in text  # a typo of a command is one
    assert len(to(out, BOB)) == 1


def test_decline_and_resign(server: Server) -> None:
    out = server.submit(server.mail(ALICE, f"new alien-city with {BOB}"))
    invitation = to(out, BOB)[0]
    out = server.submit(reply_to(invitation, BOB, "decline"))
    assert headline(to(out, ALICE)[0]) == f"{BOB} declined; game ac-1 is cancelled"
    assert server.game("ac-1").status == "declined"
    _alice_mail, bob_mail = start_game(server)
    # one word never resigns: the answer says what would happen and the exact line to confirm
    out = server.submit(reply_to(bob_mail, BOB, "resign"))
    asked = to(out, BOB)[0]
    assert [rcpt for rcpt, _m in out] == [BOB] and server.game("ac-2").status == "active"
    line = headline(asked).split("confirm with: ")[1]
    assert line.startswith("resign ac-2 confirm ") and "you lose" in text_of(asked)
    assert [link["body"] for link in mailto_links(asked)] == [line]
    assert server.submit(reply_to(asked, BOB, "resign ac-2 confirm XXXX"))[0][1] is not None
    assert server.game("ac-2").status == "active"  # a wrong code does nothing
    out = server.submit(reply_to(asked, BOB, line))
    assert headline(to(out, ALICE)[0]) == "Game over: bob@example.org resigned; you win"
    assert headline(to(out, BOB)[0]) == "Game over: you resigned; alice@example.org wins"
    row = server.game("ac-2")
    assert row.status == "over" and row.record["result"]["winners"] == ["black"]


def test_move_when_it_is_not_your_turn(server: Server) -> None:
    _alice_mail, bob_mail = start_game(server)
    out = server.submit(reply_to(bob_mail, BOB, "tower red A1"))
    refusal = to(out, BOB)[0]
    assert "it is black (alice@example.org)'s turn, not yours" in text_of(refusal)
    assert headline(refusal) == "Not applied: it is alice@example.org's turn"


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
    record = {"format": "pbem-record/1", "game": "alien-city", "moves": []}  # as `record` sends it
    reply.add_attachment(json.dumps(record).encode(), maintype="application", subtype="json",
                         filename="ac-1.json")
    out = server.submit(reply)
    applied(server, out)
