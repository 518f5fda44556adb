"""The engine in German and Slovak: boards, legal lists, scores and help read in the language, and
moves written with each language's words (the rule books' Turm/Kuppel, veža/kupola, the colours)
parse to the same move as English.

The catalogs are loaded here with the stdlib's gettext from ``engine/locale`` (the layout the
server's ``pbem.i18n`` loads); expected words are taken from the catalogs, not written out, so a
better translation does not break a test, while English left in a translated text does.
"""

from __future__ import annotations

import gettext
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from engine.alien_city import AlienCity
from engine.alien_city.moves import Move
from engine.alien_city.notation import WORDS as AC_WORDS
from engine.alien_city.notation import local_move
from engine.base import MoveError, State, random_positions
from engine.i18n import language, using
from engine.space_truckin import SpaceTruckin
from engine.space_truckin.moves import WORDS as ST_WORDS
from engine.space_truckin.moves import Place, local_move_text

LOCALE = Path(__file__).resolve().parents[2] / "engine" / "locale"
LANGUAGES = ("de", "sk")
AC = AlienCity()
ST = SpaceTruckin()
PHASES = (Phase.explicit, Phase.reuse, Phase.generate)
# Headings and status words of the English texts: none may be left in a translated one.
ENGLISH_HEADINGS = ("Legal builds for", "To move:", "Last move:", "Each lot:", "towers:", "domes:",
                    "caps left", "Towers that may be claimed", "ends the game", "Final scores",
                    "Scores so far", "customers within", "competition:", "Total", "You drew",
                    "Tiles left in the pile", "Cells touching tiles", "Ships (", "allowed at every",
                    "Free cells away", "black hole. Choose", "pts  pool", "(edition", "You play")


def translations(lang: str) -> gettext.GNUTranslations:
    return gettext.translation("engine", str(LOCALE), [lang])


CATALOGS = {lang: translations(lang) for lang in LANGUAGES}


def positions(game: AlienCity | SpaceTruckin, n_players: int, seed: int, every: int) -> Iterator[State]:
    for i, state in enumerate(random_positions(game, None, n_players, random.Random(seed))):
        if i % every == 0 or state.is_over:
            yield state.copy()


def _texts(state: State) -> dict[str, str]:
    return {"board": state.render(state.to_move), "legal": state.render_legal(state.to_move),
            "score": state.score().text}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_using_sets_the_language_for_the_block_only(lang: str) -> None:
    assert language() == "en"
    with using(CATALOGS[lang]):
        assert language() == lang
    assert language() == "en"


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize(("game", "n_players"), [(AC, 2), (ST, 3)])
def test_boards_legal_lists_and_scores_read_in_the_language(lang: str, game: AlienCity | SpaceTruckin,
                                                            n_players: int) -> None:
    t = CATALOGS[lang]
    seen_over = False
    for state in positions(game, n_players, seed=3, every=9):
        english = _texts(state)
        with using(t):
            local = _texts(state)
        for kind, text in local.items():
            assert text != english[kind] or not english[kind].strip(), kind
            for line in text.split("\n"):
                assert len(line) <= 78, (kind, line)
            for heading in ENGLISH_HEADINGS:
                if heading in english[kind]:
                    assert heading not in text, (kind, heading, text)
        # the translated words are there: the totals row, the status line's word
        assert t.gettext("Total") in local["score"]
        if state.is_over:
            seen_over = True
            assert (t.gettext("Final scores ({rule})").split("(")[0] in local["score"]
                    or t.gettext("Final scores") in local["score"])
    assert seen_over


@pytest.mark.parametrize("lang", LANGUAGES)
def test_alien_city_pieces_and_seats_named_in_the_language(lang: str) -> None:
    state = next(s for s in positions(AC, 2, seed=5, every=1) if s.ply == 12)
    with using(CATALOGS[lang]):
        board = state.render("black")
        legal = state.render_legal("black")
        groups = state.game.renderer.legal_groups(state, "black")
    words = AC_WORDS[lang]
    assert CATALOGS[lang].pgettext("seat", "black") in board
    assert words["dome"] in legal
    for label, _items in groups:
        assert label.split()[0] in (words["tower"], words["dome"])
    for colour in ("red", "blue", "green", "black"):
        assert f" {words[colour]} " in board  # the supply lines


