"""What players read, as found deploying the server for real (issue 22): the result's scores the
reader's way round, every player's display name once known, a subject that is a title and not a
command, and a move copied from the legal listing with its decorations.
"""

from __future__ import annotations

import re
from email.message import EmailMessage
from pathlib import Path

import pytest

from engine import get_game
from pbem.archive.search import result_text
from pbem.cli.mailbox import reply_to
from pbem.record import replay_record
from tests.server.harness import Server, headline, text_of, to
from tests.server.players import Player

ALICE, BOB, CAROL = "alice@example.org", "bob@example.org", "carol@example.org"
AC = get_game("alien-city")


@pytest.fixture
def server(tmp_path: Path):
    srv = Server(tmp_path)
    yield srv
    srv.close()


def flat(message: EmailMessage) -> str:
    return " ".join(text_of(message).split())


def start(server: Server, alice: str = ALICE, bob: str = BOB) -> dict[str, EmailMessage]:
    """Alice challenges Bob (she plays black, who moves first) and he accepts: each one's newest
    mail."""
    out = server.submit(server.mail(alice, f"new alien-city with {BOB} as black"))
    out = server.submit(reply_to(to(out, BOB)[0], bob, "accept"))
    return {ALICE: to(out, ALICE)[-1], BOB: to(out, BOB)[-1]}


# --- the result the reader's way round ------------------------------------------------------------------

def play_to_the_end(server: Server, game_id: str, latest: dict[str, EmailMessage],
                    levels: dict[str, int]) -> dict[str, EmailMessage]:
    """Each player answers their "your move" mail with the move a computer of their level would
    choose there (as a person would with the engine beside them) until both read the result."""
    players = {seat.seat: seat.email for seat in server.game(game_id).seats}
    computers = {email: AC.computer(level, seed=7) for email, level in levels.items()}
    pending = list(latest.items())
    finished: dict[str, EmailMessage] = {}
    while pending:
        rcpt, mail = pending.pop(0)
        if headline(mail).startswith("Game over"):
            finished[rcpt] = mail
            continue
        if "Your move" not in headline(mail):
            continue
        state = replay_record(server.game(game_id).record)
        assert players[state.to_move] == rcpt
        move = state.move_text(computers[rcpt].choose(state))
        pending += server.submit(reply_to(mail, rcpt, move))
    return finished


def test_the_result_shows_the_winners_score_first(server: Server) -> None:
    """Bob plays white, the second seat, and wins: "Bob wins 35–27", never the seats' order
    "27–35". (White plays the greedy level against random moves, so white wins; a rare game that
    black wins anyway is played again.)"""
    for number in range(1, 5):
        latest = start(server, ALICE, f"Bob <{BOB}>")
        finished = play_to_the_end(server, f"ac-{number}", latest, {ALICE: 1, BOB: 2})
        result = server.game(f"ac-{number}").record["result"]
        if result["winners"] == ["white"] and result["totals"]["white"] > result["totals"]["black"]:
            break
    else:
        pytest.fail("white never won")
    won, lost = result["totals"]["white"], result["totals"]["black"]
    assert headline(finished[BOB]) == f"Game over: you win {won}–{lost}"
    assert headline(finished[ALICE]) == f"Game over: Bob wins {won}–{lost}"
    out = server.submit(reply_to(finished[ALICE], ALICE, "games"))
    assert f"you play black; Game over: Bob wins {won}–{lost}" in flat(to(out, ALICE)[0])
    out = server.submit(reply_to(finished[ALICE], ALICE, "history alien-city"))
    assert f"white wins [white {won} black {lost}]" in flat(to(out, ALICE)[0])


