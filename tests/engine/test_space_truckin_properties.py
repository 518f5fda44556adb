"""Random complete games checked against an independent, from-scratch reading of the board.

The engine keeps features incrementally (union-find); here they are recomputed by a plain search from
the tile definitions alone, so a bookkeeping slip in the engine shows up as a disagreement.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.base import replay
from engine.space_truckin import Place, SpaceTruckin
from engine.space_truckin.catalogue import POOL_SHIPS, RESERVE_SHIPS, TILES

GAME = SpaceTruckin()
OPP = (2, 3, 0, 1)


def step(cell: int, d: int) -> tuple[int, bool]:
    col, row = cell % 9, cell // 9
    dc, dr = ((0, 1), (1, 0), (0, -1), (-1, 0))[d]
    across = not (0 <= col + dc < 9 and 0 <= row + dr < 9)
    return ((row + dr) % 9) * 9 + (col + dc) % 9, across


def edge(tile_rot: tuple[int, int], d: int) -> str:
    t, q = tile_rot
    return TILES[t].edges[(d - q) % 4]


def segment_at(tile_rot: tuple[int, int], d: int) -> int:
    t, q = tile_rot
    for s, seg in enumerate(TILES[t].segments):
        if (d - q) % 4 in seg.edges:
            return s
    return -1


def board_of(state) -> dict[int, tuple[int, int]]:
    return {c: state.tile_at(c) for c in range(81) if state.tile_at(c) is not None}


def ships_of(state, board) -> dict[tuple[int, int], str]:
    out = {}
    for c, (t, _) in board.items():
        for s in range(len(TILES[t].segments)):
            seat = state.ship_at(c, s)
            if seat:
                out[(c, s)] = seat
    return out


def search_features(board, ships):
    """(kind, nodes, complete, seam, ships) for every feature, by breadth-first search."""
    seen: set[tuple[int, int]] = set()
    out = []
    for c, tr in board.items():
        for s, seg in enumerate(TILES[tr[0]].segments):
            if (c, s) in seen:
                continue
            if seg.kind == "station":
                cells = set()
                seam = False
                col, row = c % 9, c // 9
                for dc in (-1, 0, 1):
                    for dr in (-1, 0, 1):
                        if dc or dr:
                            n = ((row + dr) % 9) * 9 + (col + dc) % 9
                            if n in board:
                                cells.add(n)
                                seam |= not (0 <= col + dc < 9 and 0 <= row + dr < 9)
                seen.add((c, s))
                out.append(("station", frozenset({(c, s)}), len(cells) == 8, seam,
                            [ships[(c, s)]] if (c, s) in ships else []))
                continue
            nodes = {(c, s)}
            todo = [(c, s)]
            open_edges = 0
            seam = False
            while todo:
                cc, ss = todo.pop()
                t, q = board[cc]
                for e in TILES[t].segments[ss].edges:
                    d = (e + q) % 4
                    n, across = step(cc, d)
                    if n not in board:
                        open_edges += 1
                        continue
                    ns = segment_at(board[n], OPP[d])
                    assert ns >= 0
                    seam |= across
                    if (n, ns) not in nodes:
                        nodes.add((n, ns))
                        todo.append((n, ns))
            seen |= nodes
            out.append((seg.kind, frozenset(nodes), open_edges == 0, seam,
                        [ships[x] for x in nodes if x in ships]))
    return out


def check_position(state) -> None:
    board = board_of(state)
    for c, tr in board.items():
        for d in range(4):
            n, _ = step(c, d)
            if n in board:
                assert edge(tr, d) == edge(board[n], OPP[d]), (c, d)
    ships = ships_of(state, board)
    mine = {(k, n, comp, seam) for k, n, comp, seam, _ in search_features(board, ships)}
    engine = {(f.kind, frozenset((x // 4, x % 4) for x in f.nodes), f.complete, f.seam)
              for f in state.features()}
    assert mine == engine
    for kind, _, complete, _, on in search_features(board, ships):
        assert not (complete and on), f"a completed {kind} still carries ships"
    for seat, p in state.pools().items():
        assert p["pool"] + p["reserve"] + p["on_board"] + p["lost"] == POOL_SHIPS + RESERVE_SHIPS, seat


def check_deployment(state, move: Place) -> None:
    """The segment the ship goes on joins no feature that carries a ship."""
    from engine.space_truckin.geometry import parse_cell

    board = board_of(state)
    cell = parse_cell(move.cell)
    t = TILE_ID[state.drawn_tile]
    board[cell] = (t, move.rotation // 90)
    if move.ship == "engineer":
        return
    s = segment_at(board[cell], "NESW".index(move.edge))
    ships = ships_of(state, board)
    for _, nodes, _, _, on in search_features(board, ships):
        if (cell, s) in nodes:
            assert not on, f"{move} joins a feature with ships {on}"
            return
    raise AssertionError("segment not found")


TILE_ID = {t.id: i for i, t in enumerate(TILES)}


def play(seed: int, players: int, checks: bool = True):
    rng = random.Random(seed)
    setup = GAME.create_setup({}, rng, players)
    state = GAME.start({}, setup)
    entries: list[dict] = []
    snapshots: dict[int, tuple] = {}
    last_totals = state.score().totals
    deployed = 0
    while not state.is_over:
        if state.pending_chance():
            value = GAME.draw_chance(state, setup, rng.randrange(60))
            state.apply_chance(value)
            entries.append({"chance": value})
        else:
            seat = state.to_move
            move = state.random_move(rng)
            if checks and isinstance(move, Place) and move.ship:
                check_deployment(state, move)
                deployed += 1
            text = state.move_text(move)
            assert state.parse_move(text) == move
            state.push(move)
            entries.append({"seat": seat, "move": text})
            if checks:
                check_position(state)
        # replay(upto_ply=p) stops before the move after ply p, so draws after it are included
        snapshots[state.ply] = (state.score().totals, state.pools())
        totals = state.score().totals
        assert all(totals[s] >= last_totals[s] for s in totals), "points went down"
        last_totals = totals
    return setup, state, entries, snapshots, deployed


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), players=st.integers(2, 5))
def test_random_games(seed, players):
    setup, state, entries, snapshots, _deployed = play(seed, players)
    assert state.tiles_left == 0 and state.pending_chance() is None and state.to_move is None
    assert sum(1 for e in entries if "chance" in e) == 90
    # replay from the public (redacted) setup reproduces the game exactly
    public = GAME.redact_setup(setup)
    assert "pile" not in public
    again = replay(GAME, {}, public, entries)
    assert again.is_over
    assert again.render() == state.render()
    assert again.score().totals == state.score().totals
    assert again.score().details == state.score().details
    ply = random.Random(seed).randint(1, state.ply)
    partial = replay(GAME, {}, public, entries, upto_ply=ply)
    assert partial.ply == ply
    assert (partial.score().totals, partial.pools()) == snapshots[ply]


def test_games_deploy_ships_and_score():
    _, state, _, _, deployed = play(11, 3)
    assert deployed > 5
    assert any(e for e in state.score().details["events"] if not e["final"])


def test_listed_swaps_are_exactly_the_legal_ones():
    """At a black hole late in a seeded game, every swap among a set of cells (neighbours included)
    is accepted by ``push`` exactly when ``legal_moves`` lists it."""
    from engine.base import IllegalMoveError
    from engine.space_truckin import Swap
    from engine.space_truckin.geometry import NEIGHBOURS, cell_name

    rng = random.Random(3)
    setup = GAME.create_setup({}, rng, 2)
    state = GAME.start({}, setup)
    while True:
        if state.pending_chance():
            state.apply_chance(GAME.draw_chance(state, setup, rng.randrange(60)))
        elif state.ply > 40 and state.drawn_tile.startswith("blackhole"):
            break
        else:
            state.push(state.random_move(rng))
    occupied = [c for c in range(81) if state.tile_at(c) is not None]
    pick = occupied[:4] + [n for n in NEIGHBOURS[occupied[5]] if state.tile_at(n)][:2] + [occupied[5]]
    legal = {m for m in state.legal_moves() if isinstance(m, Swap)}
    checked = 0
    for i, a in enumerate(pick):
        for b in pick[i + 1:]:
            if a == b:
                continue
            for ra in (0, 90, 180, 270):
                for rb in (0, 90, 180, 270):
                    move = Swap(cell_name(a), ra, cell_name(b), rb).canonical()
                    probe = state.copy()
                    try:
                        probe.push(move)
                        ok = True
                    except IllegalMoveError:
                        ok = False
                    assert ok == (move in legal), move
                    checked += 1
    assert checked > 100
