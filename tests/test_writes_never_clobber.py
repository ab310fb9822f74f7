"""Every writer of a user-named path replaces only regular files (issue 35, section 2).

Run as root, ``ai2048 eval greedy --out /dev/null`` replaced the device node with a regular file:
the atomic write's final rename landed on whatever the path named. Now one mechanism
(:func:`ai2048.checkpoint.output_target`, used by every command's ``check`` and again by the writer
itself) decides: a device (``/dev/null`` too: refused, not "discard"), a FIFO, a folder and a dangling
symlink are refused by name before any work, and a symlink to a regular file is written through (the
link stays, its target gets the output).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from ai2048.checkpoint import atomic_path, atomic_write, output_target
from ai2048.cli import check, main

pytest.importorskip("matplotlib", reason="plot needs matplotlib: pip install 'ai2048[plot]'")


def _device(path: Path) -> None:
    """A character device like ``/dev/null`` (major 1, minor 3) at ``path``."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs root (CAP_MKNOD)")


def _dangling(path: Path) -> None:
    path.symlink_to(path.parent / "nowhere" / "target")


KINDS: dict[str, tuple[Callable[[Path], None], str]] = {
    "device": (_device, "is a character device, not a regular file"),
    "fifo": (os.mkfifo, "is a FIFO, not a regular file"),
    "dangling symlink": (_dangling, "which does not exist"),
    "folder": (lambda p: p.mkdir(), "folder"),
}

