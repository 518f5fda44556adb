"""Command line, run loop and markdown report of the mail benchmarks (``bench/mail.py``).

Each mail scenario is a module with a ``NAME`` (its ``--only`` choice and its key in the results), a
``TITLE``, ``run(args, workdir, cleanup)`` and ``table_row(result)``; this module runs them in order and
prints one report, so the two measurements keep the single format the README quotes.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import math
import os
import platform
import signal
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from bench.harness.report import commit, cpu_model, loadavg, say, workdir


class Scenario(Protocol):
    """A mail scenario module. ``run`` puts every server it starts on ``cleanup`` as soon as it is up,
    so an error or Ctrl-C stops them too; ``table_row`` is its line in the report's first table."""

    NAME: str
    TITLE: str

    def run(self, args: argparse.Namespace, workdir: Path, cleanup: list[Callable[[], None]]
            ) -> dict[str, Any]: ...

    def table_row(self, result: dict[str, Any]) -> str: ...


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """The options every mail scenario honours: how the daemon logs, how it is profiled, what is kept
    and how the results are judged and printed."""
    parser.add_argument("--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR"),
                        help="the daemon's log level (INFO, as pbem serve runs by default); the log "
                             "goes to a file in the temporary directory")
    parser.add_argument("--profile", metavar="DIR",
                        help="cProfile each daemon thread during the timed part; .pstats and .txt to DIR")
    parser.add_argument("--py-spy", metavar="DIR",
                        help="sample the daemon with py-spy (needs it in the venv) during the timed "
                             "part; collapsed stacks per thread to DIR/smtp.txt and DIR/imap.txt")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (logs, db)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a goal is missed")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")


def machine() -> dict[str, Any]:
    """What the numbers depend on besides the code: CPU, interpreter, SQLite, Dovecot, kernel, load."""
    dovecot = None
    with contextlib.suppress(Exception):
        from tests.services.dovecot import version

        dovecot = version()
    sqlite = sqlite3.sqlite_version
    return {"date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"), "nproc": os.cpu_count(),
            "cpu": cpu_model("?"), "python": platform.python_version(), "sqlite": sqlite,
            "dovecot": dovecot, "kernel": platform.release(), "loadavg_before": loadavg(),
            "commit": commit()}


def run(args: argparse.Namespace, scenarios: Sequence[Scenario]) -> int:
    """Run the scenarios ``--only`` selects and print the report; 1 for a missed goal with ``--check``,
    130 after Ctrl-C or SIGTERM (servers stopped, temporary files removed either way)."""
    # SIGTERM ends the run like Ctrl-C: through the finally below, which cleans up.
    signal.signal(signal.SIGTERM, lambda signum, frame: (_ for _ in ()).throw(KeyboardInterrupt()))
    results: dict[str, Any] = {"machine": machine()}
    with workdir("pbem-bench-mail-", args.keep) as work:
        cleanup: list[Callable[[], None]] = []
        try:
            for scenario in scenarios:
                if args.only in (None, scenario.NAME):
                    results[scenario.NAME] = scenario.run(args, work, cleanup)
        except KeyboardInterrupt:
            say("interrupted: servers stopped, temporary files removed")
            return 130
        except BaseException:
            _say_daemon_problems(work)
            raise
        finally:
            for undo in reversed(cleanup):
                with contextlib.suppress(Exception):
                    undo()
    results["machine"]["loadavg_after"] = loadavg()
    if args.json:
        print(json.dumps(results, indent=2, default=str))
    else:
        print(markdown(results, scenarios))
    met = all(part["goal_met"] for key, part in results.items() if key != "machine")
    return 0 if met or not args.check else 1


def _say_daemon_problems(work: Path) -> None:
    """After a failure, the daemons' warnings and errors: the log files go with the directory."""
    for log_file in sorted(work.glob("*-daemon.log")):
        problems = [line for line in log_file.read_text(errors="replace").splitlines()
                    if " ERROR " in line or " WARNING " in line or line.startswith(("Trace", "  "))]
        if problems:
            say(f"--- {log_file.name}: warnings and errors (last 30 lines) ---")
            say("\n".join(problems[-30:]))


def markdown(results: dict[str, Any], scenarios: Iterable[Scenario]) -> str:
    """One table row per scenario, then per scenario where its time went."""
    m = results["machine"]
    out = [f"## pbem mail benchmark, {m['date']}", "",
           f"Machine: {m['nproc']} CPUs ({m['cpu']}), Python {m['python']}, SQLite {m['sqlite']}, "
           f"Dovecot {m['dovecot'] or '-'}, Linux {m['kernel']}; checkout {m['commit']}; load average before "
           f"{m['loadavg_before']}, after {m.get('loadavg_after', '?')} (other work on the machine "
           "skews the numbers)", "",
           "| measurement | result | goal | met |", "| --- | --- | --- | --- |"]
    ran = [(scenario, results[scenario.NAME]) for scenario in scenarios if results.get(scenario.NAME)]
    out += [scenario.table_row(part) for scenario, part in ran]
    for scenario, part in ran:
        out += _where_the_time_went(scenario.TITLE, part)
    return "\n".join(out) + "\n"


def _where_the_time_went(name: str, part: dict[str, Any]) -> list[str]:
    out = ["", f"### {name}: where the time went", "",
           "| stage (per move) | mean | p50 | p90 | p99 | max |",
           "| --- | --- | --- | --- | --- | --- |"]
    for stage, st in part["stage_seconds"].items():
        if any(math.isnan(st[k]) for k in ("mean", "max")):
            # stages timed inside the processor, which runs in the daemon's own child process
            out.append(f"| {stage} | (not measured: the processor runs in a child process) "
                       "| | | | |")
            continue
        out.append(f"| {stage} | " + " | ".join(f"{st[k]:.4f}" for k in ("mean", "p50", "p90", "p99",
                                                                           "max")) + " |")
    out.append("")
    out.append("Daemon CPU below is the parent process (doors, sender, scheduler); the processor "
               "process is not included.")
    cpu = part["daemon_thread_cpu_seconds"]
    moves = part.get("moves") or part.get("moves_sent") or 1
    out += ["", f"Daemon CPU {part['daemon_cpu_seconds']:.2f} s "
            f"({part['daemon_cpu_seconds'] / moves * 1000:.1f} ms per move); by thread: "
            + ", ".join(f"{k} {v:.2f} s" for k, v in cpu.items()) + ".",
            "Busy (wall) seconds: " + ", ".join(f"{k} {v}" for k, v in part["busy_seconds"].items())
            + f"; send batches {part['send_batches']}; benchmark process CPU "
            f"{part['driver_cpu_seconds']:.2f} s."]
    if part.get("timeline_seconds"):
        out.append("Timeline from the first submission (s): " + ", ".join(
            f"{k} {v}" for k, v in part["timeline_seconds"].items()) + ".")
    if part.get("generator"):
        out.append(f"Generator: {part['generator']}.")
    if part.get("log_problems"):
        out.append(f"Daemon log warnings/errors (first {len(part['log_problems'])}): "
                   + "; ".join(part["log_problems"]))
    return out
