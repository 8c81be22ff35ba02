//! A split bearer inside the network: PDUs go over the legs the policy picks, the receiving
//! side restores COUNT order, and copies under duplication are counted in flight until the
//! spare one is absorbed.

use multiconn_core::units::QueueLimit;
use multiconn_core::{Dur, FlowId, Rate, Time};
use multiconn_link::availability::Schedule;
use multiconn_link::builder::LinkConfig;
use multiconn_link::delay::DelayModel;
use multiconn_link::rate::RateModel;
use multiconn_net::{FlowRoutes, Hop, HopModel, Leg, Network, NetworkSpec};
use std::sync::Arc;
use multiconn_pdcp::{Rat, ReceiverConfig, SnLength, SplitBearerConfig, SplitPolicy, TransmitterConfig};

use crate::driver::{packet, Clock};

fn leg(delay_ms: u64) -> Arc<dyn HopModel> {
    Arc::new(LinkConfig {
        aqm: None,
        rate: RateModel::Fixed(Rate::from_mbps(20.0)),
        delay: DelayModel::Constant(Dur::from_millis(delay_ms)),
        reorder: false,
        queue: QueueLimit::Packets(1000),
        loss: None,
        down: Schedule::new(Vec::new()).unwrap(),
        replaced: Vec::new(),
    })
}

fn network(policy: SplitPolicy, delays: [u64; 2]) -> Network {
    network_with(policy, delays, Dur::ZERO)
}

fn network_with(policy: SplitPolicy, delays: [u64; 2], packet_time: Dur) -> Network {
    let sn = SnLength::new(12).unwrap();
    let split = SplitBearerConfig {
        name: "dc".into(),
        tx: TransmitterConfig { rat: Rat::Nr, sn, policy },
        rx: ReceiverConfig { sn, t_reordering: Some(Dur::from_millis(200)), reordering: true },
        processing_delay: Dur::ZERO,
        packet_time,
        feedback: None,
        retransmit_lost: false,
        duplication_switches: Vec::new(),
        tx_leg_delay: [Dur::ZERO; 2],
        rx_leg_delay: [Dur::ZERO; 2],
        l4s_reorder_threshold: None,
    };
    // Link directions: leg 0 forward, leg 0 reverse, leg 1 forward, leg 1 reverse.
    let spec = NetworkSpec {
        links: vec![("l0f".into(), leg(delays[0])), ("l0r".into(), leg(delays[0])), ("l1f".into(), leg(delays[1])), ("l1r".into(), leg(delays[1]))],
        splits: vec![split],
        flows: vec![FlowRoutes::single("f", vec![Hop::Split { split: 0, legs: [Leg::Link(0), Leg::Link(2)] }], vec![Hop::Link(1)])],
        ports: Vec::new(),
    };
    let mut net = Network::new(&spec, 1);
    net.check_invariants(["l0f", "l0r", "l1f", "l1r"].map(String::from).to_vec());
    net
}

/// Sends 40 packets of 1500 bytes, one every 600 µs, and runs the network until it is idle.
fn send_40_packets(net: &mut Network) -> Clock {
    let mut clock = Clock::default();
    net.start(&mut clock);
    for i in 0..40 {
        clock.run_until(net, Time(i * 600_000));
        net.send(Time(i * 600_000), packet(i, 1500), &mut clock);
    }
    clock.run(net);
    clock
}

#[test]
fn a_batch_split_over_unequal_legs_delivers_in_count_order() {
    let mut net = network(SplitPolicy::Batch { size: 4, share: 0.5 }, [5, 30]);
    let clock = send_40_packets(&mut net);
    let ids: Vec<u64> = clock.arrived.iter().map(|(_, p)| p.id).collect();
    assert_eq!(ids, (0..40).collect::<Vec<_>>(), "the reordering gives packets back in order");
    assert!(clock.arrived.iter().all(|(_, p)| p.size == 1500), "the PDCP header is removed on the way up");
    let e = net.bearers_of(FlowId(0), 0)[0].expect("the split hop has a bearer");
    let m = &net.bearer(e).measures;
    assert_eq!(m.arrivals, [20, 20]);
    assert!(m.held > 0, "PDUs of the fast leg waited for the slow one");
    assert_eq!(net.in_flight(FlowId(0)), 0);
    net.check_end(Time::from_secs_f64(1.0));
    assert_eq!(net.violation(), None);
}

/// Arrival times at the receiving host of 40 packets split in batches of 8 over a 5 ms and a
/// 30 ms leg: the fast leg's batches wait for the slow one's and leave together.
fn released_arrivals(packet_time: Dur) -> Vec<Time> {
    let mut net = network_with(SplitPolicy::Batch { size: 8, share: 0.5 }, [5, 30], packet_time);
    let clock = send_40_packets(&mut net);
    let ids: Vec<u64> = clock.arrived.iter().map(|(_, p)| p.id).collect();
    assert_eq!(ids, (0..40).collect::<Vec<_>>());
    assert_eq!(net.violation(), None);
    clock.arrived.iter().map(|(t, _)| *t).collect()
}

#[test]
fn a_proxy_with_a_time_per_packet_spaces_out_a_released_burst() {
    let at_once = released_arrivals(Dur::ZERO);
    let bursts = at_once.windows(2).filter(|w| w[1] == w[0]).count();
    assert!(bursts >= 8, "without a time per packet, released packets arrive together ({bursts})");
    let pt = Dur::from_micros(50);
    let spaced = released_arrivals(pt);
    assert!(spaced.windows(2).all(|w| w[1].since(w[0]) >= pt), "at least 50 µs apart");
    // No packet leaves earlier than without the time per packet, and none is held longer than
    // its place in a burst of at most 9 (a batch and the slow leg's packet that releases it).
    assert!(spaced.iter().zip(&at_once).all(|(s, a)| s >= a));
    let most = spaced.iter().zip(&at_once).map(|(s, a)| s.since(*a)).max().unwrap();
    assert!(most > Dur::ZERO && most <= Dur(8 * pt.0), "{most}");
}

#[test]
fn duplicated_pdus_count_twice_in_flight_until_the_spare_copy_is_absorbed() {
    let mut net = network(SplitPolicy::Duplicate, [5, 8]);
    let mut clock = Clock::default();
    net.start(&mut clock);
    net.send(Time::ZERO, packet(0, 1500), &mut clock);
    assert_eq!(net.in_flight(FlowId(0)), 2, "one packet, two copies");
    clock.run(&mut net);
    assert_eq!(clock.arrived.len(), 1);
    assert!(clock.lost.is_empty(), "a spare copy is not a loss");
    // The late copy was absorbed, leaving nothing in flight.
    assert_eq!(clock.absorbed.len(), 1);
    assert_eq!(clock.absorbed[0].2, 0);
    assert_eq!(net.in_flight(FlowId(0)), 0);
    net.check_end(Time::from_secs_f64(1.0));
    assert_eq!(net.violation(), None);
}
