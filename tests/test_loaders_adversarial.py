"""Every loader of a user-named file against hostile and careless input: a clear error naming the file,
fast, in little memory, never a hang.

- a FIFO, a folder or a link to ``/dev/zero`` where a file belongs: refused before it is opened (a
  FIFO blocked ``torch.load`` forever; ``read_json`` said a FIFO "does not exist");
- a JSON number of more than 4300 digits: Python's int limit raised a bare ValueError that named
  no file (records, run metadata, results, metrics, evaluation streams);
- an ``.npz`` whose ``.npy`` header claims a giant array: numpy allocates the claimed shape before it
  reads any data, so a file of a few hundred bytes raised MemoryError (or, below the machine's
  memory, reserved it) instead of a clear error; a member shorter than its header raised numpy's
  "EOF: reading array data" naming no file;
- a compact network (``.ntz``) whose sections decompress to far more than its header allows (an
  lzma/zlib bomb), whose header claims more entries than its patterns, or whose header JSON is nested
  100000 deep (RecursionError escaped).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import threading
import time
import types
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ai2048.checkpoint import read_json, read_jsonl
from ai2048.models import compact
from ai2048.ntuple.network import FORMAT, load_file
from ai2048.ntuple.patterns import parse_patterns, pattern_name
from ai2048.records import GameRecord, RecordError
from ai2048.rules import RULES_VERSION


@contextlib.contextmanager
def fifo(path: Path) -> Iterator[Path]:
    """A FIFO at ``path``; a thread opens its write end for a few seconds so that a loader that opens it
    anyway gets EOF and the test fails instead of hanging."""
    os.mkfifo(path)
    stop = threading.Event()

    def unblock() -> None:
        deadline = time.monotonic() + 20
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)  # fails while nobody reads
            except OSError:
                time.sleep(0.05)
                continue
            os.close(fd)
            return

    t = threading.Thread(target=unblock, daemon=True)
    t.start()
    try:
        yield path
    finally:
        stop.set()
        t.join(timeout=5)


def not_files(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """(kind, path) of a FIFO, a folder and a symlink to /dev/zero, each named like a real file."""
    with fifo(tmp_path / "fifo.json") as f:
        yield "FIFO", f
    (tmp_path / "folder.json").mkdir()
    yield "folder", tmp_path / "folder.json"
    if Path("/dev/zero").exists():
        (tmp_path / "zero.json").symlink_to("/dev/zero")
        yield "/dev/zero", tmp_path / "zero.json"


def test_read_json__fifo_folder_and_dev_zero_are_refused_by_name(tmp_path: Path) -> None:
    seen = []
    for kind, path in not_files(tmp_path):
        seen.append(kind)
        with pytest.raises(ValueError, match="folder|not a regular file") as e:
            read_json(path, "record")
        assert str(path) in str(e.value) and "does not exist" not in str(e.value), kind
        with pytest.raises(RecordError, match=str(path)):
            GameRecord.load(path)
        with pytest.raises(ValueError, match="folder|not a regular file"):
            read_jsonl(path)
    assert "FIFO" in seen and "folder" in seen
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_json(tmp_path / "nope.json")


def test_json__a_number_of_5000_digits_is_a_clear_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "record.json"
    path.write_text('{"seed": ' + "7" * 5000 + "}")
    with pytest.raises(RecordError, match=f"record {path} is not valid JSON"):
        GameRecord.load(path)
    lines = tmp_path / "metrics.jsonl"
    lines.write_text('{"step": 1}\n{"step": ' + "9" * 5000 + '}\n{"step": 3}\n')
    with pytest.raises(ValueError, match=f"{lines}: line 2 is not valid JSON"):
        read_jsonl(lines)
    lines.write_bytes(b'{"step": 1}\n\xff\xfe{"step": 2}\n')
    with pytest.raises(ValueError, match=f"{lines} is not UTF-8 text"):
        read_jsonl(lines)


def test_eval_resume__a_giant_number_in_the_games_file_names_it(tmp_path: Path) -> None:
    from ai2048.evaluate.stream import STREAM_FORMAT, GameStream

    path = tmp_path / "r.games.jsonl"
    path.write_text(json.dumps({"format": STREAM_FORMAT}) + "\n" + '{"index": ' + "1" * 5000 + "}\n{}\n")
    with pytest.raises(ValueError, match=f"{path}: line 2"):
        GameStream(path, {}).load()


def test_plot__a_giant_number_in_metrics_names_the_file(tmp_path: Path) -> None:
    from ai2048.plots.common import PlotInputError
    from ai2048.plots.curves import load_metrics

    (tmp_path / "metrics.jsonl").write_text('{"step": ' + "5" * 5000 + '}\n{"step": 2}\n')
    with pytest.raises(PlotInputError, match="metrics.jsonl"):
        load_metrics(tmp_path)


def test_serve_models_dir__a_meta_json_nested_100000_deep_is_skipped(tmp_path: Path) -> None:
    from ai2048.ui.limits import scan_models

    run = tmp_path / "deep"
    run.mkdir()
    (run / "meta.json").write_text("[" * 100000 + "]" * 100000)
    assert "deep" not in scan_models(tmp_path)  # was RecursionError: `ai2048 serve --models` crashed


# torch files


def test_torch_loaders__fifo_folder_and_dev_zero_are_refused_without_opening(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from ai2048.nets.files import load_torch_file
    from ai2048.train.torchrun import load_checkpoint

    for kind, path in not_files(tmp_path):
        t0 = time.monotonic()
        with pytest.raises(ValueError, match="folder|not a regular file") as e:
            load_checkpoint(path, "dqn")  # a FIFO named checkpoint.pt blocked torch.load forever
        assert str(path) in str(e.value), kind
        with pytest.raises(ValueError, match="folder|not a regular file"):
            load_torch_file(path, "ai2048 model file")
        assert time.monotonic() - t0 < 15, kind
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_torch_file(tmp_path / "nope.pt", "ai2048 model file")


def test_model_file__a_spec_naming_a_giant_network_is_refused_before_building(tmp_path: Path) -> None:
    """``n_fc: 10**6`` is a 4 TB Linear layer: building it raised torch's RuntimeError (and a size below
    the machine's memory was allocated and initialised: minutes of swapping) before any check."""
    pytest.importorskip("torch")
    from ai2048.nets.files import load_model, torch_bytes

    run = tmp_path / "run"
    run.mkdir()

    def model(net: object) -> None:
        payload = {"format": 1, "kind": "dqn", "net": net, "state_dict": {}}
        (run / "model.pt").write_bytes(torch_bytes(payload))

    giant = [{"name": "conv", "n_fc": 10**6}, {"name": "bigconv", "out_channels": 10**4, "planes": 10**6}]
    for spec in giant:
        model(spec)
        with pytest.raises(ValueError, match="does not fit network") as e:
            load_model(run, "dqn")
        assert "model.pt" in str(e.value)
    model(["conv"])
    with pytest.raises(ValueError, match="not a spec"):
        load_model(run, "dqn")


