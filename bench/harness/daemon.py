"""The daemon under test, in a process of its own, and what records its work.

The daemon runs as ``pbem serve`` runs it (processor in a forked child), in a spawned process, so that
the load generator and the SMTP sink in the benchmark's process do not compete with it for the GIL;
they still share the machine's cores, as an MTA on the same host would. Its stages are timestamped
with ``time.monotonic`` (comparable across processes on Linux) by wrapping the store's intake, the
processor and the sender's batches, and its threads' CPU time is read from ``/proc``.
"""

from __future__ import annotations

import contextlib
import cProfile
import io
import logging
import multiprocessing
import os
import pstats
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _thread_cpu() -> dict[str, float]:
    """CPU seconds (user + system) of every thread of this process, by thread name."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    ticks = os.sysconf("SC_CLK_TCK")
    result: dict[str, float] = {}
    for task in Path("/proc/self/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        cpu = (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
        name = names.get(int(task.name)) or "native-" + stat[stat.index("(") + 1:stat.rindex(")")]
        name = re.sub(r"_\d+$", "", name)  # executor workers: pbem-smtp-store_0
        result[name] = result.get(name, 0.0) + cpu
    return result


class _Recorder:
    """Timestamps (time.monotonic, comparable across processes on Linux) of the daemon's stages, and
    optionally one cProfile per thread, switched on only around the wrapped calls."""

    def __init__(self) -> None:
        self.on = False
        self.lock = threading.Lock()
        self.events: dict[str, list[tuple]] = {}
        self.profiles: dict[str, cProfile.Profile] | None = None
        self.cpu_at_mark: dict[str, float] = {}
        self.process_cpu_at_mark = 0.0

    def mark(self, profile: bool) -> None:
        with self.lock:
            self.events = {"accept": [], "process": [], "send": []}
            self.profiles = {} if profile else None
            self.cpu_at_mark = _thread_cpu()
            times = os.times()
            self.process_cpu_at_mark = times.user + times.system
            self.on = True

    def add(self, kind: str, item: tuple) -> None:
        if self.on:
            with self.lock:
                self.events[kind].append(item)

    def wrap(self, kind: str, func: Callable[..., Any], describe: Callable[[Any, tuple], tuple]
             ) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            profile = None
            if self.on and self.profiles is not None:
                name = threading.current_thread().name
                name = re.sub(r"_\d+$", "", name)
                with self.lock:
                    profile = self.profiles.setdefault(name, cProfile.Profile())
            start = time.monotonic()
            if profile is not None:
                profile.enable()
            try:
                result = func(*args, **kwargs)
            finally:
                if profile is not None:
                    profile.disable()
            end = time.monotonic()
            self.add(kind, (start, end, *describe(result, args)))
            return result
        return wrapper

    def report(self, profile_dir: str | None) -> dict[str, Any]:
        with self.lock:
            self.on = False
            cpu = _thread_cpu()
            times = os.times()
            threads = {name: round(seconds - self.cpu_at_mark.get(name, 0.0), 3)
                       for name, seconds in cpu.items()
                       if seconds - self.cpu_at_mark.get(name, 0.0) > 0.0}
            result: dict[str, Any] = {
                "events": self.events,
                "thread_cpu": threads,
                "process_cpu": round(times.user + times.system - self.process_cpu_at_mark, 3),
                "profiles": {},
            }
            if self.profiles and profile_dir:
                Path(profile_dir).mkdir(parents=True, exist_ok=True)
                for name, prof in self.profiles.items():
                    path = Path(profile_dir) / f"{name}.pstats"
                    prof.dump_stats(str(path))
                    text = io.StringIO()
                    pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(40)
                    result["profiles"][name] = str(path)
                    (Path(profile_dir) / f"{name}.txt").write_text(text.getvalue())
            return result


def daemon_child(settings: dict[str, Any], conn: Any, log_file: str, log_level: str) -> None:
    """Body of the daemon process: start, answer commands on ``conn``, stop when told or orphaned."""
    logging.basicConfig(level=getattr(logging, log_level), filename=log_file,
                        format="%(asctime)s %(levelname)s %(threadName)s %(name)s: %(message)s")
    from bench.harness import pbem_api as api

    # looked up in the order the modules were always imported in
    config_from_dict, Daemon, Processor, open_store = (
        api.config_from_dict, api.Daemon, api.Processor, api.open_store)

    config = config_from_dict(settings)
    config.data_dir.mkdir(parents=True, exist_ok=True)
    store = open_store(config.database_url)
    processor = Processor(config, store)
    rec = _Recorder()
    # Instance attributes shadow the methods; every caller goes through ``self.<name>``.
    # Every message goes through ``_process`` (None: nothing claimed, so not recorded by id).
    processor._process = rec.wrap(  # type: ignore[method-assign]
        "process", processor._process, lambda result, args: (result[0] if result is not None else None,))
    store.accept_inbound = rec.wrap(  # type: ignore[method-assign]
        "accept", store.accept_inbound, lambda result, args: (result.inbound_id, result.new))
    many = getattr(store, "accept_inbound_many", None)
    if many is not None:  # a group-committing intake, should the store have one
        def accept_many(items: Any, *args: Any, **kwargs: Any) -> Any:
            start = time.monotonic()
            results = many(items, *args, **kwargs)
            end = time.monotonic()
            for result in results:
                rec.add("accept", (start, end, result.inbound_id, result.new))
            return results
        store.accept_inbound_many = accept_many  # type: ignore[attr-defined]
    daemon = Daemon(config, store, processor, processor_process=True)  # as `pbem serve` runs it
    daemon.sender._send_batch = rec.wrap(  # type: ignore[method-assign]
        "send", daemon.sender._send_batch, lambda result, args: tuple(result))
    profile_dir: str | None = None
    try:
        daemon.start()
        conn.send(("ready", daemon.smtp.port if daemon.smtp else None, os.getpid()))
        while True:
            try:
                command, arg = conn.recv()
            except (EOFError, OSError):
                break  # the benchmark went away: stop too
            if command == "mark":
                profile_dir = arg
                rec.mark(profile=arg is not None)
                conn.send(("ok", None))
            elif command == "report":
                conn.send(("ok", rec.report(profile_dir)))
            elif command == "stop":
                break
    except BaseException as exc:  # tell the parent rather than die silently
        with contextlib.suppress(Exception):
            conn.send(("error", f"{type(exc).__name__}: {exc}"))
        raise
    finally:
        daemon.stop()
        store.close()
        with contextlib.suppress(Exception):
            conn.send(("stopped", None))


class DaemonProcess:
    """The parent's handle on ``daemon_child``."""

    def __init__(self, settings: dict[str, Any], log_file: Path, log_level: str) -> None:
        context = multiprocessing.get_context("spawn")
        self._conn, child_conn = context.Pipe()
        # Not daemonic: the daemon forks its own processor process, as `pbem serve` does. It stops
        # when the benchmark closes the pipe or goes away (EOF in daemon_child).
        self.process = context.Process(target=daemon_child, name="pbem-daemon", daemon=False,
                                       args=(settings, child_conn, str(log_file), log_level))
        self.process.start()
        child_conn.close()
        self.log_file = log_file
        reply = self._recv(60)
        if reply[0] != "ready":
            raise RuntimeError(f"daemon did not start: {reply}")
        self.smtp_port: int | None = reply[1]
        self.pid: int = reply[2]

    def _recv(self, timeout: float) -> tuple:
        if not self._conn.poll(timeout):
            raise RuntimeError(f"daemon process did not answer within {timeout:.0f} s; log tail:\n"
                               + self.log_tail())
        try:
            return self._conn.recv()
        except EOFError:
            raise RuntimeError("daemon process died; log tail:\n" + self.log_tail()) from None

    def call(self, command: str, arg: Any = None, timeout: float = 60) -> Any:
        self._conn.send((command, arg))
        reply = self._recv(timeout)
        if reply[0] != "ok":
            raise RuntimeError(f"daemon: {reply}")
        return reply[1]

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def errors_in_log(self) -> list[str]:
        try:
            text = self.log_file.read_text(errors="replace")
        except OSError:
            return []
        return [line for line in text.splitlines() if " ERROR " in line or " WARNING " in line]

    def stop(self) -> None:
        if self.process.is_alive():
            with contextlib.suppress(Exception):
                self._conn.send(("stop", None))
            self.process.join(30)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self._conn.close()


