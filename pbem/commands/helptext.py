"""Help texts for the ``help`` mail command: commands, notation, and each game's rules and rulings."""

from __future__ import annotations

import difflib
import textwrap
from collections.abc import Callable

from engine import get_game
from engine.options import describe_options
from engine.registry import UnknownGameError, available_games
from pbem.commands.parsing import USAGE

INTRO = ("Write commands one per line at the top of a mail (or in the subject). Greetings, quoted "
         "text and signatures are ignored. Commands:")
MOVES = ("Moves: press Reply on the mail that says it is your move and write the move on the first "
         "line; anything you write below it goes to your opponents as a note. Every game mail's "
         "Reply-To carries your secret token: a move counts only when it comes from your address "
         "with that token, so reply rather than write a new mail. In the HTML part of a mail, each "
         "legal move is a link: tap it and press Send.")
JSON = ("JSON: every command may be sent as a JSON turn file (the whole body or an "
        "application/json attachment); its fields are the words of the command, e.g.")
JSON_EXAMPLE = ('  {"commands": [{"command": "move", "game": "ac-17", "move": "tower red C4"}]}\n'
                '  {"command": "vacation", "from": "2026-12-20", "to": "2027-01-03"}')


# Topics that feature modules add (e.g. "settings"): topic -> function giving the text.
HELP_TOPICS: dict[str, Callable[[], str]] = {}
WIDTH = 76


def usage_lines() -> str:
    """Each command's usage, wrapped so that no line passes the mail width."""
    lines = []
    for text in USAGE.values():
        form, sep, note = text.partition("   (")
        if len(text) + 2 <= WIDTH or not sep:
            lines.append(f"  {text}")
        else:
            lines.append(f"  {form}")
            lines += textwrap.wrap(f"({note}", WIDTH, initial_indent="      ",
                                   subsequent_indent="       ")
    return "\n".join(lines)


def players_text(low: int, high: int) -> str:
    return f"{low} players" if low == high else f"{low}-{high} players"


def _commands() -> str:
    topics = "Help topics: " + ", ".join(["commands", *HELP_TOPICS, "notation", "rulings", "games",
                                         *available_games()]) + "."
    return "\n\n".join([textwrap.fill(INTRO, WIDTH), usage_lines(), textwrap.fill(MOVES, WIDTH),
                        textwrap.fill(JSON, WIDTH) + "\n" + JSON_EXAMPLE, textwrap.fill(topics, WIDTH)])


def _games() -> str:
    lines = ["Games (send 'rules GAME' for the rules, 'new GAME with ADDRESS' to play):", ""]
    for name in available_games():
        game = get_game(name)
        lines.append(f"  {name}: {game.title}, {players_text(game.min_players, game.max_players)}")
    return "\n".join(lines)


def _game_help(name: str, part: str | None) -> str:
    game = get_game(name)
    topics = game.help_topics()
    if part:
        return topics.get(part, f"No topic {part!r} for {game.title}; topics: {', '.join(topics)}")
    options = "\n".join(textwrap.fill(f"{usage}: {text}", WIDTH, initial_indent="  ",
                                      subsequent_indent="      ")
                        for usage, text in describe_options(game))
    return "\n\n".join([
        f"{game.title} ({players_text(game.min_players, game.max_players)})",
        "Options for 'new " + game.name + " [OPTIONS] with ADDRESS':\n" + (options or "  none"),
        topics.get("rules", ""), "Rulings:\n" + topics.get("rulings", ""),
        "Notation:\n" + topics.get("notation", ""),
    ])


def help_text(topic: str | None) -> str:
    if not topic or topic in ("commands", "help"):
        return _commands()
    words = topic.split()
    if words[0] in HELP_TOPICS:
        return HELP_TOPICS[words[0]]()
    if words[0] == "games":
        return _games()
    if words[0] == "notation":
        return "\n\n".join(f"{get_game(n).title}:\n{get_game(n).help_topics().get('notation', '')}"
                           for n in available_games())
    if words[0] == "rulings":
        return "\n\n".join(f"{get_game(n).title}:\n{get_game(n).help_topics().get('rulings', '')}"
                           for n in available_games())
    try:
        return _game_help(words[0], words[1] if len(words) > 1 else None)
    except UnknownGameError:
        known = ["commands", "notation", "rulings", *available_games()]
        near = difflib.get_close_matches(words[0], known, n=2, cutoff=0.5)
        hint = f" Did you mean {' or '.join(near)}?" if near else ""
        return f"No help topic {topic!r}.{hint} Topics: {', '.join(known)}.\n\n" + _commands()