def test_lazyzero__a_config_naming_a_giant_network_is_refused_before_building(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from ai2048.agents.lazyzero import load_lazyzero_network
    from ai2048.nets.files import torch_bytes

    run = tmp_path / "lz"
    run.mkdir()
    config = {"channels": 10**6, "blocks": 2, "head_channels": 1, "head_blocks": 1, "kernel_size": 3,
              "policy_fc": 1, "value_fc": 1, "value_activation": "none"}
    (run / "config.json").write_text(json.dumps(config))
    (run / "model.pt").write_bytes(torch_bytes({"w": torch.zeros(1)}))
    with pytest.raises(ValueError, match="does not fit the network") as e:
        load_lazyzero_network(run)
    assert "model.pt" in str(e.value)


def test_ntuple_and_compact_loaders__fifo_folder_and_dev_zero_are_named_not_missing(tmp_path: Path) -> None:
    for kind, path in not_files(tmp_path):
        with pytest.raises(ValueError, match="folder|not a regular file") as e:
            load_file(path)
        assert str(path) in str(e.value), kind
        with pytest.raises(ValueError, match="folder|not a regular file"):
            compact.load(path)
    with pytest.raises(FileNotFoundError, match="weights file .* does not exist"):
        load_file(tmp_path / "nope.npz")


# n-tuple weights (.npz)

PATTERNS = pattern_name(parse_patterns("01,23"))  # two 2-tuples: 2 x 256 weights a stage


def npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def fake_npy(descr: str, shape: tuple[int, ...], data: bytes = b"") -> bytes:
    """A ``.npy`` whose header claims ``shape`` but which holds only ``data``."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue() + data


def weights_npz(path: Path, compress: bool = True, **override: bytes) -> Path:
    members = {
        "format": npy(np.array(FORMAT)),
        "rules_version": npy(np.array(RULES_VERSION, dtype=np.int64)),
        "patterns": npy(np.array(PATTERNS)),
        "stages": npy(np.zeros(0, dtype=np.int64)),
        "kind": npy(np.array("after")),
        "w": npy(np.arange(512, dtype=np.float32)),
        **override,
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED) as zf:
        for name, data in members.items():
            zf.writestr(f"{name}.npy", data)
    return path


def test_ntuple_weights__a_valid_tiny_file_loads(tmp_path: Path) -> None:
    net, _ = load_file(weights_npz(tmp_path / "ok.npz"))
    assert net.patterns == PATTERNS and net.w.tolist() == list(range(512))


@pytest.mark.parametrize(("member", "claim", "message"), [
    ("format", fake_npy("<U1", (2**40,)), "holds format as <U1"),  # 4 TiB of text: MemoryError before
    ("stages", fake_npy("<i8", (2**27,), b"\0" * 64), "holds stages as int64"),  # 1 GiB: reserved before
    ("w", fake_npy("<f4", (2**45,)), "more than this machine.s"),  # 128 TiB: MemoryError before
    ("w", fake_npy("<f4", (2**28,), b"\0" * 64), "does not match its own header"),  # 1 GiB: reserved
    ("w", fake_npy("<f8", (512,), b"\0" * 4096), "does not match its own header"),
    ("w", fake_npy("<f4", (512,), b"\0" * 100), "is corrupt or truncated"),  # numpy's bare "EOF" before
])
def test_ntuple_weights__a_header_claiming_more_than_the_file_holds_is_refused_before_allocating(
    tmp_path: Path, member: str, claim: bytes, message: str
) -> None:
    path = weights_npz(tmp_path / "evil.npz", **{member: claim})
    assert path.stat().st_size < 5000
    with pytest.raises(ValueError, match=message) as e:
        load_file(path)
    assert str(path) in str(e.value)


def test_ntuple_weights__a_network_bigger_than_this_machine_is_refused_before_allocating(
    tmp_path: Path,
) -> None:
    from ai2048.ntuple.network import physical_memory

    size = 64 * 16**7  # 64 tables of 16**7 float32: 64 GiB
    if not 0 < physical_memory() < 4 * size:
        pytest.skip("this OS does not report its memory, or it has more than 64 GiB")
    many = ",".join(["0123456"] * 64)
    path = weights_npz(tmp_path / "huge.npz", patterns=npy(np.array(many)), w=fake_npy("<f4", (size,)))
    with pytest.raises(ValueError, match="more than this machine's") as e:
        load_file(path)
    assert str(path) in str(e.value)


def test_ntuple_weights__thousands_of_tuples_are_refused_before_compiling(tmp_path: Path) -> None:
    """4096 one-cell tuples: a 256 KiB table in a file of a few KiB, whose generated kernels would take
    numba hours to compile (512 tuples took 197 s) the first time the network plays."""
    many = ",".join(["0"] * 4096)
    w = npy(np.zeros(4096 * 16, np.float32))
    path = weights_npz(tmp_path / "many.npz", patterns=npy(np.array(many)), w=w)
    assert path.stat().st_size < 10_000
    with pytest.raises(ValueError, match="4096 tuples; at most 64") as e:
        load_file(path)
    assert str(path) in str(e.value)


def test_ntuple_weights__a_zip_bomb_header_member_is_refused_without_inflating(tmp_path: Path) -> None:
    # "kind" as 64 MiB of text that deflates to ~64 KiB: refused from its header, not inflated
    bomb = fake_npy("<U1", (16 * 2**20,), b"\0" * (64 * 2**20))
    path = weights_npz(tmp_path / "bomb.npz", kind=bomb)
    assert path.stat().st_size < 1 << 20
    with pytest.raises(ValueError, match="holds kind as <U1"):
        load_file(path)


# compact networks (.ntz)


def save(path: Path, sections: dict[str, np.ndarray]) -> None:
    with open(path, "wb") as f:  # (np.savez appends ".npz" to a path)
        np.savez(f, **sections)


def tiny_compact(path: Path, codec: str = "zlib", **header: object) -> tuple[Path, dict[str, np.ndarray]]:
    """A valid compact file of a two 2-tuple network (512 weights, a few touched), header overridable."""
    w = np.zeros(512, np.float32)
    w[[3, 70, 300]] = [1.5, -2.0, 8.0]
    net = types.SimpleNamespace(w=w, stages=(), patterns=PATTERNS, kind="after")
    sections = compact.encode(net, step=2.0**-6, codec=codec)  # type: ignore[arg-type]
    if header:
        h = json.loads(str(sections["header"]))
        h.update(header)
        sections["header"] = np.array(json.dumps(h))
    save(path, sections)
    return path, sections


def test_compact__a_valid_tiny_file_decodes(tmp_path: Path) -> None:
    path, _ = tiny_compact(tmp_path / "ok.ntz")
    _, w, _, _ = compact.decode(path)
    assert w[[3, 70, 300]].tolist() == [1.5, -2.0, 8.0] and np.count_nonzero(w) == 3


@pytest.mark.parametrize("codec", ["zlib", "lzma"])
def test_compact__a_decompression_bomb_section_is_refused_at_its_header_size(
    tmp_path: Path, codec: str
) -> None:
    path, sections = tiny_compact(tmp_path / "bomb.ntz", codec=codec)
    zeros = bytes(16 * 2**20)  # 16 MiB of zeros: 16 KiB as zlib, a few KiB as lzma (a 4 GiB one fits 1 MiB)
    sections["codes"] = np.frombuffer(compact.CODECS[codec][0](zeros), np.uint8)
    save(path, sections)
    assert path.stat().st_size < 1 << 20
    with pytest.raises(compact.ModelFileError, match="section codes decompresses to more than") as e:
        compact.decode(path)
    assert str(path) in str(e.value)


def test_compact__a_truncated_section_is_a_clear_error(tmp_path: Path) -> None:
    path, sections = tiny_compact(tmp_path / "cut.ntz")
    sections["index1"] = sections["index1"][:-3]
    save(path, sections)
    with pytest.raises(compact.ModelFileError, match=str(path)):
        compact.decode(path)


@pytest.mark.parametrize(("header", "message"), [
    ({"entries": 2**32 - 16, "fill": 1.0}, "sections that disagree|no compact network file has"),  # 16 GiB
    ({"entries": 2**40}, "no compact network file has"),
    ({"touched": 10**12}, "no compact network file has"),
    ({"checks": 2**40}, "no compact network file has"),
    ({"entries": "512"}, "incomplete header"),
    ({"fill": float("nan")}, "fill nan"),  # every weight decoded NaN before
    ({"step": float("inf")}, "step inf"),
    ({"step": 0.0}, "step 0.0"),
    ({"exact": -1}, "incomplete header"),
])
def test_compact__a_header_claiming_giant_counts_is_refused_before_allocating(
    tmp_path: Path, header: dict, message: str
) -> None:
    path, _ = tiny_compact(tmp_path / "evil.ntz", **header)
    with pytest.raises(compact.ModelFileError, match=message) as e:
        compact.decode(path)
    assert str(path) in str(e.value)


def test_compact__an_array_header_claiming_more_than_the_file_is_refused(tmp_path: Path) -> None:
    path, sections = tiny_compact(tmp_path / "evil.ntz")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, arr in sections.items():
            zf.writestr(f"{name}.npy", npy(arr) if name != "check_moves" else fake_npy("|u1", (2**44,)))
    path.write_bytes(buf.getvalue())
    with pytest.raises(compact.ModelFileError, match="claims uint8"):
        compact.decode(path)


def test_compact__a_header_json_nested_100000_deep_is_a_clear_error(tmp_path: Path) -> None:
    path, sections = tiny_compact(tmp_path / "deep.ntz")
    sections["header"] = np.array("[" * 100000 + "]" * 100000)
    save(path, sections)
    with pytest.raises(compact.ModelFileError, match=str(path)):
        compact.decode(path)


def test_ntuple_agent__a_user_named_ntz_bomb_is_refused(tmp_path: Path) -> None:
    from ai2048.agents.ntuple import load_ntuple_network

    path, sections = tiny_compact(tmp_path / "bomb.ntz")
    sections["index2"] = np.frombuffer(zlib.compress(bytes(32 * 2**20), 9), np.uint8)
    save(path, sections)
    with pytest.raises(compact.ModelFileError, match="section index2 decompresses to more than"):
        load_ntuple_network(path)


def test_compact__a_file_bigger_than_its_card_says_is_refused_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, _ = tiny_compact(tmp_path / "net.ntz")
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail("read a file its card already refuses"))
    with pytest.raises(compact.ModelFileError, match="bytes but its card says 10"):
        compact.load(path, size=10)


@pytest.mark.parametrize(("file", "network"), [
    ({"name": "net.ntz", "bytes": None, "sha256": 5}, {}),  # sha256.lower(): AttributeError before
    ({"name": "net.ntz", "bytes": "12x", "sha256": "0" * 64}, {}),  # int("12x"): no file named
    ("net.ntz", {}),  # file["sha256"] on a string: TypeError
    ({"name": "net.ntz", "bytes": 1, "sha256": "0" * 64}, ["4x6"]),
])
def test_model_card__wrong_types_beside_a_user_named_ntz_name_the_card(tmp_path: Path, file: object,
                                                                       network: object) -> None:
    from ai2048.models.card import CARD_FORMAT
    from ai2048.models.store import load_path

    path, _ = tiny_compact(tmp_path / "net.ntz")
    if isinstance(file, dict) and file["bytes"] is None:
        file = {**file, "bytes": path.stat().st_size}
    card = {"format": CARD_FORMAT, "name": "net", "file": file, "network": network, "rules": {},
            "training": {}}
    (tmp_path / "net.json").write_text(json.dumps(card))
    with pytest.raises(ValueError, match="model card .*net.json"):
        load_path(path)


def _game_stream_load(run: Path) -> None:
    from ai2048.evaluate.stream import GameStream

    GameStream(run / "r.games.jsonl", {}).load()


def _run_agent_name(run: Path) -> None:
    from ai2048.agents.base import run_agent_name

    run_agent_name(run)


def _load_model(run: Path) -> None:
    pytest.importorskip("torch")
    from ai2048.nets.files import load_model

    load_model(run, "dqn")


def _load_metrics(run: Path) -> None:
    from ai2048.plots.curves import load_metrics

    load_metrics(run)


def _saved_config(run: Path) -> None:
    from ai2048.train.run import saved_config

    saved_config(run, "ntuple", "weights.npz")


def _pack_read_run(run: Path) -> None:
    from ai2048.models.pack import read_run

    read_run(run)


@pytest.mark.parametrize(("name", "load"), [
    ("r.games.jsonl", _game_stream_load),  # eval --resume
    ("meta.json", _run_agent_name),  # eval RUN_DIR
    ("model.pt", _load_model),  # the torch agents
    ("metrics.jsonl", _load_metrics),  # plot RUN_DIR
    ("config.json", _saved_config),  # train --resume
    ("config.json", _pack_read_run),  # models pack
])
@pytest.mark.parametrize("kind", ["FIFO", "folder", "/dev/zero"])
def test_run_files__a_fifo_folder_or_device_in_a_file_s_place_is_named_not_missing(
        tmp_path: Path, name: str, load, kind: str) -> None:
    """Before: each of these said the file "does not exist" (or the run "has no" it) when a FIFO, a folder
    or a device stood in its place."""
    run = tmp_path / "run"
    run.mkdir()
    path = run / name
    with contextlib.ExitStack() as stack:
        if kind == "FIFO":
            stack.enter_context(fifo(path))
        elif kind == "folder":
            path.mkdir()
        elif Path("/dev/zero").exists():
            path.symlink_to("/dev/zero")
        else:
            pytest.skip("no /dev/zero")
        with pytest.raises(ValueError) as e:
            load(run)
    message = str(e.value)
    assert str(path) in message and "does not exist" not in message and "has no" not in message, message
