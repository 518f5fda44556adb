"""Computer seats by mail, through the real processor and store: ``new GAME with computer[:N]``,
the refusals of levels that do not exist, the record, no mail to a computer, its moves entering as
mail (once, however often they are stored), stale ones refused, ``help new``, and standings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pbem.cli.mailbox import reply_to
from pbem.community.standings import rated
from pbem.daemon.thinker import game_seed, think
from pbem.processing import computer
from tests.server.harness import Server, headline, text_of, to
from tests.server.mailcheck import MailCheck
from tests.server.players import Player

ANN, BO = "ann@example.org", "bo@example.org"


@pytest.fixture
def server(tmp_path: Path):
    srv = Server(tmp_path)
    yield srv
    srv.close()


def computer_moves(server: Server, game_id: str) -> list:
    """What the daemon's thinker does, in the test's thread: the computer's move as its mail."""
    row = server.game(game_id)
    seat = computer.computer_seat(row)
    level = computer.level_of(seat.email)
    move, ply = think(row.game, row.record, level, 0.02 if level >= 3 else None, game_seed(row.id))
    raw = computer.move_mail(server.config, server.processor.secret, row, seat, ply, move,
                             server.clock.now())
    return [raw, move]


@pytest.mark.parametrize(("words", "expected"), [
    ("computer:9", "there is no computer level 9: levels are 1 (random), 2 (greedy), 3 (search), "
                   "4 (strong search); e.g. new alien-city with computer:4."),
    ("computer:x", "'computer:x': the computer's level is a number from 1 to 4, e.g. new alien-city "
                   "with computer:4."),
    ("computer:", "'computer:': the computer's level is a number from 1 to 4"),
])
def test_a_level_that_does_not_exist_is_refused_with_the_ones_that_do(server: Server, words: str,
                                                                       expected: str) -> None:
    out = server.submit(server.mail(ANN, f"new alien-city with {words}"))
    assert [rcpt for rcpt, _ in out] == [ANN]
    assert expected in " ".join(text_of(out[0][1]).split())
    assert server.store.list_games() == []


def test_a_game_against_the_computer_starts_at_once_and_names_it(server: Server) -> None:
    out = server.submit(server.mail(ANN, "new alien-city with computer as black"))
    assert [rcpt for rcpt, _ in out] == [ANN]  # the computer gets nothing, and accepts at once
    mail = out[0][1]
    assert headline(mail) == "Your move (move 1). Game ac-1 has started."
    assert "Players: black (you), white (computer level 3)" in text_of(mail)
    assert "ann vs computer level 3" in str(mail["Subject"])
    row = server.game("ac-1")
    assert row.status == "active"
    entry = row.record["players"]["white"]
    assert (entry["engine"], entry["level"], entry["name"]) == ("pbem-ai", 3, "computer level 3")


def test_people_and_computers_mixed_in_space_truckin_to_the_end(server: Server) -> None:
    out = server.submit(server.mail(ANN, f"new space-truckin with {BO} computer computer:1"))
    assert sorted(rcpt for rcpt, _ in out) == [ANN, BO]  # bo is invited; the computers are not
    invitation = to(out, BO)[0]
    assert "invites you" in headline(invitation)
    text = " ".join(text_of(invitation).split())
    assert "computer A level 3" in text and "computer B level 1" in text
    row = server.game("st-1")
    levels = {s.seat: row.record["players"][s.seat].get("level") for s in row.seats}
    assert sorted(v for v in levels.values() if v) == [1, 3]
    assert all(s.accepted for s in row.seats if computer.is_computer(s.email))
    people = {ANN: Player(ANN, 1), BO: Player(BO, 2)}
    out = server.submit(reply_to(invitation, BO, "accept"))
    finished, computer_turns = set(), 0
    while len(finished) < 2:
        assert {rcpt for rcpt, _ in out} <= {ANN, BO}, "mail to a computer seat"
        replies = []
        for rcpt, mail in out:
            if headline(mail).startswith("Game over"):
                finished.add(rcpt)
            elif (reply := people[rcpt].respond(mail)) is not None:
                replies.append(reply)
        out = [item for reply in replies for item in server.submit(reply)]
        while (row := server.game("st-1")).status == "active" and computer.computer_seat(row):
            out += server.submit(computer_moves(server, "st-1")[0])
            computer_turns += 1
        assert out or len(finished) == 2, "nobody has anything to answer"
    assert server.game("st-1").status == "over" and computer_turns >= 20


