"""deploy/install.sh as an administrator meets it: what it makes, with which owners and modes; an
interpreter the service user cannot run (a pyenv under /root) is refused with the reason, and a venv
made with one is made again; a second run changes no configuration; the systemd units it writes
pass ``systemd-analyze verify``."""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.deploy.installed import SERVICE_USER, Installation, run_install
from tests.services.requirements import missing

pytestmark = [pytest.mark.services, pytest.mark.slow]


def owner(path: Path) -> tuple[str, str, int]:
    st = path.stat()
    return pwd.getpwuid(st.st_uid).pw_name, grp.getgrgid(st.st_gid).gr_name, stat.S_IMODE(st.st_mode)


def test_folders_owners_and_modes(pipe_installation: Installation) -> None:
    inst = pipe_installation
    group = grp.getgrgid(pwd.getpwnam(SERVICE_USER).pw_gid).gr_name
    assert owner(inst.prefix) == ("root", "root", 0o755)  # the service cannot change its own code
    assert owner(inst.prefix / "venv" / "bin" / "pbem")[0] == "root"
    assert owner(inst.data_dir) == (SERVICE_USER, group, 0o750)
    assert owner(inst.config_dir) == ("root", group, 0o750)
    assert owner(inst.config) == ("root", group, 0o640)
    user = pwd.getpwnam(SERVICE_USER)
    assert user.pw_shell == "/usr/sbin/nologin" and user.pw_uid < 1000
    # The venv's interpreter is a system one the service user reaches, not one under a home folder.
    python = (inst.prefix / "venv" / "bin" / "python").resolve()
    assert not str(python).startswith(("/root", "/home")), python
    assert "Python for the venv: /usr/" in inst.output


def test_an_interpreter_the_service_user_cannot_run_is_refused_and_a_venv_made_with_one_is_remade(
        pipe_installation: Installation, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The issue's case: root's python3.11 was a pyenv under /root (mode 0700). Here a link to the
    system's python in a folder only root may enter stands for it."""
    private = Path(tempfile.mkdtemp(prefix="pbem-root-only-", dir="/tmp"))
    try:
        private.chmod(0o700)
        python = private / "python3.11"
        python.symlink_to(Path("/usr/bin/python3.11") if Path("/usr/bin/python3.11").exists()
                          else Path(shutil.which("python3") or "/usr/bin/python3"))
        inst = pipe_installation
        result = run_install(inst.root, "pipe", "--python", str(python))
        assert result.returncode == 1
        assert result.stderr.splitlines() == [
            f"{python}: user {SERVICE_USER} cannot run it: runuser: failed to execute {python}: "
            "Permission denied",
            f"install.sh: --python {python} does not fit (see the line above)"], result.stderr
        # The installation as `make install` with that interpreter left it: a venv the user cannot use.
        shutil.rmtree(inst.prefix / "venv")
        subprocess.run([str(python), "-m", "venv", "--without-pip", str(inst.prefix / "venv")], check=True)
        config_before = inst.config.read_bytes()
        result = run_install(inst.root, "pipe")
        assert result.returncode == 0, result.stderr
        assert "was made with an interpreter user pbemdeploy cannot run: making it again" in result.stdout
        assert f"kept {inst.config}" in result.stdout
        assert inst.config.read_bytes() == config_before, "a second run changes no configuration"
        version = inst.as_user("--version")
        assert version.returncode == 0 and version.stdout.startswith("pbem "), version.stderr
    finally:
        shutil.rmtree(private, ignore_errors=True)


def test_the_systemd_units_pass_systemd_analyze_verify(pipe_installation: Installation,
                                                       tmp_path: Path) -> None:
    """The units as install.sh wrote them for this installation (its venv, user and folders). This
    machine has no systemd running (PID 1 is no init), so they are verified, not started."""
    tool = shutil.which("systemd-analyze")
    if tool is None:
        missing("systemd-analyze not installed: apt-get install systemd (make test does this as root)")
    inst = pipe_installation
    for name in ("pbem.service", "workers/pbem-worker@.service", "workers/pbem-workers.target"):
        (tmp_path / Path(name).name).write_text(inst.rendered(name))
    for unit in ("pbem.service", "pbem-worker@1.service", "pbem-workers.target"):
        result = subprocess.run([tool, "verify", str(tmp_path / unit)], capture_output=True, text=True,
                                timeout=60, env={**os.environ, "SYSTEMD_LOG_COLOR": "0"})
        assert result.returncode == 0, result.stderr
        ours = [line for line in result.stderr.splitlines() if "pbem" in line]
        assert ours == [], ours
    unit = inst.rendered("pbem.service")
    assert f"ExecStart={inst.pbem} serve -c {inst.config}" in unit
    assert f"User={SERVICE_USER}" in unit and f"ReadWritePaths={inst.data_dir}" in unit
