"""Option declarations: every trainer field and every agent option is declared once, with a range
its default lies in, and the declaration is what refuses a bad value."""

from __future__ import annotations

import dataclasses

import pytest

from ai2048.train import TRAINERS, get_trainer
from ai2048.train.config import config_options


@pytest.mark.parametrize("name", sorted(TRAINERS))
def test_trainer_options__every_field_is_declared_and_its_default_is_allowed(name: str) -> None:
    cls = get_trainer(name).config_cls
    options = config_options(cls)
    fields = dataclasses.fields(cls)
    assert [f.name for f in fields] == list(options)
    for f in fields:
        assert options[f.name].help, f.name
        assert options[f.name].check(f.name, f.default) == f.default


@pytest.mark.parametrize("name", sorted(TRAINERS))
def test_trainer_options__a_value_past_a_declared_bound_is_refused_naming_the_field(name: str) -> None:
    cls = get_trainer(name).config_cls
    for key, opt in config_options(cls).items():
        outside = []
        if opt.lo is not None:
            outside.append(opt.lo if opt.lo_open else opt.lo - 1)
        if opt.hi is not None:
            outside.append(opt.hi if opt.hi_open else opt.hi + 1)
        if opt.choices:
            outside.append("no such choice")
        for bad in outside:
            value = int(bad) if opt.kind == "whole" and not isinstance(bad, str) else bad
            with pytest.raises(ValueError, match=f"^{key}=.* (must be|is not one of)"):
                cls(**{key: value})


def test_trainer_help__states_each_declared_range(capsys) -> None:
    from ai2048.cli import main

    with pytest.raises(SystemExit):
        main(["train", "ntuple", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "(default: 1; a whole number in 1..64)" in out  # --workers
    assert "one of 'after', 'before'" in out  # --state
