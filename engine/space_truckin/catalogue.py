"""The tile catalogue of the rules file, kept as a table so it can be checked against the rules by eye.

The seed publishes no tile list; ``/work/shared/rules/space-truckin.md`` defines one, and this module is
its only copy. Everything the engine needs per tile and rotation (edges as placed, which segment touches
which edge) is derived here once, so the hot paths of the rules only index tuples.
"""

from __future__ import annotations

from dataclasses import dataclass

# Directions and corners are small ints so rotation is modular arithmetic.
N, E, S, W = 0, 1, 2, 3
DIRS = "NESW"
NE, SE, SW, NW = 0, 1, 2, 3
CORNERS = ("NE", "SE", "SW", "NW")
ROTATIONS = (0, 90, 180, 270)
TERMINATORS = ("nexus", "station", "planet")

# kind, edges N E S W, segments, count, arrows of the copies that have any (copies with arrows first).
# Segment language: "station"; "nexus" (a hub, not a segment); "planet N,E" (joined P edges);
# "S-W" (wormhole edge to edge); "S>nexus" (wormhole from an edge to a terminator).
TABLE: tuple[tuple[str, str, str, int, tuple[tuple[int, ...], ...]], ...] = (
    ("station", "VVVV", "station", 4, ((NE,),)),
    ("station-wormhole", "VVWV", "station; S>station", 3, ((NE,),)),
    ("void", "VVVV", "", 3, ((NE,),)),
    ("straight", "WVWV", "N-S", 10, ((NE, SW), (NE,))),
    ("curve", "VVWW", "S-W", 11, ((NE, SW), (NE,))),
    ("junction3", "VWWW", "nexus; E>nexus; S>nexus; W>nexus", 4, ((NE,),)),
    ("junction4", "WWWW", "nexus; N>nexus; E>nexus; S>nexus; W>nexus", 1, ()),
    ("cap", "PVVV", "planet N", 6, ((NE,),)),
    ("cap-straight", "PWVW", "planet N; E-W", 4, ((NE,),)),
    ("cap-curve-right", "PWWV", "planet N; E-S", 3, ((NE,),)),
    ("cap-curve-left", "PVWW", "planet N; S-W", 3, ((NE,),)),
    ("cap-junction", "PWWW", "planet N; nexus; E>nexus; S>nexus; W>nexus", 3, ((NE,),)),
    ("band", "PVPV", "planet N,S", 3, ((NE,),)),
    ("two-caps-opposite", "PVPV", "planet N; planet S", 3, ((NE,),)),
    ("corner", "PPVV", "planet N,E", 5, ((NE,),)),
    ("two-caps-adjacent", "PPVV", "planet N; planet E", 2, ()),
    ("corner-curve", "PPWW", "planet N,E; S-W", 5, ((NE,),)),
    ("three-side", "PPVP", "planet N,E,W", 4, ((NE,),)),
    ("three-side-wormhole", "PPWP", "planet N,E,W; S>planet", 3, ((NE,),)),
    ("full", "PPPP", "planet N,E,S,W", 1, ()),
)
BLACK_HOLES = 10
POOL_SHIPS = 7
RESERVE_SHIPS = 3
# The start tile is the last (arrow-less) copy of cap-straight, so the arrow copies keep numbers 1..k.
START_TILE_ID = "cap-straight#4"


@dataclass(frozen=True)
class Segment:
    """A part of a tile a ship can stand on; ``edges`` are rotation-0 edges, ``end`` a terminator."""

    kind: str  # "planet" | "wormhole" | "station"
    edges: tuple[int, ...]
    end: str | None = None

    def describe(self, rot: int = 0) -> str:
        """Names the segment by its edges as placed at quarter turns ``rot``."""
        placed = [DIRS[(e + rot) % 4] for e in self.edges]
        if self.kind == "station":
            return "station"
        if self.kind == "planet":
            return "planet " + ",".join(sorted(placed, key=DIRS.index))
        if self.end:
            return f"wormhole {placed[0]}>{self.end}"
        return "wormhole " + "-".join(sorted(placed, key=DIRS.index))


