"""What the long archive runs (export, import, the site) report their progress to.

A ``tqdm`` bar fits it; the CLI makes one (``pbem.cli.common.progress_bar``), drawn only on a
terminal. The archive itself never draws anything: tests and the mail commands pass None.
"""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    total: float | None

    def update(self, n: float = 1) -> object: ...


__all__ = ["Progress"]
