"""The one reader of torch device names (``ai2048.nets.device.resolve_device``)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from ai2048.nets.device import resolve_device  # noqa: E402


def test_resolve_device__names_and_devices():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device(" CPU ") == torch.device("cpu")
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")


@pytest.mark.parametrize("name", ["gpu0", "tpu", "mps", "", "cuda:x"])
def test_resolve_device__unknown_names_say_which_work(name):
    with pytest.raises(ValueError, match="is not one of 'cpu', 'cuda', 'cuda:N', 'auto'"):
        resolve_device(name)


def test_resolve_device__not_a_name_is_a_type_error():
    with pytest.raises(TypeError, match="device must be a string"):
        resolve_device(3)  # type: ignore[arg-type]


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_resolve_device__cuda_without_cuda_says_how_to_fix():
    with pytest.raises(ValueError, match="torch sees no CUDA device .*use device='cpu' or device='auto'"):
        resolve_device("cuda")
    with pytest.raises(ValueError, match="no CUDA device"):
        resolve_device("cuda:1")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_resolve_device__a_cuda_index_past_the_last_device_is_refused():
    with pytest.raises(ValueError, match="does not exist"):
        resolve_device(f"cuda:{torch.cuda.device_count()}")
