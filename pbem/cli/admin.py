"""``pbem admin ...``: the moderator operations from the server's own machine.

Whoever can run this can read the store and the secret, so no token is asked for; ``--by`` (default:
the local user name) is what the game records show as the moderator. Each operation is one store
transaction; the mails it causes go into the outbox, which a running server sends (or ``pbem
process``).
"""

from __future__ import annotations

import argparse
import getpass
import sys
from collections.abc import Callable
from datetime import datetime, timedelta

from pbem.cli.common import CONFIG_HELP, load_cli_config, open_configured_store, setup_line
from pbem.cli.prune import add_prune
from pbem.clocks.movable import MOVABLE, ClockMoveError, configured_clock, move, parse_shift, read_offset
from pbem.community.addresses import move_by_moderator, rekey_by_moderator
from pbem.community.moderation import (
    Moderation,
    ModerationError,
    block,
    end,
    list_games,
    moderator_token,
    pause,
    replace,
    resend,
    resume,
    rollback,
    sections_text,
    set_deadline,
    show_game,
    unblock,
)
from pbem.community.scheduler import HEARTBEAT
from pbem.config import Config
from pbem.outbox.wake import notify
from pbem.processing.context import MailContext
from pbem.store.base import Store
from pbem.store.pruning import size_text

GAME_HELP = "the game's id, e.g. ac-12"


def _local_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry and no LOGNAME/USER (containers)
        return "admin"


def _config(args: argparse.Namespace) -> Config:
    return load_cli_config(args.config or args.admin_config)


def _run(args: argparse.Namespace, operation: Callable[[MailContext], None]) -> int:
    config = _config(args)
    store = open_configured_store(config)
    try:
        moderation = Moderation(config, store, configured_clock(config))
        headline, sections, queued = moderation.run(args.by, operation)
    except ModerationError as exc:
        print(f"pbem admin {args.admin_command}: {exc}", file=sys.stderr)
        return 1
    finally:
        store.close()
    sys.stdout.write(sections_text(sections, headline))
    if queued and notify(config.data_dir):
        print(f"{queued} mail(s) queued in the outbox; the running server sends them now.")
    elif queued:
        print(f"{queued} mail(s) queued in the outbox; no server is running here: they leave when "
              "`pbem serve` starts (or with `pbem process`).")
    return 0


def cmd_token(args: argparse.Namespace, extra: list[str]) -> int:
    from pbem.store.secret import server_secret

    config = _config(args)
    address = args.address.strip().lower()
    if address not in config.moderators:
        print(f"pbem admin token: {address} is not in [moderators] addresses of "
              f"{config.source or 'the configuration'}; its admin mails would be ignored",
              file=sys.stderr)
        return 1
    store = open_configured_store(config)
    try:
        token = moderator_token(server_secret(store, config.data_dir), address)
    finally:
        store.close()
    print(f"token {token}")
    print(f"(add this line to every admin mail from {address}; keep it secret)", file=sys.stderr)
    return 0


def _exactly(span: timedelta) -> str:
    """``3 d 0 h 1 min``: a shift as given, to the second."""
    seconds = round(span.total_seconds())
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    parts = [f"{n} {unit}" for n, unit in ((days, "d"), (hours, "h"), (minutes, "min"), (seconds, "s")) if n]
    return " ".join(parts) or "0 s"


def cmd_clock(args: argparse.Namespace, extra: list[str]) -> int:
    """Shows the server's time; with ``+2d``, moves a movable clock forward and wakes the server."""
    if extra:  # "-1d" reads as an option to argparse: said here, in the words of the command
        if args.shift is not None or len(extra) > 1 or not extra[0][1:2].isdigit():
            print(f"pbem admin clock: unrecognized arguments: {' '.join(extra)}", file=sys.stderr)
            return 2
        args.shift = extra[0]
    config = _config(args)
    clock = configured_clock(config)
    where = config.source or "the configuration"
    if args.shift is None:
        now = f"{clock.now():%a %Y-%m-%d %H:%M:%S} UTC"
        if config.clock != MOVABLE:
            print(f'clock: the system\'s ([server] clock = "system" in {where}): {now}')
        else:
            ahead = read_offset(config.data_dir)
            print(f"clock: movable, {_exactly(ahead)} ahead of the system clock: {now}")
        return 0
    if config.clock != MOVABLE:
        print(f'pbem admin clock: this server runs on the system clock ([server] clock = "system" in '
              f'{where}); only a server with clock = "movable" (for checks and demos) can be moved',
              file=sys.stderr)
        return 1
    try:
        shift = parse_shift(args.shift)
    except ClockMoveError as exc:
        print(f"pbem admin clock: {exc}", file=sys.stderr)
        return 2
    store = open_configured_store(config)
    try:  # a moved clock is no outage: the scheduler's heartbeat moves with it
        with store.transaction() as tx:
            beat = tx.get_meta(HEARTBEAT)
            if beat:
                tx.set_meta(HEARTBEAT, (datetime.fromisoformat(beat) + shift).isoformat())
    finally:
        store.close()
    ahead = move(config.data_dir, shift)
    print(f"clock moved forward by {_exactly(shift)}: it is now {clock.now():%a %Y-%m-%d %H:%M:%S} UTC "
          f"({_exactly(ahead)} ahead of the system clock)")
    if notify(config.data_dir):
        print("the running server was woken: what is due by then (deadlines, reminders) happens now")
    else:
        print("no server is running here: the next `pbem serve` starts at the new time")
    return 0


