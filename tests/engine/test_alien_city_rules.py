"""Alien City legal builds, claims and turn order on hand-built positions (one test per rule/ruling).

Positions use the fixed layout ``engine.alien_city.positions.DEFAULT_TILES`` (north row first):

    rows 9-10  g4ne k2sw r5nw b3se        rows 3-4  r4se b5nw g1ne k3sw
    rows 7-8   b1sw r3ne k5se g2nw        rows 1-2  r1sw b2ne g3se k4nw
    rows 5-6   k1nw g5sw b4ne r2se

so e.g. C3-D4 is the blue 5 tile with its icon on C4, and G1-H2 is the black 4 tile (icon G2).
"""

from __future__ import annotations

import pytest

from engine.alien_city import AlienCity, Move
from engine.alien_city.positions import position, setup_from_text
from engine.base import IllegalMoveError


def rule_of(state, text: str) -> IllegalMoveError:
    before = state.snapshot()
    with pytest.raises(IllegalMoveError) as info:
        state.push(text)
    assert state.snapshot() == before, "a rejected move must leave the position untouched"
    return info.value


# --- streets -----------------------------------------------------------------------------------------

def test_building_that_cuts_a_structure_off_the_streets_is_illegal() -> None:
    # A1 (corner) has A2 built beside it, so B1 is its only street side.
    state = position("A1:DR A2:DR")
    err = rule_of(state, "dome red B1")
    assert err.rule == "streets"
    assert "A1" in err.message and "B1" in err.message
    assert "B1" not in state.allowed_lots("dome", "red")
    assert "B2" in state.allowed_lots("dome", "red")


def test_building_that_splits_the_street_network_is_illegal() -> None:
    # Column D is walled except D5: building there would split west from east.
    state = position("D1:DB D2:DB D3:DB D4:DB D6:DG D7:DR D8:DR D9:DK D10:DK")
    err = rule_of(state, "dome green D5")
    assert err.rule == "streets"
    assert "split" in err.message
    assert all("D5" not in state.allowed_lots(k, c) for k, c in
               [("tower", "red"), ("tower", "green"), ("dome", "green"), ("dome", "black")])
    # The message says where the piece may go instead.
    assert "may go on" in err.message and "C6" in err.message


def test_street_rule_accepts_building_next_to_a_wall_when_streets_stay_joined() -> None:
    state = position("D1:DB D2:DB D3:DB D4:DB D6:DG D7:DR D8:DR D9:DK D10:DK")
    state.push("dome green C6")
    assert state.structure_at("C6") is not None


# --- icon lot ----------------------------------------------------------------------------------------

def test_icon_lot_waits_while_another_lot_of_its_tile_is_buildable() -> None:
    state = position()
    err = rule_of(state, "dome blue C4")  # C4 is the icon lot of the blue 5 tile C3-D4
    assert err.rule == "icon lot"
    assert "C3" in err.message and "D4" in err.message
    assert "C4" not in state.allowed_lots("dome", "blue")


def test_icon_lot_is_buildable_when_the_other_empty_lot_of_its_tile_is_not() -> None:
    # Blue 5 tile C3-D4: D3 and D4 built; C3 is empty but is the only street of the dome on C2,
    # so it is not street-legal; the icon lot C4 may therefore be built.
    state = position("C1:DR B2:DR D2:DB C2:DG D3:DB D4:DB")
    assert "C3" not in state.allowed_lots("dome", "blue")
    assert "C4" in state.allowed_lots("dome", "blue")
    state.push("dome blue C4")
    assert state.structure_at("C4").colour == "blue"


def test_icon_lot_is_buildable_once_the_rest_of_its_tile_is_built() -> None:
    state = position("C3:DB D3:DB D4:DB")
    assert "C4" in state.allowed_lots("dome", "blue")


# --- tower colours: first two, black tiles -----------------------------------------------------------

def test_first_two_structures_on_a_tile_must_match_it() -> None:
    state = position()
    err = rule_of(state, "tower red D3")  # blue tile
    assert err.rule == "tower colour"
    assert "blue" in err.message and "0 structures" in err.message
    assert "tower blue D3" in err.suggestions or "tower red" in " ".join(err.suggestions)
    one = position("C3:DB")
    assert rule_of(one, "tower red D3").rule == "tower colour"
    two = position("C3:DB D4:DB")
    two.push("tower red D3")
    assert two.structure_at("D3").colour == "red"


def test_black_tiles_take_towers_of_any_colour_at_any_time() -> None:
    state = position()
    for colour in ("red", "blue", "green"):
        assert "G1" in state.allowed_lots("tower", colour)
    state.push("tower green G1")
    assert state.structure_at("G1").kind == "tower"


