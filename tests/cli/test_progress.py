"""The progress bar of long CLI runs (tqdm): drawn on a terminal, silent anywhere else."""

from __future__ import annotations

import io

from pbem.cli.common import progress_bar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_silent_when_not_a_terminal() -> None:
    stream = io.StringIO()
    with progress_bar("importing", 10, stream=stream) as bar:
        for _ in range(10):
            bar.update()
    assert stream.getvalue() == ""


def test_drawn_on_a_terminal_and_ends_its_line() -> None:
    stream = Terminal()
    with progress_bar("importing", 10, stream=stream) as bar:
        for _ in range(10):
            bar.update()
    text = stream.getvalue()
    assert text.startswith("\rimporting") and text.endswith("\n")
    last = text.rstrip("\n").split("\r")[-1]
    assert "10/10" in last and "100%" in last


def test_unknown_total_counts() -> None:
    stream = Terminal()
    with progress_bar("exporting", stream=stream) as bar:
        bar.update(5)
    last = stream.getvalue().rstrip("\n").split("\r")[-1]
    assert last.startswith("exporting: 5 games")


def test_a_total_learned_later_is_shown() -> None:
    """The importer learns how many files there are after the bar was made."""
    stream = Terminal()
    with progress_bar("importing", stream=stream) as bar:
        bar.total = 4
        bar.update(4)
    assert "4/4" in stream.getvalue().rstrip("\n").split("\r")[-1]
