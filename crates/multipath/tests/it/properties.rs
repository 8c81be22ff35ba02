//! Properties every scheduler decision keeps, on random paths, requests and options.

use std::collections::BTreeSet;

use multiconn_core::{Dur, Time};
use multiconn_multipath::scheduler::*;
use proptest::prelude::*;

fn arb_path(id: usize) -> impl Strategy<Value = PathView> {
    (
        (prop::bool::weighted(0.85), prop::bool::weighted(0.2), 1u64..400, 0u64..80, 0u64..24),
        (
            prop_oneof![2 => Just(None), 1 => Just(Some(u64::MAX)), 1 => (0u64..40_000).prop_map(Some)],
            prop_oneof![Just(1200u64), Just(1460u64)],
            prop_oneof![1 => Just(0u8), 1 => Just(1u8), 4 => Just(2u8)],
            0u64..6,
            any::<bool>(),
            any::<bool>(),
        ),
        (prop::bool::weighted(0.8), prop::option::of(0u64..1_000)),
    )
        .prop_map(move |((usable, backup, srtt_ms, rttvar_ms, cwnd_pkts), (in_flight, mss, probe, sent, ss, rtx), (paced_ok, last_ms))| {
            let cwnd = cwnd_pkts * mss;
            // Empty, full, or anything up to two packets over the window.
            let in_flight = in_flight.map_or(0, |b| b.min(cwnd + 2 * mss));
            PathView {
                id,
                usable,
                backup,
                srtt: Dur::from_millis(srtt_ms),
                rttvar: Dur::from_millis(rttvar_ms),
                min_rtt: Dur::from_millis(srtt_ms / 2 + 1),
                cwnd,
                bytes_in_flight: in_flight,
                mss,
                // 0: never sent; 1: sent, no sample yet; 2: measured.
                has_sent_anything: probe > 0,
                rtt_sampled: probe == 2,
                packets_sent: if probe == 0 { 0 } else { sent },
                in_slow_start: ss,
                retransmissions_outstanding: rtx,
                last_sent: last_ms.map(|ms| Time::ZERO + Dur::from_millis(ms)),
                pacing_ready: paced_ok,
            }
        })
}

fn arb_paths() -> impl Strategy<Value = Vec<PathView>> {
    // Mostly two or more paths; sometimes none or one.
    prop_oneof![1 => prop::collection::btree_set(0usize..6, 0..2), 4 => prop::collection::btree_set(0usize..6, 2..5)]
        .prop_flat_map(|ids| ids.into_iter().map(arb_path).collect::<Vec<_>>())
        .prop_shuffle()
}

fn arb_content() -> impl Strategy<Value = Content> {
    prop_oneof![
        Just(Content::Control),
        (any::<bool>(), any::<bool>()).prop_map(|(redundant, priority)| Content::Stream { redundant, priority }),
    ]
}

fn arb_request() -> impl Strategy<Value = Request> {
    (arb_content(), prop_oneof![0u64..100_000, 0u64..2_000_000], prop_oneof![Just(u64::MAX), 0u64..3_000_000], any::<bool>()).prop_map(
        |(content, queued, window, rtx)| Request {
            now: Time::ZERO,
            content,
            queued_bytes: queued,
            send_window: window,
            retransmission: rtx,
        },
    )
}

fn arb_options() -> impl Strategy<Value = SchedulerOptions> {
    (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), 1usize..4, 1u32..4, any::<bool>()).prop_map(
        |(prio, last, dup, skip0, min_paths, per_turn, seq)| SchedulerOptions {
            priority_ignores_cwnd: prio,
            unprobed: if last { UnprobedPolicy::Last } else { UnprobedPolicy::First },
            duplicate_on_unprobed: dup,
            skip_initial_path: skip0,
            redundant_min_paths: min_paths,
            rr_packets_per_turn: per_turn,
            redundant_checks: if seq { RedundantChecks::Sequential } else { RedundantChecks::Parallel },
            ..SchedulerOptions::default()
        },
    )
}

fn arb_kind() -> impl Strategy<Value = SchedulerKind> {
    prop::sample::select(SchedulerKind::ALL.to_vec())
}

/// The path may carry this content now.
fn sendable(p: &PathView, content: Content, opts: &SchedulerOptions) -> bool {
    p.has_window_space() || (opts.priority_ignores_cwnd && content.is_priority_stream())
}

