"""The ``pbem`` command: game records on the command line, and the mail server.

One module per command group: ``play`` (records: new, show, move, score, replay, selfplay),
``computer`` (selfplay --levels, analyse: the computer opponents),
``serve`` (serve, deliver, process, init, check-config), ``mailbox`` (send, mailbox: a player's mail
client for trying the server), ``archive`` (archive ..., standings), ``admin`` (moderators) and
``store`` (store copy: to another database) and ``status`` (the workers and the queues).

Exit codes: 0 success; 1 an illegal move (given, or found while replaying a record); 2 bad input
(usage, malformed record or configuration). User errors never print a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Only what every command needs is imported here: ``pbem deliver`` is started by the MTA once per
# mail and takes a short way (``pbem.cli.deliver``) that never loads the games or the mail stack.

# Each module has ``register_all(subparsers)``; the order is the order of ``pbem --help``. Modules
# load their heavy imports (the mail stack) only when one of their commands runs.
COMMAND_MODULES = ("pbem.cli.play", "pbem.cli.computer", "pbem.cli.serve", "pbem.cli.mailbox",
                   "pbem.cli.archive", "pbem.cli.admin", "pbem.cli.store", "pbem.cli.status")


def build_parser() -> argparse.ArgumentParser:
    from pbem.cli.common import game_help

    parser = argparse.ArgumentParser(
        prog="pbem", description="Play-by-email game server and game-record tools.",
        epilog=game_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version="pbem 0.1.0")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register_all(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["deliver"]:
        from pbem.cli.deliver import main as deliver_main

        return deliver_main(argv[1:])
    from engine import EngineError, ReplayError
    from engine.registry import UnknownGameError
    from pbem.cli.common import SetupError, UsageError
    from pbem.config import ConfigError
    from pbem.record import MissingRecordError, RecordError

    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and not getattr(args, "takes_options", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return int(args.func(args, extra) or 0)
    except ReplayError as exc:
        print(f"pbem: illegal move in record at ply {exc.ply} ({exc.move!r}): {exc.reason}"
              + (f" [rule: {exc.rule}]" if exc.rule else ""), file=sys.stderr)
        return 1
    except MissingRecordError as exc:
        print(f"pbem: no such file: {exc.source}", file=sys.stderr)
        return 2
    except RecordError as exc:
        print(f"pbem: malformed record {exc.source}:", file=sys.stderr)
        for error in exc.errors:
            print(f"  {error}", file=sys.stderr)
        return 2
    except (UsageError, SetupError, UnknownGameError, EngineError, ConfigError) as exc:
        print(f"pbem: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
