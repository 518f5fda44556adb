"""Final scoring: street distances, customer bases, competition, Control Guild and location bonuses.

Distances are measured only through empty lots (the streets): two structures that touch each other but
share no empty neighbour are not adjacent "by street" and may be far apart.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from engine.alien_city.board import (
    IS_TOWER,
    LOT_NAMES,
    N_LOTS,
    NEIGHBOURS,
    PIECES,
    SEATS,
    TILE_OF,
    Layout,
)
from engine.base import Score
from engine.scoretable import Row, keep, prose, score_table

BONUS_REACH = 4


def street_distances(board: Sequence[int]) -> dict[int, dict[int, int]]:
    """``d[s][t]``: street distance between the structures on lots s and t (absent = unreachable).

    One breadth-first search per structure, seeded with its empty neighbours at distance 1.
    """
    structures = [i for i in range(N_LOTS) if board[i]]
    street_sides = {s: [j for j in NEIGHBOURS[s] if not board[j]] for s in structures}
    result: dict[int, dict[int, int]] = {}
    for s in structures:
        dist = [0] * N_LOTS
        queue = deque(street_sides[s])
        for j in queue:
            dist[j] = 1
        while queue:
            v = queue.popleft()
            for w in NEIGHBOURS[v]:
                if not board[w] and not dist[w]:
                    dist[w] = dist[v] + 1
                    queue.append(w)
        row: dict[int, int] = {}
        for t in structures:
            if t == s:
                continue
            reach = [dist[j] for j in street_sides[t] if dist[j]]
            if reach:
                row[t] = min(reach)
        result[s] = row
    return result


def _describe(board: Sequence[int], lot: int) -> str:
    kind, colour = PIECES[board[lot] - 1]
    return f"{colour} {kind} {LOT_NAMES[lot]}"


def score_position(board: Sequence[int], cap: Sequence[int], layout: Layout,
                   options: Mapping[str, Any], final: bool = False) -> Score:
    """Score as if the game ended now. ``cap[lot]`` is 0, or 1 + the index of the claiming seat."""
    edition = options["edition"]
    reach_of = {seat: options["handicap"][seat]["reach"] for seat in SEATS}
    dist = street_distances(board)
    totals = dict.fromkeys(SEATS, 0)
    towers: list[dict[str, Any]] = []

    def owner(lot: int) -> str | None:
        return SEATS[cap[lot] - 1] if cap[lot] else None

    def colour_of(lot: int) -> str:
        return PIECES[board[lot] - 1][1]

    tower_lots = [i for i in range(N_LOTS) if board[i] and IS_TOWER[board[i] - 1]]
    claimed = [i for i in tower_lots if cap[i]]

    # --- claimed towers -------------------------------------------------------------------------
    for lot in claimed:
        seat = owner(lot)
        assert seat is not None
        colour = colour_of(lot)
        reach = reach_of[seat]
        near = dist[lot]
        customers = sorted(
            (t for t, d in near.items() if d <= reach and colour_of(t) != colour),
            key=lambda t: (near[t], t))
        rivals = sorted((t for t in tower_lots if t != lot and colour_of(t) == colour and t in near),
                        key=lambda t: (near[t], t))
        competitor = rivals[0] if rivals else None
        competition = near[competitor] if competitor is not None else 0
        points = len(customers) * competition
        totals[seat] += points
        towers.append({
            "lot": LOT_NAMES[lot], "colour": colour, "owner": seat, "reach": reach,
            "customers": [{"lot": LOT_NAMES[t], "kind": PIECES[board[t] - 1][0],
                           "colour": colour_of(t), "distance": near[t]} for t in customers],
            "customer_base": len(customers),
            "competitor": None if competitor is None else {"lot": LOT_NAMES[competitor],
                                                           "distance": competition},
            "points": points,
        })

    # --- Control Guild bonus --------------------------------------------------------------------
    bonuses: list[dict[str, Any]] = []
    for green in tower_lots:
        if colour_of(green) != "green" or cap[green]:
            continue
        near = dist[green]
        for colour in ("red", "blue"):
            candidates = [t for t in tower_lots if colour_of(t) == colour and t in near]
            if not candidates:
                continue
            d = min(near[t] for t in candidates)
            nearest = sorted(t for t in candidates if near[t] == d)
            owners = {owner(t) for t in nearest}
            entry: dict[str, Any] = {"green": LOT_NAMES[green], "colour": colour, "distance": d,
                                     "nearest": [LOT_NAMES[t] for t in nearest], "seat": None,
                                     "points": 0}
            if d > BONUS_REACH:
                entry["note"] = f"nearest {colour} tower is more than {BONUS_REACH} away"
            elif len(nearest) > 1 and edition == "1.2":
                entry["note"] = "tie for nearest: edition 1.2 pays no bonus on a tie"
            elif None in owners:
                entry["note"] = ("nearest tower is unclaimed" if len(nearest) == 1 else
                                 "tie for nearest and not every tied tower is claimed")
            elif len(owners) > 1:
                entry["note"] = "tie for nearest between towers of both seats"
            else:
                seat = owners.pop()
                assert seat is not None
                entry["seat"] = seat
                entry["points"] = 10 - 2 * d
                entry["note"] = ("paid once: one seat owns all tied towers" if len(nearest) > 1
                                 else "paid")
                totals[seat] += entry["points"]
            bonuses.append(entry)

    # --- location bonus -------------------------------------------------------------------------
    location: list[dict[str, Any]] = []
    if options.get("location_bonus"):
        by_number: dict[int, list[int]] = {}
        for lot in claimed:
            by_number.setdefault(layout.tiles[TILE_OF[lot]].number, []).append(lot)
        for lot in claimed:
            number = layout.tiles[TILE_OF[lot]].number
            shared = [LOT_NAMES[t] for t in by_number[number] if t != lot]
            seat = owner(lot)
            assert seat is not None
            points = 0 if shared else number
            totals[seat] += points
            location.append({"lot": LOT_NAMES[lot], "seat": seat, "number": number,
                             "shared_with": shared, "points": points})

    # --- text: a table, a row per item, a column per seat -------------------------------------
    rows = []
    for t in towers:
        comp = t["competitor"]
        d = comp["distance"] if comp else 0
        customers = ", ".join(keep(f"{c['colour']} {c['kind']} {c['lot']} ({c['distance']})")
                              for c in t["customers"]) or "none"
        notes = [f"customers within {t['reach']}: {customers}",
                 f"competition: {t['colour']} tower {comp['lot']} at {d}" if comp else
                 f"competition: no other {t['colour']} tower on the board, so the tower scores 0"]
        rows.append(Row(f"{t['colour']} tower {t['lot']}: {t['customer_base']} x {d} = {t['points']}",
                        {t["owner"]: t["points"]}, notes))
    for b in bonuses:
        if b["seat"] is not None:
            rows.append(Row(f"Control Guild bonus: green tower {b['green']}, nearest {b['colour']} "
                            f"tower {' '.join(b['nearest'])} at {b['distance']}: 10 - 2 x "
                            f"{b['distance']} = {b['points']}", {b["seat"]: b["points"]}))
    for loc in location:
        shared = f" (shared with {', '.join(loc['shared_with'])})" if loc["shared_with"] else ""
        rows.append(Row(f"location bonus: tower {loc['lot']} on a tile numbered {loc['number']}: "
                        f"{loc['points']}{shared}", {loc["seat"]: loc["points"]}))
    rule = f"Alien City {edition}" + (", location bonus" if options.get("location_bonus") else "")
    lines = [score_table(f"{'Final scores' if final else 'Scores so far'} ({rule})", SEATS,
                         rows or [Row("no claimed towers", {})], [Row("Total", totals)])]
    unpaid = [b for b in bonuses if b["seat"] is None]
    if unpaid:
        lines.append("Control Guild bonuses not paid:")
        for b in unpaid:
            lines += prose(f"green tower {b['green']}, {b['colour']}: nearest "
                           f"{' '.join(b['nearest'])} at {b['distance']}: {b['note']}", "  ")
    details = {"towers": towers, "bonuses": bonuses, "location": location, "totals": dict(totals),
               "edition": edition}
    return Score(totals=totals, text="\n".join(lines), details=details)


def describe_structure(board: Sequence[int], lot: int) -> str:
    """E.g. ``red tower C4``; used in messages about what stands on a lot."""
    return _describe(board, lot)
