"""``pbem serve`` workers as an operator runs them (one process each, its processor a child of it), and
the CPU every process of a run used, read from ``/proc``.

The mail benchmarks run one daemon inside a recording harness (``bench.harness.daemon``); the scaling
benchmark needs several independent workers on one database, so it starts the real command, and
measures from outside: what each process spent, the database server's processes included.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.harness.cgroups import Group, join_command
from bench.harness.report import REPO

_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of one process (0 once it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def switches(pid: int) -> int:
    """Context switches (voluntary and not) of every thread of one process so far: how often it
    was woken or put aside (0 once it is gone)."""
    total = 0
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return 0
    for task in tasks:
        try:
            text = (task / "status").read_text()
        except OSError:
            continue
        for line in text.splitlines():
            if "ctxt_switches:" in line:
                total += int(line.split()[-1])
    return total


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat[stat.rindex(")") + 2:].split()[1]) == pid:
            found.append(int(entry.name))
    return found


@dataclass
class CpuMeter:
    """CPU seconds per named group of processes between ``start()`` and ``stop()``. A group is a
    function giving its pids now; processes that appear meanwhile count in full."""

    groups: dict[str, object] = field(default_factory=dict)
    _before: dict[int, float] = field(default_factory=dict)
    result: dict[str, float] = field(default_factory=dict)

    def start(self) -> None:
        self._before = {pid: cpu_seconds(pid) for pids in self._pids().values() for pid in pids}

    def _pids(self) -> dict[str, list[int]]:
        return {name: list(get()) for name, get in self.groups.items()}  # type: ignore[operator]

    def stop(self) -> dict[str, float]:
        self.result = {name: round(sum(cpu_seconds(pid) - self._before.get(pid, 0.0) for pid in pids), 3)
                       for name, pids in self._pids().items()}
        return self.result


class Worker:
    """``pbem serve -c CONFIG`` in a process of its own; its log is a file beside the config. With a
    ``group`` (``bench.harness.cgroups``) the process, and so every process it starts, runs in it;
    ``code`` is the checkout whose pbem it runs (another one: to compare two versions)."""

    def __init__(self, name: str, config: Path, group: Group | None = None, code: Path = REPO) -> None:
        self.name = name
        self.config = config
        self.group = group
        self.log = config.with_suffix(".log")
        command = [sys.executable, "-m", "pbem.cli", "serve", "-c", str(config)]
        with self.log.open("ab") as log:
            # In the checkout's folder: ``python -m`` puts the working folder first on the path.
            self.process = subprocess.Popen(join_command(group, command) if group else command,
                                            env={**os.environ, "PYTHONPATH": str(code)}, cwd=code,
                                            stdout=log, stderr=log)

    def wait_listening(self, port: int, timeout: float = 60.0) -> None:
        from tests.services.requirements import wait_for_port

        if not wait_for_port("127.0.0.1", port, timeout, alive=lambda: self.process.poll() is None):
            raise RuntimeError(f"worker {self.name} did not start; log:\n{self.tail()}")

    def pids(self) -> list[int]:
        return [self.process.pid, *children(self.process.pid)] if self.process.poll() is None else []

    def processor_pid(self) -> int | None:
        found = children(self.process.pid)
        return found[0] if found else None

    def processor_pids(self) -> list[int]:
        """Every processor process (on SQLite ``pbem serve`` runs one per share of the games)."""
        return children(self.process.pid) if self.process.poll() is None else []

    def tail(self, lines: int = 20) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        return "(no log)"

    def problems(self) -> list[str]:
        with contextlib.suppress(OSError):
            return [line for line in self.log.read_text(errors="replace").splitlines()
                    if " ERROR " in line or "Traceback" in line]
        return []

    def stop(self) -> None:
        stop_process(self.process, signal.SIGTERM)


def stop_process(process: subprocess.Popen[bytes], sig: int, timeout: float = 30) -> None:
    """Ask with ``sig``; kill it if it has not ended within ``timeout`` seconds."""
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def worker_config(path: Path, *, database: str, port: int, relay: tuple[str, int], data_dir: Path,
                  log_level: str = "INFO", processors: int | None = None) -> Path:
    """``processors``: the ``[server] processors`` setting, written only when given (a checkout from
    before it would refuse the setting)."""
    path.write_text(f'[server]\ndata_dir = "{data_dir}"\ndatabase = "{database}"\nlog_level = "{log_level}"\n'
                    + (f"processors = {processors}\n" if processors else "")
                    + f'[smtp]\nenabled = true\nport = {port}\n'
                    f'[relay]\nhost = "{relay[0]}"\nport = {relay[1]}\nsecurity = "none"\n')
    return path


def postgres_pids(postgres: object) -> list[int]:
    """The postmaster of a ``tests.services.postgres.Postgres`` and every process it forked."""
    pidfile = Path(postgres.data) / "postmaster.pid"  # type: ignore[attr-defined]
    try:
        master = int(pidfile.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return []
    return [master, *children(master)]


def wait_for(predicate: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.05)
