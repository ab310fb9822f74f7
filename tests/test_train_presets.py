"""Every trainer's presets: a valid config each, one line of help each, listed by ``train NAME --help``."""

from __future__ import annotations

import pytest

from ai2048.cli import main
from ai2048.cli._common import parse_value
from ai2048.cli.train import set_example
from ai2048.train import TRAINERS, get_trainer
from ai2048.train.config import config_help, make_config

TORCH_TRAINERS = {"dqn", "qnet", "policy", "lazyzero"}


def _trainer(name: str):
    if name in TORCH_TRAINERS:
        pytest.importorskip("torch")
    return get_trainer(name)


@pytest.mark.parametrize("name", sorted(TRAINERS))
def test_presets__each_builds_a_config_and_has_one_line_of_help(name: str) -> None:
    t = _trainer(name)
    assert t.presets, f"{name} has no presets"
    assert set(t.preset_help or {}) == set(t.presets)
    for preset, text in (t.preset_help or {}).items():
        assert text.strip() and "\n" not in text, preset
        make_config(t.config_cls, t.presets, preset)


@pytest.mark.parametrize("name", sorted(TRAINERS))
def test_config__every_option_has_one_line_of_help(name: str) -> None:
    helps = config_help(_trainer(name).config_cls)
    missing = [k for k, text in helps.items() if not text.strip() or "\n" in text]
    assert not missing, f"{name}: options without one line of help: {missing}"


@pytest.mark.parametrize("name", sorted(TRAINERS))
def test_train_help__lists_every_preset_with_its_line(name: str, capsys) -> None:
    t = _trainer(name)
    with pytest.raises(SystemExit) as e:
        main(["train", name, "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "presets (--preset NAME):" in out
    for preset, text in (t.preset_help or {}).items():
        line = next(ln for ln in out.splitlines() if ln.strip().startswith(preset + " "))
        assert text in line


@pytest.mark.parametrize("name", sorted(TRAINERS))
def test_train_help__set_example_names_a_real_key_that_the_trainer_takes(name: str, capsys, tmp_path) -> None:
    """The ``--set`` help's example is one of this trainer's keys (it used to say ``depth=3``, which
    no trainer has), and the example as written is accepted."""
    t = _trainer(name)
    with pytest.raises(SystemExit):
        main(["train", name, "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    example = set_example(t)
    assert f"e.g. --set {example} (repeatable)" in help_text
    key, _, value = example.partition("=")
    assert key in config_help(t.config_cls)
    make_config(t.config_cls, **{key: parse_value(value)})


def test_dqn__seed000_code_and_text_defaults_presets() -> None:
    pytest.importorskip("torch")
    from ai2048.train.dqn import PRESETS, DQNConfig

    code = make_config(DQNConfig, PRESETS, "seed000_code_defaults")
    text = make_config(DQNConfig, PRESETS, "seed000_text_defaults")
    assert (code.gamma, code.eps_start, code.eps_end, code.tau, code.exploration) == (
        0.9995,
        0.7,
        0.02,
        5e-5,
        "torch_version",
    )
    assert (text.gamma, text.eps_start, text.eps_end, text.tau, text.exploration) == (
        0.99,
        1.0,
        0.01,
        1e-3,
        "lai_robbins",
    )
    assert code.batch_size == text.batch_size == 128 and code.net == text.net == "conv"


@pytest.mark.parametrize("override", [["--set", "alpha=0.5"], ["--alpha", "0.5"]])
def test_resume__the_creating_command_with_a_preset_and_overrides_is_taken(override, tmp_path) -> None:
    """Before: `train ntuple --preset tc --set alpha=0.5 --out R`, stopped, then the same command plus
    --resume was refused ("was not made with --preset tc (alpha: run 0.5 vs preset 1.0)")."""
    import argparse
    import dataclasses
    import json

    from ai2048.cli import check
    from ai2048.cli import train as cli_train
    from ai2048.train.run import write_meta

    out = tmp_path / "run"
    argv = ["train", "ntuple", "--preset", "tc", *override, "--out", str(out)]
    _, _, config = cli_train.check(argparse.Namespace(trainer="ntuple", rest=argv[2:]))
    out.mkdir()
    (out / "config.json").write_text(json.dumps(dataclasses.asdict(config)))
    write_meta(out, "ntuple", "ntuple", "interrupted", {"step": 1, "games": 1, "time": 0.0})
    (out / "weights.npz").write_bytes(b"")
    check([*argv, "--resume"])  # the creating command continues its run
    with pytest.raises(ValueError, match=r"not made with --preset tc \(alpha: run 0.5 vs preset 1.0\)"):
        check(["train", "ntuple", "--preset", "tc", "--out", str(out), "--resume"])
