"""``python -m bench.mypyc_trial``: a folder it would replace is refused unless a build of its
own made it, and every bad argument is one line (none of these compiles anything)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def trial(*args: str, script: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The script run as an operator runs it, or (``script``) a copy of it in a throwaway tree:
    its repository is then that tree, so a refusal that failed would delete only the copy."""
    command = ["-m", "bench.mypyc_trial"] if script is None else [str(script)]
    return subprocess.run(
        [sys.executable, *command, *args],
        cwd=ROOT if script is None else script.parent.parent,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    return lines[-1]


def test_a_folder_no_build_made_is_left_as_it_is(tmp_path: Path) -> None:
    keep = tmp_path / "precious.txt"
    keep.write_text("mine")
    line = one_line(trial("build", str(tmp_path)))
    assert line.startswith(f"mypyc_trial: {tmp_path} exists and is not a trial build")
    assert keep.read_text() == "mine"


def test_the_repository_and_what_holds_or_lies_in_it_are_refused(tmp_path: Path) -> None:
    tree = tmp_path / "outer" / "repo"
    (tree / "botkit").mkdir(parents=True)
    (tree / "botkit" / "__init__.py").write_text("# mine\n")
    (tree / "bench").mkdir()
    script = tree / "bench" / "mypyc_trial.py"
    script.write_bytes((ROOT / "bench" / "mypyc_trial.py").read_bytes())
    for dest in (tree, tree.parent, tree / "botkit", Path(".")):
        line = one_line(trial("build", str(dest), script=script))
        assert "must lie outside the repository" in line, (dest, line)
    assert (tree / "botkit" / "__init__.py").read_text() == "# mine\n"


def test_a_file_is_not_a_build_folder(tmp_path: Path) -> None:
    target = tmp_path / "a-file"
    target.write_text("mine")
    assert one_line(trial("build", str(target))).endswith(
        "is a file: name a new folder for the build"
    )
    assert target.read_text() == "mine"


def test_measuring_a_folder_with_no_build_is_refused(tmp_path: Path) -> None:
    line = one_line(trial("measure", str(tmp_path)))
    assert line == (
        f"mypyc_trial: {tmp_path} is not a trial build (no .mypyc-trial): run build {tmp_path}"
        " first"
    )
    (tmp_path / ".mypyc-trial").write_text("")
    assert one_line(trial("measure", str(tmp_path))).endswith(
        "holds no compiled modules (its build failed?): build it again"
    )


def test_rounds_are_a_whole_number_of_one_or_more(tmp_path: Path) -> None:
    for rounds in ("0", "-2", "x"):
        line = one_line(trial("measure", str(tmp_path), "--rounds", rounds))
        assert f"--rounds: {rounds!r} must be a whole number of at least 1" in line, line
