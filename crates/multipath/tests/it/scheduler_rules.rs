//! Decision rules of each scheduler on hand-made path views whose answer is known, chosen so
//! that a wrong rule gives a different answer.

use multiconn_core::{Dur, Time};
use multiconn_multipath::scheduler::*;

const MSS: u64 = 1200;
const BG: Content = Content::STREAM;
const PRIO: Content = Content::Stream { redundant: true, priority: true };
const RED: Content = Content::Stream { redundant: true, priority: false };

fn ms(x: u64) -> Dur {
    Dur::from_millis(x)
}

/// Path `id` with smoothed RTT `srtt_ms` and a window of `pkts` packets, nothing in flight.
fn path(id: usize, srtt_ms: u64, pkts: u64) -> PathView {
    PathView::new(id, ms(srtt_ms), pkts * MSS)
}

fn full(p: PathView) -> PathView {
    PathView { bytes_in_flight: p.cwnd, ..p }
}

fn backup(p: PathView) -> PathView {
    PathView { backup: true, ..p }
}

fn unusable(p: PathView) -> PathView {
    PathView { usable: false, ..p }
}

/// Never sent anything, no RTT sample (srtt is the 333 ms initial guess).
fn fresh(id: usize) -> PathView {
    PathView { has_sent_anything: false, rtt_sampled: false, ..path(id, 333, 10) }
}

/// Sent `n` packets, no RTT sample yet.
fn unsampled(id: usize, n: u64) -> PathView {
    PathView { rtt_sampled: false, packets_sent: n, ..path(id, 333, 10) }
}

fn req(content: Content) -> Request {
    Request::new(Time::ZERO, content)
}

fn decide(kind: SchedulerKind, opts: SchedulerOptions, paths: &[PathView], content: Content) -> Decision {
    new_scheduler(kind, opts).decide(paths, &req(content))
}

fn minrtt(paths: &[PathView], content: Content) -> Decision {
    decide(SchedulerKind::MinRtt, SchedulerOptions::default(), paths, content)
}

fn send(path: usize, copies: &[usize], scope: CopyScope) -> Decision {
    Decision::Send { path, copies: copies.to_vec(), scope, hold_new: false, delivery: CopyDelivery::Now }
}

// ---- window space --------------------------------------------------------------------------

#[test]
fn window_space_is_in_flight_plus_mss_at_most_cwnd() {
    let p = path(0, 10, 10);
    assert!(PathView { bytes_in_flight: 9 * MSS, ..p }.has_window_space());
    assert!(!PathView { bytes_in_flight: 9 * MSS + 1, ..p }.has_window_space());
    assert!(!PathView { cwnd: MSS - 1, ..p }.has_window_space());
    assert!(!PathView { bytes_in_flight: u64::MAX, ..p }.has_window_space(), "no overflow");
}

// ---- min-RTT ---------------------------------------------------------------------------------

#[test]
fn minrtt_takes_the_lowest_smoothed_rtt() {
    let paths = [path(0, 40, 10), path(1, 15, 10), path(2, 30, 10)];
    assert_eq!(minrtt(&paths, BG), Decision::single(1));
    assert_eq!(minrtt(&paths, Content::Control), Decision::single(1));
}

#[test]
fn minrtt_spills_to_the_next_fastest_only_when_the_window_is_full() {
    let paths = [path(0, 40, 10), full(path(1, 15, 10)), path(2, 30, 10)];
    assert_eq!(minrtt(&paths, BG), Decision::single(2));
    // One byte of room short of an MSS is full.
    let almost = PathView { bytes_in_flight: 9 * MSS + 1, ..path(1, 15, 10) };
    assert_eq!(minrtt(&[path(0, 40, 10), almost], BG), Decision::single(0));
    let just = PathView { bytes_in_flight: 9 * MSS, ..path(1, 15, 10) };
    assert_eq!(minrtt(&[path(0, 40, 10), just], BG), Decision::single(1));
}

#[test]
fn minrtt_blocks_when_every_window_is_full_and_has_no_path_when_nothing_is_usable() {
    assert_eq!(minrtt(&[full(path(0, 40, 10)), full(path(1, 15, 10))], BG), Decision::Blocked);
    assert_eq!(minrtt(&[unusable(path(0, 40, 10))], BG), Decision::NoPath);
    assert_eq!(minrtt(&[], BG), Decision::NoPath);
}

#[test]
fn minrtt_never_uses_an_unusable_path_even_the_fastest() {
    let paths = [unusable(path(0, 5, 10)), path(1, 50, 10)];
    assert_eq!(minrtt(&paths, BG), Decision::single(1));
}

