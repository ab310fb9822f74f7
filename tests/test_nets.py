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
        # the early fc variants (seed 000 history), input 12 * 16 one-hot: layer sizes from the seed's code
        ({"name": "small_qnet", "planes": 12, "n_neurons": 128}, 192 * 128 + 128 + 128 * 4 + 4),
        ({"name": "dqn_3ls_128", "planes": 12}, 41_732),
        (
            {"name": "dqn_4ls_256_bn", "planes": 12},
            192 * 256 + 256 + 2 * (256 * 256 + 256) + 3 * 512 + 256 * 4 + 4,
        ),
        (
            {"name": "dqn_5ls_bn", "planes": 12, "n_neurons": 256},
            192 * 256 + 256 + 3 * (256 * 256 + 256) + 4 * 512 + 1028,
        ),
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


@pytest.mark.parametrize("net", ["small_qnet", "dqn_3ls_128", "dqn_4ls_256_bn", "dqn_5ls_bn"])
def test_nets__early_fc_variants_build_from_a_dqn_config_and_give_four_values(net):
    from ai2048.train.dqn import DQNConfig

    model = build_net(DQNConfig(net=net, planes=12, fc_neurons=64).net_spec()).eval()
    exps = np.array([[1, 1, 2] + [0] * 13, [11, 12, 13] + [0] * 13], dtype=np.uint8)
    x = model.encode(exps)
    assert x.shape == (2, 12 * 16)
    assert x[1].sum() == 1 + 13  # tiles >= 4096 vanish from 12 planes; 13 empty cells
    assert model(x).shape == (2, 4)
