//! ns-3 LENA side of the handover cross-check: one UE driving past a line of eNBs with a
//! saturated TCP download, LENA's X2 handover between them.
//!
//!   server --- 100 Gbit/s, 10 ms, 1000-packet PfifoFast over a 100-packet drop-tail device
//!              queue (--loss both ways, 0 by default) --- P-GW
//!   P-GW --- S5 --- S-GW --- S1-U --- eNB 1 ... eNB N (X2 between every pair) ))) UE
//!
//! --enbs eNBs (3) at x = 0, --isd, 2·--isd, ... m (500), y = 0, z = 0, all on the same carrier
//! (20 MHz, Band 4 EARFCN 2050/20050, 46 dBm, noise figure 5 dB, isotropic antennas), so each
//! one interferes with the others' downlink. The UE (23 dBm, noise figure 9 dB, z = 0) moves in
//! a straight line at --speed m/s (20) from (--start, --y) to (--end, --y) (100, 50 → 900, 50)
//! and then stands still; it is attached to the first eNB at 0 s. Log-distance path loss
//! (exponent 3, 46.6777 dB at 1 m), no shadowing, no fading; PF scheduler, MI error model, RLC UM
//! (--rlc=am: AM) with 512 kB buffers, EPC with ideal RRC (LENA's default; --rrc=real encodes
//! the messages over the SRBs), X2 links of 10 Gbit/s and no delay (LENA's defaults; --x2-delay
//! in ms).
//! Handover: --algorithm=a3 (A3RsrpHandoverAlgorithm, --hysteresis dB, --ttt ms; 3, 256) or
//! a2a4 (A2A4RsrqHandoverAlgorithm, --serving-threshold and --neighbour-offset, RSRQ range
//! units; 30, 1). The UE's RSRP/RSRQ come from LENA's PHY every 200 ms (the L1 period) and its
//! RRC filters them with fc4 before evaluating the events. --ctrl-errors=off turns LENA's
//! PCFICH/PDCCH error model off (on by default, as in LENA).
//! Traffic: TCP NewReno (classic recovery, SACK, timestamps, MSS 1448, 4 MiB buffers, IW 10:
//! the reference's `large` profile), BulkSend in 512-byte writes from 0.5 s, counted by a
//! PacketSink on the UE.
//!
//! Prints JSON lines, in this order:
//!   {"type": "config", ...the options...}
//!   one line per event, in time order, each with "t" (s) and "x" (the UE's x, m):
//!     "handover_start" (side "ue" or "enb"; source_cell, target_cell),
//!     "handover_end_ok" (side "ue" or "enb"; cell), "handover_end_error" (ue; cell),
//!     "handover_failure" (enb; cell, reason no_preamble|max_rach|leaving|joining),
//!     "measurement_report" (the eNB receiving it: cell, meas_id, serving_rsrp_dbm,
//!       neighbours [[cell, rsrp_dbm], ...]; RSRP as quantised in the report),
//!     "connection_established" (ue; cell), "radio_link_failure" (ue; cell),
//!     "tcp_state" (server; state "recovery" or "loss" (RTO) as the sender enters it, cwnd_bytes)
//!   {"type": "rsrp", "t", "x", "serving_cell", "cells": [{"cell", "rsrp_dbm", "rsrq_db"}, ...],
//!    "best_neighbour", "ctrl_sinr_db"} every L1 period: LENA's L1 values (before the L3
//!    filter); ctrl_sinr_db is the serving cell's RSRP over every other cell's plus the noise
//!    per resource element, the SINR of the control region (PDCCH) that all eNBs always send
//!   {"type": "goodput", "t", "t_end", "x", "bytes", "mbps", "cqi_sinr_db", "cwnd_bytes",
//!    "ssthresh_bytes"} per --bin (0.1 s); x at the centre; cqi_sinr_db the mean (linear) of
//!    LteUePhy/ReportCurrentCellRsrpSinr's SINR in the bin, the one LENA's CQI uses
//!    (interference only from eNBs sending data); the sender's cwnd and ssthresh at the bin's end
//!   {"type": "summary", "handovers", "handover_start_t_s", "handover_start_x_m",
//!    "handover_source_cells", "handover_target_cells", "interruption_ms" (UE HandoverStart to
//!    HandoverEndOk), "mean_interruption_ms", "ip_gap_ms" (the last IP packet the UE received
//!    from the cell before a handover start to the first after it), "sink_gap_ms" (the same
//!    for the sink's in-order deliveries, so with TCP's recovery of what the handover lost),
//!    "radio_link_failures", "handover_failures",
//!    "total_bytes", "goodput_mbps" (from 0.5 s to the end), "sim_seconds", "wall_seconds",
//!    "events"}
//! wall_seconds is measured around Simulator::Run only.
//!
//! Built and run by bench/lena/handover.sh; ns-3.37 (Debian libns3-dev).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/lte-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

