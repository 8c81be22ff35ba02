"""5Gophers mobility traces (capacities given directly) and per-carrier bandwidths:
`drive.read_5gophers`, `drive.analyse_capacities`, `multiconn drive analyse --format 5gophers`
and `--bandwidth`.

The real traces (skipped when ../shared is absent) are from 5Gophers 1.0, CC BY 4.0: A. Narayanan,
E. Ramadan, J. Carpenter, Q. Liu, Y. Liu, F. Qian, Z.-L. Zhang, "A First Look at Commercial 5G
Performance on Smartphones", WWW 2020."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from multiconn import drive
from multiconn.errors import DriveTableError

ROOT = Path(__file__).resolve().parents[2]
MOBILITY = Path("5gophers") / "5Gophers-v1.0" / "All-Carriers" / "03-User-Mobility"
SHARED = next((p for p in (ROOT.parent / "shared", Path("/work/shared"))
               if (p / "data" / "traces" / MOBILITY).is_dir()), None)
TRACES = SHARED / "data" / "traces" / MOBILITY if SHARED else None
CARRIERS = ("Sprint", "TMobile", "Verizon")

pytestmark = pytest.mark.native

HEADER = ("protocol,num_tcp_conn,seq_num,Sprint_throughput_mbps,TMobile_throughput_mbps,"
          "Verizon_throughput_mbps\n")


def independent(path: Path) -> pd.DataFrame:
    """Per second from the first to the last seq_num: each carrier's throughput (mean of a
    seq_num's rows, 0 where absent), their max and their sum, with pandas alone."""
    raw = pd.read_csv(path)
    cols = [f"{c}_throughput_mbps" for c in CARRIERS]
    per = raw.groupby("seq_num")[cols].mean()
    per = per.reindex(range(per.index.min(), per.index.max() + 1)).fillna(0.0)
    per.columns = list(CARRIERS)
    per["best"] = per[list(CARRIERS)].max(axis=1)
    per["sum"] = per[list(CARRIERS)].sum(axis=1)
    return per


@pytest.mark.skipif(TRACES is None, reason="shared traces not present")
@pytest.mark.parametrize("trace", ["car-driving-trace-1.csv", "car-driving-trace-2.csv"])
def test_real_car_driving_trace(trace: str) -> None:
    assert TRACES is not None
    path = TRACES / trace
    table = drive.read_5gophers(path)
    assert list(table.columns) == list(drive.CHANNEL_COLUMNS)
    assert sorted(set(table["operator"])) == list(CARRIERS)
    result = drive.analyse_capacities(table, name=str(path))
    caps = result.capacities
    ref = independent(path)
    assert caps["time_s"].tolist() == list(ref.index)
    eps = 1e-9
    for op in CARRIERS:
        assert (caps[f"{op}_sp_mbps"] <= caps["best_single_path_mbps"] + eps).all()
        assert caps[f"{op}_sp_mbps"].to_numpy() == pytest.approx(ref[op].to_numpy())
        assert result.table3.loc[f"{op} SP", "mean"] == pytest.approx(ref[op].mean())
    assert (caps["best_single_path_mbps"] <= caps["multipath_mbps"] + eps).all()
    assert caps["best_single_path_mbps"].to_numpy() == pytest.approx(ref["best"].to_numpy())
    assert caps["multipath_mbps"].to_numpy() == pytest.approx(ref["sum"].to_numpy())
    t3 = result.table3
    assert t3.loc["best single path", "mean"] == pytest.approx(ref["best"].mean())
    assert t3.loc["multipath", "mean"] == pytest.approx(ref["sum"].mean())
    for q, col in ((50, "median"), (20, "p20"), (10, "p10"), (5, "p5"), (1, "p1")):
        assert t3.loc["multipath", col] == pytest.approx(np.percentile(ref["sum"], q))
        assert t3.loc["best single path", col] == pytest.approx(np.percentile(ref["best"], q))
    available = (ref[list(CARRIERS)] > 0).sum(axis=1)
    assert result.mean_available == pytest.approx(available.mean())
    assert caps["available"].tolist() == available.tolist()
    # Multipath gains over the best single path on real, simultaneous measurements.
    assert t3.loc["multipath", "mean"] > t3.loc["best single path", "mean"]


