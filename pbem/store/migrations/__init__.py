"""Versioned schema migrations, shipped as Python modules so they travel inside the wheel (and a
zipped install) with no package-data configuration.

Each migration lives in its own module ``mNNNN_<name>.py`` holding one SQL script per dialect,
``SQLITE`` and ``POSTGRESQL``. Write the SQL both understand (TEXT timestamps and JSON, ``ON CONFLICT``
upserts, partial indexes, ``ALTER TABLE ... ADD COLUMN``) and set ``POSTGRESQL = SQLITE``: most
changes are then written once. Only true differences (column types of new tables: BIGINT and BYTEA
in PostgreSQL, see ``dialects.py``) get two texts. Migrations are append-only: once released, a
module is never edited, because databases in the field already carry its version number. To change
the schema, add a module and append it to ``MIGRATIONS``; tests/store/test_migrations.py migrates
both databases from every earlier version.

A script runs inside one transaction together with the insert into ``schema_version`` (SQLite:
``BEGIN IMMEDIATE``; PostgreSQL: transactional DDL under an advisory lock), so a failed migration
leaves the database at the previous version. (A future
migration that has to rebuild a table with foreign keys pointing at it must switch
``PRAGMA foreign_keys`` off around the transaction, which the runner does not do yet.)
"""

from __future__ import annotations

from dataclasses import dataclass

from pbem.store.migrations import (
    m0001_initial,
    m0002_community,
    m0003_search_indexes,
    m0004_mail,
    m0005_hostile_mail,
    m0006_classic,
    m0007_workers,
    m0008_player_blocks,
    m0009_allowance,
    m0010_tournaments,
    m0011_inbound_statistics,
    m0012_pruned_mail,
)


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sqlite: str | None
    postgresql: str | None = None


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "initial", m0001_initial.SQLITE, m0001_initial.POSTGRESQL),
    Migration(2, "community", m0002_community.SQLITE, m0002_community.POSTGRESQL),
    Migration(3, "search indexes", m0003_search_indexes.SQLITE, m0003_search_indexes.POSTGRESQL),
    Migration(4, "mail threads and digests", m0004_mail.SQLITE, m0004_mail.POSTGRESQL),
    Migration(5, "hostile mail", m0005_hostile_mail.SQLITE, m0005_hostile_mail.POSTGRESQL),
    Migration(6, "results and address changes", m0006_classic.SQLITE, m0006_classic.POSTGRESQL),
    Migration(7, "workers", m0007_workers.SQLITE, m0007_workers.POSTGRESQL),
    Migration(8, "player blocks", m0008_player_blocks.SQLITE, m0008_player_blocks.POSTGRESQL),
    Migration(9, "vacation allowance", m0009_allowance.SQLITE, m0009_allowance.POSTGRESQL),
    Migration(10, "tournaments", m0010_tournaments.SQLITE, m0010_tournaments.POSTGRESQL),
    Migration(11, "inbound statistics", m0011_inbound_statistics.SQLITE, m0011_inbound_statistics.POSTGRESQL),
    Migration(12, "pruned mail", m0012_pruned_mail.SQLITE, m0012_pruned_mail.POSTGRESQL),
)


def latest_version(migrations: tuple[Migration, ...] | None = None) -> int:
    migrations = MIGRATIONS if migrations is None else migrations
    return migrations[-1].version if migrations else 0


def check_sequence(migrations: tuple[Migration, ...]) -> None:
    """A gap or a duplicate would make two installations disagree about what version N means."""
    for expected, migration in enumerate(migrations, start=1):
        if migration.version != expected:
            raise ValueError(f"migration {migration.name!r} has version {migration.version}, "
                             f"expected {expected}")