Ptr<MobilityModel> g_ue_mobility;
std::vector<std::string> g_event_lines;
uint64_t g_total_bytes = 0;
uint64_t g_bin_bytes = 0;
double g_bin_sinr_sum = 0.0; // linear, LteUePhy/ReportCurrentCellRsrpSinr samples in this bin
uint32_t g_bin_sinr_num = 0;
double g_noise_re_dbm = 0.0; // thermal noise plus the UE's noise figure per resource element
uint32_t g_cwnd = 0;             // the sender's congestion window and slow-start threshold, bytes
uint32_t g_ssthresh = 0;
std::vector<double> g_rx_times; // time of every in-order delivery of payload at the sink
std::vector<double> g_ip_rx_times; // time of every IP packet the UE received from the cell

struct Handover
{
    double start_t;
    double start_x;
    uint16_t source;
    uint16_t target;
    double end_t = -1.0;
};

std::vector<Handover> g_handovers; // UE side
uint32_t g_rlf = 0;
uint32_t g_ho_failures = 0;

struct CellSample
{
    uint16_t cell;
    double rsrp;
    double rsrq;
};

struct MeasPeriod
{
    double t;
    double x;
    uint16_t serving = 0;
    std::vector<CellSample> cells;
};

std::vector<MeasPeriod> g_meas;
std::vector<std::string> g_goodput_lines;