#[test]
fn minrtt_ties_break_by_lowest_id_whatever_the_slice_order() {
    let paths = [path(3, 20, 10), path(1, 20, 10), path(2, 20, 10)];
    assert_eq!(minrtt(&paths, BG), Decision::single(1));
}

#[test]
fn backup_paths_are_used_only_when_no_available_path_is_usable() {
    // The backup path is faster and has room, the available one is slower: available wins.
    let paths = [path(0, 50, 10), backup(path(1, 5, 10))];
    assert_eq!(minrtt(&paths, BG), Decision::single(0));
    // A full available path blocks; it does not spill to the backup (draft §1.6 semantics).
    let paths = [full(path(0, 50, 10)), backup(path(1, 5, 10))];
    assert_eq!(minrtt(&paths, BG), Decision::Blocked);
    // The available path is unusable: the backup carries the data.
    let paths = [unusable(path(0, 50, 10)), backup(path(1, 5, 10)), backup(path(2, 8, 10))];
    assert_eq!(minrtt(&paths, BG), Decision::single(1));
}

#[test]
fn unprobed_first_gives_a_path_that_never_sent_the_next_packet() {
    let paths = [path(0, 10, 10), fresh(1)];
    assert_eq!(minrtt(&paths, BG), Decision::single(1));
    // Once it has sent (no sample yet) the measured path wins again.
    let paths = [path(0, 10, 10), unsampled(1, 1)];
    assert_eq!(minrtt(&paths, BG), Decision::single(0));
    // ... and it is used when the measured path is full.
    let paths = [full(path(0, 10, 10)), unsampled(1, 1)];
    assert_eq!(minrtt(&paths, BG), Decision::single(1));
    // Several fresh paths: fewest packets sent, then lowest id.
    let paths = [path(0, 10, 10), fresh(2), fresh(1)];
    assert_eq!(minrtt(&paths, BG), Decision::single(1));
}

#[test]
fn unprobed_last_is_mp_quic_measured_paths_always_win() {
    let opts = SchedulerOptions { unprobed: UnprobedPolicy::Last, ..SchedulerOptions::default() };
    let d = |paths: &[PathView]| decide(SchedulerKind::MinRtt, opts, paths, BG);
    assert_eq!(d(&[path(0, 300, 10), fresh(1)]), Decision::single(0));
    assert_eq!(d(&[full(path(0, 300, 10)), unsampled(1, 4), unsampled(2, 3)]), Decision::single(2));
}

#[test]
fn mp_quic_duplicates_stream_data_sent_on_an_unprobed_path_and_skips_path_0() {
    let opts = SchedulerOptions::mp_quic();
    let d = |paths: &[PathView], c| decide(SchedulerKind::MinRtt, opts, paths, c);
    // Paths 1 and 2 both unprobed with equal counts: 1 is chosen, 2 gets the duplicate; path 0
    // (handshake path, measured) is skipped because other paths exist.
    let paths = [path(0, 10, 10), unsampled(1, 2), unsampled(2, 2)];
    assert_eq!(d(&paths, BG), send(1, &[2], CopyScope::AllStreams));
    // Control is never duplicated.
    assert_eq!(d(&paths, Content::Control), Decision::single(1));
    // A path that has sent more does not get the duplicate.
    let paths = [unsampled(1, 2), unsampled(2, 3)];
    assert_eq!(d(&paths, BG), Decision::single(1));
    // Nor a path without window space.
    let paths = [unsampled(1, 2), full(unsampled(2, 1))];
    assert_eq!(d(&paths, BG), Decision::single(1));
    // Path 0 alone is used.
    assert_eq!(d(&[path(0, 10, 10)], BG), Decision::single(0));
    // Measured path chosen: no duplicate.
    assert_eq!(d(&[path(1, 10, 10), path(2, 20, 10)], BG), Decision::single(1));
}

#[test]
fn priority_ignores_cwnd_lets_priority_stream_data_through_a_full_window() {
    let paths = [full(path(0, 40, 10)), full(path(1, 15, 10))];
    let prio = Content::Stream { redundant: false, priority: true };
    let on = SchedulerOptions { priority_ignores_cwnd: true, ..SchedulerOptions::default() };
    assert_eq!(decide(SchedulerKind::MinRtt, on, &paths, prio), Decision::single(1));
    assert_eq!(decide(SchedulerKind::MinRtt, on, &paths, BG), Decision::Blocked);
    assert_eq!(decide(SchedulerKind::MinRtt, on, &paths, Content::Control), Decision::Blocked);
    assert_eq!(decide(SchedulerKind::MinRtt, SchedulerOptions::default(), &paths, prio), Decision::Blocked);
}

// ---- round-robin -------------------------------------------------------------------------------

