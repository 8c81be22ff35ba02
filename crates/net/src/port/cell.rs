//! The LTE cell ([`CellHop`], `crates/cell`) as a multi-port element: port `2·ue + dir` is UE
//! `ue`'s downlink (`dir` 0, eNB → UE) or uplink (`dir` 1) bearer ([`cell_port`]). The cell's
//! drops count as the flows count them: the RLC buffer (and the queue discipline above it, `cell.aqm`) is the cell's queue; what HARQ or the
//! receiving RLC gives up is lost on the radio, as a random loss is.

use std::any::Any;

use multiconn_cell::{CellConfig, CellDirection, CellDropCause, CellHop, CellOutput};
use multiconn_core::{DropCause, Packet, Time};

use multiconn_link::LinkOutput;

use super::{PortElement, PortModel};

/// The port of UE `ue`'s uplink (`up`) or downlink bearer.
pub fn cell_port(ue: u16, up: bool) -> u32 {
    2 * u32::from(ue) + u32::from(up)
}

/// The UE and direction of a cell's port.
pub(super) fn ue_and_direction(port: u32) -> (usize, CellDirection) {
    let dir = if port % 2 == 1 { CellDirection::Up } else { CellDirection::Down };
    ((port / 2) as usize, dir)
}

/// A cell's drop as the flows count it.
pub(super) fn drop_cause(cause: CellDropCause) -> DropCause {
    match cause {
        CellDropCause::RlcBufferFull | CellDropCause::Aqm => DropCause::Queue,
        CellDropCause::HarqMaxRetx | CellDropCause::RlcReordering | CellDropCause::RlcMaxRetx => DropCause::RandomLoss,
        CellDropCause::Handover => DropCause::LinkDown,
    }
}

impl PortModel for CellConfig {
    fn build(&self, seed: u64, label: &str) -> Box<dyn PortElement> {
        Box::new(CellHop::new(self.clone(), seed, label).expect("a cell's configuration is validated when the scenario is resolved"))
    }
}

impl PortElement for CellHop {
    fn enqueue(&mut self, now: Time, port: u32, pkt: Packet) -> Result<(), (Packet, DropCause)> {
        let (ue, dir) = ue_and_direction(port);
        CellHop::enqueue(self, now, ue, dir, pkt).map_err(|(pkt, c)| (pkt, drop_cause(c)))
    }

    fn poll_timeout(&self) -> Option<Time> {
        CellHop::poll_timeout(self)
    }

    fn poll(&mut self, now: Time) -> Option<LinkOutput> {
        match CellHop::poll(self, now).expect("a validated cell runs without errors")? {
            CellOutput::Delivered { at, pkt, .. } => Some(LinkOutput::Delivered { at, pkt }),
            CellOutput::Dropped { at, pkt, cause: c, .. } => Some(LinkOutput::Dropped { at, pkt, cause: drop_cause(c) }),
        }
    }

    fn queued_bytes(&self, port: u32) -> u64 {
        let (ue, dir) = ue_and_direction(port);
        if ue < self.ue_count() {
            self.rlc_queued_bytes(ue, dir)
        } else {
            0
        }
    }

    fn room_bytes(&self, port: u32) -> Option<u64> {
        let (ue, dir) = ue_and_direction(port);
        (ue < self.ue_count()).then(|| self.config().rlc_buffer_bytes.saturating_sub(self.rlc_queued_bytes(ue, dir)))
    }

    fn buffer_bytes(&self, port: u32) -> Option<u64> {
        let (ue, _) = ue_and_direction(port);
        (ue < self.ue_count()).then(|| self.config().rlc_buffer_bytes)
    }

    fn confirmed_sn(&self, port: u32) -> Option<u32> {
        let (ue, dir) = ue_and_direction(port);
        self.confirmed_pdcp_sn(ue, dir)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_ue_and_direction_has_its_own_port_and_reads_back() {
        let mut seen = std::collections::HashSet::new();
        for ue in 0..40u16 {
            for up in [false, true] {
                let port = cell_port(ue, up);
                assert!(seen.insert(port), "port {port} given twice");
                let (u, dir) = ue_and_direction(port);
                assert_eq!((u, dir == CellDirection::Up), (usize::from(ue), up));
            }
        }
    }
}
