"""Finished games made up by random legal play, for the archive's tests, benchmark and demos.

They go through the same record functions the server uses (new_record, draw_chances, the engine's
push), so an archive built from them exercises export, import and the site exactly like real play:
timestamps on every entry, players with addresses, a result with winners, and some resignations.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from engine import State, get_game
from pbem.archive.importer import row_from_record
from pbem.record import draw_chances, iso, new_record
from pbem.store.base import GameRow

START = datetime(2026, 1, 1, tzinfo=UTC)


def random_record(game_name: str, rng: random.Random, game_id: str, players: Sequence[str],
                  started: datetime = START, resign_chance: float = 0.1,
                  options: dict[str, Any] | None = None) -> dict[str, Any]:
    """One game played to its end (or to a resignation) with a result like the server writes."""
    return _play(game_name, rng, game_id, players, started, resign_chance, options)[0]


def _play(game_name: str, rng: random.Random, game_id: str, players: Sequence[str],
          started: datetime, resign_chance: float,
          options: dict[str, Any] | None) -> tuple[dict[str, Any], State]:
    game = get_game(game_name)
    options = game.normalize_options(options or {})
    seats = game.seat_names(len(players))
    setup = game.create_setup(options, rng, len(players))
    people = {seat: {"name": email.split("@")[0].title(), "email": email}
              for seat, email in zip(seats, players, strict=True)}
    record = new_record(game, options, setup, people)
    record["id"] = game_id
    record["created_at"] = iso(started - timedelta(hours=1))
    record["started_at"] = iso(started)
    state = game.start(options, setup)
    now = started
    draw_chances(game, state, record, now)
    resign_at = rng.randrange(1, 30) if rng.random() < resign_chance else None
    while not state.is_over:
        if resign_at is not None and state.ply >= resign_at:
            loser = state.to_move
            record["result"] = {"reason": "resigned", "resigned": loser,
                                "winners": [s for s in seats if s != loser], "at": iso(now)}
            return record, state
        now += timedelta(minutes=rng.randrange(5, 600), seconds=rng.randrange(60))
        seat = state.to_move
        move = state.random_move(rng)
        text = state.move_text(move)
        state.push(move)
        record["moves"].append({"seat": seat, "move": text, "at": iso(now)})
        draw_chances(game, state, record, now)
    score = state.score()
    record["result"] = {"reason": "scored", "totals": dict(score.totals), "winners": score.winners,
                        "at": iso(now)}
    return record, state


def random_records(count: int, seed: int = 1, space_truckin_share: float = 0.2,
                   n_players: int = 40) -> list[dict[str, Any]]:
    """``count`` games among ``n_players`` addresses, mostly Alien City, with ids ac-N / st-N and
    start times spread over 2026."""
    return [row.record for row in random_rows(count, seed, space_truckin_share, n_players)]


def random_rows(count: int, seed: int = 1, space_truckin_share: float = 0.2,
                n_players: int = 40) -> list[GameRow]:
    """The same games as stored rows (status over, seats without tokens), ready to insert."""
    rng = random.Random(seed)
    people = [f"player{i}@example.org" for i in range(1, n_players + 1)]
    numbers = {"ac": 0, "st": 0}
    rows = []
    for _ in range(count):
        truckin = rng.random() < space_truckin_share
        prefix, name = ("st", "space-truckin") if truckin else ("ac", "alien-city")
        numbers[prefix] += 1
        players = rng.sample(people, rng.randrange(2, 6) if truckin else 2)
        started = START + timedelta(minutes=rng.randrange(0, 365 * 24 * 60))
        options: dict[str, Any] = {}
        if not truckin and rng.random() < 0.3:
            options = {"edition": "1.2"}
        record, state = _play(name, rng, f"{prefix}-{numbers[prefix]}", players, started, 0.1, options)
        rows.append(row_from_record(record, state))
    return rows


__all__ = ["START", "random_record", "random_records", "random_rows"]