fn rr_sequence(opts: SchedulerOptions, paths: &[PathView], n: usize) -> Vec<Option<usize>> {
    let mut s = new_scheduler(SchedulerKind::RoundRobin, opts);
    (0..n).map(|_| s.decide(paths, &req(BG)).path()).collect()
}

#[test]
fn round_robin_cycles_in_id_order_ignoring_rtt() {
    let paths = [path(2, 5, 10), path(0, 50, 10), path(1, 20, 10)];
    let seq = rr_sequence(SchedulerOptions::default(), &paths, 7);
    assert_eq!(seq, [0, 1, 2, 0, 1, 2, 0].map(Some));
}

#[test]
fn round_robin_skips_paths_without_window_space_and_backups() {
    let paths = [path(0, 50, 10), full(path(1, 20, 10)), path(2, 5, 10), backup(path(3, 1, 10))];
    let seq = rr_sequence(SchedulerOptions::default(), &paths, 4);
    assert_eq!(seq, [0, 2, 0, 2].map(Some));
}

#[test]
fn round_robin_sends_several_packets_per_turn_when_asked() {
    let opts = SchedulerOptions { rr_packets_per_turn: 2, ..SchedulerOptions::default() };
    let seq = rr_sequence(opts, &[path(0, 50, 10), path(1, 20, 10)], 6);
    assert_eq!(seq, [0, 0, 1, 1, 0, 0].map(Some));
}

#[test]
fn round_robin_continues_after_the_last_path_when_paths_change() {
    let mut s = new_scheduler(SchedulerKind::RoundRobin, SchedulerOptions::default());
    let two = [path(0, 50, 10), path(1, 20, 10)];
    assert_eq!(s.decide(&two, &req(BG)).path(), Some(0));
    assert_eq!(s.decide(&two, &req(BG)).path(), Some(1));
    // Path 2 appears: its turn comes after 1.
    let three = [path(0, 50, 10), path(1, 20, 10), path(2, 20, 10)];
    assert_eq!(s.decide(&three, &req(BG)).path(), Some(2));
    assert_eq!(s.decide(&three, &req(BG)).path(), Some(0));
    // Everything full: blocked, and the turn is kept.
    assert_eq!(s.decide(&[full(path(0, 50, 10)), full(path(1, 20, 10))], &req(BG)), Decision::Blocked);
    assert_eq!(s.decide(&three, &req(BG)).path(), Some(1));
}

// ---- redundant (RE) ----------------------------------------------------------------------------

#[test]
fn redundant_duplicates_stream_data_on_every_path_with_room_fastest_first() {
    let paths = [path(0, 40, 10), path(1, 15, 10), full(path(2, 5, 10)), path(3, 30, 10)];
    for c in [BG, RED, PRIO] {
        let d = decide(SchedulerKind::Redundant, SchedulerOptions::default(), &paths, c);
        assert_eq!(d, send(1, &[3, 0], CopyScope::AllStreams), "{c:?}");
    }
}

#[test]
fn redundant_never_duplicates_control() {
    let paths = [path(0, 40, 10), path(1, 15, 10)];
    let d = decide(SchedulerKind::Redundant, SchedulerOptions::default(), &paths, Content::Control);
    assert_eq!(d, Decision::single(1));
}

#[test]
fn redundant_copies_stay_in_the_available_class() {
    let paths = [path(0, 40, 10), path(1, 15, 10), backup(path(2, 5, 10))];
    let d = decide(SchedulerKind::Redundant, SchedulerOptions::default(), &paths, BG);
    assert_eq!(d, send(1, &[0], CopyScope::AllStreams));
}

#[test]
fn redundant_min_paths_two_waits_until_two_paths_have_room() {
    let opts = SchedulerOptions { redundant_min_paths: 2, ..SchedulerOptions::default() };
    let one_open = [full(path(0, 40, 10)), path(1, 15, 10)];
    assert_eq!(decide(SchedulerKind::Redundant, opts, &one_open, BG), Decision::Blocked);
    assert_eq!(decide(SchedulerKind::Redundant, SchedulerOptions::default(), &one_open, BG), Decision::single(1));
    // A single usable path is enough when it is the only one.
    let alone = [unusable(path(0, 40, 10)), path(1, 15, 10)];
    assert_eq!(decide(SchedulerKind::Redundant, opts, &alone, BG), Decision::single(1));
    // Control is not redundant content and does not wait.
    assert_eq!(decide(SchedulerKind::Redundant, opts, &one_open, Content::Control), Decision::single(1));
}

// ---- selective redundant (SRE) -----------------------------------------------------------------

