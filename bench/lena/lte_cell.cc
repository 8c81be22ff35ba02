//! ns-3 LENA counterpart of multiconn's LTE cell: the QUIC vs TCP cell study's set-up
//! (docs/lte-cell.md, "Cross-check against ns-3 LENA") with TCP downloads only.
//!
//!   server_i --- 100 Gbit/s, 10 ms, 1000-packet PfifoFast over a 100-packet drop-tail device
//!                queue, 0.5 % loss both ways (--loss) --- P-GW
//!   P-GW --- S5 --- S-GW --- S1-U --- eNB ))) N UEs on a circle of radius --distance
//!
//! One eNB (20 MHz, Band 4 EARFCN 2050/20050, 46 dBm, noise figure 5 dB), N UEs (23 dBm,
//! noise figure 9 dB), log-distance path loss (exponent 3, 46.6777 dB at 1 m), PF scheduler,
//! MI error model, RLC UM with 512 kB buffers, EPC. Each UE downloads from its own server:
//! TCP NewReno (classic recovery, SACK, timestamps; --tcp=large: MSS 1448, 4 MiB buffers, IW 10,
//! the reference's `large` profile; --tcp=ns329: ns-3.29's defaults as the study ran them, MSS
//! 536, 128 KiB buffers, IW 1), BulkSend in 512-byte writes from 0.5 s, counted by a PacketSink
//! on the UE. --loss=P is the packet loss rate on both devices of every server link (0.005).
//! --fading=trace reads LENA's EPA 3 km/h trace (TraceFadingLossModel, 0.5 s windows) from
//! --trace=FILE; --fading=none runs without fading.
//!
//! Prints one JSON line:
//!   {"distance_m":..., "ues":..., "fading":..., "tcp":..., "loss":..., "seed":..., "duration_s":...,
//!    "measure_from_s":..., "goodput_mbps":[per UE], "sim_seconds":..., "wall_seconds":...,
//!    "events":...}
//! goodput_mbps counts the TCP payload received from --measure-from to the end;
//! wall_seconds is measured around Simulator::Run only.
//!
//! Built and run by bench/lena/run.sh; ns-3.37 (Debian libns3-dev).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/lte-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

double g_measure_from = 5.0; // seconds
std::vector<uint64_t> g_bytes; // per UE, received from g_measure_from on

void
OnRx(uint32_t ue, Ptr<const Packet> packet, const Address&)
{
    if (Simulator::Now().GetSeconds() >= g_measure_from)
    {
        g_bytes[ue] += packet->GetSize();
    }
}

std::string
Num(double value)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", value);
    return buf;
}

[[noreturn]] void
Fail(const std::string& message)
{
    std::fprintf(stderr, "lte_cell: %s\n", message.c_str());
    std::exit(2);
}

} // namespace