@pytest.mark.parametrize("lang", LANGUAGES)
def test_help_documents_the_languages_words(lang: str) -> None:
    with using(CATALOGS[lang]):
        ac, st = AC.help_topics(), ST.help_topics()
    for word in AC_WORDS[lang].values():
        assert word in ac["notation"], word
    for word in ST_WORDS[lang].values():
        assert word in st["notation"], word
    for topics, english in ((ac, AC.help_topics()), (st, ST.help_topics())):
        for topic in ("rules", "notation"):
            assert topics[topic] != english[topic]
            assert all(len(line) <= 78 for line in topics[topic].split("\n"))


# --- reading moves ---------------------------------------------------------------------------------
AC_SAME = [
    ("tower red C4", ["Turm rot C4", "roter Turm c4", "TR C4", "veža červená C4", "červenú vežu C4",
                      "veza cervena c4"]),
    ("dome black A1 claim C4", ["Kuppel schwarz A1 Deckel C4", "schwarze Kuppel A1 besetze C4", "KS-A1 + C4",
                                "kupola čierna A1 obsaď C4", "čiernu kupolu A1 obsad C4", "DK A1 (C4)"]),
    ("dome green B2", ["grüne Kuppel B2", "Kuppel gruen B2", "KG B2", "zelenú kupolu B2",
                       "kupola zelena b2"]),
    ("tower blue E7 claim E7", ["Turm blau E7 Deckel E7", "modrá veža E7 obsaď E7", "BT E7 claim E7"]),
]


@pytest.mark.parametrize(("english", "written"), AC_SAME)
@pytest.mark.parametrize("lang", ("en", *LANGUAGES))
def test_alien_city_words_of_every_language_parse_alike(english: str, written: list[str], lang: str) -> None:
    options = AC.normalize_options(None)
    state = AC.start(options, AC.create_setup(options, random.Random(1)))
    with using(CATALOGS.get(lang)):
        expected = state.parse_move(english)
        for text in written:
            assert state.parse_move(text) == expected, text


ST_SAME = [
    ("place E4 90 cargo N", ["lege E4 90 Frachter N", "polož E4 90 náklad N", "poloz e4 90 naklad sever",
                             "lege E4 90 Frachter Nord"]),
    ("place E4 0 battleship E", ["lege E4 0 Schlachtschiff O", "polož E4 0 krížnik východ",
                                 "lege E4 0 Schlachtschiff Ost"]),
    ("place E4 180 engineer", ["lege E4 180 Ingenieur", "polož E4 180 inžinier"]),
    ("remove F3 S", ["entferne F3 S", "odstráň F3 juh", "entferne F3 Süd"]),
    ("swap E5 0 F6 270", ["tausche E5 0 F6 270", "vymeň F6 270 E5 0"]),
    ("pass", ["passe", "pas"]),
]