#[test]
fn selective_redundant_duplicates_only_redundant_stream_content() {
    let paths = [path(0, 40, 10), path(1, 15, 10), path(2, 30, 10)];
    let sre = |c| decide(SchedulerKind::SelectiveRedundant, SchedulerOptions::default(), &paths, c);
    assert_eq!(sre(RED), send(1, &[2, 0], CopyScope::RedundantStreams));
    assert_eq!(sre(PRIO), send(1, &[2, 0], CopyScope::RedundantStreams));
    assert_eq!(sre(BG), Decision::single(1));
    assert_eq!(sre(Content::Stream { redundant: false, priority: true }), Decision::single(1));
    assert_eq!(sre(Content::Control), Decision::single(1));
}

#[test]
fn selective_redundant_with_the_congestion_fix_sends_priority_data_on_full_paths() {
    // Background data filled both windows (seed 004 §8.1.4): priority data still goes out on both.
    let paths = [full(path(0, 40, 10)), full(path(1, 15, 10))];
    let fix = SchedulerOptions { priority_ignores_cwnd: true, ..SchedulerOptions::default() };
    let d = decide(SchedulerKind::SelectiveRedundant, fix, &paths, PRIO);
    assert_eq!(d, send(1, &[0], CopyScope::RedundantStreams));
    assert_eq!(decide(SchedulerKind::SelectiveRedundant, SchedulerOptions::default(), &paths, PRIO), Decision::Blocked);
    // Redundant but not priority content is still held by the window.
    assert_eq!(decide(SchedulerKind::SelectiveRedundant, fix, &paths, RED), Decision::Blocked);
}

// ---- parallel or sequential redundancy checks (seed 004 §9.4) ----------------------------------

fn sequential(min_paths: usize) -> SchedulerOptions {
    SchedulerOptions { redundant_min_paths: min_paths, redundant_checks: RedundantChecks::Sequential, ..SchedulerOptions::default() }
}

/// The packet starts with retransmitted data.
fn rtx(content: Content) -> Request {
    Request { retransmission: true, ..req(content) }
}

#[test]
fn redundant_checks_default_to_parallel_and_parse_by_name() {
    use serde::de::value::{Error, StrDeserializer};
    use serde::Deserialize;
    assert_eq!(SchedulerOptions::default().redundant_checks, RedundantChecks::Parallel);
    assert_eq!(SchedulerOptions::mp_quic().redundant_checks, RedundantChecks::Parallel);
    assert_eq!("parallel".parse::<RedundantChecks>().unwrap(), RedundantChecks::Parallel);
    assert_eq!("sequential".parse::<RedundantChecks>().unwrap(), RedundantChecks::Sequential);
    for k in RedundantChecks::ALL {
        assert_eq!(k.to_string().parse::<RedundantChecks>().unwrap(), k);
        assert_eq!(RedundantChecks::deserialize(StrDeserializer::<Error>::new(k.name())).unwrap(), k);
    }
    let e = "serial".parse::<RedundantChecks>().unwrap_err().to_string();
    assert!(e.contains("redundant_checks") && e.contains("serial") && e.contains("parallel") && e.contains("sequential"), "{e}");
    assert!(!e.contains('\n'), "{e}");
    assert!(RedundantChecks::deserialize(StrDeserializer::<Error>::new("Sequential")).is_err());
    for k in RedundantChecks::ALL {
        for min_paths in [1, 2] {
            assert!(SchedulerOptions { redundant_checks: k, ..sequential(min_paths) }.validate().is_ok());
        }
    }
}

#[test]
fn parallel_checks_copy_a_retransmission_like_any_packet() {
    let paths = [path(0, 40, 10), path(1, 15, 10)];
    for min_paths in [1, 2] {
        let opts = SchedulerOptions { redundant_min_paths: min_paths, ..SchedulerOptions::default() };
        let sre = new_scheduler(SchedulerKind::SelectiveRedundant, opts).decide(&paths, &rtx(PRIO));
        assert_eq!(sre, send(1, &[0], CopyScope::RedundantStreams));
        let re = new_scheduler(SchedulerKind::Redundant, opts).decide(&paths, &rtx(BG));
        assert_eq!(re, send(1, &[0], CopyScope::AllStreams));
    }
}