fn check(kind: SchedulerKind, opts: &SchedulerOptions, paths: &[PathView], req: &Request, d: &Decision) -> Result<(), TestCaseError> {
    let find = |id: usize| paths.iter().find(|p| p.id == id);
    let any_usable = paths.iter().any(|p| p.usable);
    let any_available = paths.iter().any(|p| p.usable && !p.backup);
    match d {
        Decision::Send { path, copies, hold_new, delivery, .. } => {
            // Only tquic's scheduler queues its copies, and those need no window space.
            let queued = *delivery == CopyDelivery::Queued;
            prop_assert!(!queued || kind == SchedulerKind::TquicRedundant, "{:?} queues copies", kind);
            // RE's stream content and SRE's redundant content.
            let re_or_sre = match kind {
                SchedulerKind::Redundant => req.content.is_stream(),
                SchedulerKind::SelectiveRedundant => req.content.is_redundant_stream(),
                _ => false,
            };
            if re_or_sre && opts.redundant_checks == RedundantChecks::Sequential && req.retransmission {
                prop_assert!(copies.is_empty(), "a retransmission copied under sequential checks");
            }
            prop_assert!(
                !*hold_new
                    || (re_or_sre
                        && opts.redundant_checks == RedundantChecks::Sequential
                        && req.retransmission
                        && opts.redundant_min_paths >= 2),
                "new data held back outside sequential checks"
            );
            let named = std::iter::once(path).chain(copies.iter());
            for id in named {
                let p = find(*id).ok_or_else(|| TestCaseError::fail(format!("unknown path {id}")))?;
                prop_assert!(p.usable, "unusable path {} named", id);
                let copy = id != path;
                prop_assert!((copy && queued) || sendable(p, req.content, opts), "path {} has no window space", id);
                // (An ATSSS mode is the steering itself: it reads no path status.)
                prop_assert!(!(any_available && p.backup) || kind.is_atsss(), "backup path {} used while an available one is usable", id);
            }
            if kind == SchedulerKind::TquicRedundant {
                // tquic: the first candidate that can send, and a copy on every other one.
                let in_class = |p: &&PathView| p.usable && (!any_available || !p.backup);
                let others = paths.iter().filter(in_class).any(|p| p.id != 0);
                let skip0 = opts.skip_initial_path && others;
                let candidates: Vec<&PathView> = paths.iter().filter(in_class).filter(|p| !(skip0 && p.id == 0)).collect();
                let first = candidates.iter().filter(|p| sendable(p, req.content, opts) && p.pacing_ready).map(|p| p.id).min();
                prop_assert_eq!(Some(*path), first);
                let mut expected: Vec<usize> = if req.content.is_stream() { candidates.iter().map(|p| p.id).filter(|id| id != path).collect() } else { Vec::new() };
                let mut got = copies.clone();
                expected.sort_unstable();
                got.sort_unstable();
                prop_assert_eq!(got, expected);
            }
            prop_assert!(!copies.contains(path), "copies include the primary path");
            let distinct: BTreeSet<_> = copies.iter().collect();
            prop_assert_eq!(distinct.len(), copies.len(), "repeated copies");
            if !copies.is_empty() {
                prop_assert!(req.content.is_stream(), "control duplicated");
                let redundant_rule = match kind {
                    SchedulerKind::Redundant | SchedulerKind::TquicRedundant | SchedulerKind::AtsssRedundant => true,
                    SchedulerKind::SelectiveRedundant => req.content.is_redundant_stream(),
                    _ => false,
                };
                prop_assert!(redundant_rule || (opts.duplicate_on_unprobed && copies.len() == 1), "unexpected copies {:?}", copies);
            }
        }
        Decision::Wait { fast_path } => {
            prop_assert!(matches!(kind, SchedulerKind::Blest | SchedulerKind::Ecf), "{:?} waits", kind);
            prop_assert!(req.content.is_stream());
            let f = find(*fast_path).ok_or_else(|| TestCaseError::fail("unknown fast path"))?;
            prop_assert!(f.usable && !f.has_window_space());
        }
        Decision::Blocked => {
            prop_assert!(any_usable);
            let redundant_rule = match kind {
                SchedulerKind::Redundant => req.content.is_stream(),
                SchedulerKind::SelectiveRedundant => req.content.is_redundant_stream(),
                _ => false,
            };
            // An ATSSS mode waits for the path its rule names (no spill-over): its own tests
            // (crates/multipath/src/atsss.rs) say when.
            if !redundant_rule && !kind.is_atsss() {
                // Nothing in the preferred class could take it.
                let in_class = |p: &&PathView| p.usable && (!any_available || !p.backup);
                let others = paths.iter().filter(in_class).any(|p| p.id != 0);
                let skip0 = opts.skip_initial_path && others;
                // picoquic's and tquic's schedulers also need the pacer's leave.
                let paced_ok = |p: &PathView| !kind.reads_pacer() || p.pacing_ready;
                let open = paths.iter().filter(in_class).filter(|p| !(skip0 && p.id == 0)).any(|p| sendable(p, req.content, opts) && paced_ok(p));
                prop_assert!(!open, "blocked although a candidate has room");
            }
        }
        Decision::NoPath => prop_assert!(!any_usable),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn decisions_name_only_usable_paths_with_room_and_copies_never_repeat_the_primary(
        kind in arb_kind(),
        opts in arb_options(),
        steps in prop::collection::vec((arb_paths(), arb_request()), 1..8),
    ) {
        let mut s = new_scheduler(kind, opts);
        for (i, (paths, req)) in steps.iter().enumerate() {
            let req = Request { now: Time(Dur::from_millis(5).0 * i as u64), ..*req };
            let d = s.decide(paths, &req);
            check(kind, &opts, paths, &req, &d)?;
        }
    }

    #[test]
    fn decisions_are_deterministic(
        kind in arb_kind(),
        opts in arb_options(),
        steps in prop::collection::vec((arb_paths(), arb_request()), 1..8),
    ) {
        let run = || {
            let mut s = new_scheduler(kind, opts);
            steps.iter().map(|(p, r)| s.decide(p, r)).collect::<Vec<_>>()
        };
        prop_assert_eq!(run(), run());
    }

    #[test]
    fn min_rtt_with_measured_paths_picks_the_fastest_sendable_candidate(
        paths in arb_paths(),
        req in arb_request(),
    ) {
        let paths: Vec<PathView> = paths.into_iter().map(|p| PathView { rtt_sampled: true, has_sent_anything: true, ..p }).collect();
        let opts = SchedulerOptions::default();
        let d = new_scheduler(SchedulerKind::MinRtt, opts).decide(&paths, &req);
        let any_available = paths.iter().any(|p| p.usable && !p.backup);
        let best = paths
            .iter()
            .filter(|p| p.usable && (!any_available || !p.backup) && sendable(p, req.content, &opts))
            .min_by_key(|p| (p.srtt, p.id));
        prop_assert_eq!(d.path(), best.map(|p| p.id));
    }

    #[test]
    fn the_order_of_the_path_slice_does_not_matter(
        kind in arb_kind(),
        opts in arb_options(),
        paths in arb_paths(),
        req in arb_request(),
    ) {
        let mut reversed = paths.clone();
        reversed.reverse();
        let a = new_scheduler(kind, opts).decide(&paths, &req);
        let b = new_scheduler(kind, opts).decide(&reversed, &req);
        prop_assert_eq!(a, b);
    }

    /// The situation BLEST and ECF arbitrate: the fastest path is full, a slower one has room.
    #[test]
    fn blest_and_ecf_wait_only_for_a_full_fast_path_and_blest_waits_less_with_a_larger_window(
        fast_ms in 1u64..100,
        extra_ms in 1u64..400,
        fast_pkts in 1u64..40,
        slow_pkts in 1u64..40,
        rttvar in (0u64..50, 0u64..50),
        slow_start in any::<bool>(),
        queued in 0u64..2_000_000,
        window in 0u64..4_000_000,
        more in 0u64..4_000_000,
    ) {
        let fast = PathView {
            bytes_in_flight: fast_pkts * 1200,
            rttvar: Dur::from_millis(rttvar.0),
            in_slow_start: slow_start,
            ..PathView::new(0, Dur::from_millis(fast_ms), fast_pkts * 1200)
        };
        let slow = PathView { rttvar: Dur::from_millis(rttvar.1), ..PathView::new(1, Dur::from_millis(fast_ms + extra_ms), slow_pkts * 1200) };
        let paths = [fast, slow];
        let req = Request { queued_bytes: queued, send_window: window, ..Request::new(Time::ZERO, Content::STREAM) };
        let opts = SchedulerOptions::default();
        for kind in [SchedulerKind::Blest, SchedulerKind::Ecf] {
            let d = new_scheduler(kind, opts).decide(&paths, &req);
            check(kind, &opts, &paths, &req, &d)?;
            prop_assert!(matches!(d, Decision::Wait { fast_path: 0 }) || d == Decision::single(1), "{:?}", d);
        }
        let blest = |w: u64| new_scheduler(SchedulerKind::Blest, opts).decide(&paths, &Request { send_window: w, ..req });
        if blest(window) == Decision::single(1) {
            prop_assert_eq!(blest(window.saturating_add(more)), Decision::single(1));
        }
        // Control never waits.
        for kind in [SchedulerKind::Blest, SchedulerKind::Ecf] {
            let ctl = Request { content: Content::Control, ..req };
            prop_assert_eq!(new_scheduler(kind, opts).decide(&paths, &ctl), Decision::single(1));
        }
    }
}

mod packing {
    use multiconn_multipath::priority::*;
    use proptest::prelude::*;

    fn arb_streams() -> impl Strategy<Value = Vec<StreamDemand>> {
        prop::collection::btree_set(0u64..12, 0..6).prop_flat_map(|ids| {
            ids.into_iter()
                .map(|id| {
                    (any::<bool>(), 0u8..3, any::<bool>(), 0u64..3000).prop_map(move |(priority, urgency, redundant, pending)| {
                        StreamDemand { id: id * 4, priority, urgency, redundant, pending }
                    })
                })
                .collect::<Vec<_>>()
        })
    }

    proptest! {
        #[test]
        fn packets_respect_space_pending_filters_and_priority_order(
            rounds in prop::collection::vec((arb_streams(), 0u64..2000, any::<bool>()), 1..6),
            overhead in 0u64..30,
        ) {
            let mut p = StreamPacker::new(overhead);
            for (streams, space, prio_only) in rounds {
                let filter = if prio_only { PackFilter::priority_only() } else { PackFilter::ALL };
                let chunks = p.pack(&streams, space, filter);
                let used: u64 = chunks.iter().map(|c| c.bytes + overhead).sum();
                prop_assert!(used <= space);
                let mut seen_background = false;
                for c in &chunks {
                    let s = streams.iter().find(|s| s.id == c.stream).unwrap();
                    prop_assert!(c.bytes > 0 && c.bytes <= s.pending);
                    prop_assert!(!prio_only || s.priority);
                    prop_assert_eq!((c.priority, c.redundant), (s.priority, s.redundant));
                    prop_assert!(!(seen_background && s.priority), "priority data after background data");
                    seen_background |= !s.priority;
                }
                // Only the last chunk may be cut short, and only when the packet is full.
                for c in chunks.iter().rev().skip(1) {
                    let s = streams.iter().find(|s| s.id == c.stream).unwrap();
                    prop_assert_eq!(c.bytes, s.pending);
                }
                // Nothing packable was left out while room remained.
                let left = space - used;
                if left > overhead {
                    let packed: Vec<u64> = chunks.iter().map(|c| c.stream).collect();
                    for s in streams.iter().filter(|s| s.pending > 0 && (!prio_only || s.priority)) {
                        prop_assert!(packed.contains(&s.id), "stream {} left out with {} bytes free", s.id, left);
                    }
                }
            }
        }
    }
}

mod health {
    use multiconn_core::Time;
    use multiconn_multipath::path_health::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn failed_is_final_and_every_profile_is_deterministic(
            profile in prop::sample::select(FailoverProfile::ALL.to_vec()),
            events in prop::collection::vec((0usize..3, 0u8..8), 0..60),
        ) {
            let run = || {
                let mut h = PathHealthSet::new(HealthConfig::new(profile));
                for id in 0..3 {
                    h.add_path(id, Time::ZERO);
                }
                let mut trace = Vec::new();
                for (i, &(id, e)) in events.iter().enumerate() {
                    let now = Time(i as u64 * 1_000_000);
                    let before = h.status(id);
                    let r = match e {
                        0 | 1 => h.on_packet_sent(id, now),
                        2 => h.on_packet_received(id, now),
                        3 => h.on_ack_received(id, now),
                        4 | 5 => h.on_timeout(id, now),
                        6 => h.on_link_down_hint(id, now),
                        _ => h.on_link_up_hint(id, now),
                    };
                    if before == Some(PathStatus::Failed) {
                        assert_eq!(r, Reaction::default());
                        assert_eq!(h.status(id), Some(PathStatus::Failed));
                    }
                    if let Some((from, to)) = r.transition {
                        assert_eq!(Some(from), before);
                        assert_eq!(Some(to), h.status(id));
                    }
                    trace.push((r, (0..3).map(|i| h.usable(i)).collect::<Vec<_>>()));
                }
                trace
            };
            prop_assert_eq!(run(), run());
        }
    }
}
