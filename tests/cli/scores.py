"""Reading the score table as a person does: the seats at the end of its first line (the header),
the totals in the "Total" row below them."""

from __future__ import annotations


def table_totals(text: str) -> dict[str, int]:
    lines = text.splitlines()
    values = next(line for line in lines if line.startswith("Total")).split()[1:]
    seats = lines[0].split()[-len(values):]
    return dict(zip(seats, (int(v) for v in values), strict=True))