std::string
Num(double value)
{
    if (!std::isfinite(value))
    {
        return "null";
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.10g", value);
    return buf;
}

std::string
Fixed(double value, int decimals)
{
    if (!std::isfinite(value))
    {
        return "null";
    }
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
    return buf;
}

[[noreturn]] void
Fail(const std::string& message)
{
    std::fprintf(stderr, "handover: %s\n", message.c_str());
    std::exit(2);
}

double
Now()
{
    return Simulator::Now().GetSeconds();
}

double
UeX()
{
    return g_ue_mobility->GetPosition().x;
}

// The common head of an event line: type, side, time and position.
std::string
EventHead(const std::string& type, const std::string& side)
{
    return "{\"type\": \"" + type + "\", \"side\": \"" + side + "\", \"t\": " + Fixed(Now(), 6) +
           ", \"x\": " + Fixed(UeX(), 3);
}

void
Emit(const std::string& line)
{
    g_event_lines.push_back(line + "}");
}

void
OnRx(Ptr<const Packet> packet, const Address&)
{
    g_total_bytes += packet->GetSize();
    g_bin_bytes += packet->GetSize();
    g_rx_times.push_back(Now());
}

void
OnIpRx(Ptr<const Packet>, Ptr<Ipv4>, uint32_t interface)
{
    if (interface == 1) // the LTE device (0 is the loopback)
    {
        g_ip_rx_times.push_back(Now());
    }
}

// The gap around time t in a sorted series: from the last element at or before t to the first
// after it, ms (NaN when either is missing).
double
GapAround(const std::vector<double>& times, double t)
{
    auto after = std::upper_bound(times.begin(), times.end(), t);
    if (after == times.begin() || after == times.end())
    {
        return NAN;
    }
    return (*after - *(after - 1)) * 1e3;
}

void
UeHandoverStart(uint64_t imsi, uint16_t cell, uint16_t rnti, uint16_t target)
{
    g_handovers.push_back({Now(), UeX(), cell, target});
    Emit(EventHead("handover_start", "ue") + ", \"imsi\": " + std::to_string(imsi) +
         ", \"rnti\": " + std::to_string(rnti) + ", \"source_cell\": " + std::to_string(cell) +
         ", \"target_cell\": " + std::to_string(target));
}

void
UeHandoverEndOk(uint64_t imsi, uint16_t cell, uint16_t rnti)
{
    if (!g_handovers.empty() && g_handovers.back().end_t < 0.0)
    {
        g_handovers.back().end_t = Now();
    }
    Emit(EventHead("handover_end_ok", "ue") + ", \"imsi\": " + std::to_string(imsi) +
         ", \"rnti\": " + std::to_string(rnti) + ", \"cell\": " + std::to_string(cell));
}

void
UeHandoverEndError(uint64_t imsi, uint16_t cell, uint16_t rnti)
{
    Emit(EventHead("handover_end_error", "ue") + ", \"imsi\": " + std::to_string(imsi) +
         ", \"rnti\": " + std::to_string(rnti) + ", \"cell\": " + std::to_string(cell));
}

void
UeConnectionEstablished(uint64_t imsi, uint16_t cell, uint16_t rnti)
{
    Emit(EventHead("connection_established", "ue") + ", \"imsi\": " + std::to_string(imsi) +
         ", \"rnti\": " + std::to_string(rnti) + ", \"cell\": " + std::to_string(cell));
}

void
UeRadioLinkFailure(uint64_t imsi, uint16_t cell, uint16_t rnti)
{
    ++g_rlf;
    Emit(EventHead("radio_link_failure", "ue") + ", \"imsi\": " + std::to_string(imsi) +
         ", \"rnti\": " + std::to_string(rnti) + ", \"cell\": " + std::to_string(cell));
}

void
EnbHandoverStart(uint64_t imsi, uint16_t source, uint16_t rnti, uint16_t target)
{
    Emit(EventHead("handover_start", "enb") + ", \"imsi\": " + std::to_string(imsi) +
         ", \"rnti\": " + std::to_string(rnti) + ", \"source_cell\": " + std::to_string(source) +
         ", \"target_cell\": " + std::to_string(target));
}

void
EnbHandoverEndOk(uint64_t imsi, uint16_t cell, uint16_t rnti)
{
    Emit(EventHead("handover_end_ok", "enb") + ", \"imsi\": " + std::to_string(imsi) +
         ", \"rnti\": " + std::to_string(rnti) + ", \"cell\": " + std::to_string(cell));
}

void
EnbHandoverFailure(std::string reason, uint64_t imsi, uint16_t rnti, uint16_t cell)
{
    ++g_ho_failures;
    Emit(EventHead("handover_failure", "enb") + ", \"imsi\": " + std::to_string(imsi) +
         ", \"rnti\": " + std::to_string(rnti) + ", \"cell\": " + std::to_string(cell) +
         ", \"reason\": \"" + reason + "\"");
}

void
EnbMeasurementReport(uint64_t imsi,
                     uint16_t cell,
                     uint16_t rnti,
                     LteRrcSap::MeasurementReport report)
{
    const LteRrcSap::MeasResults& r = report.measResults;
    std::string neighbours;
    if (r.haveMeasResultNeighCells)
    {
        for (const auto& n : r.measResultListEutra)
        {
            neighbours += std::string(neighbours.empty() ? "" : ", ") + "[" +
                          std::to_string(n.physCellId) + ", " +
                          (n.haveRsrpResult
                               ? Num(EutranMeasurementMapping::RsrpRange2Dbm(n.rsrpResult))
                               : std::string("null")) +
                          "]";
        }
    }
    Emit(EventHead("measurement_report", "enb") + ", \"imsi\": " + std::to_string(imsi) +
         ", \"rnti\": " + std::to_string(rnti) + ", \"cell\": " + std::to_string(cell) +
         ", \"meas_id\": " + std::to_string(r.measId) + ", \"serving_rsrp_dbm\": " +
         Num(EutranMeasurementMapping::RsrpRange2Dbm(r.measResultPCell.rsrpResult)) +
         ", \"neighbours\": [" + neighbours + "]");
}

// LteUePhy/ReportUeMeasurements: one call per measured cell at the end of each L1 period.
void
UeMeasurements(uint16_t rnti,
               uint16_t cell,
               double rsrp,
               double rsrq,
               bool serving,
               uint8_t componentCarrier)
{
    if (componentCarrier != 0)
    {
        return;
    }
    double t = Now();
    if (g_meas.empty() || g_meas.back().t != t)
    {
        g_meas.push_back({t, UeX(), 0, {}});
    }
    MeasPeriod& m = g_meas.back();
    if (serving)
    {
        m.serving = cell;
    }
    m.cells.push_back({cell, rsrp, rsrq});
}

// LteUePhy/ReportCurrentCellRsrpSinr: every TTI, the serving cell's RSRP and the SINR LENA
// feeds its CQI (with UsePdschForCqiGeneration, its default: the control region's signal over
// the interference measured on the PDSCH, i.e. from eNBs that transmitted data, and noise).
void
UeRsrpSinr(uint16_t cell, uint16_t rnti, double rsrp, double sinr, uint8_t componentCarrier)
{
    if (componentCarrier == 0 && std::isfinite(sinr))
    {
        g_bin_sinr_sum += sinr;
        ++g_bin_sinr_num;
    }
}

void
OnCwnd(uint32_t, uint32_t value)
{
    g_cwnd = value;
}

void
OnSsthresh(uint32_t, uint32_t value)
{
    g_ssthresh = value;
}

// The sender's congestion state machine: its entries into fast recovery and into loss (RTO).
void
OnCongState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t state)
{
    const char* name = state == TcpSocketState::CA_RECOVERY ? "recovery"
                       : state == TcpSocketState::CA_LOSS   ? "loss"
                                                            : nullptr;
    if (name)
    {
        Emit(EventHead("tcp_state", "server") + ", \"state\": \"" + name +
             "\", \"cwnd_bytes\": " + std::to_string(g_cwnd) + "");
    }
}