def test_domes_go_on_their_own_colour() -> None:
    state = position()
    err = rule_of(state, "dome red G1")  # black tile; red lots are still free
    assert err.rule == "dome colour"
    assert "red tiles" in err.message
    assert "dome black G1" in err.suggestions


# --- dome fallback -----------------------------------------------------------------------------------

# Blue tiles placed away from corners and from each other, so all 20 blue lots can be built on.
FALLBACK_TILES = """
g1sw b1ne r1sw k1sw
r2sw g2sw k2sw r3sw
b2sw g3sw b3sw k3sw
r4sw g4sw k4sw b4sw
r5sw b5sw g5sw k5sw
"""
BLUE_LOTS = ["C1", "D1", "C2", "D2", "G3", "H3", "G4", "H4", "A5", "B5", "A6", "B6", "E5", "F5",
             "E6", "F6", "C9", "D9", "C10", "D10"]
FILL = ["DR"] * 6 + ["DG"] * 6 + ["DK"] * 6 + ["TR", "TG"]


def test_dome_fallback_when_no_lot_of_its_colour_is_buildable() -> None:
    state = position(dict(zip(BLUE_LOTS, FILL, strict=True)), tiles=FALLBACK_TILES)
    assert state.dome_fallback("blue")
    assert not state.dome_fallback("red")
    # B4 is on the red 4 tile with no structure yet: the fallback waives the first-two rule.
    state.push("dome blue B4")
    assert state.structure_at("B4").colour == "blue"
    # ... but only for that dome: a blue tower still needs a blue or black tile, or 2+ structures.
    assert rule_of(state, "tower blue H8").rule == "tower colour"


def test_no_dome_fallback_while_one_lot_of_that_colour_is_buildable() -> None:
    lots = dict(zip(BLUE_LOTS, FILL, strict=True))
    del lots["D1"]  # one blue lot left free and buildable
    state = position(lots, tiles=FALLBACK_TILES)
    assert not state.dome_fallback("blue")
    assert state.allowed_lots("dome", "blue") == ["D1"]
    err = rule_of(state, "dome blue B4")
    assert err.rule == "dome colour"
    assert "D1" in err.message


def test_dome_fallback_is_listed_in_the_legal_moves() -> None:
    state = position(dict(zip(BLUE_LOTS, FILL, strict=True)), tiles=FALLBACK_TILES)
    listing = state.render_legal("black")
    assert "blue dome (no blue-tile lot is free: anywhere)" in listing


# --- occupied, supply, caps, claims ------------------------------------------------------------------

def test_occupied_lot() -> None:
    state = position("G1:DK")
    err = rule_of(state, "tower red G1")
    assert err.rule == "occupied"
    assert "black dome G1" in err.message


def test_supply() -> None:
    state = position(supply={"black": {"dome black": 1}})
    err = rule_of(state, "tower red G1")
    assert err.rule == "supply"
    assert "black holds 1 dome black" in err.message
    assert err.suggestions == ["dome black G1", "dome black H1", "dome black H2", "dome black G4",
                               "dome black H3"]


def test_claim_any_unclaimed_tower_including_the_one_just_built() -> None:
    state = position("H3:TB")
    state.push("tower green G1 claim G1")
    assert state.structure_at("G1").claimed_by == "black"
    assert state.caps_left("black") == 2
    state.push("dome black H1 claim H3")
    assert state.structure_at("H3").claimed_by == "white"
    assert state.last_move == "white: dome black H1 claim H3"


def test_claim_targets_must_be_unclaimed_towers() -> None:
    state = position("H3:TBw H4:DK")
    assert rule_of(state, "tower green G1 claim H3").rule == "claim target"
    err = rule_of(state, "tower green G1 claim H4")
    assert err.rule == "claim target" and "only towers" in err.message
    assert err.suggestions[0] == "tower green G1 claim G1"
    assert rule_of(state, "tower green G1 claim A1").rule == "claim target"
    assert rule_of(state, "dome black G1 claim G1").rule == "claim target"


def test_no_caps_left() -> None:
    state = position("H3:TB", caps={"black": 0, "white": 3})
    err = rule_of(state, "tower green G1 claim H3")
    assert err.rule == "no caps"
    assert err.suggestions == ["tower green G1"]
    assert not state.can_claim()
    assert "no caps left" in state.render_legal("black")


def test_handicap_extra_claims_add_caps() -> None:
    state = AlienCity().start({"handicap": {"white": {"reach": 2, "extra_claims": 2}}},
                              setup_from_text())
    assert state.caps_left("white") == 5
    assert state.caps_left("black") == 3


# --- last turn, skipped turns, game end --------------------------------------------------------------

