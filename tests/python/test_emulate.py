"""`multiconn emulate` and `[flow.emulate]`: refusals are one line with exit code 2, the
terminal lines say what was measured, and (as root, with the stacks installed) a real aioquic
download through an emulated link writes the run's files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, assert_one_error_line

from multiconn.emulate import summary_lines

LINK = """
name = "emu"
[run]
duration = "20 s"
[[link]]
name = "bottleneck"
between = ["server", "client"]
rate = "20 Mbit/s"
delay = "10 ms"
queue = "100 packets"
"""

QUIC_FLOW = """
[[flow]]
name = "dl"
from = "server"
to = "client"
transport = "quic"
app = "bulk"
size = "4 MB"
profile = "aioquic"
"""


@pytest.mark.native
@pytest.mark.parametrize("section, words", [
    ('stack = "quiche"', ["flow.dl.emulate.stack", "quiche", "kernel-tcp", "ngtcp2"]),
    ('stack = "kernel-tcp"', ["flow.dl.emulate.stack", "kernel-tcp", "quic flow"]),
    ('stack = "ngtcp2"\nclient = "true"', ["flow.dl.emulate.client", "stack = \"command\""]),
    ('server = "sleep 100"', ["flow.dl.emulate.client", "needs a client command"]),
    ('stack = "aioquic"\nport = 1', ["port"]),
])
def test_a_bad_emulate_section_is_one_line_at_validation(section: str, words: list[str], tmp_path: Path,
                                                         cli) -> None:
    (tmp_path / "s.toml").write_text(LINK + QUIC_FLOW + "[flow.emulate]\n" + section + "\n")
    proc = cli("validate", "s.toml", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert_one_error_line(proc.stderr, *words)


@pytest.mark.native
@pytest.mark.parametrize("key", ["server", "client"])
def test_an_unknown_placeholder_is_refused_by_validate_in_the_emulator_s_words(
        key: str, tmp_path: Path, cli) -> None:
    """validate used to pass it; the emulator refused it only after creating the hosts. Both
    check with the scenario crate's one list of placeholders."""
    other = "client" if key == "server" else "server"
    section = f'stack = "command"\n{key} = "echo {{nosuch}}"\n{other} = "true"'
    (tmp_path / "s.toml").write_text(LINK + QUIC_FLOW + "[flow.emulate]\n" + section + "\n")
    proc = cli("validate", "s.toml", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    line = assert_one_error_line(proc.stderr)
    assert line.endswith(f": flow.dl.emulate.{key}: unknown placeholder {{nosuch}}; known: {{cc}}, "
                         "{client_addr}, {client_addr0}, {duration}, {out}, {port}, "
                         "{server_addr}, {server_addr0}, {size}"), line


@pytest.mark.native
def test_the_simulator_runs_a_scenario_with_an_emulate_section(tmp_path: Path, cli) -> None:
    (tmp_path / "s.toml").write_text(LINK + QUIC_FLOW + '[flow.emulate]\nstack = "aioquic"\n')
    proc = cli("run", "s.toml", "--out", tmp_path / "out", "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["flows"][0]["bytes_delivered"] == 4_000_000


@pytest.mark.native
def test_a_link_too_fast_to_emulate_is_refused_before_anything_starts(tmp_path: Path, cli) -> None:
    (tmp_path / "s.toml").write_text(LINK.replace("20 Mbit/s", "4 Gbit/s") + QUIC_FLOW)
    out = tmp_path / "out"
    proc = cli("emulate", "s.toml", "--out", out, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert_one_error_line(proc.stderr, "bottleneck", "4000 Mbit/s", "--max-rate")
    assert not (out / "summary.json").exists()


def test_the_terminal_lines_say_what_each_side_measured() -> None:
    summary = {
        "flows": [
            {"name": "a", "stack": "ngtcp2", "goodput_mbps": 17.8, "goodput_from": "size over completion",
             "ip_goodput_mbps": 18.234, "completion_s": 4.5, "client_exit_code": 0},
            {"name": "b", "stack": "kernel-tcp", "goodput_mbps": 9.5, "goodput_from": "application",
             "ip_goodput_mbps": 9.9, "completion_s": None, "client_exit_code": 1},
            {"name": "c", "stack": "command", "goodput_mbps": None, "goodput_from": "none",
             "ip_goodput_mbps": 1.0, "completion_s": 2.0, "client_exit_code": 0},
        ],
        "timing": {"packets": 10, "median_us": 40.2, "p99_us": 900.0, "max_us": 2000.0, "budget_us": 1000.0,
                   "verdict": "ok"},
    }
    lines = summary_lines(summary)
    assert lines[0] == "a: ngtcp2, 17.80 Mbit/s (size / completion time), done in 4.50 s"
    assert lines[1] == "b: kernel-tcp, 9.50 Mbit/s (application), not finished, client exit code 1"
    assert lines[2] == "c: command, 1.00 Mbit/s (IP, emulator), done in 2.00 s"
    assert lines[3].startswith("timing: 10 packets, late by 40 µs median, 900 µs p99") and lines[3].endswith(": ok")


def _cannot_emulate() -> str | None:
    if os.geteuid() != 0:
        return "the emulator needs root"
    if not Path("/dev/net/tun").exists():
        return "no /dev/net/tun"
    for tool in ("unshare", "nsenter", "ip", "openssl"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    try:
        import aioquic  # noqa: F401
    except ImportError:
        return "aioquic is not installed"
    return None


def test_the_emulator_runs_here_when_required() -> None:
    """`make test-emu` sets MULTICONN_REQUIRE_EMU: the real-stack tests below must not skip."""
    if not os.environ.get("MULTICONN_REQUIRE_EMU"):
        pytest.skip("MULTICONN_REQUIRE_EMU is not set")
    assert _cannot_emulate() is None, _cannot_emulate()
    assert shutil.which("iperf3") is not None, "iperf3 is not installed"


@pytest.mark.native
@pytest.mark.slow
@pytest.mark.skipif(_cannot_emulate() is not None, reason=str(_cannot_emulate()))
def test_an_aioquic_download_through_an_emulated_link(tmp_path: Path, cli) -> None:
    import pyarrow.parquet as pq

    (tmp_path / "s.toml").write_text(LINK + QUIC_FLOW)
    out = tmp_path / "out"
    proc = cli("emulate", "s.toml", "--out", out, "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    s = json.loads((out / "summary.json").read_text())
    f = s["flows"][0]
    assert f["stack"] == "aioquic" and f["client_exit_code"] == 0, f
    assert f["app_report"]["bytes"] == 4_000_000 == f["bytes_delivered"]
    assert f["goodput_from"] == "application"
    # aioquic is CPU-bound in Python, yet 20 Mbit/s is well within its reach; 1200-byte
    # datagrams carry about 1150 bytes of stream data each.
    assert 0.7 * 20 * 1150 / 1200 <= f["goodput_mbps"] <= 20, f
    forward = next(link for link in s["links"] if link["direction"] == "forward")
    assert forward["bytes_delivered"] == f["ip_bytes_arrived"]
    table = pq.read_table(out / "timeseries.parquet")
    assert {"time_s", "kind", "name", "bytes_delivered", "throughput_mbps"} <= set(table.column_names)
    assert table.num_rows == len((out / "timeseries.csv").read_text().splitlines()) - 1
    assert (out / "flows" / "dl" / "client.json").exists()
    assert proc.stdout.startswith("dl: aioquic, ")
    # The server's qlog is whole although the emulator stopped the server with SIGTERM: one
    # trace, as JSON, with the packets it sent.
    [qlog] = (out / "flows" / "dl" / "qlog-server").glob("*.qlog")
    events = json.loads(qlog.read_text())["traces"][0]["events"]
    assert sum(e["name"] == "transport:packet_sent" for e in events) >= 4_000_000 // 1200, len(events)
    # The transfer on the wire is the one QUIC connection, shorter than the client's lifetime.
    t = f["transfer"]
    assert t["connections"] == 1 and 0 < t["seconds"] < f["completion_s"], f


UPLOAD = """
name = "upload"
[run]
duration = "30 s"
[[link]]
name = "radio"
between = ["vehicle", "server"]
delay = "15 ms"
queue = "100 packets"
forward = { rate = "5 Mbit/s" }
reverse = { rate = "20 Mbit/s" }
[[flow]]
name = "up"
from = "vehicle"
to = "server"
direction = "up"
transport = "quic"
app = "bulk"
size = "2 MB"
profile = "aioquic"
"""


@pytest.mark.native
@pytest.mark.slow
@pytest.mark.skipif(_cannot_emulate() is not None, reason=str(_cannot_emulate()))
def test_an_aioquic_upload_goes_up_the_vehicles_uplink(tmp_path: Path, cli) -> None:
    (tmp_path / "s.toml").write_text(UPLOAD)
    # A relative output folder: the stacks, which run in the hosts' namespaces, get absolute
    # paths for their keys and reports.
    proc = cli("emulate", "s.toml", "--out", "out", "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    s = json.loads((tmp_path / "out" / "summary.json").read_text())
    f = s["flows"][0]
    assert f["stack"] == "aioquic" and f["client_exit_code"] == 0, f
    # The client sent the 2 MB and saw the server's FIN, which the server sends only once it
    # has every byte: the upload's own time, through the 5 Mbit/s uplink (1200-byte datagrams
    # carry about 1150 bytes of stream data each).
    assert f["app_report"]["bytes"] == 2_000_000, f
    assert 0.6 * 5 * 1150 / 1200 <= f["goodput_mbps"] <= 5, f
    up = next(link for link in s["links"] if link["from"] == "vehicle")
    down = next(link for link in s["links"] if link["from"] == "server")
    assert up["bytes_delivered"] > 2_000_000, up
    assert down["bytes_delivered"] < 500_000, f"only ACKs come down: {down}"


@pytest.mark.native
@pytest.mark.slow
@pytest.mark.skipif(_cannot_emulate() is not None or shutil.which("iperf3") is None,
                    reason=str(_cannot_emulate() or "iperf3 is not installed"))
def test_a_sweep_runs_in_emulation_mode_under_its_own_run_keys(tmp_path: Path, cli) -> None:
    (tmp_path / "s.toml").write_text(LINK + QUIC_FLOW.replace('"quic"', '"tcp"').replace('profile = "aioquic"', 'cc = "cubic"'))
    (tmp_path / "sweep.toml").write_text(
        '[experiment]\nname = "emu-rate"\nscenario = "s.toml"\nparameter = "rate"\n'
        '[set]\n"flow.dl.size" = "2 MB"\n'
        '[[axis]]\nname = "rate"\nparam = "link.bottleneck.rate"\nvalues = ["10 Mbit/s", "20 Mbit/s"]\n')
    out = tmp_path / "out"
    proc = cli("sweep", "sweep.toml", "--out", out, "--backend", "emulate", "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    proc = cli("results", out, "--format", "json", cwd=tmp_path)
    rows = json.loads(proc.stdout)
    assert [r["status"] for r in rows] == ["ok", "ok"]
    for row, rate in zip(rows, (10, 20)):
        # Kernel TCP through the emulated link: most of the rate, never more.
        assert 0.8 * rate * 1448 / 1500 <= row["goodput_mbps"] <= rate, row
        assert row["bytes_delivered"] >= 2_000_000
    # The same sweep simulated into the same store runs again: other run keys.
    proc = cli("sweep", "sweep.toml", "--out", out, "-q", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["ran"] == 2


SPLIT = """
name = "dc"
[run]
duration = "6 s"
[[link]]
name = "lte"
between = ["server", "client"]
rate = "20 Mbit/s"
delay = "30 ms"
queue = "1000 packets"
[[link]]
name = "nr"
between = ["server", "client"]
rate = "20 Mbit/s"
delay = "5 ms"
queue = "1000 packets"
[[split]]
name = "dc"
legs = ["lte", "nr"]
policy = { model = "batch", size = 10, share = 0.5 }
[[flow]]
name = "cbr"
from = "server"
to = "client"
transport = "udp"
app = "cbr"
rate = "4 Mbit/s"
start = "1 s"
route = ["dc"]
[flow.emulate]
server = "iperf3 -s -B {server_addr} -p {port} -1"
client = "iperf3 -c {server_addr} -p {port} -u -b 4M -t 3 -R"
"""


@pytest.mark.native
@pytest.mark.slow
@pytest.mark.skipif(_cannot_emulate() is not None or shutil.which("iperf3") is None,
                    reason=str(_cannot_emulate() or "iperf3 is not installed"))
def test_an_emulated_split_writes_the_files_and_columns_of_a_simulated_one(tmp_path: Path, cli) -> None:
    import pyarrow.parquet as pq

    (tmp_path / "s.toml").write_text(SPLIT)
    sim, emu = tmp_path / "sim", tmp_path / "emu"
    assert cli("run", "s.toml", "--out", sim, "--csv", cwd=tmp_path).returncode == 0
    proc = cli("emulate", "s.toml", "--out", emu, "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    # The same files (the emulator keeps its stacks' logs in flows/ besides).
    assert {p.name for p in sim.iterdir()} == {p.name for p in emu.iterdir() if p.name != "flows"}
    assert pq.read_schema(sim / "timeseries.parquet") == pq.read_schema(emu / "timeseries.parquet")
    table = pq.read_table(emu / "timeseries.parquet").to_pandas()
    # The split's legs and bearer have their series, as in the simulator: both legs carried
    # PDUs and the receiving entity delivered them in order.
    legs = table[table["kind"] == "leg"]
    assert set(legs["leg"].astype(str)) == {"lte", "nr"}
    assert all(legs[legs["leg"] == leg]["bytes_delivered"].sum() > 100_000 for leg in ("lte", "nr"))
    bearer = table[table["kind"] == "bearer"]
    assert bearer["bytes_delivered"].sum() > 1_000_000, bearer
    # A one-path flow has no path rows, in either mode.
    assert not (table["kind"] == "path").any()
    # ... so the emulated run has every figure the simulated one has, the PDCP one included
    # (and the queue figure where its real packets queued, which the simulated CBR never does).
    for run in (sim, emu):
        assert cli("plot", run, "--out", tmp_path / f"fig-{run.name}", cwd=tmp_path).returncode == 0
    figures = {run: {p.name for p in (tmp_path / f"fig-{run.name}").glob("*.png")} for run in (sim, emu)}
    assert "pdcp-cbr.png" in figures[sim] and figures[sim] <= figures[emu], figures


SLEEPER = LINK + """
[[flow]]
name = "wait"
from = "server"
to = "client"
transport = "udp"
app = "cbr"
rate = "1 Mbit/s"
[flow.emulate]
client = "sleep 30"
"""


@pytest.mark.native
@pytest.mark.slow
@pytest.mark.skipif(_cannot_emulate() is not None, reason=str(_cannot_emulate()))
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_to_the_front_end_stops_the_run_and_keeps_its_results(tmp_path: Path, sig: str) -> None:
    """Ctrl-C (SIGINT, here sent to the front end alone, not its process group) or SIGTERM:
    the emulator stops in order and the run's folder has its results, `stopped_by =
    "interrupted"`, written like any run's; the front end exits 130."""
    import signal
    import subprocess
    import sys
    import time

    (tmp_path / "s.toml").write_text(SLEEPER)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "multiconn", "emulate", "s.toml", "--out", str(out), "-q"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Signal once the run has started (the emulator wrote its flow folder), well before the
    # client's 30 s are up.
    deadline = time.monotonic() + 20
    while not (out / "flows" / "wait").exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    time.sleep(1.0)
    proc.send_signal(getattr(signal, sig))
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stopped_by"] == "interrupted", summary["stopped_by"]
    assert summary["emulated_time_s"] < 25, summary["emulated_time_s"]
    assert (out / "timeseries.parquet").exists() and (out / "scenario.json").exists()


@pytest.mark.native
@pytest.mark.slow
@pytest.mark.skipif(_cannot_emulate() is not None or shutil.which("iperf3") is None,
                    reason=str(_cannot_emulate() or "iperf3 is not installed"))
def test_pip_install_into_a_fresh_virtualenv_gives_a_working_emulator(tmp_path: Path) -> None:
    """The package carries the emulator: `pip install .` into a new virtualenv (nothing from
    `make setup` in it) gives `multiconn emulate`, which runs a kernel TCP download."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # The compiled crates of `make setup` are reused: the wheel builds the same extension, with
    # the profile and features that build had (the Makefile passes them on; none: release).
    env = {**os.environ, "CARGO_TARGET_DIR": str(ROOT / "target")}
    env.pop("MULTICONN_EMU", None)
    if os.environ.get("MULTICONN_MATURIN_ARGS"):
        env["MATURIN_PEP517_ARGS"] = os.environ["MULTICONN_MATURIN_ARGS"]
    installed = subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", str(ROOT)],
                               env=env, capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr[-3000:]
    assert (venv / "bin" / "multiconn-emu").is_file()
    scenario = tmp_path / "s.toml"
    scenario.write_text(LINK + QUIC_FLOW.replace('"quic"', '"tcp"').replace('profile = "aioquic"', 'cc = "cubic"')
                        .replace('size = "4 MB"', 'size = "2 MB"'))
    out = tmp_path / "out"
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep)
                                  if Path(p).resolve() != Path(sys.executable).parent.resolve())
    ran = subprocess.run([str(venv / "bin" / "multiconn"), "emulate", str(scenario), "--out", str(out), "-q"],
                         env=env, capture_output=True, text=True, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["mode"] == "emulation"
    (flow,) = summary["flows"]
    assert flow["stack"] == "kernel-tcp" and flow["bytes_delivered"] >= 2_000_000, flow
    # Kernel TCP through the emulated 20 Mbit/s link: most of it, never more.
    assert 0.6 * 20 <= flow["goodput_mbps"] <= 20, flow
