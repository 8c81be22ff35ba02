//! The factory refuses a controller the profile does not offer, naming the knob, instead of
//! running the profile's default or RFC 9002's (it used to fall back silently).

use crate::support::*;
use multiconn_cc::CcKind;
use multiconn_core::Time;
use multiconn_quic::{Connection, QuicFactory};
use multiconn_transport::profile::TransportKind;
use multiconn_transport::{Knob, Profile, Role, TransportFactory};

#[test]
fn a_controller_the_profile_does_not_offer_is_refused() {
    let mut p = params(download(1000), Time::ZERO);
    p.profile = Profile::builtin("aioquic", TransportKind::Quic).unwrap();
    p.cc = CcKind::Bbr;
    let factory = QuicFactory::new();
    let e = factory.check(&p).unwrap_err();
    assert_eq!(e.knob, Knob::Cc);
    assert_eq!(e.message, "profile \"aioquic\" does not offer congestion control \"bbr\"; it offers: newreno, cubic");
    assert_eq!(factory.connect(&p).err().map(|e| e.knob), Some(Knob::Cc));
    assert!(Connection::new(&p, Role::Server).is_err());
    p.cc = CcKind::Cubic;
    assert!(factory.check(&p).is_ok());
    assert!(factory.connect(&p).is_ok());
}
