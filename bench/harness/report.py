"""Report helpers every benchmark shares: where the numbers were taken, and how they are summarised.

Each script keeps its own printed format (the README quotes them); what they share is reading the
machine, the checkout and the load, and the statistics, so that two scripts never compute a
"p95" or name a CPU in two ways by accident.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def say(text: str) -> None:
    """Progress goes to stderr, so stdout holds only the report (or the JSON)."""
    print(text, file=sys.stderr, flush=True)


def cpu_model(default: str) -> str:
    """The CPU's model name: numbers from different machines are not comparable."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return default


def commit() -> str:
    """The checkout measured: HEAD, with ``+changes`` when the work tree differs from it."""
    try:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"
    return (head or "?") + ("+changes" if dirty else "")


def loadavg() -> str:
    """1/5/15-minute load averages: other work on the machine skews every number here."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


@contextlib.contextmanager
def workdir(prefix: str, keep: bool) -> Iterator[Path]:
    """A temporary directory for servers, stores and logs; removed afterwards, also after an error or
    Ctrl-C, unless ``keep`` asks to look at it."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        if keep:
            say(f"kept {path}")
        else:
            shutil.rmtree(path, ignore_errors=True)


# --- statistics ----------------------------------------------------------------------------------------

def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def summary(values: list[float]) -> dict[str, float]:
    """The latency summary the mail report tabulates; NaN where there are no values, so a stage the
    benchmark could not see shows as such instead of as zero."""
    return {"n": len(values), "mean": statistics.fmean(values) if values else math.nan,
            "p50": percentile(values, 50), "p90": percentile(values, 90),
            "p99": percentile(values, 99), "max": max(values) if values else math.nan}


def rounded(values: dict[str, float], digits: int = 4) -> dict[str, float]:
    """``values`` with the floats rounded, for the JSON and the tables (counts stay as they are)."""
    return {k: round(v, digits) if isinstance(v, float) else v for k, v in values.items()}


def median_p95_ms(samples: list[float]) -> tuple[float, float]:
    """Median and p95 of per-call seconds, in milliseconds, as the engine benchmarks have always
    reported them (p95: the sample at index ``int(0.95 n)`` of the sorted list)."""
    ordered = sorted(samples)
    return statistics.median(ordered) * 1000, ordered[int(len(ordered) * 0.95)] * 1000


def games_per_second(play: Callable[[int], int], first_seed: int, seconds: float = 5.0
                     ) -> dict[str, float]:
    """Complete random games, one seed after another, for ``seconds``: ``play(seed)`` returns the
    number of moves the game took."""
    start = time.perf_counter()
    games = plies = 0
    while time.perf_counter() - start < seconds:
        plies += play(first_seed + games)
        games += 1
    elapsed = time.perf_counter() - start
    return {"games_per_s": games / elapsed, "games": games, "mean_plies": plies / games}


def own_cpu() -> float:
    """CPU seconds of the benchmark's own process, to tell a slow server from a busy load generator."""
    times = os.times()
    return times.user + times.system


def wait_quiet(below: float, most: float) -> tuple[float, str]:
    """Wait until the one-minute load average is under ``below`` (other jobs and the run's own set-up
    have settled), at most ``most`` seconds. Returns the seconds waited and the load averages then,
    to be printed with the numbers whatever they were."""
    started = time.monotonic()
    while time.monotonic() - started < most:
        try:
            if float(Path("/proc/loadavg").read_text().split()[0]) < below:
                break
        except (OSError, ValueError, IndexError):
            break
        time.sleep(1.0)
    return round(time.monotonic() - started, 1), loadavg()
