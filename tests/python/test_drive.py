"""Drive tables: generate, read (long format, G-NetTrack), analyse; `multiconn drive`."""

from __future__ import annotations

import json
from pathlib import Path

import pandas
import pytest

from multiconn import drive
from multiconn.errors import DriveTableError

ROOT = Path(__file__).resolve().parents[2]
UCC_DRIVING = (ROOT.parent / "shared" / "data" / "traces" / "ucc-5g" / "5G-production-dataset"
               / "Download" / "Driving" / "B_2020.01.16_09.56.56.csv")

pytestmark = pytest.mark.native


@pytest.fixture(scope="module")
def residential() -> drive.DriveAnalysis:
    return drive.analyse(drive.generate("residential", seed=1, duration_s=900))


def test_levels_are_ordered_every_second(residential: drive.DriveAnalysis) -> None:
    caps = residential.capacities
    eps = 1e-9
    assert len(caps) == 900
    for op in ("A", "B"):
        assert (caps[f"{op}_sp_mbps"] <= caps["best_single_path_mbps"] + eps).all()
    assert (caps["best_single_path_mbps"] <= caps["multipath_mbps"] + eps).all()
    channel_sum = caps[[c for c in caps.columns if "/" in c]].sum(axis=1)
    assert (abs(channel_sum - caps["multipath_mbps"]) < 1e-6).all()


def test_residential_available_cells_match_the_study(residential: drive.DriveAnalysis) -> None:
    assert abs(residential.mean_available - 3.99) <= 0.1 * 3.99
    cdf = residential.available_cdf
    assert cdf["cdf"].iloc[-1] == pytest.approx(1.0)
    assert list(residential.table3.index) == ["A SP", "B SP", "best single path", "multipath"]
    assert list(residential.table3.columns) == list(drive.SUMMARY_COLUMNS)
    t3 = residential.table3
    assert (t3["mean"] > 0).all() and (t3["p0.1"] <= t3["p1"]).all()
    assert (t3["p1"] <= t3["median"]).all()


def test_same_seed_same_bytes() -> None:
    a = drive.generate_csv("road", seed=3, duration_s=120)
    assert a == drive.generate_csv("road", seed=3, duration_s=120)
    assert a != drive.generate_csv("road", seed=4, duration_s=120)
    assert a.splitlines()[0] == "time_s,operator,earfcn,cell_id,rsrp_dbm,x_m,y_m,speed_mps"


def test_cli_generate_is_byte_identical(cli, tmp_path: Path) -> None:
    outs = []
    for name in ("a.csv", "b.csv"):
        result = cli("drive", "generate", "--preset", "residential", "--seed", "1",
                     "--duration", "60s", "--out", tmp_path / name)
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith(f"wrote {tmp_path / name}: ")
        outs.append((tmp_path / name).read_bytes())
    assert outs[0] == outs[1]
    assert outs[0] == drive.generate_csv("residential", 1, 60).encode()


BAD_TABLES = {
    "missing_column": (
        "time_s,operator,earfcn,cell_id\n0,A,6200,1\n",
        "{path}: no column 'rsrp_dbm' (columns: time_s, operator, earfcn, cell_id; a drive "
        "table needs time_s, operator, earfcn, cell_id, rsrp_dbm)",
    ),
    "non_numeric_rsrp": (
        "time_s,operator,earfcn,cell_id,rsrp_dbm\n0,A,6200,1,-80\n1,A,6200,1,-81\n"
        "2,A,6200,1,strong\n",
        "{path}: row 3: rsrp_dbm = 'strong' is not an RSRP in dBm from -160 to 0 (3GPP reports "
        "span -156 to -31 dBm)",
    ),
    # Numbers, but no received power: they used to give Tables 2 and 3.
    "rsrp_far_above_any_power": (
        "time_s,operator,earfcn,cell_id,rsrp_dbm\n0,A,6200,1,-80\n1,A,6200,1,1e30\n",
        "{path}: row 2: rsrp_dbm = '1e30' is not an RSRP in dBm from -160 to 0 (3GPP reports "
        "span -156 to -31 dBm)",
    ),
    "rsrp_far_below_any_power": (
        "time_s,operator,earfcn,cell_id,rsrp_dbm\n0,A,6200,1,-1e30\n",
        "{path}: row 1: rsrp_dbm = '-1e30' is not an RSRP in dBm from -160 to 0 (3GPP reports "
        "span -156 to -31 dBm)",
    ),
    "negative_time": (
        "time_s,operator,earfcn,cell_id,rsrp_dbm\n0,A,6200,1,-80\n1,A,6200,1,-81\n"
        "-1,A,6200,1,-82\n",
        "{path}: row 3: time_s = '-1' is negative; time_s is a whole number of seconds, at least 0",
    ),
    "time_backwards": (
        "time_s,operator,earfcn,cell_id,rsrp_dbm\n0,A,6200,1,-80\n5,A,6200,1,-81\n"
        "4,A,6200,1,-82\n",
        "{path}: row 3: time_s = 4 comes after time_s = 5; rows must be in non-decreasing "
        "time order",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_TABLES))
