"""``pbem archive import``: bring record files back into a store, all or nothing per game.

Every file is checked twice before anything is written: against the schema and the game's setup
rules (``check_record``), then by replaying every move, so an archive edited by hand or truncated in
transit cannot put a game into the store that the server could not replay later. Checking is the
expensive part (JSON Schema and a full replay per game) and needs no store, so on a machine with
several cores it runs in worker processes while this process inserts, one transaction per game.
"""

from __future__ import annotations

import multiprocessing
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from engine import EngineError, State
from engine.base import ReplayError
from pbem.archive.progress import Progress
from pbem.archive.search import finished_at, parse_time
from pbem.record import RecordError, load_record, replay_record
from pbem.store.base import GameRow, Seat, Store

INDEX_NAME = "index.json"
GAME_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_PARALLEL_FROM = 64  # fewer files than this are checked in-process: starting workers costs more


class ImportProblem(ValueError):
    """A record that is well-formed and replays but cannot become a stored game."""


@dataclass
class BadFile:
    path: Path
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass
class ImportReport:
    imported: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # ids already present
    bad: list[BadFile] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.bad

    def summary_line(self) -> str:
        return (f"imported {len(self.imported)}, skipped {len(self.skipped)} already present, "
                f"{len(self.bad)} bad")


@dataclass
class Checked:
    """What a worker found in one file: a row ready to insert, or why not."""

    path: str
    row: GameRow | None = None
    error: str | None = None


def record_files(directory: Path) -> list[Path]:
    """The record files of an archive directory (the index and temporary files are not records)."""
    return sorted(p for p in directory.glob("*.json")
                  if p.is_file() and p.name != INDEX_NAME and not p.name.startswith("."))


def _derive_status(record: Mapping[str, Any], state: State) -> str:
    result = record.get("result")
    reason = result.get("reason") if isinstance(result, Mapping) else None
    if reason in ("declined", "cancelled"):
        return str(reason)
    if state.is_over or isinstance(result, Mapping):
        return "over"
    if record.get("started_at") or any("move" in e for e in record["moves"]):
        return "active"
    return "invited"


def _entry_time(record: Mapping[str, Any], first: bool) -> datetime | None:
    entries = record["moves"] if first else reversed(record["moves"])
    for entry in entries:
        when = parse_time(entry.get("at"))
        if when is not None:
            return when
    return None


def row_from_record(record: dict[str, Any], state: State) -> GameRow:
    """The stored game for an archived record; raises ImportProblem naming the JSON path.

    Imported games get no seat tokens: nobody can move in them by mail, they are history.
    """
    game_id = record.get("id")
    if not isinstance(game_id, str) or not GAME_ID.match(game_id):
        raise ImportProblem("$.id: an archived record needs its game id (letters, digits, '.', '_', "
                            f"'-'), got {game_id!r}")
    players = record.get("players")
    if not isinstance(players, Mapping):
        raise ImportProblem("$.players: missing; an archived game needs its players' addresses")
    seats = []
    for seat in state.seats:
        info = players.get(seat)
        email = info.get("email") if isinstance(info, Mapping) else None
        if not isinstance(email, str) or "@" not in email:
            raise ImportProblem(f"$.players.{seat}.email: missing or not a mail address")
        seats.append(Seat(seat=seat, email=email.strip().lower(), name=str(info.get("name") or ""),
                          token_hash="", accepted=True))
    extra = sorted(set(players) - set(state.seats))
    if extra:
        raise ImportProblem(f"$.players: seats {', '.join(extra)} do not play in this game")
    status = _derive_status(record, state)
    created = parse_time(record.get("created_at")) or parse_time(record.get("started_at")) \
        or _entry_time(record, first=True)
    ended = finished_at(record) if status in ("over", "declined", "cancelled") else None
    updated = ended or _entry_time(record, first=False) or created
    thread = record.get("thread_id")
    return GameRow(id=game_id, game=str(record["game"]), status=status, record=record, seats=seats,
                   created_at=created, updated_at=updated,
                   to_move=state.to_move if status == "active" else None,
                   thread_id=thread if isinstance(thread, str) else None, finished_at=ended)


def check_file(path: str) -> Checked:
    """Schema, setup, full replay and the row; never raises for what a file contains."""
    try:
        record, game = load_record(Path(path))
        state = replay_record(record, game)
        return Checked(path, row=row_from_record(record, state))
    except RecordError as exc:
        return Checked(path, error="; ".join(exc.errors))
    except ReplayError as exc:
        return Checked(path, error=f"illegal move at ply {exc.ply} ({exc.move!r}): {exc.reason}"
                                   + (f" [rule: {exc.rule}]" if exc.rule else ""))
    except (EngineError, ImportProblem) as exc:
        return Checked(path, error=str(exc))
    except Exception as exc:  # a record that trips the engine must not stop the other files
        return Checked(path, error=f"cannot be replayed: {type(exc).__name__}: {exc}")


def _context() -> Any:
    """fork when the platform has it: workers then start in milliseconds with the engine loaded."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def checked_files(paths: Sequence[Path], jobs: int) -> Iterator[Checked]:
    """Results in the order of ``paths`` (deterministic reports), computed ahead by the workers."""
    names = [str(p) for p in paths]
    if jobs <= 1 or len(names) < _PARALLEL_FROM:
        yield from map(check_file, names)
        return
    with ProcessPoolExecutor(max_workers=jobs, mp_context=_context()) as pool:
        yield from pool.map(check_file, names, chunksize=8)


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def import_archive(store: Store, directory: Path, *, jobs: int | None = None,
                   progress: Progress | None = None) -> ImportReport:
    """Import every record file of ``directory``; ``report.bad`` names each refused file and why."""
    report = ImportReport()
    paths = record_files(directory)
    if progress is not None:
        progress.total = len(paths)
    for checked in checked_files(paths, default_jobs() if jobs is None else jobs):
        if progress is not None:
            progress.update()
        if checked.row is None:
            report.bad.append(BadFile(Path(checked.path), checked.error or "not a record"))
            continue
        row = checked.row
        try:
            with store.transaction() as tx:
                if tx.get_game(row.id) is not None:
                    report.skipped.append(row.id)
                    continue
                tx.insert_game(row)
        except Exception as exc:  # refused by the store: rolled back whole, reported like a bad file
            report.bad.append(BadFile(Path(checked.path), f"not stored: {type(exc).__name__}: {exc}"))
            continue
        report.imported.append(row.id)
    return report


__all__ = ["BadFile", "ImportProblem", "ImportReport", "check_file", "default_jobs", "import_archive",
           "record_files", "row_from_record"]
