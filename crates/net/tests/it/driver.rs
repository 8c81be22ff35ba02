//! A minimal driver: a wake-up heap ordered by (time, request order), and logs of what the
//! network reported.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use multiconn_core::{FlowId, Packet, Time};
use multiconn_net::{Driver, ElementId, Loss, Network};

#[derive(Default)]
pub struct Clock {
    wakes: BinaryHeap<Reverse<(Time, u64, ElementId)>>,
    seq: u64,
    pub arrived: Vec<(Time, Packet)>,
    pub lost: Vec<(Time, Loss)>,
    pub absorbed: Vec<(Time, FlowId, u64)>,
    /// Answer every packet arriving on route 0 with one on route 1 (an ACK).
    pub answer: bool,
}

impl Clock {
    /// Fires every wake-up in order until none is left.
    pub fn run(&mut self, net: &mut Network) {
        self.run_until(net, Time::MAX);
    }

    /// Fires the wake-ups due at or before `limit`, in order (time never goes backwards for
    /// the network: send at `limit` only after this).
    pub fn run_until(&mut self, net: &mut Network, limit: Time) {
        while let Some(&Reverse((t, _, el))) = self.wakes.peek() {
            if t > limit {
                break;
            }
            self.wakes.pop();
            net.handle_wake(t, el, self);
        }
    }
}

impl Driver for Clock {
    fn wake_at(&mut self, at: Time, element: ElementId) {
        self.seq += 1;
        self.wakes.push(Reverse((at, self.seq, element)));
    }

    fn arrived(&mut self, net: &mut Network, now: Time, pkt: Packet) {
        if self.answer && pkt.route == 0 {
            let mut ack = Packet::new(pkt.id + 1_000_000, pkt.flow, 40, pkt.seq, now);
            ack.route = 1;
            net.send(now, ack, self);
        }
        self.arrived.push((now, pkt));
    }

    fn lost(&mut self, _net: &Network, now: Time, loss: Loss) {
        self.lost.push((now, loss));
    }

    fn absorbed(&mut self, net: &Network, now: Time, flow: FlowId) {
        self.absorbed.push((now, flow, net.in_flight(flow)));
    }
}

pub fn packet(id: u64, size: u32) -> Packet {
    Packet::new(id, FlowId(0), size, id, Time::ZERO)
}
