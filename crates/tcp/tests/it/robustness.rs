//! Malformed or unexpected segments never panic, and the factory builds working endpoints.
use crate::support;

use multiconn_core::{FlowId, Packet, Payload, Time};
use multiconn_tcp::segment::{Flags, SackBlocks, Timestamps};
use multiconn_tcp::{Segment, TcpFactory};
use multiconn_testkit::{Pair, PathConfig};
use multiconn_transport::Endpoint;
use proptest::prelude::*;
use support::*;

fn seg_strategy() -> impl Strategy<Value = Segment> {
    (
        any::<u64>().prop_map(|v| v % 3_000_000),
        any::<u64>().prop_map(|v| v % 3_000_000),
        any::<bool>(),
        any::<bool>(),
        any::<u16>(),
        proptest::collection::vec((0u64..3_000_000, 0u64..3_000_000), 0..5),
        0u32..3000,
        proptest::option::of((any::<u64>(), any::<u64>())),
    )
        .prop_map(|(seq, ack, syn, ackf, window, blocks, len, ts)| {
            let mut sack = SackBlocks::new();
            for (a, b) in blocks {
                sack.push(a, b);
            }
            Segment {
                seq,
                ack,
                flags: Flags { syn, ack: ackf, ..Flags::default() },
                window,
                wscale: syn.then_some(200),
                sack_permitted: syn,
                mss: syn.then_some(0),
                ts: ts.map(|(tsval, tsecr)| Timestamps { tsval, tsecr }),
                sack,
                len,
                ip_ecn: multiconn_core::Ecn::NotEct,
                packets: 1,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn garbage_never_panics(segs in proptest::collection::vec(seg_strategy(), 1..60)) {
        let mut h = fast_pair(&params(download(200_000)), ms(10));
        // Get both ends established and data flowing first.
        h.drive_to(Time(100_000_000));
        let mut id = 1_000_000u64;
        let mut now = h.now;
        for (i, s) in segs.into_iter().enumerate() {
            now += ms(1);
            let p = Packet::new(id, FlowId(0), 100, 0, now).with_payload(Payload::new(s));
            id += 1;
            if i % 2 == 0 { h.client.handle_packet(now, p) } else { h.server.handle_packet(now, p) }
            while h.client.poll_transmit(now, &mut id).is_some() {}
            while h.server.poll_transmit(now, &mut id).is_some() {}
            if let Some(t) = h.client.poll_timeout() { if t <= now { h.client.handle_timeout(now) } }
            if let Some(t) = h.server.poll_timeout() { if t <= now { h.server.handle_timeout(now) } }
        }
        // Packets without a segment are ignored too.
        h.client.handle_packet(now, Packet::new(id, FlowId(0), 100, 0, now));
        h.server.handle_packet(now, Packet::new(id, FlowId(0), 100, 0, now).with_payload(Payload::new(7u32)));
    }
}

#[test]
fn factory_endpoints_complete_a_download_through_the_trait() {
    let p = params(download(300_000));
    let mut h = Pair::connect(&TcpFactory::new(), &p, 1, &[PathConfig::symmetric(fast(ms(5)))])
        .expect("the linux-tcp profile offers the controller");
    let done = h.drive_until_by(Time(10_000_000_000), |h| h.client_finished());
    assert!(done);
    assert_eq!(delivered_bytes(&h.client_events), 300_000);
    assert_eq!(h.server.cc_state(), "slow_start");
    assert!(h.server.sample().srtt >= ms(10));
}
