"""Mail commands for moderators (``admin ...``) and the block list's effect on incoming mail.

An ``admin`` command is carried out only when From is a configured moderator address and the mail
carries that address's moderator token (a ``token XXXX`` line; ``pbem admin token ADDRESS`` prints
it). Anything else is treated like a failed seat authentication: nothing happens and nobody gets a
reply, so the commands cannot be probed and a forged From cannot make the server write to anyone.
"""

from __future__ import annotations

from collections.abc import Callable

from pbem.commands.parsing import GAME_ID, Command, CommandError, register_verb
from pbem.community import addresses, moderation
from pbem.i18n import N_
from pbem.processing import hooks
from pbem.processing.context import MailContext
from pbem.processing.games import AuthFailed, CommandFailed, mail_tokens
from pbem.processing.handlers import register_handler
from pbem.reading.incoming import IncomingMail
from pbem.store.base import Tx

USAGE = N_("admin OPERATION ...   (moderators only: list, show, pause, rollback, ...)")
DETAILS = ("admin list [STATUS] [GAME-NAME] [ADDRESS] | admin show GAME | admin resend GAME [WHY] | "
           "admin pause|resume GAME [WHY] | admin deadline GAME YYYY-MM-DD[THH:MM] [WHY] | "
           "admin replace GAME SEAT ADDRESS [WHY] | admin rollback GAME N [WHY] | "
           "admin end GAME SEAT|draw [WHY] | admin block|unblock ADDRESS [WHY] | "
           "admin address OLD NEW [WHY] | admin rekey GAME SEAT [WHY]; add the line "
           "'token YOURMODERATORTOKEN'")

# operation -> the words it takes before the free-text reason ("GAME" is checked as a game id)
_SHAPES: dict[str, tuple[str, ...]] = {
    "show": ("GAME",), "pause": ("GAME",), "resume": ("GAME",), "resend": ("GAME",),
    "deadline": ("GAME", "WHEN"), "replace": ("GAME", "SEAT", "ADDRESS"), "rollback": ("GAME", "N"),
    "end": ("GAME", "RESULT"), "block": ("ADDRESS",), "unblock": ("ADDRESS",),
    "address": ("OLD", "NEW"), "rekey": ("GAME", "SEAT"),
}
_NO_REASON = {"show"}


def parse_admin(line: str, rest: list[str], in_game_reply: bool) -> Command | CommandError:
    if not rest:
        return CommandError(line, f"admin needs an operation: {DETAILS}")
    op = rest[0].lower()
    words = rest[1:]
    if op == "list":
        return Command("admin", line, args={"op": "list", "filters": [w.lower() for w in words]})
    shape = _SHAPES.get(op)
    if shape is None:
        return CommandError(line, f"unknown admin operation {rest[0]!r}: {DETAILS}")
    if len(words) < len(shape) or (op in _NO_REASON and len(words) > len(shape)):
        return CommandError(line, f"admin {op} takes {' '.join(shape)}"
                                  + ("" if op in _NO_REASON else " [WHY]"))
    args: dict[str, object] = {"op": op, "why": " ".join(words[len(shape):])}
    for name, word in zip(shape, words, strict=False):
        args[name.lower()] = word
    game = None
    if "GAME" in shape:
        if not GAME_ID.match(words[0]):
            return CommandError(line, f"admin {op}: {words[0]!r} is not a game id like ac-17")
        game = words[0].lower()
    if op == "rollback":
        if not words[1].isdigit() or int(words[1]) < 1:
            return CommandError(line, f"admin rollback: N is a number of moves, not {words[1]!r}")
        args["n"] = int(words[1])
    return Command("admin", line, game=game, args=args)


_OPERATIONS: dict[str, Callable[[MailContext, dict, str], None]] = {
    "list": lambda ctx, a, by: moderation.list_games(ctx, a["filters"]),
    "show": lambda ctx, a, by: moderation.show_game(ctx, a["game"]),
    "pause": lambda ctx, a, by: moderation.pause(ctx, a["game"], by=by, why=a["why"]),
    "resume": lambda ctx, a, by: moderation.resume(ctx, a["game"], by=by, why=a["why"]),
    "deadline": lambda ctx, a, by: moderation.set_deadline(ctx, a["game"], a["when"], by=by,
                                                           why=a["why"]),
    "replace": lambda ctx, a, by: moderation.replace(ctx, a["game"], a["seat"], a["address"], by=by,
                                                     why=a["why"]),
    "rollback": lambda ctx, a, by: moderation.rollback(ctx, a["game"], a["n"], by=by, why=a["why"]),
    "end": lambda ctx, a, by: moderation.end(ctx, a["game"], a["result"], by=by, why=a["why"]),
    "resend": lambda ctx, a, by: moderation.resend(ctx, a["game"], by=by, why=a["why"]),
    "block": lambda ctx, a, by: moderation.block(ctx, a["address"], by=by, why=a["why"]),
    "unblock": lambda ctx, a, by: moderation.unblock(ctx, a["address"], by=by, why=a["why"]),
    "address": lambda ctx, a, by: addresses.move_by_moderator(ctx, a["old"], a["new"], by=by, why=a["why"]),
    "rekey": lambda ctx, a, by: addresses.rekey_by_moderator(ctx, a["game"], a["seat"], by=by, why=a["why"]),
}


def do_admin(ctx: MailContext, command: Command) -> None:
    mail = ctx.mail
    if not moderation.is_moderator(ctx.config, ctx.secret, mail.from_addr, mail_tokens(ctx, command)):
        raise AuthFailed(command.game or "admin", None)
    try:
        _OPERATIONS[command.args["op"]](ctx, command.args, mail.from_addr)
    except moderation.ModerationError as exc:
        raise CommandFailed(str(exc)) from None
    ctx.outcomes.append(f"admin {command.args['op']}" + (f" {command.game}" if command.game else ""))


def blocked_sender(tx: Tx, mail: IncomingMail) -> str | None:
    if mail.from_addr and tx.is_blocked(mail.from_addr):
        return "blocked sender"
    return None


register_verb("admin", USAGE, parse_admin)
register_handler("admin", do_admin)
hooks.SENDER_CHECK.append(blocked_sender)
