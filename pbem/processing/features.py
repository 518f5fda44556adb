"""Imports every feature module so that its commands and hooks are registered.

Feature modules register command words (``pbem.commands.register_verb``), handlers
(``pbem.processing.handlers.register_handler``) and hooks (``pbem.processing.hooks``) at import time.
"""

from __future__ import annotations

import importlib

FEATURE_MODULES: tuple[str, ...] = (
    "pbem.processing.invitations",
    "pbem.processing.talk",
    "pbem.processing.settings",
    "pbem.processing.languages",
    "pbem.processing.mail_names",
    "pbem.community.moderator_commands",
    "pbem.community.observer_commands",
    "pbem.community.archive_commands",
    "pbem.community.deadline_commands",
    "pbem.community.bounces",  # after deadline_commands: its GAME_SAVED hook stops a started clock
    "pbem.community.agreements",
    "pbem.community.queued_moves",
    "pbem.community.preview",
    "pbem.community.challenges",
    "pbem.community.addresses",
    "pbem.players.notes",
    "pbem.players.automove",  # after queued_moves: its MOVE_APPLIED hook plays after a queued reply
    "pbem.players.blocking",
    "pbem.tournaments.commands",
    "pbem.tournaments.moderating",
    "pbem.tournaments.steps",
)

for _name in FEATURE_MODULES:
    importlib.import_module(_name)
