"""The street network (the graph of empty lots) and which lots may be built on without breaking it.

The street rule asks, for every candidate lot, "would the empty lots stay connected and would every
structure keep a street?". Asking it with a flood fill per candidate costs O(lots^2) per position; one
Tarjan pass over the empty-lot graph answers it for all candidates at once:

* building on ``L`` keeps the other empty lots connected  <=>  ``L`` is not an articulation point;
* every structure keeps a street  <=>  ``L`` is not the *only* empty neighbour of a structure
  (such lots are called *critical* here);
* ``L`` itself keeps a street  <=>  some empty lot remains (then connectivity gives it a neighbour).

The same pass records, for every lot that is not an articulation point, its biconnected block. That
makes "would any lot still be buildable after building on L?" (needed to mark game-ending builds)
an O(1) question in almost every position: see :func:`street_survives`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.alien_city.board import N_LOTS, NEIGHBOURS, RING, TILE_OF


@dataclass(frozen=True, slots=True)
class StreetInfo:
    """What one position's street network allows; immutable so copies of a state can share it."""

    empty: tuple[bool, ...]
    n_empty: int
    articulation: tuple[bool, ...]
    critical: tuple[bool, ...]
    # Block (biconnected component) id of each empty non-articulation lot; -1 elsewhere.
    block: tuple[int, ...]
    # Street-legal lots (rule 2), ascending.
    street_ok: tuple[int, ...]
    # Lots satisfying rules 1-3 (street rule and icon-lot rule), ascending.
    buildable: tuple[int, ...]
    # Whether all empty lots were reached from one of them (the invariant the rules maintain).
    connected: bool


def analyse(board: Sequence[int], is_icon: Sequence[bool]) -> StreetInfo:
    """Articulation points, critical lots and buildable lots of a position, in one pass."""
    empty = [cell == 0 for cell in board]
    critical = [False] * N_LOTS
    n_empty = 0
    root = -1
    for i in range(N_LOTS):
        if empty[i]:
            n_empty += 1
            if root < 0:
                root = i
            continue
        only = -1
        count = 0
        for j in NEIGHBOURS[i]:
            if empty[j]:
                count += 1
                only = j
        if count == 1:
            critical[only] = True

    articulation = [False] * N_LOTS
    block = [-1] * N_LOTS
    visited = 0
    if root >= 0:
        visited = _tarjan(root, empty, articulation, block)

    if n_empty >= 2:
        street_ok = tuple(i for i in range(N_LOTS)
                          if empty[i] and not articulation[i] and not critical[i])
    else:
        street_ok = ()
    plain_tiles = {TILE_OF[i] for i in street_ok if not is_icon[i]}
    buildable = tuple(i for i in street_ok if not is_icon[i] or TILE_OF[i] not in plain_tiles)
    return StreetInfo(
        empty=tuple(empty), n_empty=n_empty, articulation=tuple(articulation),
        critical=tuple(critical), block=tuple(block), street_ok=street_ok, buildable=buildable,
        connected=visited == n_empty,
    )


def _tarjan(root: int, empty: list[bool], articulation: list[bool], block: list[int]) -> int:
    """Iterative Tarjan from ``root``; fills ``articulation`` and ``block``; returns lots reached.

    Iterative because it is the hot loop of the engine and Python calls are comparatively dear.
    """
    disc = [0] * N_LOTS
    low = [0] * N_LOTS
    parent = [-1] * N_LOTS
    pos = [0] * N_LOTS
    disc[root] = low[root] = 1
    counter = 2
    stack = [root]
    vstack = [root]
    root_children = 0
    next_block = 0
    neighbours = NEIGHBOURS
    while stack:
        v = stack[-1]
        nbrs = neighbours[v]
        i = pos[v]
        if i < len(nbrs):
            pos[v] = i + 1
            w = nbrs[i]
            if not empty[w]:
                continue
            if disc[w] == 0:
                parent[w] = v
                disc[w] = low[w] = counter
                counter += 1
                stack.append(w)
                vstack.append(w)
            elif w != parent[v] and disc[w] < low[v]:
                low[v] = disc[w]
            continue
        stack.pop()
        if not stack:
            break
        u = stack[-1]
        if low[v] < low[u]:
            low[u] = low[v]
        if low[v] >= disc[u]:
            # u separates v's subtree: pop that subtree's lots, which form one block with u.
            if u == root:
                root_children += 1
                block[root] = next_block
            else:
                articulation[u] = True
            while True:
                x = vstack.pop()
                block[x] = next_block
                if x == v:
                    break
            next_block += 1
    if root_children >= 2:
        articulation[root] = True
    for i in range(N_LOTS):
        if articulation[i]:
            block[i] = -1
    return counter - 1


