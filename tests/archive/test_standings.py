"""Standings on hand-made results; the expected Elo values were worked out by hand (see comments)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pbem.community.standings import compute, expected
from pbem.store.base import GameRow, Seat, Store
from tests.archive.conftest import Cli, fill

DAY = datetime(2026, 3, 1, tzinfo=UTC)


def game(game_id: str, day: int, people: list[str], winners: list[str], status: str = "over",
         reason: str = "scored") -> GameRow:
    name = "alien-city" if game_id.startswith("ac") else "space-truckin"
    seats = ["black", "white"] if name == "alien-city" else ["red", "blue", "green", "yellow", "white"]
    seats = seats[: len(people)]
    record = {"format": "pbem-record/1", "game": name, "setup": {}, "moves": [],
              "players": {s: {"email": p} for s, p in zip(seats, people, strict=True)},
              "result": {"reason": reason, "winners": winners}}
    return GameRow(id=game_id, game=name, status=status, record=record,
                   seats=[Seat(s, p) for s, p in zip(seats, people, strict=True)],
                   created_at=DAY, finished_at=DAY + timedelta(days=day))


def table_of(rows: list[GameRow], name: str) -> dict[str, tuple[int, int, int, int, float]]:
    return {s.player: (s.games, s.wins, s.losses, s.draws, round(s.rating, 2))
            for s in compute(rows)[name]}


# Given out of finishing order on purpose: standings apply games in the order they finished.
TWO_PLAYER = [
    game("ac-3", 3, ["a", "c"], ["black", "white"]),  # draw
    game("ac-1", 1, ["a", "b"], ["black"]),
    game("ac-2", 2, ["b", "c"], ["black"]),
    game("ac-4", 4, ["a", "b"], [], status="active"),  # not finished: ignored
    game("ac-5", 5, ["c", "a"], [], status="declined"),
]


def test_expected_score() -> None:
    assert expected(1500, 1500) == 0.5
    assert expected(1900, 1500) == pytest.approx(1 / (1 + 10 ** (-1)))  # 400 points: 10 to 1


def test_two_player_elo_by_hand() -> None:
    # ac-1, a beats b, both 1500: E = 0.5, a 1500 + 32 * 0.5 = 1516, b 1484.
    # ac-2, b (1484) beats c (1500): E_b = 1 / (1 + 10^(16/400)) = 1 / 2.096478 = 0.476990,
    #   b = 1484 + 32 * 0.523010 = 1500.74, c = 1500 - 16.736 = 1483.26.
    # ac-3, a (1516) draws c (1483.26): E_a = 1 / (1 + 10^(-32.74/400)) = 0.546972,
    #   a = 1516 + 32 * (0.5 - 0.546972) = 1514.50, c = 1483.26 + 1.503 = 1484.77.
    assert table_of(TWO_PLAYER, "alien-city") == {
        "a": (2, 1, 0, 1, 1514.50),
        "b": (2, 1, 1, 0, 1500.74),
        "c": (2, 0, 1, 1, 1484.77),
    }
    assert [s.player for s in compute(TWO_PLAYER)["alien-city"]] == ["a", "b", "c"]


def test_multiplayer_pairwise_elo_by_hand() -> None:
    rows = [
        # 3 players, x wins, all at 1500: weight 32/2 = 16; x +16 * (0.5 + 0.5) = 1516,
        # y and z: 16 * (-0.5 against x, 0 against each other) = 1492.
        game("st-1", 1, ["x", "y", "z"], ["red"]),
        # 4 players, p and q share the win: weight 32/3; p: 0 against q, +0.5 against r and s,
        # so +10.67 = 1510.67; r and s: -10.67 = 1489.33.
        game("st-2", 2, ["p", "q", "r", "s"], ["red", "blue"]),
        # x 1516, y 1492, z 1492 again, y wins. E(y, x) = 1 / (1 + 10^(24/400)) = 0.465478.
        # y: 16 * ((1 - 0.465478) + (1 - 0.5)) = +16.55 -> 1508.55
        # x: 16 * ((0 - 0.534522) + (0.5 - 0.534522)) = -9.10 -> 1506.90
        # z: 16 * ((0 - 0.5) + (0.5 - 0.465478)) = -7.45 -> 1484.55
        game("st-3", 3, ["x", "y", "z"], ["blue"]),
    ]
    assert table_of(rows, "space-truckin") == {
        "x": (2, 1, 1, 0, 1506.90),
        "y": (2, 1, 1, 0, 1508.55),
        "z": (2, 0, 2, 0, 1484.55),
        "p": (1, 1, 0, 0, 1510.67),
        "q": (1, 1, 0, 0, 1510.67),
        "r": (1, 0, 1, 0, 1489.33),
        "s": (1, 0, 1, 0, 1489.33),
    }


def test_forfeits_and_resignations_are_losses_and_games_are_rated_separately() -> None:
    rows = [game("ac-1", 1, ["d", "e"], ["white"], reason="forfeit"),
            game("ac-2", 2, ["e", "d"], ["white"], reason="resigned"),
            game("st-1", 1, ["d", "e"], ["red"])]
    standings = compute(rows)
    assert table_of(rows, "alien-city")["d"][:4] == (2, 1, 1, 0)
    assert table_of(rows, "alien-city")["e"][:4] == (2, 1, 1, 0)
    assert table_of(rows, "space-truckin")["d"] == (1, 1, 0, 0, 1516.0)
    assert compute(rows, "space-truckin").keys() == {"space-truckin"}
    assert set(standings) == {"alien-city", "space-truckin"}


def test_cli_standings(tmp_path: Path, store: Store) -> None:
    fill(store, TWO_PLAYER)
    cli = Cli(tmp_path, tmp_path / "source.sqlite3")
    code, out, err = cli("standings", "--json")
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert "K=32" in data["formula"]
    first = data["games"]["alien-city"][0]
    assert first == {"player": "a", "game": "alien-city", "games": 2, "wins": 1, "losses": 0, "draws": 1,
                     "rating": 1514.5}
    assert data["reliability"]["a"]["finished"] == 2 and data["reliability"]["a"]["lost_on_time"] == 0
    code, out, _ = cli("standings", "--game", "alien-city")
    assert code == 0 and "Alien City" in out and " 1514   100 %\n" in out and "Elo" in out
    assert "RATING ON TIME" in out and "the share not lost on time" in out
    code, out, _ = cli("standings", "--game", "space-truckin")
    assert code == 0 and "No finished games of Space Truckin' yet." in out
    code, _, err = cli("standings", "--game", "go")
    assert code == 2 and "unknown game 'go'" in err


def test_the_mail_table_keeps_78_columns_in_every_language() -> None:
    """The heads of German and Slovak are longer than the English ones: in a mail the name column
    gives way (a long address is cut, marked "…"); the terminal shows every name whole."""
    from pbem.clocks.reliability import Reliability
    from pbem.community.standings import Standing, table_text
    from pbem.i18n import speaking

    long = "a.very.long.address.of.somebody@example-company.org"
    lines = [Standing(long, "alien-city", 3, 2, 1, 0, 1516.0),
             Standing("bo@x.org", "alien-city", 3, 1, 2, 0, 1484.0)]
    reliable = {long: Reliability(long, 3, 1)}
    for language in ("en", "de", "sk"):
        with speaking(language):
            table = table_text("alien-city", lines, reliable, width=78).split("\n")
        assert max(len(line) for line in table) <= 78, (language, table)
        assert "…" in table[1] and "bo@x.org" in table[2]
    assert long in table_text("alien-city", lines, reliable)  # pbem standings on the terminal
