"""The final-scoring breakdown as a plain-text table: a row per scoring item, a column per seat.

Both games print their ``Score.text`` through it, so result mails look alike whatever the game:
columns of numbers a player can add up by eye, at most 78 columns, the details of an item on the
lines under it. The winner is not named here: the server names it once in the mail.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

WIDTH = 78  # the widest line a player reads
PROSE = 72  # prose is wrapped narrower
_GLUE = "\u00a0"  # a space where a line may not break: textwrap does not break there


@dataclass(frozen=True)
class Row:
    """One line of the table: ``points`` by seat (absent = nothing on this row), a label that wraps
    within its column, and ``notes``: lines of detail printed under it, indented."""

    label: str
    points: Mapping[str, int | str]
    notes: Sequence[str] = field(default=())


def score_table(title: str, seats: Sequence[str], rows: Sequence[Row], footer: Sequence[Row] = (),
                marks: Mapping[str, str] | None = None, names: Mapping[str, str] | None = None) -> str:
    """``footer`` rows (the totals) come under a rule; ``marks`` adds a suffix to a seat's column
    heading (e.g. ``*`` for a dropped seat); ``names`` are the headings in the reader's language."""
    heads = [(names or {}).get(seat, seat) + (marks or {}).get(seat, "") for seat in seats]
    widths = [max(4, len(h)) for h in heads]
    numbers = sum(w + 2 for w in widths)
    label_width = min(WIDTH - numbers, 52)
    columns = "".join(f"  {h:>{w}}" for h, w in zip(heads, widths, strict=True))
    if len(title) > label_width:
        lines = [title, " " * label_width + columns]
    else:
        lines = [title.ljust(label_width) + columns]
    body = [*rows, None, *footer] if footer else list(rows)
    for row in body:
        if row is None:
            lines.append("-" * (label_width + numbers))
            continue
        label = _wrap(row.label, label_width, "", "  ") or [""]
        cells = "".join(f"  {_cell(row.points.get(seat)):>{w}}"
                        for seat, w in zip(seats, widths, strict=True))
        # the numbers stand on the label's last line, so a wrapped label reads on unbroken
        lines.extend(label[:-1])
        lines.append((label[-1].ljust(label_width) + cells).rstrip())
        for note in row.notes:
            lines.extend(_wrap(note, PROSE, "    ", "      "))
    return "\n".join(line.rstrip().replace(_GLUE, " ") for line in lines)


def keep(text: str) -> str:
    """``text`` never broken across lines (a customer like "red dome C10 (2)" stays whole)."""
    return text.replace(" ", _GLUE)


def _cell(value: int | str | None) -> str:
    return "" if value is None else str(value)


def prose(text: str, indent: str = "") -> list[str]:
    """A sentence under the table, wrapped like the rest of the mail's prose."""
    return _wrap(text, PROSE, indent, indent)


_LINE_BREAKS = "\t\n\x0b\x0c\r"  # what textwrap turns into spaces


def _wrap(text: str, width: int, initial_indent: str, subsequent_indent: str) -> list[str]:
    """``textwrap.wrap`` without breaks on hyphens. A text that fits on its first line as it stands
    (most labels and notes: a table is made for every mail that shows the scores) is that line,
    as textwrap would give it, without textwrap's regular expressions."""
    if (text and len(initial_indent) + len(text) <= width and not text[0].isspace() and not text[-1].isspace()
            and not any(c in text for c in _LINE_BREAKS)):
        return [initial_indent + text]
    return textwrap.wrap(text, width, initial_indent=initial_indent, subsequent_indent=subsequent_indent,
                         break_on_hyphens=False)


__all__ = ["PROSE", "WIDTH", "Row", "keep", "prose", "score_table"]