@pytest.mark.skipif(TRACES is None, reason="shared traces not present")
def test_cli_on_the_real_trace(cli, tmp_path: Path) -> None:
    assert TRACES is not None
    path = TRACES / "car-driving-trace-1.csv"
    out = tmp_path / "out"
    result = cli("drive", "analyse", path, "--format", "5gophers", "--out", out)
    assert result.returncode == 0, result.stderr
    for level in ("Sprint SP", "TMobile SP", "Verizon SP", "best single path", "multipath"):
        assert f"  {level} " in result.stdout
    stats = json.loads((out / "stats.json").read_text())
    ref = independent(path)
    assert stats["format"] == "5gophers"
    assert stats["seconds"] == len(ref)
    assert stats["levels_mbps"]["multipath"]["mean"] == pytest.approx(ref["sum"].mean())
    assert stats["channels"] == ["Sprint/0", "TMobile/0", "Verizon/0"]
    frame = pd.read_parquet(out / "capacities.parquet")
    assert frame["Verizon/0_mbps"].to_numpy() == pytest.approx(ref["Verizon"].to_numpy())
    assert (out / "capacity.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_missing_values_gaps_duplicates_and_hold(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text(HEADER + "TCP,8,3,10,20,\n"        # Verizon empty: no sample
                    "TCP,8,4,30,0.0,40\n"
                    "TCP,8,4,50,0.0,60\n"               # seq 4 twice: averaged
                    "TCP,8,7,5, ,1\n")                  # seq 5 and 6 missing
    table = drive.read_5gophers(path)
    assert len(table) == 2 + 3 + 3 + 2
    result = drive.analyse_capacities(table)
    caps = result.capacities
    assert caps["time_s"].tolist() == [3, 4, 5, 6, 7]
    assert caps["Sprint/0_mbps"].tolist() == [10.0, 40.0, 0.0, 0.0, 5.0]
    assert caps["TMobile/0_mbps"].tolist() == [20.0, 0.0, 0.0, 0.0, 0.0]
    assert caps["Verizon/0_mbps"].tolist() == [0.0, 50.0, 0.0, 0.0, 1.0]
    assert caps["available"].tolist() == [2, 2, 0, 0, 2]
    assert caps["best_single_path_mbps"].tolist() == [20.0, 50.0, 0.0, 0.0, 5.0]
    assert caps["multipath_mbps"].tolist() == [30.0, 90.0, 0.0, 0.0, 6.0]
    assert result.table3.loc["multipath", "mean"] == pytest.approx(126.0 / 5)
    assert result.channels["rsrp_dbm"].isna().all()
    # Holding 1 s bridges seq 5 only; a 0 Mbit/s sample is a sample (T-Mobile stays 0).
    held = drive.analyse_capacities(table, hold_s=1).capacities
    assert held["Sprint/0_mbps"].tolist() == [10.0, 40.0, 40.0, 0.0, 5.0]
    assert held["TMobile/0_mbps"].tolist() == [20.0, 0.0, 0.0, 0.0, 0.0]
    # A threshold: below it a carrier is visible but not available and counts 0.
    strict = drive.analyse_capacities(table, min_capacity_mbps=15.0)
    assert strict.capacities["available"].tolist() == [1, 2, 0, 0, 0]
    assert strict.capacities["visible"].tolist() == [2, 2, 0, 0, 2]
    assert strict.capacities["multipath_mbps"].tolist() == [20.0, 90.0, 0.0, 0.0, 0.0]
    with pytest.raises(DriveTableError, match=r"^min_capacity_mbps = -1: must be"):
        drive.analyse_capacities(table, min_capacity_mbps=-1)


def test_measurement_sets_are_chosen(tmp_path: Path) -> None:
    path = tmp_path / "sets.csv"
    path.write_text(HEADER + "TCP,8,0,1,2,3\nTCP,1,0,4,5,6\nTCP,8,1,7,8,9\nTCP,1,1,1,1,1\n")
    with pytest.raises(DriveTableError) as err:
        drive.read_5gophers(path)
    assert str(err.value) == (f"{path}: the file has several measurement sets (protocol TCP "
                              "with 8 connections, protocol TCP with 1 connections); choose "
                              "one with protocol and num_tcp_conn")
    table = drive.read_5gophers(path, num_tcp_conn=8)
    assert table["capacity_mbps"].tolist() == [1, 2, 3, 7, 8, 9]
    with pytest.raises(DriveTableError, match="no row has protocol = 'UDP'"):
        drive.read_5gophers(path, protocol="UDP")