@pytest.mark.parametrize(("english", "written"), ST_SAME)
def test_space_truckin_words_of_every_language_parse_alike(english: str, written: list[str]) -> None:
    state = next(s for s in positions(ST, 2, seed=2, every=1) if s.ply == 0)
    for lang in ("en", *LANGUAGES):
        with using(CATALOGS.get(lang)):
            expected = state.parse_move(english)
            for text in written:
                assert state.parse_move(text) == expected, (lang, text)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_errors_say_what_was_wrong_in_the_language(lang: str) -> None:
    t = CATALOGS[lang]
    ac = next(s for s in positions(AC, 2, seed=4, every=1) if s.ply == 6)
    with using(t):
        with pytest.raises(MoveError) as bad_word:
            ac.parse_move(f"{AC_WORDS[lang]['tower']} lila C4")
        with pytest.raises(MoveError) as bad_lot:
            ac.parse_move(f"{AC_WORDS[lang]['dome']} {AC_WORDS[lang]['red']} K12")
        with pytest.raises(MoveError) as black_tower:
            ac.parse_move(f"{AC_WORDS[lang]['tower']} {AC_WORDS[lang]['black']} C4")
    text = str(bad_word.value)
    assert '"lila"' in text and "could not understand" not in text
    assert t.gettext(" Did you mean: {moves}?").split("{")[0].strip() in text
    assert all(s.split()[0] in (AC_WORDS[lang]["tower"], AC_WORDS[lang]["dome"])
               for s in bad_word.value.suggestions)
    assert '"K12"' in str(bad_lot.value) and "is not a lot" not in str(bad_lot.value)
    assert "there are no black towers" not in str(black_tower.value)
    st_state = next(s for s in positions(ST, 2, seed=2, every=1) if s.ply == 0)
    with using(t), pytest.raises(MoveError) as bad_edge:
        st_state.parse_move(f"{ST_WORDS[lang]['place']} E4 90 {ST_WORDS[lang]['cargo']} X")
    assert "'x'" in str(bad_edge.value) and "did not understand" not in str(bad_edge.value)


# --- what the lists show parses back ---------------------------------------------------------------
SLOW = settings(max_examples=10, deadline=None, phases=PHASES, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])


def _ac_moves(state: State) -> list[Move]:
    moves = list(state.legal_moves())
    targets = state.claimable_towers() if state.caps_left(state.to_move) else []
    ending = set(state.ending_moves())
    return moves + [m.with_claim(t) for m in moves[:20] if m not in ending for t in targets[:3]]


@SLOW
@given(seed=st.integers(0, 10**6), lang=st.sampled_from(LANGUAGES))
def test_alien_city_legal_moves_in_the_language_parse_back(seed: int, lang: str) -> None:
    with using(CATALOGS[lang]):
        for state in positions(AC, 2, seed, every=11):
            if state.is_over:
                continue
            for move in _ac_moves(state):
                assert state.parse_move(local_move(move)) == move
            for label, items in state.game.renderer.legal_groups(state, None):
                for short, canonical in items:
                    assert state.parse_move(f"{label} {short.rstrip('*')}") == state.parse_move(canonical)


@SLOW
@given(seed=st.integers(0, 10**6), lang=st.sampled_from(LANGUAGES))
def test_space_truckin_legal_moves_in_the_language_parse_back(seed: int, lang: str) -> None:
    with using(CATALOGS[lang]):
        for state in positions(ST, 3, seed, every=13):
            moves = state.legal_moves()
            for move in moves[:300]:
                for option in state.ship_options(move) if isinstance(move, Place) else [move]:
                    assert state.parse_move(local_move_text(option)) == state.parse_move(
                        state.move_text(option))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_seat_labels_and_local_move_texts_for_the_server(lang: str) -> None:
    """The generic hooks the server names seats and writes example moves with: in the reader's
    words under ``using``, parsing back to the same move; the English key and notation without."""
    for game, n_players in ((AC, 2), (ST, 3)):
        state = next(positions(game, n_players, 7, every=1))
        moves = state.legal_moves()[:40]
        assert [state.local_move_text(m) for m in moves] == [state.move_text(m) for m in moves]
        assert [game.seat_label(s) for s in state.seats] == list(state.seats)
        with using(CATALOGS[lang]):
            for move in moves:
                written = state.local_move_text(move)
                assert state.parse_move(written) == state.parse_move(state.move_text(move))
            assert state.local_move_text(moves[0]) != state.move_text(moves[0])
    with using(CATALOGS[lang]):
        assert [AC.seat_label(s) for s in ("black", "white")] == [
            CATALOGS[lang].pgettext("seat", "black"), CATALOGS[lang].pgettext("seat", "white")]
        assert AC.seat_label("black") != "black"
