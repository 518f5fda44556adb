"""The vacation allowance (migration 8) on both stores: days of vacations and of timeouts per player
and year, upserted, added up, and taken along by a change of address; copied by `pbem store copy`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pbem.store.copy import TABLES
from pbem.store.sql import SqlStore

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)


def test_days_per_player_and_year(store: SqlStore) -> None:
    with store.transaction() as tx:
        assert tx.allowance_use("Ann@x.org", 2026) is None
        tx.set_vacation_days("Ann@x.org", 2026, 5, T0)
        tx.add_timeout_days("ann@x.org", 2026, 1, 99, T0)  # the row exists: its vacation days stay
        tx.add_timeout_days("ann@x.org", 2026, 2, 99, T0)
        tx.add_timeout_days("ann@x.org", 2027, 1, 3, T0)  # a new row takes the vacation days given
        tx.set_vacation_days("bo@x.org", 2026, 4, T0)
    with store.transaction() as tx:
        assert tx.allowance_use("ann@x.org", 2026) == (5, 3)
        assert tx.allowance_use("ANN@X.ORG", 2027) == (3, 1)
        tx.set_vacation_days("ann@x.org", 2026, 2, T0 + timedelta(days=1))  # a vacation cancelled
        assert tx.allowance_use("ann@x.org", 2026) == (2, 3)


def test_a_change_of_address_takes_the_allowance_along(store: SqlStore) -> None:
    with store.transaction() as tx:
        tx.set_vacation_days("old@x.org", 2026, 5, T0)
        tx.add_timeout_days("old@x.org", 2026, 2, 5, T0)
        tx.set_vacation_days("new@x.org", 2026, 1, T0)  # the new address had days of its own
        tx.add_timeout_days("old@x.org", 2025, 1, 0, T0)
        tx.move_player("old@x.org", "new@x.org")
    with store.transaction() as tx:
        assert tx.allowance_use("old@x.org", 2026) is None
        assert tx.allowance_use("new@x.org", 2026) == (6, 2)
        assert tx.allowance_use("new@x.org", 2025) == (0, 1)


def test_store_copy_knows_the_table() -> None:
    assert ("allowance", ("email", "year")) in TABLES
