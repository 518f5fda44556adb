"""Hand-built positions for each rule of Space Truckin' that scoring or legality depends on."""

from __future__ import annotations

import random

import pytest

from engine.base import EngineError, IllegalMoveError, NotationError
from engine.space_truckin import Pass, Place, Remove, SpaceTruckin, Swap
from engine.space_truckin.catalogue import EDGES, PILE_TILES, TILE_INDEX, TILES
from engine.space_truckin.geometry import parse_cell

GAME = SpaceTruckin()


def new_state(n: int = 2, first: str = "red"):
    return GAME.start({}, {"seats": GAME.seat_names(n), "first": first})


def rot_for(tile_id: str, edges: str) -> int:
    """The rotation (degrees) at which a tile shows ``edges`` (N E S W as placed)."""
    t = TILE_INDEX[tile_id]
    for q in range(4):
        if EDGES[t][q] == edges:
            return q * 90
    raise AssertionError(f"{tile_id} never shows {edges}")


def draw(state, tile: str, quadrant: str = "NE") -> list[str]:
    return state.apply_chance({"tile": tile, "quadrant": quadrant})


def feature_at(state, cell: str, segment: int = 0):
    node = parse_cell(cell) * 4 + segment
    return next(f for f in state.features() if node in f.nodes)


def cells_of(feature) -> set[str]:
    from engine.space_truckin.geometry import cell_name

    return {cell_name(c) for c in feature.cells}


# --- the torus and the edge rule ------------------------------------------------------------------

def test_seam_matching_east_west():
    st = new_state()
    st.arrange({"A5": ("straight#3", rot_for("straight#3", "VWVW"))})
    draw(st, "cap#2")
    assert not any(m.cell == "I5" for m in st.legal_moves())
    with pytest.raises(IllegalMoveError) as err:
        st.push("place I5 0")
    assert err.value.rule == "edge match"
    assert "its E edge is void but the W edge of A5 (straight#3) is wormhole" in err.value.message


