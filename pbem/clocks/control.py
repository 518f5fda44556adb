"""Time controls: what a game's clock gives each player, how a player writes it, how it is stored.

One value, stored as ``record["time_control"]`` (schemas/record.schema.json):

* ``{"kind": "move", "days_per_move": 5, "policy": "forfeit"}``: the days for each move (``time 5``);
  nothing carries over from one move to the next.
* ``{"kind": "fischer", "initial_days": 10, "increment_days": 1.5, "cap_days": 10, ...}``: a bank
  that starts at ``initial_days``; each move takes the time it used out of it and adds
  ``increment_days``, up to ``cap_days`` (``time fischer 10+1.5 cap 10``). A player who answers
  quickly banks time for a busy week.
* ``{"kind": "total", "total_days": 30, ...}``: one bank for the whole game (``time total 30``).

Each may add ``"weekends_off": true`` (``weekends off``: Saturday and Sunday do not count) and
``"nights_off": true`` (``nights off``: 23:00-07:00 does not count), both in the player's own
timezone. ``policy`` says what happens when the time is up: ``forfeit`` or ``notify`` (the
moderators decide). Records from before the kinds have no ``kind``: they are per-move controls and
are read as such (``normalize``).

``take`` is the one reader of the option words, for ``new``, open challenges, ``timecontrol`` and
tournaments alike; ``from_json`` reads the same value from a turn file.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from pbem.config import DeadlineConfig
from pbem.i18n import N_, _, ngettext

KINDS = ("move", "fischer", "total")
POLICIES = ("forfeit", "notify")
MAX_DAYS = 365
MIN_DAYS = 1 / 24  # an hour: less is no time to read a mail
USAGE = N_("time DAYS | time fischer INITIAL+INCREMENT [cap DAYS] | time total DAYS, then optionally "
           "forfeit or notify, weekends off, nights off (days; 36h for hours)")
_AMOUNT = re.compile(r"^(\d+(?:\.\d+)?)(d|days?|h|hours?)?$", re.IGNORECASE)
_DAY_WORDS = ("d", "day", "days")
_OFF_WORDS = {"weekends": "weekends_off", "weekend": "weekends_off", "nights": "nights_off",
              "night": "nights_off"}
_AMOUNT_KEYS = {"move": ("days_per_move",), "fischer": ("initial_days", "increment_days", "cap_days"),
                "total": ("total_days",)}
# Each amount as a refusal names it, with the words that would be right.
_AMOUNT_NAMES = {"days_per_move": (N_("the days per move"), "time 5"),
                 "initial_days": (N_("the initial days of a Fischer clock"), "time fischer 10+1.5"),
                 "increment_days": (N_("the days a Fischer clock adds per move"), "time fischer 10+1.5"),
                 "cap_days": (N_("the cap of a Fischer clock"), "time fischer 10+1.5 cap 10"),
                 "total_days": (N_("the days for the whole game"), "time total 30")}


class ClockError(ValueError):
    """A time control that cannot be: the message is for a person (what is wrong, and what is right)."""


# --- the value ---------------------------------------------------------------------------------------------

def number(value: float) -> float:
    """Whole numbers stay whole in the record (``3``, not ``3.0``)."""
    value = round(float(value), 9)
    return int(value) if value.is_integer() else value


def default_control(config: DeadlineConfig) -> dict[str, Any]:
    return {"kind": "move", "days_per_move": number(config.default_days), "policy": config.policy}


def normalize(control: Mapping[str, Any] | None, config: DeadlineConfig | None = None) -> dict[str, Any]:
    """The control in its full form, the server's defaults filling what it does not say; a control
    without ``kind`` (every record before the clock kinds) is days per move."""
    config = config or DeadlineConfig()
    own = dict(control or {})
    kind = own.get("kind") or "move"
    own["kind"] = kind
    if kind == "move":
        own.setdefault("days_per_move", number(config.default_days))
    own.setdefault("policy", config.policy)
    for key in ("weekends_off", "nights_off"):
        if not own.get(key):
            own.pop(key, None)
    return own


def check(control: Mapping[str, Any]) -> dict[str, Any]:
    """The control if every amount is possible; ClockError naming what is not."""
    kind = control.get("kind", "move")
    if kind not in KINDS:
        raise ClockError(_("a time control is days per move, fischer or total, not {kind!r}").format(
            kind=kind))
    if control.get("policy") not in POLICIES:
        raise ClockError(_("the policy at a deadline is {policies}, not {policy}").format(
            policies=" or ".join(POLICIES), policy=repr(control.get("policy"))))
    checked = dict(control)
    for key in _AMOUNT_KEYS[kind]:
        checked[key] = _days(checked.get(key), key)
    if kind == "fischer" and checked["cap_days"] < max(checked["initial_days"], checked["increment_days"]):
        raise ClockError(_("the cap of a Fischer clock is at least its initial time and its increment "
                           "({initial} d and {increment} d), not {cap} d: e.g. time fischer 10+1.5 cap 10"
                           ).format(initial=checked["initial_days"], increment=checked["increment_days"],
                                    cap=checked["cap_days"]))
    return checked


def _days(value: Any, key: str, text: str | None = None) -> float:
    """An amount of days (``key``: which one, for the refusal), checked."""
    shown = text if text is not None else value
    name, example = _AMOUNT_NAMES[key]
    if value is None:
        raise ClockError(_("{what}: missing; e.g. {example}").format(what=_(name), example=example))
    try:
        days = float(value)
    except (TypeError, ValueError):
        raise ClockError(_("{what}: a number of days, like {example}, not {days}").format(
            what=_(name), example=example, days=repr(shown))) from None
    if not math.isfinite(days) or days <= 0 or days > MAX_DAYS:
        raise ClockError(_("{what}: more than 0 and at most {most} days, not {days}").format(
            what=_(name), most=MAX_DAYS, days=shown))
    if days < MIN_DAYS - 1e-9 and key != "increment_days":
        raise ClockError(_("a move needs at least one hour, 1/24 of a day ({fraction} days), not "
                           "{days}").format(fraction=f"{MIN_DAYS:.3f}", days=shown))
    return number(days)


# --- reading it --------------------------------------------------------------------------------------------

def _amount(word: str | None) -> float | None:
    """``10``, ``1.5``, ``10d``, ``36h``: days, or None when the word is no amount."""
    match = _AMOUNT.match(word or "")
    if not match:
        return None
    value = float(match.group(1))
    return value / 24 if (match.group(2) or "d").lower().startswith("h") else value


def _usage_error(what: str) -> ClockError:
    return ClockError(_("{what}: {usage}").format(what=what, usage=_(USAGE)))


def _spec(words: Sequence[str], at: int, said: dict[str, Any]) -> int:
    """Reads a kind and its amounts from ``words[at:]`` into ``said``; returns where it stopped."""
    word = words[at].lower() if at < len(words) else ""
    if word == "fischer":
        at += 1
        parts = [words[at]] if at < len(words) else []
        at += 1
        while at < len(words) and (parts[-1].endswith("+") or words[at].startswith("+")):
            parts.append(words[at])
            at += 1
        match = re.fullmatch(r"([^+]+)\+([^+]+)", "".join(parts))
        initial, increment = (_amount(match.group(1)), _amount(match.group(2))) if match else (None, None)
        if match is None or initial is None or increment is None:
            raise _usage_error(_("after 'fischer' come the initial days and the days added per move, "
                                 "like fischer 10+1.5"))
        cap, cap_text = initial, match.group(1)
        if at < len(words) and words[at].lower() == "cap":
            cap_text = words[at + 1] if at + 1 < len(words) else ""
            cap = _amount(cap_text)
            if cap is None:
                raise _usage_error(_("after 'cap' come the most days a bank may hold, like cap 10"))
            at += 2
        said.update(kind="fischer", initial_days=_days(initial, "initial_days", text=match.group(1)),
                    increment_days=_days(increment, "increment_days", text=match.group(2)),
                    cap_days=_days(cap, "cap_days", text=cap_text))
    elif word == "total":
        total = _amount(words[at + 1] if at + 1 < len(words) else None)
        if total is None:
            raise _usage_error(_("after 'total' come the days for the whole game, like total 30"))
        said.update(kind="total", total_days=_days(total, "total_days", text=words[at + 1]))
        at += 2
    else:
        days = _amount(words[at] if at < len(words) else None)
        if days is None:
            raise _usage_error(_("the days per move are a number"))
        said.update(kind="move", days_per_move=_days(days, "days_per_move", text=words[at]))
        at += 1
        if at < len(words) and words[at].lower() in _DAY_WORDS:
            at += 1
        if at + 1 < len(words) and words[at].lower() == "per" and words[at + 1].lower() == "move":
            at += 2
    if at < len(words) and words[at].lower() in POLICIES:
        said["policy"] = words[at].lower()
        at += 1
    return at


def said_in(words: Sequence[str], *, whole: bool = False) -> tuple[dict[str, Any] | None, list[str]]:
    """What the option words say about time, and the words that are not about it.

    Reads ``time DAYS``, ``time fischer INITIAL+INCREMENT [cap DAYS]``, ``time total DAYS`` (each
    optionally followed by ``forfeit`` or ``notify``), ``weekends off|on`` and ``nights off|on``
    wherever they stand among the words. Returns ``(None, words)`` when no word is about time. With
    ``whole`` every word must be about time and ``time`` may be left out (``timecontrol ac-7
    fischer 10+1.5``). What was said is only what was said: ``merge`` completes it. Raises
    ClockError.
    """
    said: dict[str, Any] = {}
    rest: list[str] = []
    at = 0
    if whole and words and words[0].lower() not in ("time", *_OFF_WORDS, *POLICIES):
        at = _spec(words, 0, said)
    while at < len(words):
        word = words[at].lower()
        if word == "time":
            at = _spec(words, at + 1, said)
        elif word in _OFF_WORDS and at + 1 < len(words) and words[at + 1].lower() in ("off", "on"):
            said[_OFF_WORDS[word]] = words[at + 1].lower() == "off"
            at += 2
        elif word in POLICIES:  # no game's option: "time 3 weekends off notify" means the policy
            said["policy"] = word
            at += 1
        elif whole:
            raise _usage_error(_("I do not understand {word!r} in a time control").format(word=words[at]))
        else:
            rest.append(words[at])
            at += 1
    if "kind" in said:  # a kind comes with all its amounts: they must fit together
        check({**said, "policy": said.get("policy", POLICIES[0])})
    return (said or None), (rest if said else list(words))


def merge(base: Mapping[str, Any] | None, said: Mapping[str, Any], *,
          config: DeadlineConfig | None = None) -> dict[str, Any]:
    """``said`` over ``base`` (the game's control, or the server's default): another kind keeps only
    the policy and what does not count; the result checked."""
    config = config or DeadlineConfig()
    own = dict(said)
    if "kind" not in own and "days_per_move" in own:
        own["kind"] = "move"
    start = normalize(base or default_control(config), config)
    if own.get("kind", start["kind"]) != start["kind"]:
        start = {k: v for k, v in start.items() if k in ("policy", "weekends_off", "nights_off")}
    return check(normalize({**start, **own}, config))


def take(words: Sequence[str], base: Mapping[str, Any] | None = None, *, config: DeadlineConfig | None = None,
         whole: bool = False) -> tuple[dict[str, Any] | None, list[str]]:
    """The time control among option words (for ``new``, an open challenge, ``timecontrol`` or a
    tournament: the one reader of them all), and the words that are not about it; ``(None,
    words)`` when none is. What the words do not say comes from ``base`` or the server's default
    (see ``said_in`` and ``merge``). Raises ClockError."""
    said, rest = said_in(words, whole=whole)
    return (merge(base, said, config=config) if said is not None else None), rest


def from_json(value: Any, base: Mapping[str, Any] | None = None, *,
              config: DeadlineConfig | None = None) -> dict[str, Any]:
    """A turn file's ``time``: days per move (a number), the words of the text form (a string), or
    (part of) the stored value (an object)."""
    if isinstance(value, bool):
        raise _usage_error(_("time is a number of days, words or an object, not {value}").format(value=value))
    if isinstance(value, int | float):
        return merge(base, {"kind": "move", "days_per_move": _days(value, "days_per_move")}, config=config)
    if isinstance(value, str):
        control, _rest = take(value.split(), base, config=config, whole=True)
        if control is None:
            raise _usage_error(_("an empty time control"))
        return control
    if isinstance(value, Mapping):
        return merge(base, value, config=config)
    raise _usage_error(_("time is a number of days, words or an object, not {value}").format(value=value))


# --- banks -----------------------------------------------------------------------------------------------

def days(amount: float) -> timedelta:
    return timedelta(days=float(amount))


def initial_bank(control: Mapping[str, Any]) -> timedelta:
    """What a player has at their first turn (and, per move, at every turn)."""
    kind = control.get("kind", "move")
    if kind == "fischer":
        return days(control["initial_days"])
    if kind == "total":
        return days(control["total_days"])
    return days(control.get("days_per_move", 7))


def after_move(control: Mapping[str, Any], bank: timedelta, used: timedelta) -> timedelta:
    """The bank after a move that used ``used`` of it: Fischer adds the increment up to the cap;
    a bank overdrawn (a move in a grace period or on allowance days) counts as empty."""
    left = max(bank - used, timedelta(0))
    if control.get("kind") == "fischer":
        return min(left + days(control["increment_days"]), days(control["cap_days"]))
    if control.get("kind") == "total":
        return left
    return initial_bank(control)


def after_end(control: Mapping[str, Any], bank: timedelta, used: timedelta) -> timedelta:
    """The bank after a turn that ended without the player's move (an undo, a rollback, a drop):
    the time used is gone, nothing is added."""
    if control.get("kind") in ("fischer", "total"):
        return max(bank - used, timedelta(0))
    return initial_bank(control)


def carries_over(control: Mapping[str, Any]) -> bool:
    """Whether time saved on one move is there for the next (a bank), rather than each move its own."""
    return control.get("kind") in ("fischer", "total")


def counts_all_hours(control: Mapping[str, Any]) -> bool:
    return not (control.get("weekends_off") or control.get("nights_off"))


# --- in the reader's words ----------------------------------------------------------------------------------

def span_text(span: timedelta) -> str:
    """Short, as a clock shows it, to the nearest hour from three hours on: ``10 d``, ``6 d 4 h``,
    ``36 h`` (under two days), ``3 h``, ``2 h 20 min``, ``45 min``."""
    seconds = max(0.0, span.total_seconds())
    if seconds >= 3 * 3600 - 30:
        hours = round(seconds / 3600)
        if hours >= 48 or hours in (24,):
            whole_days, rest = divmod(hours, 24)
            text = _("{n} d").format(n=whole_days)
            return text + " " + _("{n} h").format(n=rest) if rest else text
        return _("{n} h").format(n=hours)
    hours, mins = divmod(round(seconds / 60), 60)
    parts = ([_("{n} h").format(n=hours)] if hours else []) + ([_("{n} min").format(n=mins)] if mins else [])
    return " ".join(parts) or _("{n} min").format(n=0)


def kind_text(control: Mapping[str, Any]) -> str:
    """``3 days per move``, ``Fischer: 10 d, +36 h per move, at most 10 d``, ``30 d for the whole
    game``; and what does not count."""
    kind = control.get("kind", "move")
    if kind == "fischer":
        text = _("Fischer clock: {initial}, +{increment} per move, at most {cap}").format(
            initial=span_text(days(control["initial_days"])),
            increment=span_text(days(control["increment_days"])), cap=span_text(days(control["cap_days"])))
    elif kind == "total":
        text = _("{total} for the whole game").format(total=span_text(days(control["total_days"])))
    else:
        amount = control.get("days_per_move", 7)
        count = amount if float(amount).is_integer() else 5  # "0.5 days": the plural
        text = ngettext("{days} day per move", "{days} days per move", int(count)).format(
            days=f"{float(amount):g}")
    off = off_text(control)
    return f"{text} ({off})" if off else text


def off_text(control: Mapping[str, Any]) -> str:
    weekends, nights = bool(control.get("weekends_off")), bool(control.get("nights_off"))
    if weekends and nights:
        return _("weekends and nights 23:00-07:00 do not count")
    if weekends:
        return _("weekends do not count")
    if nights:
        return _("nights 23:00-07:00 do not count")
    return ""


def describe(control: Mapping[str, Any], grace: bool) -> str:
    """The whole control, with what happens at a deadline."""
    amount = kind_text(control)
    if control.get("policy") == "notify":
        return _("{amount}; at a deadline the moderators decide").format(amount=amount)
    if grace:
        return _("{amount}; a late player gets a final reminder and 24 more hours, then forfeits").format(
            amount=amount)
    return _("{amount}; a late player forfeits").format(amount=amount)


def invitation_line(control: Mapping[str, Any]) -> str:
    what = (_("the late player forfeits") if control.get("policy", "forfeit") == "forfeit"
            else _("the moderators decide"))
    return _("Time control: {control}; at the deadline: {what}.").format(control=kind_text(control),
                                                                         what=what)


def bank_line(control: Mapping[str, Any], left: timedelta, still_until: str | None = None) -> str:
    """``Your time: 6 d 4 h, +36 h per move, at most 10 d.``: what a reminder or a deadline shows.
    ``still_until``: the clock does not run now (a weekend, a night, a vacation), and runs again
    then; said beside the bank, which alone would read as time running out."""
    kind = control.get("kind", "move")
    bank = span_text(left)
    if kind == "fischer":
        text = _("Your time: {bank}, +{increment} per move, at most {cap}.").format(
            bank=bank, increment=span_text(days(control["increment_days"])),
            cap=span_text(days(control["cap_days"])))
    elif kind == "total":
        text = _("Your time: {bank} for the rest of the game.").format(bank=bank)
    else:
        text = _("Your time: {bank} for this move.").format(bank=bank)
    if still_until:
        text += " " + _("Your clock stands still until {when}.").format(when=still_until)
    off = off_text(control)
    return f"{text} ({off[:1].upper()}{off[1:]}.)" if off else text


__all__ = ["KINDS", "POLICIES", "USAGE", "ClockError", "after_end", "after_move", "bank_line", "carries_over",
           "check", "counts_all_hours", "days", "default_control", "describe", "from_json", "initial_bank",
           "invitation_line", "kind_text", "merge", "normalize", "number", "off_text", "said_in", "span_text",
           "take"]
