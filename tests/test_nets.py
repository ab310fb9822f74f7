"""Seed networks: exact parameter counts, one-hot planes against seed 000's known answers, specs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ai2048.nets import build_net, count_params, onehot_planes  # noqa: E402

VECTORS = Path(__file__).parent / "data" / "seed_vectors.json"


@pytest.mark.parametrize(
    ("spec", "params"),
    [
        ({"name": "conv", "planes": 12}, 21_741),
        ({"name": "bigconv", "planes": 12}, 211_216),
        ({"name": "fc", "planes": 12}, 41_732),
        ({"name": "seed003", "outputs": 1}, 6_577),
        ({"name": "seed003", "outputs": 4}, 6_604),
        ({"name": "policy", "hidden_j": 200, "hidden_k": 100}, 23_904),
        ({"name": "policy", "hidden_j": 50, "hidden_k": 100}, 6_354),
    ],
)
def test_nets__parameter_counts_match_the_seeds(spec, params):
    assert count_params(build_net(spec)) == params


def test_nets__sixteen_planes_is_the_default_and_widens_the_first_layer():
    net = build_net({"name": "bigconv"})
    assert net.planes == 16
    assert net.fc.in_features == 15 * 4


@pytest.mark.parametrize("name", ["conv", "bigconv", "fc"])
def test_nets__q_networks_map_a_batch_to_four_values(name):
    net = build_net({"name": name, "planes": 12}).eval()
    exps = np.random.default_rng(0).integers(0, 13, size=(5, 16)).astype(np.uint8)
    assert net(net.encode(exps)).shape == (5, 4)


def _exps_from_values(values):
    return np.array([[0 if v == 0 else int(v).bit_length() - 1 for v in values]], dtype=np.uint8)


def test_nets__onehot_planes_match_seed000_binary_tensor():
    boards = json.loads(VECTORS.read_text())["heuristic_vectors"]["boards"]
    checked = 0
    for b in boards:
        planes = b.get("seed000_binary_tensor_nonzero_planes")
        if planes is None:
            continue
        got = onehot_planes(_exps_from_values(b["board_values_rowmajor"]), 12)[0].reshape(12, 16).numpy()
        want = np.zeros((12, 16), dtype=np.float32)
        for plane, cells in planes.items():
            want[int(plane)] = cells
        np.testing.assert_array_equal(got, want, err_msg=b["name"])
        checked += 1
    assert checked >= 3


def test_nets__twelve_planes_drop_4096_but_sixteen_keep_it():
    exps = np.zeros((1, 16), dtype=np.uint8)
    exps[0, 5] = 12  # a 4096 tile
    assert onehot_planes(exps, 12)[0, :, 1, 1].sum() == 0
    assert onehot_planes(exps, 16)[0, 12, 1, 1] == 1


def test_nets__policy_softmax_rows_sum_to_one_and_use_seed002_transform():
    net = build_net({"name": "policy"}).eval()
    exps = np.array([[0] * 15 + [11]], dtype=np.uint8)
    x = net.encode(exps)
    assert x[0, 0].item() == pytest.approx(-0.25)
    assert x[0, 15].item() == pytest.approx(0.75)
    assert net(x).sum().item() == pytest.approx(1.0, abs=1e-6)


def test_nets__seed003_reads_rejects_other_output_counts():
    with pytest.raises(ValueError, match="outputs must be 4"):
        build_net({"name": "seed003", "outputs": 2})


def test_nets__unknown_network_or_argument_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown network 'resnet'"):
        build_net({"name": "resnet"})
    with pytest.raises(ValueError, match="bad arguments for network 'conv'"):
        build_net({"name": "conv", "depth": 3})
