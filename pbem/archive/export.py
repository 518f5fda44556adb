"""``pbem archive export``: finished (or any) games out of the store as record files plus an index.

Each file is the record exactly as the server keeps it, so ``pbem replay`` and ``pbem archive import``
read it back without loss. That includes hidden setup (the Space Truckin' draw pile): an export is a
moderator's backup. ``public=True`` writes the players' view instead, for archives handed out.
Files are written atomically, so an export interrupted half-way leaves whole files and an old index.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pbem.archive.importer import INDEX_NAME
from pbem.archive.progress import Progress
from pbem.archive.search import Filters, iter_games, summary
from pbem.clocks.privacy import others_view
from pbem.record import iso, player_view
from pbem.store.base import GameRow, Store

INDEX_FORMAT = "pbem-archive-index/1"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
_WRITERS = 8  # files written (and fsynced) at once: their waits for the disk overlap
_one = json.JSONEncoder(ensure_ascii=False).encode


def archive_text(record: Mapping[str, Any]) -> str:
    """JSON with one top-level key, and one move, per line: readable and diffable like
    ``dump_record``'s output, but made by the C encoder piece by piece (``indent`` would switch
    json to its pure-Python encoder, the slowest part of a large export)."""
    lines = []
    for key, value in record.items():
        if key == "moves" and isinstance(value, list) and value:
            body = ",\n".join(f"  {_one(entry)}" for entry in value)
            lines.append(f" {_one(key)}: [\n{body}\n ]")
        else:
            lines.append(f" {_one(key)}: {_one(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def write_atomic(path: Path, text: str, mode: int | None = None) -> None:
    """Temp file, fsync, rename: a crash leaves the old file or the new one, never a torn one."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def file_stem(game_id: str) -> str:
    """A game id as a file name: ids from other servers must not reach outside the directory."""
    stem = _UNSAFE.sub("_", game_id)
    return stem if stem.strip(".") else f"_{stem}"


def archive_record(row: GameRow, public: bool = False) -> dict[str, Any]:
    """The record with its id and players, which a bare engine record may lack."""
    record = dict(row.record)
    record["id"] = row.id
    if not isinstance(record.get("players"), dict) and row.seats:
        record["players"] = {s.seat: {"name": s.name, "email": s.email} for s in row.seats}
    return others_view(player_view(record)) if public else record


@dataclass
class ExportReport:
    written: int
    directory: Path
    index: Path


def _old_index(path: Path) -> dict[str, dict[str, Any]]:
    """Entries of an earlier export into the same directory whose files are still there."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        entries = data["games"] if isinstance(data, dict) else []
        return {e["id"]: e for e in entries
                if isinstance(e, dict) and (path.parent / str(e.get("file", ""))).is_file()}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def export_games(store: Store, directory: Path, filters: Filters, *, public: bool = False,
                 progress: Progress | None = None, now: datetime | None = None) -> ExportReport:
    directory.mkdir(parents=True, exist_ok=True)
    index_path = directory / INDEX_NAME
    entries = _old_index(index_path)
    written = 0
    pending: list[Future[None]] = []
    with ThreadPoolExecutor(max_workers=_WRITERS) as writers:
        for row in iter_games(store, filters):
            name = f"{file_stem(row.id)}.json"
            pending.append(writers.submit(write_atomic, directory / name,
                                          archive_text(archive_record(row, public))))
            entry = summary(row)
            entry["file"] = name
            entries[row.id] = entry
            written += 1
            if len(pending) >= 4 * _WRITERS:  # keep memory flat and surface write errors early
                for done in pending:
                    done.result()
                    if progress is not None:
                        progress.update()
                pending.clear()
        for done in pending:
            done.result()
            if progress is not None:
                progress.update()
    # The index goes last: it never lists a file that is not complete on disk.
    games = sorted(entries.values(), key=lambda e: (e.get("finished") or e.get("created") or "",
                                                    e["id"]), reverse=True)
    index = {"format": INDEX_FORMAT, "exported_at": iso(now or datetime.now(UTC)),
             "filters": filters.describe(), "public": public, "count": len(games), "games": games}
    write_atomic(index_path, json.dumps(index, indent=1, ensure_ascii=False) + "\n")
    return ExportReport(written=written, directory=directory, index=index_path)


__all__ = ["INDEX_FORMAT", "ExportReport", "archive_record", "archive_text", "export_games", "file_stem",
           "write_atomic"]
