//! A network of cells with moving UEs and handovers ([`Ran`], `crates/cell`) as a multi-port
//! element: port `2·ue + dir` is UE `ue`'s downlink or uplink, as for a single cell
//! ([`super::cell::cell_port`]), whichever cell serves it. Its drops count as a cell's; what a
//! handover or a radio link failure loses counts as the link going down.

use std::any::Any;

use multiconn_cell::ran::{Ran, RanConfig};
use multiconn_cell::CellOutput;
use multiconn_core::{Packet, Time};
use multiconn_link::LinkOutput;

use super::cell::{drop_cause, ue_and_direction};
use super::{PortElement, PortModel};

impl PortModel for RanConfig {
    fn build(&self, seed: u64, label: &str) -> Box<dyn PortElement> {
        Box::new(Ran::new(self.clone(), seed, label).expect("a RAN's configuration is validated when the scenario is resolved"))
    }
}

impl PortElement for Ran {
    fn enqueue(&mut self, now: Time, port: u32, pkt: Packet) -> Result<(), (Packet, multiconn_core::DropCause)> {
        let (ue, dir) = ue_and_direction(port);
        Ran::enqueue(self, now, ue, dir, pkt).map_err(|(pkt, c)| (pkt, drop_cause(c)))
    }

    fn poll_timeout(&self) -> Option<Time> {
        Ran::poll_timeout(self)
    }

    fn poll(&mut self, now: Time) -> Option<LinkOutput> {
        match Ran::poll(self, now).expect("a validated RAN runs without errors")? {
            CellOutput::Delivered { at, pkt, .. } => Some(LinkOutput::Delivered { at, pkt }),
            CellOutput::Dropped { at, pkt, cause: c, .. } => Some(LinkOutput::Dropped { at, pkt, cause: drop_cause(c) }),
        }
    }

    fn queued_bytes(&self, port: u32) -> u64 {
        let (ue, dir) = ue_and_direction(port);
        match (ue < self.ue_count()).then(|| self.ue_counters(ue).serving).flatten() {
            Some(cell) => self.cells()[cell].rlc_queued_bytes(ue, dir),
            None => 0,
        }
    }

    fn available(&self, port: u32) -> bool {
        self.scg_present(ue_and_direction(port).0)
    }

    fn poll_handed_back(&mut self, now: Time) -> Option<(Time, u32, Packet)> {
        Ran::poll_handed_back(self, now).map(|(at, ue, dir, pkt)| (at, super::cell::cell_port(ue as u16, dir == multiconn_cell::CellDirection::Up), pkt))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
