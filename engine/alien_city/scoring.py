"""Final scoring: street distances, customer bases, competition, Control Guild and location bonuses.

Distances are measured only through empty lots (the streets): two structures that touch each other but
share no empty neighbour are not adjacent "by street" and may be far apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from engine.alien_city.board import (
    IS_TOWER,
    LOT_NAMES,
    N_LOTS,
    PIECE_INDEX,
    PIECES,
    SEATS,
    TILE_OF,
    Layout,
)
from engine.alien_city.notation import local_piece, seat_name, words
from engine.alien_city.streets import ALL_LOTS, BIT, NEIGHBOUR_BITS, empty_bits, grow, lots_of
from engine.i18n import N_, _
from engine.scoretable import Row, keep, prose, score_table

BONUS_REACH = 4
GREEN_TOWER = PIECE_INDEX[("tower", "green")]
_CELL_COLOUR: tuple[str | None, ...] = (None, *(colour for _kind, colour in PIECES))


def street_distances(board: Sequence[int], sources: Iterable[int] | None = None
                     ) -> dict[int, dict[int, int]]:
    """``d[s][t]``: street distance between the structures on lots s and t (absent = unreachable),
    for every structure s of ``sources`` (default: all).

    One breadth-first search per source through the empty lots (see ``distances_from``)."""
    empty = empty_bits(board)
    built = ALL_LOTS & ~empty
    return {s: distances_from(s, empty, built) for s in (lots_of(built) if sources is None else sources)}


def distances_from(source: int, empty: int, built: int, reach: int | None = None,
                   wanted: Iterable[int] = ()) -> dict[int, int]:
    """Street distances from the structure on ``source`` to the others (``empty``: the empty
    lots, ``built``: the others, as bitboards), a layer at a time on bitboards: layer d holds the
    empty lots d steps from the source (layer 1: its street sides), and a structure is at
    distance d when it first touches layer d.

    With a ``reach``, the search stops after the layer where every structure within ``reach`` is
    found and so is some lot of each bitboard of ``wanted`` that can be found (the nearest tower
    of a colour, with all those tied with it): what scoring asks, and a fraction of the search
    on a crowded board."""
    row: dict[int, int] = {}
    seen = BIT[source]
    reached = frontier = empty & NEIGHBOUR_BITS[source]
    missing = [w for w in wanted if w]
    d = 1
    while frontier:
        around = grow(frontier)
        touched = around & built & ~seen
        if touched:
            seen |= touched
            if missing:
                missing = [w for w in missing if not w & touched]
            while touched:
                low = touched & -touched
                row[low.bit_length() - 1] = d
                touched ^= low
        if reach is not None and d >= reach and not missing:
            break
        frontier = around & empty & ~reached
        reached |= frontier
        d += 1
    return row


def _describe(board: Sequence[int], lot: int) -> str:
    kind, colour = PIECES[board[lot] - 1]
    return f"{colour} {kind} {LOT_NAMES[lot]}"


def score_details(board: Sequence[int], cap: Sequence[int], layout: Layout,
                  options: Mapping[str, Any], *, full_search: bool = False) -> dict[str, Any]:
    """The scoring rules: totals and their breakdown (the ``details`` of a Score), as if the game
    ended now, without the text, which searches that score thousands of positions never read (and
    a move's mail neither: see ``score_text``). ``cap[lot]`` is 0, or 1 + the claiming seat's index.

    Each tower's street search stops once it found what the rules ask of it (``distances_from``);
    ``full_search`` searches to the end instead, the plain way, which a test holds equal."""
    edition = options["edition"]
    reach_of = {seat: options["handicap"][seat]["reach"] for seat in SEATS}
    totals = dict.fromkeys(SEATS, 0)
    towers: list[dict[str, Any]] = []

    def owner(lot: int) -> str | None:
        return SEATS[cap[lot] - 1] if cap[lot] else None

    colour = _CELL_COLOUR  # colour[board[lot]]: what stands on a lot, in its colour's name

    tower_lots = [i for i in range(N_LOTS) if board[i] and IS_TOWER[board[i] - 1]]
    claimed = [i for i in tower_lots if cap[i]]
    # Distances are needed only from what scores: claimed towers (its customers within its owner's
    # reach, the nearest tower of its colour) and unclaimed green ones (the nearest red and blue).
    empty = empty_bits(board)
    built = ALL_LOTS & ~empty
    by_colour = dict.fromkeys(("red", "blue", "green"), 0)  # the towers of each colour, as bitboards
    for i in tower_lots:
        by_colour[colour[board[i]]] |= BIT[i]
    dist: dict[int, dict[int, int]] = {}
    for lot in tower_lots:
        if cap[lot]:
            reach, wanted = reach_of[SEATS[cap[lot] - 1]], [by_colour[colour[board[lot]]] & ~BIT[lot]]
        elif board[lot] - 1 == GREEN_TOWER:
            reach, wanted = 0, [by_colour["red"], by_colour["blue"]]
        else:
            continue
        dist[lot] = (distances_from(lot, empty, built) if full_search
                     else distances_from(lot, empty, built, reach, wanted))

    # --- claimed towers -------------------------------------------------------------------------
    for lot in claimed:
        seat = owner(lot)
        assert seat is not None
        own = colour[board[lot]]
        reach = reach_of[seat]
        near = dist[lot]
        customers = sorted(
            (t for t, d in near.items() if d <= reach and colour[board[t]] != own),
            key=lambda t: (near[t], t))
        rivals = sorted((t for t in tower_lots if t != lot and colour[board[t]] == own and t in near),
                        key=lambda t: (near[t], t))
        competitor = rivals[0] if rivals else None
        competition = near[competitor] if competitor is not None else 0
        points = len(customers) * competition
        totals[seat] += points
        towers.append({
            "lot": LOT_NAMES[lot], "colour": own, "owner": seat, "reach": reach,
            "customers": [{"lot": LOT_NAMES[t], "kind": PIECES[board[t] - 1][0],
                           "colour": colour[board[t]], "distance": near[t]} for t in customers],
            "customer_base": len(customers),
            "competitor": None if competitor is None else {"lot": LOT_NAMES[competitor],
                                                           "distance": competition},
            "points": points,
        })

    # --- Control Guild bonus --------------------------------------------------------------------
    bonuses: list[dict[str, Any]] = []
    for green in tower_lots:
        if colour[board[green]] != "green" or cap[green]:
            continue
        near = dist[green]
        for wanted_colour in ("red", "blue"):
            candidates = [t for t in tower_lots if colour[board[t]] == wanted_colour and t in near]
            if not candidates:
                continue
            d = min(near[t] for t in candidates)
            nearest = sorted(t for t in candidates if near[t] == d)
            owners = {owner(t) for t in nearest}
            entry: dict[str, Any] = {"green": LOT_NAMES[green], "colour": wanted_colour, "distance": d,
                                     "nearest": [LOT_NAMES[t] for t in nearest], "seat": None,
                                     "points": 0}
            if d > BONUS_REACH:
                entry["note"] = f"nearest {wanted_colour} tower is more than {BONUS_REACH} away"
            elif len(nearest) > 1 and edition == "1.2":
                entry["note"] = N_("tie for nearest: edition 1.2 pays no bonus on a tie")
            elif None in owners:
                entry["note"] = (N_("nearest tower is unclaimed") if len(nearest) == 1 else
                                 N_("tie for nearest and not every tied tower is claimed"))
            elif len(owners) > 1:
                entry["note"] = N_("tie for nearest between towers of both seats")
            else:
                seat = owners.pop()
                assert seat is not None
                entry["seat"] = seat
                entry["points"] = 10 - 2 * d
                entry["note"] = (N_("paid once: one seat owns all tied towers") if len(nearest) > 1
                                 else N_("paid"))
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

    return {"towers": towers, "bonuses": bonuses, "location": location, "totals": totals,
            "edition": edition}


def score_text(details: Mapping[str, Any], options: Mapping[str, Any], final: bool) -> str:
    """The breakdown as a person reads it in a result mail."""
    edition = details["edition"]
    totals, towers, bonuses, location = (details["totals"], details["towers"], details["bonuses"],
                                         details["location"])
    # --- text: a table, a row per item, a column per seat -------------------------------------
    rows = []
    w = words()
    for t in towers:
        comp = t["competitor"]
        d = comp["distance"] if comp else 0
        customers = ", ".join(keep(f"{local_piece(c['kind'], c['colour'])} {c['lot']} ({c['distance']})")
                              for c in t["customers"]) or _("none")
        notes = [_("customers within {reach}: {customers}").format(reach=t["reach"], customers=customers),
                 _("competition: {tower} {lot} at {distance}").format(
                     tower=local_piece("tower", t["colour"]), lot=comp["lot"], distance=d) if comp else
                 _("competition: no other {tower} on the board, so the tower scores 0").format(
                     tower=local_piece("tower", t["colour"]))]
        rows.append(Row(f"{local_piece('tower', t['colour'])} {t['lot']}: {t['customer_base']} x {d} = "
                        f"{t['points']}", {t["owner"]: t["points"]}, notes))
    for b in bonuses:
        if b["seat"] is not None:
            rows.append(Row(_("Control Guild bonus: {green} {lot}, nearest {tower} {nearest} at "
                              "{distance}: 10 - 2 x {distance} = {points}").format(
                green=local_piece("tower", "green"), lot=b["green"], tower=local_piece("tower", b["colour"]),
                nearest=" ".join(b["nearest"]), distance=b["distance"], points=b["points"]),
                {b["seat"]: b["points"]}))
    for loc in location:
        shared = _(" (shared with {lots})").format(lots=", ".join(loc["shared_with"])) \
            if loc["shared_with"] else ""
        rows.append(Row(_("location bonus: tower {lot} on a tile numbered {number}: {points}{shared}").format(
            lot=loc["lot"], number=loc["number"], points=loc["points"], shared=shared),
            {loc["seat"]: loc["points"]}))
    rule = f"Alien City {edition}" + (_(", location bonus") if options.get("location_bonus") else "")
    title = (_("Final scores ({rule})") if final else _("Scores so far ({rule})")).format(rule=rule)
    lines = [score_table(title, SEATS, names={seat: seat_name(seat) for seat in SEATS}, rows=
                         rows or [Row(_("no claimed towers"), {})], footer=[Row(_("Total"), totals)])]
    unpaid = [b for b in bonuses if b["seat"] is None]
    if unpaid:
        lines.append(_("Control Guild bonuses not paid:"))
        for b in unpaid:
            lines += prose(_("{green} {lot}, {colour}: nearest {nearest} at {distance}: {note}").format(
                green=local_piece("tower", "green"), lot=b["green"], colour=w[b["colour"]],
                nearest=" ".join(b["nearest"]), distance=b["distance"], note=_note(b)), "  ")
    return "\n".join(lines)


def _note(bonus: Mapping[str, Any]) -> str:
    """Why a bonus was not paid, in the reader's language (``details`` keep the English note)."""
    if bonus["distance"] > BONUS_REACH:
        return _("nearest {tower} is more than {reach} away").format(
            tower=local_piece("tower", bonus["colour"]), reach=BONUS_REACH)
    return _(bonus["note"])


def describe_structure(board: Sequence[int], lot: int) -> str:
    """E.g. ``red tower C4``; used in messages about what stands on a lot."""
    return _describe(board, lot)
