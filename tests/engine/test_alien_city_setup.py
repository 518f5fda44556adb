"""Alien City options, setups (2.2 tiles, 1.2 ranks and dice), setup validation and help texts."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from engine.alien_city import AlienCity
from engine.alien_city.positions import setup_from_text
from engine.base import OptionsError, SetupError
from engine.options import parse_option_words
from engine.registry import get_game

GAME = AlienCity()
DEFAULTS = {"edition": "2.2", "symmetric": False, "location_bonus": False,
            "handicap": {"black": {"reach": 2, "extra_claims": 0},
                         "white": {"reach": 2, "extra_claims": 0}}}


def test_registry_and_identity() -> None:
    game = get_game("alien-city")
    assert isinstance(game, AlienCity)
    assert (game.name, game.title, game.id_prefix) == ("alien-city", "Alien City", "ac")
    assert (game.min_players, game.max_players) == (2, 2)
    assert game.seat_names(2) == ["black", "white"]
    with pytest.raises(OptionsError):
        game.seat_names(3)
    assert [(s.name, s.kind) for s in game.option_specs] == [
        ("edition", "choice"), ("symmetric", "flag"), ("location_bonus", "flag"),
        ("handicap", "seat-list")]


def test_normalize_options_fills_every_default() -> None:
    assert GAME.normalize_options(None) == DEFAULTS
    assert GAME.normalize_options({}) == DEFAULTS


def test_option_words_from_the_cli_and_mail() -> None:
    raw = parse_option_words(GAME, ["--edition", "1.2", "symmetric", "location-bonus",
                                    "handicap", "white:3:1", "handicap=black:4"])
    options = GAME.normalize_options(raw)
    assert options == {"edition": "1.2", "symmetric": True, "location_bonus": True,
                       "handicap": {"black": {"reach": 4, "extra_claims": 0},
                                    "white": {"reach": 3, "extra_claims": 1}}}
    assert GAME.normalize_options(options) == options


@pytest.mark.parametrize(("options", "named"), [
    ({"colour": "red"}, "colour"),
    ({"edition": "3.0"}, "edition"),
    ({"symmetric": "maybe"}, "symmetric"),
    ({"handicap": {"grey": {"reach": 3}}}, "grey"),
    ({"handicap": {"white": {"reach": 1}}}, "reach"),
    ({"handicap": {"white": {"reach": 3, "extra_claims": -1}}}, "extra_claims"),
    ({"handicap": {"white": {"range": 3}}}, "range"),
    ({"handicap": ["white:3:x"]}, "extra claims"),
])
def test_bad_options_name_the_key(options: dict, named: str) -> None:
    with pytest.raises(OptionsError) as info:
        GAME.normalize_options(options)
    assert named in str(info.value)


@pytest.mark.parametrize("value", ["white", "grey:3:1", "white:one:1", "white:3:1:2"])
def test_bad_handicap_values(value: str) -> None:
    with pytest.raises(OptionsError) as info:
        parse_option_words(GAME, ["handicap", value])
    assert "handicap" in str(info.value)


def test_setup_2_2_is_explicit_random_and_reproducible() -> None:
    options = GAME.normalize_options({})
    setup = GAME.create_setup(options, random.Random(7))
    assert setup == GAME.create_setup(options, random.Random(7))
    assert setup != GAME.create_setup(options, random.Random(8))
    assert setup["first"] == "black" and "dice" not in setup
    tiles = setup["tiles"]
    assert len(tiles) == 20
    assert Counter((t["color"], t["number"]) for t in tiles) == Counter(
        (c, n) for c in ("red", "blue", "green", "black") for n in (1, 2, 3, 4, 5))
    assert {t["icon"] for t in tiles} <= {"SW", "SE", "NW", "NE"}
    assert GAME.start(options, setup).to_move == "black"


def _seed_with_reroll() -> tuple[int, dict]:
    options = GAME.normalize_options({"edition": "1.2"})
    for seed in range(1000):
        setup = GAME.create_setup(options, random.Random(seed))
        if len(setup["dice"]) >= 2:
            return seed, setup
    raise AssertionError("no re-roll in 1000 seeds")


def test_setup_1_2_uses_piecepack_ranks_and_rolls_dice() -> None:
    options = GAME.normalize_options({"edition": "1.2"})
    _, setup = _seed_with_reroll()
    assert Counter(t["number"] for t in setup["tiles"]) == Counter({0: 4, 1: 4, 2: 4, 4: 4, 5: 4})
    *ties, last = setup["dice"]
    for round_ in setup["dice"]:
        assert all(len(round_[s]) == 4 and all(0 <= f <= 5 for f in round_[s])
                   for s in ("black", "white"))
    assert all(sum(r["black"]) == sum(r["white"]) for r in ties)
    assert sum(last["black"]) != sum(last["white"])
    winner = max(("black", "white"), key=lambda s: sum(last[s]))
    assert setup["first"] == winner
    state = GAME.start(options, setup)
    assert state.to_move == winner
    text = state.render()
    assert "Dice round 1:" in text and "Dice round 2:" in text
    assert f"{winner} rolled highest and moves first." in text


def test_start_1_2_without_first_derives_it_from_dice() -> None:
    options = GAME.normalize_options({"edition": "1.2"})
    for seed in range(50):
        setup = GAME.create_setup(options, random.Random(seed))
        expected = setup.pop("first")
        assert GAME.start(options, setup).to_move == expected
    setup.pop("dice")
    assert GAME.start(options, setup).to_move == "black"


def test_first_seat_is_optional_in_2_2_and_may_be_given() -> None:
    setup = setup_from_text()
    del setup["first"]
    assert GAME.start({}, setup).to_move == "black"
    assert GAME.start({}, setup_from_text(first="white")).to_move == "white"


def _broken(change) -> dict:
    setup = setup_from_text()
    change(setup)
    return setup


@pytest.mark.parametrize(("setup", "options", "named"), [
    (_broken(lambda s: s["tiles"].pop()), {}, "exactly 20 tiles"),
    (_broken(lambda s: s["tiles"][0].update(color="purple")), {}, "color"),
    (_broken(lambda s: s["tiles"][3].update(icon="N")), {}, "icon"),
    (_broken(lambda s: s["tiles"][3].update(number="2")), {}, "number"),
    (_broken(lambda s: s["tiles"][0].update(number=5)), {}, "red 5"),
    (setup_from_text(), {"edition": "1.2"}, "edition 1.2"),
    (_broken(lambda s: s.update(first="green")), {}, "first"),
    (_broken(lambda s: s.update(dice=[{"black": [1, 1, 1, 1], "white": [1, 1, 1, 1]}])), {},
     "tie"),
    (_broken(lambda s: s.update(first="white", dice=[{"black": [5, 5, 5, 5],
                                                      "white": [0, 0, 0, 0]}])), {}, "dice"),
    (_broken(lambda s: s.update(dice=[{"black": [9, 1, 1, 1], "white": [1, 1, 1, 1]}])), {},
     "faces"),
])
def test_invalid_setups_are_rejected_with_the_problem(setup: dict, options: dict, named: str) -> None:
    with pytest.raises(SetupError) as info:
        GAME.start(options, setup)
    assert named in str(info.value)


def test_help_topics_state_the_rulings() -> None:
    topics = GAME.help_topics()
    assert {"rules", "rulings", "notation"} <= set(topics)
    rulings = " ".join(topics["rulings"].split())
    for phrase in ["numbers 0, 1, 2, 4, 5 (no 3)", "Dome fallback, both editions",
                   "first-two rule is waived for that dome", "1.2 states this precedence",
                   "that tower scores 0", "edition 1.2 pays no bonus on a tie",
                   "only if one seat owns all the tied towers", "rejected whole",
                   "touch only each other are not adjacent by street",
                   "Skipped turns are automatic", "An unclaimed nearest tower pays nobody",
                   "same number", "diagonally opposite", "equal totals are a draw"]:
        assert phrase in rulings, phrase
    for text in topics.values():
        assert text.isascii()
        assert max(len(line) for line in text.splitlines()) <= 72
