//! Malformed or unexpected segments never panic, and the factory builds working endpoints.
use crate::support;

use multiconn_core::{FlowId, Packet, Payload, Time};
use multiconn_tcp::segment::{Flags, SackBlocks, Timestamps};
use multiconn_tcp::{Segment, TcpFactory};
use multiconn_transport::{AppEvent, Endpoint, TransportFactory};
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
                flags: Flags { syn, ack: ackf },
                window,
                wscale: syn.then_some(200),
                sack_permitted: syn,
                mss: syn.then_some(0),
                ts: ts.map(|(tsval, tsecr)| Timestamps { tsval, tsecr }),
                sack,
                len,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn garbage_never_panics(segs in proptest::collection::vec(seg_strategy(), 1..60)) {
        let mut h = Harness::new(&params(download(200_000)), ms(10));
        // Get both ends established and data flowing first.
        h.run_until(Time(100_000_000), |_| false);
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
    let (mut c, mut s) = TcpFactory::new().connect(&p).expect("the linux-tcp profile offers the controller");
    let mut now = Time::ZERO;
    let mut id = 0;
    let mut to_server: Vec<(Time, Packet)> = Vec::new();
    let mut to_client: Vec<(Time, Packet)> = Vec::new();
    let mut done = false;
    for _ in 0..100_000 {
        while let Some(pk) = c.poll_transmit(now, &mut id) {
            to_server.push((now + ms(5), pk));
        }
        while let Some(pk) = s.poll_transmit(now, &mut id) {
            to_client.push((now + ms(5), pk));
        }
        while let Some(e) = c.poll_event() {
            done |= e == AppEvent::Finished;
        }
        if done {
            break;
        }
        let next = [
            to_server.first().map(|x| x.0),
            to_client.first().map(|x| x.0),
            c.poll_timeout(),
            s.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap();
        now = next;
        while to_server.first().is_some_and(|x| x.0 <= now) {
            s.handle_packet(now, to_server.remove(0).1);
        }
        while to_client.first().is_some_and(|x| x.0 <= now) {
            c.handle_packet(now, to_client.remove(0).1);
        }
        if c.poll_timeout().is_some_and(|t| t <= now) {
            c.handle_timeout(now);
        }
        if s.poll_timeout().is_some_and(|t| t <= now) {
            s.handle_timeout(now);
        }
    }
    assert!(done);
    assert_eq!(s.cc_state(), "slow_start");
    assert!(s.sample().srtt >= ms(10));
}
