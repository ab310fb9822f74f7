"""The generated kernels ask numba for no reference counting only where numba offers the option."""

from __future__ import annotations

import pytest

from ai2048.ntuple import codegen


@pytest.mark.parametrize("offered", [True, False])
def test_feature_source__hot_options_follow_numba(monkeypatch: pytest.MonkeyPatch, offered: bool) -> None:
    monkeypatch.setattr(codegen, "_NO_NRT_OPTION", offered)
    source = codegen.feature_source([(0, 1, 2, 3)])
    hot = [line for line in source.splitlines() if line.startswith("HOT")]
    assert hot == (['HOT: dict = {"_nrt": False}'] if offered else ["HOT: dict = {}"])
    compile(source, "<features>", "exec")  # valid Python either way

