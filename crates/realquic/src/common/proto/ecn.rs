//! ECN between the simulator's packets and the library's datagrams, written once against the
//! `EcnCodepoint` quinn-proto and noq-proto share (compiled into each adapter; `super::proto`
//! is its crate): the library's marking goes on the packet (ECT(0) while it validates ECN,
//! RFC 9000 §13.4), and a CE mark a queue set reaches the library.

use multiconn_core::Ecn;

use super::proto::EcnCodepoint;

/// The packet's ECN field for the library's marking.
pub(super) fn to_packet(ecn: Option<EcnCodepoint>) -> Ecn {
    match ecn {
        None => Ecn::NotEct,
        Some(EcnCodepoint::Ect0) => Ecn::Ect0,
        Some(EcnCodepoint::Ect1) => Ecn::Ect1,
        Some(EcnCodepoint::Ce) => Ecn::Ce,
    }
}

/// The library's view of a packet's ECN field.
pub(super) fn from_packet(ecn: Ecn) -> Option<EcnCodepoint> {
    match ecn {
        Ecn::NotEct => None,
        Ecn::Ect0 => Some(EcnCodepoint::Ect0),
        Ecn::Ect1 => Some(EcnCodepoint::Ect1),
        Ecn::Ce => Some(EcnCodepoint::Ce),
    }
}
