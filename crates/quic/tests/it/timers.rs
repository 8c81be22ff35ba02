//! The connection's named timers (`Connection::timers`): loss detection (RFC 9002 §6),
//! delayed ACKs (RFC 9000 §13.2.1), pacing and path validation (RFC 9000 §8.2). `poll_timeout`
//! is the earliest of them, and a multipath download arms each kind (the health rules' idle
//! timer aside: no failover profile sets one).

use crate::support;

use std::collections::HashSet;
use std::mem::discriminant;

use multiconn_core::{Rate, Time};
use multiconn_quic::Timer;
use multiconn_transport::{AckPath, AppEvent, Endpoint, FailoverProfile, MultipathParams, SchedulerKind, SchedulerOptions};
use support::*;

#[test]
fn poll_timeout_is_the_earliest_named_timer_and_every_kind_is_armed() {
    let mut p = params(download(2_000_000), Time::from_secs_f64(0.01));
    p.multipath = Some(MultipathParams {
        paths: 2,
        scheduler: SchedulerKind::MinRtt,
        options: SchedulerOptions::default(),
        ack_path: AckPath::Same,
        failover: FailoverProfile::Picoquic,
        coupled: None,
        opened_later: Vec::new(),
    });
    let mut h = quic_pair(&p, &[symmetric(ms(20), Some(Rate::from_mbps(10.0))), symmetric(ms(30), Some(Rate::from_mbps(10.0)))]);
    // The first PATH_CHALLENGE is lost: the client arms the validation retry.
    h.script(1, Route::ToServer, lose_when(|i, _| i == 0));
    h.record_wire = false;
    let mut kinds = HashSet::new();
    let mut mismatches = 0;
    h.run_while(Time::from_secs_f64(20.0), |h| {
        for ep in [&h.client, &h.server] {
            let earliest = ep.timers().map(|(_, t)| t).min();
            mismatches += usize::from(earliest != ep.poll_timeout());
            kinds.extend(ep.timers().map(|(timer, _)| discriminant(&timer)));
        }
        !h.client_events.iter().any(|(_, e)| *e == AppEvent::Finished)
    });
    assert_eq!(mismatches, 0);
    assert_eq!(h.client.stats().delivered, 2_000_000);
    let expected = [Timer::Start, Timer::LossDetection(0), Timer::AckDelay(0), Timer::Pacing(0), Timer::PathValidation(1)];
    for timer in expected {
        assert!(kinds.contains(&discriminant(&timer)), "{timer:?} never armed");
    }
}
