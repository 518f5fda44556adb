"""Alien City scoring on hand-built positions: distances, customers, competition, bonuses, variants."""

from __future__ import annotations

import textwrap

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.alien_city.board import LOT_INDEX
from engine.alien_city.positions import position
from engine.alien_city.scoring import street_distances
from engine.scoretable import PROSE, prose


def distance(state, a: str, b: str) -> int:
    board = [0] * 80
    for lot, s in state.structures().items():
        board[LOT_INDEX[lot]] = 1 if s.kind == "tower" else 4
    return street_distances(board)[LOT_INDEX[a]][LOT_INDEX[b]]


def flat(text: str) -> str:
    """Score texts are wrapped for mail; compare them with line breaks folded away."""
    return " ".join(text.split())


def tower(score, lot: str) -> dict:
    return next(t for t in score.details["towers"] if t["lot"] == lot)


# C4 is black's red tower. Around it: B5 green dome (1), C6 white's green tower (1), D4 blue dome
# (2, round the corner via C3-D3), A4 red dome (1, same colour: never a customer), E4 black dome (3).
# The other red tower, G4, is 5 away along row 3.
CUSTOMERS = "C4:TRb B5:DG C6:TGw D4:DB A4:DR E4:DK G4:TR"


def test_street_distance_counts_empty_lots_between() -> None:
    state = position(CUSTOMERS)
    assert distance(state, "C4", "B5") == 1  # B4 touches both
    assert distance(state, "C4", "D4") == 2  # touching, but no shared street: C3 then D3
    assert distance(state, "C4", "E4") == 3
    assert distance(state, "C4", "G4") == 5


def test_customer_base_times_distance_to_competition() -> None:
    score = position(CUSTOMERS).score()
    c4 = tower(score, "C4")
    assert [(c["lot"], c["distance"]) for c in c4["customers"]] == [
        ("B5", 1), ("C6", 1), ("D4", 2)]
    assert c4["competitor"] == {"lot": "G4", "distance": 5}
    assert c4["points"] == 15
    assert score.totals["black"] == 15
    text = flat(score.text)
    assert "green dome B5 (1)" in text and "blue dome D4 (2)" in text
    assert "competition: red tower G4 at 5" in text
    assert "3 x 5 = 15" in text


def test_customers_count_towers_and_domes_of_both_seats_but_not_same_colour() -> None:
    c6 = tower(position(CUSTOMERS).score(), "C6")
    assert {c["lot"] for c in c6["customers"]} == {"C4", "D4"}  # B5 is green like the tower


def test_no_competitor_scores_zero() -> None:
    score = position(CUSTOMERS).score()
    c6 = tower(score, "C6")  # the only green tower
    assert c6["customer_base"] == 2
    assert c6["competitor"] is None and c6["points"] == 0
    assert score.totals["white"] == 0
    assert "no other green tower on the board, so the tower scores 0" in flat(score.text)


def test_handicap_reach_extends_one_seats_customer_base() -> None:
    score = position(CUSTOMERS, options={"handicap": {"black": {"reach": 3}}}).score()
    c4 = tower(score, "C4")
    assert [c["lot"] for c in c4["customers"]] == ["B5", "C6", "D4", "E4"]
    assert c4["reach"] == 3 and c4["points"] == 4 * 5
    assert "customers within 3" in flat(score.text)
    # White's reach is still 2.
    assert tower(score, "C6")["reach"] == 2


# D5 and E5 touch, but walls north and south (D4 E4, D6 E6) leave them no common street: the way
# round is C5 C4 C3 D3 E3 F3 F4 F5, eight lots.
TOUCHING = "D4:DB D6:DG E4:DK E6:DB D5:TRb E5:TRw"


def test_structures_that_touch_only_each_other_are_not_adjacent_by_street() -> None:
    state = position(TOUCHING)
    assert distance(state, "D5", "E5") == 8
    score = state.score()
    d5 = tower(score, "D5")
    assert d5["competitor"] == {"lot": "E5", "distance": 8}
    assert [c["lot"] for c in d5["customers"]] == ["D4", "D6"]
    assert d5["points"] == 16
    e5 = tower(score, "E5")
    assert [c["lot"] for c in e5["customers"]] == ["E4", "E6"] and e5["points"] == 16


def test_equal_totals_are_a_draw() -> None:
    state = position(TOUCHING)
    score = state.score()
    assert score.totals == {"black": 16, "white": 16}
    assert sorted(score.winners) == ["black", "white"]
    # the table gives the totals; who wins or leads is the server's to say, once, in its mail
    assert score.text.splitlines()[-1].split() == ["Total", "16", "16"]
    assert not any(word in score.text for word in ("level", "leads", "wins", "draw"))


