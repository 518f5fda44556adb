"""What the ``pbem`` command tells its user: help for every option, the games list, clear one-line
errors for a missing file or a malformed address, and scores printed once."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine import get_game
from engine.registry import available_games
from pbem.cli import build_parser, main
from tests.cli.scores import table_totals

PBEM = [sys.executable, "-m", "pbem.cli"]
COMMANDS = ["new", "show", "move", "score", "replay", "selfplay", "analyse", "serve", "deliver", "process",
            "init", "check-config", "send", "mailbox", "archive", "standings", "admin", "store", "status"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PBEM, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "80"})


def call(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse's own usage errors
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --- help ----------------------------------------------------------------------------------------------

def arguments(parser: argparse.ArgumentParser, path: str) -> Iterator[tuple[str, argparse.Action]]:
    """Every option and positional of ``parser`` and of its subcommands, named by command path."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from arguments(sub, f"{path} {name}")
        else:
            yield f"{path} {'/'.join(action.option_strings) or action.dest}", action


def test_every_option_of_every_command_has_help() -> None:
    found = list(arguments(build_parser(), "pbem"))
    assert len(found) > 100, "the walk reaches the subcommands"
    missing = [name for name, action in found if not (action.help or "").strip()]
    assert missing == []


def test_help_lists_every_command_in_order_within_78_columns() -> None:
    result = run("--help")
    assert result.returncode == 0
    commands = result.stdout.split("\n  COMMAND\n", 1)[1].split("\noptions:", 1)[0]
    listed = re.findall(r"^    (\S+)", commands, re.MULTILINE)
    assert listed == COMMANDS
    assert max(len(line) for line in result.stdout.splitlines()) <= 78


@pytest.mark.parametrize("args", [["--help"], ["new", "--help"]])
def test_games_list_names_player_counts_plainly(args: list[str]) -> None:
    text = run(*args).stdout
    for name in available_games():
        game = get_game(name)
        low, high = game.min_players, game.max_players
        expected = f"{low} players" if low == high else f"{low}-{high} players"
        assert f"  {name} ({expected})" in text
    assert not re.search(r"\((\d+)-\1 players\)", text)
    assert "(2 players)" in text and "(2-5 players)" in text


# --- missing files -------------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [["show"], ["move", "--seat", "black", "pass"], ["score"], ["replay"]])
def test_a_missing_record_says_no_such_file(tmp_path: Path, command: list[str],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "MISSING.json"
    name, *rest = command
    code, out, err = call(capsys, name, str(missing), *rest)
    assert (code, out, err) == (2, "", f"pbem: no such file: {missing}\n")


def test_a_missing_record_in_a_subprocess(tmp_path: Path) -> None:
    result = run("show", "MISSING.json")
    assert (result.returncode, result.stderr) == (2, "pbem: no such file: MISSING.json\n")


def test_a_missing_configuration_says_no_such_file(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.toml"
    for command in (["check-config"], ["archive", "search"], ["process"]):
        code, _, err = call(capsys, *command, "-c", str(missing))
        assert code == 2 and err.endswith(f"no such file: {missing}\n") and err.count("\n") == 1


def test_a_missing_archive_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "MISSING_DIR"
    (tmp_path / "pbem.toml").write_text(f'[server]\ndata_dir = "{tmp_path / "data"}"\n')
    code, _, err = call(capsys, "archive", "import", str(missing), "-c", str(tmp_path / "pbem.toml"))
    assert (code, err) == (2, f"pbem archive import: no such directory: {missing}\n")


# --- send: addresses -----------------------------------------------------------------------------------

@pytest.mark.parametrize("address", ["ann", "ann@", "@example.org", "ann@example.org bo",
                                     "ann@example.org, bo@example.org", "ann@@example.org", ""])
@pytest.mark.parametrize("option", ["--from", "--to"])
def test_send_rejects_a_malformed_address(option: str, address: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--from", "ann@example.org", "--to", "bo@example.org"]
    args[args.index(option) + 1] = address
    code, out, err = call(capsys, "send", *args, "--port", "9", "hello")
    assert code == 2 and out == ""
    assert f"argument {option}" in err and "is not a mail address" in err and "Traceback" not in err


def test_send_accepts_addresses_with_and_without_a_name(smtp_sink, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pbem.toml").write_text(f'[server]\ndata_dir = "{tmp_path / "data"}"\n')
    code, out, err = call(capsys, "send", "-c", str(tmp_path / "pbem.toml"), "--host", smtp_sink.host,
                          "--port", str(smtp_sink.port), "--from", "Ann Lee <ann@example.org>",
                          "--to", "pbem@localhost", "hello")
    assert (code, err) == (0, ""), err
    assert out == "sent (no subject) from Ann Lee <ann@example.org> to pbem@localhost\n"
    message = smtp_sink.wait_for(1, timeout=30)[0].message
    assert message["From"].addresses[0].addr_spec == "ann@example.org"
    assert message["From"].addresses[0].display_name == "Ann Lee"
    assert str(message["To"]) == "pbem@localhost"
    code, out, err = call(capsys, "send", "-c", str(tmp_path / "pbem.toml"), "--host", smtp_sink.host,
                          "--port", str(smtp_sink.port), "--from", "ann@example.org",
                          "--subject", "new game", "new alien-city with bo@example.org")
    assert (code, err, out) == (0, "", "sent 'new game' from ann@example.org to pbem@localhost\n")


# --- score ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("game", "players"), [("alien-city", 2), ("space-truckin", 3)])
def test_score_prints_the_totals_once(tmp_path: Path, game: str, players: int,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "games"
    assert call(capsys, "selfplay", game, "--players", str(players), "--seed", "5", "--quiet",
                "-o", str(folder))[0] == 0
    record = next(folder.glob("*.json"))
    code, out, _ = call(capsys, "replay", str(record), "--json")
    totals = json.loads(out.splitlines()[-1])["scores"]
    code, out, err = call(capsys, "score", str(record))
    assert (code, err) == (0, "")
    assert table_totals(out) == totals, out  # in the table's Total row, under each seat
    assert sum(1 for line in out.splitlines() if line.startswith("Total")) == 1, out  # once
    result = [line for line in out.splitlines() if line.startswith("Result: ")]
    assert len(result) == 1 and out.rstrip("\n").endswith(result[0])
    started = tmp_path / "new.json"
    assert call(capsys, "new", game, "--players", str(players), "--seed", "5", "-o", str(started))[0] == 0
    code, out, _ = call(capsys, "score", str(started))
    assert code == 0 and "if the game ended now" in out.splitlines()[-1]
    assert "Result" not in out
