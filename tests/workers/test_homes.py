"""Each game has a home among the workers alive (``pbem.processing.homes``): a worker takes the mail
of its home games first, so a game's state is replayed by the worker that already keeps it, and
takes the others' games too when it has none of its own left, so nothing waits for a worker that is
busy or gone. The workers alive are the role sessions connected to PostgreSQL."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from pbem.clock import ManualClock
from pbem.processing.homes import Homes
from pbem.processing.processor import HANDOFF_SECONDS, Processor
from pbem.store import open_store
from pbem.store.common import now_utc
from pbem.store.postgres import ROLE_SESSION
from pbem.store.sql import SqlStore
from tests.services.postgres import Postgres
from tests.transport import make_config
from tests.workers.test_fair_claims import help_mail

GAMES = 16
_numbers = itertools.count(1)


@contextlib.contextmanager
def sessions(dsn: str, names: list[str]) -> Iterator[None]:
    """Workers alive as PostgreSQL sees them: a role session of each, named as ``pbem serve`` names
    its own."""
    conns = [psycopg.connect(dsn, autocommit=True) for _ in names]
    try:
        for conn, name in zip(conns, names, strict=True):
            conn.execute("SELECT set_config('application_name', %s, false)", (ROLE_SESSION + name,))
        yield
    finally:
        for conn in conns:
            conn.close()


@pytest.fixture
def store(postgres: Postgres) -> Iterator[SqlStore]:
    opened: SqlStore = open_store(postgres.create_database(f"homes_{next(_numbers)}"))  # type: ignore[assignment]
    yield opened
    opened.close()


def pending_about_games(store: SqlStore) -> dict[int, str]:
    """One mail from each of GAMES senders, each about a game of its own (as intake records the game
    a reply's token names); by inbound id, its game."""
    games = {}
    for n in range(GAMES):
        inbound_id = store.accept_inbound(help_mail(f"p{n}@example.org"), "smtp", now_utc()).inbound_id
        with store._write() as db:
            db.run("UPDATE inbound SET game_id = ? WHERE id = ?", (f"ac-{n + 1}", inbound_id))
        games[inbound_id] = f"ac-{n + 1}"
    return games


def test_each_game_has_one_home_among_the_workers_alive(store: SqlStore) -> None:
    games = [f"ac-{n}" for n in range(1, 201)]
    with sessions(store.dsn, ["host:101", "host:102", "host:103"]):
        homes = [Homes(store, name) for name in ("host:101", "host:102", "host:103")]
        owned = [h.own(games) - {None} for h in homes]
        assert set().union(*owned) == set(games)  # every game has a home ...
        assert sum(len(o) for o in owned) == len(games)  # ... and only one
        assert min(len(o) for o in owned) > 30  # shared out, not all at one
        assert None in homes[0].own([None])  # mail about no game is anybody's
    # A worker not connected (yet) has no list to go by: every game is its own, as without homes.
    with sessions(store.dsn, ["host:102", "host:103"]):
        assert Homes(store, "host:101").own(games) == set(games)
    # When a worker goes, only its games move: to the others.
    with sessions(store.dsn, ["host:101", "host:102"]):
        after = [Homes(store, name).own(games) - {None} for name in ("host:101", "host:102")]
    assert owned[0] <= after[0] and owned[1] <= after[1]
    assert after[0] | after[1] == set(games) and not after[0] & after[1]


def test_a_worker_takes_its_home_games_first_then_the_others(tmp_path: Path, store: SqlStore) -> None:
    games = pending_about_games(store)
    clock = ManualClock(now_utc())
    with sessions(store.dsn, ["host:201", "host:202"]):
        processor = Processor(make_config(tmp_path), store, clock, secret=b"s" * 32)
        processor.homes = Homes(store, "host:201")
        own = processor.homes.own(games.values()) - {None}
        assert 0 < len(own) < GAMES
        order: list[int] = []
        take = processor._process

        def recorded(*candidates: int) -> tuple[int, str] | None:
            processed = take(*candidates)
            if processed is not None:
                order.append(processed[0])
            return processed

        processor._process = recorded  # type: ignore[method-assign]
        # The other worker takes nothing meanwhile: this one does its own at once ...
        while processor.process_pending(100):
            pass
        assert {games[i] for i in order} == own
        # ... leaves the other's to it for a moment, and says when to look again ...
        assert processor.look_again is not None and 0 < processor.look_again <= HANDOFF_SECONDS
        clock.advance(HANDOFF_SECONDS / 2)
        assert processor.process_pending(100) == 0
        assert processor.look_again is not None and processor.look_again <= HANDOFF_SECONDS / 2 + 0.01
        # ... and then takes them too, since their home did not
        clock.advance(HANDOFF_SECONDS)
        while processor.process_pending(100):
            pass
        assert processor.look_again is None
    assert sorted(order) == sorted(games)  # every message, once
    assert {games[i] for i in order[:len(own)]} == own  # its own games first, oldest first
    assert order[:len(own)] == sorted(order[:len(own)])
    assert order[len(own):] == sorted(order[len(own):])  # then the rest, oldest first
    assert store.inbound_counts()["done"] == GAMES