#[test]
fn sequential_checks_send_a_retransmission_without_copy() {
    let paths = [path(0, 40, 10), path(1, 15, 10), path(2, 30, 10)];
    let hold = |path: usize, scope: CopyScope| Decision::Send { path, copies: Vec::new(), scope, hold_new: true, delivery: CopyDelivery::Now };
    for (kind, content, scope) in
        [(SchedulerKind::SelectiveRedundant, PRIO, CopyScope::RedundantStreams), (SchedulerKind::Redundant, BG, CopyScope::AllStreams)]
    {
        // New data is copied as under parallel checks.
        assert_eq!(new_scheduler(kind, sequential(1)).decide(&paths, &req(content)), send(1, &[2, 0], scope));
        assert_eq!(new_scheduler(kind, sequential(2)).decide(&paths, &req(content)), send(1, &[2, 0], scope));
        // A retransmission goes alone on the min-RTT path; with two paths needed the new data of
        // the copied streams stays out of it.
        assert_eq!(new_scheduler(kind, sequential(1)).decide(&paths, &rtx(content)), Decision::single(1));
        assert_eq!(new_scheduler(kind, sequential(2)).decide(&paths, &rtx(content)), hold(1, scope));
        // The retransmission is not held back when only one path has room.
        let one_open = [full(path(0, 40, 10)), path(1, 15, 10), full(path(2, 30, 10))];
        assert_eq!(new_scheduler(kind, sequential(2)).decide(&one_open, &req(content)), Decision::Blocked);
        assert_eq!(new_scheduler(kind, sequential(2)).decide(&one_open, &rtx(content)), hold(1, scope));
        // With a single usable path two paths are never needed.
        let alone = [unusable(path(0, 40, 10)), path(1, 15, 10)];
        assert_eq!(new_scheduler(kind, sequential(2)).decide(&alone, &rtx(content)), Decision::single(1));
        // Nothing to send on.
        let none = [full(path(0, 40, 10)), full(path(1, 15, 10))];
        assert_eq!(new_scheduler(kind, sequential(2)).decide(&none, &rtx(BG)), Decision::Blocked);
    }
    // SRE's other content and control content are min-RTT whatever the checks.
    let sre = |c| new_scheduler(SchedulerKind::SelectiveRedundant, sequential(2)).decide(&paths, &rtx(c));
    assert_eq!(sre(BG), Decision::single(1));
    assert_eq!(sre(Content::Control), Decision::single(1));
    // Other schedulers ignore the option.
    for kind in [SchedulerKind::MinRtt, SchedulerKind::Blest, SchedulerKind::Ecf] {
        assert_eq!(new_scheduler(kind, sequential(2)).decide(&paths, &rtx(PRIO)), Decision::single(1), "{kind}");
    }
}

// ---- BLEST -------------------------------------------------------------------------------------

/// Fast path 0: 10 ms, 10 packets, full. Slow path 1: 100 ms, 10 packets, empty.
fn blest_paths() -> [PathView; 2] {
    [full(path(0, 10, 10)), path(1, 100, 10)]
}

fn blest_with_window(send_window: u64) -> Decision {
    let mut s = Blest::new(SchedulerOptions::default());
    let r = Request { send_window, ..req(BG) };
    s.decide(&blest_paths(), &r)
}

#[test]
fn blest_estimate_follows_the_reno_model() {
    let [f, s] = blest_paths();
    let b = Blest::new(SchedulerOptions::default());
    // n = 100/10 = 10 rounds: (12000 + 1200 * 9 / 2) * 10 = 174000 bytes, times λ = 1.2.
    assert_eq!(b.estimate_fast_bytes(&f, &s), 208_800);
    // Initial slow start doubles per round: 12000 * (2^10 - 1).
    let f_ss = PathView { in_slow_start: true, ..f };
    assert_eq!(b.estimate_fast_bytes(&f_ss, &s), 12_000 * 1023 * 12 / 10);
}

#[test]
fn blest_waits_for_the_fast_path_when_the_slow_one_would_block_the_send_window() {
    // First decision lowers λ to 1.19 (no retransmissions on the slow path): the fast path is
    // expected to send 174000 * 1.19 = 207060 bytes; the slow packet leaves send_window - 1200.
    assert_eq!(blest_with_window(100_000), Decision::Wait { fast_path: 0 });
    assert_eq!(blest_with_window(208_259), Decision::Wait { fast_path: 0 });
    assert_eq!(blest_with_window(208_260), Decision::single(1));
    assert_eq!(blest_with_window(10_000_000), Decision::single(1));
}

#[test]
fn blest_uses_the_fast_path_when_it_has_room_and_never_delays_control() {
    let mut s = Blest::new(SchedulerOptions::default());
    let open = [path(0, 10, 10), path(1, 100, 10)];
    let tight = Request { send_window: 1, ..req(BG) };
    assert_eq!(s.decide(&open, &tight), Decision::single(0));
    let ctl = Request { send_window: 1, ..req(Content::Control) };
    assert_eq!(s.decide(&blest_paths(), &ctl), Decision::single(1));
}

