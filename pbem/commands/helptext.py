"""Help texts for the ``help`` mail command: commands, notation, and each game's rules and rulings."""

from __future__ import annotations

import difflib
import textwrap
from collections.abc import Callable

from engine import get_game
from engine.options import describe_options
from engine.registry import UnknownGameError, available_games
from pbem.commands.keywords import keywords_help
from pbem.commands.parsing import USAGE
from pbem.i18n import N_, _, ngettext

INTRO = N_("Write commands one per line at the top of a mail (or in the subject). Greetings, quoted "
           "text and signatures are ignored. Commands:")
MOVES = N_("Moves: press Reply on the mail that says it is your move and write the move on the first "
           "line; anything you write below it goes to your opponents as a note. Every game mail's "
           "Reply-To carries your secret token: a move counts only when it comes from your address "
           "with that token, so reply rather than write a new mail. In the HTML part of a mail, each "
           "legal move is a link: tap it and press Send.")
JSON = N_("JSON: every command may be sent as a JSON turn file (the whole body or an "
          "application/json attachment); its fields are the words of the command, e.g.")
JSON_EXAMPLE = ('  {"commands": [{"command": "move", "game": "ac-17", "move": "tower red C4"}]}\n'
                '  {"command": "vacation", "from": "2026-12-20", "to": "2027-01-03"}')


# Topics that feature modules add (e.g. "settings"): topic -> function giving the text.
HELP_TOPICS: dict[str, Callable[[], str]] = {}
WIDTH = 76


def usage_lines() -> str:
    """Each command's usage, wrapped so that no line passes the mail width."""
    lines = []
    for text in map(_, USAGE.values()):
        form, sep, note = text.partition("   (")
        if len(text) + 2 <= WIDTH or not sep:
            lines.append(f"  {text}")
        else:
            lines.append(f"  {form}")
            lines += textwrap.wrap(f"({note}", WIDTH, initial_indent="      ",
                                   subsequent_indent="       ")
    return "\n".join(lines)


def players_text(low: int, high: int) -> str:
    if low == high:
        return ngettext("{n} player", "{n} players", low).format(n=low)
    return ngettext("{low}-{high} player", "{low}-{high} players", high).format(low=low, high=high)


def _commands() -> str:
    topics = _("Help topics: {topics}.").format(topics=", ".join(
        ["commands", *HELP_TOPICS, "notation", "rulings", "games", *available_games()]))
    local = keywords_help()
    return "\n\n".join([textwrap.fill(_(INTRO), WIDTH), usage_lines(), *([local] if local else []),
                        textwrap.fill(_(MOVES), WIDTH), textwrap.fill(_(JSON), WIDTH) + "\n" + JSON_EXAMPLE,
                        textwrap.fill(topics, WIDTH)])


def _games() -> str:
    lines = [textwrap.fill(_("Games (send 'rules GAME' for the rules, 'new GAME with ADDRESS' to play):"),
                           WIDTH), ""]
    for name in available_games():
        game = get_game(name)
        lines.append(f"  {name}: {game.title}, {players_text(game.min_players, game.max_players)}")
    return "\n".join(lines)


def _game_help(name: str, part: str | None) -> str:
    game = get_game(name)
    topics = game.help_topics()
    if part:
        return topics.get(part, _("No topic {part!r} for {game}; topics: {topics}").format(
            part=part, game=game.title, topics=", ".join(topics)))
    options = "\n".join(textwrap.fill(f"{usage}: {text}", WIDTH, initial_indent="  ",
                                      subsequent_indent="      ")
                        for usage, text in describe_options(game))
    return "\n\n".join([
        f"{game.title} ({players_text(game.min_players, game.max_players)})",
        _("Options for 'new {game} [OPTIONS] with ADDRESS':").format(game=game.name) + "\n"
        + (options or "  " + _("none")),
        topics.get("rules", ""), _("Rulings:") + "\n" + topics.get("rulings", ""),
        _("Notation:") + "\n" + topics.get("notation", ""),
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
        hint = " " + _("Did you mean {words}?").format(words=_(" or ").join(near)) if near else ""
        return textwrap.fill(_("No help topic {topic!r}.{hint} Topics: {topics}.").format(
            topic=topic, hint=hint, topics=", ".join(known)), WIDTH) + "\n\n" + _commands()