def test_a_result_of_several_players_lists_the_scores_in_place_order() -> None:
    record = {"players": {"red": {}, "blue": {}, "green": {}},
              "result": {"reason": "scored", "winners": ["blue"], "totals": {"red": 10, "blue": 30,
                                                                               "green": 20}}}
    assert result_text(record, "over") == "blue wins [blue 30 green 20 red 10]"
    # a player dropped at a deadline comes last, whatever their points
    record["result"].update(totals={"red": 25, "blue": 30, "green": 20}, ranking=["blue", "green", "red"])
    assert result_text(record, "over") == "blue wins [blue 30 green 20 red 25]"


# --- display names --------------------------------------------------------------------------------------

def test_every_player_is_called_by_the_name_their_mail_client_sends(server: Server) -> None:
    out = server.submit(server.mail(f"Alice <{ALICE}>", f"new alien-city with {BOB} as black"))
    invitation = to(out, BOB)[0]
    assert headline(invitation) == "Alice invites you to Alien City"
    assert flat(invitation).startswith("Alice invites you to Alien City Alice invites you to a game")
    out = server.submit(reply_to(invitation, f"Bob <{BOB}>", "accept"))
    alice_turn = to(out, ALICE)[0]
    assert "Scores: black (you) 0, white (Bob) 0" in flat(alice_turn)
    out = server.submit(reply_to(alice_turn, ALICE, Player(ALICE).choose_move(alice_turn)))
    bob_turn = to(out, BOB)[0]
    assert headline(bob_turn).startswith("Your move (move 2). Alice played ")
    out = server.submit(reply_to(bob_turn, f"Bob <{BOB}>", Player(BOB).choose_move(bob_turn)))
    alice_turn = to(out, ALICE)[0]
    assert headline(alice_turn).startswith("Your move (move 3). Bob played ")
    for mail in (alice_turn, *to(server.submit(reply_to(alice_turn, ALICE, "games")), ALICE)):
        assert BOB not in text_of(mail)  # his address, once his name is known, nowhere in her mail
    # a mail without his token cannot rename him: a From header is easily forged
    server.submit(server.mail(f"Mallory <{BOB}>", "games"))
    out = server.submit(reply_to(alice_turn, ALICE, "games"))
    assert "vs Bob" in flat(to(out, ALICE)[0])
    # a new game knows him by the name from the start; his nickname wins over it
    out = server.submit(server.mail(CAROL, f"new alien-city with {BOB}"))
    assert headline(to(out, CAROL)[0]) == "Game ac-2 created: waiting for Bob to accept"
    server.submit(reply_to(bob_turn, BOB, "set nickname Bobby"))
    out = server.submit(reply_to(alice_turn, ALICE, "games"))
    assert "ac-1 Alien City vs Bobby" in flat(to(out, ALICE)[0])


# --- the subject --------------------------------------------------------------------------------------

def test_a_subject_that_titles_the_mail_is_not_answered_as_a_command(server: Server) -> None:
    out = server.submit(server.mail(ALICE, f"new alien-city with {BOB} as black", subject="new game"))
    reply = to(out, ALICE)[0]
    assert headline(reply) == f"Game ac-1 created: waiting for {BOB} to accept"
    assert "Not understood" not in text_of(reply) and "> new game" not in text_of(reply)
    assert reply["Subject"] == "[pbem ac-1] alice vs bob"


def test_an_opponent_written_as_an_address_book_entry_is_invited(server: Server) -> None:
    """'with Bob <bob@...>', as a mail client writes an address: the name is not an option of the
    game (it was refused as "unknown option 'Bob'"); nor is it taken as Bob's name, which only his
    own mail tells."""
    out = server.submit(server.mail(ALICE, f"new alien-city time 3 with Bob Builder <{BOB}> as black"))
    assert headline(to(out, ALICE)[0]) == f"Game ac-1 created: waiting for {BOB} to accept"
    invitation = to(out, BOB)[0]
    assert "You would play white" in flat(invitation) and "3 days per move" in flat(invitation)
    assert "Builder" not in text_of(invitation)