int
main(int argc, char* argv[])
{
    double distance = 250.0;
    uint32_t ues = 1;
    std::string fading = "none";
    std::string trace;
    double duration = 40.0;
    uint32_t seed = 1;
    std::string tcp = "large";
    double loss = 0.005;

    CommandLine cmd(__FILE__);
    cmd.AddValue("distance", "distance of every UE from the eNB, m", distance);
    cmd.AddValue("ues", "number of UEs, each with its own server and download", ues);
    cmd.AddValue("fading", "none or trace (LENA's EPA 3 km/h trace, see --trace)", fading);
    cmd.AddValue("trace", "path of fading_trace_EPA_3kmph.fad (with --fading=trace)", trace);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("measure-from", "goodput is counted from this second on", g_measure_from);
    cmd.AddValue("seed", "RngRun (RngSeed is 1)", seed);
    cmd.AddValue("tcp", "large (MSS 1448, 4 MiB buffers, IW 10) or ns329 (536, 128 KiB, 1)", tcp);
    cmd.AddValue("loss", "packet loss rate on both devices of each server link", loss);
    cmd.Parse(argc, argv);

    if (!(distance > 0.0 && distance <= 100000.0))
    {
        Fail("--distance=" + Num(distance) + ": must be in (0, 100000] m");
    }
    if (ues < 1 || ues > 64)
    {
        Fail("--ues=" + std::to_string(ues) + ": must be 1 to 64");
    }
    if (fading != "none" && fading != "trace")
    {
        Fail("--fading=" + fading + ": must be none or trace");
    }
    if (fading == "trace" && !std::ifstream(trace).good())
    {
        Fail("--fading=trace needs --trace=FILE (fading_trace_EPA_3kmph.fad); cannot read \"" +
             trace + "\"");
    }
    if (!(g_measure_from >= 0.5 && duration > g_measure_from))
    {
        Fail("--duration must exceed --measure-from, and --measure-from be at least 0.5 s");
    }
    if (seed < 1)
    {
        Fail("--seed must be at least 1");
    }
    if (tcp != "large" && tcp != "ns329")
    {
        Fail("--tcp=" + tcp + ": must be large or ns329");
    }
    if (!(loss >= 0.0 && loss < 1.0))
    {
        Fail("--loss=" + Num(loss) + ": must be in [0, 1)");
    }
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    // TCP: NewReno, classic recovery, the reference's `large` profile or ns-3.29's defaults.
    const bool large = tcp == "large";
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(large ? 1448 : 536));
    Config::SetDefault("ns3::TcpSocket::SndBufSize",
                       UintegerValue(large ? 4 * 1024 * 1024 : 131072));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize",
                       UintegerValue(large ? 4 * 1024 * 1024 : 131072));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(large ? 10 : 1));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));

    // Radio (the reference's §2; most are LENA's defaults, set here so that they are visible).
    Config::SetDefault("ns3::LteEnbPhy::TxPower", DoubleValue(46.0));
    Config::SetDefault("ns3::LteUePhy::TxPower", DoubleValue(23.0));
    Config::SetDefault("ns3::LteEnbPhy::NoiseFigure", DoubleValue(5.0));
    Config::SetDefault("ns3::LteUePhy::NoiseFigure", DoubleValue(9.0));
    Config::SetDefault("ns3::LteAmc::AmcModel", EnumValue(LteAmc::MiErrorModel));
    Config::SetDefault("ns3::LteRlcUm::MaxTxBufferSize", UintegerValue(524288));

    Ptr<LteHelper> lte = CreateObject<LteHelper>();
    Ptr<PointToPointEpcHelper> epc = CreateObject<PointToPointEpcHelper>();
    lte->SetEpcHelper(epc);
    lte->SetSchedulerType("ns3::PfFfMacScheduler");
    lte->SetAttribute("PathlossModel", StringValue("ns3::LogDistancePropagationLossModel"));
    lte->SetPathlossModelAttribute("Exponent", DoubleValue(3.0));
    lte->SetPathlossModelAttribute("ReferenceDistance", DoubleValue(1.0));
    lte->SetPathlossModelAttribute("ReferenceLoss", DoubleValue(46.6777));
    if (fading == "trace")
    {
        lte->SetAttribute("FadingModel", StringValue("ns3::TraceFadingLossModel"));
        lte->SetFadingModelAttribute("TraceFilename", StringValue(trace));
        lte->SetFadingModelAttribute("TraceLength", TimeValue(Seconds(10.0)));
        lte->SetFadingModelAttribute("SamplesNum", UintegerValue(10000));
        lte->SetFadingModelAttribute("WindowSize", TimeValue(Seconds(0.5)));
        lte->SetFadingModelAttribute("RbNum", UintegerValue(100));
    }
    lte->SetEnbDeviceAttribute("DlEarfcn", UintegerValue(2050));
    lte->SetEnbDeviceAttribute("UlEarfcn", UintegerValue(20050));
    lte->SetEnbDeviceAttribute("DlBandwidth", UintegerValue(100));
    lte->SetEnbDeviceAttribute("UlBandwidth", UintegerValue(100));

    NodeContainer enbs;
    enbs.Create(1);
    NodeContainer ue_nodes;
    ue_nodes.Create(ues);
    Ptr<ListPositionAllocator> positions = CreateObject<ListPositionAllocator>();
    positions->Add(Vector(0.0, 0.0, 0.0));
    for (uint32_t i = 0; i < ues; ++i)
    {
        double angle = 2.0 * M_PI * i / ues;
        positions->Add(Vector(distance * std::cos(angle), distance * std::sin(angle), 0.0));
    }
    MobilityHelper mobility;
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mobility.SetPositionAllocator(positions);
    mobility.Install(enbs);
    mobility.Install(ue_nodes);

    NetDeviceContainer enb_devs = lte->InstallEnbDevice(enbs);
    NetDeviceContainer ue_devs = lte->InstallUeDevice(ue_nodes);

    InternetStackHelper internet;
    internet.Install(ue_nodes);
    Ipv4InterfaceContainer ue_ifaces = epc->AssignUeIpv4Address(ue_devs);
    // The UE's LTE device has no NetDeviceQueueInterface, so no queue disc is installed on it:
    // the RLC buffer is the queue.
    Ipv4StaticRoutingHelper routing;
    for (uint32_t i = 0; i < ues; ++i)
    {
        routing.GetStaticRouting(ue_nodes.Get(i)->GetObject<Ipv4>())
            ->SetDefaultRoute(epc->GetUeDefaultGatewayAddress(), 1);
    }
    lte->Attach(ue_devs, enb_devs.Get(0));

    // One server per UE, each over its own point-to-point link to the P-GW.
    Ptr<Node> pgw = epc->GetPgwNode();
    NodeContainer servers;
    servers.Create(ues);
    internet.Install(servers);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate("100Gb/s")));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(1500));
    p2p.SetChannelAttribute("Delay", TimeValue(MilliSeconds(10)));
    p2p.SetQueue("ns3::DropTailQueue", "MaxSize", QueueSizeValue(QueueSize("100p")));
    // The study's queue disc: ns-3.29's Ipv4AddressHelper installed PfifoFast (1000 packets in
    // all bands together; TCP's priority 0 maps to band 1) on every device it gave an address;
    // ns-3.37's installs FqCoDel (TrafficControlHelper::Default), so Assign's is replaced below.
    // The point-to-point helper's flow control stops the queue disc while the 100-packet device
    // queue is full: up to 1100 packets wait per device (multiconn: a 1100-packet FIFO).
    TrafficControlHelper pfifo;
    pfifo.SetRootQueueDisc("ns3::PfifoFastQueueDisc", "MaxSize", QueueSizeValue(QueueSize("1000p")));
    Ipv4AddressHelper addresses;
    std::vector<Ptr<RateErrorModel>> error_models;
    ApplicationContainer senders;
    ApplicationContainer sinks;
    g_bytes.assign(ues, 0);
    const uint16_t port = 9000;
    for (uint32_t i = 0; i < ues; ++i)
    {
        NetDeviceContainer link = p2p.Install(pgw, servers.Get(i));
        std::string base = "1.0." + std::to_string(i) + ".0";
        addresses.SetBase(base.c_str(), "255.255.255.0");
        Ipv4InterfaceContainer ifaces = addresses.Assign(link);
        TrafficControlHelper().Uninstall(link);
        pfifo.Install(link);
        for (uint32_t d = 0; d < 2; ++d) // --loss on receive, both directions
        {
            Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
            em->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
            em->SetRate(loss);
            link.Get(d)->SetAttribute("ReceiveErrorModel", PointerValue(em));
            error_models.push_back(em);
        }
        routing.GetStaticRouting(servers.Get(i)->GetObject<Ipv4>())
            ->AddNetworkRouteTo(Ipv4Address("7.0.0.0"), Ipv4Mask("255.0.0.0"), 1);

        BulkSendHelper bulk("ns3::TcpSocketFactory",
                            InetSocketAddress(ue_ifaces.GetAddress(i), port));
        bulk.SetAttribute("SendSize", UintegerValue(512));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        senders.Add(bulk.Install(servers.Get(i)));
        PacketSinkHelper sink("ns3::TcpSocketFactory",
                              InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer app = sink.Install(ue_nodes.Get(i));
        app.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, i));
        sinks.Add(app);
    }
    senders.Start(Seconds(0.5));
    sinks.Start(Seconds(0.0));

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

    Simulator::Stop(Seconds(duration));
    auto started = std::chrono::steady_clock::now();
    Simulator::Run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    double sim_seconds = Simulator::Now().GetSeconds();
    uint64_t events = Simulator::GetEventCount();

    std::string goodput;
    for (uint32_t i = 0; i < ues; ++i)
    {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%s%.4f", i ? ", " : "",
                      g_bytes[i] * 8.0 / (duration - g_measure_from) / 1e6);
        goodput += buf;
    }
    std::printf("{\"distance_m\": %g, \"ues\": %u, \"fading\": \"%s\", \"tcp\": \"%s\", "
                "\"loss\": %g, \"seed\": %u, \"duration_s\": %g, \"measure_from_s\": %g, "
                "\"goodput_mbps\": [%s], \"sim_seconds\": %.3f, \"wall_seconds\": %.3f, "
                "\"events\": %llu}\n",
                distance, ues, fading.c_str(), tcp.c_str(), loss, seed, duration, g_measure_from,
                goodput.c_str(), sim_seconds, wall, static_cast<unsigned long long>(events));
    Simulator::Destroy();
    return 0;
}
