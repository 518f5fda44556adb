"""The legal list is exactly what the move checker accepts, in both games (issue 15).

At random positions of every edition, variant and player count, moves the notation can express are
offered to ``push`` (on a copy): every move the legal list holds must apply, and every move ``push``
accepts must be on the list. Where the notation can express too many moves to try them all, every
move of the kinds where lists went wrong before (builds without claims, placements without ships,
removals, swaps of neighbouring tiles, across the seam included) is tried, plus a large random
sample of the rest and of the list itself.

The list here is ``legal_moves()`` with its optional parts expanded as the mail's listing states
them: Alien City claims (any unclaimed tower, or the tower being built, with a build that does not
end the game, while the mover has a cap), Space Truckin' ships (``ship_options``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from engine.alien_city import AlienCity
from engine.alien_city.board import LOT_NAMES
from engine.base import Game, MoveError, State, random_positions
from engine.space_truckin import SpaceTruckin
from engine.space_truckin.geometry import NEIGHBOURS, cell_name

# Shrinking a seed makes no smaller position, only a long wait: a failure is reported as found.
PHASES = (Phase.explicit, Phase.reuse, Phase.generate)
AC = AlienCity()
ST = SpaceTruckin()
ROTATIONS = (0, 90, 180, 270)
EDGES = "NESW"
AC_VARIANTS: tuple[dict[str, Any], ...] = (
    {}, {"edition": "1.2"}, {"symmetric": True}, {"location_bonus": True},
    {"edition": "1.2", "symmetric": True, "location_bonus": True},
    {"handicap": {"white": {"reach": 3, "extra_claims": 2}}},
)


def play(game: Game, options: dict[str, Any], n_players: int, seed: int,
         wanted: Callable[[State, random.Random], bool]) -> Iterator[State]:
    """Copies of the positions of one random game (random moves with their optional parts) for
    which ``wanted`` says yes, each with a move due."""
    rng = random.Random(seed)
    for state in random_positions(game, options, n_players, rng):
        if not state.is_over and wanted(state, rng):
            yield state.copy()


def accepted(state: State, texts: set[str]) -> tuple[dict[str, Any], set[Any]]:
    """(text -> parsed move, or None when the notation refuses it; the parsed moves push accepts).

    A refused move leaves the position as it was (checked at the end), so one probe serves every
    refusal and a copy is made only after a move applied."""
    parsed: dict[str, Any] = {}
    ok: set[Any] = set()
    probe = state.copy()
    for text in sorted(texts):
        try:
            move = state.parse_move(text)
        except MoveError:
            parsed[text] = None
            continue
        parsed[text] = move
        try:
            probe.push(move)
        except MoveError:
            continue
        ok.add(move)
        probe = state.copy()
    assert probe.render() == state.render() and probe.legal_moves() == state.legal_moves(), \
        "a refused move changed the position"
    return parsed, ok


def check(state: State, listed: set[Any], texts: set[str], sample_of_listed: int,
          rng: random.Random) -> None:
    some_listed = sorted(listed, key=state.move_text)
    if len(some_listed) > sample_of_listed:
        some_listed = rng.sample(some_listed, sample_of_listed)
    texts = texts | {state.move_text(m) for m in some_listed}
    parsed, ok = accepted(state, texts)
    tried = {m for m in parsed.values() if m is not None}
    where = f"{state.game.name} ply {state.ply}, {state.to_move} to move"
    not_applied = sorted(state.move_text(m) for m in (tried & listed) - ok)
    assert not not_applied, f"{where}: listed but refused: {not_applied[:10]}"
    unlisted = sorted(state.move_text(m) for m in ok - listed)
    assert not unlisted, f"{where}: accepted but not listed: {unlisted[:10]}"
    assert ok, f"{where}: no candidate applied"


# --- Alien City ---------------------------------------------------------------------------------

def ac_listed(state: Any) -> set[Any]:
    builds = state.legal_moves()
    out = set(builds)
    seat = state.to_move
    if state.caps_left(seat) == 0:
        return out
    ending = set(state.ending_moves())
    towers = state.claimable_towers()
    for build in builds:
        if build in ending:
            continue
        for target in towers + ([build.lot] if build.kind == "tower" else []):
            out.add(build.with_claim(target))
    return out


def ac_candidates(state: Any, rng: random.Random) -> set[str]:
    """Every build without a claim (every kind, colour and lot the notation has, the impossible
    "tower black" included), and a random sample of builds with claims on any lot."""
    builds = [f"{kind} {colour} {lot}" for kind in ("tower", "dome")
              for colour in ("red", "blue", "green", "black") for lot in LOT_NAMES]
    texts = set(builds)
    legal = [state.move_text(m) for m in state.legal_moves()]
    texts |= {f"{rng.choice(builds)} claim {rng.choice(LOT_NAMES)}" for _ in range(150)}
    texts |= {f"{rng.choice(legal)} claim {rng.choice(LOT_NAMES)}" for _ in range(150)}
    return texts


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=PHASES)
@given(seed=st.integers(0, 2**32 - 1), variant=st.sampled_from(AC_VARIANTS))
def test_alien_city_legal_list_is_what_push_accepts(seed: int, variant: dict[str, Any]) -> None:
    rng = random.Random(seed)
    checked = 0
    # every 7th position or so, and the late ones, where caps run out and builds end the game
    for state in play(AC, variant, 2, seed, lambda s, r: r.random() < 0.15 or s.ply > 34):
        check(state, ac_listed(state), ac_candidates(state, rng), 120, rng)
        checked += 1
    assert checked


# --- Space Truckin' -------------------------------------------------------------------------------

def st_listed(state: Any) -> set[Any]:
    out = set()
    for move in state.legal_moves():
        out.add(move)
        if type(move).__name__ == "Place":
            out.update(state.ship_options(move))
    return out


def st_candidates(state: Any, rng: random.Random) -> set[str]:
    """Every move of the kinds the drawn tile allows (placements, with a sample of ship choices;
    or removals, swaps of neighbouring tiles - across the seam too - and pass), a random sample of
    other swaps, and a sample of the kinds it does not allow."""
    cells = [cell_name(c) for c in range(81)]
    placed = [c for c in range(81) if state.tile_at(c) is not None]
    black_hole = state.drawn_tile.startswith("blackhole")
    removes = [f"remove {c} {e}" for c in cells for e in EDGES]
    places = [f"place {c} {r}" for c in cells for r in ROTATIONS]
    ships = [" engineer", *(f" {ship} {e}" for ship in ("cargo", "battleship") for e in EDGES)]
    texts = {"pass"} | set(removes if black_hole else rng.sample(removes, 40))
    texts |= set(rng.sample(places, 40) if black_hole else places)
    texts |= {f"{rng.choice(places)}{rng.choice(ships)}" for _ in range(40 if black_hole else 150)}
    legal = [m for m in state.legal_moves() if type(m).__name__ == "Place"]
    for move in rng.sample(legal, min(12, len(legal))):
        texts |= {state.move_text(move) + ship for ship in ships}
    for a in placed if black_hole else ():
        for b in NEIGHBOURS[a]:
            if state.tile_at(b) is not None:
                texts |= {f"swap {cell_name(a)} {ra} {cell_name(b)} {rb}"
                          for ra in ROTATIONS for rb in ROTATIONS}
    for _ in range(300 if black_hole else 40):
        a, b = rng.sample(cells, 2)
        texts.add(f"swap {a} {rng.choice(ROTATIONS)} {b} {rng.choice(ROTATIONS)}")
    return texts


def st_wanted(state: Any, rng: random.Random) -> bool:
    """Every black hole (where swaps and removals are legal), and some space tiles."""
    return state.drawn_tile.startswith("blackhole") or rng.random() < 0.04


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=PHASES)
@given(seed=st.integers(0, 2**32 - 1), players=st.integers(2, 5))
def test_space_truckin_legal_list_is_what_push_accepts(seed: int, players: int) -> None:
    rng = random.Random(seed)
    kinds = set()
    for state in play(ST, {}, players, seed, st_wanted):
        check(state, st_listed(state), st_candidates(state, rng), 60, rng)
        kinds.add(state.drawn_tile.startswith("blackhole"))
    assert True in kinds  # some black hole was checked
