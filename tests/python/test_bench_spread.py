"""The run-to-run spread bench (bench/spread.py): its points are valid scenarios, and the host
values it calibrated (bench/spread.json) make the simulated runs spread where they did not."""

from __future__ import annotations

import importlib.util
import json
import sys

from conftest import ROOT


def _spread():
    sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location("spread", ROOT / "bench" / "spread.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def test_every_point_is_a_valid_scenario_with_its_overrides() -> None:
    import multiconn

    spread = _spread()
    for scenario, sets in {(str(p[2]), tuple(sorted(p[3].items()))) for p in spread.POINTS}:
        multiconn.validate(scenario, overrides=dict(sets))
    keys = [spread.key(i) for i in range(len(spread.POINTS))]
    assert len(keys) == len(set(keys))
    assert all(p[1] in spread.KIND for p in spread.POINTS)


def test_the_calibrated_host_values_turn_identical_seeds_into_a_spread() -> None:
    spread = _spread()
    data = json.loads((ROOT / "bench" / "spread.json").read_text())
    aioquic = next(i for i, p in enumerate(spread.POINTS) if p[1] == "aioquic" and p[5])
    off = spread.simulate(aioquic, None, 4)
    on = spread.simulate(aioquic, data["host"]["aioquic"], 4)
    assert len(set(off)) == 1, "without the host model the seeds give one run"
    assert len(set(on)) == 4 and spread.cv(on) > 0.005