def test_bad_tables_give_one_line_errors(case: str, tmp_path: Path, cli) -> None:
    text, expected = BAD_TABLES[case]
    path = tmp_path / f"{case}.csv"
    path.write_text(text)
    message = expected.format(path=path)
    with pytest.raises(DriveTableError) as err:
        drive.read_drive_table(path)
    assert str(err.value) == message
    result = cli("drive", "analyse", path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == f"multiconn: error: {message}\n"


def test_parquet_table_reads_like_csv(tmp_path: Path) -> None:
    table = drive.generate("residential", seed=2, duration_s=30)
    table.to_parquet(tmp_path / "t.parquet", index=False)
    back = drive.read_drive_table(tmp_path / "t.parquet")
    assert back[list(drive.REQUIRED_COLUMNS)].equals(table[list(drive.REQUIRED_COLUMNS)])


def test_analyse_options_are_checked() -> None:
    table = drive.generate("residential", seed=2, duration_s=30)
    with pytest.raises(DriveTableError, match=r"^load = 1.5: must be in \[0, 1\]$"):
        drive.analyse(table, load=1.5)
    with pytest.raises(DriveTableError, match="interference = 'all'"):
        drive.analyse(table, interference="all")
    same = drive.analyse(table, interference="same_carrier")
    assert same.table3.loc["multipath", "mean"] > drive.analyse(table).table3.loc[
        "multipath", "mean"]


def test_cli_analyse_writes_tables_and_figures(cli, tmp_path: Path) -> None:
    table = tmp_path / "drive.csv"
    table.write_text(drive.generate_csv("residential", 1, 300))
    out = tmp_path / "out"
    result = cli("drive", "analyse", table, "--out", out)
    assert result.returncode == 0, result.stderr
    assert "Table 2: available cells per second" in result.stdout
    assert "mean available cells  4.00" in result.stdout
    assert "Table 3: capacity (Mbit/s)" in result.stdout
    for level in ("A SP", "B SP", "best single path", "multipath"):
        assert f"  {level} " in result.stdout
    for name in ("capacities.parquet", "stats.json", "capacity.png", "available_cells.png"):
        assert (out / name).stat().st_size > 0, name
    assert (out / "capacity.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    stats = json.loads((out / "stats.json").read_text())
    assert stats["seconds"] == 300 and stats["mean_available"] == pytest.approx(4.0, abs=0.4)
    assert set(stats["levels_mbps"]) == {"A SP", "B SP", "best single path", "multipath"}
    as_json = cli("drive", "analyse", table, "--json")
    assert json.loads(as_json.stdout)["levels_mbps"] == stats["levels_mbps"]


def test_gnettrack_missing_values_and_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "g.csv"
    path.write_text(
        "Timestamp,Longitude,Latitude,Speed,Operatorname,CellID,NetworkMode,RSRP,NRxRSRP\n"
        "2020.01.16_09.56.56,-8.5,51.9,36,B,13,LTE,-99,-100.0\n"
        "2020.01.16_09.56.56,-8.5,51.9,36,B,13,LTE,-97,2147483647\n"
        "2020.01.16_09.56.59,-8.5,51.9,36,B,14,LTE,-,-\n"
        "2020.01.16_09.57.00,-8.5,51.9,36,B,14,LTE,-90,-\n")
    table = drive.read_gnettrack(path)
    assert table["time_s"].tolist() == [0, 0, 0, 4]
    assert table["cell_id"].tolist() == ["13", drive.GNETTRACK_NEIGHBOUR, "13", "14"]
    assert table["speed_mps"].iloc[0] == pytest.approx(10.0)
    held = drive.analyse(table, hold_s=drive.GNETTRACK_HOLD_S)
    assert held.capacities["available"].tolist() == [1, 1, 1, 0, 1]


@pytest.mark.skipif(not UCC_DRIVING.is_file(), reason="shared traces not present")
def test_ucc_driving_file_parses() -> None:
    table = drive.read_gnettrack(UCC_DRIVING)
    assert table["time_s"].iloc[-1] == pytest.approx(30 * 60 + 24, abs=5)  # 09:56:56–10:27:20
    assert set(table["operator"]) == {"B"}
    result = drive.analyse(table, hold_s=drive.GNETTRACK_HOLD_S)
    # A serving cell and at most one neighbour per sample: between one and two visible cells.
    assert 1.0 <= result.mean_visible <= 2.0
    assert result.mean_available == pytest.approx(1.0, abs=0.05)
    assert 0 < result.table3.loc["multipath", "mean"] < 56


def test_a_drive_table_spanning_too_long_is_an_error() -> None:
    # time_s from 0 to 4e9 made the native estimator allocate 4 GiB and abort the process; a
    # 9e6 s channel table took 17 s to analyse.
    table = pandas.DataFrame({"time_s": [0, 4_000_000_000], "operator": "A", "earfcn": 100,
                              "cell_id": "1", "rsrp_dbm": -90.0})
    with pytest.raises(DriveTableError, match="drive.csv: time_s goes from 0 to 4000000000; a drive "
                                              "table may span at most 1000000 s"):
        drive.analyse(table, name="drive.csv")
    channels = pandas.DataFrame({"time_s": [0, 1_000_000], "operator": "A", "earfcn": 0,
                                 "capacity_mbps": 1.0})
    with pytest.raises(DriveTableError, match="a channel table may span at most 1000000 s"):
        drive.analyse_capacities(channels)
    assert len(drive.analyse_capacities(channels.assign(time_s=[0, 999_999])).capacities) == 1_000_000