def test_seam_matching_joins_features_across():
    st = new_state()
    st.arrange({"A5": ("straight#3", 90)})
    draw(st, "curve#3")
    i5 = [m.rotation for m in st.legal_moves() if m.cell == "I5"]
    assert i5 and all(EDGES[TILE_INDEX["curve#3"]][r // 90][1] == "W" for r in i5)
    st.push(f"place I5 {i5[0]}")
    f = feature_at(st, "A5")
    assert cells_of(f) == {"A5", "I5"} and f.seam and not f.complete


def test_seam_matching_north_south():
    st = new_state()
    st.arrange({"E1": ("straight#3", 0)})  # wormhole N-S: its S edge faces E9
    draw(st, "cap#2")
    with pytest.raises(IllegalMoveError, match="S edge of E1"):
        st.push("place E9 0")
    assert all(m.cell != "E9" for m in st.legal_moves())


def test_every_legal_placement_matches_and_nothing_else_does():
    st = new_state()
    st.arrange({"D5": ("curve#3", 180), "F5": ("straight#3", 90)})
    draw(st, "cap-curve-left#2")
    legal = {(m.cell, m.rotation) for m in st.legal_moves()}
    for cell in ("D4", "E3", "F4", "G5", "F6", "E6", "D5"):
        for rot in (0, 90, 180, 270):
            probe = st.copy()
            try:
                probe.push(f"place {cell} {rot}")
                ok = True
            except IllegalMoveError:
                ok = False
            assert ok == ((cell, rot) in legal), (cell, rot)


# --- arrows ---------------------------------------------------------------------------------------

def test_one_arrow_fixes_the_rotation():
    st = new_state()
    draw(st, "curve#2", "NW")  # arrow NE at 0 -> NW at 270
    assert {m.rotation for m in st.legal_moves()} == {270}
    with pytest.raises(IllegalMoveError) as err:
        st.push("place A1 0")
    assert err.value.rule == "arrow"
    assert "NW" in err.value.message and "270" in err.value.message
    st.push("place A1 270")


def test_two_arrows_allow_two_rotations():
    st = new_state()
    draw(st, "curve#1", "SE")  # arrows NE and SW
    assert {m.rotation for m in st.legal_moves()} == {90, 270}


def test_arrowless_tile_any_rotation():
    st = new_state()
    draw(st, "curve#3", "SW")
    assert {m.rotation for m in st.legal_moves()} == {0, 90, 180, 270}


def test_arrows_do_not_constrain_swaps():
    st = new_state()
    st.arrange({"A1": ("curve#2", 0), "C1": ("curve#1", 0)})
    draw(st, "blackhole#1", "SW")
    swaps = {(m.rotation_a, m.rotation_b) for m in st.legal_moves()
             if isinstance(m, Swap) and (m.cell_a, m.cell_b) == ("A1", "C1")}
    assert len(swaps) == 16


# --- ships ------------------------------------------------------------------------------------------

def test_ship_may_not_join_a_feature_with_a_ship():
    st = new_state()
    st.arrange({"C2": ("cap#2", 0)}, {("C2", "N"): "blue"})
    draw(st, "band#2")
    with pytest.raises(IllegalMoveError) as err:
        st.push("place C3 0 battleship S")
    assert err.value.rule == "ship deployment"
    assert "blue's battleship at C2" in err.value.message
    assert [st.move_text(m) for m in st.ship_options(Place("C3", 0))] == ["place C3 0"]
    with pytest.raises(IllegalMoveError, match="wormhole segment and band#2 has none"):
        st.push("place C3 0 cargo N")
    with pytest.raises(IllegalMoveError, match="station segment and band#2 has none"):
        st.push("place C3 0 engineer")
    st.push("place C3 0")


def test_segment_named_by_any_edge():
    st = new_state()
    draw(st, "corner-curve#2")
    # at 90 the planet N,E becomes E,S and the wormhole S-W becomes W-N
    assert st.parse_move("place A1 90 battleship s") == Place("A1", 90, "battleship", "E")
    assert st.parse_move("place A1 90 cargo W") == Place("A1", 90, "cargo", "N")
    assert st.parse_move("A1 90 cargo") == Place("A1", 90, "cargo", "N")
    st.push("place A1 90 cargo w")
    assert st.last_move == "red: place A1 90 cargo N"
    assert st.ship_at(parse_cell("A1"), 1) == "red"
    assert st.pools()["red"]["pool"] == 6


def test_ambiguous_segment_needs_an_edge():
    st = new_state()
    draw(st, "junction3#2")
    with pytest.raises(NotationError) as err:
        st.parse_move("place A1 0 cargo")
    assert "place A1 0 cargo E" in err.value.suggestions


def test_empty_pool():
    st = new_state()
    st.arrange({}, {})
    st._pool[0] = 0
    draw(st, "cap#2")
    with pytest.raises(IllegalMoveError, match="no ship in the pool"):
        st.push("place A1 0 battleship N")
    assert [st.move_text(m) for m in st.ship_options(Place("A1", 0))] == ["place A1 0"]


# --- completion and scoring -----------------------------------------------------------------------

def test_wormhole_loop_across_the_seam():
    st = new_state()
    loop = {"A1": ("curve#3", rot_for("curve#3", "VVWW")),   # S-W
            "A9": ("curve#4", rot_for("curve#4", "WVVW")),   # N-W
            "I9": ("curve#5", rot_for("curve#5", "WWVV"))}   # N-E
    st.arrange(loop, {("A9", "N"): "blue"})
    draw(st, "curve#6")
    closing = rot_for("curve#6", "VWWV")  # S-E closes the loop
    with pytest.raises(IllegalMoveError, match="blue's cargo at A9"):
        st.push(f"place I1 {closing} cargo S")
    msgs = st.push(f"place I1 {closing}")
    assert any("wormhole A1 A9 I1 I9 is complete: blue scores 10" in m for m in msgs)
    assert st.score().totals == {"red": 0, "blue": 10}  # 4 tiles x 2 + 2 seam
    assert st.pools()["blue"] == {"pool": 7, "reserve": 3, "on_board": 0, "lost": 0}
    f = feature_at(st, "A1")
    assert f.complete and f.seam


def test_wormhole_ends_at_terminators():
    st = new_state()
    st.arrange({"B2": ("junction3#2", 180), "B3": ("straight#3", 0)}, {("B3", "N"): "red"})
    draw(st, "station-wormhole#2")
    msgs = st.push("place B4 0")  # S wormhole ends at the station
    assert any("wormhole B2 B3 B4 is complete: red scores 6" in m for m in msgs)
    assert st.score().totals["red"] == 6


def test_two_tile_exception():
    st = new_state()
    st.arrange({"C2": ("cap#2", 0)}, {("C2", "N"): "red"})
    draw(st, "cap#3")
    msgs = st.push("place C3 180")
    assert st.score().totals == {"red": 2, "blue": 0}
    assert any("2 tiles: 2" in m for m in msgs)
    # the planet bonus: one reserve ship to the pool, and the battleship comes back
    assert st.pools()["red"] == {"pool": 8, "reserve": 2, "on_board": 0, "lost": 0}


def test_three_tiles_score_two_each_and_ties_score_in_full():
    st = new_state()
    st.arrange({"C2": ("cap#2", 0), "C4": ("cap#3", 180)},
               {("C2", "N"): "red", ("C4", "S"): "blue"})
    draw(st, "band#2")
    msgs = st.push("place C3 0")
    assert any("red and blue score 6" in m for m in msgs)
    assert st.score().totals == {"red": 6, "blue": 6}
    assert st.pools()["red"]["reserve"] == 2 and st.pools()["blue"]["reserve"] == 2


def test_majority_takes_all():
    st = new_state()
    st.arrange({"C2": ("cap#2", 0), "C4": ("cap#3", 180), "D3": ("cap#4", 270)},
               {("C2", "N"): "red", ("C4", "S"): "red", ("D3", "W"): "blue"})
    draw(st, "three-side#2")
    st.push(f"place C3 {rot_for('three-side#2', 'PPPV')}")
    assert st.score().totals == {"red": 8, "blue": 0}
    pools = st.pools()
    assert pools["red"]["pool"] == 8 and pools["red"]["reserve"] == 2  # one bonus ship only
    assert pools["blue"]["pool"] == 7 and pools["blue"]["reserve"] == 3  # ship back, no bonus


def test_edge_bonus_across_the_row_seam():
    st = new_state()
    st.arrange({"C9": ("cap#2", 0)}, {("C9", "N"): "red"})
    draw(st, "cap#3")
    st.push("place C1 180")
    assert st.score().totals["red"] == 4  # 2-tile exception + 2 seam


def test_bonus_ship_with_empty_reserve():
    st = new_state()
    st.arrange({"C2": ("cap#2", 0)}, {("C2", "N"): "red"}, reserve={"red": 0})
    draw(st, "cap#3")
    msgs = st.push("place C3 180")
    assert any("no reserve ship left" in m for m in msgs)
    assert st.pools()["red"] == {"pool": 7, "reserve": 0, "on_board": 0, "lost": 0}


def test_deploy_on_the_feature_the_placement_completes():
    st = new_state()
    st.arrange({"C2": ("cap#2", 0)})
    draw(st, "cap#3")
    st.push("place C3 180 battleship S")
    assert st.score().totals["red"] == 2
    assert st.pools()["red"] == {"pool": 8, "reserve": 2, "on_board": 0, "lost": 0}


def test_station_completed_across_the_seam():
    st = new_state()
    ring = {"I2": ("corner#2", "PVVP"), "A2": ("cap#2", "PVVV"), "B2": ("corner#3", "PPVV"),
            "I1": ("cap#3", "VVVP"), "B1": ("cap#4", "VPVV"), "I9": ("corner#4", "VVPP"),
            "A9": ("cap#5", "VVPV")}
    tiles = {cell: (tile, rot_for(tile, edges)) for cell, (tile, edges) in ring.items()}
    tiles["A1"] = ("station#2", 0)
    st.arrange(tiles, {("A1", "station"): "blue"})
    assert not feature_at(st, "A1").complete
    draw(st, "corner#5")
    msgs = st.push(f"place B9 {rot_for('corner#5', 'VPPV')}")
    assert any("station at A1 is complete: blue scores 11 (station 9 + 2 seam)" in m for m in msgs)
    assert st.score().totals == {"red": 0, "blue": 11}
    assert st.pools()["blue"]["pool"] == 7 and st.pools()["blue"]["reserve"] == 3


def test_planet_completed_by_a_swap():
    st = new_state()
    st.arrange({"C2": ("cap#2", 0), "C3": ("band#2", 0), "G7": ("two-caps-opposite#2", 0)},
               {("C2", "N"): "red", ("G7", "N"): "blue"})
    assert not feature_at(st, "C2").complete
    draw(st, "blackhole#1")
    move = st.parse_move("swap G7 0 C3 0")
    assert move == Swap("C3", 0, "G7", 0) and st.move_text(move) == "swap C3 0 G7 0"
    assert move in st.legal_moves()
    msgs = st.push(move)
    assert any("planet C2 C3 is complete: red scores 2" in m for m in msgs)
    assert st.score().totals == {"red": 2, "blue": 0}
    assert st.pools()["red"] == {"pool": 8, "reserve": 2, "on_board": 0, "lost": 0}
    # ships travel with their tiles: blue's battleship is now on C3's N cap, still open
    assert st.ship_at(parse_cell("C3"), 0) == "blue"
    assert not feature_at(st, "C3", 0).complete
    assert TILES[st.tile_at(parse_cell("G7"))[0]].id == "band#2"


def test_swap_checks_edges_with_the_other_swapped_tile():
    st = new_state()
    st.arrange({"C2": ("cap#2", 0), "C3": ("cap#3", 180), "D2": ("void#2", 0)})
    draw(st, "blackhole#1")
    with pytest.raises(IllegalMoveError) as err:
        st.push("swap C2 0 D2 0")  # void to C2 would face the cap's P edge at C3
    assert err.value.rule == "edge match" and "S edge of C3" in err.value.message
    with pytest.raises(IllegalMoveError, match="empty"):
        st.push("swap C2 0 H8 0")
    st.push("swap C2 180 C3 0")  # the caps trade places, both flipped: still a complete planet


def test_black_hole_removes_a_cargo():
    st = new_state()
    st.arrange({"B2": ("straight#3", 0)}, {("B2", "N"): "blue"})
    draw(st, "blackhole#1")
    legal = st.legal_moves()
    assert Remove("B2", "N") in legal and legal[-1] == Pass()
    with pytest.raises(IllegalMoveError) as err:
        st.push("place A1 0")
    assert err.value.rule == "black hole"
    st.push("remove b2 s")  # the segment named by its other edge
    assert st.last_move == "red: remove B2 N"
    assert st.pools()["blue"] == {"pool": 6, "reserve": 3, "on_board": 0, "lost": 1}
    draw(st, "blackhole#2")
    assert not any(isinstance(m, Remove) for m in st.legal_moves())
    with pytest.raises(IllegalMoveError, match="no cargo"):
        st.push("remove B2 N")
    st.push("pass")
    assert st.to_move is None and st.pending_chance() == "draw"


def test_final_scoring():
    st = new_state()
    st.arrange({"A5": ("straight#3", 90), "I5": ("straight#4", 90),
                "C2": ("cap#2", 0), "C3": ("band#2", 0),
                "G2": ("station#2", 0), "G1": ("void#1", 0),
                "E1": ("station#3", 0), "E9": ("void#3", 0)},
               {("A5", "E"): "red", ("C3", "S"): "blue", ("G2", "station"): "red",
                ("E1", "station"): "red"}, pile=["void#2"])
    provisional = st.score().details["provisional"]
    assert provisional == {"red": 4 + 2 + 4, "blue": 2}
    assert st.score().totals == {"red": 0, "blue": 0}
    draw(st, "void#2")
    msgs = st.push("place B7 0")
    assert st.is_over and st.to_move is None and st.pending_chance() is None
    assert st.score().totals == {"red": 10, "blue": 2}
    assert st.score().winners == ["red"]
    text = "\n".join(msgs)
    assert "wormhole A5 I5: red +4 (2 tiles x 1 + 2 seam)" in text
    assert "planet C2 C3: blue +2 (2 tiles x 1)" in text
    assert "station at G2: red +2 (1 + 1 surrounding tiles)" in text
    assert "station at E1: red +4 (1 + 1 surrounding tiles + 2 seam)" in text
    assert st.legal_moves() == []
    with pytest.raises(IllegalMoveError):
        st.push("pass")


def test_game_ends_after_a_black_hole_as_last_tile():
    st = new_state()
    st.arrange({}, pile=["blackhole#4"])
    draw(st, "blackhole#4")
    st.push("pass")
    assert st.is_over


def test_discard():
    """A seeded random game, advanced until some undrawn tile fits nowhere; drawing it discards it."""
    rng = random.Random(7)
    setup = GAME.create_setup({}, rng, 2)
    st = GAME.start({}, setup)
    while not st.is_over:
        if st.pending_chance():
            for t in sorted(st._undrawn):
                tile = TILES[t]
                if not tile.black_hole and not st._placements(t, 0):
                    before = st.tiles_left
                    msgs = draw(st, tile.id, "NE")
                    assert "has no legal placement" in msgs[-1] or "discarded" in " ".join(msgs)
                    assert st.tiles_left == before - 1
                    assert st.drawn_tile is None and st.to_move is None
                    if not st.is_over:
                        assert st.pending_chance() == "draw"
                    with pytest.raises(EngineError, match="not in the pile"):
                        draw(st, tile.id)
                    return
            st.apply_chance(GAME.draw_chance(st, setup, rng.randrange(60)))
            continue
        st.push(st.random_move(rng))
    pytest.fail("no discard situation arose")


def test_draw_must_be_a_tile_still_in_the_pile():
    st = new_state()
    with pytest.raises(EngineError):
        draw(st, "cap-straight#4")  # the start tile
    with pytest.raises(EngineError):
        draw(st, "nonsense#1")
    with pytest.raises(EngineError):
        st.apply_chance({"tile": "cap#1", "quadrant": "UP"})
    draw(st, "cap#1")
    with pytest.raises(EngineError):
        draw(st, "cap#2")  # a tile is already in hand


def test_legal_placement_texts():
    st = new_state()
    draw(st, "cap#2")
    texts = st.legal_placement_texts()
    assert "A1 0" in texts and "E4 0" not in texts  # E4's N edge would meet the start tile's void S
    assert len(texts) == len(st.legal_moves())
    assert all(len(t.split()) == 2 for t in texts)


def test_pile_holds_all_tiles():
    st = new_state()
    assert st.tiles_left == len(PILE_TILES) == 90
