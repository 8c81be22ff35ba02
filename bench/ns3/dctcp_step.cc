// ns-3 counterpart of multiconn's Prague cross-check: one DCTCP flow over a bottleneck whose
// queue marks CE on every packet that finds more than K packets ahead of it (a step, RED with
// MinTh = MaxTh = K, QW = 1: the DCTCP paper's marking, ns-3's examples/tcp/dctcp-example.cc).
//
//   sender --- 100 Mbit/s, 20 ms (one way), RED step at K packets --- receiver
//
// ns3::TcpDctcp (g = 1/16, α starting at 1, cwnd · (1 − α/2) once per window of marks), MSS
// 1448 with timestamps (1500-byte IP packets), SACK on, ECN on. Prints one JSON line:
//   {"goodput_mbps", "mean_queue_packets", "mean_alpha", "marked_fraction", "utilization", ...}
// measured after --warmup seconds: goodput from the sink's bytes, the queue disc's length
// sampled every 100 µs, the marked fraction (RED's marks over the packets it enqueued), α from
// TcpDctcp's CongestionEstimate trace (its value at each update, averaged); over the whole
// run: the marked fraction (`marked_fraction_all`), the mean queue (`mean_queue_packets_all`)
// and the link's utilisation (bytes the queue disc passed on, IP headers included, over
// rate × duration).
//
// Built and run by bench/ns3/run.sh (NS3_PROGRAM=dctcp_step); ns-3.37 (Debian libns3-dev).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cstdint>
#include <cstdio>
#include <string>

using namespace ns3;

namespace
{

double g_warmup = 5.0;
uint64_t g_received = 0;
uint64_t g_received_at_warmup = 0;
uint64_t g_marks_at_warmup = 0;
uint64_t g_enqueued_at_warmup = 0;
double g_queue_sum = 0;
uint64_t g_queue_samples = 0;
double g_queue_sum_all = 0;
uint64_t g_queue_samples_all = 0;
double g_alpha_sum = 0;
uint64_t g_alpha_samples = 0;
Ptr<QueueDisc> g_qdisc;

void
OnRx(Ptr<const Packet> packet, const Address&)
{
    g_received += packet->GetSize();
}

void
OnAlpha(uint32_t, uint32_t, double alpha)
{
    if (Simulator::Now().GetSeconds() >= g_warmup)
    {
        g_alpha_sum += alpha;
        g_alpha_samples++;
    }
}

void
SampleQueue()
{
    g_queue_sum_all += g_qdisc->GetNPackets();
    g_queue_samples_all++;
    if (Simulator::Now().GetSeconds() >= g_warmup)
    {
        g_queue_sum += g_qdisc->GetNPackets();
        g_queue_samples++;
    }
    Simulator::Schedule(MicroSeconds(100), &SampleQueue);
}

uint64_t
Marks(const QueueDisc::Stats& st)
{
    return st.GetNMarkedPackets(RedQueueDisc::FORCED_MARK) + st.GetNMarkedPackets(RedQueueDisc::UNFORCED_MARK);
}

void
AtWarmup()
{
    g_received_at_warmup = g_received;
    QueueDisc::Stats st = g_qdisc->GetStats();
    g_marks_at_warmup = Marks(st);
    g_enqueued_at_warmup = st.nTotalEnqueuedPackets;
}

void
HookAlpha()
{
    Config::ConnectWithoutContext("/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/CongestionOps/$ns3::TcpDctcp/CongestionEstimate",
                                  MakeCallback(&OnAlpha));
}

} // namespace

