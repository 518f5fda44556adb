"""The standing of a tournament from its stored document: the table of a round robin or a Swiss,
a league division's, the places of a bracket or a ladder. Pure functions of the document, so the
table after a replay from the store is the same."""

from __future__ import annotations

from typing import Any

from pbem.store.tournaments import TournamentRow
from pbem.tournaments import document as d
from pbem.tournaments import elimination
from pbem.tournaments.table import standings


def bracket_results(doc: dict[str, Any]) -> dict[str, str]:
    return {mid: m["winner"] for mid, m in doc.get("matches", {}).items() if m.get("winner")}


def division_table(doc: dict[str, Any], index: int) -> list[Any]:
    settings = d.settings_from_json(doc["settings"])
    members = [p for p in doc["divisions"][index] if (d.entrant(doc, p) or {}).get("status") != "removed"]
    games = [g for g in d.games(doc) if set(g.players) <= set(members)]
    return standings(members, games, settings.tiebreaks or [], d.ratings(doc))


def ranking(trow: TournamentRow) -> list[tuple[int, str]]:
    """(place, address), best first, as the tournament stands."""
    doc = trow.doc
    fmt = trow.format
    if fmt == "ladder":
        return [(i + 1, p) for i, p in enumerate(doc.get("ladder", []))]
    if fmt.endswith("elimination") and doc.get("bracket"):
        return elimination.places(elimination.bracket_from_json(doc["bracket"]), bracket_results(doc))
    if fmt == "league" and doc.get("divisions"):
        out: list[tuple[int, str]] = []
        for k in range(len(doc["divisions"])):
            for line in division_table(doc, k):
                out.append((len(out) + 1, line.player))
        return out
    return [(line.rank, line.player) for line in table_lines(trow)]


def table_lines(trow: TournamentRow) -> list[Any]:
    doc = trow.doc
    settings = d.settings_from_json(doc["settings"])
    players = [e["email"] for e in doc.get("entrants", []) if e.get("status") != "removed"]
    removed = {e["email"] for e in doc.get("entrants", []) if e.get("status") == "removed"}
    games = [g for g in d.games(doc) if not removed & set(g.players)]
    return standings(players, games, settings.tiebreaks or [], d.ratings(doc))
