"""The tile catalogue against the rules file: counts, arrows, and segments that agree with edges."""

from __future__ import annotations

from collections import Counter

import pytest

from engine.space_truckin.catalogue import (
    EDGES,
    NE,
    PILE_TILES,
    SEG_AT,
    SEG_DIRS,
    START_TILE,
    START_TILE_ID,
    SW,
    TABLE,
    TILE_INDEX,
    TILES,
)

SPACE = [t for t in TILES if not t.black_hole]

# Counts and arrow counts copied from the rules file's table, by kind.
RULES_TABLE = {
    "station": ("VVVV", 4, 1), "station-wormhole": ("VVWV", 3, 1), "void": ("VVVV", 3, 1),
    "straight": ("WVWV", 10, 2), "curve": ("VVWW", 11, 2), "junction3": ("VWWW", 4, 1),
    "junction4": ("WWWW", 1, 0), "cap": ("PVVV", 6, 1), "cap-straight": ("PWVW", 4, 1),
    "cap-curve-right": ("PWWV", 3, 1), "cap-curve-left": ("PVWW", 3, 1),
    "cap-junction": ("PWWW", 3, 1), "band": ("PVPV", 3, 1), "two-caps-opposite": ("PVPV", 3, 1),
    "corner": ("PPVV", 5, 1), "two-caps-adjacent": ("PPVV", 2, 0), "corner-curve": ("PPWW", 5, 1),
    "three-side": ("PPVP", 4, 1), "three-side-wormhole": ("PPWP", 3, 1), "full": ("PPPP", 1, 0),
}


def test_counts():
    assert len(SPACE) == 81
    assert sum(1 for t in TILES if t.black_hole) == 10
    assert len(PILE_TILES) == 90
    assert START_TILE not in PILE_TILES
    assert len(TILE_INDEX) == len(TILES) == 91


def test_table_matches_rules():
    kinds = Counter(t.kind for t in SPACE)
    assert {k: (edges, count) for k, (edges, count, _) in RULES_TABLE.items()} == {
        row[0]: (row[1], kinds[row[0]]) for row in TABLE}
    for kind, (_, _, with_arrow) in RULES_TABLE.items():
        assert sum(1 for t in SPACE if t.kind == kind and t.arrows) == with_arrow, kind


def test_arrows():
    two = [t.id for t in SPACE if len(t.arrows) == 2]
    assert sorted(two) == ["curve#1", "straight#1"]
    assert all(t.arrows == (NE, SW) for t in SPACE if len(t.arrows) == 2)
    assert all(t.arrows == (NE,) for t in SPACE if len(t.arrows) == 1)
    start = TILES[START_TILE]
    assert start.id == START_TILE_ID and start.kind == "cap-straight" and not start.arrows


def test_ids_unique_and_named():
    for t in TILES:
        assert t.id == f"{t.kind}#{t.copy}"
    assert TILES[TILE_INDEX["blackhole#7"]].black_hole


@pytest.mark.parametrize("tile", SPACE, ids=lambda t: t.id)
def test_segments_consistent_with_edges(tile):
    planet_edges = Counter(e for s in tile.segments if s.kind == "planet" for e in s.edges)
    worm_edges = Counter(e for s in tile.segments if s.kind == "wormhole" for e in s.edges)
    for d, kind in enumerate(tile.edges):
        if kind == "P":
            assert planet_edges[d] == 1 and worm_edges[d] == 0
        elif kind == "W":
            assert worm_edges[d] == 1 and planet_edges[d] == 0
        else:
            assert planet_edges[d] == 0 and worm_edges[d] == 0
    for seg in tile.segments:
        if seg.kind == "wormhole":
            # two ends: edges plus a terminator
            assert len(seg.edges) + (1 if seg.end else 0) == 2
            assert seg.end in (None, "nexus", "station", "planet")
            if seg.end == "nexus":
                assert tile.nexus
            if seg.end == "station":
                assert any(s.kind == "station" for s in tile.segments)
            if seg.end == "planet":
                assert any(s.kind == "planet" for s in tile.segments)
        if seg.kind == "station":
            assert seg.edges == ()


@pytest.mark.parametrize("tile", SPACE, ids=lambda t: t.id)
def test_rotation_tables(tile):
    t = TILE_INDEX[tile.id]
    for q in range(4):
        # at rotation q the tile's N edge faces direction q (90: east)
        assert EDGES[t][q][q] == tile.edges[0]
        for d in range(4):
            s = SEG_AT[t][q][d]
            if EDGES[t][q][d] == "V":
                assert s == -1
            else:
                assert d in SEG_DIRS[t][q][s]