def status_text(store: Store, limit: int = 20) -> str:
    """What needs a look: mail the relay refused for good, intake by status, bouncing addresses."""
    counts = store.outbound_counts()
    lines = [f"Outbox: {counts.get('pending', 0)} waiting, {counts.get('sent', 0)} sent, "
             f"{counts.get('given_up', 0)} given up"]
    given_up = store.given_up_outbound(limit)
    if given_up:
        lines.append("Given up (refused for good by the relay; newest first):")
        for row in given_up:
            when = row.given_up_at.strftime("%Y-%m-%d %H:%M UTC") if row.given_up_at else "-"
            pruned = f"  (mail pruned on {row.pruned_at:%Y-%m-%d})" if row.pruned_at else ""
            lines.append(f"  {when}  {', '.join(row.recipients)}  {row.message_id}{pruned}")
            lines.append(f"    {(row.last_error or '').strip()[:200]}")
        if counts.get("given_up", 0) > len(given_up):
            lines.append(f"  ... and {counts['given_up'] - len(given_up)} more")
    inbound = store.inbound_counts()
    lines.append("Inbound: " + ", ".join(f"{n} {status}" for status, n in inbound.items()))
    last = store.mail_pruning().last()
    lines.append("Raw mail of finished messages: " + (
        "all kept (`pbem admin prune` drops old mail, keeping the rows)" if last is None else
        f"last pruned {last.at:%Y-%m-%d %H:%M} UTC, finished before {last.before:%Y-%m-%d %H:%M} UTC "
        f"({last.received:,} received, {last.sent:,} sent, {size_text(last.size)})"))
    bouncing = store.bouncing_addresses()
    lines.append(f"Addresses our mail bounces from: {len(bouncing) or 'none'}")
    for email, since, detail in bouncing:
        lines.append(f"  {email}  since {since.strftime('%Y-%m-%d %H:%M UTC')}  ({detail})")
    return "\n".join(lines) + "\n"


def cmd_status(args: argparse.Namespace, extra: list[str]) -> int:
    config = _config(args)
    store = open_configured_store(config)
    try:
        sys.stdout.write(setup_line(config) + "\n" + status_text(store, args.limit))
    finally:
        store.close()
    return 0


def _op(build: Callable[[argparse.Namespace], Callable[[MailContext], None]]):
    def command(args: argparse.Namespace, extra: list[str]) -> int:
        return _run(args, build(args))
    return command


