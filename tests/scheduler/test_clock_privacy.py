"""A player's vacations and allowance are theirs: the record the others get (a game mail's attachment,
``pbem archive export --public``, the archive site) keeps every counted time of the clock log, so that
``pbem replay --clock`` still agrees, but not the player's holiday dates nor their allowance left."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from pbem.archive.export import archive_record
from pbem.archive.search import make_filters
from pbem.archive.site import write_site
from pbem.cli import main
from pbem.cli.mailbox import reply_to
from pbem.clocks import log as cl
from pbem.record import replay_record
from tests.scheduler.conftest import ALICE, BOB, Clocked
from tests.server.harness import headline, text_of, to
from tests.server.players import attached_record

OBSERVER = "olga@example.org"


def _private_marks(record: dict) -> list[str]:
    """What of the players' own business a record shows: vacation dates outside the turns, the
    named reason ('away'), the allowance days spent or left."""
    text = json.dumps(record.get(cl.LOG, []))
    found = [word for word in ('"away"', '"left_days"', '"days"') if word in text]
    found += [date for date in ("2027-03-01", "2027-03-05", "2026-12-2") if date in text]
    return found


def _replay_clock(tmp_path: Path, record: dict, capsys: pytest.CaptureFixture[str]) -> str:
    path = tmp_path / "given.json"
    path.write_text(json.dumps(record))
    capsys.readouterr()
    assert main(["replay", "--clock", str(path)]) == 0
    return capsys.readouterr().out


def test_the_others_never_read_a_players_vacation_dates_yet_the_clock_replays(
        server: Clocked, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server.config.deadlines.vacation_days_per_year = 30
    game_id, your_move = server.start_alien_city()  # Fri 20 Nov 2026 10:00 UTC, 7 days a move
    server.submit(server.mail(OBSERVER, f"observe {game_id}"))
    # Alice, to move, plans two vacations: one in this turn, one next spring
    for line in ("vacation 2026-11-23..2026-11-24", "vacation 2027-03-01..2027-03-05"):
        out = server.submit(reply_to(your_move, ALICE, line))
        assert headline(to(out, ALICE)[0]) == "Vacation set"
    # Bob plans his Christmas; he is not to move
    token = server.processor.token_for(game_id, "white")
    out = server.submit(server.mail(BOB, f"vacation 2026-12-24..2026-12-26\ntoken {token}"))
    assert headline(to(out, BOB)[0]) == "Vacation set"
    # Alice moves on Wednesday, after her two days away; Bob's turn begins
    server.clock.advance(days=5)
    state = replay_record(server.game(game_id).record)
    out = server.submit(reply_to(your_move, ALICE, state.move_text(state.legal_moves()[0])))
    bob_move = to(out, BOB)[0]
    # Bob lets his time run out: a day of his allowance is spent, and everyone is told
    server.clock.set(server.game(game_id).deadline_at + timedelta(minutes=5))
    late = server.run()
    assert headline(to(late, BOB)[0]) == f"Your time ran out in {game_id}: a vacation day was spent for you"
    assert "(26 left this year)" in " ".join(text_of(to(late, BOB)[0]).split())
    # he moves: Alice's second turn begins, her spring holiday ahead of it
    state = replay_record(server.game(game_id).record)
    out = server.submit(reply_to(bob_move, BOB, state.move_text(state.legal_moves()[0])))
    assert headline(to(out, ALICE)[0]).startswith("Your move (move 3).")

    row = server.game(game_id)
    full = archive_record(row)  # the moderators' backup keeps everything
    assert '"away"' in json.dumps(full[cl.LOG]) and "2027-03-01" in json.dumps(full[cl.LOG])
    assert any(e.get("left_days") == 26 for e in full[cl.LOG])

    # what Alice reads of Bob's allowance, and Bob of Alice's holidays: the record attached
    out = server.submit(server.mail(BOB, f"record {game_id}"))
    given = attached_record(to(out, BOB)[0])
    assert given is not None and _private_marks(given) == []
    # Alice's two days away in her own turn are still the time her clock did not run
    first_turn = [e for e in given[cl.LOG] if e["event"] == "off" and e["seat"] == "black"]
    assert [e["intervals"] for e in first_turn] == [[["2026-11-23T00:00:00Z", "2026-11-25T00:00:00Z"]]]
    # nobody's timezone where it decides nothing (all hours count in this game)
    assert all("zone" not in e for e in given[cl.LOG] if e["event"] == "start")
    replayed = _replay_clock(tmp_path, given, capsys)
    assert "black's clock did not run: 2026-11-23 00:00:00 UTC to 2026-11-25 00:00:00 UTC" in replayed
    assert "vacation" not in replayed.split("=== clock ===")[1].split("time ran out")[0]
    assert "every bank and deadline of" in replayed and "agrees" in replayed
    # the counted time is the moderators' to the second
    moves = lambda log: [(e["event"], e.get("used"), e.get("left"), e.get("deadline"))  # noqa: E731
                         for e in log if e["event"] != "off"]
    assert moves(given[cl.LOG]) == [(e["event"], e.get("used"), e.get("left"), e.get("deadline"))
                                    for e in full[cl.LOG] if e["event"] != "away"]

    # the public export and the archive site: the same
    assert _private_marks(archive_record(row, public=True)) == []
    site = tmp_path / "site"
    write_site(server.store, site, make_filters())
    published = json.loads((site / "games" / f"{game_id}.json").read_text())
    assert _private_marks(published) == []
    assert "agrees" in _replay_clock(tmp_path, published, capsys)