@dataclass(frozen=True)
class TileDef:
    id: str
    kind: str
    copy: int
    edges: str  # rotation 0, N E S W; "" for a black hole
    segments: tuple[Segment, ...]
    arrows: tuple[int, ...]  # rotation-0 corners
    nexus: bool

    @property
    def black_hole(self) -> bool:
        return self.kind == "blackhole"

    def arrow_rotations(self, quadrant: int) -> tuple[int, ...]:
        """Quarter turns that put an arrow into ``quadrant``; every rotation when there is no arrow."""
        if not self.arrows:
            return (0, 1, 2, 3)
        return tuple(sorted({(quadrant - a) % 4 for a in self.arrows}))


def _parse_segments(text: str) -> tuple[tuple[Segment, ...], bool]:
    segments: list[Segment] = []
    nexus = False
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        if part == "station":
            segments.append(Segment("station", ()))
        elif part == "nexus":
            nexus = True
        elif part.startswith("planet "):
            edges = tuple(DIRS.index(x) for x in part[len("planet "):].split(","))
            segments.append(Segment("planet", edges))
        elif ">" in part:
            edge, end = part.split(">")
            segments.append(Segment("wormhole", (DIRS.index(edge),), end))
        else:
            a, b = part.split("-")
            segments.append(Segment("wormhole", (DIRS.index(a), DIRS.index(b))))
    return tuple(segments), nexus


def _build() -> tuple[TileDef, ...]:
    tiles: list[TileDef] = []
    for kind, edges, seg_text, count, arrow_copies in TABLE:
        segments, nexus = _parse_segments(seg_text)
        for copy in range(1, count + 1):
            arrows = arrow_copies[copy - 1] if copy <= len(arrow_copies) else ()
            tiles.append(TileDef(f"{kind}#{copy}", kind, copy, edges, segments, arrows, nexus))
    for copy in range(1, BLACK_HOLES + 1):
        tiles.append(TileDef(f"blackhole#{copy}", "blackhole", copy, "", (), (), False))
    return tuple(tiles)


TILES: tuple[TileDef, ...] = _build()
TILE_INDEX: dict[str, int] = {t.id: i for i, t in enumerate(TILES)}
START_TILE: int = TILE_INDEX[START_TILE_ID]
# Everything that is shuffled into the pile: all tiles but the start tile.
PILE_TILES: tuple[int, ...] = tuple(i for i in range(len(TILES)) if i != START_TILE)
MAX_SEGMENTS = 4


def _rotated(tile: TileDef) -> tuple[tuple[str, ...], tuple[tuple[int, ...], ...],
                                     tuple[tuple[tuple[int, ...], ...], ...]]:
    edges_by_rot: list[str] = []
    seg_at_by_rot: list[tuple[int, ...]] = []
    seg_dirs_by_rot: list[tuple[tuple[int, ...], ...]] = []
    for q in range(4):
        if tile.black_hole:
            edges_by_rot.append("")
            seg_at_by_rot.append((-1, -1, -1, -1))
            seg_dirs_by_rot.append(())
            continue
        edges_by_rot.append("".join(tile.edges[(d - q) % 4] for d in range(4)))
        seg_at = [-1, -1, -1, -1]
        dirs: list[tuple[int, ...]] = []
        for s, seg in enumerate(tile.segments):
            placed = tuple(sorted((e + q) % 4 for e in seg.edges))
            dirs.append(placed)
            for d in placed:
                seg_at[d] = s
        seg_at_by_rot.append(tuple(seg_at))
        seg_dirs_by_rot.append(tuple(dirs))
    return tuple(edges_by_rot), tuple(seg_at_by_rot), tuple(seg_dirs_by_rot)


_ROT = [_rotated(t) for t in TILES]
# EDGES[t][q]: edge kinds as placed, indexed by direction. SEG_AT[t][q][d]: segment at direction d.
# SEG_DIRS[t][q][s]: directions (as placed, sorted N E S W) that segment s touches.
EDGES: tuple[tuple[str, ...], ...] = tuple(r[0] for r in _ROT)
SEG_AT: tuple[tuple[tuple[int, ...], ...], ...] = tuple(r[1] for r in _ROT)
SEG_DIRS: tuple[tuple[tuple[tuple[int, ...], ...], ...], ...] = tuple(r[2] for r in _ROT)
del _ROT