BAD_TRACES = {
    "missing_column": (
        "protocol,num_tcp_conn,Sprint_throughput_mbps\nTCP,8,1\n",
        "{path}: no column 'seq_num' (columns: protocol, num_tcp_conn, Sprint_throughput_mbps; "
        "a 5Gophers trace needs protocol, num_tcp_conn, seq_num and one "
        "<carrier>_throughput_mbps column per carrier)",
    ),
    "no_carrier_column": (
        "protocol,num_tcp_conn,seq_num,rate\nTCP,8,0,1\n",
        "{path}: no column '<carrier>_throughput_mbps' (columns: protocol, num_tcp_conn, "
        "seq_num, rate; a 5Gophers trace needs protocol, num_tcp_conn, seq_num and one "
        "<carrier>_throughput_mbps column per carrier)",
    ),
    "non_numeric_value": (
        HEADER + "TCP,8,0,1,2,3\nTCP,8,1,1,fast,3\n",
        "{path}: row 2: TMobile_throughput_mbps = 'fast' is not a number of Mbit/s, at least 0",
    ),
    "negative_value": (
        HEADER + "TCP,8,0,1,2,-3\n",
        "{path}: row 1: Verizon_throughput_mbps = '-3' is not a number of Mbit/s, at least 0",
    ),
    "non_numeric_seq": (
        HEADER + "TCP,8,0,1,2,3\nTCP,8,1.5,1,2,3\n",
        "{path}: row 2: seq_num = '1.5' is not a whole number",
    ),
    "seq_backwards": (
        HEADER + "TCP,8,0,1,2,3\nTCP,8,5,1,2,3\nTCP,8,4,1,2,3\n",
        "{path}: row 3: seq_num = 4 comes after seq_num = 5; rows must be in non-decreasing "
        "seq_num order",
    ),
    "no_values": (
        HEADER + "TCP,8,0,,,\n",
        "{path}: no row has a throughput value",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_TRACES))
def test_bad_traces_give_one_line_errors(case: str, tmp_path: Path, cli) -> None:
    text, expected = BAD_TRACES[case]
    path = tmp_path / f"{case}.csv"
    path.write_text(text)
    message = expected.format(path=path)
    with pytest.raises(DriveTableError) as err:
        drive.read_5gophers(path)
    assert str(err.value) == message
    result = cli("drive", "analyse", path, "--format", "5gophers")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == f"multiconn: error: {message}\n"


def test_cli_options_belong_to_their_format(cli, tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text(HEADER + "TCP,8,0,1,2,3\n")
    result = cli("drive", "analyse", path, "--format", "5gophers", "--load", "0.5")
    assert result.returncode == 2
    assert "--load applies to RSRP tables, not to --format 5gophers" in result.stderr
    result = cli("drive", "analyse", path, "--format", "5gophers", "--min-capacity", "2",
                 "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["mean_available"] == pytest.approx(2.0)
    long = tmp_path / "long.csv"
    long.write_text(drive.generate_csv("residential", 1, 10))
    result = cli("drive", "analyse", long, "--min-capacity", "2")
    assert result.returncode == 2
    assert "--min-capacity applies to --format 5gophers only" in result.stderr


def test_per_carrier_bandwidth_scales_capacity(cli, tmp_path: Path) -> None:
    table = drive.generate("residential", seed=3, duration_s=60)
    study = drive.analyse(table)
    wide = drive.analyse(table, params={"capacity": {"carrier_bandwidth_mhz": {"1300": 20}}})
    assert (wide.capacities["A/1300_mbps"] == 2 * study.capacities["A/1300_mbps"]).all()
    assert (wide.capacities["B/1500_mbps"] == study.capacities["B/1500_mbps"]).all()
    assert study.capacities["A/1300_mbps"].max() > 0
    path = tmp_path / "drive.csv"
    path.write_text(drive.generate_csv("residential", 3, 60))
    result = cli("drive", "analyse", path, "--bandwidth", "1300=20", "--json")
    assert result.returncode == 0, result.stderr
    stats = json.loads(result.stdout)
    assert stats["params"]["capacity"]["carrier_bandwidth_mhz"] == {"1300": 20.0}
    assert stats["levels_mbps"]["A SP"]["mean"] == pytest.approx(
        wide.table3.loc["A SP", "mean"])
    bad = cli("drive", "analyse", path, "--bandwidth", "1300=12")
    assert bad.returncode == 2
    assert bad.stderr == (f"multiconn: error: {path}: capacity.carrier_bandwidth_mhz.1300 = 12: "
                          "must be an LTE channel bandwidth: 1.4, 3, 5, 10, 15 or 20 MHz\n")
    bad = cli("drive", "analyse", path, "--bandwidth", "band3=20")
    assert bad.returncode == 2
    assert bad.stderr == "multiconn: error: --bandwidth band3=20: must be EARFCN=MHZ, e.g. 1300=20\n"
