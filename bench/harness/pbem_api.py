"""Every name the benchmarks take from ``pbem``, and the module each comes from.

One table, so that moving a ``pbem`` module means editing one line here. The names are imported on
first use (PEP 562), not all at once: each benchmark process, and every process the daemon and the
archive import fork from it, then holds exactly the ``pbem`` modules it held before the benchmarks
shared this table, so the numbers stay comparable with earlier runs.
"""

from __future__ import annotations

import importlib
from typing import Any

MODULE_OF: dict[str, str] = {
    # the daemon, as `pbem serve` builds it (bench.harness.daemon)
    "config_from_dict": "pbem.config",
    "Daemon": "pbem.daemon.runner",
    "Processor": "pbem.processing.processor",
    "open_store": "pbem.store",
    # players and stage split (bench.harness.players, bench.harness.stages)
    "new_mail": "pbem.cli.mailbox",
    "reply_to": "pbem.cli.mailbox",
    "normalise_message_id": "pbem.store.common",
    # the archive benchmark (bench/archive.py)
    "export_games": "pbem.archive.export",
    "default_jobs": "pbem.archive.importer",
    "import_archive": "pbem.archive.importer",
    "random_rows": "pbem.archive.sample",
    "make_filters": "pbem.archive.search",
    "search": "pbem.archive.search",
    "GameRow": "pbem.store.base",
    "Seat": "pbem.store.base",
    "Store": "pbem.store.base",
}


def __getattr__(name: str) -> Any:
    try:
        module = MODULE_OF[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
