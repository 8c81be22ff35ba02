//! What the network needs from whoever runs it: a clock to schedule wake-ups on, hosts at the
//! ends of routes, and somewhere to record what the links did.
//!
//! The simulator implements it over its event queue and flows; the emulator implements it
//! over a wall-clock timer heap and TUN devices. Callbacks come in the order the events
//! happen, depth first: when a packet reaches its host, [`Driver::arrived`] runs (and may
//! send answers with [`Network::send`]) before the element that released it produces its
//! next output.
//!
//! What the links, legs and bearers did goes to the driver's [`Recorder`]
//! ([`Driver::recorder`]): the default callbacks forward it there, so the simulator and the
//! emulator record through the same code and implement only what differs (their clock, their
//! hosts).

use multiconn_core::{BearerId, DropCause, Dur, FlowId, LinkId, Packet, QueueBin, Recorder, Time};

use crate::network::{ElementId, Network};

/// A packet of a flow lost in the network: what the flow's accounting needs of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loss {
    /// The flow the packet belonged to.
    pub flow: FlowId,
    /// The path it took (0 unless multipath).
    pub path: u8,
    /// Its direction: 0 forward, 1 reverse.
    pub route: u16,
    /// Bytes on the wire (headers included).
    pub size: u32,
    /// Why it was lost.
    pub cause: DropCause,
}

impl Loss {
    /// The loss of `pkt`.
    pub fn of(pkt: &Packet, cause: DropCause) -> Loss {
        Loss { flow: pkt.flow, path: pkt.path, route: pkt.route, size: pkt.size, cause }
    }
}

/// The network's driver. Only [`Driver::wake_at`] and [`Driver::arrived`] are required; the
/// link, leg and bearer records go to [`Driver::recorder`] unless a driver handles them itself.
pub trait Driver {
    /// Call [`Network::handle_wake`] for `element` at `at` (it may find nothing due: wake-ups
    /// are never cancelled, an earlier one is only added).
    fn wake_at(&mut self, at: Time, element: ElementId);

    /// Where the records of the links, legs and bearers go (the default callbacks below
    /// forward them); `None`, the default, keeps no record.
    fn recorder(&mut self) -> Option<&mut dyn Recorder> {
        None
    }

    /// `pkt` reached the end of its route at `now`.
    fn arrived(&mut self, net: &mut Network, now: Time, pkt: Packet);

    /// A packet of a flow was lost (dropped by a link, refused by a full PDCP window, or
    /// discarded late by the reordering). [`Network::in_flight`] already excludes it.
    fn lost(&mut self, _net: &Network, _now: Time, _loss: Loss) {}

    /// Packets of `flow` left the network without reaching a host and without being a loss
    /// (the spare copy of a duplicated PDU). [`Network::in_flight`] already excludes them.
    fn absorbed(&mut self, _net: &Network, _now: Time, _flow: FlowId) {}

    /// Link direction `link` delivered a packet of `size` bytes at `at`.
    fn link_delivered(&mut self, at: Time, link: LinkId, size: u32) {
        if let Some(r) = self.recorder() {
            r.link_delivered(at, link, size);
        }
    }

    /// Link direction `link` dropped a packet of `size` bytes.
    fn link_dropped(&mut self, now: Time, link: LinkId, cause: DropCause, size: u32) {
        if let Some(r) = self.recorder() {
            r.link_dropped(now, link, cause, size);
        }
    }

    /// The queue of link direction `link` integrated over bin `q.bin` or part of it (see
    /// [`Network::record_queues`]).
    fn link_queue_bin(&mut self, link: LinkId, q: QueueBin) {
        if let Some(r) = self.recorder() {
            r.link_queue_bin(link, q);
        }
    }

    /// Link direction `link` was just serviced (it may have room again): hosts that feed it
    /// directly can send now.
    fn link_serviced(&mut self, _net: &mut Network, _now: Time, _link: LinkId) {}

    /// A PDU of `size` bytes (PDCP header included) reached split bearer `bearer`'s receiving
    /// entity over its leg `leg` (0 or 1); copies and PDUs it then discards included.
    fn leg_arrived(&mut self, now: Time, bearer: BearerId, leg: u8, size: u32) {
        if let Some(r) = self.recorder() {
            r.leg_delivered(now, bearer, leg, size);
        }
    }

    /// Leg `leg` of split bearer `bearer` dropped one of the bearer's PDUs (a random loss the
    /// bearer then resends over the other leg included).
    fn leg_dropped(&mut self, now: Time, bearer: BearerId, leg: u8, cause: DropCause, size: u32) {
        if let Some(r) = self.recorder() {
            r.leg_dropped(now, bearer, leg, cause, size);
        }
    }

    /// Split bearer `bearer`'s receiving entity delivered `sdus` SDUs of `bytes` in all (header
    /// removed) in order upwards; `reorder_delay` is the sum of the time they waited in its
    /// reordering buffer.
    fn bearer_delivered(&mut self, now: Time, bearer: BearerId, sdus: u64, bytes: u64, reorder_delay: Dur) {
        if let Some(r) = self.recorder() {
            r.bearer_delivered(now, bearer, sdus, bytes, reorder_delay);
        }
    }

    /// Split bearer `bearer` dropped a PDU: its transmitter refused it (`pdcp_window`) or its
    /// receiver discarded it late (`pdcp_late`).
    fn bearer_dropped(&mut self, now: Time, bearer: BearerId, cause: DropCause, size: u32) {
        if let Some(r) = self.recorder() {
            r.bearer_dropped(now, bearer, cause, size);
        }
    }

    /// Split bearer `bearer`'s reordering buffer now holds `pdus` PDUs.
    fn bearer_buffer(&mut self, now: Time, bearer: BearerId, pdus: u32) {
        if let Some(r) = self.recorder() {
            r.bearer_buffer(now, bearer, pdus);
        }
    }
}