def critical_after(info: StreetInfo, board: Sequence[int], lot: int) -> set[int]:
    """Lots that become critical when ``lot`` is built on (beyond those critical already)."""
    empty = info.empty
    extra: set[int] = set()
    own = [j for j in NEIGHBOURS[lot] if empty[j]]
    if len(own) == 1:
        extra.add(own[0])
    for b in NEIGHBOURS[lot]:
        if empty[b]:
            continue
        rest = [j for j in NEIGHBOURS[b] if empty[j] and j != lot]
        if len(rest) == 1:
            extra.add(rest[0])
    return extra


def _ring_joins(cells: Sequence[bool]) -> bool:
    """Whether the empty cells of a ring (N, NE, E, ... NW) put every street side of the middle cell
    in one run: then any street path through the middle can detour around it."""
    if not (cells[0] or cells[2] or cells[4] or cells[6]):
        return False
    try:
        start = cells.index(False)
    except ValueError:
        return True
    runs_with_street = 0
    in_run = False
    run_has_street = False
    for k in range(1, 9):
        idx = (start + k) % 8
        if cells[idx]:
            if not in_run:
                in_run = True
                run_has_street = False
            if idx % 2 == 0:
                run_has_street = True
        elif in_run:
            in_run = False
            if run_has_street:
                runs_with_street += 1
    if in_run and run_has_street:
        runs_with_street += 1
    return runs_with_street == 1


# The ring test for every pattern of empty ring cells (bit k = ring cell k is empty): a table lookup
# instead of a scan where it is asked thousands of times (random playouts).
RING_JOINS: tuple[bool, ...] = tuple(_ring_joins([bool(p >> k & 1) for k in range(8)])
                                     for p in range(256))


def locally_simple(m: int, empty: Sequence[bool], built: int) -> bool:
    """Whether ``m``'s empty neighbours (with ``built`` also filled) join up around ``m``.

    If they do, any street path through ``m`` can detour through the ring of eight cells around it,
    so building on ``m`` cannot split the network: a cheap sufficient test for "not an articulation
    point" that needs no graph search.
    """
    pattern = 0
    for k, c in enumerate(RING[m]):
        if c >= 0 and c != built and empty[c]:
            pattern |= 1 << k
    return RING_JOINS[pattern]


# --- one lot at a time, on bitboards ----------------------------------------------------------------
# Bit i of an int stands for lot i. Random playouts ask "may I build here?" for a few lots per move;
# answering that for one lot with a flood fill on bitboards is far cheaper than the whole-board
# analysis above, which answers it for every lot at once.
BIT: tuple[int, ...] = tuple(1 << i for i in range(N_LOTS))
NEIGHBOUR_BITS: tuple[int, ...] = tuple(sum(BIT[j] for j in NEIGHBOURS[i]) for i in range(N_LOTS))
_STEP_NORTH = sum(BIT[i] for i in range(N_LOTS) if i % 10 != 9)  # lots that have a lot north (+1)
_STEP_SOUTH = sum(BIT[i] for i in range(N_LOTS) if i % 10 != 0)  # lots that have a lot south (-1)


# A 3x3 window as 9 bits: SW W NW, S (centre) N, SE E NE; the ring order (N, NE, E, SE, S, SW, W,
# NW) names these bits:
_WINDOW_OF_RING = (5, 8, 7, 6, 3, 0, 1, 2)
WINDOW_JOINS: tuple[bool, ...] = tuple(
    RING_JOINS[sum(1 << k for k, b in enumerate(_WINDOW_OF_RING) if w >> b & 1)] for w in range(512))
WINDOW_ON_BOARD: tuple[int, ...] = tuple(
    sum(1 << b for b, c in zip(_WINDOW_OF_RING, RING[i], strict=True) if c >= 0) for i in range(N_LOTS))


def empty_bits(board: Sequence[int]) -> int:
    bits = 0
    for i, cell in enumerate(board):
        if not cell:
            bits |= BIT[i]
    return bits


ALL_LOTS = (1 << N_LOTS) - 1


