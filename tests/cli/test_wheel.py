"""The installed package carries its schemas and templates and works outside the checkout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_wheel_installs_and_replays_outside_the_checkout(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    build = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(REPO)],
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout[-2000:] + build.stderr[-2000:]
    wheel = next(dist.glob("pbem-*.whl"))
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)],
                             capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stderr[-2000:]

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    clean_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    pbem = str(env_dir / "bin" / "pbem")
    where = subprocess.run([str(python), "-c", "import pbem, engine; from pbem.resources import "
                            "data_dir; print(pbem.__file__); print(data_dir('schemas')); "
                            "print(data_dir('templates')); from pbem.i18n import translations as t; "
                            "print(t('de', 'pbem').gettext('Your commands')); "
                            "print(t('sk', 'pbem').gettext('Your commands'))"],
                           capture_output=True, text=True, cwd=elsewhere, env=clean_env)
    assert where.returncode == 0, where.stderr
    for line in where.stdout.splitlines():
        assert str(REPO) not in line, f"the installed package reads from the checkout: {line}"
    templates = Path(where.stdout.splitlines()[2])
    assert (templates / "mail.txt.j2").is_file()
    # the compiled catalogs are in the wheel (git holds only their .po sources): mail in German, Slovak
    german, slovak = where.stdout.splitlines()[3:5]
    assert german == "Deine Befehle" and slovak == "Tvoje príkazy"

    record = elsewhere / "game.json"
    made = subprocess.run([pbem, "selfplay", "alien-city", "--seed", "2", "--quiet", "-o", str(elsewhere)],
                          capture_output=True, text=True, cwd=elsewhere, env=clean_env)
    assert made.returncode == 0, made.stderr
    record = next(elsewhere.glob("*.json"))
    replayed = subprocess.run([pbem, "replay", str(record), "--json"], capture_output=True, text=True,
                              cwd=elsewhere, env=clean_env)
    assert replayed.returncode == 0, replayed.stderr
    lines = [json.loads(line) for line in replayed.stdout.splitlines()]
    assert lines[-1]["over"] is True
    assert len(lines) == len(json.loads(record.read_text())["moves"]) + 1
    bad = elsewhere / "bad.json"
    bad.write_text('{"format": "pbem-record/1", "game": "alien-city", "setup": {}, "moves": []}')
    invalid = subprocess.run([pbem, "replay", str(bad)], capture_output=True, text=True,
                             cwd=elsewhere, env=clean_env)
    assert invalid.returncode == 2 and "$.setup" in invalid.stderr