def test_no_claim_on_the_game_ending_build() -> None:
    state = position("H3:TB", supply={"black": {"dome black": 1}, "white": {}})
    assert state.ending_moves() == state.legal_moves()
    assert not state.can_claim()
    err = rule_of(state, "dome black G1 claim H3")
    assert err.rule == "no claim on the last turn"
    assert err.suggestions == ["dome black G1"]
    assert "G1*" in state.render_legal("black")
    assert "Every build ends the game" in state.render_legal("black")
    assert "dome black G1" in state.replay_info()["ending"]
    notes = state.push("dome black G1")
    assert state.is_over and state.to_move is None
    assert notes == ["Neither seat has a legal build: the game is over."]
    assert rule_of(state, "dome black H1").rule == "game over"


def test_claim_allowed_on_own_last_build_when_the_other_seat_still_builds() -> None:
    state = position("H3:TB", supply={"black": {"dome black": 1}, "white": {"dome black": 1}})
    assert state.ending_moves() == []
    state.push("dome black G1 claim H3")
    assert state.to_move == "white"


def test_skipped_turn_is_automatic_and_announced() -> None:
    state = position(supply={"black": {"dome black": 2}, "white": {}})
    notes = state.push("dome black G1")
    assert notes == ["white has no legal build and passes; black moves again."]
    assert state.to_move == "black" and state.ply == 1
    notes = state.push("dome black H1")
    assert state.is_over and state.ply == 2


# A late position found in self-play: both seats hold towers only, and few lots are buildable.
LATE_TILES = """
b3nw b1nw b5ne b4se
g1nw r4ne g4nw r5sw
r2nw g3se r3ne g2ne
r1ne k4ne k3se g5nw
k5nw b2se k1sw k2nw
"""
LATE = ("A7:DG A10:DB B1:DK B2:TR B3:TR B5:DR B9:DB B10:DB C1:DB C2:DB C3:TB C5:DG C6:TG C7:DR "
        "D3:DK D4:TB D5:TR D6:DG D7:DR E2:DK E3:TB E4:DK E9:TB F5:DR F6:TR F8:TG G3:DG G6:DG G8:DR "
        "H1:DK H2:DK H3:DG H8:DR H10:DB")


def late_position():
    return position(LATE, tiles=LATE_TILES, supply={
        "black": {"tower blue": 1, "tower green": 1}, "white": {"tower red": 1, "tower green": 1}})


def test_seat_with_pieces_but_no_legal_lot_is_skipped() -> None:
    state = late_position()
    assert [state.move_text(m) for m in state.legal_moves()] == [
        "tower blue C9", "tower blue D9", "tower blue F9", "tower blue G10", "tower green G5"]
    assert state.ending_moves() == []
    notes = state.push("tower green G5")
    # White still holds a red and a green tower, but no lot takes either.
    assert sum(state.supply("white").values()) == 2
    assert not state.has_legal_build("white")
    assert notes == ["white has no legal build and passes; black moves again."]
    assert state.to_move == "black"
    # Black's last tower then ends the game although white still holds pieces.
    assert state.ending_moves() == state.legal_moves()
    state.push("tower blue C9")
    assert state.is_over


def test_turns_alternate_normally() -> None:
    state = position()
    state.push("tower red A3")
    assert state.to_move == "white"
    state.push(Move("dome", "black", "G1"))
    assert state.to_move == "black"
    assert state.ply == 2


# --- symmetric start ---------------------------------------------------------------------------------

def test_symmetric_start_places_two_unclaimed_towers() -> None:
    state = AlienCity().start({"symmetric": True}, setup_from_text())
    # Red 1 tile A1-B2 has its icon on A1 (SW): the red tower stands on B2 (NE).
    # Blue 1 tile A7-B8 has its icon on A7 (SW): the blue tower stands on B8.
    assert state.structures() == {
        "B2": state.structure_at("B2"), "B8": state.structure_at("B8")}
    assert (state.structure_at("B2").kind, state.structure_at("B2").colour) == ("tower", "red")
    assert (state.structure_at("B8").kind, state.structure_at("B8").colour) == ("tower", "blue")
    assert state.structure_at("B2").claimed_by is None
    for seat in ("black", "white"):
        held = state.supply(seat)
        assert (held["tower red"], held["tower blue"], held["tower green"]) == (2, 2, 2)
    assert set(state.claimable_towers()) == {"B2", "B8"}
    # They count as built for the first-two rule: one more red structure opens the tile.
    assert state.ply == 0 and state.to_move == "black"
    state.push("dome red A2")
    assert "A1" in state.allowed_lots("tower", "blue")  # B1 is A1's only street, so A1 may go
    state.push("tower blue A1")
    assert state.structure_at("A1").colour == "blue"


def test_programmatic_moves_are_recorded_canonically() -> None:
    state = position("H3:TB")
    state.push(Move("tower", "green", "g1", "h3"))
    assert state.last_move == "black: tower green G1 claim H3"
    assert state.history() == [("black", "tower green G1 claim H3")]
