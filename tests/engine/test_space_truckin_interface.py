"""Space Truckin' through the server's interface: registry, setup, hidden pile, chance, notation, output."""

from __future__ import annotations

import random

import pytest

from engine.base import (
    EngineError,
    IllegalMoveError,
    NotationError,
    OptionsError,
    ReplayError,
    SetupError,
    apply_entry,
    replay,
)
from engine.registry import get_game
from engine.space_truckin import Pass, Place, Remove, SpaceTruckin, Swap, quadrant_of

GAME = SpaceTruckin()


def started(seed: int = 1, n: int = 2):
    setup = GAME.create_setup({}, random.Random(seed), n)
    return setup, GAME.start({}, setup)


def test_registry_and_identity():
    game = get_game("space-truckin")
    assert isinstance(game, SpaceTruckin)
    assert get_game("st") is game
    assert (game.name, game.title, game.id_prefix) == ("space-truckin", "Space Truckin'", "st")
    assert (game.min_players, game.max_players) == (2, 5)
    assert game.seat_names(3) == ["red", "blue", "green"]
    assert game.seat_names(5) == ["red", "blue", "green", "yellow", "white"]
    for n in (1, 6):
        with pytest.raises(OptionsError):
            game.seat_names(n)


def test_options():
    assert GAME.normalize_options({}) == {}
    assert GAME.normalize_options(None) == {}
    with pytest.raises(OptionsError, match="no options"):
        GAME.normalize_options({"edition": "2"})


def test_setup_and_redaction():
    setup = GAME.create_setup({}, random.Random(5), 4)
    assert set(setup) == {"seats", "first", "pile"}
    assert setup["seats"] == ["red", "blue", "green", "yellow"]
    assert setup["first"] in setup["seats"]
    assert len(setup["pile"]) == 90 and len(set(setup["pile"])) == 90
    assert "cap-straight#4" not in setup["pile"]
    public = GAME.redact_setup(setup)
    assert "pile" not in public and public["seats"] == setup["seats"]
    assert "pile" in setup  # not modified
    state = GAME.start({}, public)
    assert state.to_move is None and state.pending_chance() == "draw"
    with pytest.raises(EngineError, match="no pile"):
        GAME.draw_chance(state, public, 10)
    # the first player is random and recorded
    firsts = {GAME.create_setup({}, random.Random(s), 5)["first"] for s in range(40)}
    assert len(firsts) > 2


@pytest.mark.parametrize("bad", [
    {"seats": ["red"], "first": "red"},
    {"seats": ["red", "green"], "first": "red"},
    {"seats": ["red", "blue"], "first": "green"},
    {"seats": ["red", "blue"], "first": "red", "pile": ["cap#1"]},
])
def test_bad_setups(bad):
    with pytest.raises(SetupError):
        GAME.start({}, bad)


@pytest.mark.parametrize("seconds,quadrant", [(0, "NE"), (14, "NE"), (15, "SE"), (29, "SE"),
                                              (30, "SW"), (44, "SW"), (45, "NW"), (59, "NW")])
def test_clock_quadrant(seconds, quadrant):
    assert quadrant_of(seconds) == quadrant
    setup, state = started()
    assert GAME.draw_chance(state, setup, seconds) == {"tile": setup["pile"][0], "quadrant": quadrant}


def test_turns_and_draws():
    setup, state = started(3)
    first = setup["first"]
    draw = GAME.draw_chance(state, setup, 20)
    msgs = state.apply_chance(draw)
    assert msgs[0].startswith(f"{first} draws {draw['tile']}")
    assert state.to_move == first and state.replay_info()["tile"] == draw["tile"]
    assert state.replay_info()["quadrant"] == "SE"
    with pytest.raises(EngineError):
        GAME.draw_chance(state, setup, 0)  # a tile is in hand
    state.push(state.legal_moves()[0])
    assert state.ply == 1 and state.to_move is None
    assert state.replay_info()["tile"] is None
    nxt = GAME.draw_chance(state, setup, 0)
    assert nxt["tile"] == setup["pile"][1]
    state.apply_chance(nxt)
    assert state.to_move == setup["seats"][(setup["seats"].index(first) + 1) % 2]


def test_parse_and_text_round_trip():
    _setup, state = started(2)
    state.apply_chance({"tile": "corner-curve#3", "quadrant": "NE"})
    for text, move in [
        ("place E4 0", None),
        ("PLACE  e4   0", "place E4 0"),
        ("e4 0", "place E4 0"),
        ("place e 4 rot 0", "place E4 0"),
        ("place E4 0 cargo S", "place E4 0 cargo S"),
        ("place E4 0 cargo west", "place E4 0 cargo S"),
        ("place E4 0 battleship e", "place E4 0 battleship N"),
        ("place E4, 0, with a battleship on N", "place E4 0 battleship N"),
    ]:
        parsed = state.parse_move(text)
        assert state.move_text(parsed) == (move or text)
        assert state.parse_move(state.move_text(parsed)) == parsed
    assert state.parse_move("swap F6 270 E5 0") == Swap("E5", 0, "F6", 270)
    assert state.parse_move("Remove f3 South") == Remove("F3", "S")
    assert state.parse_move("pass") == Pass()
    assert state.parse_move("place E4 0 engineer") == Place("E4", 0, "engineer")


@pytest.mark.parametrize("text,fragment", [
    ("", "empty move"),
    ("fly E4 0", "'fly'"),
    ("place Z9 0", "expected a cell"),
    ("place E4 45", "expected 0, 90, 180 or 270"),
    ("place E4 0 spaceship N", "'spaceship'"),
    ("place E4 0 cargo up", "expected an edge"),
    ("remove F3", "expected the edge"),
    ("swap E5 0 F6", "rotation after F6"),
    ("pass now", "'pass' takes nothing"),
])
def test_notation_errors(text, fragment):
    _setup, state = started(2)
    state.apply_chance({"tile": "curve#3", "quadrant": "NE"})
    with pytest.raises(NotationError) as err:
        state.parse_move(text)
    assert fragment in err.value.message
    if text.startswith("place"):
        assert err.value.suggestions


