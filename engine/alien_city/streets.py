"""The street network (the graph of empty lots) and which lots may be built on without breaking it.

The street rule asks, for every candidate lot, "would the empty lots stay connected and would every
structure keep a street?":

* building on ``L`` keeps the other empty lots connected  <=>  ``L`` is not an articulation point;
* every structure keeps a street  <=>  ``L`` is not the *only* empty neighbour of a structure
  (such lots are called *critical* here);
* ``L`` itself keeps a street  <=>  some empty lot remains (then connectivity gives it a neighbour).

Asking it with a flood fill per candidate costs O(lots^2) per position. :func:`analyse` answers it
for all lots at once on bitboards: critical lots and the lots whose street neighbours join up
around them (surely no articulation points) come from a few shifts of the board; only the
remaining candidates, few in most positions, get a flood fill each. One Tarjan pass over the
empty-lot graph (:func:`analyse_by_tarjan`) answers the same, and is the fallback for maze-like
positions.

The Tarjan pass also gives, for every lot that is not an articulation point, its biconnected block.
That makes "would any lot still be buildable after building on L?" (needed to mark game-ending
builds) an O(1) question in almost every position: see :func:`street_survives`.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.alien_city.board import N_LOTS, NEIGHBOURS, RING


class StreetInfo:
    """What one position's street network allows. Copies of a state share it: it never changes,
    and what it works out on demand (the lots as flags, the blocks) depends on the position alone.

    Lot sets are kept as bitboards (bit i = lot i, ``..._bits``) and, where the rules and messages
    ask "is lot i in it", as ascending tuples of lot indices."""

    __slots__ = ("_articulation", "_block", "_connected", "_empty", "articulation_bits", "buildable",
                 "buildable_bits", "critical_bits", "empty_bits", "n_empty", "simple", "street_ok",
                 "street_ok_bits")

    def __init__(self, empty: int, critical: int, articulation: int, street_ok: int, buildable: int,
                 simple: int, block: tuple[int, ...] | None = None, connected: bool | None = None):
        self.empty_bits = empty
        self.n_empty = empty.bit_count()
        self.critical_bits = critical
        self.articulation_bits = articulation
        self.street_ok_bits = street_ok
        self.buildable_bits = buildable
        # Street-legal lots (rule 2), and those of them satisfying rule 3 too, ascending.
        self.street_ok: tuple[int, ...] = tuple(lots_of(street_ok))
        self.buildable: tuple[int, ...] = tuple(lots_of(buildable))
        # Street-legal lots whose street neighbours join up around them (``locally_simple``): each
        # stays street-legal after a build outside its ``NEAR`` square (see ``street_survives``).
        self.simple = simple
        self._block = block
        self._connected = connected
        self._empty: tuple[bool, ...] | None = None
        self._articulation: tuple[bool, ...] | None = None

    @property
    def empty(self) -> tuple[bool, ...]:
        """Whether each lot is empty, by lot index."""
        if self._empty is None:
            self._empty = _flags(self.empty_bits)
        return self._empty

    @property
    def critical(self) -> tuple[bool, ...]:
        """Lots that are the only street side of some structure."""
        return _flags(self.critical_bits)

    @property
    def articulation(self) -> tuple[bool, ...]:
        """Lots whose building would split the streets."""
        if self._articulation is None:
            self._articulation = _flags(self.articulation_bits)
        return self._articulation

    @property
    def block(self) -> tuple[int, ...]:
        """Block (biconnected component) id of each empty non-articulation lot; -1 elsewhere. From
        a Tarjan pass, made when first asked: most positions never need it."""
        if self._block is None:
            self._block = _tarjan_pass(list(self.empty))[1]
        return self._block

    @property
    def connected(self) -> bool:
        """Whether all empty lots are reached from one of them (the invariant the rules keep)."""
        if self._connected is None:
            empty = self.empty_bits
            self._connected = spread(empty & -empty, empty, empty) == empty
        return self._connected


def _flags(bits: int) -> tuple[bool, ...]:
    return tuple(bits >> i & 1 == 1 for i in range(N_LOTS))


def analyse(board: Sequence[int], icons: int) -> StreetInfo:
    """Critical lots, articulation points and buildable lots of a position (``icons``: the icon
    lots of its layout, as a bitboard).

    On bitboards, for all lots at once: a lot whose street neighbours join up around it
    (``locally_simple``) is no articulation point, nor is one with a single street side; only the
    rest, few in most positions, need a flood fill each (``street_ok_at``'s last step). The same
    answers as :func:`analyse_by_tarjan` (a test holds them equal), which it falls back to where the
    flood fills would cost more, and where the empty lots are not one network (hand-built
    positions only), since there the two passes see different networks."""
    empty = empty_bits(board)
    if empty == 0:
        return StreetInfo(0, 0, 0, 0, 0, 0, (-1,) * N_LOTS, True)
    n, ne, e, se, s, sw, w, nw = (
        empty >> 1 & _HAS_N, empty >> 11 & _HAS_NE, empty >> 10, empty >> 9 & _HAS_SE,
        empty << 1 & _HAS_S, empty << 11 & _HAS_SW, empty << 10 & _HAS_W, empty << 9 & _HAS_NW)
    sides_1 = n | e | s | w  # at least one street side
    sides_2 = n & (e | s | w) | e & (s | w) | s & w  # at least two
    lonely = ~empty & sides_1 & ~sides_2  # structures with a single street side
    critical = grow(lonely) & empty
    # RING_JOINS for every lot at once: each run of empty ring cells that holds a street side
    # starts at one ring cell; a lot joins up when exactly one run starts (or the ring is empty).
    joins = _exactly_one((n & ~nw, ne & ~n & e, e & ~ne, se & ~e & s, s & ~se, sw & ~s & w,
                          w & ~sw, nw & ~w & n)) | n & ne & e & se & s & sw & w & nw
    uncertain = empty & sides_2 & ~joins
    articulation = 0
    if uncertain.bit_count() > _MAX_FLOOD_FILLS:
        return analyse_by_tarjan(board, icons, joins)
    while uncertain:
        bit = uncertain & -uncertain
        uncertain ^= bit
        sides = empty & NEIGHBOUR_BITS[bit.bit_length() - 1]
        if spread(sides & -sides, empty & ~bit, sides) & sides != sides:
            articulation |= bit
    if articulation and spread(empty & -empty, empty, empty) != empty:
        return analyse_by_tarjan(board, icons, joins)
    street_ok = empty & ~critical & ~articulation if empty & (empty - 1) else 0
    return StreetInfo(empty, critical, articulation, street_ok, _rule_3(street_ok, icons),
                      street_ok & joins)


def _rule_3(street_ok: int, icons: int) -> int:
    """The street-legal lots that rule 3 lets be built on: an icon lot waits while another lot of
    its tile is street-legal."""
    plain = street_ok & ~icons
    # Each plain lot marks its whole tile (2 x 2 lots: the lot beside it, above or below it, and
    # the one diagonally across).
    across = (plain & _EVEN_COLUMN) << 10 | (plain & ~_EVEN_COLUMN) >> 10
    tile = plain | across
    tile |= (tile & _EVEN_ROW) << 1 | (tile & ~_EVEN_ROW & ALL_LOTS) >> 1
    return street_ok & ~(icons & tile)


def _exactly_one(bitboards: tuple[int, ...]) -> int:
    """The bits set in exactly one of ``bitboards``."""
    once = twice = 0
    for bits in bitboards:
        twice |= once & bits
        once |= bits
    return once & ~twice


def analyse_by_tarjan(board: Sequence[int], icons: int, joins: int | None = None) -> StreetInfo:
    """What :func:`analyse` answers, from one Tarjan pass over the empty lots, from the lowest
    one: the plain way, kept as analyse's fallback and as the reference its test compares with.
    ``joins``: the lots whose street neighbours join up around them, if known."""
    empty = [cell == 0 for cell in board]
    critical = [False] * N_LOTS
    n_empty = 0
    for i in range(N_LOTS):
        if empty[i]:
            n_empty += 1
            continue
        only = -1
        count = 0
        for j in NEIGHBOURS[i]:
            if empty[j]:
                count += 1
                only = j
        if count == 1:
            critical[only] = True
    articulation, block, visited = _tarjan_pass(empty)
    empty_set = critical_set = articulation_set = 0
    for i in range(N_LOTS):
        if empty[i]:
            empty_set |= BIT[i]
        if critical[i]:
            critical_set |= BIT[i]
        if articulation[i]:
            articulation_set |= BIT[i]
    street_ok = 0
    if n_empty >= 2:
        for i in range(N_LOTS):
            if empty[i] and not articulation[i] and not critical[i]:
                street_ok |= BIT[i]
    if joins is None:
        joins = sum(BIT[m] for m in lots_of(street_ok) if locally_simple(m, empty, -1))
    return StreetInfo(empty_set, critical_set, articulation_set, street_ok, _rule_3(street_ok, icons),
                      street_ok & joins, block, visited == n_empty)


def _tarjan_pass(empty: list[bool]) -> tuple[tuple[bool, ...], tuple[int, ...], int]:
    """Articulation flags and block ids (see ``StreetInfo.block``) of the empty lots reached from
    the lowest one, and how many were reached."""
    articulation = [False] * N_LOTS
    block = [-1] * N_LOTS
    root = next((i for i in range(N_LOTS) if empty[i]), -1)
    visited = _tarjan(root, empty, articulation, block) if root >= 0 else 0
    return tuple(articulation), tuple(block), visited


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
_STEP_EAST = sum(BIT[i] for i in range(N_LOTS) if i < 70)  # lots that have a lot east (+10)
_STEP_WEST = sum(BIT[i] for i in range(N_LOTS) if i >= 10)  # lots that have a lot west (-10)
# The lots that have a neighbour that way, for ``analyse``'s shifted boards: bit i of
# ``empty >> 1 & _HAS_N`` says whether the lot north of lot i is empty, and so on around the ring.
_HAS_N, _HAS_S, _HAS_W = _STEP_NORTH, _STEP_SOUTH, _STEP_WEST
_HAS_NE, _HAS_SE = _STEP_NORTH & _STEP_EAST, _STEP_SOUTH & _STEP_EAST
_HAS_SW, _HAS_NW = _STEP_SOUTH & _STEP_WEST, _STEP_NORTH & _STEP_WEST
# Lots in an even column (A, C, ...: the west half of a tile) and in an even row counted from 0
# (rows 1, 3, ...: the south half of a tile).
_EVEN_COLUMN = sum(BIT[i] for i in range(N_LOTS) if i // 10 % 2 == 0)
_EVEN_ROW = sum(BIT[i] for i in range(N_LOTS) if i % 10 % 2 == 0)
# Above this many lots for a flood fill each, ``analyse`` takes one Tarjan pass instead (late,
# maze-like positions).
_MAX_FLOOD_FILLS = 16


# A 3x3 window as 9 bits: SW W NW, S (centre) N, SE E NE; the ring order (N, NE, E, SE, S, SW, W,
# NW) names these bits:
_WINDOW_OF_RING = (5, 8, 7, 6, 3, 0, 1, 2)
WINDOW_JOINS: tuple[bool, ...] = tuple(
    RING_JOINS[sum(1 << k for k, b in enumerate(_WINDOW_OF_RING) if w >> b & 1)] for w in range(512))
WINDOW_ON_BOARD: tuple[int, ...] = tuple(
    sum(1 << b for b, c in zip(_WINDOW_OF_RING, RING[i], strict=True) if c >= 0) for i in range(N_LOTS))


# Board cells as binary digits: "1" for an empty lot (cell 0), "0" for any structure.
_EMPTY_DIGIT = bytes.maketrans(bytes(range(256)), b"1" + b"0" * 255)


def empty_bits(board: Sequence[int]) -> int:
    """The empty lots of a board, as a bitboard. The cells are read as a string of binary digits,
    lot 0 last: one C-level pass each for bytes, translate and int instead of a Python loop."""
    return int(bytes(board).translate(_EMPTY_DIGIT)[::-1], 2)


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


# The lots of each byte of a bitboard: _BYTE_LOTS[k][b] are the lots of byte value b at byte k.
_BYTE_LOTS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(8 * k + j for j in range(8) if b >> j & 1) for b in range(256))
    for k in range((N_LOTS + 7) // 8))


def lots_of(bits: int) -> list[int]:
    """The lot indices of a bitboard, ascending. A board of many lots goes a byte at a time
    through a table (the legal listing's lots: a few steps instead of one per lot)."""
    out: list[int] = []
    if bits.bit_count() > 8:
        for lots, b in zip(_BYTE_LOTS, bits.to_bytes(len(_BYTE_LOTS), "little"), strict=True):
            if b:
                out += lots[b]
        return out
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


def street_survives(info: StreetInfo, board: Sequence[int], lot: int, icons: int) -> bool:
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
    return bool(analyse(after, icons).street_ok_bits)