#[test]
fn blest_lambda_rises_with_slow_path_retransmissions_at_most_every_min_rtt_over_8() {
    let opts = SchedulerOptions::default();
    let [f, s] = blest_paths();
    let s_rtx = PathView { retransmissions_outstanding: true, ..s };
    let mut b = Blest::new(opts);
    let at = |t_ms: u64| Request { now: Time(ms(t_ms).0), send_window: u64::MAX, ..req(BG) };
    b.decide(&[f, s_rtx], &at(0));
    assert_eq!(b.lambda_permille(), 1240);
    // Within min_rtt_s / 8 = 12.5 ms: no change.
    b.decide(&[f, s_rtx], &at(12));
    assert_eq!(b.lambda_permille(), 1240);
    b.decide(&[f, s_rtx], &at(13));
    assert_eq!(b.lambda_permille(), 1280);
    b.decide(&[f, s_rtx], &at(26));
    b.decide(&[f, s_rtx], &at(39));
    assert_eq!(b.lambda_permille(), 1300, "capped at 1.3");
    b.decide(&[f, s], &at(52));
    assert_eq!(b.lambda_permille(), 1290);
}

// ---- ECF ---------------------------------------------------------------------------------------

/// Fast path 0: 10 ms ± 1 ms, 10 packets, full. Slow path 1: 100 ms ± 5 ms, `slow_pkts`.
fn ecf_paths(slow_pkts: u64) -> [PathView; 2] {
    [full(PathView { rttvar: ms(1), ..path(0, 10, 10) }), PathView { rttvar: ms(5), ..path(1, 100, slow_pkts) }]
}

fn ecf_req(queued: u64) -> Request {
    Request { queued_bytes: queued, ..req(BG) }
}

#[test]
fn ecf_waits_when_the_fast_path_finishes_first_and_the_slow_path_would_take_long() {
    // k = 24000: (1 + 2) * 10 = 30 ms < 100 + 5 ms, and 24000/12000 * 100 = 200 >= 2*10 + 5.
    let mut e = Ecf::new(SchedulerOptions::default());
    assert_eq!(e.decide(&ecf_paths(10), &ecf_req(24_000)), Decision::Wait { fast_path: 0 });
    assert!(e.waiting());
}

#[test]
fn ecf_uses_the_slow_path_when_the_backlog_is_large() {
    // k = 1.2 MB: (1 + 100) * 10 = 1010 ms > 105 ms: send on the slow path.
    let mut e = Ecf::new(SchedulerOptions::default());
    assert_eq!(e.decide(&ecf_paths(10), &ecf_req(1_200_000)), Decision::single(1));
    assert!(!e.waiting());
}

#[test]
fn ecf_uses_the_slow_path_when_it_would_finish_soon_enough() {
    // First inequality holds (30 < 105) but the slow window is large: 24000/120000 * 100 = 20 ms
    // < 2*10 + 5 = 25 ms, so the slow path is used.
    let mut e = Ecf::new(SchedulerOptions::default());
    assert_eq!(e.decide(&ecf_paths(100), &ecf_req(24_000)), Decision::single(1));
}

#[test]
fn ecf_hysteresis_keeps_waiting_in_the_band_beta_adds() {
    // k = 130000: (12000 + 130000) * 10 = 1.42e6 lies between 12000 * 105 = 1.26e6 (w = 0) and
    // 1.26e6 * 1.25 = 1.575e6 (w = 1).
    let band = ecf_req(130_000);
    let mut fresh = Ecf::new(SchedulerOptions::default());
    assert_eq!(fresh.decide(&ecf_paths(10), &band), Decision::single(1));

    let mut e = Ecf::new(SchedulerOptions::default());
    assert_eq!(e.decide(&ecf_paths(10), &ecf_req(24_000)), Decision::Wait { fast_path: 0 });
    assert_eq!(e.decide(&ecf_paths(10), &band), Decision::Wait { fast_path: 0 });
    // A large backlog clears w; the band case then uses the slow path again.
    assert_eq!(e.decide(&ecf_paths(10), &ecf_req(1_200_000)), Decision::single(1));
    assert!(!e.waiting());
    assert_eq!(e.decide(&ecf_paths(10), &band), Decision::single(1));
}

#[test]
fn ecf_counts_at_least_one_fast_window_as_backlog() {
    // queued 0 behaves as k = cwnd_f = 12000: (1 + 1) * 10 = 20 < 105; 12000/12000 * 100 >= 25.
    let mut e = Ecf::new(SchedulerOptions::default());
    assert_eq!(e.decide(&ecf_paths(10), &ecf_req(0)), Decision::Wait { fast_path: 0 });
}

#[test]
fn ecf_sends_on_the_fast_path_when_it_has_room_and_never_delays_control() {
    let mut e = Ecf::new(SchedulerOptions::default());
    let open = [PathView { rttvar: ms(1), ..path(0, 10, 10) }, path(1, 100, 10)];
    assert_eq!(e.decide(&open, &ecf_req(24_000)), Decision::single(0));
    let ctl = Request { queued_bytes: 24_000, ..req(Content::Control) };
    assert_eq!(e.decide(&ecf_paths(10), &ctl), Decision::single(1));
}

