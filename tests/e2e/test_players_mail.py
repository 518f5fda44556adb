"""What players keep for themselves, end to end: mails through the embedded SMTP listener of a running
daemon, every reply read at a real SMTP relay (aiosmtpd) as its recipient reads it. Notes never seen
by the opponent until the end; the only legal move played for a player who asked, and only then; an
invitation from a blocked address declined without a word to the player."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from engine import get_game
from pbem.cli.mailbox import new_mail, reply_to
from pbem.record import replay_record
from tests.e2e.conftest import relay
from tests.e2e.test_classic_mail import Mailer
from tests.players.test_automove import forced_going_on, random_play
from tests.server.players import Player, attached_record, headline, text_of
from tests.services.requirements import free_port

ANN, BO, CY, SERVER = "ann@example.org", "bo@example.org", "cy@example.org", "pbem@localhost"
PLAN = "Keep F6 free for the red dome"
SEALED = "Bo will run out of blue domes first"


def flat(mail) -> str:
    return " ".join(text_of(mail).split())


def people_at(daemon_for, smtp_sink):
    port = free_port()
    _config, daemon = daemon_for({"smtp": {"enabled": True, "host": "127.0.0.1", "port": port},
                                  "relay": relay(smtp_sink)})
    return Mailer(port, smtp_sink), daemon.store


def start(people: Mailer) -> tuple:
    """Ann challenges Bo, who accepts: (Ann's "your move", Bo's "game started")."""
    got = people.send(new_mail(ANN, SERVER, f"new alien-city with {BO} as black"), 2)
    got = people.send(reply_to(got[BO][0], BO, "accept"), 2)
    return got[ANN][0], got[BO][0]


def test_notes_are_never_seen_by_the_opponent_until_the_end(smtp_sink, daemon_for) -> None:
    people, _store = people_at(daemon_for, smtp_sink)
    ann_turn, bo_started = start(people)
    got = people.send(reply_to(bo_started, BO, f"note {PLAN}"), 1)
    assert headline(got[BO][0]) == "Note 1 kept for ac-1 (only you read it)"
    got = people.send(reply_to(ann_turn, ANN, f"note secret {SEALED}"), 1)
    assert headline(got[ANN][0]) == "Sealed note 1 kept for ac-1: read by everyone when the game ends"
    seen_by = {ANN: [], BO: []}
    got = people.send(reply_to(ann_turn, ANN, Player(ANN, 1).choose_move(ann_turn)), 1)
    bo_turn = got[BO][0]
    assert headline(bo_turn).startswith("Your move (move 2).")
    assert f"after move 0: {PLAN}" in text_of(bo_turn) and SEALED not in text_of(bo_turn)
    seen_by[BO].append(bo_turn)
    for command in ("record ac-1", "history ac-1", "board ac-1", "notes ac-1"):
        got = people.send(reply_to(bo_turn, BO, command), 1)
        seen_by[BO] += got[BO]
        got = people.send(new_mail(ANN, SERVER, command), 1)
        seen_by[ANN] += got[ANN]
    assert all(SEALED not in flat(mail) for mail in seen_by[BO])
    assert "secret_notes" not in attached_record(seen_by[BO][1])  # the answer to "record ac-1"
    assert all(PLAN not in flat(mail) for mail in seen_by[ANN])
    # Bo moves and resigns: the end reveals Ann's sealed note to both, never Bo's private one
    got = people.send(reply_to(bo_turn, BO, Player(BO, 2).choose_move(bo_turn)), 1)
    assert PLAN not in flat(got[ANN][0])
    got = people.send(reply_to(bo_turn, BO, "resign ac-1"), 1)
    line = re.search(r"resign ac-1 confirm [A-Z]{4}", headline(got[BO][0])).group(0)
    got = people.send(reply_to(got[BO][0], BO, line), 2)
    for who in (ANN, BO):
        end = got[who][0]
        assert headline(end).startswith("Game over"), who
        assert "Sealed notes, read at the end" in text_of(end)
        assert f"black ({'you' if who == ANN else ANN}), after move 0, 2026" in flat(end)
        assert SEALED in flat(end)
        assert attached_record(end)["secret_notes"]["black"][0]["text"] == SEALED
        assert "notes" not in attached_record(end)
    assert PLAN not in flat(got[ANN][0])


def test_the_only_legal_move_is_played_for_a_player_who_asked_and_only_then(smtp_sink, daemon_for) -> None:
    people, store = people_at(daemon_for, smtp_sink)
    ann_turn, bo_started = start(people)
    got = people.send(reply_to(bo_started, BO, "set automove on"), 1)
    assert headline(got[BO][0]) == "Done: automove is now on: your only legal move is played for you"
    # a choice: Bo's turn waits for him
    got = people.send(reply_to(ann_turn, ANN, Player(ANN, 1).choose_move(ann_turn)), 1)
    assert headline(got[BO][0]).startswith("Your move (move 2).")
    assert not any(e.get("automatic") for e in store.get_game("ac-1").record["moves"])
    # later in the game (reached by random play in the store), a move of the one who waits leaves
    # Bo a single build with nothing to choose in it
    def ann_then_bo_forced(state):
        found = forced_going_on(state)
        return found if found and found[0] == "black" else None

    _seat, move, forced = random_play(store, "ac-1", ann_then_bo_forced, datetime.now(UTC))
    got = people.send(new_mail(ANN, SERVER, "board ac-1"), 1)
    got = people.send(reply_to(got[ANN][0], ANN, move), 2)
    row = store.get_game("ac-1")
    last = row.record["moves"][-1]
    assert (last["seat"], last["move"], last.get("automatic")) == ("white", forced, True)
    assert f"{BO} played {forced} automatically (the only legal move). Your move" in headline(got[ANN][0])
    bo = got[BO][0]
    assert f"you played {forced} automatically (the only legal move)" in headline(bo)
    assert f"Played for you: the only legal move, {forced}" in flat(bo)
    assert "To choose every move yourself: set automove off" in flat(bo)
    assert replay_record(row.record, get_game(row.game)).ply == len(
        [e for e in row.record["moves"] if "move" in e])


def test_a_blocked_invitation(smtp_sink, daemon_for) -> None:
    people, store = people_at(daemon_for, smtp_sink)
    got = people.send(new_mail(CY, SERVER, f"new alien-city with {ANN}"), 2)
    cy_invitation = got[ANN][0]
    assert headline(cy_invitation) == f"{CY} invites you to Alien City"
    got = people.send(reply_to(cy_invitation, ANN, f"block {BO}"), 1)  # proven: a reply to the server
    assert headline(got[ANN][0]) == f"Blocked: {BO}"
    got = people.send(new_mail(BO, SERVER, f"new alien-city with {ANN}\nFancy a game?"), 1)
    assert list(got) == [BO]
    assert headline(got[BO][0]) == f"{ANN} declined; game ac-2 is cancelled"
    assert "block" not in flat(got[BO][0]).lower()
    # nothing reached Ann meanwhile: her next mail is the answer to her next command
    got = people.send(new_mail(ANN, SERVER, "blocked"), 1)
    assert list(got) == [ANN] and headline(got[ANN][0]) == "You block 1 address"
    assert store.get_game("ac-2").status == "declined"
    # Cy's invitation is still hers to answer
    got = people.send(reply_to(cy_invitation, ANN, "accept"), 2)
    assert headline(got[ANN][0]).startswith("Game ac-1 has started")
