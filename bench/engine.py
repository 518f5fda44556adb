"""Engine benchmarks for both games, with the machine and date, as reported in the README.

    .venv/bin/python bench/engine.py

Goals on a 2-core machine: Alien City legal builds <= 0.5 ms, the full listing with `ending` marks
<= 5 ms, >= 50 random complete games/s; Space Truckin' legal placements <= 2 ms, >= 20 random complete
2-player games/s.
"""

from __future__ import annotations

import os
import platform
import sys
from datetime import UTC, datetime
from pathlib import Path

if not __package__:  # run as a script: see bench/__init__.py
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import engine_alien_city, engine_space_truckin
from bench.harness.report import cpu_model


def machine() -> str:
    """Engine speed is CPU-bound: cores, CPU and Python are what the numbers depend on."""
    return (f"{os.cpu_count()} cores, {cpu_model('unknown CPU')}, Python {platform.python_version()}, "
            f"{datetime.now(UTC):%Y-%m-%d}")


def main() -> int:
    """Both games in one run, as ``make bench`` wants them; exit status 1 when either misses a goal."""
    print(f"Machine: {machine()}\n")
    print("## Alien City")
    ac = engine_alien_city.main()
    print("\n## Space Truckin'")
    st = engine_space_truckin.main()
    return 1 if (ac or st) else 0


if __name__ == "__main__":
    sys.exit(main())
