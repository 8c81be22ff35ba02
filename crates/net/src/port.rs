//! Elements with several ports: one element that packets cross at different places, each a
//! port (a cell has one per UE and direction; a multi-cell RAN would have one per cell, UE and
//! direction). A route names a port with [`Hop::Port`](crate::Hop::Port); the network offers
//! the packet to the element at that port, wakes the element when it asks
//! ([`PortElement::poll_timeout`]) and takes what it hands out: a packet that crossed goes on
//! along its route, a drop is a loss of its flow.
//!
//! A new kind of multi-port element is one [`PortModel`] (its description, built once per
//! run) and one [`PortElement`] (the running element): nothing that reads routes changes,
//! because every consumer treats a port hop the same way. What is particular to one kind
//! (a cell's per-UE counters and series) is read back with [`Network::port_element`](crate::Network::port_element)
//! (crate::Network::port_element), which downcasts to the element's own type.
//!
//! [`cell`] makes the LTE cell ([`CellHop`](multiconn_cell::CellHop)) one of them.

use std::any::Any;
use std::fmt;

use multiconn_core::{DropCause, Packet, Time};
use multiconn_link::LinkOutput;

pub mod cell;
pub mod ran;

/// A running element with several ports.
pub trait PortElement: Send {
    /// Takes `pkt` at `port` at `now`, or refuses it (a full buffer, a port it does not
    /// have), handing it back with the cause.
    fn enqueue(&mut self, now: Time, port: u32, pkt: Packet) -> Result<(), (Packet, DropCause)>;

    /// When it next has something to do or hand out, if ever.
    fn poll_timeout(&self) -> Option<Time>;

    /// The next output due by `now`, after doing the work due by then: a packet that crossed
    /// (`Delivered`) or one it dropped, as a link hands them out.
    fn poll(&mut self, now: Time) -> Option<LinkOutput>;

    /// Bytes waiting at `port` to cross (a cell: the RLC transmission buffer of that UE and
    /// direction), what a split whose leg is this port reads as the leg's queue.
    fn queued_bytes(&self, port: u32) -> u64;

    /// Bytes `port` can take now, if the element says (a cell: the free space of that UE's
    /// RLC transmission buffer, the desired buffer size of TS 38.425); `None` by default.
    fn room_bytes(&self, _port: u32) -> Option<u64> {
        None
    }

    /// The capacity of `port`'s buffer, if the element says (a cell: its RLC buffer size, the
    /// desired buffer size counted beyond the confirmed SN); `None` by default.
    fn buffer_bytes(&self, _port: u32) -> Option<u64> {
        None
    }

    /// The highest PDCP SN (packets' `lower_sn`) `port` confirmed, if the element says (a
    /// cell: TS 38.425's highest successfully delivered NR PDCP SN under RLC AM, highest
    /// transmitted under UM); `None` by default.
    fn confirmed_sn(&self, _port: u32) -> Option<u32> {
        None
    }

    /// Whether `port` takes packets now (a secondary node whose cell group for the UE is
    /// released does not): a split whose leg it is sends everything on its other leg
    /// meanwhile. True by default.
    fn available(&self, _port: u32) -> bool {
        true
    }

    /// A packet handed back by `now` for data recovery (TS 38.323 §5.5: a released cell
    /// group's unconfirmed PDUs), with the time and the port it left: a split whose leg the
    /// port is resends it on its other leg; elsewhere it is lost with the link down. None by
    /// default.
    fn poll_handed_back(&mut self, _now: Time) -> Option<(Time, u32, Packet)> {
        None
    }

    /// The element as its own type, for what only that kind reports.
    fn as_any(&self) -> &dyn Any;

    /// The element as its own type, to set it up before a run.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// The description of a multi-port element, built once per run.
pub trait PortModel: fmt::Debug + Send + Sync {
    /// The element, its random streams derived from `seed` and `label` (e.g. `cell/lte`).
    fn build(&self, seed: u64, label: &str) -> Box<dyn PortElement>;
}
