"""Nothing read from disk is trusted (issue 45): a table, a distilled copy or a stopped build's layer
that changed on disk is refused with a sentence naming the file and the fix, never played,
assembled or turned into a traceback. All on tiny tables (a 2x3 free block, built in a second)."""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from ai2048 import make_agent
from ai2048.agents import endgame
from ai2048.checkpoint import hold_run
from ai2048.cli import main
from ai2048.tables import build as building
from ai2048.tables import formations, store
from ai2048.tables.build import BuildDamaged, BuildStopped, build, check_resources
from ai2048.tables.formations import Formation, TableSpec

# the free cells are the bottom-right 2x3 block (as in tests/test_tables.py); its name is "tiny-16"
TINY = Formation("tiny", fixed=(0, 1, 2, 3, 4, 5, 6, 7, 8, 12), anchor=5, goals=(9,))
SPEC = TableSpec(TINY, 4, 2 ** 12)
NAME = SPEC.name
DEEP = "[" * 100_000 + "]" * 100_000  # JSON nested past Python's recursion limit


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("trusted")
    build(SPEC, d)
    return d


@pytest.fixture
def tables(built, tmp_path, monkeypatch) -> Path:
    """A copy of the built tiny table's folder, the table registered (and the only default one), the
    package's distilled folder empty and the agents' table cache emptied."""
    d = tmp_path / "tables"
    shutil.copytree(built, d)
    monkeypatch.setitem(formations.TABLES, NAME, (SPEC, 1000))
    monkeypatch.setattr(formations, "DEFAULT", (NAME,))
    monkeypatch.setattr(store, "DISTILLED_DIR", tmp_path / "distilled")
    monkeypatch.setattr(endgame, "_LOADED", {})
    return d


def _arrays(folder: Path) -> dict[str, np.ndarray]:
    return {n: np.load(folder / n) for n in store.FILES}


def _rewrite(folder: Path, **arrays: np.ndarray) -> None:
    """Replace table files and rewrite ``table.json`` to match them (sizes and digests): what a
    digest check alone passes."""
    for name, arr in arrays.items():
        np.save(folder / f"{name}.npy", arr)
    meta = json.loads((folder / store.META).read_text())
    n = int(np.load(folder / "keys.npy", mmap_mode="r").size)
    store.write_meta(folder, SPEC, n, 1.0, meta["layers"])


def _refused(d: Path, match: str, capsys) -> None:
    """The table in ``d`` is refused, naming ``match``, by the loader, the agent, `ai2048 tables
    verify` and `ai2048 tables` (its listing)."""
    with pytest.raises(store.TableError, match=match):
        store.load(SPEC, d)
    endgame._LOADED.clear()
    with pytest.raises(store.TableError, match=match):
        make_agent("endgame", tables=NAME, tables_dir=str(d), depth=1)
    assert main(["tables", "verify", NAME, "--dir", str(d)]) == 1
    assert capsys.readouterr().out.startswith(f"{NAME}: {d / NAME}")
    row = next(r for r in store.listing(d) if r["name"] == NAME)
    assert row["state"].startswith("unusable: ") and "rebuild it" in row["state"]


@pytest.mark.parametrize(("value", "shown"), [(5.0, "5.0"), (-3.0, "-3.0"), (np.nan, "nan"),
                                              (-1.0, "-1.0")])
def test_load__a_value_that_is_no_probability_is_refused_even_with_matching_digests(tables, value, shown,
                                                                                     capsys):
    folder = tables / NAME
    values = _arrays(folder)["values.npy"].copy()
    values[100] = value
    _rewrite(folder, values=values)
    _refused(tables, rf"values.npy: value {shown} at index 100 is not a probability in \[0, 1\]", capsys)


def test_load__keys_out_of_order_or_out_of_their_layer_are_refused(tables, capsys):
    folder = tables / NAME
    a = _arrays(folder)
    keys, offsets = a["keys.npy"].copy(), a["offsets.npy"]
    k = int(np.argmax(np.diff(offsets) > 2))
    lo = int(offsets[k])
    keys[lo], keys[lo + 1] = keys[lo + 1], keys[lo]
    _rewrite(folder, keys=keys)
    _refused(tables, rf"keys.npy: key 0x[0-9a-f]+ at index {lo + 1:,} is not above the key before it", capsys)
    _rewrite(folder, keys=a["keys.npy"])
    store.load(SPEC, tables)  # as built again
    shifted = offsets.copy()
    shifted[k] += 1  # a key moved into the layer below
    _rewrite(folder, offsets=shifted)
    _refused(tables, rf"keys.npy: key .* at index {lo:,} is not (in the layer of its tile sum|above the key)",
             capsys)


