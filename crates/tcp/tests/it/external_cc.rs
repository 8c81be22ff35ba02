//! A controller from outside the built-in set ([`FixedRate`]) through TCP: what it says it
//! needs, not its name, decides whether the sender paces. The `linux-tcp` profile leaves
//! pacing off, as Linux does without the fq qdisc, so only the controller's own
//! `needs_pacing` can turn it on.
use crate::support;

use multiconn_core::{Rate, Time};
use multiconn_testkit::{FixedRate, Route};
use support::*;

const RATE: Rate = Rate(20_000_000);

/// The median gap between the server's data segments, each gap divided by the time the
/// earlier segment's payload takes at [`RATE`] (1: sent at the controller's rate, as the
/// pacer counts payload bytes), and how many gaps that was.
fn gaps_in_payload_times(paced: bool) -> (f64, usize) {
    let mut p = params(download(2_000_000));
    assert!(!p.profile.pacing.enabled, "the test needs a profile that leaves pacing off");
    p.external_cc = Some(FixedRate { window: 1_000_000, rate: RATE, paced }.factory());
    let mut h = fast_pair(&p, ms(10));
    run_to_finish(&mut h, Time::from_secs_f64(10.0));
    let data: Vec<(Time, u64)> = h
        .wire
        .iter()
        .filter(|w| w.route == Route::ToClient && w.is_sent() && segment(&w.pkt).len > 0)
        .map(|w| (w.at, u64::from(segment(&w.pkt).len)))
        .collect();
    let mut ratios: Vec<f64> = data.windows(2).map(|w| w[1].0.since(w[0].0).as_secs_f64() / RATE.tx_time(w[0].1).as_secs_f64()).collect();
    ratios.sort_by(f64::total_cmp);
    (ratios[ratios.len() / 2], ratios.len())
}

#[test]
fn a_controller_that_needs_pacing_is_paced_at_its_rate_where_the_profile_paces_nothing() {
    let (paced, n) = gaps_in_payload_times(true);
    assert!(n > 1000, "{n} gaps");
    assert!((0.999..=1.001).contains(&paced), "median gap {paced} payload times at the controller's rate");
    // The same controller saying it needs no pacing: the 1 MB window alone limits the sender,
    // whose segments leave back to back on the 8 Gbit/s link.
    let (unpaced, _) = gaps_in_payload_times(false);
    assert!(unpaced < 0.01, "median gap {unpaced} payload times");
}