# --- Control Guild bonus ---------------------------------------------------------------------------

def bonus(score, green: str, colour: str) -> dict:
    return next(b for b in score.details["bonuses"]
                if b["green"] == green and b["colour"] == colour)


def test_control_guild_bonus_paid_to_owner_of_nearest_tower() -> None:
    # Unclaimed green D5; black's red tower B5 shares C5 with it (1); white's blue D8 is 2 away.
    score = position("D5:TG B5:TRb D8:TBw").score()
    red = bonus(score, "D5", "red")
    assert (red["distance"], red["seat"], red["points"]) == (1, "black", 8)
    blue = bonus(score, "D5", "blue")
    assert (blue["distance"], blue["seat"], blue["points"]) == (2, "white", 6)
    assert "Control Guild bonus: green tower D5, nearest red tower B5 at 1: 10 - 2 x 1 = 8" \
        in flat(score.text)


def test_control_guild_bonus_needs_distance_at_most_four() -> None:
    # Red tower A1: from D5 the nearest street route is 5 lots or more.
    score = position("D5:TG A1:TRb").score()
    red = bonus(score, "D5", "red")
    assert red["distance"] > 4 and red["seat"] is None and red["points"] == 0
    assert score.totals["black"] == 0


def test_unclaimed_nearest_tower_pays_nobody() -> None:
    # B5 (unclaimed) is nearest; the claimed F7 is farther: no bonus at all.
    score = position("D5:TG B5:TR F7:TRb").score()
    red = bonus(score, "D5", "red")
    assert red["nearest"] == ["B5"] and red["seat"] is None
    assert score.details["totals"]["black"] == tower(score, "F7")["points"]


def test_claimed_green_tower_gives_no_bonus() -> None:
    score = position("D5:TGw B5:TRb").score()
    assert score.details["bonuses"] == []


TIE = "D5:TG B5:TRb F5:TRb"  # both red towers share a street lot with D5: a tie at 1


def test_tie_edition_2_2_paid_once_when_one_seat_owns_all_tied_towers() -> None:
    score = position(TIE).score()
    red = bonus(score, "D5", "red")
    assert red["nearest"] == ["B5", "F5"]
    assert (red["seat"], red["points"]) == ("black", 8)
    towers = sum(t["points"] for t in score.details["towers"])
    assert score.totals["black"] == towers + 8


def test_tie_edition_2_2_no_bonus_when_seats_share_the_tie() -> None:
    score = position("D5:TG B5:TRb F5:TRw").score()
    red = bonus(score, "D5", "red")
    assert red["seat"] is None and "both seats" in red["note"]


def test_tie_edition_1_2_pays_no_bonus() -> None:
    score = position(TIE, options={"edition": "1.2"}).score()
    red = bonus(score, "D5", "red")
    assert red["seat"] is None and red["points"] == 0 and "1.2" in red["note"]
    assert score.totals["black"] == sum(t["points"] for t in score.details["towers"])


# --- location bonus --------------------------------------------------------------------------------

def test_location_bonus_unless_another_claimed_tower_shares_the_number() -> None:
    # A3 is on the red 4 tile, G1 on the black 4 tile, C3 on the blue 5 tile.
    state = position("A3:TRb G1:TGw C3:TBb", options={"location_bonus": True})
    score = state.score()
    loc = {entry["lot"]: entry for entry in score.details["location"]}
    assert loc["A3"]["points"] == 0 and loc["A3"]["shared_with"] == ["G1"]
    assert loc["G1"]["points"] == 0
    assert loc["C3"]["points"] == 5
    towers = {seat: sum(t["points"] for t in score.details["towers"] if t["owner"] == seat)
              for seat in ("black", "white")}
    assert score.totals == {"black": towers["black"] + 5, "white": towers["white"]}
    assert "location bonus: tower C3 on a tile numbered 5: 5" in flat(score.text)


def test_location_bonus_two_claimed_towers_on_one_tile_share_its_number() -> None:
    score = position("A3:TRb B4:TRb", options={"location_bonus": True}).score()
    assert [e["points"] for e in score.details["location"]] == [0, 0]


def test_location_bonus_is_off_by_default() -> None:
    assert position("C3:TBb").score().details["location"] == []


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab-.\u00a0\u2003 \t\n", max_size=90), st.sampled_from(["", "  ", "    "]))
def test_score_prose_is_textwrap(text, indent):
    """The score table's lines skip textwrap when a text fits on one line: exactly textwrap's lines,
    for any input (spaces textwrap does not break at, at the ends too)."""
    assert prose(text, indent) == textwrap.wrap(text, PROSE, initial_indent=indent, subsequent_indent=indent,
                                                break_on_hyphens=False)
