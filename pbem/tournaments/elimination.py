"""Single and double elimination brackets, seeded by rating, with byes for the top seeds.

A bracket is a list of matches; each slot of a match is fed by a seed, by the winner or the loser
of an earlier match, or by nobody (a bye). A match is ready as soon as both its players are
known, and is decided by its games: a drawn game is played again with the seats swapped, once;
if that is drawn too, the higher seed goes through. A match with a bye on one side is won by the
other player without a game; a match with byes on both sides passes a bye on.

Single elimination: the next power of two of places, the seeds placed as usual (1 meets 16, 8
meets 9, ... in round one of sixteen), so the top seeds meet last and the byes go to them.
Double elimination adds a losers' bracket: a player is out after a second lost match; the losers
of each winners' round drop in, in reverse order in alternate rounds so that two players do not
meet again at once; the winners' champion meets the losers' champion in the grand final, and if
the losers' champion wins it, one more match decides (both have then lost once).

Places: the champion, the runner-up, then the players out in the same round share a place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Source = dict[str, Any]  # {"seed": 3} | {"winner": "W1-2"} | {"loser": "W1-2"} | {"bye": True}


@dataclass
class Match:
    id: str  # "W1-3": winners' bracket, round 1, match 3; "L2-1"; "F1", "F2" (grand finals)
    bracket: str  # "W", "L", "F"
    round: int
    slots: tuple[Source, Source]
    order: int = 0  # the order in which matches become due, for listings


@dataclass
class Bracket:
    matches: list[Match]
    seeds: list[str]  # seed 1 first
    double: bool = False

    def by_id(self) -> dict[str, Match]:
        return {m.id: m for m in self.matches}


@dataclass
class Outcome:
    """What is known of a match: its players, once known (None: a bye), and its winner."""

    players: tuple[str | None, str | None] | None = None
    winner: str | None = None
    loser: str | None = None
    decided: bool = False
    games: list[str] = field(default_factory=list)


def seed_positions(size: int) -> list[int]:
    """Seeds (1-based) in bracket order for a bracket of ``size`` (a power of two): 1, 16, 8, 9,
    4, 13, 5, 12, ... for 16."""
    order = [1]
    while len(order) < size:
        total = 2 * len(order) + 1
        order = [x for s in order for x in (s, total - s)]
    return order


def _size(count: int) -> int:
    size = 1
    while size < count:
        size *= 2
    return size


def build(seeds: Sequence[str], double: bool = False) -> Bracket:
    """The bracket for players in seeding order (seed 1 first)."""
    size = max(2, _size(len(seeds)))
    positions = seed_positions(size)
    matches: list[Match] = []
    rounds = size.bit_length() - 1
    order = 0

    def slot(seed: int) -> Source:
        return {"seed": seed} if seed <= len(seeds) else {"bye": True}

    previous = []
    for i in range(size // 2):
        order += 1
        match = Match(f"W1-{i + 1}", "W", 1, (slot(positions[2 * i]), slot(positions[2 * i + 1])), order)
        matches.append(match)
        previous.append(match.id)
    winners_rounds = [previous]
    for r in range(2, rounds + 1):
        current = []
        for i in range(len(previous) // 2):
            order += 1
            match = Match(f"W{r}-{i + 1}", "W", r, ({"winner": previous[2 * i]},
                                                    {"winner": previous[2 * i + 1]}),
                          order)
            matches.append(match)
            current.append(match.id)
        winners_rounds.append(current)
        previous = current
    if not double or rounds < 1:
        return Bracket(matches, list(seeds), double)
    # the losers' bracket
    losers: list[str] = []
    lr = 0
    if rounds >= 2:
        lr = 1
        first = winners_rounds[0]
        for i in range(len(first) // 2):
            order += 1
            match = Match(f"L1-{i + 1}", "L", 1, ({"loser": first[2 * i]}, {"loser": first[2 * i + 1]}),
                          order)
            matches.append(match)
            losers.append(match.id)
        for r in range(2, rounds + 1):
            dropping = list(winners_rounds[r - 1])
            if r % 2 == 0:
                dropping.reverse()
            lr += 1
            current = []
            for i, (survivor, dropped) in enumerate(zip(losers, dropping, strict=True)):
                order += 1
                match = Match(f"L{lr}-{i + 1}", "L", lr, ({"winner": survivor}, {"loser": dropped}), order)
                matches.append(match)
                current.append(match.id)
            losers = current
            if len(losers) > 1:
                lr += 1
                current = []
                for i in range(len(losers) // 2):
                    order += 1
                    match = Match(f"L{lr}-{i + 1}", "L", lr,
                                  ({"winner": losers[2 * i]}, {"winner": losers[2 * i + 1]}), order)
                    matches.append(match)
                    current.append(match.id)
                losers = current
        final_losers = losers[0]
    else:
        final_losers = None
    champion = winners_rounds[-1][0]
    order += 1
    if final_losers is None:  # two players: the loser of the final gets a second chance
        matches.append(Match("F1", "F", 1, ({"winner": champion}, {"loser": champion}), order))
    else:
        matches.append(Match("F1", "F", 1, ({"winner": champion}, {"winner": final_losers}), order))
    matches.append(Match("F2", "F", 2, ({"winner": "F1"}, {"loser": "F1"}), order + 1))
    return Bracket(matches, list(seeds), double)


def resolve(bracket: Bracket, results: Mapping[str, str]) -> dict[str, Outcome]:
    """Every match's players and winner, from the winners of the matches played
    (``results``: match id -> winner). Byes are passed on; F2 is needed only when the losers'
    champion won F1."""
    outcomes: dict[str, Outcome] = {}
    by_id = bracket.by_id()

    def player(source: Source) -> tuple[bool, str | None]:
        """(known, who): who is None for a bye."""
        if "bye" in source:
            return True, None
        if "seed" in source:
            return True, bracket.seeds[source["seed"] - 1]
        ref = source.get("winner") or source.get("loser")
        done = outcomes.get(ref)
        if done is None or not done.decided:
            return False, None
        return True, done.winner if "winner" in source else done.loser

    for match in sorted(bracket.matches, key=lambda m: m.order):
        known = [player(s) for s in match.slots]
        out = Outcome()
        outcomes[match.id] = out
        if not all(k for k, _ in known):
            continue
        a, b = known[0][1], known[1][1]
        out.players = (a, b)
        if match.id == "F2":
            first = outcomes.get("F1")
            if first and first.decided and first.winner == _source_player(by_id["F1"].slots[0], outcomes):
                out.decided = True  # the winners' champion won the final: no second match
                out.winner, out.loser = first.winner, first.loser
                out.players = None
                continue
        if a is None or b is None:
            out.decided = True
            out.winner, out.loser = (b if a is None else a), None
            continue
        if match.id in results:
            out.decided = True
            out.winner = results[match.id]
            out.loser = b if out.winner == a else a
    return outcomes


def _source_player(source: Source, outcomes: Mapping[str, Outcome]) -> str | None:
    ref = source.get("winner") or source.get("loser")
    done = outcomes.get(ref or "")
    if done is None:
        return None
    return done.winner if "winner" in source else done.loser


def ready(bracket: Bracket, results: Mapping[str, str], started: set[str]) -> list[tuple[Match, str, str]]:
    """Matches whose two players are known, not decided and not started: (match, a, b), the
    higher seed first (it takes the first seat in the first game)."""
    outcomes = resolve(bracket, results)
    seed = {p: i for i, p in enumerate(bracket.seeds)}
    due = []
    for match in sorted(bracket.matches, key=lambda m: m.order):
        out = outcomes[match.id]
        if out.decided or out.players is None or match.id in started:
            continue
        a, b = out.players
        if a is None or b is None:
            continue
        first, second = (a, b) if seed[a] < seed[b] else (b, a)
        due.append((match, first, second))
    return due


def champion(bracket: Bracket, results: Mapping[str, str]) -> str | None:
    outcomes = resolve(bracket, results)
    last = "F2" if bracket.double else bracket.matches[-1].id if bracket.matches else None
    if bracket.double and len(bracket.seeds) < 2:
        return bracket.seeds[0] if bracket.seeds else None
    done = outcomes.get(last or "")
    return done.winner if done and done.decided else None


def places(bracket: Bracket, results: Mapping[str, str]) -> list[tuple[int, str]]:
    """(place, player), best first: the champion, the runner-up, then by how far each got."""
    outcomes = resolve(bracket, results)
    by_id = bracket.by_id()
    out_at: dict[str, int] = {}  # player -> the order of the match they were knocked out in
    for match_id, done in outcomes.items():
        if not done.decided or not done.loser:
            continue
        match = by_id[match_id]
        if bracket.double and match.bracket == "W":
            continue  # a first loss in double elimination knocks nobody out
        if match_id == "F1" and bracket.double:
            continue  # decided by F2
        out_at[done.loser] = match.order
    winner = champion(bracket, results)
    ranking: list[tuple[int, str]] = []
    if winner:
        ranking.append((1, winner))
    by_round: dict[tuple[str, int], list[str]] = {}
    for player, order in out_at.items():
        match = next(m for m in bracket.matches if m.order == order)
        by_round.setdefault((match.bracket, match.round), []).append(player)
    keys = sorted(by_round, key=lambda k: -max(out_at[p] for p in by_round[k]))
    for key in keys:
        place = len(ranking) + 1
        for player in sorted(by_round[key], key=bracket.seeds.index):
            ranking.append((place, player))
    return ranking


def bracket_json(bracket: Bracket) -> dict[str, Any]:
    return {"seeds": bracket.seeds, "double": bracket.double,
            "matches": [{"id": m.id, "bracket": m.bracket, "round": m.round, "slots": list(m.slots),
                         "order": m.order} for m in bracket.matches]}


def bracket_from_json(data: Mapping[str, Any]) -> Bracket:
    return Bracket([Match(m["id"], m["bracket"], int(m["round"]), (m["slots"][0], m["slots"][1]),
                          int(m.get("order", 0))) for m in data["matches"]],
                   list(data["seeds"]), bool(data.get("double")))
