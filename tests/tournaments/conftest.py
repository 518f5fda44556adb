"""Tournament tests run on both stores (the ``backend`` fixture of the storage tests)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.store.conftest import Backend, backend, store  # noqa: F401  (the fixtures, both stores)
from tests.tournaments.club import Club


@pytest.fixture
def club(backend: Backend, tmp_path: Path) -> Iterator[Club]:  # noqa: F811
    made = Club(tmp_path, backend.target)
    try:
        yield made
    finally:
        made.close()
