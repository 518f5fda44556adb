"""``pbem store copy``: move a server's data from one database to another (SQLite to PostgreSQL when
a club outgrows one file, or back), verified by replaying every game.

The copy is re-runnable: every row is upserted on its key, so running it again after the old server
went on (or after an interrupted run) brings the target up to date. Stop the old server before the
last run, so nothing arrives there after it.
"""

from __future__ import annotations

import argparse
import itertools
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from pbem.cli.common import SetupError, add_command, config_of, open_configured_store, out, progress_bar
from pbem.config import Config

_PARALLEL_FROM = 64  # fewer games than this are replayed in this process


def _open(url: str, config: Config, *, create: bool = False) -> Any:
    """A store for ``--from``/``--to``, with the one-line errors of the configured one."""
    from dataclasses import replace

    return open_configured_store(replace(config, database=url), create=create)


def _same_database(one: str, other: str) -> bool:
    from pbem.store import sqlite_path

    try:
        paths = sqlite_path(one), sqlite_path(other)
    except ValueError:
        return False
    if paths[0] is not None and paths[1] is not None:
        return paths[0].resolve() == paths[1].resolve()
    return one == other


def _replay_pair(item: tuple[str, dict[str, Any], dict[str, Any]]) -> tuple[str, str | None]:
    """Replay the source's and the copy's record of one game; a difference in the states (or a record
    that no longer replays) is a problem."""
    from pbem.record import replay_json, replay_record

    game_id, source, copy = item
    try:
        theirs = replay_json(replay_record(source))
    except Exception as exc:  # the source's own record is broken: say so, the copy is not to blame
        return game_id, f"the source's record does not replay ({type(exc).__name__}: {exc})"
    try:
        ours = replay_json(replay_record(copy))
    except Exception as exc:
        return game_id, f"the copy does not replay ({type(exc).__name__}: {exc})"
    return game_id, None if ours == theirs else "the copy replays to another position"


def _pairs(source: Any, target: Any, problems: list[str]) -> Iterator[tuple[str, dict, dict]]:
    from pbem.store.copy import game_pages, games_by_id

    for page in game_pages(source):
        copies = games_by_id(target, [g.id for g in page])
        for game in page:
            copy = copies.get(game.id)
            if copy is None:
                problems.append(f"{game.id}: missing in the target")
            elif copy != game:
                problems.append(f"{game.id}: the stored game differs (status, seats, times or record)")
            else:
                yield game.id, game.record, copy.record


def verify(source: Any, target: Any, total: int, jobs: int | None = None,
           progress: Callable[[int], object] | None = None) -> list[str]:
    """Every game of the source is in the target, equal, and replays to the same position. Replays
    run in worker processes when there are many, a page of games at a time (memory stays flat)."""
    problems: list[str] = []
    pairs = _pairs(source, target, problems)
    jobs = jobs or min(os.cpu_count() or 1, 4)
    pool = None
    if jobs > 1 and total >= _PARALLEL_FROM:
        pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"))
    try:
        while page := list(itertools.islice(pairs, 512)):
            results = pool.map(_replay_pair, page, chunksize=32) if pool else map(_replay_pair, page)
            for game_id, problem in results:
                if problem:
                    problems.append(f"{game_id}: {problem}")
            if progress is not None:
                progress(len(page))
    finally:
        if pool is not None:
            pool.shutdown()
    return problems


def cmd_copy(args: argparse.Namespace, extra: list[str]) -> int:
    from pbem.store import database_name
    from pbem.store.copy import CopyError, copy_store, source_counts
    from pbem.store.secret import server_secret

    config = config_of(args)
    source_url = args.source or config.database_url
    if _same_database(args.target, source_url):
        print("pbem store copy: --from and --to name the same database", file=sys.stderr)
        return 2
    try:
        source = _open(source_url, config)
    except SetupError as exc:
        print(f"pbem store copy: {exc}", file=sys.stderr)
        return 2
    try:
        try:
            target = _open(args.target, config, create=True)
        except SetupError as exc:
            print(f"pbem store copy: {exc}", file=sys.stderr)
            return 2
        try:
            # An installation from before the secret moved into the database: take its file along.
            server_secret(source, config.data_dir)
            counts = source_counts(source)
            with progress_bar("copying", sum(counts.values()), unit=" rows") as bar:
                report = copy_store(source, target, progress=bar.update)
            out(f"copied {database_name(source_url)} to {database_name(args.target)}: {report.summary()}")
            with progress_bar("verifying", counts["games"]) as bar:
                problems = verify(source, target, counts["games"], jobs=args.jobs, progress=bar.update)
        except CopyError as exc:
            print(f"pbem store copy: {exc}", file=sys.stderr)
            return 1
        finally:
            target.close()
    finally:
        source.close()
    for problem in problems:
        print(f"pbem store copy: {problem}", file=sys.stderr)
    if problems:
        print(f"pbem store copy: {len(problems)} game(s) differ; the target is not a faithful copy",
              file=sys.stderr)
        return 1
    out(f"verified: every one of {counts['games']} game(s) replays to the same position in both")
    return 0


def register_all(sub: argparse._SubParsersAction) -> None:
    store = sub.add_parser("store", help="the server's database: copy it to another one",
                           description="The server's database.")
    commands = store.add_subparsers(dest="store_command", metavar="COMMAND", required=True)
    copy = add_command(commands, "copy", cmd_copy,
                       "copy every game, player, observer and queued mail into another database "
                       "and verify it by replaying every game; safe to run again")
    copy.add_argument("--from", dest="source", metavar="URL",
                      help="the database to copy (default: the configured one)")
    copy.add_argument("--to", dest="target", metavar="URL", required=True,
                      help="where to copy it: postgresql://user@host/db, a file or sqlite:///path")
    copy.add_argument("--jobs", type=int, default=None, metavar="N",
                      help="processes that replay games for the check (default: the cores, up to 4)")


__all__ = ["register_all"]
