//! Drop-tail queue in front of a rate server: the base link. (CONTRACT STUB — to be implemented)

use crate::rate::RateModel;
use crate::{Link, LinkOutput, QueueState};
use multiconn_core::units::QueueLimit;
use multiconn_core::{DropCause, Packet, Time};

pub struct DropTailLink {
    _private: (),
}

impl DropTailLink {
    pub fn new(rate: RateModel, limit: QueueLimit) -> DropTailLink {
        let _ = (rate, limit);
        unimplemented!()
    }
}

impl Link for DropTailLink {
    fn enqueue(&mut self, now: Time, pkt: Packet) -> Result<(), (Packet, DropCause)> {
        let _ = (now, pkt);
        unimplemented!()
    }
    fn poll(&mut self, now: Time) -> Option<LinkOutput> {
        let _ = now;
        unimplemented!()
    }
    fn poll_timeout(&self) -> Option<Time> {
        unimplemented!()
    }
    fn queue(&self) -> QueueState {
        unimplemented!()
    }
    fn has_room(&self, size: u32) -> bool {
        let _ = size;
        unimplemented!()
    }
    fn flush(&mut self, now: Time, out: &mut Vec<Packet>) {
        let _ = (now, out);
        unimplemented!()
    }
}
