"""``pbem deliver``: one mail from an MTA's pipe into the store, then a wake-up for the running server.

The MTA starts this once per mail, so its cost is paid per move: ``pbem deliver`` takes a way of its
own through ``pbem.cli.main`` and imports only what storing a mail needs (the configuration without
its schema validator, the store, the wake socket): no games, no templates, no mail reader. A test
(tests/transport/test_deliver_imports.py) holds it to that.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pbem.cli.common import CONFIG_HELP, load_cli_config, open_configured_store
from pbem.config import ConfigError

HELP = "store one message from standard input (for an MTA pipe); exit 0 stored, 75 try later"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-f", "--sender", metavar="SENDER",
                        help="the envelope sender (Postfix pipe: -f ${sender}); '' or <> for a "
                             "bounce; default: the message's Return-Path")


def cmd_deliver(args: argparse.Namespace, extra: list[str]) -> int:
    from pbem.doors.deliver import EX_TEMPFAIL, deliver, read_message

    try:
        # The schema is not checked here (it costs more than storing the mail): what deliver uses
        # still fails when unusable, and `pbem serve` refuses a file the schema refuses.
        config = load_cli_config(getattr(args, "config", None), check=False)
    except ConfigError as exc:
        print(f"pbem deliver: {exc}", file=sys.stderr)
        return EX_TEMPFAIL
    raw = read_message(sys.stdin.buffer, config.max_message_bytes)
    clock = None
    if config.clock != "system":  # only a demo server's clock costs an import here
        from pbem.clocks.movable import configured_clock

        clock = configured_clock(config)
    return deliver(config, raw, lambda: open_configured_store(config, create=True),
                   envelope_from=args.sender, clock=clock)


def main(argv: Sequence[str]) -> int:
    """``pbem deliver ARGS`` without building the parser of every other command."""
    parser = argparse.ArgumentParser(prog="pbem deliver", description=HELP)
    parser.add_argument("-c", "--config", help=CONFIG_HELP)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return cmd_deliver(args, [])
    except KeyboardInterrupt:
        return 130


__all__ = ["HELP", "add_arguments", "cmd_deliver", "main"]