int
main(int argc, char* argv[])
{
    double duration = 30.0;
    std::string rate = "100Mbps";
    std::string delay = "20ms";
    uint32_t k = 20;
    uint32_t mss = 1448;
    uint32_t sock_buf = 16 * 1024 * 1024;

    CommandLine cmd(__FILE__);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("warmup", "seconds before measuring", g_warmup);
    cmd.AddValue("rate", "bottleneck rate", rate);
    cmd.AddValue("delay", "one-way propagation delay", delay);
    cmd.AddValue("k", "marking step, packets", k);
    cmd.AddValue("mss", "TCP segment size (payload bytes)", mss);
    cmd.Parse(argc, argv);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpDctcp::GetTypeId()));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("On"));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(sock_buf));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(sock_buf));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    // The step: every packet arriving to more than K packets is marked (forced mark), none
    // dropped while the 10 000-packet limit holds.
    Config::SetDefault("ns3::RedQueueDisc::UseEcn", BooleanValue(true));
    Config::SetDefault("ns3::RedQueueDisc::UseHardDrop", BooleanValue(false));
    Config::SetDefault("ns3::RedQueueDisc::QW", DoubleValue(1.0));
    // Not gentle: at MaxTh every packet is marked (gentle RED would ramp up to 2 · MaxTh).
    Config::SetDefault("ns3::RedQueueDisc::Gentle", BooleanValue(false));
    Config::SetDefault("ns3::RedQueueDisc::MinTh", DoubleValue(k));
    Config::SetDefault("ns3::RedQueueDisc::MaxTh", DoubleValue(k));
    Config::SetDefault("ns3::RedQueueDisc::MeanPktSize", UintegerValue(mss + 52));
    Config::SetDefault("ns3::RedQueueDisc::MaxSize", QueueSizeValue(QueueSize("10000p")));

    NodeContainer nodes;
    nodes.Create(2);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue(rate));
    p2p.SetChannelAttribute("Delay", StringValue(delay));
    // Packets wait in the queue disc, not in the device: a one-packet device queue.
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize("1p")));
    NetDeviceContainer devices = p2p.Install(nodes);

    InternetStackHelper stack;
    stack.Install(nodes);
    TrafficControlHelper tch;
    tch.SetRootQueueDisc("ns3::RedQueueDisc", "LinkBandwidth", StringValue(rate), "LinkDelay", StringValue(delay));
    QueueDiscContainer qdiscs = tch.Install(devices);
    g_qdisc = qdiscs.Get(0);
    Ipv4AddressHelper address;
    address.SetBase("10.1.1.0", "255.255.255.0");
    Ipv4InterfaceContainer interfaces = address.Assign(devices);

    const uint16_t port = 9;
    BulkSendHelper source("ns3::TcpSocketFactory", InetSocketAddress(interfaces.GetAddress(1), port));
    source.SetAttribute("MaxBytes", UintegerValue(0));
    source.SetAttribute("SendSize", UintegerValue(mss));
    ApplicationContainer source_app = source.Install(nodes.Get(0));
    source_app.Start(Seconds(0.0));
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sink_app = sink.Install(nodes.Get(1));
    sink_app.Start(Seconds(0.0));
    sink_app.Get(0)->TraceConnectWithoutContext("Rx", MakeCallback(&OnRx));

    Simulator::Schedule(MilliSeconds(1), &HookAlpha);
    Simulator::Schedule(Seconds(0), &SampleQueue);
    Simulator::Schedule(Seconds(g_warmup), &AtWarmup);
    Simulator::Stop(Seconds(duration));
    Simulator::Run();

    QueueDisc::Stats st = g_qdisc->GetStats();
    uint64_t marks = Marks(st);
    uint64_t window_enqueued = st.nTotalEnqueuedPackets - g_enqueued_at_warmup;
    double secs = duration - g_warmup;
    double rate_bps = DataRate(rate).GetBitRate();
    std::printf("{\"goodput_mbps\": %.3f, \"mean_queue_packets\": %.3f, \"mean_queue_packets_all\": %.3f, "
                "\"utilization\": %.5f, \"marked_fraction\": %.5f, \"marked_fraction_all\": %.5f, \"mean_alpha\": %.5f, "
                "\"marks\": %llu, \"enqueued\": %u, \"drops\": %u, \"k\": %u, \"measured_s\": %.1f}\n",
                (g_received - g_received_at_warmup) * 8.0 / secs / 1e6,
                g_queue_samples ? g_queue_sum / g_queue_samples : 0.0,
                g_queue_samples_all ? g_queue_sum_all / g_queue_samples_all : 0.0,
                st.nTotalDequeuedBytes * 8.0 / (rate_bps * duration),
                window_enqueued ? double(marks - g_marks_at_warmup) / window_enqueued : 0.0,
                st.nTotalEnqueuedPackets ? double(marks) / st.nTotalEnqueuedPackets : 0.0,
                g_alpha_samples ? g_alpha_sum / g_alpha_samples : 0.0,
                static_cast<unsigned long long>(marks),
                st.nTotalEnqueuedPackets,
                st.nTotalDroppedPackets,
                k,
                secs);
    Simulator::Destroy();
    return 0;
}