def register_all(sub: argparse._SubParsersAction) -> None:
    admin = sub.add_parser(
        "admin", help="moderator operations (pause, rollback, replace a player, block, ...)",
        description="Moderator operations on the server's store. Every change is recorded in the game "
                    "record with --by and --why, and the players are told by mail.")
    admin.add_argument("-c", "--config", dest="admin_config", metavar="FILE", help=CONFIG_HELP)
    ops = admin.add_subparsers(dest="admin_command", metavar="OPERATION", required=True)

    def add(name: str, func, help_text: str, why: bool = True) -> argparse.ArgumentParser:
        parser = ops.add_parser(name, help=help_text, description=help_text)
        parser.add_argument("-c", "--config", help=CONFIG_HELP)
        parser.add_argument("--by", default=_local_user(),
                            help="who does it, as the game record shows it (default: %(default)s)")
        if why:
            parser.add_argument("--why", default="", help="the reason, told to the players and recorded")
        parser.set_defaults(func=func)
        return parser

    p = ops.add_parser("status", help="the outbox (waiting, sent, given up), intake by status and "
                                      "addresses marked bouncing",
                       description="What needs a moderator's look: mails the relay refused for good, "
                                   "messages by status, addresses our mail bounces from.")
    p.add_argument("-c", "--config", help=CONFIG_HELP)
    p.add_argument("--limit", type=int, default=20, help="given-up mails to list (default: %(default)s)")
    p.set_defaults(func=cmd_status)
    p = ops.add_parser("clock", help="show the server's time, or move a movable clock forward (+2d)",
                       description='Shows the time the server runs on. With [server] clock = "movable" '
                                   "(end-to-end checks and demos only), moves a running server's time "
                                   "forward: deadlines, reminders and banks running out happen by mail "
                                   "at once.")
    p.add_argument("-c", "--config", help=CONFIG_HELP)
    p.add_argument("shift", nargs="?", metavar="+TIME", help="how far forward: +2d, +36h, +1w, +1d12h, +90m")
    p.set_defaults(func=cmd_clock, takes_options=True)
    add_prune(ops)
    p = add("token", cmd_token, "print the token line a moderator's admin mails must carry", why=False)
    p.add_argument("address", help="the moderator's address, as in [moderators] addresses")
    p = add("list", _op(lambda a: lambda ctx: list_games(ctx, a.filters)),
            "list games; filters: a status, a game name, a player's address", why=False)
    p.add_argument("filters", nargs="*", metavar="FILTER",
                   help="a status, a game name or a player's address (all must match)")
    p = add("show", _op(lambda a: lambda ctx: show_game(ctx, a.game)),
            "everything about a game, hidden information included", why=False)
    p.add_argument("game", help=GAME_HELP)
    p = add("pause", _op(lambda a: lambda ctx: pause(ctx, a.game, by=a.by, why=a.why)),
            "stop a game's move clock")
    p.add_argument("game", help=GAME_HELP)
    p = add("resume", _op(lambda a: lambda ctx: resume(ctx, a.game, by=a.by, why=a.why)),
            "start a paused game's move clock again")
    p.add_argument("game", help=GAME_HELP)
    p = add("deadline", _op(lambda a: lambda ctx: set_deadline(ctx, a.game, a.when, by=a.by, why=a.why)),
            "set when the seat to move must have moved (UTC)")
    p.add_argument("game", help=GAME_HELP)
    p.add_argument("when", metavar="YYYY-MM-DD[THH:MM]", help="the new deadline, UTC")
    p = add("replace", _op(lambda a: lambda ctx: replace(ctx, a.game, a.seat, a.address, by=a.by,
                                                         why=a.why)),
            "give a seat to a new address (new token; old and new player told)")
    p.add_argument("game", help=GAME_HELP)
    p.add_argument("seat", help="the seat to give, e.g. white")
    p.add_argument("address", help="the new player's address")
    p = add("rollback", _op(lambda a: lambda ctx: rollback(ctx, a.game, a.n, by=a.by, why=a.why)),
            "take back the last N moves")
    p.add_argument("game", help=GAME_HELP)
    p.add_argument("n", type=int, metavar="N", help="how many moves to take back")
    p = add("end", _op(lambda a: lambda ctx: end(ctx, a.game, a.result, by=a.by, why=a.why)),
            "end a game: RESULT is the winning seat or draw")
    p.add_argument("game", help=GAME_HELP)
    p.add_argument("result", metavar="RESULT", help="the winning seat, or draw")
    p = add("resend", _op(lambda a: lambda ctx: resend(ctx, a.game, by=a.by, why=a.why)),
            "mail the current board (or the invitation) to everyone again")
    p.add_argument("game", help=GAME_HELP)
    p = add("block", _op(lambda a: lambda ctx: block(ctx, a.address, by=a.by, why=a.why)),
            "ignore all mail from an address, without reply")
    p.add_argument("address", help="the address to ignore")
    p = add("unblock", _op(lambda a: lambda ctx: unblock(ctx, a.address, by=a.by, why=a.why)),
            "read an address's mail again")
    p.add_argument("address", help="the address to read again")
    p = add("address", _op(lambda a: lambda ctx: move_by_moderator(ctx, a.old, a.new, by=a.by, why=a.why)),
            "move a player who lost their mailbox to a new address: every game (re-keyed), their "
            "settings and ratings; the new address is told")
    p.add_argument("old", help="the address the player can no longer read")
    p.add_argument("new", help="the player's new address")
    p = add("rekey", _op(lambda a: lambda ctx: rekey_by_moderator(ctx, a.game, a.seat, by=a.by, why=a.why)),
            "give a seat a new token (its old one is refused from now on); its player gets the game")
    p.add_argument("game", help=GAME_HELP)
    p.add_argument("seat", help="the seat, e.g. white")


__all__ = ["register_all"]
