// ns-3 counterpart of the bulk-transfer benchmark: one TCP bulk sender over a single bottleneck.
//
//   sender --- 40 Mbit/s, 10 ms, 100-packet drop-tail queue --- receiver
//
// TCP NewReno by default (--cc=cubic for ns3::TcpCubic), MSS 1448 with timestamps (1448 + 20
// TCP + 12 options + 20 IP = 1500-byte IP packets), SACK on. BulkSendApplication sends to a
// PacketSink for --duration simulated seconds, or until --bytes have been received.
//
// Prints one JSON line:
//   {"sim_seconds":..., "wall_seconds":..., "bytes_received":..., "goodput_mbps":...}
// wall_seconds is measured around Simulator::Run only (no setup, no teardown).
//
// Built and run by bench/ns3/run.sh; ns-3.37 (Debian libns3-dev).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

using namespace ns3;

namespace
{

uint64_t g_target_bytes = 0;   // 0: no size limit
uint64_t g_received = 0;
Time g_last_rx = Seconds(0);

void
OnRx(Ptr<const Packet> packet, const Address&)
{
    g_received += packet->GetSize();
    g_last_rx = Simulator::Now();
    if (g_target_bytes > 0 && g_received >= g_target_bytes)
    {
        Simulator::Stop();
    }
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string cc = "newreno";
    double duration = 20.0;
    uint64_t bytes = 0;
    std::string rate = "40Mbps";
    std::string delay = "10ms";
    uint32_t queue_packets = 100;
    uint32_t mss = 1448;
    // ns-3 does not autotune socket buffers; its 128 KiB default would cap the window near
    // the 100 kB bandwidth-delay product and the queue would never fill. Linux lets both grow
    // to several MB (tcp_rmem[2] = 6 MiB, tcp_wmem[2] = 4 MiB), so the window is cwnd-limited.
    uint32_t sock_buf = 6 * 1024 * 1024;

    CommandLine cmd(__FILE__);
    cmd.AddValue("cc", "congestion control: newreno or cubic", cc);
    cmd.AddValue("duration", "simulated seconds (with --bytes: upper bound)", duration);
    cmd.AddValue("bytes", "bytes to send (BulkSend MaxBytes); 0 = unlimited", bytes);
    cmd.AddValue("rate", "bottleneck rate", rate);
    cmd.AddValue("delay", "one-way propagation delay", delay);
    cmd.AddValue("queue", "bottleneck queue, packets", queue_packets);
    cmd.AddValue("mss", "TCP segment size (payload bytes)", mss);
    cmd.AddValue("buf", "TCP send and receive buffer, bytes", sock_buf);
    cmd.Parse(argc, argv);

    if (cc == "newreno" || cc == "reno")
    {
        Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    }
    else if (cc == "cubic")
    {
        Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpCubic::GetTypeId()));
    }
    else
    {
        std::fprintf(stderr, "bulk_send: unknown --cc=%s (newreno, cubic)\n", cc.c_str());
        return 2;
    }
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(sock_buf));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(sock_buf));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));

    NodeContainer nodes;
    nodes.Create(2);

    // The bottleneck queue. Each PointToPointNetDevice has its own TxQueue (a DropTailQueue),
    // and assigning IPv4 addresses would also put a traffic-control root queue disc
    // (FqCoDel) in front of it, so a packet could wait in both. We remove the queue disc
    // (Uninstall below) and make the device queue itself a 100-packet drop-tail FIFO: packets
    // wait only there (one on the wire plus up to 100 waiting), as on the benchmark scenario's
    // link. With no queue disc, a packet arriving while the device queue is full (flow control
    // has stopped it) is discarded by the traffic-control layer (its TcDrop trace), not by the
    // queue; the effect is the same tail drop.
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue(rate));
    p2p.SetChannelAttribute("Delay", StringValue(delay));
    p2p.SetQueue("ns3::DropTailQueue<Packet>",
                 "MaxSize",
                 QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, queue_packets)));
    NetDeviceContainer devices = p2p.Install(nodes);

    InternetStackHelper stack;
    stack.Install(nodes);
    Ipv4AddressHelper address;
    address.SetBase("10.1.1.0", "255.255.255.0");
    Ipv4InterfaceContainer interfaces = address.Assign(devices);
    TrafficControlHelper tch;
    tch.Uninstall(devices);

    const uint16_t port = 9;
    BulkSendHelper source("ns3::TcpSocketFactory", InetSocketAddress(interfaces.GetAddress(1), port));
    source.SetAttribute("MaxBytes", UintegerValue(bytes));
    source.SetAttribute("SendSize", UintegerValue(mss));
    ApplicationContainer source_app = source.Install(nodes.Get(0));
    source_app.Start(Seconds(0.0));

    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sink_app = sink.Install(nodes.Get(1));
    sink_app.Start(Seconds(0.0));
    sink_app.Get(0)->TraceConnectWithoutContext("Rx", MakeCallback(&OnRx));

    g_target_bytes = bytes;
    Simulator::Stop(Seconds(duration));

    auto started = std::chrono::steady_clock::now();
    Simulator::Run();
    auto finished = std::chrono::steady_clock::now();
    double wall = std::chrono::duration<double>(finished - started).count();

    // Sized download: time until the last byte arrived. Otherwise: the whole duration.
    double sim_seconds = (bytes > 0 && g_received >= bytes) ? g_last_rx.GetSeconds() : Simulator::Now().GetSeconds();
    double goodput = sim_seconds > 0 ? g_received * 8.0 / sim_seconds / 1e6 : 0.0;
    std::printf("{\"sim_seconds\": %.6f, \"wall_seconds\": %.6f, \"bytes_received\": %llu, \"goodput_mbps\": %.3f, "
                "\"cc\": \"%s\"}\n",
                sim_seconds, wall, static_cast<unsigned long long>(g_received), goodput, cc.c_str());
    Simulator::Destroy();
    return 0;
}