class PySpy:
    """``py-spy record`` on the daemon process during the timed part (``--py-spy DIR``): collapsed
    stacks per thread, GIL holders only with ``--gil`` left off, so waiting shows too (``--idle``).
    ``cpu=True`` samples only the thread holding the interpreter lock instead (``--gil``): where the
    CPU went, also in a process a CPU quota holds back, whose waits would otherwise fill the
    samples."""

    def __init__(self, pid: int, out: Path, cpu: bool = False) -> None:
        exe = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
        if not Path(exe).exists():
            raise SystemExit("--py-spy: py-spy not found (.venv/bin/pip install py-spy)")
        out.parent.mkdir(parents=True, exist_ok=True)
        self.out = out
        self.proc = subprocess.Popen([exe, "record", "--pid", str(pid), "--rate", "250", "--threads",
                                      "--gil" if cpu else "--idle", "--format", "raw", "--output",
                                      str(out), "--nonblocking"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(0.5)  # attached before the load starts

    def stop(self) -> str:
        from bench.harness.workers import stop_process

        stop_process(self.proc, signal.SIGINT)
        return str(self.out)


def start_with_relay(name: str, doors: dict[str, Any], workdir: Path, log_level: str,
                     cleanup: list[Callable[[], None]]) -> tuple[Any, DaemonProcess, Path]:
    """The relay sink, then a daemon that sends to it and reads mail through ``doors`` (the ``smtp``
    and ``imap`` settings); both go on ``cleanup`` at once, so an error or Ctrl-C stops them too.
    Returns the sink, the daemon and its data directory (the store the stages are read from)."""
    from bench.harness.sink import start_sink

    sink = start_sink()
    cleanup.append(sink.stop)
    data_dir = workdir / f"{name}-data"
    settings = {"server": {"data_dir": str(data_dir), "log_level": log_level}, **doors,
                "relay": {"host": sink.host, "port": sink.port, "security": "none"}}
    daemon = DaemonProcess(settings, workdir / f"{name}-daemon.log", log_level)
    cleanup.append(daemon.stop)
    return sink, daemon, data_dir
