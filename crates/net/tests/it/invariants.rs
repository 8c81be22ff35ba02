//! The network's invariant checks: silent on sound elements, and each check fires on an
//! element broken on purpose (a duplicate, a delivery before its floor, a silent loss).

use std::sync::Arc;

use multiconn_core::units::QueueLimit;
use multiconn_core::{DropCause, Dur, Packet, Rate, Time};
use multiconn_link::availability::Schedule;
use multiconn_link::builder::LinkConfig;
use multiconn_link::delay::DelayModel;
use multiconn_link::loss::LossModel;
use multiconn_link::rate::RateModel;
use multiconn_link::{Held, Link, LinkOutput, QueueState};
use multiconn_net::{FlowRoutes, Hop, HopModel, Network, NetworkSpec};

use crate::driver::{packet, Clock};

/// 12 Mbit/s (1 ms per 1500 B), 5 ms, a 4-packet queue.
fn config(loss: Option<f64>) -> LinkConfig {
    LinkConfig {
        aqm: None,
        rate: RateModel::Fixed(Rate::from_mbps(12.0)),
        delay: DelayModel::Constant(Dur::from_millis(5)),
        reorder: false,
        queue: QueueLimit::Packets(4),
        loss: loss.map(|p| LossModel::Bernoulli { p }),
        down: Schedule::new(Vec::new()).unwrap(),
        replaced: Vec::new(),
    }
}

/// How a [`Faulty`] link breaks the rules: on the first packet it delivers (`Early`) or the
/// second (the others).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    None,
    /// Delivers it twice.
    Duplicate,
    /// Dates its delivery 1 ns before it could have arrived (serialization and delay).
    Early,
    /// Swallows it without a word (and no longer holds it).
    SilentLoss,
}

/// A real link whose output a [`Fault`] tampers with.
struct FaultyLink {
    inner: Box<dyn Link + Send>,
    fault: Fault,
    delivered: u64,
    again: Option<LinkOutput>,
}

impl Link for FaultyLink {
    fn enqueue(&mut self, now: Time, pkt: Packet) -> Result<(), (Packet, DropCause)> {
        self.inner.enqueue(now, pkt)
    }
    fn poll(&mut self, now: Time) -> Option<LinkOutput> {
        if let Some(out) = self.again.take() {
            return Some(out);
        }
        let out = self.inner.poll(now)?;
        let LinkOutput::Delivered { at, pkt } = out else { return Some(out) };
        self.delivered += 1;
        if self.delivered != if self.fault == Fault::Early { 1 } else { 2 } {
            return Some(LinkOutput::Delivered { at, pkt });
        }
        match self.fault {
            Fault::None => Some(LinkOutput::Delivered { at, pkt }),
            Fault::Duplicate => {
                self.again = Some(LinkOutput::Delivered { at, pkt: pkt.clone() });
                Some(LinkOutput::Delivered { at, pkt })
            }
            Fault::Early => Some(LinkOutput::Delivered { at: Time(at.0 - 1), pkt }),
            Fault::SilentLoss => self.inner.poll(now),
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        if self.again.is_some() {
            return Some(Time::ZERO);
        }
        self.inner.poll_timeout()
    }
    fn queue(&self) -> QueueState {
        self.inner.queue()
    }
    fn has_room(&self, size: u32) -> bool {
        self.inner.has_room(size)
    }
    fn flush(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.inner.flush(now, out)
    }
    fn discard_waiting(&mut self, discard: &mut dyn FnMut(&Packet) -> bool, out: &mut Vec<Packet>) {
        self.inner.discard_waiting(discard, out)
    }
    fn held(&self) -> Option<Held> {
        self.inner.held()
    }
}

/// A [`LinkConfig`] link with a fault; its floor is the real model's.
#[derive(Debug)]
struct Faulty(LinkConfig, Fault);

impl HopModel for Faulty {
    fn build(&self, seed: u64, label: &str) -> Box<dyn Link + Send> {
        Box::new(FaultyLink { inner: self.0.build(seed, label), fault: self.1, delivered: 0, again: None })
    }
    fn delay_at(&self, t: Time) -> Dur {
        self.0.delay_at(t)
    }
    fn transit_floor(&self, size: u32) -> Dur {
        self.0.transit_floor(size)
    }
}

/// One flow over a forward link with `fault` and a sound reverse link, checked; sends
/// `packets` packets of 1500 B at once and runs to the end. Returns the network.
fn run(fault: Fault, loss: Option<f64>, packets: u64) -> Network {
    let spec = NetworkSpec {
        links: vec![("link/a/forward".into(), Arc::new(Faulty(config(loss), fault))), ("link/a/reverse".into(), Arc::new(config(None)))],
        splits: Vec::new(),
        flows: vec![FlowRoutes::single("f", vec![Hop::Link(0)], vec![Hop::Link(1)])],
        ports: Vec::new(),
    };
    let mut net = Network::new(&spec, 7);
    net.check_invariants(vec!["link a (x -> y)".into(), "link a (y -> x)".into()]);
    let mut clock = Clock::default();
    clock.answer = true;
    for i in 0..packets {
        net.send(Time::ZERO, packet(i, 1500), &mut clock);
    }
    clock.run(&mut net);
    net.check_end(Time::from_secs_f64(1.0));
    net
}

#[test]
fn sound_links_pass_with_queue_drops_and_random_loss() {
    let net = run(Fault::None, Some(0.2), 20);
    assert_eq!(net.violation(), None);
}

#[test]
fn a_duplicate_delivery_is_caught_at_once() {
    let net = run(Fault::Duplicate, None, 3);
    let v = net.violation().expect("the duplicate is seen");
    // The second packet: 2 ms of serialization, 5 ms of delay.
    assert_eq!((v.entity.as_str(), v.at), ("link a (x -> y)", Time::from_secs_f64(0.007)));
    assert!(v.to_string().starts_with("link a (x -> y) at 0.007000000 s: delivered packet 1 (1500 B, flow 0) that is not inside it"), "{v}");
}

#[test]
fn a_delivery_before_serialization_and_delay_is_caught() {
    let net = run(Fault::Early, None, 3);
    let v = net.violation().expect("the early delivery is seen");
    assert_eq!(v.entity, "link a (x -> y)");
    // Entered at 0 into an idle link, it cannot arrive before 1 ms + 5 ms.
    assert_eq!(v.at, Time(5_999_999));
    assert!(v.what.contains("delivered packet 0 (1500 B) 5.999999 ms after it entered at 0.000000000 s, before the floor its model gives (fastest serialization + smallest delay) of 6 ms"), "{v}");
}

#[test]
fn a_silent_loss_is_caught_at_the_end_of_the_run() {
    let net = run(Fault::SilentLoss, None, 3);
    let v = net.violation().expect("the missing packet is seen");
    assert_eq!((v.entity.as_str(), v.at), ("link a (x -> y)", Time::from_secs_f64(1.0)));
    assert!(v.what.contains("3 packets (4500 B) entered, 2 were delivered, 0 dropped, 0 discarded: 1 packets (1500 B) should be inside, but it holds 0 packets (0 B)"), "{v}");
}
