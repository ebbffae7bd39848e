"""Shared fixtures: one run of each real engine per test session, over every case the suite has.

The engine oracles (``godot_dissect.engines``) evaluate the GDScript of ``oracle_cases.CASES`` and
decode the malformed corpus; tests then compare our codec with what the engines said. An engine
that cannot run here is a skip with its reason (``scripts/setup.sh`` installs both; CI runs it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from godot_dissect.fuzz.malformed import Mutant, malformed_corpus

from .oracle_cases import cases_for

settings.register_profile("ci", max_examples=200, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

DIALECT_OF = {3: "godot3", 4: "godot4"}


@dataclass
class EngineRun:
    family: int
    dialect: str
    version: str
    encoded: dict[str, Any]
    mutants: list[Mutant]
    decoded: list[Any]
    stderr: str


def _run(family: int) -> EngineRun:
    from godot_dissect.engines import DecodeCase, EncodeCase, EngineUnavailable, get_engine

    try:
        eng = get_engine(f"godot{family}")
    except EngineUnavailable as e:
        pytest.skip(f"Godot {family} engine unavailable: {e.reason}")
    dialect = DIALECT_OF[family]
    enc = []
    for c in cases_for(family):
        expr = c.gd3 if family == 3 else c.gd4
        setup = c.setup3 if family == 3 else c.setup4
        enc.append(EncodeCase(c.name, expr, setup))  # type: ignore[arg-type]
    mutants = malformed_corpus(dialect)
    dec = [DecodeCase(m.data, m.allow_objects) for m in mutants]
    res = eng.probe(encode=enc, decode=dec)
    return EngineRun(family, dialect, eng.version, res.encoded, mutants, list(res.decoded), res.stderr)


@pytest.fixture(scope="session")
def godot3_run() -> EngineRun:
    return _run(3)


@pytest.fixture(scope="session")
def godot4_run() -> EngineRun:
    return _run(4)


@pytest.fixture(scope="session", params=[3, 4], ids=["godot3", "godot4"])
def engine_run(request: pytest.FixtureRequest) -> EngineRun:
    return request.getfixturevalue(f"godot{request.param}_run")
