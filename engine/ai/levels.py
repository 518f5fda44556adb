"""The levels of computer opponent every game offers, and their defaults: the one table the server,
the CLI and the help texts read, so that a level means the same everywhere."""

from __future__ import annotations

from dataclasses import dataclass

from engine.base import EngineError
from engine.i18n import N_, _


@dataclass(frozen=True)
class Level:
    number: int
    name: str
    description: str
    seconds: float | None  # default time budget per move; None: no search, no budget


LEVELS: dict[int, Level] = {
    1: Level(1, N_("random"), N_("a random legal move"), None),
    2: Level(2, N_("greedy"), N_("the move that gains the most points at once"), None),
    3: Level(3, N_("search"), N_("Monte Carlo tree search"), 2.0),
    4: Level(4, N_("strong search"), N_("a longer search that weighs the scoring as it plays ahead"), 10.0),
}

# The level of ``new GAME with computer`` when none is named (``computer:N`` names one).
DEFAULT_LEVEL = 3


def level_info(level: int, offered: tuple[int, ...]) -> Level:
    """The level, if the game offers it; else EngineError naming those it does."""
    if level not in offered or level not in LEVELS:
        names = ", ".join(f"{n} ({_(LEVELS[n].name)})" for n in offered)
        raise EngineError(_("there is no computer level {level}: levels are {names}").format(
            level=level, names=names))
    return LEVELS[level]


# How a computer seat is named in a game record's ``players`` (readers ignore the extra keys).
ENGINE_NAME = "pbem-ai"


def player_entry(level: int) -> dict[str, object]:
    """The ``players`` entry of a computer seat: ``{"name", "engine": "pbem-ai", "level"}``."""
    return {"name": f"computer (level {level})", "engine": ENGINE_NAME, "level": level}


def levels_help(offered: tuple[int, ...]) -> str:
    """The levels a game offers, as a player reads them in ``help`` (at most 72 columns)."""
    lines = [_("Computer levels (the default is {level}):").format(level=DEFAULT_LEVEL)]
    for n in offered:
        level = LEVELS[n]
        time = _("; {seconds} s a move").format(seconds=f"{level.seconds:g}") if level.seconds else ""
        text = f"  {n}  {_(level.name)}: {_(level.description)}{time}"
        while len(text) > 72:
            cut = text.rfind(" ", 0, 72)
            lines.append(text[:cut])
            text = "       " + text[cut + 1:]
        lines.append(text)
    return "\n".join(lines)
