"""``pbem admin prune``: drop the raw mail of messages finished long ago, keeping their rows.

What it keeps and why is ``pbem.store.pruning``'s; here are the administrator's words: the age as
``pbem admin clock`` takes a time (``90d``, ``12w``), one line of what was done, and what became of
the space, which differs between the databases: SQLite reuses the freed pages and shrinks the file
only when vacuumed (``--vacuum``), PostgreSQL reuses the space once autovacuum has passed, and
``VACUUM FULL`` (which locks the tables) is left to the administrator.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from datetime import datetime, timedelta
from pathlib import Path

from pbem.cli.common import CONFIG_HELP, load_cli_config, open_configured_store, progress_bar, setup_line
from pbem.clocks.movable import configured_clock, parse_span
from pbem.store.pruning import MailPruning, PruneReport, size_text

DEFAULT_AGE = "90d"
SQLITE_SPACE = ("SQLite reuses the freed pages for new mail, so the file grows no more for a while; "
                "it shrinks only when vacuumed (`pbem admin prune --vacuum`: every writer waits "
                "meanwhile, and it needs free disk space of about the file's size)")
POSTGRESQL_SPACE = ("PostgreSQL reuses the freed space for new rows once autovacuum has passed; the "
                    "tables do not shrink. `VACUUM FULL inbound, outbound` returns it to the system "
                    "but locks both tables while it runs: your choice, at a quiet hour")


def age_of(text: str) -> timedelta:
    """``90d`` -> 90 days; ValueError in the administrator's words."""
    age = parse_span(text)
    if age is None or age <= timedelta(0):
        raise ValueError(f"{text!r} is not an age: write it like 90d, 12w, 36h or 1d12h")
    return age


def cmd_prune(args: argparse.Namespace, extra: list[str]) -> int:
    name = "pbem admin prune"
    try:
        age = age_of(args.older_than)
    except ValueError as exc:
        print(f"{name}: --older-than {exc}", file=sys.stderr)
        return 2
    config = load_cli_config(args.config or args.admin_config)
    store = open_configured_store(config)
    try:
        pruning = store.mail_pruning()
        if args.vacuum and not pruning.can_vacuum:
            print(f"{name}: --vacuum is for a SQLite file; {POSTGRESQL_SPACE}", file=sys.stderr)
            return 2
        now = configured_clock(config).now()
        print(setup_line(config))
        waiting = pruning.prune(now - age, now, dry_run=True)
        if args.dry_run:
            print(waiting.line())
            if args.vacuum:
                print("would then vacuum the database file")
            return 0
        done = _prune(pruning, waiting, now)
        if done is None:
            return 130
        print(done.line())
        if (done.received or done.sent) and not args.vacuum:
            print(textwrap.fill(SQLITE_SPACE if pruning.can_vacuum else POSTGRESQL_SPACE, 78))
        if args.vacuum:
            _vacuum(pruning, getattr(store, "path", None))
        return 0
    finally:
        store.close()


def _prune(pruning: MailPruning, waiting: PruneReport, now: datetime) -> PruneReport | None:
    """The prune with a progress bar on a terminal; None when interrupted (after saying how far
    it got: every batch done so far stays done)."""
    so_far = PruneReport(before=waiting.before)
    bar = progress_bar("pruning", total=waiting.received + waiting.sent, unit=" messages")

    def progress(report: PruneReport) -> None:
        bar.update(report.received + report.sent - bar.n)
        so_far.received, so_far.sent, so_far.size = report.received, report.sent, report.size

    try:
        with bar:
            return pruning.prune(waiting.before, now, progress=progress)
    except KeyboardInterrupt:
        print(f"interrupted: {so_far.line()}; run it again to prune the rest", file=sys.stderr)
        return None


def _vacuum(pruning: MailPruning, path: Path | None) -> None:
    before = _file_size(path)
    pruning.vacuum()
    after = _file_size(path)
    sizes = f": {size_text(before)} -> {size_text(after)}" if before is not None and after is not None else ""
    print(f"vacuumed {path or 'the database'}{sizes}")


def _file_size(path: Path | None) -> int | None:
    """The database file with its write-ahead log."""
    if path is None:
        return None
    try:
        wal = path.with_name(path.name + "-wal")
        return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
    except OSError:
        return None


def add_prune(ops: argparse._SubParsersAction) -> None:
    """``prune`` among the ``pbem admin`` operations."""
    text = ("drop the raw mail of messages finished long ago (received: done or ignored; sent or "
            "given up), keeping their rows")
    p = ops.add_parser(
        "prune", help=text,
        description=text[0].upper() + text[1:] + ". Pending and failed messages and unsent replies "
        "are never touched; game records are not touched either. Safe to interrupt and run again.")
    p.add_argument("-c", "--config", help=CONFIG_HELP)
    p.add_argument("--older-than", default=DEFAULT_AGE, metavar="AGE",
                   help="finished longer ago than this: 90d, 12w, 36h (default: %(default)s)")
    p.add_argument("--dry-run", action="store_true", help="say what it would prune; change nothing")
    p.add_argument("--vacuum", action="store_true",
                   help="SQLite: then shrink the file by the space freed (VACUUM; writers wait)")
    p.set_defaults(func=cmd_prune)


__all__ = ["add_prune", "age_of"]