def test_a_mistyped_accept_is_answered_with_the_command_it_resembles(server: Server) -> None:
    out = server.submit(server.mail(ALICE, f"new alien-city with {BOB} as black"))
    out = server.submit(reply_to(to(out, BOB)[0], BOB, "acept"))
    reply = to(out, BOB)[0]
    assert "no moves can be made. Did you mean accept?" in flat(reply)
    assert server.store.get_game("ac-1").status == "invited"


def test_the_same_command_in_subject_and_body_is_answered_once(server: Server) -> None:
    out = server.submit(server.mail(CAROL, "games", subject="games"))
    reply = to(out, CAROL)[0]
    assert headline(reply) == "You have no games"
    assert text_of(reply).count("Start one with") == 1
    # a subject that adds a command is still read, before the body's
    out = server.submit(server.mail(CAROL, "settings", subject="games"))
    assert headline(to(out, CAROL)[0]).startswith("You have no games; ")


def test_new_alone_in_the_subject_is_answered_with_its_usage_once(server: Server) -> None:
    out = server.submit(server.mail(CAROL, "", subject="new game"))
    text = flat(to(out, CAROL)[0])
    assert headline(to(out, CAROL)[0]) == "Not understood: new game"
    assert "say whom you challenge: new GAME [OPTIONS] with ADDRESS|computer[:LEVEL]" in text
    assert text.count("for anyone") == 1 and "(or 'new GAME open' for anyone)" not in text


# --- a move copied from the listing -------------------------------------------------------------------

def test_a_build_that_ends_the_game_copied_with_its_star_is_played(server: Server) -> None:
    latest = start(server)
    players = {ALICE: Player(ALICE, 3), BOB: Player(BOB, 4)}
    pending = [(ALICE, latest[ALICE])]
    while pending:
        rcpt, mail = pending.pop(0)
        if "Your move" not in headline(mail):
            continue
        listing = re.sub(r"\n {4}(?=\S)", " ", text_of(mail))  # a piece's wrapped lots on its line
        starred = re.search(r"^(\w+) (tower|dome)(?: \([^)]*\))?: [^\n]*?\b([A-H]\d+)\*", listing,
                            re.MULTILINE)
        if starred is None:
            pending += server.submit(reply_to(mail, rcpt, players[rcpt].choose_move(mail)))
            continue
        colour, kind, lot = starred.groups()
        copied = f"{kind} {colour} {lot}*"  # as the listing prints the lot
        out = server.submit(reply_to(mail, rcpt, copied))
        assert headline(to(out, rcpt)[0]).startswith("Game over"), flat(to(out, rcpt)[0])
        assert server.game("ac-1").record["moves"][-1]["move"] == f"{kind} {colour} {lot}"
        return
    pytest.fail("no build that ends the game was ever listed")


def test_space_truckin_pass_copied_from_the_black_hole_choices_is_played(server: Server) -> None:
    out = server.submit(server.mail(ALICE, f"new space-truckin with {BOB}"))
    out = server.submit(reply_to(to(out, BOB)[0], BOB, "accept"))
    players = {ALICE: Player(ALICE, 5), BOB: Player(BOB, 6)}
    pending = [(rcpt, m) for rcpt, m in out if "Your move" in headline(m)]
    while pending:
        rcpt, mail = pending.pop(0)
        if "Your move" not in headline(mail):
            continue
        choice = re.search(r"^\(c\) \S+$", text_of(mail), re.MULTILINE)
        if choice is None:
            pending += server.submit(reply_to(mail, rcpt, players[rcpt].choose_move(mail)))
            continue
        out = server.submit(reply_to(mail, rcpt, choice.group(0)))  # "(c) pass", letter and all
        played = [entry["move"] for entry in server.game("st-1").record["moves"] if "move" in entry]
        assert played[-1] == "pass", flat(to(out, rcpt)[0])
        return
    pytest.fail("no black hole was ever drawn")
