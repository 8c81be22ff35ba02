"""The benchmarks' scoreboard (bench/scoreboard.py): its verdict per goal from what the
benchmarks wrote, and the benchmark scenarios it counts on."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from conftest import ROOT


def _scoreboard():
    spec = importlib.util.spec_from_file_location("scoreboard", ROOT / "bench" / "scoreboard.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def _transport(speedup: float, quic_sim_over_wall: float) -> dict:
    run = {"wall_s": 0.05, "sim_over_wall": quic_sim_over_wall, "peak_rss_kib": 12000}
    ns3 = {"speedup": speedup, "speedup_process": speedup * 0.9, "multiconn_wall_s": 0.8 / speedup,
           "ns3": {"wall_seconds": 0.8}}
    return {"runs": {"quic-newreno": run, "quic-cubic": run, "quic-1GB": run},
            "ns3": {"newreno": ns3, "cubic": ns3}}


def _verdicts(folder: Path) -> dict[str, bool | None]:
    return {goal: met for goal, _, _, met in _scoreboard().rows(folder)}


def test_goals_are_met_only_at_or_beyond_the_required_figures(tmp_path: Path) -> None:
    board = _scoreboard()
    (tmp_path / "transport.json").write_text(json.dumps(
        _transport(speedup=float(board.TCP_VS_NS3), quic_sim_over_wall=board.QUIC_REAL_TIME - 1.0)))
    goal_s = board.DC_CATALOGUE_MIN * 60
    (tmp_path / "dc.json").write_text(json.dumps(
        {"measured": "whole", "catalogue_repetitions": True, "table3_s": float(goal_s), "goal_s": goal_s,
         "table3_runs": 7200, "cores": 2}))
    verdicts = _verdicts(tmp_path)
    tcp = [met for goal, met in verdicts.items() if goal.startswith("TCP")]
    quic = [met for goal, met in verdicts.items() if goal.startswith("QUIC") and "real time" in goal]
    assert tcp == [True, True]
    assert quic == [False, False]
    assert verdicts["the whole dc-* catalogue (Table 3), 10 repetitions, 2 cores"] is True


def test_the_cells_scaling_goals_are_met_at_most_at_their_ratios(tmp_path: Path) -> None:
    def cell(epa: float, ues: float) -> dict:
        return {"multiconn": {"sim_over_wall": 120.0}, "lena_wall_over_multiconn_wall": None,
                "goals": {"sim_over_wall": 100.0, "lena_wall_over_multiconn_wall": 30.0},
                "scaling": {"epa_over_none_per_sim_s": epa, "many_over_base_per_byte": ues,
                            "goals": {"epa_over_none": 2.0, "many_over_base": 1.2}}}

    (tmp_path / "cell.json").write_text(json.dumps(cell(epa=2.0, ues=1.21)))
    verdicts = _verdicts(tmp_path)
    assert verdicts["LTE cell, EPA fading against none, per simulated second"] is True
    assert verdicts["LTE cell, 50 UEs against 10, per byte"] is False


def test_a_fresh_clones_make_test_is_met_at_most_at_its_minutes(tmp_path: Path) -> None:
    board = _scoreboard()
    goal = "a fresh clone's `make test`, every test, 2 cores"
    for total, met in ((board.MAKE_TEST_MIN * 60.0, True), (board.MAKE_TEST_MIN * 60.0 + 1, False)):
        (tmp_path / "make_test.json").write_text(json.dumps(
            {"phases_s": {"setup": 100.0, "test-rust": total - 100.0}, "total_s": total,
             "goal_s": board.MAKE_TEST_MIN * 60, "cores": 2}))
        row = next(r for r in board.rows(tmp_path) if r[0] == goal)
        assert row[3] is met
        assert "setup 100 s" in row[2]


def test_the_make_test_benchmark_runs_what_the_makefiles_test_recipe_runs() -> None:
    spec = importlib.util.spec_from_file_location("bench_make_test", ROOT / "bench" / "bench_make_test.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    assignments, targets = module.test_recipe(ROOT / "Makefile")
    assert targets[0] == "setup" and {"test-rust", "test-python"} <= set(targets)
    assert "BUILD_PROFILE=release-nolto" in assignments and "BUILD_FEATURES=test-build" in assignments


def test_what_was_not_measured_or_only_estimated_gets_no_verdict(tmp_path: Path) -> None:
    (tmp_path / "dc.json").write_text(json.dumps(
        {"measured": "whole", "catalogue_repetitions": False, "table3_s": 100.0, "goal_s": 360,
         "table3_runs": 720, "cores": 2}))
    verdicts = _verdicts(tmp_path)
    assert verdicts["the whole dc-* catalogue (Table 3), 10 repetitions, 2 cores"] is None, \
        "a run with fewer repetitions than the catalogue's is only indicative"
    assert all(met is None for goal, met in verdicts.items() if not goal.startswith("the whole")), \
        "nothing else was measured"
    (tmp_path / "dc.json").write_text(json.dumps({"measured": "estimate", "table3_estimate_s": 300.0}))
    assert _verdicts(tmp_path)["the whole dc-* catalogue (Table 3), 10 repetitions, 2 cores"] is None


def test_the_four_path_benchmark_download_uses_every_path_and_completes() -> None:
    import multiconn

    result = multiconn.run(ROOT / "bench" / "scenarios" / "four_paths.toml")
    (flow,) = result.summary["flows"]
    assert flow["completion_s"] is not None and flow["completion_s"] < 60
    received = [p["client"]["bytes_received"] for p in flow["paths"]]
    assert len(received) == 4
    assert all(b > 1_000_000 for b in received), received
