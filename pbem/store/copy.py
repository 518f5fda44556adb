"""Copy everything one store holds into another (SQLite to PostgreSQL, or back), safely re-runnable.

Each table is read in pages in key order and written with an upsert on its key (``ON CONFLICT ...
DO UPDATE``), so a second run brings the target up to date with a source that moved on (games played
further, mail sent) instead of failing or doubling rows. Row ids are kept: they order the intake
queue and the outbox, and the logs name them; the target's id counters are moved past them after.
What is not copied: ``schema_version`` (the target has its own, migrated to the same version) and
``workers`` (the heartbeats of running servers). Verifying the copy (every game replayed) is the
caller's: ``pbem store copy`` does it with the engine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from pbem.store.base import GameRow
from pbem.store.common import StoreError
from pbem.store.sql import GAME_COLS, SqlStore, load_games

#: Tables in an order that satisfies the foreign keys (games before what refers to them), each with
#: the columns of its primary key.
TABLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("games", ("id",)),
    ("seats", ("game_id", "seat")),
    ("observers", ("game_id", "email")),
    ("mail_threads", ("game_id", "email")),
    ("game_counters", ("prefix",)),
    ("players", ("email",)),
    ("allowance", ("email", "year")),
    ("blocked", ("email",)),
    ("player_blocks", ("email", "blocked")),
    ("once_keys", ("key",)),
    ("meta", ("key",)),
    ("notices", ("key",)),
    ("imap_state", ("mailbox",)),
    ("bounces", ("id",)),
    ("bouncing", ("email",)),
    ("address_changes", ("id",)),
    ("digest_items", ("id",)),
    ("inbound", ("id",)),
    ("outbound", ("id",)),
    ("tournaments", ("id",)),
    ("tournament_entrants", ("tournament_id", "email")),
)

#: Tables whose integer ids come from a counter of the database.
NUMBERED = ("bounces", "address_changes", "digest_items", "inbound", "outbound")
PAGE = 500


class CopyError(StoreError):
    """The target holds other data than an earlier copy of this source."""


@dataclass
class CopyReport:
    rows: dict[str, int] = field(default_factory=dict)  # table -> rows copied (written or refreshed)

    def summary(self) -> str:
        parts = [f"{t.replace('_', ' ')} {self.rows[t]}" for t, _ in TABLES if self.rows.get(t)]
        return ", ".join(parts) or "nothing"


def source_counts(source: SqlStore) -> dict[str, int]:
    db = source._db()
    return {table: int(db.value(f"SELECT COUNT(*) FROM {table}")) for table, _ in TABLES}


def copy_store(source: SqlStore, target: SqlStore,
               progress: Callable[[int], object] | None = None) -> CopyReport:
    """Upsert every row of ``source`` into ``target`` (both migrated to the same version)."""
    if source.schema_version() != target.schema_version():
        raise CopyError(f"schema versions differ: {source.schema_version()} in the source, "
                        f"{target.schema_version()} in the target")
    report = CopyReport()
    for table, key in TABLES:
        report.rows[table] = _copy_table(source, target, table, key, progress)
        reset = target.dialect.reset_identity(table) if table in NUMBERED else None
        if reset:
            with target._write() as db:
                db.run(reset)
    return report


def _copy_table(source: SqlStore, target: SqlStore, table: str, key: tuple[str, ...],
                progress: Callable[[int], object] | None) -> int:
    reader = source._db()
    columns = [d[0] for d in reader.run(f"SELECT * FROM {table} LIMIT 0").description]
    names = ", ".join(columns)
    keys = ", ".join(key)
    others = [c for c in columns if c not in key]
    update = (f"DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in others)}" if others
              else "DO NOTHING")
    insert = (f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' * len(columns))})"
              f" ON CONFLICT ({keys}) {update}")
    after = f"({keys}) > ({', '.join('?' * len(key))})"
    positions = [columns.index(k) for k in key]
    last: Sequence[object] | None = None
    copied = 0
    while True:
        where = f" WHERE {after}" if last is not None else ""
        rows = reader.all(f"SELECT {names} FROM {table}{where} ORDER BY {keys} LIMIT {PAGE}",
                          tuple(last) if last is not None else None)
        if not rows:
            return copied
        try:
            with target._write() as db:
                db.many(insert, [tuple(_plain(v) for v in row) for row in rows])
        except Exception as exc:
            if "unique" in str(exc).lower() or "constraint" in str(exc).lower():
                raise CopyError(f"{table}: the target holds rows that did not come from this source "
                                f"({exc}); copy into a new database") from exc
            raise
        copied += len(rows)
        last = [rows[-1][i] for i in positions]
        if progress is not None:
            progress(len(rows))


def _plain(value: object) -> object:
    """memoryview (some drivers' blobs) to bytes, which both drivers take."""
    return bytes(value) if isinstance(value, memoryview) else value


def game_pages(store: SqlStore, page: int = PAGE) -> Iterator[list[GameRow]]:
    """Every game, ``page`` at a time in id order (without holding them all in memory)."""
    db = store._db()
    last = ""
    while True:
        rows = db.all(f"SELECT {GAME_COLS} FROM games WHERE id > ? ORDER BY id LIMIT {page}", (last,))
        if not rows:
            return
        yield load_games(db, rows)
        last = rows[-1][0]


def games_by_id(store: SqlStore, ids: Sequence[str]) -> dict[str, GameRow]:
    db = store._db()
    marks = ",".join("?" * len(ids))
    return {g.id: g for g in load_games(db, db.all(f"SELECT {GAME_COLS} FROM games WHERE id IN ({marks})",
                                                   tuple(ids)))} if ids else {}
