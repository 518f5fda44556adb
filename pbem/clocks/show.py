"""The clock log as ``pbem replay`` shows it: every event with the banks and deadlines recomputed
from the times alone, and whether they agree with what the record stores.

Command-line output, in English like the rest of ``pbem``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from pbem.clocks import control as tc
from pbem.clocks import log as cl


def _when(text: Any) -> str:
    if not isinstance(text, str):
        return "none"
    return f"{cl.moment(text):%Y-%m-%d %H:%M:%S} UTC"


def _span(value: Any) -> str:
    return tc.span_text(timedelta(seconds=float(value or 0)))


def _what(item: cl.Checked) -> str:
    event, values = item.event, item.values
    kind = event.get("event")
    seat = event.get("seat", "")
    if kind == "control":
        return f"time control: {tc.describe(tc.normalize(event.get('control')), False)}"
    if kind == "start":
        paused = " (paused)" if event.get("paused") else ""
        return (f"{seat} to move: bank {_span(values.get('bank'))}, deadline "
                f"{_when(values.get('deadline'))}{paused}")
    if kind in ("move", "end") or (kind == "timeout" and "used" in values):
        head = {"move": f"{seat} moved", "end": f"{seat}'s turn ended ({event.get('why', '')})",
                "timeout": f"{seat} timed out: {event.get('action')}"}[str(kind)]
        return f"{head}: used {_span(values.get('used'))}, bank left {_span(values.get('left'))}"
    head = {
        "away": lambda: f"{seat}'s vacations: " + (", ".join(
            f"{_when(a)} to {_when(b)}" for a, b in event.get("intervals") or []) or "none"),
        "off": lambda: f"{seat}'s clock did not run: " + (", ".join(
            f"{_when(a)} to {_when(b)}" for a, b in event.get("intervals") or []) or "none"),
        "spend": lambda: (f"{seat}'s time ran out at {_when(event.get('from'))}: "
                          + ("a vacation day spent" if event.get("days", 1) else
                             "covered by a vacation day spent for another game")
                          + f", clocks stop until {_when(event.get('until'))}"
                          + (f" ({event['left_days']} left)" if "left_days" in event else "")),
        "pause": lambda: f"clock paused ({event.get('why', 'moderator')})",
        "resume": lambda: "clock resumed",
        "outage": lambda: f"server down since {_when(event.get('from'))}: not counted",
        "deadline": lambda: f"deadline set for {_when(event.get('until'))}",
        "grace": lambda: "final reminder: 24 more hours",
        "timeout": lambda: f"{seat} timed out: {event.get('action')}",
    }.get(str(kind), lambda: str(kind))()
    return f"{head}; deadline {_when(values.get('deadline'))}" if "deadline" in values else head


def clock_lines(record: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(a line per event, a line per value the times do not give)."""
    lines, problems = [], []
    for item in cl.replay(record):
        lines.append(f"{_when(item.event.get('at'))}  {_what(item)}")
        for key, (stored, computed) in item.differences.items():
            problems.append(f"clock event {item.index + 1} ({item.event.get('event')} at "
                            f"{_when(item.event.get('at'))}): {key} stored as {stored!r}, the times give "
                            f"{computed!r}")
    return lines, problems


def clock_json(record: Mapping[str, Any]) -> dict[str, Any]:
    """The last line of ``pbem replay --json``: every event with its recomputed values."""
    events, problems = [], []
    for item in cl.replay(record):
        events.append({**item.event, **item.values})
        problems += [{"event": item.index, "key": key, "stored": stored, "recomputed": computed}
                     for key, (stored, computed) in item.differences.items()]
    return {"clock": events, "clock_check": problems or "ok"}


def summary(record: Mapping[str, Any]) -> str:
    """One line: how many events, and whether they agree."""
    count = len(cl.events(record))
    _lines, problems = clock_lines(record)
    if problems:
        return f"clock check: {len(problems)} value(s) the times do not give (of {count} events)"
    return f"clock check: every bank and deadline of {count} events recomputed from the times agrees"


__all__ = ["clock_json", "clock_lines", "summary"]