// ---- kinds, names, options ---------------------------------------------------------------------

#[test]
fn scheduler_names_round_trip_through_serde_and_from_str() {
    use serde::de::value::{Error, StrDeserializer};
    use serde::Deserialize;
    let names = [
        "minrtt",
        "roundrobin",
        "redundant",
        "selective_redundant",
        "blest",
        "ecf",
        "picoquic",
        "tquic_redundant",
        "tquic_minrtt",
        "atsss_active_standby",
        "atsss_smallest_delay",
        "atsss_load_balancing",
        "atsss_priority",
        "atsss_redundant",
    ];
    assert_eq!(names.len(), SchedulerKind::ALL.len());
    for (kind, name) in SchedulerKind::ALL.into_iter().zip(names) {
        assert_eq!(kind.name(), name);
        assert_eq!(kind.to_string(), name);
        assert_eq!(name.parse::<SchedulerKind>(), Ok(kind));
        assert_eq!(SchedulerKind::deserialize(StrDeserializer::<Error>::new(name)), Ok(kind));
        assert_eq!(new_scheduler(kind, SchedulerOptions::default()).kind(), kind);
    }
    let err = "lowrtt".parse::<SchedulerKind>().unwrap_err();
    assert!(err.to_string().contains("minrtt"), "{err}");
    assert!(SchedulerKind::deserialize(StrDeserializer::<Error>::new("MinRtt")).is_err());
}

#[test]
fn options_validation_names_the_bad_field() {
    assert!(SchedulerOptions::default().validate().is_ok());
    assert!(SchedulerOptions::mp_quic().validate().is_ok());
    let e = SchedulerOptions { redundant_min_paths: 0, ..SchedulerOptions::default() }.validate().unwrap_err();
    assert!(e.to_string().contains("redundant_min_paths"));
    let e = SchedulerOptions { rr_packets_per_turn: 0, ..SchedulerOptions::default() }.validate().unwrap_err();
    assert!(e.to_string().contains("rr_packets_per_turn"));
    let bad = BlestParams { lambda_initial_permille: 1400, ..BlestParams::default() };
    assert!(SchedulerOptions { blest: bad, ..SchedulerOptions::default() }.validate().is_err());
}

// ---- picoquic (early 2022) -----------------------------------------------------------------

fn sent_at(p: PathView, at_ms: u64) -> PathView {
    PathView { last_sent: Some(Time::ZERO + ms(at_ms)), ..p }
}

fn picoquic(paths: &[PathView]) -> Decision {
    decide(SchedulerKind::Picoquic, SchedulerOptions::default(), paths, BG)
}

#[test]
fn picoquic_takes_the_least_recently_used_path_with_room_not_the_fastest() {
    // Path 0 is much faster, but path 1 sent longer ago: min-RTT would pick 0.
    let paths = [sent_at(path(0, 10, 10), 50), sent_at(path(1, 80, 10), 20)];
    assert_eq!(minrtt(&paths, BG), Decision::single(0));
    assert_eq!(picoquic(&paths), Decision::single(1));
    // A path that never sent comes first; equal times go to the lower id.
    assert_eq!(picoquic(&[sent_at(path(0, 10, 10), 1), path(1, 80, 10)]), Decision::single(1));
    assert_eq!(picoquic(&[sent_at(path(0, 10, 10), 5), sent_at(path(1, 80, 10), 5)]), Decision::single(0));
}

#[test]
fn picoquic_skips_paths_without_room_or_pacing_leave_and_unusable_ones() {
    let a = sent_at(path(0, 10, 10), 50);
    let b = sent_at(path(1, 80, 10), 20);
    assert_eq!(picoquic(&[a, full(b)]), Decision::single(0));
    assert_eq!(picoquic(&[a, PathView { pacing_ready: false, ..b }]), Decision::single(0));
    assert_eq!(picoquic(&[a, unusable(b)]), Decision::single(0));
    // Nothing both paced and open: wait.
    assert_eq!(picoquic(&[full(a), PathView { pacing_ready: false, ..b }]), Decision::Blocked);
    assert_eq!(picoquic(&[unusable(a), unusable(b)]), Decision::NoPath);
    // A backup path only when no available path is usable.
    assert_eq!(picoquic(&[full(a), backup(b)]), Decision::Blocked);
    assert_eq!(picoquic(&[unusable(a), backup(b)]), Decision::single(1));
}

// ---- tquic's min-RTT scheduler (tquic 1.6) ---------------------------------------------------

