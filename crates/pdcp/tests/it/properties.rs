//! Properties of the PDCP receiver under arbitrary arrival orders, duplicates and timers:
//! delivery is in ascending COUNT order, nothing is delivered twice, and every PDU accepted
//! (inside the window when it arrived) is delivered once its gaps are filled or given up.
//! At every step the reordering buffer holds exactly the accepted PDUs not yet delivered.

use multiconn_core::{Dur, Time};
use multiconn_pdcp::{Receiver, ReceiverConfig, RxOutcome, SnLength};
use proptest::prelude::*;

fn run(arrivals: &[(u64, i64)], t_reordering: Option<u64>, start: i64) -> (Vec<i64>, Vec<i64>) {
    let cfg = ReceiverConfig { sn: SnLength::new(12).unwrap(), t_reordering: t_reordering.map(Dur::from_millis), reordering: true };
    let mut rx: Receiver<i64> = Receiver::starting_at(cfg, start);
    let mut delivered = Vec::new();
    let mut accepted = Vec::new();
    let mut out = Vec::new();
    for &(ms, count) in arrivals {
        let now = Time::ZERO + Dur::from_millis(ms);
        while let Some(t) = rx.poll_timeout().filter(|&t| t <= now) {
            rx.handle_timeout(t, &mut out);
            assert_eq!(rx.buffered(), accepted.len() - out.len());
        }
        let sn = count.rem_euclid(4096) as u32;
        if let RxOutcome::Accepted { .. } = rx.receive(now, sn, count, &mut out) {
            accepted.push(count);
        }
        assert_eq!(rx.buffered(), accepted.len() - out.len(), "held = accepted - delivered");
    }
    while let Some(t) = rx.poll_timeout() {
        rx.handle_timeout(t, &mut out);
    }
    assert_eq!(rx.buffered(), accepted.len() - out.len());
    for (count, sdu) in out {
        assert_eq!(count, sdu, "the SDU delivered under a COUNT is the one sent with it");
        delivered.push(count);
    }
    (delivered, accepted)
}

/// Arrivals of COUNTs start..start+n in a random order, some twice, at non-decreasing times.
fn arrivals() -> impl Strategy<Value = (Vec<(u64, i64)>, i64)> {
    (1usize..300, 0i64..10_000, any::<u64>()).prop_flat_map(|(n, start, _)| {
        let counts: Vec<i64> = (start..start + n as i64).collect();
        (Just(counts).prop_shuffle(), prop::collection::vec((0u64..30, any::<bool>()), n), Just(start))
            .prop_map(|(order, steps, start)| {
                let mut t = 0;
                let mut list = Vec::new();
                for (count, (dt, twice)) in order.into_iter().zip(steps) {
                    t += dt;
                    list.push((t, count));
                    if twice {
                        list.push((t + dt, count));
                    }
                }
                list.sort_by_key(|&(t, _)| t);
                (list, start)
            })
    })
}

proptest! {
    #[test]
    fn delivery_is_ordered_without_duplicates((list, start) in arrivals(), t in prop::option::of(0u64..100)) {
        let (delivered, accepted) = run(&list, t, start);
        prop_assert!(delivered.windows(2).all(|w| w[0] < w[1]), "ascending, hence no duplicates");
        // Every accepted PDU goes up once the timers have run out.
        let mut sorted = accepted.clone();
        sorted.sort_unstable();
        prop_assert_eq!(delivered, sorted);
    }

    #[test]
    fn with_an_infinite_timer_everything_arrives_in_order((list, start) in arrivals()) {
        let (delivered, _) = run(&list, None, start);
        let n = list.iter().map(|&(_, c)| c).max().unwrap() - start + 1;
        prop_assert_eq!(delivered, (start..start + n).collect::<Vec<_>>());
    }
}
