"""Option declarations: every trainer field and every agent option is declared once, with a range
its default lies in, and the declaration is what refuses a bad value; an agent option's help and its
web range are read from the same declaration."""

from __future__ import annotations

import dataclasses
import inspect
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from ai2048.agents.options import REQUIRED
from ai2048.checks import Option, field_options
from ai2048.train import TRAINERS, get_trainer


@pytest.mark.parametrize("name", sorted(TRAINERS))
def test_trainer_options__every_field_is_declared_and_its_default_is_allowed(name: str) -> None:
    cls = get_trainer(name).config_cls
    options = field_options(cls)
    fields = dataclasses.fields(cls)
    assert [f.name for f in fields] == list(options)
    for f in fields:
        assert options[f.name].help, f.name
        assert options[f.name].check(f.name, f.default) == f.default


@pytest.mark.parametrize("name", sorted(TRAINERS))
def test_trainer_options__a_value_past_a_declared_bound_is_refused_naming_the_field(name: str) -> None:
    cls = get_trainer(name).config_cls
    for key, opt in field_options(cls).items():
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


# ---------------------------------------------------------------- agent options


def _package_agents() -> list[str]:
    """The agents ai2048 registers itself (tests register more of their own)."""
    from ai2048.agents import available
    from ai2048.agents.base import _spec

    return sorted(n for n in available() if _spec(n).target.startswith("ai2048."))


def _outside(opt: Option) -> list[Any]:
    """Values just past each bound an option declares, and a value none of its choices is."""
    out: list[Any] = []
    if opt.lo is not None:
        out.append(opt.lo if opt.lo_open else opt.lo - 1)
    if opt.hi is not None:
        out.append(opt.hi if opt.hi_open else opt.hi + 1)
    if opt.kind == "whole":
        out = [int(v) for v in out] + [1.5]
    if opt.kind in ("choice", "flag", "seed"):
        out.append("no such choice")
    if opt.kind == "number":
        out.append(float("nan"))
    return out


@pytest.mark.parametrize("name", _package_agents())
def test_agent_options__every_parameter_is_declared_and_its_default_is_allowed(name: str) -> None:
    from ai2048.agents import config_keys
    from ai2048.agents.base import options_of

    keys, options = config_keys(name), options_of(name)
    assert list(options) == list(keys)
    for key, default in keys.items():
        assert options[key].help and options[key].source, key
        if default is not REQUIRED:
            assert options[key].check(key, default) == default, key


@pytest.mark.parametrize("name", _package_agents())
def test_agent_options__a_value_past_a_declared_bound_is_refused_before_any_work(name: str, tmp_path) -> None:
    """By ``check_agent_config`` (the command line's check) and by the factory itself, before it reads a
    network or a table: the message names the option, the value and what it must be."""
    from ai2048.agents import config_keys
    from ai2048.agents.base import _spec, check_agent_config, options_of

    required = {k: str(tmp_path / "no-run") for k, d in config_keys(name).items() if d is REQUIRED}
    factory = _spec(name).factory()
    for key, opt in options_of(name).items():
        for bad in _outside(opt):
            config = {**required, key: bad}
            with pytest.raises(ValueError, match=f"^{key}=.* (must be|is not one of)"):
                check_agent_config(name, config)
            with pytest.raises(ValueError, match=f"^{key}=.* (must be|is not one of)"):
                factory(**config)


def test_agent_help__is_the_declaration() -> None:
    from ai2048.agents.base import option_help, options_of

    for name in _package_agents():
        options = options_of(name)
        for row in option_help(name):
            opt = options[row["key"]]
            assert (row["what"], row["source"]) == (opt.help, opt.source)
            assert row["allowed"] == opt.describe() + (f" ({opt.why})" if opt.why else "")


def test_agent_help__is_written_once_not_again_in_a_docstring() -> None:
    """An agent factory's docstring does not list its options (``Args:``): their help is the declaration,
    and a second copy drifts from it."""
    from ai2048.agents.base import _spec

    for name in _package_agents():
        factory = _spec(name).factory()
        init = factory.__init__ if isinstance(factory, type) else None
        for doc in (factory.__doc__, init.__doc__ if init else ""):
            assert "Args:" not in (doc or ""), f"{name}: drop the Args: block, its options say it"


