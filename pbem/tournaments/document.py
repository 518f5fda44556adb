"""The stored tournament: its settings as the organizer wrote them, and what the formats read of it.

``read_settings`` turns the words after ``tournament new GAME FORMAT`` into settings (or says
exactly which word is wrong and what would be right), and ``check`` refuses formats that cannot
work before anything is created. The document keeps every game as it was paired (players in seat
order, the game id, the points once known), so the table is always computed from what is stored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from pbem.i18n import _
from pbem.tournaments.model import Game
from pbem.tournaments.table import TIEBREAKS

FORMATS = ("round-robin", "swiss", "elimination", "double-elimination", "ladder", "league")
ALIASES = {"roundrobin": "round-robin", "rr": "round-robin", "knockout": "elimination",
           "single-elimination": "elimination", "ko": "elimination", "double-ko": "double-elimination",
           "doubleelimination": "double-elimination"}
TABLE_FORMATS = ("round-robin", "swiss")
DEFAULT_TIEBREAKS = {
    "round-robin": ["sonneborn-berger", "head-to-head", "wins", "rating"],
    "league": ["sonneborn-berger", "head-to-head", "wins", "rating"],
    "swiss": ["buchholz", "median-buchholz", "sonneborn-berger", "wins", "rating"],
}
ADJUDICATION = ("moderator", "score")
WITHDRAWALS = ("forfeit", "remove")
# option word -> kind of value: int, days (a number), date, choice list, flag, list of tie-breaks
_INTS = {"rounds": (1, 30), "tables": (3, 5), "max": (2, 1000), "min": (2, 1000), "division": (3, 64),
         "promote": (1, 10), "seasons": (1, 50), "reliable": (1, 100)}
_DAYS = {"round": (1, 365), "rematch": (0, 365)}
_FLAGS = ("double", "together")
_DATE = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2}))?$")


TOURNAMENT_ID = re.compile(r"^t-\d+$", re.IGNORECASE)


def is_tournament(ident: str | None) -> bool:
    return bool(ident) and TOURNAMENT_ID.match(ident or "") is not None


class SettingsError(ValueError):
    """A word of ``tournament new`` that cannot be read; the message says what would be right."""


@dataclass
class Settings:
    format: str
    rounds: int | None = None
    double: bool = False
    tables: int = 2
    max: int | None = None
    min: int = 2
    starts: datetime | None = None
    round_days: float = 21.0
    tiebreaks: list[str] | None = None
    adjudicate: str = "moderator"
    withdrawals: str = "forfeit"
    together: bool = False
    division: int = 8
    promote: int = 1
    seasons: int = 1
    rematch_days: float = 14.0
    reliable: int | None = None  # entrants must have lost at most 100 - N % of their games on time

    def as_json(self) -> dict[str, Any]:
        data = {k: v for k, v in vars(self).items() if k != "starts"}
        return data


def settings_from_json(data: Mapping[str, Any]) -> Settings:
    return Settings(**{k: v for k, v in data.items() if k in Settings.__dataclass_fields__ and k != "starts"})


def parse_date(text: str) -> datetime:
    match = _DATE.match(text)
    if match is None:
        raise SettingsError(_("'{text}' is not a date: write it like 2026-12-10 or 2026-12-10T18:00 "
                              "(UTC)").format(text=text))
    year, month, day, hour, minute = (int(g) if g else 0 for g in match.groups())
    try:
        return datetime(year, month, day, hour, minute, tzinfo=UTC)
    except ValueError as exc:
        raise SettingsError(_("'{text}' is not a date: {reason}").format(text=text, reason=exc)) from None


def read_settings(format_word: str, words: list[str], now: datetime,
                  round_days: float) -> tuple[Settings, list[str]]:
    """The settings, and the words left over (the game's own options, ``time ...``)."""
    name = ALIASES.get(format_word.lower(), format_word.lower())
    if name not in FORMATS:
        raise SettingsError(_("'{word}' is not a format; the formats are {formats}").format(
            word=format_word, formats=", ".join(FORMATS)))
    settings = Settings(format=name, round_days=round_days)
    rest: list[str] = []
    i = 0
    while i < len(words):
        word = words[i].lower().rstrip(",")
        value = words[i + 1] if i + 1 < len(words) else None
        if word in _FLAGS:
            setattr(settings, word, True)
            i += 1
            continue
        if value is None and (word in _INTS or word in _DAYS
                              or word in ("starts", "tiebreaks", "adjudicate", "withdrawals")):
            raise SettingsError(_("'{word}' needs a value, e.g. {example}").format(
                word=word, example=_EXAMPLES[word]))
        if word in _INTS:
            low, high = _INTS[word]
            value = value.rstrip("%") if word == "reliable" else value
            if not value.isdigit() or not low <= int(value) <= high:
                raise SettingsError(_("'{word} {value}': a whole number from {low} to {high}, e.g. {example}"
                                      ).format(word=word, value=value, low=low, high=high,
                                               example=_EXAMPLES[word]))
            setattr(settings, "max" if word == "max" else word, int(value))
            i += 2
        elif word in _DAYS:
            low, high = _DAYS[word]
            try:
                days = float(value.rstrip("d"))
            except ValueError:
                days = -1.0
            if not low <= days <= high:
                raise SettingsError(_("'{word} {value}': a number of days from {low} to {high}, e.g. "
                                      "{example}").format(word=word, value=value, low=low, high=high,
                                               example=_EXAMPLES[word]))
            setattr(settings, f"{word}_days", days)
            i += 2
            if i < len(words) and words[i].lower() in ("d", "day", "days"):
                i += 1
        elif word == "starts":
            settings.starts = now if value.lower() == "now" else parse_date(value)
            i += 2
        elif word in ("adjudicate", "withdrawals"):
            allowed = ADJUDICATION if word == "adjudicate" else WITHDRAWALS
            if value.lower() not in allowed:
                raise SettingsError(_("'{word} {value}': choose {choices}").format(
                    word=word, value=value, choices=" or ".join(allowed)))
            setattr(settings, word, value.lower())
            i += 2
        elif word == "tiebreaks":
            chosen: list[str] = []
            i += 1
            while i < len(words):
                parts = [p for p in words[i].lower().split(",") if p]
                if not parts or any(p not in TIEBREAKS for p in parts):
                    break
                chosen += parts
                i += 1
            if not chosen:
                raise SettingsError(_("'tiebreaks' takes names from {names}, e.g. {example}").format(
                    names=", ".join(TIEBREAKS), example=_EXAMPLES["tiebreaks"]))
            settings.tiebreaks = chosen
        else:
            rest.append(words[i])
            i += 1
    return settings, rest


_EXAMPLES = {"rounds": "rounds 5", "tables": "tables 4", "max": "max 16", "min": "min 4",
             "division": "division 8", "promote": "promote 2", "seasons": "seasons 3",
             "reliable": "reliable 90", "round": "round 21", "rematch": "rematch 14",
             "starts": "starts 2026-12-10",
             "tiebreaks": "tiebreaks buchholz sonneborn-berger", "adjudicate": "adjudicate score",
             "withdrawals": "withdrawals remove"}


def check(settings: Settings, *, game_title: str, game_min: int, game_max: int, now: datetime) -> None:
    """Refuse what cannot work, before anything is created."""
    fmt = settings.format
    if settings.tables > 2:
        if fmt not in TABLE_FORMATS:
            raise SettingsError(_("tables of {n} work only for round-robin and swiss, not {format}").format(
                n=settings.tables, format=fmt))
        if settings.tables > game_max or game_max < 3:
            raise SettingsError(_("{game} is for {low} to {high} players: it cannot be played at tables of "
                                  "{n}").format(game=game_title, low=game_min, high=game_max,
                                                n=settings.tables))
    elif game_min > 2:
        raise SettingsError(_("{game} needs at least {n} players a game: add 'tables {n}'").format(
            game=game_title, n=game_min))
    if fmt == "swiss":
        settings.rounds = settings.rounds or 5
        need = settings.rounds * 2 if settings.tables <= 2 else settings.tables + 1
        settings.min = max(settings.min, need)
    elif settings.rounds is not None:
        raise SettingsError(_("'rounds' is for swiss; a {format} has as many rounds as it needs").format(
            format=fmt))
    if fmt == "round-robin":
        settings.min = max(settings.min, 3 if settings.tables <= 2 else settings.tables)
    if fmt == "league":
        settings.min = max(settings.min, 3)
    if settings.max is not None and settings.max < settings.min:
        if fmt == "swiss" and settings.tables <= 2:
            raise SettingsError(_("a swiss of {rounds} rounds needs at least {n} players (no two meet "
                                  "twice), but at most {max} may enter: fewer rounds or more players, e.g. "
                                  "'rounds {fit}'").format(rounds=settings.rounds, n=settings.min,
                                                           max=settings.max, fit=max(1, settings.max // 2)))
        raise SettingsError(_("at least {min} players are needed, but 'max {max}' allows fewer").format(
            min=settings.min, max=settings.max))
    if settings.tiebreaks and fmt not in DEFAULT_TIEBREAKS:
        raise SettingsError(_("a {format} ranks by its games, not by tie-breaks").format(format=fmt))
    if settings.tiebreaks is None and fmt in DEFAULT_TIEBREAKS:
        settings.tiebreaks = list(DEFAULT_TIEBREAKS[fmt])
    if settings.together and fmt != "round-robin":
        raise SettingsError(_("'together' (every game at once) is for round-robin"))
    if settings.starts is None:
        settings.starts = now + timedelta(days=7)
    if settings.starts < now - timedelta(minutes=1):
        raise SettingsError(_("the start {when} is in the past").format(
            when=f"{settings.starts:%Y-%m-%d %H:%M}"))


# --- changing who plays -----------------------------------------------------------------------------

def rename_entrant(doc: dict[str, Any], old: str, new: str) -> None:
    """``new`` takes ``old``'s place everywhere in the document: the entry, the seeds, the ladder,
    every game paired so far, the divisions, the schedule, the bracket. (A moderator's replacement,
    or a player who moved to another address.)"""
    for entry in doc.get("entrants", []):
        if entry["email"] == old:
            entry["email"] = new
    _swap(doc, old, new, ("seeds", "ladder", "divisions", "schedule"))
    past = [g for season in doc.get("seasons", []) for r in season.get("rounds", []) for g in r["games"]]
    for item in [*(g for r in doc.get("rounds", []) for g in r["games"]), *doc.get("challenges", []), *past]:
        item["players"] = [new if p == old else p for p in item["players"]]
        for key in ("challenger", "defender"):
            if item.get(key) == old:
                item[key] = new
    for season in doc.get("seasons", []):
        _swap(season, old, new, ("divisions", "final"))
    if doc.get("bracket"):
        doc["bracket"]["seeds"] = [new if p == old else p for p in doc["bracket"]["seeds"]]
        for match in doc.get("matches", {}).values():
            if match.get("winner") == old:
                match["winner"] = new
    result = doc.get("result") or {}
    for pair in result.get("ranking", []):
        if pair[1] == old:
            pair[1] = new
    if doc.get("organizer") == old:
        doc["organizer"] = new


def _swap(doc: dict[str, Any], old: str, new: str, keys: tuple[str, ...]) -> None:
    def swap(value: Any) -> Any:
        if isinstance(value, list):
            return [swap(v) for v in value]
        return new if value == old else value
    for key in keys:
        if key in doc:
            doc[key] = swap(doc[key])


# --- reading the document -------------------------------------------------------------------------

def entrants(doc: Mapping[str, Any], *statuses: str) -> list[str]:
    """The entrants' addresses in order of entry, with one of ``statuses`` (all when none)."""
    return [e["email"] for e in doc.get("entrants", []) if not statuses or e.get("status") in statuses]


def entrant(doc: Mapping[str, Any], email: str) -> dict[str, Any] | None:
    return next((e for e in doc.get("entrants", []) if e["email"] == email), None)


def ratings(doc: Mapping[str, Any]) -> dict[str, float]:
    return {e["email"]: float(e.get("rating", 0.0)) for e in doc.get("entrants", [])}


def games(doc: Mapping[str, Any], rounds: list[dict[str, Any]] | None = None) -> list[Game]:
    """Every game paired so far (byes included) as the formats see them."""
    out = []
    for number, round_ in enumerate(rounds if rounds is not None else doc.get("rounds", []), start=1):
        for item in round_.get("games", []):
            points = tuple(item["points"]) if item.get("points") is not None else None
            out.append(Game(tuple(item["players"]), points, bool(item.get("played", True)),
                            int(round_.get("number", number)), item.get("id")))
    return out


def running_games(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The stored items of the games still being played."""
    items = [item for round_ in doc.get("rounds", []) for item in round_.get("games", [])
             if item.get("id") and item.get("points") is None]
    items += [c for c in doc.get("challenges", []) if c.get("open") and c.get("id")]
    return items
