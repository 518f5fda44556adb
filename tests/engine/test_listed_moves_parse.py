"""What the legal listing prints is accepted as written, in both games and every language (issue 22).

A player copies a move from the listing of their mail: with its decorations (Alien City's star after
a build that ends the game, "red tower: D5*"; the quotes around the claim's example; Space Truckin's
"(c) pass" of a black hole, a bare cell and rotation, a bare swap, the example of a ship named by an
edge, which named the cell E4 whether it was free or not). Every item the listing prints
must parse to the legal move it stands for; an item that offers a choice ("B3 0/90") is answered
with the choice to make and a move that makes it.
"""

from __future__ import annotations

import gettext
import random
import re
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path

import pytest

from engine.alien_city import AlienCity
from engine.base import MoveError, State, random_positions
from engine.i18n import using
from engine.space_truckin import SpaceTruckin
from engine.space_truckin.moves import Pass, Place

LOCALE = Path(__file__).resolve().parents[2] / "engine" / "locale"
LANGUAGES = ("en", "de", "sk")
AC = AlienCity()
ST = SpaceTruckin()


def speaking(lang: str):
    return nullcontext() if lang == "en" else using(gettext.translation("engine", str(LOCALE), [lang]))


def positions(game: AlienCity | SpaceTruckin, n_players: int, seeds: range) -> Iterator[State]:
    for seed in seeds:
        for state in random_positions(game, None, n_players, random.Random(seed)):
            if not state.is_over:
                yield state


#: A line of the swaps' groups (not of the explanation above them): "A2 0/270 A6 any;  A2 180 E2 270"
SWAPS = re.compile(r"^(?:[A-I][1-9] \S+ [A-I][1-9] \S+(?: \S+ [A-I][1-9] \S+ [A-I][1-9] \S+)*;?(?:  |$))+$")


def unwrapped(listing: str) -> list[str]:
    """The listing's lines with each wrapped continuation (indented deeper) joined to its line."""
    lines: list[str] = []
    for line in listing.split("\n"):
        if lines and line.startswith("    ") and not lines[-1].startswith("  "):
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    return lines


@pytest.mark.parametrize("lang", LANGUAGES)
def test_alien_city_builds_parse_as_the_listing_prints_them(lang: str) -> None:
    starred = claims = 0
    with speaking(lang):
        for state in positions(AC, 2, range(4)):
            seat = state.to_move
            listing = state.render_legal(seat)
            lines = unwrapped(listing)
            legal = set(state.legal_moves())
            for label, items in state.game.renderer.legal_groups(state, seat):
                line = next(line for line in lines if line.startswith(label))
                printed = line.split(": ")[-1].split()
                for shown, text in items:
                    assert shown in printed, (label, shown, line)
                    move = state.parse_move(text)
                    assert move in legal
                    # as printed, with the label's colon and the star of a build that ends the game
                    assert state.parse_move(f"{label}: {shown}") == move, (label, shown)
                    assert state.parse_move(f"{label} {shown}") == move
                    starred += shown.endswith("*")
            example = re.search(r'"([^"]+)"\.', listing)
            if example:  # the claim's example, copied with its quotes and the full stop
                assert "\n" not in example.group(1), example.group(0)  # copied from one line
                claimed = state.parse_move(example.group(0))
                assert claimed == state.parse_move(example.group(1)) and claimed.claim is not None
                probe = state.copy()
                probe.push(claimed)
                claims += 1
    assert starred > 0 and claims > 0, (starred, claims)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_space_truckin_listed_moves_parse_as_printed(lang: str) -> None:
    seen = {"cell": 0, "choice": 0, "pass": 0, "remove": 0, "swap": 0, "ship": 0}
    with speaking(lang):
        for state in positions(ST, 3, range(3)):
            legal = state.legal_moves()
            budget = {"cell": 6, "swap": 6}  # items tried per position: a refusal lists suggestions
            lines = state.render_legal(state.to_move).split("\n")
            for n, line in enumerate(lines):
                text = line.strip()
                if line.startswith("(c) "):  # the black hole's third choice, copied with its letter
                    assert state.parse_move(text) == Pass() and Pass() in legal
                    seen["pass"] += 1
                if line.startswith("  (") and ": " in text:  # how to name a segment, by a move
                    example = state.parse_move(text[:-1].rsplit(": ", 1)[1])
                    assert isinstance(example, Place) and example.edge, text
                    assert example in state.ship_options(Place(example.cell, example.rotation)), text
                    assert Place(example.cell, example.rotation) in legal, text
                    seen["ship"] += 1
                if not line.startswith("  ") or line.startswith("   ") or text.startswith("("):
                    continue
                heading = next(lines[k] for k in range(n, -1, -1) if not lines[k].startswith("  "))
                if heading.startswith("(a)"):
                    for item in filter(None, text.split(",")):  # as printed: "remove E4 N,"
                        assert state.parse_move(item) in legal, item
                        seen["remove"] += 1
                elif heading.startswith("(b)") and SWAPS.match(text):
                    for group in text.split(";  ")[:budget["swap"]]:  # a pair's groups are joined by "or"
                        budget["swap"] -= 1
                        for item in re.split(r" (?:or|oder|alebo) ", group):
                            check_item(state, item, legal, seen, "swap")
                elif heading.endswith(":") and re.match(r"^[A-I][1-9] ", text):  # cells touching tiles
                    for item in [i for i in text.split(",") if i][:budget["cell"]]:  # with its comma
                        budget["cell"] -= 1
                        check_item(state, item + ",", legal, seen, "cell")
                        item = item.strip()
                        if "/" not in item:
                            assert state.parse_move(item) == Place(*item.split()[:1], int(item.split()[1]))
    assert all(seen.values()), seen


def check_item(state: State, item: str, legal: list, seen: dict[str, int], kind: str) -> None:
    """One move as printed parses to a legal one; a choice of rotations is refused with a legal
    move that makes the choice."""
    words = item.strip(" ,;").split()
    several = "/" in item or not all(word.isdigit() or re.match(r"^[A-I][1-9]$", word) for word in words)
    if not several:
        assert state.parse_move(item) in legal, item
        seen[kind] += 1
        return
    with pytest.raises(MoveError) as refused:
        state.parse_move(item)
    example = re.search(r"(?:e\.g\.|z\.B\.|napr\.) (.+?)\.(?: |$)", str(refused.value))
    assert example, str(refused.value)
    assert state.parse_move(example.group(1)) in legal, (item, str(refused.value))
    seen["choice"] += 1
