"""Players' take-backs: asked with ``undo GAME``, done only when every opponent accepts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pbem.cli.mailbox import reply_to
from pbem.clocks import log as cl
from pbem.record import replay_record, write_record
from tests.moderation.helpers import ALICE, BOB, ModServer, Table, is_your_move, start
from tests.server.harness import headline, text_of, to


@pytest.fixture
def server(tmp_path: Path):
    srv = ModServer(tmp_path)
    yield srv
    srv.close()


def ask_undo(server: ModServer, table: Table, address: str) -> None:
    out = table.take(server.submit(reply_to(table.newest[address], address, "undo")))
    assert headline(to(out, address)[0]).startswith("Undo asked in "), text_of(to(out, address)[0])


def test_undo_accepted_takes_the_move_back(server: ModServer, tmp_path: Path) -> None:
    table = Table(server)
    table.take(start(server))
    first = table.play(2)
    before = server.game("ac-1").record
    assert [m["move"] for m in before["moves"]] == first
    ask_undo(server, table, BOB)
    request = server.game("ac-1").record["undo_request"]
    assert request["seat"] == "white" and request["moves"] == 1 and request["ply"] == 2
    asked = table.newest[ALICE]
    assert headline(asked) == f"white ({BOB}) asks to take back a move in ac-1"
    assert "accept undo ac-1" in text_of(asked)
    # the asker cannot accept for the others
    own = text_of(to(server.submit(reply_to(table.newest[BOB], BOB, "accept undo ac-1")), BOB)[0])
    assert "your opponents must accept" in own
    out = table.take(server.submit(reply_to(asked, ALICE, "accept undo")))
    taken = "1 move taken back at white's request, accepted by black; game ac-1 is at move 1 again"
    assert headline(to(out, ALICE)[0]) == f"{taken}; white (bob@example.org) is to move."
    assert headline(to(out, BOB)[0]) == f"Your move (move 2). {taken}."
    row = server.game("ac-1")
    assert [m["move"] for m in row.record["moves"]] == first[:1]
    assert "undo_request" not in row.record
    action = row.record["actions"][-1]
    assert action["action"] == "undo" and action["by"] == BOB and action["accepted_by"] == [ALICE]
    assert action["removed"][0]["move"] == first[1] and action["entries"] == 1
    # the game goes on from there, and the record replays to what the server holds
    table.play(3)
    row = server.game("ac-1")
    assert replay_record(row.record).ply == 4
    # the clock too: the turn the undo cut short ended without a move, the next one began
    assert "taken back" in [e.get("why") for e in row.record["clock_log"]]
    assert cl.check(row.record) == [] and cl.final_deadline(row.record) == row.deadline_at
    path = tmp_path / "ac-1.json"
    write_record(path, row.record)
    text = subprocess.run([sys.executable, "-m", "pbem.cli", "replay", str(path)], capture_output=True,
                          text=True, check=True).stdout
    assert f"--- players' action at ply 2: undo 1 move by {BOB} (accepted by {ALICE})" in text
    assert text.index("=== ply 1") < text.index("players' action") < text.index("=== ply 2")


def test_undo_is_asked_in_each_readers_words(server: ModServer) -> None:
    """The move to take back in the reader's language (it came in the record's English), and who
    must accept with the verb agreeing ("until black accepts", not "accept(s)")."""
    table = Table(server)
    table.take(start(server))
    first = table.play(2)
    table.take(server.submit(reply_to(table.newest[ALICE], ALICE, "set language de")))
    out = table.take(server.submit(reply_to(table.newest[BOB], BOB, "undo")))
    mine = " ".join(text_of(to(out, BOB)[0]).split())
    assert f"your last move ({first[1]}). Nothing is taken back until black accepts;" in mine, mine
    asked = " ".join(text_of(to(out, ALICE)[0]).split())
    kind, *_rest, lot = first[1].split()
    german = {"tower": "Turm", "dome": "Kuppel"}[kind]
    assert first[1] not in asked and f"({german} " in asked, asked
    assert f" {lot})" in asked


def test_declined_undo_and_a_move_that_makes_it_moot(server: ModServer) -> None:
    table = Table(server)
    table.take(start(server))
    table.play(2)
    ask_undo(server, table, BOB)
    out = table.take(server.submit(reply_to(table.newest[ALICE], ALICE, "decline undo ac-1")))
    assert "declined" in text_of(to(out, BOB)[0])
    assert "undo_request" not in server.game("ac-1").record
    assert len(server.game("ac-1").record["moves"]) == 2
    # asked again; alice moves instead: the request lapses
    ask_undo(server, table, BOB)
    alice_board = next(m for rcpt, m in reversed(table.everything)
                       if rcpt == ALICE and is_your_move(m))
    table.newest[ALICE] = alice_board
    table.play(1)
    assert "undo_request" not in server.game("ac-1").record
    late = text_of(to(server.submit(reply_to(table.newest[ALICE], ALICE, "accept undo ac-1")), ALICE)[0])
    assert "nobody has asked" in late
    assert len(server.game("ac-1").record["moves"]) == 3
    assert "actions" not in server.game("ac-1").record


def test_undo_needs_a_move_of_ones_own_and_the_token(server: ModServer) -> None:
    table = Table(server)
    table.take(start(server))
    text = text_of(to(server.submit(reply_to(table.newest[BOB], BOB, "undo")), BOB)[0])
    assert "no move" in text
    table.play(1)
    assert server.submit(server.mail(ALICE, "undo ac-1")) != []  # no token: only the seat's notice
    assert "undo_request" not in server.game("ac-1").record


def test_space_truckin_undo_keeps_the_draw_of_the_kept_position(server: ModServer) -> None:
    table = Table(server)
    table.take(start(server, "space-truckin"))
    game_id = server.store.list_games()[0].id
    table.play(3)
    record = server.game(game_id).record
    moves = record["moves"]
    mover_seat = [e for e in moves if "move" in e][-1]["seat"]
    mover = next(s.email for s in server.game(game_id).seats if s.seat == mover_seat)
    other = ALICE if mover == BOB else BOB
    last_move = max(i for i, e in enumerate(moves) if "move" in e)
    kept = moves[:last_move]
    assert "chance" in kept[-1]
    ask_undo(server, table, mover)
    table.take(server.submit(reply_to(table.newest[other], other, "accept undo")))
    after = server.game(game_id).record
    assert after["moves"] == kept
    assert after["actions"][-1]["removed"] == moves[last_move:]
    state = replay_record(after)
    assert state.ply == 2 and state.to_move == mover_seat
    table.play(2)
    assert replay_record(server.game(game_id).record).ply == 4
