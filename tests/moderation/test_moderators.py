"""Moderators by mail: authenticated by address AND token, every action recorded and replayable."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pbem.cli.mailbox import reply_to
from pbem.clocks import log as cl
from pbem.record import replay_json, replay_record, write_record
from pbem.tokens import seat_token
from tests.moderation.helpers import (
    ALICE,
    BOB,
    CAROL,
    DAVE,
    MALLORY,
    MOD,
    SECRET,
    ModServer,
    Table,
    canonical,
    seat_token_in,
    start,
)
from tests.server.harness import headline, html_of, text_of, to
from tests.server.players import attached_record


@pytest.fixture
def server(tmp_path: Path):
    srv = ModServer(tmp_path)
    yield srv
    srv.close()


def replay_cli(record: dict, tmp_path: Path, *args: str) -> str:
    path = tmp_path / "final.json"
    write_record(path, record)
    return subprocess.run([sys.executable, "-m", "pbem.cli", "replay", str(path), *args],
                          capture_output=True, text=True, check=True).stdout


def test_admin_mail_needs_the_moderator_address_and_its_token(server: ModServer) -> None:
    table = Table(server)
    table.take(start(server))
    table.play(2)
    assert server.admin("admin rollback ac-1 1", sender=MOD, token="") == []
    assert server.admin("admin rollback ac-1 1", sender=MOD, token="a" * 26) == []
    assert server.admin("admin rollback ac-1 1", sender=MALLORY) == []  # not a moderator
    forged = server.mail(MOD, f"admin rollback ac-1 1\ntoken {seat_token(SECRET, 'ac-1', 'black')}")
    assert server.submit(forged) == []
    assert len(server.game("ac-1").record["moves"]) == 2
    assert "actions" not in server.game("ac-1").record
    statuses = [m.outcome for m in server.store.iter_inbound()][-4:]
    assert all(s.startswith("ignored: authentication failed") for s in statuses)
    text = text_of(to(server.admin("admin frobnicate ac-1"), MOD)[0])
    assert "unknown admin operation" in text


def test_rollback_by_mail_then_play_on_and_replay_matches_the_live_game(server: ModServer,
                                                                      tmp_path: Path) -> None:
    table = Table(server)
    table.take(start(server))
    server.submit(server.mail(CAROL, "observe ac-1"))
    played = table.play(4)
    out = table.take(server.admin("admin rollback ac-1 2 a misclick, both agreed"))
    assert headline(to(out, MOD)[0]) == "Rolled back ac-1 to move 2"
    alice = headline(to(out, ALICE)[0])
    assert alice == ("Your move (move 3). A moderator has taken back the last 2 moves of game ac-1: it "
                     "is at move 2 again.")
    assert "taken back the last 2 moves" in headline(to(out, BOB)[0])
    assert "black (alice@example.org) is to move." in headline(to(out, BOB)[0])
    assert "Reason: a misclick, both agreed" in text_of(to(out, BOB)[0])
    assert "taken back the last 2 moves" in headline(to(out, CAROL)[0]), "observers see the rollback too"
    row = server.game("ac-1")
    assert [m["move"] for m in row.record["moves"]] == played[:2]
    action = row.record["actions"][0]
    assert action == {**action, "action": "rollback", "by": MOD, "why": "a misclick, both agreed",
                      "ply": 4, "moves": 2, "to_ply": 2, "entries": 2}
    assert [e["move"] for e in action["removed"]] == played[2:]
    # play on past the old length: the server must not serve a position cached before the rollback
    more = table.play(4)
    row = server.game("ac-1")
    assert [m["move"] for m in row.record["moves"]] == played[:2] + more
    assert cl.check(row.record) == [] and cl.final_deadline(row.record) == row.deadline_at
    live = replay_json(replay_record(row.record))
    asked = to(server.submit(reply_to(table.newest[ALICE], ALICE, "record ac-1")), ALICE)
    mailed = attached_record(asked[0])
    assert replay_json(replay_record(mailed)) == live
    lines = replay_cli(row.record, tmp_path, "--json").splitlines()
    assert json.loads(lines[-1]) == live
    with_actions = [json.loads(line) for line in lines if '"actions"' in line]
    assert [line["ply"] for line in with_actions] == [2]
    assert with_actions[0]["actions"][0]["action"] == "rollback"
    assert set(with_actions[0]) == set(replay_json(replay_record(row.record, upto_ply=2))) | {"actions"}
    text = replay_cli(row.record, tmp_path)
    line = f"--- moderator action at ply 4: rollback 2 moves by {MOD}: a misclick, both agreed"
    assert line in text
    assert text.index("=== ply 2") < text.index(line) < text.index("=== ply 3")


def test_space_truckin_rollback_keeps_the_kept_positions_draw(server: ModServer, tmp_path: Path) -> None:
    table = Table(server)
    table.take(start(server, "space-truckin"))
    game_id = server.store.list_games()[0].id
    table.play(5)
    moves = server.game(game_id).record["moves"]
    move_at = [i for i, e in enumerate(moves) if "move" in e]
    cut = move_at[3]  # keep three moves and the draw after the third
    table.take(server.admin(f"admin rollback {game_id} 2"))
    record = server.game(game_id).record
    assert record["moves"] == moves[:cut] and "chance" in record["moves"][-1]
    table.play(3)
    record = server.game(game_id).record
    live = replay_json(replay_record(record))
    assert live["ply"] == 6
    assert json.loads(replay_cli(record, tmp_path, "--json").splitlines()[-1]) == live


def test_replace_player_old_token_refused_new_token_works(server: ModServer) -> None:
    table = Table(server)
    table.take(start(server))
    table.play(1)
    bob_board = table.newest[BOB]  # "Your move (move 2)" with bob's token
    assert "Your move (move 2)." in headline(bob_board)
    out = server.admin(f"admin replace ac-1 white {DAVE} bob has left")
    assert "Replaced white" in headline(to(out, MOD)[0])
    old = to(out, BOB)[0]
    assert headline(old) == "You no longer play white in ac-1" and "bob has left" in text_of(old)
    assert seat_token_in(server, old) is None, "the old player's mail carries no seat token"
    new = to(out, DAVE)[0]
    assert headline(new) == "You now play white in ac-1: your move (move 2)"
    assert "taking over from" in text_of(new)
    assert new["Reply-To"] != bob_board["Reply-To"] and seat_token_in(server, new) == ("ac-1", "white")
    assert to(out, ALICE), "the other player is told"
    row = server.game("ac-1")
    assert row.seats[1].email == DAVE and row.record["players"]["white"]["token_generation"] == 1
    assert row.record["actions"][-1]["action"] == "replace"
    player = table.players[BOB]
    # bob with his old token: refused without a reply to him
    assert to(server.submit(reply_to(bob_board, BOB, player.choose_move(bob_board))), BOB) == []
    # dave with bob's old token: refused too, and told that the token is an old one
    out = server.submit(reply_to(bob_board, DAVE, player.choose_move(bob_board)))
    assert [headline(m) for m in to(out, DAVE)] == ["Not done: an old token of ac-1"]
    assert [str(m["Subject"]) for m in to(out, DAVE)] == [str(new["Subject"])]
    assert len(server.game("ac-1").record["moves"]) == 1
    # dave with his new token: applied (no confirmation by default; alice is told it is her move)
    move = canonical(player.choose_move(new))
    out = server.submit(reply_to(new, DAVE, move))
    assert to(out, DAVE) == []
    assert headline(to(out, ALICE)[0]) == f"Your move (move 3). {DAVE} played {move}."
    assert len(server.game("ac-1").record["moves"]) == 2
    refused = text_of(to(server.admin(f"admin replace ac-1 black {DAVE}"), MOD)[0])
    assert "already plays" in refused


def test_blocked_sender_is_ignored_without_reply(server: ModServer, tmp_path: Path) -> None:
    start(server, second=MALLORY)
    out = server.admin(f"admin block {MALLORY} abusive mail")
    assert "They play in ac-1" in text_of(to(out, MOD)[0])
    assert server.submit(server.mail(MALLORY, "games\nhelp")) == []
    assert server.store.iter_inbound().__next__() is not None
    last = list(server.store.iter_inbound())[-1]
    assert last.status == "ignored" and "blocked" in (last.outcome or "")
    assert server.game("ac-1").record["actions"][-1]["action"] == "block"
    refused = text_of(to(server.admin(f"admin block {MOD}"), MOD)[0])
    assert "cannot be blocked" in " ".join(refused.split())
    assert "Unblocked" in text_of(to(server.admin(f"admin unblock {MALLORY}"), MOD)[0])
    assert to(server.submit(server.mail(MALLORY, "games")), MALLORY)
    text = replay_cli(server.game("ac-1").record, tmp_path)
    assert f"block {MALLORY} by {MOD}: abusive mail" in text and f"unblock {MALLORY}" in text


def test_end_show_list_and_resend(server: ModServer, tmp_path: Path) -> None:
    table = Table(server)
    table.take(start(server))
    server.submit(server.mail(CAROL, "observe ac-1"))
    table.play(3)
    listing = text_of(to(server.admin("admin list active"), MOD)[0])
    assert "ac-1" in listing and ALICE in listing
    assert "No game matches" in text_of(to(server.admin("admin list over"), MOD)[0])
    out = server.admin("admin resend ac-1 lost mail")
    assert len(to(out, ALICE)) == len(to(out, BOB)) == len(to(out, CAROL)) == 1
    out = server.admin("admin end ac-1 white abandoned by black")
    for address in (ALICE, BOB, CAROL):
        mail = to(out, address)[0]
        assert headline(mail) == "Game over: ended by a moderator; " + (
            "you win" if address == BOB else f"{BOB} wins")
        assert "Final scores" in text_of(mail)
        if address != CAROL:
            assert "Reason: abandoned by black" in text_of(mail)
    row = server.game("ac-1")
    assert row.status == "over" and row.to_move is None
    assert row.record["result"]["reason"] == "moderator" and row.record["result"]["winners"] == ["white"]
    assert [a["action"] for a in row.record["actions"]] == ["resend", "end"]
    assert "only running games" in text_of(to(server.admin("admin end ac-1 draw"), MOD)[0])
    text = replay_cli(row.record, tmp_path)
    assert f"--- moderator action at ply 3: end: white wins by {MOD}: abandoned by black" in text
    shown = text_of(to(server.admin("admin show ac-1"), MOD)[0])
    assert "status over" in shown and "Observers: carol@example.org" in shown
    assert "This game has no hidden information" in shown and "end: white wins" in shown
    # a rollback brings an ended game back to life
    out = server.admin("admin rollback ac-1 1 the end was a mistake")
    row = server.game("ac-1")
    assert row.status == "active" and "result" not in row.record and row.to_move == "black"


def test_show_reveals_hidden_information_only_to_the_moderator(server: ModServer) -> None:
    table = Table(server)
    table.take(start(server, "space-truckin"))
    game_id = server.store.list_games()[0].id
    shown = to(server.admin(f"admin show {game_id}"), MOD)[0]
    pile = server.game(game_id).record["setup"]["pile"]
    assert "Hidden information" in text_of(shown) and pile[0] in text_of(shown)
    assert attached_record(shown) is None  # records go with game-over mails and 'record' only
    asked = to(server.submit(reply_to(table.newest[ALICE], ALICE, f"record {game_id}")), ALICE)[0]
    assert "pile" not in attached_record(asked)["setup"]
    assert all(json.dumps(pile[-3:]) not in text_of(m) + html_of(m) for _, m in table.everything)


def test_pause_resume_and_deadline(server: ModServer, tmp_path: Path) -> None:
    table = Table(server)
    table.take(start(server))
    when = (server.clock.now() + timedelta(days=5)).strftime("%Y-%m-%dT%H:%M")
    out = server.admin(f"admin deadline ac-1 {when} travel")
    assert "must move by" in text_of(to(out, ALICE)[0])
    row = server.game("ac-1")
    assert row.deadline_at == datetime.strptime(when, "%Y-%m-%dT%H:%M").replace(tzinfo=UTC)
    out = server.admin("admin pause ac-1 family emergency")
    assert "paused" in text_of(to(out, BOB)[0]) and "family emergency" in text_of(to(out, BOB)[0])
    assert server.game("ac-1").deadline_at is None
    assert "already paused" in text_of(to(server.admin("admin pause ac-1"), MOD)[0])
    server.clock.advance(days=2)
    out = server.admin("admin resume ac-1")
    resumed = server.game("ac-1")
    assert resumed.deadline_at == row.deadline_at + timedelta(days=2)
    assert [a["action"] for a in resumed.record["actions"]] == ["deadline", "pause", "resume"]
    past = text_of(to(server.admin("admin deadline ac-1 2001-01-01"), MOD)[0])
    assert "in the past" in past
    text = replay_cli(resumed.record, tmp_path)
    assert "--- moderator action at ply 0: pause by mod@example.org: family emergency" in text


STOPPED = {
    "en": "No deadline for now: your clock is stopped (a moderator paused the game). You will be told "
          "when it runs again.",
    "de": "Vorerst keine Frist: deine Uhr ist angehalten (ein Moderator hat das Spiel pausiert). Du "
          "erfährst, wann sie wieder läuft.",
    "sk": "Zatiaľ žiadny termín: tvoje hodiny stoja (moderátor hru pozastavil). Dozvieš sa, keď sa znova "
          "rozbehnú.",
}
DEADLINE = {"en": "Deadline for your move:", "de": "Frist für deinen Zug:", "sk": "Termín tvojho ťahu:"}


@pytest.mark.parametrize("language", ["en", "de", "sk"])
def test_a_move_in_a_paused_game_says_the_clock_is_stopped(server: ModServer, language: str) -> None:
    """Alice moves while a moderator has paused the game: Bob's "your move" mail has no deadline
    and says that his clock is stopped, and why; after the resume his mails have a deadline again."""
    with server.store.transaction() as tx:
        tx.set_player(ALICE, {"language": language})
        tx.set_player(BOB, {"language": language})
    out = start(server)
    alice = to(out, ALICE)[0]
    assert DEADLINE[language] in " ".join(text_of(alice).split())
    server.admin("admin pause ac-1 family emergency")
    state = replay_record(server.game("ac-1").record)
    out = server.submit(reply_to(alice, ALICE, state.move_text(state.legal_moves()[0])))
    bob = to(out, BOB)[0]
    said = " ".join(text_of(bob).split())
    assert STOPPED[language] in said and DEADLINE[language] not in said
    assert server.game("ac-1").deadline_at is None
    server.admin("admin resume ac-1")
    state = replay_record(server.game("ac-1").record)
    out = server.submit(reply_to(bob, BOB, state.move_text(state.legal_moves()[0])))
    said = " ".join(text_of(to(out, ALICE)[0]).split())
    assert DEADLINE[language] in said and STOPPED[language] not in said


def test_replace_an_invited_player_sends_the_new_one_an_invitation(server: ModServer) -> None:
    out = server.submit(server.mail(ALICE, f"new alien-city with {BOB} as black"))
    out = server.admin(f"admin replace ac-1 white {DAVE} wrong address")
    invitation = to(out, DAVE)[0]
    assert headline(invitation) == "Invitation to Alien City (ac-1)"
    assert seat_token_in(server, invitation) == ("ac-1", "white")
    out = server.submit(reply_to(invitation, DAVE, "accept"))
    assert headline(to(out, ALICE)[0]) == "Your move (move 1). Game ac-1 has started."
    assert server.game("ac-1").status == "active"
