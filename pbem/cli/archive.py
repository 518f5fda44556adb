"""``pbem archive export|import|search|html`` and ``pbem standings``.

Exit codes as everywhere in pbem: 0 done; 1 a problem was found in the input (``import`` with bad
record files); 2 the command could not run as asked (bad dates or names, a missing directory, a
configuration or database that cannot be used). Errors are one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pbem.cli.common import CONFIG_HELP, SetupError, config_of, open_configured_store, progress_bar
from pbem.config import ConfigError
from pbem.i18n import LANGUAGES
from pbem.store.base import GAME_STATUSES, RESULT_FILTERS, Store

if TYPE_CHECKING:  # the archive modules load only when an archive command runs
    from pbem.archive.search import Filters

STANDINGS_HELP = (
    "Ratings are Elo: start 1500, K=32, expected score 1/(1+10^((Rb-Ra)/400)), applied in the order "
    "games finished. A game of n>2 players counts as pairwise results between all its players, each "
    "weighted K/(n-1): winners beat non-winners, winners tie among themselves, non-winners tie among "
    "themselves. Only finished games count; a resignation or forfeit is a loss. ON TIME: of each "
    "player's finished games (of every game), the share not lost on time.")


class CommandProblem(Exception):
    """The command cannot run as asked: exit 2 with the message."""


def _open(args: argparse.Namespace, *, create: bool = False) -> Store:
    try:
        return open_configured_store(config_of(args), create=create)
    except SetupError as exc:
        raise CommandProblem(str(exc)) from None


def _filters(args: argparse.Namespace) -> Filters:
    from pbem.archive.search import FilterError, make_filters

    try:
        return make_filters(player=args.player, game=args.game, date_from=args.date_from,
                            date_to=args.date_to, status=getattr(args, "status", None),
                            result=args.result, winner=args.winner, loser=args.loser)
    except FilterError as exc:
        raise CommandProblem(str(exc)) from None


def _guarded(func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace, list[str]], int]:
    def run(args: argparse.Namespace, extra: list[str]) -> int:
        try:
            return func(args)
        except (CommandProblem, ConfigError) as exc:
            name = " ".join(filter(None, [args.command, getattr(args, "archive_command", None)]))
            print(f"pbem {name}: {exc}", file=sys.stderr)
            return 2
    return run


# --- archive -----------------------------------------------------------------------------------------

def cmd_export(args: argparse.Namespace) -> int:
    from pbem.archive.export import export_games
    from pbem.tournaments.export import export_tournaments

    filters = _filters(args)
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise CommandProblem(f"{out} exists and is not a directory")
    store = _open(args)
    try:
        with progress_bar("exporting") as bar:
            report = export_games(store, out, filters, public=args.public, progress=bar)
        tournaments = export_tournaments(store, out, public=args.public)
    finally:
        store.close()
    print(f"exported {report.written} game(s) ({filters.describe()}) to {out}; index {report.index}"
          + (f"; {tournaments} finished tournament(s) in {out / 'tournaments'}" if tournaments else ""))
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from pbem.archive.importer import import_archive
    from pbem.tournaments.export import import_tournaments

    directory = Path(args.directory)
    if not directory.exists():
        raise CommandProblem(f"no such directory: {directory}")
    if not directory.is_dir():
        raise CommandProblem(f"{directory} is not a directory")
    if args.jobs is not None and args.jobs < 1:
        raise CommandProblem("--jobs takes a number of processes, 1 or more")
    store = _open(args, create=True)  # an archive may fill a new server's database
    try:
        with progress_bar("importing") as bar:
            report = import_archive(store, directory, jobs=args.jobs, progress=bar)
        tournaments = import_tournaments(store, directory)  # after their games
    finally:
        store.close()
    for bad in report.bad:
        print(f"bad: {bad.path}: {bad.reason}", file=sys.stderr)
    for path, reason in tournaments.bad:
        print(f"bad: {path}: {reason}", file=sys.stderr)
    for ident, games in tournaments.missing_games.items():
        print(f"note: {ident} names games the archive does not hold: {', '.join(games)} (its table is "
              "complete; their pages are missing)", file=sys.stderr)
    print(report.summary_line())
    if (directory / "tournaments").is_dir():
        print(tournaments.summary_line())
    return 0 if report.ok and not tournaments.bad else 1


def cmd_search(args: argparse.Namespace) -> int:
    from pbem.archive.search import search, summary, table

    filters = _filters(args)
    if args.limit < 0:
        raise CommandProblem("--limit takes 0 (no limit) or more")
    store = _open(args)
    try:
        rows = search(store, filters, limit=args.limit or None)
    finally:
        store.close()
    if args.json:
        print(json.dumps([summary(r) for r in rows], indent=1, ensure_ascii=False))
        return 0
    print(table(rows))
    if args.limit and len(rows) == args.limit:
        print(f"(the newest {args.limit} shown; --limit N or --limit 0 for more)")
    return 0


def cmd_html(args: argparse.Namespace) -> int:
    from pbem.archive.site import write_site
    from pbem.tournaments import site as tournament_pages  # registers the tournaments' (and standings) pages

    assert tournament_pages

    filters = _filters(args)
    out = Path(args.directory)
    if out.exists() and not out.is_dir():
        raise CommandProblem(f"{out} exists and is not a directory")
    store = _open(args)
    try:
        with progress_bar("writing pages") as bar:
            config = config_of(args)
            report = write_site(store, out, filters, progress=bar, language=args.language or config.language,
                                default_days=config.deadlines.default_days)
    finally:
        store.close()
    for game_id, reason in report.failed:
        print(f"no page for {game_id}: {reason}", file=sys.stderr)
    print(f"wrote {report.pages} game page(s) and {report.index}"
          + (f"; {len(report.failed)} game(s) could not be drawn" if report.failed else ""))
    return 1 if report.failed else 0


# --- standings ---------------------------------------------------------------------------------------

def cmd_standings(args: argparse.Namespace) -> int:
    from pbem.archive.search import FilterError, check_game, iter_games, make_filters
    from pbem.community.standings import as_json, compute, table_text, title_of

    try:
        game = check_game(args.game) if args.game else None
    except FilterError as exc:
        raise CommandProblem(str(exc)) from None
    from pbem.clocks import reliability

    store = _open(args)
    try:
        finished = list(iter_games(store, make_filters(status="over")))
        standings = compute([row for row in finished if game is None or row.game == game], game)
        reliable = reliability.compute(finished)
    finally:
        store.close()
    if args.json:
        data = as_json(standings)
        data["reliability"] = {email: line.as_json() for email, line in sorted(reliable.items())}
        print(json.dumps(data, indent=1, ensure_ascii=False))
        return 0
    if not standings:
        print("No finished games" + (f" of {title_of(game)}" if game else "") + " yet.")
        return 0
    for name, lines in standings.items():
        print(f"{title_of(name)}\n{table_text(name, lines, reliable)}\n")
    print(STANDINGS_HELP)
    return 0


# --- parser ------------------------------------------------------------------------------------------

def _filter_options(parser: argparse.ArgumentParser, status: bool = True) -> None:
    parser.add_argument("--player", metavar="ADDRESS", help="games this address played")
    parser.add_argument("--game", metavar="NAME", help="alien-city or space-truckin")
    parser.add_argument("--from", dest="date_from", metavar="DATE",
                        help="finished (or, if unfinished, created) on or after this UTC day, YYYY-MM-DD")
    parser.add_argument("--to", dest="date_to", metavar="DATE", help="... on or before this UTC day")
    if status:
        parser.add_argument("--status", choices=GAME_STATUSES, help="only games with this status")
    parser.add_argument("--result", choices=RESULT_FILTERS,
                        help="only games that ended so: a draw (agreed or scored), a resignation, a "
                             "forfeit, or abandoned by agreement")
    parser.add_argument("--winner", metavar="ADDRESS", help="games this address won")
    parser.add_argument("--loser", metavar="ADDRESS", help="games this address lost")


def register_all(sub: argparse._SubParsersAction) -> None:
    archive = sub.add_parser(
        "archive", help="export, import, search and publish finished games",
        description="Export games from the store to record files, import them back, search them, "
                    "or write a static HTML site of them.")
    actions = archive.add_subparsers(dest="archive_command", metavar="ACTION", required=True)

    def add(name: str, func: Callable[[argparse.Namespace], int], text: str,
            epilog: str | None = None) -> argparse.ArgumentParser:
        parser = actions.add_parser(name, help=text, description=text, epilog=epilog)
        parser.add_argument("-c", "--config", help=CONFIG_HELP)
        parser.set_defaults(func=_guarded(func))
        return parser

    p = add("export", cmd_export, "write one record file per game (DIR/<id>.json) and DIR/index.json",
            "Records are exported whole, hidden information included (a moderator's backup); "
            "--public writes what players may see instead.")
    _filter_options(p)
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="the folder to write into")
    p.add_argument("--public", action="store_true", help="remove hidden information (draw piles)")

    p = add("import", cmd_import, "check every record file of DIR (schema and full replay) and store "
                                  "the games not yet present, one transaction per game",
            "Exit 1 when any file was bad; each is named with the reason.")
    p.add_argument("directory", metavar="DIR", help="the folder of record files (*.json)")
    p.add_argument("--jobs", type=int, metavar="N",
                   help="processes checking records (default: one per CPU)")

    p = add("search", cmd_search, "list games by player, game, result and finishing date, newest first")
    _filter_options(p)
    p.add_argument("--json", action="store_true", help="one JSON array of game summaries")
    p.add_argument("--limit", type=int, default=100, help="at most this many (default 100; 0: all)")

    p = add("html", cmd_html, "write a static site: DIR/index.html and a page per game with the "
                              "board at every ply (hidden information never shown)")
    p.add_argument("directory", metavar="DIR", help="the folder to write the site into")
    p.add_argument("--language", choices=LANGUAGES,
                   help="the pages' language (default: the server's, [server] language)")
    _filter_options(p)

    p = sub.add_parser("standings", help="games, wins, losses, draws and Elo rating per player",
                       description="Standings per game: games, wins, losses, draws and rating.",
                       epilog=STANDINGS_HELP)
    p.add_argument("-c", "--config", help=CONFIG_HELP)
    p.add_argument("--game", metavar="NAME", help="only this game (default: every game, separately)")
    p.add_argument("--json", action="store_true", help="the standings as JSON")
    p.set_defaults(func=_guarded(cmd_standings))


__all__ = ["register_all"]
