"""Searching the archive by player, game, dates and status: in the store, on the command line."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pbem.archive.search import FilterError, Filters, make_filters, result_text, search, table
from pbem.store.base import GameRow, Seat, Store
from tests.archive.conftest import Cli, fill

ALICE, BOB, CAROL = "alice@example.org", "bob@example.org", "carol@example.org"


def row(game_id: str, game: str, people: list[str], finished: datetime | None, status: str = "over",
        winners: list[str] | None = None) -> GameRow:
    seats = (["black", "white"] if game == "alien-city" else ["red", "blue", "green"])[: len(people)]
    record = {"format": "pbem-record/1", "game": game, "id": game_id, "setup": {}, "moves": [],
              "players": {s: {"name": "", "email": e} for s, e in zip(seats, people, strict=True)}}
    if status == "over":
        record["result"] = {"reason": "scored", "winners": winners or [seats[0]],
                            "at": finished.strftime("%Y-%m-%dT%H:%M:%SZ") if finished else None}
    return GameRow(id=game_id, game=game, status=status, record=record,
                   seats=[Seat(s, e) for s, e in zip(seats, people, strict=True)],
                   created_at=datetime(2026, 1, 1, tzinfo=UTC), finished_at=finished)


def at(day: str, hour: int = 12, minute: int = 0) -> datetime:
    return datetime.fromisoformat(day).replace(hour=hour, minute=minute, tzinfo=UTC)


@pytest.fixture
def games(store: Store) -> Store:
    fill(store, [
        row("ac-1", "alien-city", [ALICE, BOB], at("2026-03-01")),
        row("ac-2", "alien-city", [BOB, CAROL], at("2026-03-31", 23, 59)),
        row("ac-3", "alien-city", [CAROL, ALICE], at("2026-04-01", 0, 0)),
        row("st-1", "space-truckin", [ALICE, BOB, CAROL], at("2026-03-15")),
        row("ac-4", "alien-city", [ALICE, CAROL], None, status="active"),  # dated by creation: Jan 1
    ])
    return store


def ids(store: Store, **spec: str) -> list[str]:
    return [r.id for r in search(store, make_filters(**spec))]


def test_filters(games: Store) -> None:
    assert ids(games) == ["ac-3", "ac-2", "st-1", "ac-1", "ac-4"]  # newest first
    assert ids(games, player=ALICE) == ["ac-3", "st-1", "ac-1", "ac-4"]
    assert ids(games, player="  Alice@Example.ORG ") == ["ac-3", "st-1", "ac-1", "ac-4"]
    assert ids(games, game="space-truckin") == ["st-1"]
    assert ids(games, game="Alien-City", player=BOB) == ["ac-2", "ac-1"]
    # both ends inclusive, whole UTC days
    assert ids(games, date_from="2026-03-01", date_to="2026-03-31") == ["ac-2", "st-1", "ac-1"]
    assert ids(games, date_from="2026-04-01") == ["ac-3"]
    assert ids(games, date_to="2026-02-28") == ["ac-4"]
    assert ids(games, status="active") == ["ac-4"]
    assert ids(games, player=CAROL, game="alien-city", date_from="2026-03-02", status="over") == [
        "ac-3", "ac-2"]


def test_python_matching_agrees_with_the_store(games: Store) -> None:
    everything = games.list_games()
    for spec in ({"player": ALICE}, {"game": "alien-city", "date_to": "2026-03-31"},
                 {"date_from": "2026-03-15", "date_to": "2026-03-15"}, {"status": "over"}):
        filters = make_filters(**spec)
        assert sorted(r.id for r in everything if filters.matches(r)) == sorted(ids(games, **spec))


@pytest.mark.parametrize(("spec", "message"), [
    ({"date_from": "2026-13-01"}, "is not a date"),
    ({"date_to": "1.4.2026"}, "write YYYY-MM-DD"),
    ({"game": "chess"}, "unknown game 'chess'"),
    ({"status": "finished"}, "unknown status"),
    ({"date_from": "2026-05-01", "date_to": "2026-04-01"}, "is empty"),
])
def test_bad_filters_say_what_would_do(spec: dict[str, str], message: str) -> None:
    with pytest.raises(FilterError, match=message):
        make_filters(**spec)


def test_result_texts() -> None:
    draw = row("ac-9", "alien-city", [ALICE, BOB], at("2026-03-01"), winners=["black", "white"])
    assert result_text(draw.record, "over") == "draw: black, white"
    shared = row("st-9", "space-truckin", [ALICE, BOB, CAROL], at("2026-03-01"), winners=["red", "blue"])
    assert result_text(shared.record, "over") == "shared win: red, blue"
    resigned = replace(draw, record={**draw.record, "result": {
        "reason": "resigned", "resigned": "white", "winners": ["black"]}})
    assert result_text(resigned.record, "over") == "white resigned; black wins"
    assert result_text({"result": {"reason": "forfeit", "winners": ["red"]}}, "over") == "red wins (forfeit)"
    assert "ac-9" in table([draw]) and "black alice@example.org" in table([draw])
    assert table([]) == "(no games)"
    assert Filters().describe() == "all games"


def test_cli_search(tmp_path: Path, games: Store) -> None:
    cli = Cli(tmp_path, tmp_path / "source.sqlite3")
    code, out, err = cli("archive", "search", "--player", ALICE, "--game", "alien-city",
                         "--from", "2026-03-01", "--to", "2026-04-01", "--json")
    assert (code, err) == (0, "")
    found = json.loads(out)
    assert [g["id"] for g in found] == ["ac-3", "ac-1"]
    assert found[0]["players"] == {"black": CAROL, "white": ALICE}
    assert found[0]["finished"] == "2026-04-01T00:00:00Z" and found[0]["status"] == "over"
    code, out, _ = cli("archive", "search", "--player", BOB)
    assert code == 0 and "ac-2" in out and "st-1" in out and "ac-3" not in out
    code, out, _ = cli("archive", "search", "--limit", "2")
    assert code == 0 and "the newest 2 shown" in out
    code, out, err = cli("archive", "search", "--from", "2026-02-30")
    assert code == 2 and out == "" and "pbem archive search: '2026-02-30' is not a date" in err
    assert "Traceback" not in err


def test_walking_pages_by_date_keeps_ties_and_order(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    from pbem.archive import search as module

    same = at("2026-05-05")
    rows = [row(f"ac-{i}", "alien-city", [ALICE, BOB], same if i % 2 else at("2026-05-01", 0, i))
            for i in range(1, 15)]
    fill(store, rows)
    monkeypatch.setattr(module, "PAGE", 3)  # seven games share one instant: pages cut through them
    walked = [r.id for r in module.iter_games(store, make_filters())]
    assert walked == [r.id for r in search(store, make_filters())]
    assert sorted(walked) == sorted(r.id for r in rows) and len(walked) == 14
    assert [r.id for r in module.iter_games(store, make_filters(date_to="2026-05-04"))] == [
        r.id for r in search(store, make_filters(date_to="2026-05-04"))]
