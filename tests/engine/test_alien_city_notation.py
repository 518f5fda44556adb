"""Alien City move notation: canonical texts, every accepted shortcut, and helpful errors."""

from __future__ import annotations

import pytest

from engine.alien_city import Move
from engine.alien_city.positions import position
from engine.base import NotationError


@pytest.fixture
def state():
    return position()


@pytest.mark.parametrize(("text", "move"), [
    ("tower red C4", Move("tower", "red", "C4")),
    ("dome black A1", Move("dome", "black", "A1")),
    ("tower blue E7 claim C4", Move("tower", "blue", "E7", "C4")),
    ("tower blue E7 claim E7", Move("tower", "blue", "E7", "E7")),
    ("dome green H10", Move("dome", "green", "H10")),
])
def test_canonical_texts_parse_and_print_back(state, text: str, move: Move) -> None:
    assert state.parse_move(text) == move
    assert state.move_text(move) == text


@pytest.mark.parametrize(("text", "canonical"), [
    ("TOWER RED c4", "tower red C4"),
    ("TR C4", "tower red C4"),
    ("tr c4", "tower red C4"),
    ("DK A1", "dome black A1"),
    ("KD a1", "dome black A1"),
    ("RT-C4", "tower red C4"),
    ("rt-c4", "tower red C4"),
    ("TRC4", "tower red C4"),
    ("red tower c4", "tower red C4"),
    ("black dome a1", "dome black A1"),
    ("DB D3 claim C4", "dome blue D3 claim C4"),
    ("TB E7 + C4", "tower blue E7 claim C4"),
    ("TB E7 +C4", "tower blue E7 claim C4"),
    ("TB E7+C4", "tower blue E7 claim C4"),
    ("TB E7 (C4)", "tower blue E7 claim C4"),
    ("TB E7(c4)", "tower blue E7 claim C4"),
    ("tower blue e7 claims c4", "tower blue E7 claim C4"),
    ("  tower   red    C4  ", "tower red C4"),
    ("tower red C4.", "tower red C4"),
    ("Tower Green H10 claim A10.", "tower green H10 claim A10"),
    ("t g b5", "tower green B5"),
])
def test_shortcuts(state, text: str, canonical: str) -> None:
    assert state.move_text(state.parse_move(text)) == canonical


def notation_error(state, text: str) -> NotationError:
    with pytest.raises(NotationError) as info:
        state.parse_move(text)
    return info.value


def test_unknown_word_is_named_and_same_lot_moves_suggested(state) -> None:
    err = notation_error(state, "tower purple G1")
    assert '"purple"' in err.message
    # G1 is on a black tile: every tower colour may go there, and those come first.
    assert err.suggestions[:3] == ["tower red G1", "tower blue G1", "tower green G1"]
    assert "Did you mean: tower red G1" in str(err)


def test_misspelt_word_gets_a_hint_and_is_used_for_suggestions(state) -> None:
    err = notation_error(state, "towr red G1")
    assert '"towr"' in err.message and 'did you mean "tower"' in err.message
    assert err.suggestions[0] == "tower red G1"


def test_lot_off_the_board_suggests_nearby_legal_lots(state) -> None:
    err = notation_error(state, "tower red C11")
    assert '"C11" is not a lot' in err.message
    assert "A-H" in err.message and "1-10" in err.message
    assert err.suggestions[0] == "tower red C10"
    err = notation_error(state, "dome black J1")
    assert '"J1" is not a lot' in err.message
    assert err.suggestions[0] == "dome black H1"


def test_missing_parts_are_named(state) -> None:
    err = notation_error(state, "tower red")
    assert "no lot" in err.message
    assert all(s.startswith("tower red ") for s in err.suggestions)
    assert "no kind" in notation_error(state, "red G1").message
    assert "no colour" in notation_error(state, "tower G1").message
    assert "empty move" in notation_error(state, "   ").message


def test_claim_errors(state) -> None:
    assert "must be followed by the lot" in notation_error(state, "tower red G1 claim").message
    err = notation_error(state, "tower red G1 claim X9")
    assert '"X9"' in err.message
    err = notation_error(state, "tower red G1 claim tower")
    assert '"tower"' in err.message
    assert "at most one tower" in notation_error(state, "TR G1 claim C4 D4").message


def test_conflicting_or_impossible_pieces(state) -> None:
    assert "second colour" in notation_error(state, "tower red G1 blue").message
    assert "second kind" in notation_error(state, "tower dome red G1").message
    assert "second lot" in notation_error(state, "tower red G1 H1").message
    err = notation_error(state, "tower black G1")
    assert "no black towers" in err.message
    assert "dome black G1" in err.suggestions


def test_suggestions_come_from_legal_moves(state) -> None:
    legal = {state.move_text(m) for m in state.legal_moves()}
    for text in ["tower purple C4", "TX C4", "dome red Z3", "zzz"]:
        err = notation_error(state, text)
        assert err.suggestions, text
        assert set(err.suggestions) <= legal


def test_suggestions_keep_the_claim(state) -> None:
    err = notation_error(state, "tower purpel G1 claim G1")
    assert err.suggestions[0] == "tower red G1 claim G1"
