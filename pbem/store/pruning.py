"""The statements that drop the raw mail of finished messages (``pbem admin prune``, and the
scheduler's daily prune with ``[server] keep_mail_days``), apart from ``sql.py``; reached as
``store.mail_pruning()``.

Every mail received (``inbound.raw``) and every reply with its body (``outbound.raw``) is kept, and
together they are most of what a move leaves in the database; nothing reads them once a message is
finished, except an administrator looking into a complaint. Pruning empties ``raw`` and stamps
``pruned_at`` (migration 12), and keeps the row: its Message-ID and hash still recognise a copy sent
again, and the counts, the rate limits, ``pbem status`` and ``pbem admin status`` read only the
small columns. Messages still waiting (pending, an outbox row not sent yet) and failed ones (kept
whole for the administrator) are never touched. The game state comes from the records, which
pruning does not touch either.

It works in batches, each its own short transaction, oldest first: a big prune never holds the
database's locks for long (on SQLite every other writer waits for a batch), can be interrupted at
any point and run again, and continues where it stopped.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from pbem.store.common import dt_from_text, dt_to_text

Db = Any  # pbem.store.sql.Db (which imports this module): a connection with run, one, all, value
BATCH = 1000  # rows a transaction: about 10 MB of mail, some tens of milliseconds of a write lock
LAST_PRUNE = "mail.last_prune"  # meta key: what the latest prune did, for `pbem admin status`
EMPTY = b""  # what a pruned row's raw holds (raw is NOT NULL since migration 1)

# The rows a prune still has to look at, oldest first, exactly as the partial indexes of migration
# 12 have them (SQLite uses a partial index only for a query that repeats its condition). Received
# messages count from when they were processed, replies from when they were sent or given up.
_KINDS = {
    "inbound": ("processed_at",
                "pruned_at IS NULL AND status IN ('done', 'ignored')"),
    "outbound": ("COALESCE(sent_at, given_up_at)",
                 "pruned_at IS NULL AND (sent_at IS NOT NULL OR given_up_at IS NOT NULL)"),
}


@dataclass
class PruneReport:
    """What a prune did (or, dry, would do): rows whose raw mail went, and how many bytes."""

    before: datetime  # finished before this
    received: int = 0  # inbound rows
    sent: int = 0  # outbound rows, sent or given up
    size: int = 0  # bytes of raw mail
    dry_run: bool = False

    def line(self) -> str:
        """The administrator's one line (CLI output and the scheduler's log)."""
        older = f"older than {self.before:%Y-%m-%d %H:%M} UTC"
        if not (self.received or self.sent):
            return f"nothing to prune: no finished message {older} still has its raw mail"
        what = (f"the raw mail of {self.received:,} received and {self.sent:,} sent messages {older}"
                f" ({size_text(self.size)})")
        if self.dry_run:
            return f"would prune {what}; nothing changed (--dry-run)"
        return f"pruned {what}; kept their rows"


@dataclass(frozen=True)
class LastPrune:
    """The latest prune that changed something, as kept in ``meta``."""

    at: datetime
    before: datetime
    received: int
    sent: int
    size: int


def size_text(count: int) -> str:
    """``1234567890`` -> ``1.2 GB``: decimal units, as disks are sold and ``df -H`` shows."""
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"


class MailPruning:
    """``store.mail_pruning()``: pruning in batches of write transactions, reads in snapshots."""

    def __init__(self, write: Callable[[], AbstractContextManager[Db]],
                 read: Callable[[], AbstractContextManager[Db]], *, indexed_by: bool,
                 vacuum: Callable[[], None] | None) -> None:
        self._write = write
        self._read = read
        self._indexed_by = indexed_by  # SQLite: name the partial index (its planner may not pick it)
        self._vacuum = vacuum

    def _candidates(self, table: str, columns: str) -> str:
        age, condition = _KINDS[table]
        hint = f" INDEXED BY {table}_unpruned" if self._indexed_by else ""
        return f"SELECT {columns} FROM {table}{hint} WHERE {condition} AND {age} < ?"

    def prune(self, before: datetime, now: datetime, *, dry_run: bool = False, batch: int = BATCH,
              limit: int | None = None, progress: Callable[[PruneReport], object] | None = None
              ) -> PruneReport:
        """Drop the raw mail of every message finished before ``before`` (at most ``limit``
        messages, received ones first); ``progress`` is told the running totals after each batch
        (a prune interrupted there has done that much)."""
        report = PruneReport(before=before, dry_run=dry_run)
        cutoff = dt_to_text(before)
        if dry_run:
            with self._read() as db:
                for table in _KINDS:
                    count, size = db.one(self._candidates(table, "COUNT(*), SUM(LENGTH(raw))"), (cutoff,))
                    self._add(report, table, int(count), int(size or 0))
            return report
        stamp = dt_to_text(now)
        for table in _KINDS:
            age, _condition = _KINDS[table]
            while True:
                size = batch if limit is None else min(batch, limit - report.received - report.sent)
                if size <= 0:
                    break
                with self._write() as db:
                    rows = db.all(self._candidates(table, "id, LENGTH(raw)") + f" ORDER BY {age}"
                                  f" LIMIT ?{db.dialect.for_update}", (cutoff, size))
                    if rows:
                        marks = ",".join("?" * len(rows))
                        db.run(f"UPDATE {table} SET raw = ?, pruned_at = ? WHERE id IN ({marks})",
                               (EMPTY, stamp, *(r[0] for r in rows)))
                self._add(report, table, len(rows), sum(int(r[1]) for r in rows))
                if rows and progress is not None:
                    progress(report)
                if len(rows) < size:
                    break
        if report.received or report.sent:
            last = LastPrune(at=now, before=before, received=report.received, sent=report.sent,
                             size=report.size)
            value = json.dumps({k: dt_to_text(v) if isinstance(v, datetime) else v
                                for k, v in asdict(last).items()})
            with self._write() as db:
                db.run("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key)"
                       " DO UPDATE SET value = excluded.value", (LAST_PRUNE, value))
        return report

    @staticmethod
    def _add(report: PruneReport, table: str, rows: int, size: int) -> None:
        if table == "inbound":
            report.received += rows
        else:
            report.sent += rows
        report.size += size

    def last(self) -> LastPrune | None:
        """The latest prune that dropped something; None before the first."""
        with self._read() as db:
            value = db.value("SELECT value FROM meta WHERE key = ?", (LAST_PRUNE,))
        if not value:
            return None
        doc = json.loads(value)
        return LastPrune(at=dt_from_text(doc["at"]), before=dt_from_text(doc["before"]),  # type: ignore[arg-type]
                         received=int(doc["received"]), sent=int(doc["sent"]), size=int(doc["size"]))

    @property
    def can_vacuum(self) -> bool:
        """True where ``vacuum()`` shrinks the database file (SQLite)."""
        return self._vacuum is not None

    def vacuum(self) -> None:
        """Rewrite the database without its free pages (SQLite's ``VACUUM``): the file shrinks by
        what pruning freed. Every writer waits meanwhile, and it needs free disk space of about the
        file's size while it runs."""
        if self._vacuum is None:
            raise NotImplementedError("only a SQLite store is vacuumed here")
        self._vacuum()


__all__ = ["BATCH", "LAST_PRUNE", "LastPrune", "MailPruning", "PruneReport", "size_text"]