def grow(bits: int) -> int:
    """The lots of ``bits`` and their neighbours."""
    return (bits | (bits & _STEP_NORTH) << 1 | (bits & _STEP_SOUTH) >> 1 | bits << 10 | bits >> 10) & ALL_LOTS


def spread(seed: int, within: int, goal: int) -> int:
    """Lots of ``within`` reached from ``seed`` by steps between neighbours; stops early once every
    lot of ``goal`` is reached."""
    x = seed
    while True:
        y = (x | (x & _STEP_NORTH) << 1 | (x & _STEP_SOUTH) >> 1 | x << 10 | x >> 10) & within
        if y == x or y & goal == goal:
            return y
        x = y


def lots_of(bits: int) -> list[int]:
    """The lot indices of a bitboard, ascending."""
    out = []
    while bits:
        low = bits & -bits
        out.append(low.bit_length() - 1)
        bits ^= low
    return out


def street_ok_at(empty: int, n_empty: int, lot: int) -> bool:
    """Rule 2 for one lot of the position whose empty lots are the bitboard ``empty``: the same
    answer as ``lot in analyse(board, ...).street_ok`` (a test holds them equal) for a position that
    keeps the street invariant, without the whole-board pass."""
    bit = BIT[lot]
    if not empty & bit or n_empty < 2:
        return False
    for b in NEIGHBOURS[lot]:
        if not empty >> b & 1 and empty & NEIGHBOUR_BITS[b] == bit:
            return False  # the structure on b would lose its only street side
    sides = empty & NEIGHBOUR_BITS[lot]
    if not sides & (sides - 1):
        return True  # at most one street side: a dead end, never a cut
    # The 3x3 window around the lot in one shift: lots are column-major, ten to a column.
    x = empty >> (lot - 11) if lot >= 11 else empty << (11 - lot)
    if WINDOW_JOINS[((x & 7) | (x >> 7 & 0x38) | (x >> 14 & 0x1C0)) & WINDOW_ON_BOARD[lot]]:
        return True
    return spread(sides & -sides, empty & ~bit, sides) & sides == sides


# Lots within two steps of each lot, either way (the 5x5 square around it), as bitboards: building on a
# lot changes nothing that step 2 of :func:`street_survives` asks about a lot outside this square.
NEAR: tuple[int, ...] = tuple(
    sum(BIT[j] for j in range(N_LOTS) if abs(j // 10 - i // 10) <= 2 and abs(j % 10 - i % 10) <= 2)
    for i in range(N_LOTS))


def simple_lots(info: StreetInfo) -> int:
    """Street-legal lots whose street neighbours join up around them, as a bitboard: each stays
    street-legal after a build outside its :data:`NEAR` square (step 2 of :func:`street_survives`
    holds for it there). The search stops at two of them five or more steps apart, since every
    lot's square misses one of those; else it finds all."""
    bits = 0
    empty = info.empty
    ok = info.street_ok
    found: list[int] = []
    for k in range(len(ok)):
        m = ok[k // 2] if k % 2 == 0 else ok[-1 - k // 2]  # from both ends: far apart soon
        if bits & BIT[m] or not locally_simple(m, empty, -1):
            continue
        bits |= BIT[m]
        if any(max(abs(m // 10 - f // 10), abs(m % 10 - f % 10)) >= 5 for f in found):
            return bits
        found.append(m)
    return bits


def street_survives(info: StreetInfo, board: Sequence[int], lot: int,
                    is_icon: Sequence[bool]) -> bool:
    """Whether, after building on the street-legal ``lot``, some lot would still be street-legal.

    (Then some lot is also buildable: the icon rule only defers an icon lot while another lot of its
    tile is street-legal.) Tried in order of cost:

    1. a street-legal lot ``M`` in another biconnected block than ``lot``: removing ``lot`` leaves
       ``M``'s block intact, so ``M`` stays a non-articulation point, unless ``lot``'s neighbourhood
       makes it critical;
    2. a street-legal lot whose street neighbours join up around it without ``lot``;
    3. a fresh analysis of the position after the build (rare: late, maze-like positions).
    """
    if info.n_empty < 3:
        return False
    extra = critical_after(info, board, lot)
    home = info.block[lot]
    blocks = info.block
    for m in info.street_ok:
        if m != lot and blocks[m] != home and m not in extra:
            return True
    empty = info.empty
    for m in info.street_ok:
        if m != lot and m not in extra and locally_simple(m, empty, lot):
            return True
    after = list(board)
    after[lot] = 1
    return bool(analyse(after, is_icon).street_ok)
