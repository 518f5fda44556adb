"""Fixtures of the deploy tests: pbem installed by deploy/install.sh for each door, once per test
session (see installed.py). The checkout is built into a wheel once per session and each door's
installation installs that wheel (``--source WHEEL``); tests/deploy/test_install.py runs install.sh
once more from the checkout itself, as the README says to. Everything here runs as root (a system
user is created, Postfix's master starts its services as their users): otherwise the tests skip,
or fail under CI=true.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.deploy.installed import Installation, build_wheel, run_install
from tests.services.requirements import missing


def require_root() -> None:
    if os.geteuid() != 0:
        missing("the deploy tests create a system user and run Postfix, as root (make test in CI)")
    if shutil.which("runuser") is None:
        missing("runuser (util-linux) is needed to run commands as the service user")


@pytest.fixture(scope="session")
def pbem_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout built into a wheel, once per test run: the test processes of one run (xdist)
    share the folder above their own temporary folders, and the first one builds."""
    require_root()
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    return build_wheel(base / "pbem-wheel")


def installation(door: str, wheel: Path) -> Iterator[Installation]:
    root = Path(tempfile.mkdtemp(prefix=f"pbem-deploy-{door}-", dir="/tmp"))
    root.chmod(0o755)  # as / is: the service user passes through to its folders
    try:
        result = run_install(root, door, source=wheel)
        assert result.returncode == 0, f"install.sh failed:\n{result.stdout}\n{result.stderr}"
        yield Installation.of(root, door, result.stdout)
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def pipe_installation(pbem_wheel: Path) -> Iterator[Installation]:
    """pbem installed by deploy/install.sh --door pipe, once per test session."""
    yield from installation("pipe", pbem_wheel)


@pytest.fixture(scope="session")
def dovecot_installation(pbem_wheel: Path) -> Iterator[Installation]:
    """pbem installed by deploy/install.sh --door dovecot, once per test session."""
    yield from installation("dovecot", pbem_wheel)
