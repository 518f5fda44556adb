"""``set KEY VALUE`` and ``settings``: what a player chooses about the mail they get.

Each setting is registered here with its help and its check, so ``help settings``, ``settings`` and
``set`` list the same keys; feature modules add theirs (e.g. the timezone) with ``register_setting``.
Settings belong to the address, not to a game. A change needs a token given to that address (any
reply to one of the server's mails carries one), because a forged ``set notify digest`` could make a
player miss a deadline; a ``set`` without one is answered with a one-tap confirmation, sent to the
address itself.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pbem.commands.helptext import HELP_TOPICS
from pbem.commands.parsing import Command
from pbem.i18n import N_, _, language_of, speaking
from pbem.outbox.compose import Action, ActionGroup, Section
from pbem.processing import hooks
from pbem.processing.context import MailContext
from pbem.processing.games import CommandFailed, address_proven
from pbem.processing.handlers import register_handler
from pbem.processing.preferences import (
    DEFAULT_MAIL,
    DEFAULT_NOTIFY,
    MAIL_FORMATS,
    NICKNAME_MAX,
    NOTIFY_LEVELS,
)

_NICKNAME = re.compile(rf"^[\w][\w .'-]{{0,{NICKNAME_MAX - 1}}}$")


@dataclass(frozen=True)
class Setting:
    key: str
    usage: str  # "set notify every|turn|digest"
    help: str  # English, marked with N_: translated when shown
    # (ctx, value) -> the value to store (None removes it); raises CommandFailed with the right form
    apply: Callable[[MailContext, str], Any]
    show: Callable[[Any], str] = str
    default: str = "-"
    # For a setting that is an action rather than a stored value (``set address``): called with the
    # checked value once the address is proven, instead of storing it.
    act: Callable[[MailContext, Any], None] | None = None


SETTINGS: dict[str, Setting] = {}


def register_setting(setting: Setting) -> None:
    SETTINGS[setting.key] = setting


def _notify(ctx: MailContext, value: str) -> str:
    level = value.lower()
    if level not in NOTIFY_LEVELS:
        raise CommandFailed(_("notify takes {choices}, not {value!r}.").format(
            choices=", ".join(NOTIFY_LEVELS), value=value))
    return level


def _mail(ctx: MailContext, value: str) -> str:
    kind = value.lower()
    if kind not in MAIL_FORMATS:
        raise CommandFailed(_("mail takes {choices}, not {value!r}.").format(
            choices=", ".join(MAIL_FORMATS), value=value))
    return kind


def _nickname(ctx: MailContext, value: str) -> str | None:
    name = " ".join(value.split())
    if name.lower() in ("none", "-", "off"):
        return None
    if "@" in name or not _NICKNAME.match(name):
        raise CommandFailed(_("a nickname is 1 to {most} letters, digits, spaces or .'-_, without @ "
                              "(it is shown in public): e.g. set nickname Ann B.").format(most=NICKNAME_MAX))
    owner = ctx.tx.nickname_owner(name)
    if owner is not None and owner != ctx.mail.from_addr:
        raise CommandFailed(_("the nickname {name!r} is taken; choose another.").format(name=name))
    return name


register_setting(Setting("notify", "set notify every|turn|digest", N_("which mails you get."), _notify,
                         default=DEFAULT_NOTIFY))
register_setting(Setting("mail", "set mail text|html|tap", N_("how mails look."), _mail,
                         default=DEFAULT_MAIL))
register_setting(Setting("nickname", "set nickname NAME|none", N_(
    "your public name: shown to other players and on the archive site instead of your address"),
    _nickname, default=N_("none (your address is never shown in public)")))
_CHOICES = {"notify": NOTIFY_LEVELS, "mail": MAIL_FORMATS}  # each value explained in the help


def settings_help() -> str:
    lines = [_("Settings (send 'set KEY VALUE'; 'settings' shows yours):"), ""]
    for setting in SETTINGS.values():
        lines.append(f"  {setting.usage}")
        choices = _CHOICES.get(setting.key, {})
        text = " ".join([_(setting.help), *(f"{k}: {_(v)}." for k, v in choices.items())])
        lines += textwrap.wrap(text, 74, initial_indent="      ", subsequent_indent="      ")
    return "\n".join(lines)


def do_set(ctx: MailContext, command: Command) -> None:
    key, value = command.args["key"], command.args["value"].strip()
    setting = SETTINGS.get(key)
    if setting is None:
        raise CommandFailed(_("there is no setting {key!r}. Settings: {keys} (send 'help settings')."
                              ).format(key=key, keys=", ".join(SETTINGS)))
    stored = setting.apply(ctx, value)
    if not address_proven(ctx, command):
        line = f"set {key} {value}"
        ctx.reply(Section(lines=[
            _("Settings change what this address receives, so I ask first: reply to this mail with "
              "the line below (or tap it). Nothing has changed yet."), f"  {line}"],
            actions=[ActionGroup("", [Action(_("Confirm"), line)])]),
            headline=_("Confirm: {line}").format(line=line))
        return
    if setting.act is not None:
        setting.act(ctx, stored)
        return
    settings = dict(ctx.tx.get_player(ctx.mail.from_addr))
    if stored is None:
        settings.pop(key, None)
    else:
        settings[key] = stored
    ctx.tx.set_player(ctx.mail.from_addr, settings)
    with speaking(language_of(settings, ctx.config.language)):  # ``set language``: in the new one
        shown = setting.show(stored) if stored is not None else _(setting.default)
        ctx.reply(Section(pre=_listing(settings)), headline=_("Done: {key} is now {value}").format(
            key=key, value=shown))
        _more(ctx)


def do_settings(ctx: MailContext, command: Command) -> None:
    ctx.reply(Section(pre=_listing(ctx.tx.get_player(ctx.mail.from_addr))),
              headline=_("Your settings ({address})").format(address=ctx.mail.from_addr))
    _more(ctx)


def _more(ctx: MailContext) -> None:
    """What feature modules add to the settings (the vacation allowance left, ...)."""
    lines = [line for hook in hooks.SETTINGS_SHOWN for line in hook(ctx)]
    if lines:
        ctx.reply(Section(lines=lines))


def _listing(settings: dict[str, Any]) -> str:
    width = max(map(len, SETTINGS))
    def shown(key: str) -> str:
        return SETTINGS[key].show(settings[key]) if key in settings else _(SETTINGS[key].default)
    return "\n".join(f"{key:<{width}}  {shown(key)}" for key in SETTINGS if SETTINGS[key].act is None
                     ) + "\n\n" + _(
        "Change one with: set KEY VALUE   (help settings explains each)")


HELP_TOPICS["settings"] = settings_help
register_handler("set", do_set)
register_handler("settings", do_settings)