#[test]
fn tquic_minrtt_passes_over_the_fastest_path_while_its_pacer_holds_it() {
    let fast = path(0, 10, 10);
    let slow = path(1, 80, 10);
    let held = PathView { pacing_ready: false, ..fast };
    let tquic_minrtt = |paths: &[PathView], content| decide(SchedulerKind::TquicMinRtt, SchedulerOptions::default(), paths, content);
    // Both can send: the lower RTT, as min-RTT.
    assert_eq!(tquic_minrtt(&[fast, slow], BG), Decision::single(0));
    // The fast path's pacer holds it: min-RTT waits for it, tquic sends on the slow path.
    assert_eq!(minrtt(&[held, slow], BG), Decision::single(0));
    assert_eq!(tquic_minrtt(&[held, slow], BG), Decision::single(1));
    // Neither may send now: wait; a full window passes the turn as for min-RTT.
    assert_eq!(tquic_minrtt(&[held, PathView { pacing_ready: false, ..slow }], BG), Decision::Blocked);
    assert_eq!(tquic_minrtt(&[full(fast), slow], BG), Decision::single(1));
    assert!(SchedulerKind::TquicMinRtt.reads_pacer() && !SchedulerKind::MinRtt.reads_pacer());
    assert_eq!(SchedulerKind::TquicMinRtt.quic_stack(), Some("tquic"));
}

// ---- tquic's redundant scheduler (tquic 1.6) -------------------------------------------------

fn tquic(paths: &[PathView], content: Content) -> Decision {
    decide(SchedulerKind::TquicRedundant, SchedulerOptions::default(), paths, content)
}

fn queued(path: usize, copies: &[usize]) -> Decision {
    Decision::Send { path, copies: copies.to_vec(), scope: CopyScope::AllStreams, hold_new: false, delivery: CopyDelivery::Queued }
}

#[test]
fn tquic_redundant_sends_new_data_on_the_first_path_with_room_not_the_fastest() {
    // Path 0 is the slower one: min-RTT and RE put the packet on path 1, tquic on path 0.
    let paths = [path(0, 80, 10), path(1, 10, 10), path(2, 40, 10)];
    assert_eq!(minrtt(&paths, BG), Decision::single(1));
    assert_eq!(decide(SchedulerKind::Redundant, SchedulerOptions::default(), &paths, BG).path(), Some(1));
    assert_eq!(tquic(&paths, BG).path(), Some(0));
    // A full window or a pacer that holds the packet passes the turn to the next path in id
    // order, whatever the RTTs.
    assert_eq!(tquic(&[full(paths[0]), paths[1], paths[2]], BG).path(), Some(1));
    let paced = PathView { pacing_ready: false, ..paths[0] };
    assert_eq!(tquic(&[paced, full(paths[1]), paths[2]], BG).path(), Some(2));
    assert_eq!(tquic(&[unusable(paths[0]), paths[1], paths[2]], BG).path(), Some(1));
    // The slice order does not matter, the ids do.
    assert_eq!(tquic(&[paths[2], paths[1], paths[0]], BG).path(), Some(0));
    // Nothing can send: wait; nothing usable: no path.
    assert_eq!(tquic(&[full(paths[0]), paced_off(paths[1]), full(paths[2])], BG), Decision::Blocked);
    assert_eq!(tquic(&[unusable(paths[0]), unusable(paths[1])], BG), Decision::NoPath);
}

fn paced_off(p: PathView) -> PathView {
    PathView { pacing_ready: false, ..p }
}

#[test]
fn tquic_redundant_queues_a_copy_on_every_other_path_whatever_its_window() {
    // RE copies only onto paths with window space at that moment; tquic onto every other
    // usable path, full or paced, as copies that wait in the path's queue.
    let paths = [path(0, 10, 10), full(path(1, 30, 10)), paced_off(path(2, 20, 10)), unusable(path(3, 5, 10))];
    assert_eq!(decide(SchedulerKind::Redundant, SchedulerOptions::default(), &paths, BG), send(0, &[2], CopyScope::AllStreams));
    assert_eq!(tquic(&paths, BG), queued(0, &[2, 1]));
    // Every stream frame is copied, flagged redundant or not, priority or not.
    assert_eq!(tquic(&paths, RED), queued(0, &[2, 1]));
    assert_eq!(tquic(&paths, PRIO), queued(0, &[2, 1]));
    // Control frames travel alone, on the same first path with room.
    assert_eq!(tquic(&[full(paths[0]), paths[1], path(2, 20, 10)], Content::Control), Decision::single(2));
    // One usable path: no copy.
    assert_eq!(tquic(&[path(0, 10, 10), unusable(path(1, 30, 10))], BG), Decision::single(0));
    // Backup paths stay out while an available path is usable, as for every scheduler.
    assert_eq!(tquic(&[path(0, 10, 10), backup(path(1, 30, 10))], BG), Decision::single(0));
}