void
ConnectSenderTraces(Ptr<BulkSendApplication> sender)
{
    Ptr<Socket> socket = sender->GetSocket();
    if (!socket)
    {
        Fail("the BulkSend socket does not exist at the time its traces are connected");
    }
    socket->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&OnCwnd));
    socket->TraceConnectWithoutContext("SlowStartThreshold", MakeCallback(&OnSsthresh));
    socket->TraceConnectWithoutContext("CongState", MakeCallback(&OnCongState));
}

void
GoodputBin(double bin)
{
    double end = Now();
    double start = end - bin;
    double x_mid = g_ue_mobility->GetPosition().x - g_ue_mobility->GetVelocity().x * bin / 2.0;
    g_goodput_lines.push_back(
        "{\"type\": \"goodput\", \"t\": " + Fixed(start, 3) + ", \"t_end\": " + Fixed(end, 3) +
        ", \"x\": " + Fixed(x_mid, 2) + ", \"bytes\": " + std::to_string(g_bin_bytes) +
        ", \"mbps\": " + Fixed(g_bin_bytes * 8.0 / bin / 1e6, 4) + ", \"cqi_sinr_db\": " +
        (g_bin_sinr_num ? Fixed(10.0 * std::log10(g_bin_sinr_sum / g_bin_sinr_num), 2)
                        : std::string("null")) +
        ", \"cwnd_bytes\": " + std::to_string(g_cwnd) +
        ", \"ssthresh_bytes\": " + std::to_string(g_ssthresh) + "}");
    g_bin_bytes = 0;
    g_bin_sinr_sum = 0.0;
    g_bin_sinr_num = 0;
    Simulator::Schedule(Seconds(bin), &GoodputBin, bin);
}

void
StopUe()
{
    DynamicCast<ConstantVelocityMobilityModel>(g_ue_mobility)->SetVelocity(Vector(0.0, 0.0, 0.0));
}