def test_web_settings__are_the_declared_web_ranges_inside_the_declared_ones() -> None:
    """Every setting the web app offers is an option declared with ``web=``, its range is the declared
    web range (values at its bounds taken, values past them refused), and the declaration takes every
    value the web does; an agent with a web option is offered by the web."""
    from ai2048.agents.base import options_of
    from ai2048.ui.limits import (
        MODEL_AGENT_NAMES,
        MODEL_SETTINGS,
        SEED_MAX,
        WEB_AGENT_NAMES,
        WEB_AGENTS,
        WEB_DEFAULTS,
        check_setting,
    )

    offered = {**WEB_AGENTS, **MODEL_SETTINGS}
    assert set(offered) == set(WEB_AGENT_NAMES) | set(MODEL_AGENT_NAMES)
    for name in _package_agents():
        web = [k for k, o in options_of(name).items() if o.web is not None]
        assert name in offered or not web, name
        if name not in offered:
            continue
        assert list(offered[name]) == web, name
        for key, setting in offered[name].items():
            declared = options_of(name)[key]
            w = declared.web_option()
            assert w is not None and declared.contains(w), (name, key)
            if w.kind == "seed":  # the web's seeds: at most 2**63-1, or null
                assert setting == dataclasses.replace(w, hi=SEED_MAX, none=""), (name, key)
                continue
            assert setting == w, (name, key)  # the declaration itself, read directly
            if w.kind in ("whole", "number"):
                inside = [b for b, open_ in ((w.lo, w.lo_open), (w.hi, w.hi_open)) if not open_]
                for v in inside:
                    v = int(v) if w.kind == "whole" else float(v)
                    assert check_setting(key, setting, v) == declared.check(key, v) == v, (name, key, v)
                for v in _outside(w):
                    with pytest.raises(ValueError, match=f"setting {key}=.* is out of range"):
                        check_setting(key, setting, v)
    for name, defaults in WEB_DEFAULTS.items():
        for key, value in defaults.items():
            assert check_setting(key, WEB_AGENTS[name][key], value) == value


def test_agent_options__defaults_go_back_in_the_signature_and_arguments_are_checked_first() -> None:
    from ai2048.agents.options import SEED, agent_options, option

    calls = []

    @agent_options
    def factory(weights: str = option(REQUIRED, "a run", allowed="a path"),
                depth: int = option(2, "depth", "whole", lo=1, hi=3), *,
                seed: int | None = option(None, SEED)) -> None:
        calls.append((weights, depth, seed))

    signature = "(weights: 'str', depth: 'int' = 2, *, seed: 'int | None' = None) -> 'None'"
    assert str(inspect.signature(factory)) == signature
    factory("x")
    factory("x", np.int64(3), seed=np.uint64(5))
    assert calls == [("x", 2, None), ("x", 3, 5)] and type(calls[1][1]) is int
    with pytest.raises(ValueError, match=r"^depth=4 must be a whole number in 1\.\.3$"):
        factory("x", 4)
    with pytest.raises(TypeError, match="weights"):
        factory()
    assert len(calls) == 2


def test_agent_options__a_parameter_without_a_declaration_is_an_error_naming_it() -> None:
    from ai2048.agents.options import agent_options, option

    with pytest.raises(TypeError, match="parameter 'tie' has no option"):
        @agent_options
        def factory(depth: int = option(1, "depth", "whole"), tie: str = "004") -> None: ...


def test_agent_options__reading_every_declaration_imports_no_torch() -> None:
    """``ai2048 agents NAME`` and the web app's settings read the declarations of every agent; the
    network agents load torch only when one is built."""
    code = ("import sys, ai2048.ui.limits; from ai2048.agents import available; "
            "from ai2048.agents.base import option_help; [option_help(n) for n in available()]; "
            "assert 'torch' not in sys.modules, 'torch loaded'")
    subprocess.run([sys.executable, "-c", code], check=True)
