"""The progress bar: drawn on a terminal, silent anywhere else."""

from __future__ import annotations

import io

from pbem.archive.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_silent_when_not_a_terminal() -> None:
    stream = io.StringIO()
    with Progress(10, "importing", stream=stream) as bar:
        for _ in range(10):
            bar.advance()
    assert stream.getvalue() == "" and bar.done == 10


def test_drawn_on_a_terminal_and_ends_its_line() -> None:
    stream = Terminal()
    with Progress(10, "importing", stream=stream) as bar:
        for _ in range(10):
            bar.advance()
    text = stream.getvalue()
    assert text.startswith("\rimporting [") and text.endswith("\n")
    assert "10/10 100%" in text.splitlines()[-1] or "10/10 100%" in text
    assert "#" * 30 in text


def test_unknown_total_counts() -> None:
    stream = Terminal()
    with Progress(0, "exporting", stream=stream) as bar:
        bar.advance(5)
    assert "exporting 5 " in stream.getvalue()