def test_illegal_move_suggestions_are_legal():
    _setup, state = started(2)
    state.apply_chance({"tile": "cap#2", "quadrant": "NE"})
    with pytest.raises(IllegalMoveError) as err:
        state.push("place E5 0")
    assert err.value.rule == "free cell"
    # a move onto a taken cell is offered the legal places nearest to it, not the board's first
    near = err.value.suggestions
    assert near and set(near) <= {state.move_text(m) for m in state.legal_moves()}
    assert all(s.split()[1] in ("E4", "E6", "D5", "F5") for s in near[:2]), near
    with pytest.raises(IllegalMoveError) as err:
        state.push("place E4 0")
    legal = {state.move_text(m) for m in state.legal_moves()}
    assert err.value.suggestions and set(err.value.suggestions) <= legal
    assert any(s.startswith("place E3") or s.startswith("place D4") for s in err.value.suggestions)


def test_moves_refused_while_a_draw_is_pending():
    _setup, state = started(2)
    with pytest.raises(IllegalMoveError) as err:
        state.push("place A1 0")
    assert err.value.rule == "draw"
    assert state.legal_moves() == []


def test_replay_errors_name_the_ply():
    setup, state = started(2)
    draw = GAME.draw_chance(state, setup, 0)
    other = next(s for s in setup["seats"] if s != setup["first"])
    entries = [{"chance": draw}, {"seat": other, "move": "pass"}]
    with pytest.raises(ReplayError, match="turn"):
        replay(GAME, {}, GAME.redact_setup(setup), entries)
    with pytest.raises(ReplayError):
        apply_entry(GAME.start({}, setup), {"seat": setup["first"], "move": "pass"}, 0)


def random_game(seed: int, n: int = 2, upto: int | None = None):
    rng = random.Random(seed)
    setup = GAME.create_setup({}, rng, n)
    state = GAME.start({}, setup)
    while not state.is_over and (upto is None or state.ply < upto):
        if state.pending_chance():
            state.apply_chance(GAME.draw_chance(state, setup, rng.randrange(60)))
        else:
            state.push(state.random_move(rng))
    return setup, state


def test_render_is_narrow_ascii_and_hides_the_pile():
    setup, state = random_game(4, 3, upto=30)
    if state.pending_chance():
        state.apply_chance(GAME.draw_chance(state, setup, 7))
    for viewer in (None, "red", "blue"):
        for text in (state.render(viewer), state.render_legal(viewer)):
            assert text.isascii()
            assert max(len(line) for line in text.splitlines()) <= 72
            future = [t for t in setup["pile"][35:] if t != state.drawn_tile]
            assert not any(t in text for t in future if "#1" not in t)
    text = state.render()
    assert "A     B     C" in text and "Tiles left in the pile" in text
    assert "Drawn:" in text or "black hole" in text


def test_render_shows_the_drawn_tile_in_four_rotations():
    from engine.space_truckin import SpaceTruckinState

    state: SpaceTruckinState = GAME.start({}, {"seats": ["red", "blue"], "first": "red"})
    state.apply_chance({"tile": "curve#2", "quadrant": "SW"})
    text = state.render()
    assert "Drawn: curve#2, clock quadrant SW" in text
    assert "180 legal" in text and "0 arrow" in text
    legal = state.render_legal()
    assert "Free cells away from all tiles:" in legal and "rotation 180" in legal
    assert "cargo on the wormhole S-W" in legal


def test_render_legal_for_a_black_hole():
    state = GAME.start({}, {"seats": ["red", "blue"], "first": "red"})
    state.arrange({"B2": ("straight#3", 0)}, {("B2", "N"): "blue"})
    state.apply_chance({"tile": "blackhole#3", "quadrant": "NE"})
    text = state.render_legal()
    assert "remove B2 N" in text and "(c) pass" in text and "swap" in text
    assert "remove B2 N" in state.legal_placement_texts()


def test_render_html_is_escaped_table():
    _setup, state = random_game(9, 2, upto=20)
    html = state.render_html()
    assert html.startswith("<table") and "</table>" in html
    assert "<script" not in html
    # the seats' points and ships are a table of their own, a row per seat (no <pre> any more:
    # its long lines were wider than a phone)
    pools = html.split("<th>on board</th>", 1)[1]
    assert all(f"<th align=left>{seat}</th>" in pools for seat in state.seats)
    assert "Tiles left in the pile:" in html


def test_help_topics():
    topics = GAME.help_topics()
    assert {"rules", "rulings", "notation"} <= set(topics)
    assert "swap E5 0 F6 270" in topics["notation"]
    assert "cap-straight#4" in topics["rulings"]


def test_score_text_and_details():
    _setup, state = random_game(21, 2)
    sc = state.score()
    assert state.is_over and sc.text.startswith("Final scores ")
    assert sc.text.splitlines()[-1].split() == ["Total", *(str(v) for v in sc.totals.values())]
    assert set(sc.totals) == {"red", "blue"}
    assert sum(e["points"] * len(e["seats"]) for e in sc.details["events"]) == sum(sc.totals.values())
    assert sc.winners


def test_copy_is_independent():
    setup, state = random_game(8, 2, upto=10)
    if state.pending_chance():
        state.apply_chance(GAME.draw_chance(state, setup, 1))
    clone = state.copy()
    before = state.render()
    clone.push(clone.random_move(random.Random(1)))
    assert state.render() == before
