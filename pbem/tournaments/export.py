"""``pbem archive export`` also writes every finished tournament beside its games:
``tournaments/t-3.json`` holds the tournament's document (settings, entrants, rounds with the id
and points of every game, bracket, ladder or divisions, actions, final ranking), so the archive
keeps each tournament with the games it is made of. With ``--public`` the addresses become the
players' public names, as on the site.

``pbem archive import`` reads them back after the games (``import_tournaments``), so an archive
moved to an empty server shows the same tournament pages and tables. Each file is checked before
anything is stored (its format, the fields a tournament needs, addresses rather than public
names, the tables computable from it), then stored in a transaction of its own: all or nothing
per tournament; one already present is skipped."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from engine import get_game
from engine.registry import UnknownGameError
from pbem.archive.export import file_stem, write_atomic
from pbem.archive.names import PublicNames, public_record
from pbem.record import iso
from pbem.store.base import Store
from pbem.store.tournaments import TOURNAMENT_STATUSES, TournamentRow
from pbem.tournaments import document as d
from pbem.tournaments.access import entrant_rows
from pbem.tournaments.tables import ranking

FORMAT = "pbem-tournament/1"


def tournament_json(trow: TournamentRow, names: PublicNames | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"format": FORMAT, "id": trow.id, "game": trow.game, "kind": trow.format,
                            "status": trow.status, "organizer": trow.organizer,
                            "created_at": iso(trow.created_at) if trow.created_at else None,
                            "updated_at": iso(trow.updated_at) if trow.updated_at else None,
                            "starts_at": iso(trow.starts_at) if trow.starts_at else None,
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


# --- reading them back ----------------------------------------------------------------------------

class TournamentFileError(ValueError):
    """A tournament file that cannot become a stored tournament; the message names the field."""


@dataclass
class TournamentImport:
    imported: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # ids already present
    bad: list[tuple[Path, str]] = field(default_factory=list)
    missing_games: dict[str, list[str]] = field(default_factory=dict)  # id -> games not in the store

    def summary_line(self) -> str:
        return (f"tournaments: imported {len(self.imported)}, skipped {len(self.skipped)} already present, "
                f"{len(self.bad)} bad")


def _time(data: Mapping[str, Any], key: str) -> datetime | None:
    value = data.get(key)
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise TournamentFileError(f"$.{key}: not a time: {value!r}") from None
    if when.tzinfo is None:
        raise TournamentFileError(f"$.{key}: a time needs its zone (UTC, ...Z): {value!r}")
    return when


def row_from_json(data: Any) -> TournamentRow:
    """The stored tournament for an exported file; raises TournamentFileError naming the field."""
    if not isinstance(data, Mapping) or data.get("format") != FORMAT:
        raise TournamentFileError(f"$.format: not a tournament file of pbem ({FORMAT!r} expected)")
    ident, game, kind, status = (data.get(k) for k in ("id", "game", "kind", "status"))
    if not isinstance(ident, str) or not d.is_tournament(ident):
        raise TournamentFileError(f"$.id: a tournament id like t-3, not {ident!r}")
    try:
        get_game(str(game))
    except UnknownGameError as exc:
        raise TournamentFileError(f"$.game: {exc}") from None
    if kind not in d.FORMATS:
        raise TournamentFileError(f"$.kind: one of {', '.join(d.FORMATS)}, not {kind!r}")
    if status not in TOURNAMENT_STATUSES:
        raise TournamentFileError(f"$.status: one of {', '.join(TOURNAMENT_STATUSES)}, not {status!r}")
    doc = data.get("tournament")
    if not isinstance(doc, dict) or not isinstance(doc.get("settings"), Mapping) \
            or not isinstance(doc.get("entrants"), list):
        raise TournamentFileError("$.tournament: the tournament's document with its settings and entrants")
    organizer = data.get("organizer")
    people = [e.get("email") if isinstance(e, Mapping) else None for e in doc["entrants"]]
    if not all(isinstance(p, str) and "@" in p for p in [organizer, *people]):
        raise TournamentFileError("$.tournament.entrants: the players' addresses are missing (a file of "
                                  "'pbem archive export --public' names them publicly and cannot be "
                                  "imported; export without --public)")
    created = _time(data, "created_at")
    trow = TournamentRow(id=ident.lower(), game=str(game), format=str(kind), status=str(status),
                         organizer=str(organizer), doc=doc, created_at=created,
                         updated_at=_time(data, "updated_at") or _time(data, "finished_at") or created,
                         starts_at=_time(data, "starts_at"), finished_at=_time(data, "finished_at"))
    if created is None:
        raise TournamentFileError("$.created_at: missing")
    try:
        d.settings_from_json(doc["settings"])
        d.games(doc)
        ranking(trow)  # the table the site shows, computable from what the file holds
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise TournamentFileError(f"$.tournament: its table cannot be computed: {type(exc).__name__}: "
                                  f"{exc}") from None
    trow.entrants = entrant_rows(doc, created)
    return trow


def import_tournaments(store: Store, directory: Path) -> TournamentImport:
    """Every ``tournaments/*.json`` of an exported archive (after its games)."""
    report = TournamentImport()
    folder = directory / "tournaments"
    paths = sorted(p for p in folder.glob("*.json") if p.is_file() and not p.name.startswith(".")) \
        if folder.is_dir() else []
    for path in paths:
        try:
            trow = row_from_json(json.loads(path.read_text(encoding="utf-8")))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            report.bad.append((path, f"not JSON in UTF-8: {exc}"))
            continue
        except TournamentFileError as exc:
            report.bad.append((path, str(exc)))
            continue
        try:
            with store.transaction() as tx:
                if tx.tournaments.get(trow.id) is not None:
                    report.skipped.append(trow.id)
                    continue
                tx.tournaments.insert(trow)
                missing = [item["id"] for item in _game_items(trow.doc) if tx.get_game(item["id"]) is None]
        except Exception as exc:  # refused by the store: rolled back whole, reported like a bad file
            report.bad.append((path, f"not stored: {type(exc).__name__}: {exc}"))
            continue
        report.imported.append(trow.id)
        if missing:
            report.missing_games[trow.id] = missing
    return report


def _game_items(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    past = [g for season in doc.get("seasons", []) for r in season.get("rounds", []) for g in r["games"]]
    items = [*(g for r in doc.get("rounds", []) for g in r["games"]), *doc.get("challenges", []), *past]
    return list({item["id"]: item for item in items if item.get("id")}.values())
