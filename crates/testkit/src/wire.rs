//! The wire log of a [`crate::Pair`]: one record per packet event on a link, and counters.
//!
//! The pair writes a [`Wire`] record when an endpoint hands a packet to a link (`Sent`), when
//! the link refuses it at the door (`Refused`, right after its `Sent`), when the link delivers
//! it to the far endpoint (`Delivered`) and when the link discards it inside (`Dropped`).
//! Records are in the order things happened; equal times keep the pair's processing order.

use multiconn_core::{DropCause, Packet, Time};

/// The direction of a link on a path, as [`Packet::route`] numbers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Route {
    /// Server to client (route 0): the data of a download.
    ToClient,
    /// Client to server (route 1): requests and the acknowledgements of a download.
    ToServer,
}

impl Route {
    /// The value [`Packet::route`] carries on this direction.
    pub fn index(self) -> u16 {
        match self {
            Route::ToClient => 0,
            Route::ToServer => 1,
        }
    }
}

/// What happened to a packet on a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireEvent {
    /// An endpoint offered it to the link.
    Sent,
    /// The link refused it at the door (full queue, link down, scripted or random loss).
    Refused(DropCause),
    /// It reached the far endpoint.
    Delivered,
    /// The link discarded it after accepting it (flushed when going down, lost on the air).
    Dropped(DropCause),
}

/// One line of the wire log.
#[derive(Clone, Debug)]
pub struct Wire {
    /// When it happened.
    pub at: Time,
    /// On which path.
    pub path: u8,
    /// Toward which end.
    pub route: Route,
    /// What happened.
    pub event: WireEvent,
    /// The packet.
    pub pkt: Packet,
}

impl Wire {
    /// Whether an endpoint offered this packet (whatever happened to it next).
    pub fn is_sent(&self) -> bool {
        self.event == WireEvent::Sent
    }

    /// Whether the packet reached the far endpoint.
    pub fn is_delivered(&self) -> bool {
        self.event == WireEvent::Delivered
    }

    /// Whether the packet was refused or dropped by the link.
    pub fn is_lost(&self) -> bool {
        matches!(self.event, WireEvent::Refused(_) | WireEvent::Dropped(_))
    }
}

/// Packet counts of one link direction, kept whether or not the wire log is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkCounters {
    /// Offered by an endpoint.
    pub sent: u64,
    /// Refused at the door.
    pub refused: u64,
    /// Reached the far endpoint.
    pub delivered: u64,
    /// Discarded after being accepted.
    pub dropped: u64,
}

impl LinkCounters {
    /// Refused at the door plus dropped inside.
    pub fn lost(&self) -> u64 {
        self.refused + self.dropped
    }
}
