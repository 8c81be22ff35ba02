//! A controller from outside the built-in set ([`FixedRate`]) through QUIC, over the
//! simulator's own links ([`multiconn_testkit::Pair`]): what it says it needs, not its name,
//! decides whether a path paces. The profile here has pacing switched off, so only the
//! controller's own `needs_pacing` can turn it on.
use crate::support::*;

use multiconn_core::units::QueueLimit;
use multiconn_core::{Rate, Time};
use multiconn_quic::packet::Datagram;
use multiconn_quic::Connection;
use multiconn_testkit::{link, FixedRate, Pair, PathConfig, Route};
use multiconn_transport::Role;

const RATE: Rate = Rate(20_000_000);

/// The median gap between the server's full-sized datagrams, each gap divided by the time
/// the earlier datagram takes at [`RATE`] (1: sent at the controller's rate), and how many
/// gaps that was.
fn gaps_in_datagram_times(paced: bool) -> (f64, usize) {
    let mut p = params(download(2_000_000), Time::ZERO);
    p.profile.pacing.enabled = false;
    p.external_cc = Some(FixedRate { window: 1_000_000, rate: RATE, paced }.factory());
    let client = Connection::new(&p, Role::Client).unwrap();
    let server = Connection::new(&p, Role::Server).unwrap();
    let fast = link(Rate(8_000_000_000), ms(10), QueueLimit::Packets(10_000));
    let mut h = Pair::from_configs(Box::new(client), Box::new(server), 1, &[PathConfig::symmetric(fast)]);
    assert!(h.drive_until_by(Time::from_secs_f64(10.0), |h| h.client_finished()), "download not finished");
    let sizes: Vec<(Time, u64)> = h
        .wire
        .iter()
        .filter(|w| w.route == Route::ToClient && w.is_sent())
        .map(|w| (w.at, u64::from(w.pkt.payload.as_ref().and_then(|d| d.get::<Datagram>()).expect("a QUIC datagram").size())))
        .collect();
    let full = sizes.iter().map(|&(_, b)| b).max().unwrap();
    let data: Vec<&(Time, u64)> = sizes.iter().filter(|&&(_, b)| b == full).collect();
    let mut ratios: Vec<f64> = data.windows(2).map(|w| w[1].0.since(w[0].0).as_secs_f64() / RATE.tx_time(w[0].1).as_secs_f64()).collect();
    ratios.sort_by(f64::total_cmp);
    (ratios[ratios.len() / 2], ratios.len())
}

#[test]
fn a_controller_that_needs_pacing_is_paced_at_its_rate_where_the_profile_paces_nothing() {
    let (paced, n) = gaps_in_datagram_times(true);
    assert!(n > 1000, "{n} gaps");
    assert!((0.999..=1.001).contains(&paced), "median gap {paced} datagram times at the controller's rate");
    // The same controller saying it needs no pacing: the 1 MB window alone limits the sender,
    // whose datagrams leave back to back on the 8 Gbit/s link.
    let (unpaced, _) = gaps_in_datagram_times(false);
    assert!(unpaced < 0.01, "median gap {unpaced} datagram times");
}
