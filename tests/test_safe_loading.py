"""Model files never run code: a crafted pickle is refused by every loader, clearly, without running.

Regression for issue 18's first security defect: the DQN-family loaders called
``torch.load(weights_only=False)``, so a ``model.pt`` whose pickle calls a function ran it the moment
``ai2048 eval RUN`` (or the web app) loaded it.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ai2048.agents import load_agent  # noqa: E402
from ai2048.cli import main  # noqa: E402
from ai2048.nets.files import from_plain, load_model, load_torch_file, to_plain, torch_bytes  # noqa: E402
from ai2048.train.torchrun import load_checkpoint  # noqa: E402


class Payload:
    """Unpickling this opens (creates) ``marker``: proof that the pickle's code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):  # noqa: ANN204
        return (open, (self.marker, "w"))


def evil_file(path: Path, marker: Path, **plain: object) -> Path:
    torch.save(
        {
            "format": 1,
            "kind": "dqn",
            "net": {"name": "conv"},
            "state_dict": {},
            "x": Payload(marker),
            **plain,
        },
        path,
    )
    return path


def evil_run(tmp_path: Path, agent: str) -> tuple[Path, Path]:
    run, marker = tmp_path / "downloaded-run", tmp_path / "PWNED"
    run.mkdir()
    (run / "meta.json").write_text(json.dumps({"agent": agent, "trainer": agent}))
    evil_file(run / "model.pt", marker)
    return run, marker


def test_the_payload_is_real__an_unsafe_load_runs_it(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    torch.load(evil_file(tmp_path / "evil.pt", marker), weights_only=False)
    assert marker.exists()  # so the tests below would notice a loader that unpickles code


@pytest.mark.parametrize("agent", ["dqn", "qnet", "policy"])
def test_load_agent__refuses_a_pickle_payload_without_running_it(tmp_path: Path, agent: str) -> None:
    run, marker = evil_run(tmp_path, agent)
    with pytest.raises(
        ValueError, match=r"is not a safe ai2048 model file: it holds Python objects other than tensors"
    ):
        load_agent(run)
    assert not marker.exists()


def test_eval_cli__refuses_a_pickle_payload_without_running_it(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    run, marker = evil_run(tmp_path, "dqn")
    assert main(["eval", str(run), "--games", "1"]) == 2
    err = capsys.readouterr().err
    assert "not a safe ai2048 model file" in err and "never runs code" in err
    assert "Traceback" not in err
    assert not marker.exists()


def test_checkpoint_and_lazyzero_loaders__refuse_the_payload(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    path = evil_file(tmp_path / "checkpoint.pt", marker, trainer="dqn")
    with pytest.raises(ValueError, match="not a safe ai2048 checkpoint"):
        load_checkpoint(path, "dqn")
    with pytest.raises(ValueError, match="not a safe ai2048 model file"):
        load_model(path, "dqn")
    run = tmp_path / "lz"
    run.mkdir()
    (run / "config.json").write_text(
        json.dumps(
            {
                k: 1
                for k in (
                    "channels",
                    "blocks",
                    "head_channels",
                    "head_blocks",
                    "kernel_size",
                    "policy_fc",
                    "value_fc",
                )
            }
            | {"value_activation": "none"}
        )
    )
    evil_file(run / "model.pt", marker)
    from ai2048.agents.lazyzero import load_lazyzero_network

    with pytest.raises(ValueError, match="not a safe LazyZero"):
        load_lazyzero_network(run)
    assert not marker.exists()


def test_ntuple_weights__an_object_array_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    arr = np.empty(1, dtype=object)
    arr[0] = Payload(marker)
    np.savez(
        tmp_path / "weights.npz",
        **{k: arr for k in ("format", "rules_version", "patterns", "stages", "kind", "w")},
    )
    from ai2048.ntuple.network import load_file

    with pytest.raises(
        ValueError, match="weights.npz holds pickled Python objects, which ai2048 never loads"
    ):
        load_file(tmp_path / "weights.npz")
    assert not marker.exists()


def test_torch_bytes__numpy_and_dataclasses_round_trip_as_plain_data(tmp_path: Path) -> None:
    import dataclasses

    @dataclasses.dataclass
    class Point:
        x: int
        y: float

    state = {
        "boards": np.array([2**64 - 1, 0x1234], dtype=np.uint64), "mask": np.array([[True, False]]),
        "f32": np.linspace(0, 1, 5, dtype=np.float32), "i8": np.arange(-3, 3, dtype=np.int8),
        "scalar": np.float64(2.5), "count": np.int64(7), "pending": [[(np.uint64(5), 1, 0.5)]],
        "point": Point(1, 2.0), "tensor": torch.arange(3), "text": "x", "nothing": None,
    }
    path = tmp_path / "state.pt"
    path.write_bytes(torch_bytes(state))
    # plain data only: torch's own weights-only loader reads it with no allowlist
    assert isinstance(torch.load(path, weights_only=True)["boards"]["__ndarray__"], torch.Tensor)
    back = load_torch_file(path, "test file")
    for key in ("boards", "mask", "f32", "i8"):
        assert back[key].dtype == state[key].dtype and np.array_equal(back[key], state[key])
    assert back["scalar"] == 2.5 and type(back["scalar"]) is float and back["count"] == 7
    assert back["pending"] == [[(5, 1, 0.5)]] and back["point"] == {"x": 1, "y": 2.0}
    assert torch.equal(back["tensor"], torch.arange(3)) and back["text"] == "x" and back["nothing"] is None
    assert from_plain(to_plain(back))["boards"].tolist() == state["boards"].tolist()
    with pytest.raises(TypeError, match="numbers and bools only"):
        to_plain({"bad": np.array(["a"], dtype=object)})


def test_old_checkpoints_holding_numpy_arrays__still_load(tmp_path: Path) -> None:
    buf = io.BytesIO()
    torch.save({"format": 1, "trainer": "dqn", "games": {"boards": np.array([3, 4], dtype=np.uint64)}}, buf)
    (tmp_path / "old.pt").write_bytes(buf.getvalue())
    ckpt = load_checkpoint(tmp_path / "old.pt", "dqn")
    assert ckpt["games"]["boards"].dtype == np.uint64 and ckpt["games"]["boards"].tolist() == [3, 4]


def test_torn_file__a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "model.pt"
    path.write_bytes(torch_bytes({"format": 1})[:20])
    with pytest.raises(ValueError, match=r"model.pt is not a readable ai2048 model file"):
        load_model(path, "dqn")
