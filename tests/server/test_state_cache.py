"""The processor's state cache serves a game's state only for exactly the moves it was made of:
not for another record with as many moves (a move taken back and another played), not after the
record's own entries were changed in place, and it forgets a state on request (a rolled-back
transaction's)."""

from __future__ import annotations

import copy
import json

from hypothesis import given
from hypothesis import strategies as st

from pbem.processing.context import StateCache


class Position:
    """Stands for an engine state: the cache only copies it."""

    def __init__(self, name: str) -> None:
        self.name = name

    def copy(self) -> Position:
        return Position(self.name)


def record(*moves: str) -> dict:
    return {"format": "pbem-record/1", "moves": [{"seat": "black", "move": m, "at": "2026-11-20"}
                                                 for m in moves]}


def test_a_state_is_served_for_the_same_moves_read_again_from_the_database() -> None:
    cache = StateCache()
    kept = record("tower red D5", "dome blue C3")
    cache.put("ac-1", kept, Position("after two"))
    loaded = json.loads(json.dumps(kept))  # the next mail reads the record anew
    served = cache.get("ac-1", loaded)
    assert served is not None and served.name == "after two"
    assert cache.misses == 0


def test_not_for_as_many_other_moves_nor_for_fewer_or_more() -> None:
    cache = StateCache()
    cache.put("ac-1", record("tower red D5", "dome blue C3"), Position("after two"))
    assert cache.get("ac-1", record("tower red D5", "dome blue C4")) is None  # taken back, replayed
    assert cache.get("ac-1", record("tower red D5")) is None
    assert cache.get("ac-1", record("tower red D5", "dome blue C3", "pass")) is None
    assert cache.get("ac-2", record("tower red D5", "dome blue C3")) is None
    assert cache.misses == 4


def test_changing_the_records_entries_later_does_not_change_what_was_kept() -> None:
    cache = StateCache()
    kept = record("tower red D5")
    cache.put("ac-1", kept, Position("after one"))
    kept["moves"][0]["move"] = "tower red D6"  # the caller's record, changed in place
    assert cache.get("ac-1", kept) is None
    assert cache.get("ac-1", record("tower red D5")) is not None


def test_a_forgotten_state_is_not_served() -> None:
    cache = StateCache()
    cache.put("ac-1", record("tower red D5"), Position("after one"))
    cache.forget("ac-1")
    cache.forget("ac-9")  # one never kept: nothing to do
    assert cache.get("ac-1", record("tower red D5")) is None


moves_lists = st.lists(st.sampled_from(["tower red D5", "dome blue C3", "pass", "tower red D6"]),
                       max_size=6)


@given(moves_lists, moves_lists)
def test_served_exactly_when_the_moves_are_equal(first: list[str], second: list[str]) -> None:
    cache = StateCache()
    cache.put("ac-1", record(*first), Position("kept"))
    served = cache.get("ac-1", copy.deepcopy(record(*second)))
    assert (served is not None) == (first == second)
