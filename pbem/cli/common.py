"""What every ``pbem`` command group shares: the usage error, output, configuration, logging and the
store, so that each group module holds only its own commands."""

from __future__ import annotations

import argparse
import logging
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from pbem.config import Config, load_config

if TYPE_CHECKING:
    from tqdm import tqdm

    from pbem.store.base import Store


class UsageError(Exception):
    """Bad command-line input; exit 2 with the message."""


class SetupError(Exception):
    """The configuration names a folder or database that cannot be used; exit 2 with the message."""


def out(text: str = "") -> None:
    sys.stdout.write(text + ("\n" if not text.endswith("\n") else ""))


def load_cli_config(path: str | None, *, check: bool = True) -> Config:
    """``-c FILE``, else ./pbem.toml if present, else the built-in defaults."""
    return load_config(Path(path) if path else None, check=check)


def config_of(args: argparse.Namespace) -> Config:
    return load_cli_config(getattr(args, "config", None))


def setup_logging(config: Config) -> None:
    logging.basicConfig(level=getattr(logging, config.log_level, logging.INFO),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    # aiosmtpd logs every SMTP command at INFO; our one line per processed message says enough.
    if config.log_level != "DEBUG":
        logging.getLogger("mail.log").setLevel(logging.WARNING)
        # imapclient says "Connection closed" at every reconnection; the fault tracker says more
        logging.getLogger("imapclient").setLevel(logging.WARNING)


def setup_line(config: Config) -> str:
    """Which configuration and database a command reads: a wrong folder must not look like an empty
    server."""
    return f"Configuration: {_source(config)}; database: {_database(config)}"


def _source(config: Config) -> str:
    if config.source is None:
        return f"none (no pbem.toml in {Path.cwd()}; built-in defaults)"
    return str(config.source.resolve())


def _database(config: Config) -> str:
    """The database as messages show it: a SQLite file's full path, a PostgreSQL URI without password."""
    from pbem.store import database_name, sqlite_path

    try:
        path = sqlite_path(config.database_url)
    except ValueError:
        path = None
    return str(path.resolve()) if path is not None else database_name(config.database_url)


def open_configured_store(config: Config, *, create: bool = False) -> Store:
    """The configured database, its data folder (and a SQLite file's folder) created first when
    ``create`` (the server, and commands that fill a new database: ``import``, a copy's target).

    Every other command looks at, or changes, a server's database, which exists: run in the wrong
    folder, or without ``-c``, it would otherwise create an empty one and report "0 sent" as if the
    server were new. It refuses in one line instead, naming the configuration and the database.
    What can go wrong here is the setup, not the program: one line (``SetupError``), no traceback.
    """
    import sqlite3

    from pbem.store import StoreError, database_name, open_store, sqlite_path

    try:
        missing = not create and (path := sqlite_path(config.database_url)) is not None and not path.exists()
    except ValueError:
        missing = False  # a malformed URL: open_store below says what is wrong with it
    if missing and config.source is None:
        raise SetupError(f"no pbem.toml in {Path.cwd()} and no database at {_database(config)} (the "
                         "built-in defaults): pass -c with the server's pbem.toml, or run this in the "
                         "server's folder")
    if missing:
        raise SetupError(f"there is no database {_database(config)} (as {_source(config)} says): check its "
                         "[server] data_dir and database, or pass -c with the server's pbem.toml")
    try:
        config.data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SetupError(f"cannot create the data directory {config.data_dir}: "
                         f"{exc.strerror or exc}") from None
    try:
        path = sqlite_path(config.database_url)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        return open_store(config.database_url)
    except (OSError, ValueError, StoreError, sqlite3.Error) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise SetupError(f"cannot open the database {database_name(config.database_url)}: {reason}"
                         ) from None


def players_text(low: int, high: int) -> str:
    return f"{low} players" if low == high else f"{low}-{high} players"


def game_help() -> str:
    """The games and their options, wrapped to 78 columns (the epilog is printed as it is)."""
    # Here, not at the top: ``pbem deliver`` shares this module and must not load the games.
    from engine import get_game
    from engine.options import describe_options
    from engine.registry import available_games

    lines = []
    for name in available_games():
        game = get_game(name)
        lines.append(f"  {name} ({players_text(game.min_players, game.max_players)})")
        for usage, text in describe_options(game):
            lines += textwrap.wrap(f"--{usage}: {text}", 78, initial_indent=" " * 4,
                                   subsequent_indent=" " * 6, break_on_hyphens=False)
    return "games and their options:\n" + "\n".join(lines)


CONFIG_HELP = "pbem.toml (default: ./pbem.toml if present, else built-in defaults)"


def add_command(sub: argparse._SubParsersAction, name: str, func: Callable[..., int],
                help_text: str) -> argparse.ArgumentParser:
    """A subcommand that reads the configuration (``-c FILE``)."""
    parser = sub.add_parser(name, help=help_text, description=help_text)
    parser.add_argument("-c", "--config", help=CONFIG_HELP)
    parser.set_defaults(func=func)
    return parser


def progress_bar(label: str, total: int | None = None, stream: TextIO | None = None,
                 unit: str = " games") -> tqdm:
    """A tqdm bar for long runs, drawn only on a terminal: in pipes, cron mails and logs a bar is
    one carriage-return line per update, i.e. noise."""
    from tqdm import tqdm

    stream = stream if stream is not None else sys.stderr
    isatty = getattr(stream, "isatty", None)
    return tqdm(total=total or None, desc=label, file=stream, unit=unit, leave=True,
                mininterval=0.1, disable=not (isatty and isatty()), dynamic_ncols=True)
