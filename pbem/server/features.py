"""Imports every feature module so that its commands and hooks are registered.

Feature modules register command words (``pbem.commands.register_verb``), handlers
(``pbem.server.handlers.register_handler``) and hooks (``pbem.server.hooks``) at import time.
"""

from __future__ import annotations

import importlib

FEATURE_MODULES: tuple[str, ...] = (
    "pbem.server.cmd_moderation",
    "pbem.server.cmd_observe",
    "pbem.server.cmd_archive",
    "pbem.server.cmd_time",
)

for _name in FEATURE_MODULES:
    importlib.import_module(_name)