# writer: (argv, the path the writer would replace, how the success row is checked: "run" the command
# or only "check" its command line, for writers whose work is a training run or a pack)
WRITERS: dict[str, tuple[list[str], str, str]] = {
    "eval --out": (["eval", "greedy", "--games", "1", "--no-progress", "--out", "{p}"], "r.json", "run"),
    "eval games stream": (["eval", "greedy", "--games", "1", "--no-progress", "--out", "{tmp}/r.json"],
                          "r.games.jsonl", "check"),
    "arena --out": (["arena", "greedy", "random", "--games", "1", "--no-progress", "--out", "{p}"], "a.json",
                    "run"),
    "bench --json": (["bench", "--only", "moves", "--seconds", "0.01", "--boards", "1000", "--json", "{p}"],
                     "b.json", "check"),
    "tune --out": (["tune", "--depth", "1", "--games", "1", "--generations", "1", "--population", "1",
                    "--validate", "0", "--out", "{p}"], "t.json", "run"),
    "replay --gif": (["replay", "{rec}", "--gif", "{p}", "--cell", "16"], "g.gif", "run"),
    "watch --record": (["watch", "greedy", "--seed", "1", "--max-moves", "3", "--record", "{p}"], "w.json",
                       "run"),
    "plot --out": (["plot", "{result}", "--out", "{tmp}/figs"], "figs/max_tile.png", "run"),
    "models pack": (["models", "pack", "{tmp}/run", "--name", "net", "--dir", "{tmp}/models"],
                    "models/net.json", "check"),
    "train --out": (["train", "ntuple", "--games", "10", "--out", "{tmp}/run"], "run/meta.json", "check"),
}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A game record (replay) and an eval result (plot)."""
    from ai2048.agents import make_agent
    from ai2048.evaluate import evaluate
    from ai2048.records import record_game

    root = tmp_path_factory.mktemp("inputs")
    rec = record_game(make_agent("greedy"), seed=1, max_moves=4).save(root / "rec.json")
    result = evaluate("greedy", games=2, seed=1, progress=False).save(root / "result.json")
    return {"rec": rec, "result": result}


def _argv(writer: str, tmp: Path, inputs: dict[str, Path]) -> tuple[list[str], Path, str]:
    argv, rel, success = WRITERS[writer]
    path = tmp / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    return [a.format(p=path, tmp=tmp, **inputs) for a in argv], path, success


def _kind(path: Path) -> int:
    return stat.S_IFMT(os.lstat(path).st_mode)


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("writer", list(WRITERS))
def test_writer__a_device_fifo_dangling_link_or_folder_is_refused_before_any_work(
    writer: str, kind: str, tmp_path: Path, inputs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv, path, _ = _argv(writer, tmp_path, inputs)
    make, message = KINDS[kind]
    make(path)
    before = _kind(path)
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert message in err and str(path) in err and "Traceback" not in err, err
    assert _kind(path) == before  # the node is still there, not replaced by a regular file
    assert not (tmp_path / "nowhere").exists()  # a dangling link's target is not created
    assert "written to" not in out and "wrote" not in out and "gen " not in out  # no work was done


@pytest.mark.parametrize("writer", list(WRITERS))
def test_writer__a_symlink_to_a_regular_file_writes_the_file_and_keeps_the_link(
    writer: str, tmp_path: Path, inputs: dict[str, Path]
) -> None:
    argv, path, success = _argv(writer, tmp_path, inputs)
    target = tmp_path / "target" / f"real{path.suffix}"
    target.parent.mkdir()
    target.write_text("{}")
    path.symlink_to(target)
    if success == "check":  # the writer's work (a measurement, a training run, a pack) is not needed here
        try:
            check(argv)
        except FileNotFoundError as e:  # the pack's run directory: after every check of the outputs
            assert "run" in str(e)
        return
    assert main(argv) == 0
    assert path.is_symlink() and os.readlink(path) == str(target)
    assert target.read_bytes() != b"{}" and target.stat().st_size > 0


def test_dev_null_itself_is_refused_with_how_to_write_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    """The documented choice: ``/dev/null`` is refused (not taken as "discard"); the message says how to
    write nothing. Only the check runs, so the real device is never at risk."""
    if not Path("/dev/null").exists():
        pytest.skip("no /dev/null")
    with pytest.raises(ValueError, match="is a character device") as e:
        check(["eval", "greedy", "--out", "/dev/null"])
    assert "leave --out out to write nothing" in str(e.value)
    with pytest.raises(ValueError, match="is a character device"):
        check(["replay", "x.json", "--gif", "/dev/null"])


@pytest.mark.parametrize("kind", list(KINDS))
def test_atomic_write__never_renames_over_a_non_regular_file(kind: str, tmp_path: Path) -> None:
    """The defence behind every command's check: the writer itself refuses, and leaves no temp file."""
    path = tmp_path / "x.json"
    KINDS[kind][0](path)
    before = _kind(path)
    with pytest.raises(ValueError, match=KINDS[kind][1]):
        atomic_write(path, lambda f: f.write("data"), mode="w")
    assert _kind(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.json"]


def test_atomic_path__a_fifo_that_takes_the_place_while_writing_is_not_replaced(tmp_path: Path) -> None:
    """Checked again just before the rename: a FIFO made at the path during the write survives it."""
    path = tmp_path / "x.json"
    with pytest.raises(ValueError, match="is a FIFO"), atomic_path(path) as tmp:
        tmp.write_text("data")
        os.mkfifo(path)
    assert stat.S_ISFIFO(os.lstat(path).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.json"]


def test_atomic_write__keeps_the_mode_of_the_file_it_replaces_and_follows_links(tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    target.write_text("{}")
    target.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    atomic_write(link, lambda f: f.write(json.dumps({"a": 1})), mode="w")
    assert link.is_symlink() and json.loads(target.read_text()) == {"a": 1}
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert output_target(link) == target.resolve()


def test_output_target__a_loop_of_links_is_named(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.symlink_to(b)
    b.symlink_to(a)
    with pytest.raises(ValueError, match="symlink that does not resolve"):
        output_target(a)


@pytest.mark.parametrize("kind", ["fifo", "dangling symlink"])
def test_append_jsonl__refuses_a_non_regular_file_instead_of_blocking(kind: str, tmp_path: Path) -> None:
    """``metrics.jsonl`` as a FIFO used to block the trainer's first log line forever."""
    from ai2048.checkpoint import append_jsonl

    path = tmp_path / "metrics.jsonl"
    KINDS[kind][0](path)
    with pytest.raises(ValueError, match=KINDS[kind][1]):
        append_jsonl(path, {"step": 1})
