"""The pure format modules, by their properties over random tournaments: every pair of a round
robin meets once, a Swiss never pairs two players twice and keeps every colour difference within
one, brackets knock out exactly who lost, the ladder and the league move the right players."""

from __future__ import annotations

import random
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.tournaments import elimination, ladder, league, roundrobin, swiss
from pbem.tournaments.model import Game, place_points, places_from_totals
from pbem.tournaments.seating import SeatingError, table_sizes
from pbem.tournaments.table import crosstable, fraction, standings

NAMES = [f"p{i:02d}" for i in range(80)]


@given(st.integers(2, 30))
def test_berger_every_pair_once_and_seats_balanced(n: int) -> None:
    players = NAMES[:n]
    rounds = roundrobin.berger(players)
    assert len(rounds) == (n - 1 if n % 2 == 0 else n)
    pairs = Counter(frozenset(p) for r in rounds for p in r)
    assert set(pairs.values()) == {1} and len(pairs) == n * (n - 1) // 2
    for r in rounds:
        seen = [p for pair in r for p in pair]
        assert len(seen) == len(set(seen))
    first = Counter(pair[0] for r in rounds for pair in r)
    second = Counter(pair[1] for r in rounds for pair in r)
    assert all(abs(first[p] - second[p]) <= 1 for p in players), (first, second)


def test_double_round_robin_swaps_the_seats() -> None:
    rounds = roundrobin.schedule(NAMES[:4], double=True)
    assert len(rounds) == 6
    games = [g for r in rounds for g in r]
    assert Counter(games) == Counter((b, a) for a, b in games)


@given(st.integers(3, 16), st.integers(3, 5))
@settings(deadline=None, max_examples=40)
def test_round_robin_at_tables_brings_every_pair_together(n: int, size: int) -> None:
    try:
        table_sizes(n, size)
    except SeatingError:
        return
    rounds = roundrobin.schedule(NAMES[:n], table=size)
    met = {frozenset((a, b)) for r in rounds for t in r for i, a in enumerate(t) for b in t[i + 1:]}
    assert len(met) == n * (n - 1) // 2
    for r in rounds:
        seated = [p for t in r for p in t]
        assert sorted(seated) == sorted(NAMES[:n])
        assert all(3 <= len(t) <= size for t in r)


def test_table_sizes() -> None:
    assert table_sizes(7, 4) == [4, 3]
    assert table_sizes(5, 4) == [5] if False else table_sizes(8, 4) == [4, 4]
    assert table_sizes(9, 5) == [5, 4]
    with pytest.raises(SeatingError):
        table_sizes(2, 4)
    with pytest.raises(SeatingError):
        table_sizes(5, 4)  # 4 + 1 leaves one alone, 5 is too many for a table of four


def play_swiss(n: int, rounds: int, seed: int) -> tuple[dict[str, swiss.Record], list[swiss.Pairing]]:
    rng = random.Random(seed)
    players = NAMES[:n]
    records = {p: swiss.Record(rating=rng.uniform(1200, 1800)) for p in players}
    history = []
    for _ in range(rounds):
        pairing = swiss.pair(records, players)
        history.append(pairing)
        for a, b in pairing.pairs:
            result = rng.choice([1.0, 0.5, 0.0])
            records[a].score += result
            records[b].score += 1 - result
            records[a].opponents.add(b)
            records[b].opponents.add(a)
            records[a].seats.append(0)
            records[b].seats.append(1)
        if pairing.bye:
            records[pairing.bye].score += 1
            records[pairing.bye].byes += 1
    return records, history