def test_load__digests_are_checked_once_per_change_of_the_files(tables, monkeypatch):
    folder = tables / NAME
    hashed: list[str] = []
    real = store.sha256
    monkeypatch.setattr(store, "sha256", lambda p: hashed.append(p.name) or real(p))
    store.load(SPEC, tables)  # a copy (other inodes): hashed once, remembered
    assert sorted(hashed) == sorted(store.FILES) and (folder / store.STAMP).is_file()
    store.load(SPEC, tables)
    assert len(hashed) == 3
    store.load(SPEC, tables, verify=True)  # `ai2048 tables verify` hashes every time
    assert len(hashed) == 6
    raw = bytearray((folder / "values.npy").read_bytes())
    raw[-3] ^= 0x01  # bit rot, in range: only the digest sees it
    (folder / "values.npy").write_bytes(bytes(raw))
    with pytest.raises(store.TableError, match="values.npy: SHA-256 does not match table.json"):
        store.load(SPEC, tables)


def test_load__a_folder_that_cannot_hold_the_stamp_is_hashed_once_per_process(tables, monkeypatch):
    def read_only(*_a, **_k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(store, "atomic_write", read_only)
    (tables / NAME / store.STAMP).unlink()  # the copied stamp (of the original folder)
    hashed: list[str] = []
    real = store.sha256
    monkeypatch.setattr(store, "sha256", lambda p: hashed.append(p.name) or real(p))
    store.load(SPEC, tables)
    store.load(SPEC, tables)
    assert len(hashed) == 3 and not (tables / NAME / store.STAMP).exists()


def test_a_fresh_build_is_stamped_and_loads_without_hashing(tmp_path, monkeypatch):
    build(SPEC, tmp_path)
    monkeypatch.setattr(store, "sha256", lambda p: pytest.fail(f"hashed {p}"))
    store.load(SPEC, tmp_path)


def test_load__a_header_claiming_a_huge_shape_is_refused_before_anything_is_allocated(tables, capsys):
    folder = tables / NAME
    path = folder / "offsets.npy"
    body = path.read_bytes()
    with open(path, "wb") as f:  # the same data behind a header that claims 8 TiB
        np.lib.format.write_array_header_1_0(f, {"descr": "<i8", "fortran_order": False, "shape": (2**40,)})
        f.write(body[128:])
    _rewrite(folder)
    _refused(tables, r"offsets.npy: unreadable \(its header declares int64 \(1099511627776,\)", capsys)


def test_listing__says_why_a_table_the_agent_refuses_is_not_usable(tables, monkeypatch, capsys):
    assert next(r for r in store.listing(tables) if r["name"] == NAME)["state"] == "built"
    other = TableSpec(TINY, 4, 2 ** 12, p_two=0.8)  # the folder holds a table of other spawn odds
    monkeypatch.setitem(formations.TABLES, NAME, (other, 1000))
    row = next(r for r in store.listing(tables) if r["name"] == NAME)
    assert row["state"].startswith(f"unusable: {tables / NAME}: built for ")
    assert "'p_two': 0.9" in row["state"]
    monkeypatch.setitem(formations.TABLES, NAME, (SPEC, 1000))
    keys = tables / NAME / "keys.npy"
    keys.write_bytes(keys.read_bytes()[:-8])  # truncated
    assert main(["tables", "--dir", str(tables)]) == 0
    assert "unusable:" in capsys.readouterr().out
    row = next(r for r in store.listing(tables) if r["name"] == NAME)
    assert "keys.npy: missing or truncated" in row["state"]
    keys.unlink()
    row = next(r for r in store.listing(tables) if r["name"] == NAME)
    assert row["state"] == f"unusable: {keys}: missing or truncated; rebuild it: ai2048 tables build " \
        f"{NAME} --dir {tables} --force"
    assert main(["tables", "build", NAME, "--dir", str(tables), "--no-progress"]) == 1  # not "already built"
    assert "missing or truncated" in capsys.readouterr().out


@pytest.mark.parametrize(("meta", "match"), [
    (DEEP, r"unreadable table description \(maximum recursion depth"),
    ({"positions": "many"}, r"positions is 'many', not a whole number of at least 0"),
    ({"layers": 2.5}, r"layers is 2.5, not a whole number of at least 1"),
    ({"build_seconds": "soon"}, r"build_seconds is 'soon', not a number of seconds"),
    ({"files": {"keys.npy": {"bytes": "10", "sha256": "00"}}}, r"files.keys.npy is .*, not its size in "),
])
def test_table_json__damaged_fields_are_named_everywhere(tables, meta, match, capsys):
    path = tables / NAME / store.META
    if isinstance(meta, str):
        path.write_text(meta)
    else:
        path.write_text(json.dumps({**json.loads(path.read_text()), **meta}))
    full = f"{path}: .*{match}.*; rebuild it: ai2048 tables build {NAME} --dir {tables} --force"
    with pytest.raises(store.TableError, match=full):
        store.load(SPEC, tables)
    with pytest.raises(store.TableError, match=match):
        make_agent("endgame", tables=NAME, tables_dir=str(tables), depth=1)
    assert main(["tables", "verify", NAME, "--dir", str(tables)]) == 1
    assert main(["tables", "--dir", str(tables)]) == 0
    assert "unusable" in capsys.readouterr().out


# ---- distilled copies ------------------------------------------------------------------------------


def _distilled(tables: Path, **replace) -> Path:
    """The tiny table's distilled copy (every fifth key) in the package's folder, with arrays replaced."""
    table = store.load(SPEC, tables)
    path = store.DISTILLED_DIR / f"{NAME}.npz"
    store.write_distilled(path, table, np.asarray(table.keys[::5]), {"games": 0})
    if replace:
        with np.load(path) as z:
            arrays = {k: z[k] for k in z.files}
        arrays.update(replace)
        np.savez_compressed(path, **arrays)
    return path


def test_distilled__values_and_keys_are_checked_like_a_built_table(tables):
    path = _distilled(tables)
    good = store.load_distilled(NAME)
    assert good is not None and good.keys.size > 0
    for bad, match in (({"values": np.where(good.values == good.values.max(), 5.0, good.values)
                         .astype(np.float32)}, r"\(values.npy\): value 5.0 at index"),
                       ({"values": good.values * np.nan}, r"value nan at index 0"),
                       ({"keys": good.keys[::-1].copy()}, r"\(keys.npy\): key"),
                       ({"meta": np.array(DEEP)}, r"maximum recursion depth"),
                       ({"keys": good.keys.astype(np.float64)}, r"its keys array is float64")):
        _distilled(tables, **bad)
        with pytest.raises(store.TableError, match=f"{path}.*{match}.*reinstall ai2048"):
            store.load_distilled(NAME)


def test_distilled__a_truncated_copy_in_the_package_says_reinstall_and_the_server_starts_without_it(
        tables, tmp_path, monkeypatch, capsys):
    path = _distilled(tables)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    empty = tmp_path / "none"
    empty.mkdir()
    with pytest.raises(store.TableError, match=rf"{path}: unreadable distilled table .*reinstall ai2048"):
        make_agent("endgame", tables=NAME, tables_dir=str(empty), depth=1)
    row = next(r for r in store.listing(empty) if r["name"] == NAME)
    assert row["state"].startswith("not built; the shipped distilled copy is unusable")
    assert "reinstall ai2048" in row["state"]
    assert main(["tables", "verify", NAME, "--dir", str(empty)]) == 1
    assert "reinstall ai2048" in capsys.readouterr().out
    assert main(["eval", "endgame", "--games", "1", "--no-progress", "--set", f"tables={NAME}",
                 "--set", f"tables_dir={empty}", "--set", "depth=1"]) == 2
    assert "reinstall ai2048" in capsys.readouterr().err
    pytest.importorskip("fastapi", reason="the server comes with the 'ui' extra")
    from ai2048.ui import limits
    from ai2048.ui.server import create_app
    from ai2048.ui.warmup import warm_up

    monkeypatch.setenv(store.ENV_VAR, str(empty))
    monkeypatch.setattr(limits, "_shipped", dict)
    app = create_app(default_agent="random")
    assert "endgame" in app.state.web.models
    app.state.web.agent_names = ()  # the web agents' kernels are another test's
    said: list[str] = []
    warm_up(app, said.append)
    assert len(said) == 1 and said[0].startswith("model model:endgame cannot be loaded")
    assert "reinstall ai2048" in said[0]


def test_distilled__a_member_claiming_a_huge_shape_is_refused_before_anything_is_allocated(tables):
    path = _distilled(tables)
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    with zipfile.ZipFile(path, "w") as z:
        for n, body in members.items():
            if n == "offsets.npy":
                f = io.BytesIO()
                np.lib.format.write_array_header_1_0(f, {"descr": "<i8", "fortran_order": False,
                                                         "shape": (2**40,)})
                body = f.getvalue() + body[128:]
            z.writestr(n, body)
    with pytest.raises(store.TableError, match=r"its header declares int64 \(1099511627776,\)"):
        store.load_distilled(NAME)


# ---- stopped builds ----------------------------------------------------------------------------------


def _stopped(d: Path, solved: int) -> Path:
    """A build of the tiny table stopped with its layers enumerated and ``solved`` of them solved;
    its ``.build`` folder."""
    calls = {"n": 0}
    layers = 0

    def count(phase: str, k: int, n: int) -> None:
        nonlocal layers
        layers += phase == "enumerating"

    def stop() -> bool:
        calls["n"] += 1
        return layers > 0 and calls["n"] > layers + solved

    with pytest.raises(BuildStopped):
        build(SPEC, d, progress=count, stop=stop)
    work = d / NAME / ".build"
    assert len(list((work / "val").glob("L*.npy"))) == solved
    return work


def _resume_refused(d: Path, path: Path, match: str) -> None:
    with pytest.raises(BuildDamaged, match=rf"{path}: {match}.* \(a damaged stopped build\); delete "
                       rf"{path.parent.parent if path.parent.name in ('fwd', 'val') else path.parent} "
                       "and run the same command to start the build again"):
        build(SPEC, d)
    assert not (d / NAME / store.META).exists()


def test_build__a_solved_layer_replaced_or_holding_nan_is_refused_deleting_build_restarts(tmp_path, built):
    work = _stopped(tmp_path, 3)
    solved = sorted((work / "val").glob("L*.npy"))[-1]
    good = np.load(solved)
    np.save(solved, np.full_like(good, 0.5))  # another layer of the right length
    _resume_refused(tmp_path, solved, f"its SHA-256 does not match {solved.stem}.json")
    nan = good.copy()
    nan[0] = np.nan
    np.save(solved, nan)
    building._save_layer(solved, nan)  # its record rewritten to match
    _resume_refused(tmp_path, solved, "value nan at index 0 is not a probability")
    np.save(solved, good.astype(np.float64))
    _resume_refused(tmp_path, solved, r"holds float64 \(\d+,\), not the float32 \(\d+,\) expected")
    shutil.rmtree(work)  # the fix the message gives
    build(SPEC, tmp_path)
    assert store.load(SPEC, tmp_path, verify=True).meta["files"] == store.load(SPEC, built).meta["files"]


def test_build__damaged_files_of_a_stopped_build_are_named(tmp_path):
    work = _stopped(tmp_path, 2)
    fwd = sorted((work / "fwd").glob("L*.npy"))
    for path, text, match in (
            (work / "fwd" / "done.json", "{}", "not the record of a finished enumeration"),
            (work / "fwd" / "done.json", DEEP, r"unreadable \(maximum recursion depth"),
            (work / "spec.json", "{not json", r"unreadable \(Expecting property name"),
            (work / "seconds.json", '{"seconds": "a while"}', "not the record of the time spent building"),
            (fwd[1].with_suffix(".json"), "[]", "not the record of a layer of uint64")):
        before = path.read_text()
        path.write_text(text)
        _resume_refused(tmp_path, path, match)
        path.write_text(before)
    arr = np.load(fwd[1])
    np.save(fwd[1], arr[:-1])  # a key dropped (a successor would be missing)
    _resume_refused(tmp_path, fwd[1], r"holds uint64 \(\d+,\), not the uint64 \(\d+,\) expected")
    np.save(fwd[1], arr.astype(np.float64))  # what gave numba's TypingError
    _resume_refused(tmp_path, fwd[1], r"holds float64")
    building._save_layer(fwd[1], arr[::-1].copy())  # out of order, its record rewritten to match
    _resume_refused(tmp_path, fwd[1], r"key 0x[0-9a-f]+ at index 1 is not above the key before it")
    building._save_layer(fwd[1], arr)
    build(SPEC, tmp_path)  # mended: it resumes
    store.load(SPEC, tmp_path, verify=True)


def test_build__a_stopped_build_of_the_older_layout_starts_again(tmp_path, built):
    work = _stopped(tmp_path, 2)
    for record in work.glob("*/L*.json"):
        record.unlink()  # as an older version left it: layer files without records
    (work / "spec.json").write_text(json.dumps(SPEC.describe()))
    build(SPEC, tmp_path)
    assert store.load(SPEC, tmp_path).meta["files"] == store.load(SPEC, built).meta["files"]


def test_build__two_builds_into_one_folder_are_locked_out(tmp_path):
    folder = tmp_path / NAME
    with hold_run(folder), pytest.raises(ValueError, match=rf"table {NAME} is being built in {folder} by "
                                         rf"another process \(pid {os.getpid()}\); wait for it to finish"):
        build(SPEC, tmp_path)
    (folder / ".keys.npy.tmp").write_bytes(b"left by a killed build")
    build(SPEC, tmp_path)
    assert not (folder / ".keys.npy.tmp").exists()
    first = store.load(SPEC, tmp_path).meta["files"]
    build(SPEC, tmp_path, force=True)  # --force keeps the lock file it holds
    assert (folder / ".lock").is_file() and store.load(SPEC, tmp_path).meta["files"] == first


# ---- folders and messages ---------------------------------------------------------------------------


def test_disk_check__sizes_in_words_and_what_is_really_wrong(tmp_path, monkeypatch):
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage._replace(free=0))
    with pytest.raises(ValueError, match=r"table 442-32 needs about 18.0 MiB of disk in .*, and 0 bytes is "):
        check_resources("442-32", tmp_path / "t")
    monkeypatch.undo()
    real = os.statvfs

    class ReadOnly:
        def __init__(self, st):
            self.f_flag, self.f_blocks = os.ST_RDONLY, st.f_blocks

    monkeypatch.setattr(os, "statvfs", lambda p: ReadOnly(real(p)))
    with pytest.raises(ValueError, match=rf"cannot be built in {tmp_path / 't'}: {tmp_path} is on a "
                       "read-only file system; choose another folder with --dir"):
        check_resources("442-32", tmp_path / "t")
    monkeypatch.undo()
    if sys.platform.startswith("linux"):
        with pytest.raises(ValueError, match=r"/proc is on a (file system that stores no files|read-only)"):
            check_resources("442-32", "/proc")


def test_dir__a_dangling_link_a_path_under_a_file_and_a_non_path_are_named(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(endgame, "_LOADED", {})
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "gone")
    afile = tmp_path / "afile"
    afile.write_text("x")
    gone = f"is a symlink to {tmp_path / 'gone'}, which does not exist"
    for d, match in ((link, f"--dir {link}: {link} {gone}"), (link / "sub", f"{link} {gone}"),
                     (afile / "sub", f"--dir {afile / 'sub'} is under {afile}, a file, not a folder")):
        for action in ("build", "list", "verify"):
            assert main(["tables", action, "442-32", "--dir", str(d), "--no-progress"]) == 2
            assert match in capsys.readouterr().err
        with pytest.raises(ValueError, match=match.replace("--dir", "tables_dir")):
            make_agent("endgame", tables_dir=str(d))
    with pytest.raises(TypeError, match=r"tables_dir=5 must be a path \(the folder the tables are built "):
        make_agent("endgame", tables_dir=5)
    with pytest.raises(ValueError, match="tables_dir is empty"):
        make_agent("endgame", tables_dir="")
