"""The statements of the vacation allowance (migration 8): per player and year, the days spent on
vacations and on timeouts. Both stores run them (``SqlTx`` includes ``AllowanceStatements``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pbem.store.common import dt_to_text


class AllowanceStatements:
    """Methods of a write transaction; ``_c`` is its connection (``pbem.store.sql.Db``)."""

    _c: Any

    def allowance_use(self, email: str, year: int) -> tuple[int, int] | None:
        """(vacation days, timeout days) of ``email`` in ``year``; None when nothing was written."""
        row = self._c.one("SELECT vacation_days, timeout_days FROM allowance WHERE email = ? AND year = ?",
                          (email.lower(), year))
        return (int(row[0]), int(row[1])) if row else None

    def set_vacation_days(self, email: str, year: int, days: int, now: datetime) -> None:
        self._c.run("INSERT INTO allowance (email, year, vacation_days, timeout_days, updated_at)"
                    " VALUES (?, ?, ?, 0, ?) ON CONFLICT (email, year) DO UPDATE SET"
                    " vacation_days = excluded.vacation_days, updated_at = excluded.updated_at",
                    (email.lower(), year, days, dt_to_text(now)))

    def add_timeout_days(self, email: str, year: int, days: int, vacation_days: int, now: datetime) -> None:
        """``days`` more spent on timeouts; ``vacation_days`` is written only with a new row."""
        self._c.run("INSERT INTO allowance (email, year, vacation_days, timeout_days, updated_at)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT (email, year) DO UPDATE SET"
                    " timeout_days = allowance.timeout_days + excluded.timeout_days,"
                    " updated_at = excluded.updated_at",
                    (email.lower(), year, vacation_days, days, dt_to_text(now)))

    def move_allowance(self, old_email: str, new_email: str) -> None:
        """A change of address takes the allowance along; a year the new address already has is
        added up."""
        old, new = old_email.lower(), new_email.lower()
        db = self._c
        rows = db.all("SELECT year, vacation_days, timeout_days, updated_at FROM allowance WHERE email = ?",
                      (old,))
        for year, vacation, timeout, updated in rows:
            db.run("INSERT INTO allowance (email, year, vacation_days, timeout_days, updated_at)"
                   " VALUES (?, ?, ?, ?, ?) ON CONFLICT (email, year) DO UPDATE SET"
                   " vacation_days = allowance.vacation_days + excluded.vacation_days,"
                   " timeout_days = allowance.timeout_days + excluded.timeout_days,"
                   " updated_at = excluded.updated_at", (new, year, vacation, timeout, updated))
        db.run("DELETE FROM allowance WHERE email = ?", (old,))


__all__ = ["AllowanceStatements"]
