"""A CPU share of its own for each worker: one cgroup per worker, as if it ran on a small machine.

On a machine of two cores, two or four workers, the database and the load generator share the same
cores, so adding a worker cannot add throughput and the scaling benchmark could not tell whether the
workers get in each other's way. With each worker's whole process tree (``pbem serve``, its
processor process and anything they start) in a cgroup with a CPU quota, N workers have N small
"machines" between them while PostgreSQL, the load and the relay sink run outside every quota. The
same groups count the CPU their processes used (``cpuacct.usage`` / ``cpu.stat``), to the
nanosecond and including processes that ended meanwhile, which ``/proc/PID/stat`` cannot.

Both kernels' interfaces: cgroup v1 (``cpu.cfs_quota_us`` in the ``cpu`` hierarchy, usage in the
``cpuacct`` one, mounted together or apart) and v2 (``cpu.max``, ``cpu.stat``) when
``/sys/fs/cgroup`` is unified. Groups are named ``pbem-bench-<pid>-<label>``; a run removes its
own at the end (also after an error or Ctrl-C) and, at start, those of runs whose process is gone.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

PERIOD_US = 100_000  # the kernel's default CFS period: the quota is a share of each 100 ms
PREFIX = "pbem-bench-"


class CgroupUnavailable(Exception):
    """Why no CPU cgroup can be made here, in one line."""


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, type, options) of every cgroup file system."""
    found = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mounts").read_text().splitlines():
            parts = line.split()
            if len(parts) >= 4 and parts[2] in ("cgroup", "cgroup2"):
                found.append((parts[1].replace("\\040", " "), parts[2], set(parts[3].split(","))))
    return found


def _write(path: Path, text: str) -> None:
    with path.open("w") as f:
        f.write(text)


@dataclass
class Group:
    """One cgroup: in v1 a directory in the ``cpu`` hierarchy and one in ``cpuacct`` (the same
    directory when they are mounted together); in v2 one directory."""

    name: str
    version: int
    dirs: list[Path]  # every directory a process joins (v1: cpu, cpuacct; v2: one)
    _usage_at: float = 0.0
    removed: bool = field(default=False)

    @property
    def procs_files(self) -> list[Path]:
        """The ``cgroup.procs`` files a process writes its pid to, to join (children follow)."""
        return [d / "cgroup.procs" for d in self.dirs]

    def add(self, pid: int) -> None:
        for procs in self.procs_files:
            _write(procs, str(pid))

    def pids(self) -> list[int]:
        with contextlib.suppress(OSError):
            return [int(p) for p in self.procs_files[0].read_text().split()]
        return []

    def set_quota(self, cpus: float | None) -> None:
        """``cpus`` of CPU time per wall second (0.15: 15 ms in every 100 ms); None: no limit."""
        if self.version == 2:
            _write(self.dirs[0] / "cpu.max",
                   f"{round(cpus * PERIOD_US)} {PERIOD_US}" if cpus else f"max {PERIOD_US}")
        else:
            cpu = self.dirs[0]
            _write(cpu / "cpu.cfs_period_us", str(PERIOD_US))
            _write(cpu / "cpu.cfs_quota_us", str(round(cpus * PERIOD_US)) if cpus else "-1")

    def usage(self) -> float:
        """CPU seconds every process of the group used since it was made."""
        if self.version == 2:
            text = (self.dirs[0] / "cpu.stat").read_text()
            match = re.search(r"^usage_usec (\d+)", text, re.MULTILINE)
            return int(match.group(1)) / 1e6 if match else 0.0
        return int((self.dirs[-1] / "cpuacct.usage").read_text()) / 1e9

    def throttled(self) -> tuple[int, int]:
        """(CFS periods so far, periods in which the group ran out of its quota)."""
        text = (self.dirs[0] / "cpu.stat").read_text()
        values = dict(line.split() for line in text.splitlines() if line.count(" ") == 1)
        return int(values.get("nr_periods", 0)), int(values.get("nr_throttled", 0))

    def remove(self, timeout: float = 10.0) -> None:
        """Move whatever still runs in the group to the parent, then remove the directories."""
        if self.removed:
            return
        deadline = time.monotonic() + timeout
        for d in reversed(self.dirs):
            if not d.exists():
                continue
            while True:
                for pid in _read_pids(d):
                    with contextlib.suppress(OSError):
                        _write(d.parent / "cgroup.procs", str(pid))
                try:
                    d.rmdir()
                    break
                except OSError:  # EBUSY: a process was just forking into it
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
        self.removed = True


