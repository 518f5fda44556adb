"""``pbem archive export`` also writes every finished tournament beside its games:
``tournaments/t-3.json`` holds the tournament's document (settings, entrants, rounds with the id
and points of every game, bracket, ladder or divisions, actions, final ranking), so the archive
keeps each tournament with the games it is made of. With ``--public`` the addresses become the
players' public names, as on the site."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pbem.archive.export import file_stem, write_atomic
from pbem.archive.names import PublicNames, public_record
from pbem.record import iso
from pbem.store.base import Store
from pbem.store.tournaments import TournamentRow

FORMAT = "pbem-tournament/1"


def tournament_json(trow: TournamentRow, names: PublicNames | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"format": FORMAT, "id": trow.id, "game": trow.game, "kind": trow.format,
                            "status": trow.status, "organizer": trow.organizer,
                            "created_at": iso(trow.created_at) if trow.created_at else None,
                            "finished_at": iso(trow.finished_at) if trow.finished_at else None,
                            "tournament": trow.doc}
    if names is None:
        return data
    emails = {e["email"] for e in trow.doc.get("entrants", [])} | {trow.organizer}
    return public_record(data, {email: names.person(email) for email in emails})


def export_tournaments(store: Store, directory: Path, *, public: bool = False) -> int:
    """Every finished (or cancelled) tournament; returns how many were written."""
    rows = store.tournament_views().list(status=("over", "cancelled"))
    if not rows:
        return 0
    folder = directory / "tournaments"
    folder.mkdir(parents=True, exist_ok=True)
    names = PublicNames(store) if public else None
    for trow in rows:
        text = json.dumps(tournament_json(trow, names), indent=1, ensure_ascii=False, sort_keys=True) + "\n"
        write_atomic(folder / f"{file_stem(trow.id)}.json", text)
    return len(rows)