std::string
JoinNums(const std::vector<double>& values, int decimals)
{
    std::string out;
    for (size_t i = 0; i < values.size(); ++i)
    {
        out += (i ? ", " : "") + Fixed(values[i], decimals);
    }
    return "[" + out + "]";
}

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t n_enbs = 3;
    double isd = 500.0;
    double start = 100.0;
    double end = 900.0;
    double y = 50.0;
    double speed = 20.0;
    std::string algorithm = "a3";
    double hysteresis = 3.0;
    double ttt = 256.0;
    uint32_t serving_threshold = 30;
    uint32_t neighbour_offset = 1;
    double duration = -1.0;
    double bin = 0.1;
    std::string rlc = "um";
    std::string ctrl_errors = "on";
    std::string rrc = "ideal";
    double x2_delay = 0.0;
    double loss = 0.0;
    uint32_t seed = 1;

    CommandLine cmd(__FILE__);
    cmd.AddValue("enbs", "number of eNBs on the line", n_enbs);
    cmd.AddValue("isd", "distance between neighbouring eNBs, m", isd);
    cmd.AddValue("start", "the UE's x at 0 s, m", start);
    cmd.AddValue("end", "the UE's x at the end of its route, m", end);
    cmd.AddValue("y", "the UE's (constant) y, m", y);
    cmd.AddValue("speed", "the UE's speed, m/s", speed);
    cmd.AddValue("algorithm", "a3 (A3RsrpHandoverAlgorithm) or a2a4 (A2A4RsrqHandoverAlgorithm)",
                 algorithm);
    cmd.AddValue("hysteresis", "A3 hysteresis, dB (rounded to 0.5 dB by LENA)", hysteresis);
    cmd.AddValue("ttt", "A3 time to trigger, ms", ttt);
    cmd.AddValue("serving-threshold", "A2A4 ServingCellThreshold, RSRQ range 0..34",
                 serving_threshold);
    cmd.AddValue("neighbour-offset", "A2A4 NeighbourCellOffset, RSRQ range units",
                 neighbour_offset);
    cmd.AddValue("duration", "simulated seconds (default: the route's time plus 1 s)", duration);
    cmd.AddValue("bin", "goodput bin, s", bin);
    cmd.AddValue("rlc", "um or am (the RLC mode of the data bearer)", rlc);
    cmd.AddValue("ctrl-errors", "on or off: LENA's PCFICH/PDCCH error model", ctrl_errors);
    cmd.AddValue("rrc", "ideal (LENA's default) or real (RRC messages encoded over the SRBs)",
                 rrc);
    cmd.AddValue("x2-delay", "one-way delay of the X2 links, ms", x2_delay);
    cmd.AddValue("loss", "packet loss rate on both devices of the server link", loss);
    cmd.AddValue("seed", "RngRun (RngSeed is 1)", seed);
    cmd.Parse(argc, argv);

    if (n_enbs < 2 || n_enbs > 32)
    {
        Fail("--enbs=" + std::to_string(n_enbs) + ": must be 2 to 32");
    }
    if (!(isd > 0.0 && isd <= 100000.0))
    {
        Fail("--isd=" + Num(isd) + ": must be in (0, 100000] m");
    }
    if (!(speed > 0.0 && speed <= 1000.0))
    {
        Fail("--speed=" + Num(speed) + ": must be in (0, 1000] m/s");
    }
    if (!(std::abs(end - start) > 0.0) || !std::isfinite(start) || !std::isfinite(end) ||
        !std::isfinite(y))
    {
        Fail("--start and --end must differ");
    }
    if (algorithm != "a3" && algorithm != "a2a4")
    {
        Fail("--algorithm=" + algorithm + ": must be a3 or a2a4");
    }
    if (!(hysteresis >= 0.0 && hysteresis <= 15.0))
    {
        Fail("--hysteresis=" + Num(hysteresis) + ": must be in [0, 15] dB");
    }
    if (!(ttt >= 0.0 && ttt <= 5120.0))
    {
        Fail("--ttt=" + Num(ttt) + ": must be in [0, 5120] ms");
    }
    if (serving_threshold > 34)
    {
        Fail("--serving-threshold must be 0 to 34");
    }
    if (!(bin >= 0.001 && bin <= 10.0))
    {
        Fail("--bin=" + Num(bin) + ": must be in [0.001, 10] s");
    }
    if (rlc != "um" && rlc != "am")
    {
        Fail("--rlc=" + rlc + ": must be um or am");
    }
    if (ctrl_errors != "on" && ctrl_errors != "off")
    {
        Fail("--ctrl-errors=" + ctrl_errors + ": must be on or off");
    }
    if (rrc != "ideal" && rrc != "real")
    {
        Fail("--rrc=" + rrc + ": must be ideal or real");
    }
    if (!(x2_delay >= 0.0 && x2_delay <= 1000.0))
    {
        Fail("--x2-delay=" + Num(x2_delay) + ": must be in [0, 1000] ms");
    }
    if (!(loss >= 0.0 && loss < 1.0))
    {
        Fail("--loss=" + Num(loss) + ": must be in [0, 1)");
    }
    if (seed < 1)
    {
        Fail("--seed must be at least 1");
    }
    const double route_time = std::abs(end - start) / speed;
    if (duration < 0.0)
    {
        duration = route_time + 1.0;
    }
    if (!(duration > 0.5))
    {
        Fail("--duration must exceed 0.5 s (the download starts at 0.5 s)");
    }
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    // TCP: NewReno, classic recovery, the reference's `large` profile (as lte_cell.cc).
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 * 1024 * 1024));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 * 1024 * 1024));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));

    // Radio (as lte_cell.cc).
    Config::SetDefault("ns3::LteEnbPhy::TxPower", DoubleValue(46.0));
    Config::SetDefault("ns3::LteUePhy::TxPower", DoubleValue(23.0));
    Config::SetDefault("ns3::LteEnbPhy::NoiseFigure", DoubleValue(5.0));
    Config::SetDefault("ns3::LteUePhy::NoiseFigure", DoubleValue(9.0));
    Config::SetDefault("ns3::LteAmc::AmcModel", EnumValue(LteAmc::MiErrorModel));
    Config::SetDefault("ns3::LteRlcUm::MaxTxBufferSize", UintegerValue(524288));
    Config::SetDefault("ns3::LteRlcAm::MaxTxBufferSize", UintegerValue(524288));
    Config::SetDefault("ns3::LteSpectrumPhy::CtrlErrorModelEnabled",
                       BooleanValue(ctrl_errors == "on"));
    g_noise_re_dbm = -174.0 + 10.0 * std::log10(15000.0) + 9.0;
    // With the EPC, LteHelper turns LENA's default (RLC SM) into UM; AM must be asked for.
    if (rlc == "am")
    {
        Config::SetDefault("ns3::LteEnbRrc::EpsBearerToRlcMapping",
                           EnumValue(LteEnbRrc::RLC_AM_ALWAYS));
    }

    Ptr<LteHelper> lte = CreateObject<LteHelper>();
    lte->SetAttribute("UseIdealRrc", BooleanValue(rrc == "ideal"));
    Ptr<PointToPointEpcHelper> epc = CreateObject<PointToPointEpcHelper>();
    epc->SetAttribute("X2LinkDelay", TimeValue(MicroSeconds(std::llround(x2_delay * 1e3))));
    lte->SetEpcHelper(epc);
    lte->SetSchedulerType("ns3::PfFfMacScheduler");
    lte->SetAttribute("PathlossModel", StringValue("ns3::LogDistancePropagationLossModel"));
    lte->SetPathlossModelAttribute("Exponent", DoubleValue(3.0));
    lte->SetPathlossModelAttribute("ReferenceDistance", DoubleValue(1.0));
    lte->SetPathlossModelAttribute("ReferenceLoss", DoubleValue(46.6777));
    lte->SetEnbAntennaModelType("ns3::IsotropicAntennaModel");
    lte->SetUeAntennaModelType("ns3::IsotropicAntennaModel");
    lte->SetEnbDeviceAttribute("DlEarfcn", UintegerValue(2050));
    lte->SetEnbDeviceAttribute("UlEarfcn", UintegerValue(20050));
    lte->SetEnbDeviceAttribute("DlBandwidth", UintegerValue(100));
    lte->SetEnbDeviceAttribute("UlBandwidth", UintegerValue(100));
    if (algorithm == "a3")
    {
        lte->SetHandoverAlgorithmType("ns3::A3RsrpHandoverAlgorithm");
        lte->SetHandoverAlgorithmAttribute("Hysteresis", DoubleValue(hysteresis));
        lte->SetHandoverAlgorithmAttribute("TimeToTrigger", TimeValue(MilliSeconds(ttt)));
    }
    else
    {
        lte->SetHandoverAlgorithmType("ns3::A2A4RsrqHandoverAlgorithm");
        lte->SetHandoverAlgorithmAttribute("ServingCellThreshold",
                                           UintegerValue(serving_threshold));
        lte->SetHandoverAlgorithmAttribute("NeighbourCellOffset",
                                           UintegerValue(neighbour_offset));
    }

    NodeContainer enbs;
    enbs.Create(n_enbs);
    NodeContainer ue_nodes;
    ue_nodes.Create(1);
    Ptr<ListPositionAllocator> enb_positions = CreateObject<ListPositionAllocator>();
    for (uint32_t i = 0; i < n_enbs; ++i)
    {
        enb_positions->Add(Vector(i * isd, 0.0, 0.0));
    }
    MobilityHelper enb_mobility;
    enb_mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    enb_mobility.SetPositionAllocator(enb_positions);
    enb_mobility.Install(enbs);
    MobilityHelper ue_mobility;
    ue_mobility.SetMobilityModel("ns3::ConstantVelocityMobilityModel");
    ue_mobility.Install(ue_nodes);
    Ptr<ConstantVelocityMobilityModel> ue_motion =
        ue_nodes.Get(0)->GetObject<ConstantVelocityMobilityModel>();
    ue_motion->SetPosition(Vector(start, y, 0.0));
    ue_motion->SetVelocity(Vector(end > start ? speed : -speed, 0.0, 0.0));
    g_ue_mobility = ue_motion;
    Simulator::Schedule(Seconds(route_time), &StopUe);

    NetDeviceContainer enb_devs = lte->InstallEnbDevice(enbs);
    NetDeviceContainer ue_devs = lte->InstallUeDevice(ue_nodes);

    InternetStackHelper internet;
    internet.Install(ue_nodes);
    Ipv4InterfaceContainer ue_ifaces = epc->AssignUeIpv4Address(ue_devs);
    Ipv4StaticRoutingHelper routing;
    routing.GetStaticRouting(ue_nodes.Get(0)->GetObject<Ipv4>())
        ->SetDefaultRoute(epc->GetUeDefaultGatewayAddress(), 1);
    lte->Attach(ue_devs.Get(0), enb_devs.Get(0));
    lte->AddX2Interface(enbs);

    // The server behind the P-GW (as lte_cell.cc's, one of them).
    Ptr<Node> pgw = epc->GetPgwNode();
    NodeContainer servers;
    servers.Create(1);
    internet.Install(servers);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate("100Gb/s")));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(1500));
    p2p.SetChannelAttribute("Delay", TimeValue(MilliSeconds(10)));
    p2p.SetQueue("ns3::DropTailQueue", "MaxSize", QueueSizeValue(QueueSize("100p")));
    TrafficControlHelper pfifo;
    pfifo.SetRootQueueDisc("ns3::PfifoFastQueueDisc", "MaxSize", QueueSizeValue(QueueSize("1000p")));
    NetDeviceContainer link = p2p.Install(pgw, servers.Get(0));
    Ipv4AddressHelper addresses;
    addresses.SetBase("1.0.0.0", "255.255.255.0");
    addresses.Assign(link);
    TrafficControlHelper().Uninstall(link);
    pfifo.Install(link);
    std::vector<Ptr<RateErrorModel>> error_models;
    for (uint32_t d = 0; d < 2; ++d)
    {
        Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
        em->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
        em->SetRate(loss);
        link.Get(d)->SetAttribute("ReceiveErrorModel", PointerValue(em));
        error_models.push_back(em);
    }
    routing.GetStaticRouting(servers.Get(0)->GetObject<Ipv4>())
        ->AddNetworkRouteTo(Ipv4Address("7.0.0.0"), Ipv4Mask("255.0.0.0"), 1);

    const uint16_t port = 9000;
    BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(ue_ifaces.GetAddress(0), port));
    bulk.SetAttribute("SendSize", UintegerValue(512));
    bulk.SetAttribute("MaxBytes", UintegerValue(0));
    ApplicationContainer senders = bulk.Install(servers.Get(0));
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinks = sink.Install(ue_nodes.Get(0));
    sinks.Get(0)->TraceConnectWithoutContext("Rx", MakeCallback(&OnRx));
    ue_nodes.Get(0)->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext(
        "Rx", MakeCallback(&OnIpRx));
    senders.Start(Seconds(0.5));
    sinks.Start(Seconds(0.0));
    Simulator::Schedule(Seconds(0.5) + NanoSeconds(1),
                        &ConnectSenderTraces,
                        DynamicCast<BulkSendApplication>(senders.Get(0)));

    // Traces.
    Ptr<LteUeNetDevice> ue_dev = ue_devs.Get(0)->GetObject<LteUeNetDevice>();
    Ptr<LteUeRrc> ue_rrc = ue_dev->GetRrc();
    ue_rrc->TraceConnectWithoutContext("HandoverStart", MakeCallback(&UeHandoverStart));
    ue_rrc->TraceConnectWithoutContext("HandoverEndOk", MakeCallback(&UeHandoverEndOk));
    ue_rrc->TraceConnectWithoutContext("HandoverEndError", MakeCallback(&UeHandoverEndError));
    ue_rrc->TraceConnectWithoutContext("ConnectionEstablished",
                                       MakeCallback(&UeConnectionEstablished));
    ue_rrc->TraceConnectWithoutContext("RadioLinkFailure", MakeCallback(&UeRadioLinkFailure));
    ue_dev->GetPhy()->TraceConnectWithoutContext("ReportUeMeasurements",
                                                 MakeCallback(&UeMeasurements));
    ue_dev->GetPhy()->TraceConnectWithoutContext("ReportCurrentCellRsrpSinr",
                                                 MakeCallback(&UeRsrpSinr));
    for (uint32_t i = 0; i < n_enbs; ++i)
    {
        Ptr<LteEnbRrc> rrc = enb_devs.Get(i)->GetObject<LteEnbNetDevice>()->GetRrc();
        rrc->TraceConnectWithoutContext("HandoverStart", MakeCallback(&EnbHandoverStart));
        rrc->TraceConnectWithoutContext("HandoverEndOk", MakeCallback(&EnbHandoverEndOk));
        rrc->TraceConnectWithoutContext("RecvMeasurementReport",
                                        MakeCallback(&EnbMeasurementReport));
        rrc->TraceConnectWithoutContext(
            "HandoverFailureNoPreamble",
            MakeBoundCallback(&EnbHandoverFailure, std::string("no_preamble")));
        rrc->TraceConnectWithoutContext(
            "HandoverFailureMaxRach",
            MakeBoundCallback(&EnbHandoverFailure, std::string("max_rach")));
        rrc->TraceConnectWithoutContext(
            "HandoverFailureLeaving",
            MakeBoundCallback(&EnbHandoverFailure, std::string("leaving")));
        rrc->TraceConnectWithoutContext(
            "HandoverFailureJoining",
            MakeBoundCallback(&EnbHandoverFailure, std::string("joining")));
    }
    Simulator::Schedule(Seconds(bin), &GoodputBin, bin);

    // Every random stream the run uses is assigned, so the seed alone fixes the run.
    int64_t stream = 1000;
    stream += lte->AssignStreams(enb_devs, stream);
    stream += lte->AssignStreams(ue_devs, stream);
    stream += internet.AssignStreams(ue_nodes, stream);
    stream += internet.AssignStreams(servers, stream);
    for (auto& em : error_models)
    {
        stream += em->AssignStreams(stream);
    }

    std::printf("{\"type\": \"config\", \"enbs\": %u, \"isd_m\": %g, \"start_m\": %g, "
                "\"end_m\": %g, \"y_m\": %g, \"speed_mps\": %g, \"algorithm\": \"%s\", "
                "\"hysteresis_db\": %g, \"ttt_ms\": %g, \"serving_threshold\": %u, "
                "\"neighbour_offset\": %u, \"duration_s\": %g, \"bin_s\": %g, \"rlc\": \"%s\", "
                "\"ctrl_errors\": \"%s\", \"rrc\": \"%s\", \"x2_delay_ms\": %g, "
                "\"loss\": %g, \"seed\": %u, \"enb_x_m\": [",
                n_enbs, isd, start, end, y, speed, algorithm.c_str(), hysteresis, ttt,
                serving_threshold, neighbour_offset, duration, bin, rlc.c_str(),
                ctrl_errors.c_str(), rrc.c_str(), x2_delay, loss, seed);
    for (uint32_t i = 0; i < n_enbs; ++i)
    {
        std::printf("%s%g", i ? ", " : "", i * isd);
    }
    std::printf("], \"enb_cell_ids\": [");
    for (uint32_t i = 0; i < n_enbs; ++i)
    {
        std::printf("%s%u", i ? ", " : "",
                    enb_devs.Get(i)->GetObject<LteEnbNetDevice>()->GetCellId());
    }
    std::printf("]}\n");

    Simulator::Stop(Seconds(duration));
    auto started = std::chrono::steady_clock::now();
    Simulator::Run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    double sim_seconds = Simulator::Now().GetSeconds();
    uint64_t events = Simulator::GetEventCount();

    for (const auto& line : g_event_lines)
    {
        std::printf("%s\n", line.c_str());
    }
    for (const auto& m : g_meas)
    {
        std::string cells;
        uint16_t best = 0;
        double best_rsrp = -INFINITY;
        double serving_mw = NAN;
        double others_mw = 0.0;
        for (const auto& c : m.cells)
        {
            if (c.cell == m.serving)
            {
                serving_mw = std::pow(10.0, c.rsrp / 10.0);
            }
            else
            {
                others_mw += std::pow(10.0, c.rsrp / 10.0);
            }
            cells += std::string(cells.empty() ? "" : ", ") + "{\"cell\": " +
                     std::to_string(c.cell) + ", \"rsrp_dbm\": " + Fixed(c.rsrp, 3) +
                     ", \"rsrq_db\": " + Fixed(c.rsrq, 3) + "}";
            if (c.cell != m.serving && c.rsrp > best_rsrp)
            {
                best = c.cell;
                best_rsrp = c.rsrp;
            }
        }
        // The control region's SINR rebuilt from the L1 RSRPs: every eNB sends its control
        // region over the whole band in every subframe, so all of them interfere there.
        double ctrl_sinr =
            10.0 * std::log10(serving_mw / (others_mw + std::pow(10.0, g_noise_re_dbm / 10.0)));
        std::printf("{\"type\": \"rsrp\", \"t\": %s, \"x\": %s, \"serving_cell\": %u, "
                    "\"cells\": [%s], \"best_neighbour\": %s, \"ctrl_sinr_db\": %s}\n",
                    Fixed(m.t, 3).c_str(), Fixed(m.x, 3).c_str(), m.serving, cells.c_str(),
                    best ? std::to_string(best).c_str() : "null", Fixed(ctrl_sinr, 2).c_str());
    }
    for (const auto& line : g_goodput_lines)
    {
        std::printf("%s\n", line.c_str());
    }

    std::vector<double> start_t, start_x, source, target, interruption, sink_gaps, ip_gaps;
    double interruption_sum = 0.0;
    uint32_t completed = 0;
    for (const auto& h : g_handovers)
    {
        start_t.push_back(h.start_t);
        start_x.push_back(h.start_x);
        source.push_back(h.source);
        target.push_back(h.target);
        double ms = h.end_t >= 0.0 ? (h.end_t - h.start_t) * 1e3 : NAN;
        interruption.push_back(ms);
        if (std::isfinite(ms))
        {
            interruption_sum += ms;
            ++completed;
        }
        sink_gaps.push_back(GapAround(g_rx_times, h.start_t));
        ip_gaps.push_back(GapAround(g_ip_rx_times, h.start_t));
    }
    std::printf("{\"type\": \"summary\", \"handovers\": %zu, \"handover_start_t_s\": %s, "
                "\"handover_start_x_m\": %s, \"handover_source_cells\": %s, "
                "\"handover_target_cells\": %s, \"interruption_ms\": %s, "
                "\"mean_interruption_ms\": %s, \"ip_gap_ms\": %s, \"sink_gap_ms\": %s, "
                "\"radio_link_failures\": %u, "
                "\"handover_failures\": %u, \"total_bytes\": %llu, \"goodput_mbps\": %s, "
                "\"sim_seconds\": %.3f, \"wall_seconds\": %.3f, \"events\": %llu}\n",
                g_handovers.size(), JoinNums(start_t, 6).c_str(), JoinNums(start_x, 3).c_str(),
                JoinNums(source, 0).c_str(), JoinNums(target, 0).c_str(),
                JoinNums(interruption, 3).c_str(),
                completed ? Fixed(interruption_sum / completed, 3).c_str() : "null",
                JoinNums(ip_gaps, 3).c_str(), JoinNums(sink_gaps, 3).c_str(), g_rlf,
                g_ho_failures,
                static_cast<unsigned long long>(g_total_bytes),
                Fixed(g_total_bytes * 8.0 / (duration - 0.5) / 1e6, 4).c_str(), sim_seconds,
                wall, static_cast<unsigned long long>(events));
    Simulator::Destroy();
    return 0;
}