def _read_pids(d: Path) -> list[int]:
    with contextlib.suppress(OSError):
        return [int(p) for p in (d / "cgroup.procs").read_text().split()]
    return []


class Cgroups:
    """Makes the groups of one run; ``Cgroups.detect()`` raises ``CgroupUnavailable`` with the
    reason when the machine offers none (no cgroup file system, not root, no cpu controller)."""

    def __init__(self, version: int, roots: list[Path]) -> None:
        self.version = version
        self.roots = roots  # v1: [cpu hierarchy, cpuacct hierarchy] (one when mounted together)
        self.groups: list[Group] = []

    @classmethod
    def detect(cls) -> Cgroups:
        mounts = _mounts()
        v1_cpu = next((m for m, kind, opts in mounts if kind == "cgroup" and "cpu" in opts), None)
        v1_acct = next((m for m, kind, opts in mounts if kind == "cgroup" and "cpuacct" in opts), None)
        unified = next((m for m, kind, _ in mounts if kind == "cgroup2" and m == "/sys/fs/cgroup"), None)
        if v1_cpu and v1_acct:
            roots = [Path(v1_cpu)] if v1_cpu == v1_acct else [Path(v1_cpu), Path(v1_acct)]
            self = cls(1, roots)
        elif unified:
            root = Path(unified)
            controllers = (root / "cgroup.controllers").read_text().split()
            if "cpu" not in controllers:
                raise CgroupUnavailable(f"the unified cgroup hierarchy at {root} offers no cpu "
                                        "controller (cgroup.controllers: "
                                        f"{' '.join(controllers) or 'none'})")
            if "cpu" not in (root / "cgroup.subtree_control").read_text().split():
                try:
                    _write(root / "cgroup.subtree_control", "+cpu")
                except OSError as exc:
                    raise CgroupUnavailable(f"cannot enable the cpu controller in {root} "
                                            f"({exc.strerror})") from None
            self = cls(2, [root])
        else:
            raise CgroupUnavailable("no cgroup file system with a cpu controller is mounted "
                                    "(neither v1 cpu and cpuacct nor a unified /sys/fs/cgroup)")
        for root in self.roots:
            if not os.access(root, os.W_OK):
                raise CgroupUnavailable(f"{root} is not writable: creating cgroups needs root")
        self.remove_stale()
        probe = self.create("probe")  # make sure a group can be made and limited before the run
        try:
            probe.set_quota(0.5)
        except OSError as exc:
            raise CgroupUnavailable(f"cannot set a CPU quota in {probe.dirs[0]} ({exc.strerror})") from None
        finally:
            self.remove(probe)
        return self

    def create(self, label: str) -> Group:
        name = f"{PREFIX}{os.getpid()}-{label}"
        dirs = [root / name for root in self.roots]
        made: list[Path] = []
        try:
            for d in dirs:
                d.mkdir()
                made.append(d)
        except OSError as exc:
            for d in made:
                with contextlib.suppress(OSError):
                    d.rmdir()
            raise CgroupUnavailable(f"cannot create {dirs[len(made)]} ({exc.strerror})") from None
        group = Group(name, self.version, dirs)
        self.groups.append(group)
        return group

    def remove(self, group: Group) -> None:
        group.remove()
        if group in self.groups:
            self.groups.remove(group)

    def remove_all(self) -> None:
        for group in list(self.groups):
            with contextlib.suppress(OSError):
                self.remove(group)

    def remove_stale(self) -> None:
        """Groups an earlier run left behind (its process was killed before it could clean up)."""
        for root in self.roots:
            for d in root.glob(PREFIX + "*"):
                match = re.match(re.escape(PREFIX) + r"(\d+)-", d.name)
                if match and not Path(f"/proc/{match.group(1)}").exists():
                    with contextlib.suppress(OSError):
                        Group(d.name, self.version, [d]).remove()


def join_command(group: Group, command: list[str]) -> list[str]:
    """``command`` started so that its process is in ``group`` before its first instruction (and so
    every process it forks): a shell writes its own pid to the group, then execs the command. (A
    pid written after ``Popen`` returns could miss a child forked meanwhile; ``preexec_fn`` is not
    safe in a process with threads, as the benchmark is.)"""
    script = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 70; shift; done; shift; exec "$@"'
    return ["sh", "-c", script, "sh", *map(str, group.procs_files), "--", *command]