def test_whole_game_the_human_reads_and_the_computer_moves_once(server: Server) -> None:
    """Level 1 against a person to the end; every mail is read as its recipient reads it. Each
    computer move is stored twice (as after a crash that computed it again): applied once."""
    check, ann = MailCheck(), Player(ANN, 5)
    challenge = server.mail(ANN, "new alien-city with computer:1")
    check.sent(ANN, challenge)
    out = server.submit(challenge)
    computer_turns = 0
    while True:
        assert {rcpt for rcpt, _ in out} == {ANN}, "mail to someone else than the person"
        for _rcpt, mail in out:
            check.read(ANN, mail)
        last = out[-1][1]
        if headline(last).startswith("Game over"):
            break
        reply = ann.respond(last)
        check.sent(ANN, reply)
        out = server.submit(reply)
        row = server.game("ac-1")
        if row.status == "active" and computer.computer_seat(row) is not None:
            raw, move = computer_moves(server, "ac-1")
            out += server.submit(raw)
            assert server.submit(raw) == [], "the same move stored twice was applied twice"
            computer_turns += 1
            last = out[-1][1]
            assert move in (text_of(last) if headline(last).startswith("Game over") else headline(last))
    row = server.game("ac-1")
    assert row.status == "over" and computer_turns >= 10
    assert "computer level 1" in headline(out[-1][1])
    assert not rated(row)
    sent_to = {rcpt for rcpt, _raw in server.sent}
    assert sent_to == {ANN}


def test_a_late_computer_move_is_refused_as_stale(server: Server) -> None:
    server.submit(server.mail(ANN, "new alien-city with computer:2 as white"))
    raw, _move = computer_moves(server, "ac-1")
    server.submit(raw)
    row = server.game("ac-1")
    seat = next(s for s in row.seats if computer.is_computer(s.email))
    # the same seat's move for the first position, arriving after the game moved on
    late = computer.move_mail(server.config, server.processor.secret, row, seat, 0, "dome red A1",
                              server.clock.now())
    before = len(server.game("ac-1").record["moves"])
    assert server.submit(late) == []  # refused, and the refusal goes nowhere
    assert len(server.game("ac-1").record["moves"]) == before
    last = list(server.store.iter_inbound())[-1]
    assert last.status == "done" and "move refused" in last.outcome, last.outcome


def test_help_new_explains_the_computer_and_its_levels(server: Server) -> None:
    out = server.submit(server.mail(ANN, "help new"))
    text = text_of(out[0][1])
    assert "with computer:2" in text and "not rated" in " ".join(text.split())
    # FINDINGS: the default level of "with computer" is stated
    assert "write 'computer' (level 3)" in " ".join(text.split()) and "(the default is 3)" in text
    assert "Alien City:" in text and "Space Truckin':" in text and "4  strong search" in text
    assert max(len(line) for line in text.splitlines()) <= 78


def test_json_challenge_and_a_rematch_against_the_computer(server: Server) -> None:
    out = server.submit(server.mail(ANN, json.dumps(
        {"command": "new", "game": "alien-city", "with": ["computer:2"], "as": "white"})))
    assert [rcpt for rcpt, _ in out] == [ANN] and "computer level 2" in text_of(out[0][1])
    row = server.game("ac-1")
    row.status = "over"  # a finished game, as far as rematch is concerned
    with server.store.transaction() as tx:
        tx.save_game(row)
    out = server.submit(reply_to(out[0][1], ANN, "rematch ac-1"))
    assert [rcpt for rcpt, _ in out] == [ANN]
    assert headline(out[0][1]) == "Your move (move 1). Game ac-2 has started."
    rematch = server.game("ac-2")
    assert rematch.status == "active"
    assert rematch.record["players"]["white"]["level"] == 2  # seats swapped: ann plays black now