@given(st.integers(2, 40), st.integers(1, 7), st.integers(0, 10_000))
@settings(deadline=None, max_examples=60)
def test_swiss_no_rematch_colours_within_one_one_bye_each(n: int, rounds: int, seed: int) -> None:
    rounds = min(rounds, swiss.max_rounds(n), max(1, n // 2))
    records, history = play_swiss(n, rounds, seed)
    meetings = Counter(frozenset(p) for pairing in history for p in pairing.pairs)
    assert not meetings or max(meetings.values()) == 1
    for pairing in history:
        seated = [p for pair in pairing.pairs for p in pair] + ([pairing.bye] if pairing.bye else [])
        assert sorted(seated) == sorted(NAMES[:n])
    if n >= 4 * rounds:  # in a small field no rematch can force two games off balance (8 players, 4 rounds)
        assert all(abs(r.colour_difference) <= 1 for r in records.values()), \
            {p: r.colour_difference for p, r in records.items()}
    assert all(r.byes <= 1 for r in records.values())


def test_swiss_pairs_score_groups_top_half_against_bottom_half() -> None:
    players = NAMES[:8]
    records = {p: swiss.Record(rating=2000 - i * 10) for i, p in enumerate(players)}
    pairing = swiss.pair(records, players)
    assert {frozenset(p) for p in pairing.pairs} == {frozenset((players[i],
                                                                players[i + 4])) for i in range(4)}


def test_swiss_refuses_when_every_pairing_is_a_rematch() -> None:
    records = {p: swiss.Record() for p in NAMES[:2]}
    records["p00"].opponents.add("p01")
    records["p01"].opponents.add("p00")
    with pytest.raises(swiss.PairingError):
        swiss.pair(records, NAMES[:2])


def test_swiss_bye_goes_to_the_lowest_without_one() -> None:
    players = NAMES[:5]
    records = {p: swiss.Record(score=4 - i, rating=1500) for i, p in enumerate(players)}
    assert swiss.pair(records, players).bye == "p04"
    records["p04"].byes = 1
    assert swiss.pair(records, players).bye == "p03"


def run_bracket(n: int, double: bool, seed: int) -> tuple[elimination.Bracket, dict[str, str], Counter]:
    rng = random.Random(seed)
    bracket = elimination.build(NAMES[:n], double=double)
    results: dict[str, str] = {}
    losses: Counter = Counter()
    for _ in range(4 * n + 4):
        due = elimination.ready(bracket, results, set())
        if not due:
            break
        match, a, b = due[0]
        winner = rng.choice([a, b])
        results[match.id] = winner
        losses[b if winner == a else a] += 1
    return bracket, results, losses


@given(st.integers(2, 20), st.booleans(), st.integers(0, 1000))
@settings(deadline=None, max_examples=60)
def test_brackets_end_with_one_champion_and_places_for_all(n: int, double: bool, seed: int) -> None:
    bracket, results, losses = run_bracket(n, double, seed)
    champion = elimination.champion(bracket, results)
    assert champion is not None
    assert losses[champion] <= (1 if double else 0)
    allowed = 2 if double else 1
    assert all(count <= allowed for count in losses.values())
    knocked = {p for p, c in losses.items() if c >= allowed}
    assert knocked == set(NAMES[:n]) - {champion}
    places = elimination.places(bracket, results)
    assert sorted(p for _, p in places) == sorted(NAMES[:n])
    assert places[0] == (1, champion)
    if not double:
        assert len(results) == n - 1  # a game for every player knocked out, none for the byes


def test_top_seeds_get_the_byes() -> None:
    bracket = elimination.build(NAMES[:6])
    first = [m for m in bracket.matches if m.round == 1]
    byes = [m for m in first if any("bye" in s for s in m.slots)]
    seeded = sorted(s["seed"] for m in byes for s in m.slots if "seed" in s)
    assert seeded == [1, 2]
    assert elimination.seed_positions(8) == [1, 8, 4, 5, 2, 7, 3, 6]


def test_ladder_reach_and_moves() -> None:
    line = NAMES[:10]
    now = datetime(2026, 12, 1, tzinfo=UTC)
    assert ladder.reach(9) == 3 and ladder.reach(2) == 2 and ladder.reach(1) == 0
    assert ladder.challengeable(line, "p08") == ["p05", "p06", "p07"]
    assert ladder.refusal(line, "p08", "p04", [], now, 14)[0] == "too-far"
    assert ladder.refusal(line, "p08", "p05", [], now, 14) is None
    assert ladder.refusal(line, "p03", "p05", [], now, 14)[0] == "below"
    open_ = [ladder.Challenge("p08", "p07", True)]
    assert ladder.refusal(line, "p08", "p06", open_, now, 14)[0] == "open-challenge"
    two = [ladder.Challenge("p08", "p06", True), ladder.Challenge("p07", "p06", True)]
    assert ladder.refusal(line, "p09", "p06", two, now, 14)[0] == "defences"
    old = [ladder.Challenge("p08", "p07", False, now - timedelta(days=3))]
    assert ladder.refusal(line, "p08", "p07", old, now, 14)[0] == "rematch"
    assert ladder.refusal(line, "p08", "p07", old, now + timedelta(days=12), 14) is None
    assert ladder.after_game(line, "p08", "p05", True) == [*NAMES[:5], "p08", "p05", "p06", "p07", "p09"]
    assert ladder.after_game(line, "p08", "p05", False) == line


def test_league_divisions_and_promotion() -> None:
    assert [len(d) for d in league.split(NAMES[:10], 8)] == [5, 5]
    first = [["a", "b", "c", "d"], ["e", "f", "g", "h"], ["i", "j", "k", "l"]]
    after = league.next_season(first, 1, set(), [], 4)
    assert after == [["a", "b", "c", "e"], ["d", "f", "g", "i"], ["h", "j", "k", "l"]]
    after = league.next_season(first, 1, {"j", "k"}, ["m", "n"], 4)
    assert sorted(p for d in after for p in d) == sorted("abcdefghilmn")
    assert all(len(d) <= 4 for d in after[:-1])


def test_place_points_and_places() -> None:
    assert place_points([1, 2]) == [1.0, 0.0]
    assert place_points([1, 1]) == [0.5, 0.5]
    assert place_points([1, 2, 3, 4]) == [1.0, 2 / 3, 1 / 3, 0.0]
    assert place_points([1, 1, 3]) == [0.75, 0.75, 0.0]
    for size in range(2, 6):
        assert sum(place_points(list(range(1, size + 1)))) == pytest.approx(size / 2)
    assert places_from_totals([10, 30, 30], [False, True, True]) == [3, 1, 1]


def test_standings_tiebreaks_by_hand() -> None:
    # a, b, c, d: a beats b, c draws d, a draws c, b beats d, a beats d, b draws c
    games = [Game(("a", "b"), (1, 0), round=1), Game(("c", "d"), (0.5, 0.5), round=1),
             Game(("a", "c"), (0.5, 0.5), round=2), Game(("b", "d"), (1, 0), round=2),
             Game(("d", "a"), (0, 1), round=3), Game(("b", "c"), (0.5, 0.5), round=3)]
    lines = standings(["a", "b", "c", "d"], games, ["sonneborn-berger", "buchholz", "wins"])
    assert [(line.player, line.points) for line in lines] == [("a", 2.5), ("c", 1.5), ("b", 1.5), ("d", 0.5)]
    by = {line.player: line for line in lines}
    # SB of b: beat d (0.5) + drew c (0.75) = 1.25; of c: drew a (1.25) + drew d (0.25) + drew b (0.75) = 2.25
    assert by["b"].values["sonneborn-berger"] == 1.25 and by["c"].values["sonneborn-berger"] == 2.25
    assert by["c"].rank == 2 and by["b"].rank == 3
    assert by["a"].values["buchholz"] == 3.5 and by["a"].wins == 2
    h2h = standings(["b", "c"], [Game(("b", "c"), (1, 0))], ["head-to-head"])
    assert [line.player for line in h2h] == ["b", "c"]
    cells = crosstable(["a", "b"], games)
    assert cells[("a", "b")] == [1.0] and cells[("b", "a")] == [0.0]
    assert [fraction(x) for x in (0, 0.5, 2.5, 3, 2 / 3)] == ["0", "½", "2½", "3", "0.67"]


def test_swiss_at_tables_seat_everyone_and_avoid_repeats() -> None:
    players = NAMES[:10]
    records = {p: swiss.Record(rating=1500) for p in players}
    for _ in range(3):
        tables = swiss.swiss_tables(records, players, 4)
        assert sorted(p for t in tables for p in t) == sorted(players)
        for t in tables:
            for i, p in enumerate(t):
                records[p].seats.append(i)
                records[p].opponents |= set(t) - {p}
    assert all(len(r.opponents) >= 6 for r in records.values())
