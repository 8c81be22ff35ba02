//! Multipath QUIC (draft-ietf-quic-multipath-21) between two endpoints over two paths:
//! path validation, per-path packet numbers and PATH_ACKs, the schedulers' use of the paths,
//! redundancy, and failover when a path's interface goes down.

use crate::support;

use multiconn_cc::CcKind;
use multiconn_core::{Rate, Time};
use multiconn_quic::frame::Frame;
use multiconn_transport::{AckPath, Endpoint, FailoverProfile, MultipathParams, PathStats, Role, SchedulerKind, SchedulerOptions};
use support::*;

const SIZE: u64 = 4_000_000;

/// The schedulers as the seed study built them: redundant content waits until two paths have
/// window space (its §8.1.4).
fn mp_params(scheduler: SchedulerKind) -> multiconn_transport::ConnectionParams {
    let mut p = params(download(SIZE), Time::ZERO);
    p.cc = CcKind::NewReno;
    p.multipath = Some(MultipathParams {
        paths: 2,
        scheduler,
        options: SchedulerOptions { redundant_min_paths: 2, ..SchedulerOptions::default() },
        ack_path: AckPath::Same,
        failover: FailoverProfile::MpQuic,
        coupled: None,
        opened_later: Vec::new(),
    });
    p
}

/// Path 0: 10 Mbit/s, 20 ms one way; path 1: 10 Mbit/s, 40 ms one way.
fn two_paths(scheduler: SchedulerKind) -> QuicPair {
        // Drop-tail at about 100 ms of backlog, like a modest router queue.
let mut h = quic_pair(&mp_params(scheduler), &[router_path(ms(20)), router_path(ms(40))]);
    h.record_wire = false;
    h
}

fn stats(ep: &dyn Endpoint) -> Vec<PathStats> {
    let mut out = Vec::new();
    ep.path_stats(&mut out);
    out
}

#[test]
fn min_rtt_download_uses_both_paths_and_completes() {
    let mut h = two_paths(SchedulerKind::MinRtt);
    let done = h.run_until_finished(Time::from_secs_f64(20.0)).expect("finished");
    assert_eq!(h.client.stats().delivered, SIZE);
    let s = stats(&*h.server);
    assert_eq!(s.len(), 2);
    assert!(s.iter().all(|p| p.status == "active"), "{s:?}");
    // Both paths carried a real share of the data.
    let (a, b) = (s[0].bytes_sent as f64, s[1].bytes_sent as f64);
    assert!(a > 0.25 * SIZE as f64 && b > 0.25 * SIZE as f64, "path bytes {a} {b}");
    // Aggregate faster than one 10 Mbit/s path could carry 4 MB (3.2 s).
    assert!(done.as_secs_f64() < 3.0, "{done}");
    // Each path measured its own RTT: about 40 and 80 ms.
    let srtt = |p: &PathStats| p.srtt.as_millis_f64();
    assert!(srtt(&s[0]) < srtt(&s[1]), "{s:?}");
}

#[test]
fn redundant_scheduler_sends_every_stream_byte_twice() {
    let mut h = two_paths(SchedulerKind::Redundant);
    h.run_until_finished(Time::from_secs_f64(30.0)).expect("finished");
    assert_eq!(h.client.stats().delivered, SIZE, "duplicates are delivered once");
    let s = stats(&*h.server);
    let sent: u64 = s.iter().map(|p| p.bytes_sent).sum();
    // Goodput / throughput ≈ 50 % (headers aside).
    let efficiency = SIZE as f64 / sent as f64;
    assert!((0.40..0.55).contains(&efficiency), "efficiency {efficiency}, {s:?}");
}

#[test]
fn interface_down_moves_the_transfer_to_the_other_path() {
    let mut h = two_paths(SchedulerKind::MinRtt);
    h.run_until(Time::from_secs_f64(1.0));
    // Path 0's interface goes down at both hosts; its links lose everything from now on.
    h.client.on_path_status(h.now, 0, false);
    h.server.on_path_status(h.now, 0, false);
    h.script(0, Route::ToServer, lose_when(|_, _| true));
    h.script(0, Route::ToClient, lose_when(|_, _| true));
    let done = h.run_until_finished(Time::from_secs_f64(30.0)).expect("finished over path 1");
    assert_eq!(h.client.stats().delivered, SIZE);
    let s = stats(&*h.server);
    assert_eq!(s[0].status, "down");
    assert!(done.as_secs_f64() < 6.0, "{done}");
}

#[test]
fn a_silently_dead_path_is_probed_with_pings_while_its_data_goes_elsewhere() {
    // Path 0 drops everything from 1 s on, in both directions, and nobody is told. mp-quic's
    // rule requeues its data at the first PTO and marks it potentially failed; from then on its
    // probes are PINGs: the stream data and the client's flow-control updates (MAX_DATA once
    // half of the 16 MiB window is read) go over path 1.
    let size = 20_000_000;
    let mut p = mp_params(SchedulerKind::MinRtt);
    p.workload = download(size);
    let mut h = quic_pair(&p, &[router_path(ms(20)), router_path(ms(40))]);
    h.run_until(Time::from_secs_f64(1.0));
    h.script(0, Route::ToServer, lose_when(|_, _| true));
    h.script(0, Route::ToClient, lose_when(|_, _| true));
    let outage = h.now;
    let done = h.run_until_finished(Time::from_secs_f64(60.0)).expect("finished over path 1");
    assert_eq!(h.client.stats().delivered, size);
    assert!(done.as_secs_f64() < 25.0, "{done}");
    for (role, ep) in [(Role::Server, &*h.server), (Role::Client, &*h.client)] {
        assert_eq!(stats(ep)[0].status, "potentially_failed", "{role:?}");
        // An end finds out at the first PTO after it sends something ack-eliciting there (the
        // client: its first MAX_DATA); from then on (the PTO is well within 1 s) the path
        // carries only PINGs (and PATH_ACKs).
        let log = h.log();
        let on_path0 = |w: &&Sent| w.from == role && w.pkt.path == 0 && w.sent > outage;
        let first = log.iter().filter(on_path0).find(|w| w.datagram().packets().any(|q| q.is_ack_eliciting())).expect("something ack-eliciting").sent;
        let late = log.iter().filter(on_path0).filter(|w| w.sent.since(first).as_secs_f64() > 1.0);
        let mut probes = 0;
        for w in late {
            probes += 1;
            for f in w.datagram().packets().flat_map(|q| q.frames.iter()) {
                assert!(matches!(f, Frame::Ping | Frame::PathAck { .. } | Frame::Padding(_)), "{role:?} sent {f:?} on the dead path at {}", w.sent);
            }
        }
        assert!(probes > 0, "{role:?} kept probing the dead path");
    }
}

#[test]
fn paths_are_validated_and_acknowledged_with_path_acks() {
    let mut h = two_paths(SchedulerKind::RoundRobin);
    h.record_wire = true;
    h.run_until_finished(Time::from_secs_f64(20.0)).expect("finished");
    let log = h.log();
    let on_path1 = |role: Role| log.iter().filter(move |w| w.from == role && w.pkt.path == 1);
    // The client opens path 1 with PATH_CHALLENGE; the server answers on the same path.
    let first_c = on_path1(Role::Client).next().expect("client used path 1");
    assert!(first_c.datagram().packets().any(|p| p.frames.contains(&Frame::PathChallenge)));
    let first_s = on_path1(Role::Server).next().expect("server used path 1");
    assert!(first_s.datagram().packets().any(|p| p.frames.contains(&Frame::PathResponse)));
    // Packet numbers are per path: path 1's start again from 0.
    assert_eq!(first_c.datagram().packets().next().unwrap().pn, 0);
    // After the handshake, ACKs are PATH_ACKs naming the path they acknowledge.
    let path_acks = log.iter().filter(|w| w.from == Role::Client).flat_map(|w| w.datagram().packets().flat_map(|p| p.frames.clone()).collect::<Vec<_>>());
    let mut acked = [false; 2];
    for f in path_acks {
        if let Frame::PathAck { path, .. } = f {
            acked[path as usize] = true;
        }
    }
    assert_eq!(acked, [true, true]);
}

#[test]
fn same_inputs_same_packets() {
    let run = || {
        let mut h = two_paths(SchedulerKind::SelectiveRedundant);
        h.run_until_finished(Time::from_secs_f64(20.0));
        (h.next_id, stats(&*h.server).iter().map(|p| (p.bytes_sent, p.packets_received)).collect::<Vec<_>>())
    };
    assert_eq!(run(), run());
}

#[test]
fn redundant_copies_never_retransmit_data_already_acknowledged_on_another_path() {
    // RE over two paths; the server's datagrams are lost on both: every 4th on path 1 (the
    // slower), every 9th on path 0 (after the handshake). A lost copy whose twin was
    // acknowledged on the other path must not be sent again: a STREAM range is requeued only
    // where it is not yet acknowledged (`SendBuffer::on_lost`) and dropped from the queue when
    // an ACK of either copy arrives (`on_acked`, `next_chunk`). Checked from the wire: replaying
    // the log, the server never sends stream bytes that an ACK it had already received covered.
    use multiconn_quic::packet::PacketType;
    use multiconn_quic::range_set::RangeSet;
    use std::collections::HashMap;
    let size = 1_000_000;
    let mut p = mp_params(SchedulerKind::Redundant);
    p.workload = download(size);
    let mut h = quic_pair(&p, &[symmetric(ms(20), Some(Rate::from_mbps(10.0))), symmetric(ms(40), Some(Rate::from_mbps(10.0)))]);
    h.script(0, Route::ToClient, lose_when(|i, _| (20..500).contains(&i) && i % 9 == 5));
    h.script(1, Route::ToClient, lose_when(|i, _| i < 500 && i % 4 == 3));
    // RE waits for window space on both paths, so the lossy path sets the pace.
    let done = h.run_until_finished(Time::from_secs_f64(60.0)).expect("finished");
    // The last ACKs reach the server.
    h.run_until(done + ms(500));
    assert_eq!(h.client.stats().delivered, size);

    let log = h.log();
    let events = replay_order(&log);
    // 1-RTT packets of the server by (path, packet number): their STREAM ranges.
    type Ranges = Vec<(u64, u64, u64)>;
    let mut sent: HashMap<(u32, u64), Ranges> = HashMap::new();
    let mut acked: HashMap<u64, RangeSet> = HashMap::new();
    let (mut resent_acked, mut stream_bytes, mut lost_copies_acked_elsewhere) = (0u64, 0u64, 0u64);
    let mut lost_on_path1: Vec<Ranges> = Vec::new();
    for (_, _, w) in events {
        for q in w.datagram().packets().filter(|q| q.ptype == PacketType::OneRtt) {
            if w.from == Role::Server {
                let frames: Ranges = q
                    .frames
                    .iter()
                    .filter_map(|f| match f {
                        Frame::Stream { id, offset, len, .. } => Some((*id, *offset, *offset + *len as u64)),
                        _ => None,
                    })
                    .collect();
                for &(id, s, e) in &frames {
                    stream_bytes += e - s;
                    let Some(a) = acked.get(&id) else { continue };
                    let mut from = s;
                    let mut uncovered = 0;
                    while let Some((x, y)) = a.first_uncovered(from, e) {
                        uncovered += y - x;
                        from = y;
                    }
                    resent_acked += (e - s) - uncovered;
                }
                if w.dropped && w.pkt.path == 1 {
                    lost_on_path1.push(frames.clone());
                }
                sent.insert((w.pkt.path as u32, q.pn), frames);
                continue;
            }
            for f in &q.frames {
                let (path, ack) = match f {
                    Frame::Ack(a) => (0, a),
                    Frame::PathAck { path, ack } => (*path, ack),
                    _ => continue,
                };
                for r in ack.ranges() {
                    let (lo, hi) = r.expect("valid ACK ranges");
                    for pn in lo..=hi {
                        for &(id, s, e) in sent.get(&(path, pn)).map(Vec::as_slice).unwrap_or_default() {
                            acked.entry(id).or_default().insert(s, e);
                        }
                    }
                }
            }
        }
    }
    // The replay recognised the ACKs: every byte ends up acknowledged.
    let all: u64 = acked.values().map(RangeSet::covered).sum();
    assert_eq!(all, size, "acknowledged stream bytes");
    // Copies lost on path 1 whose data the server had (eventually) acknowledged via path 0.
    for frames in &lost_on_path1 {
        if !frames.is_empty() && frames.iter().all(|&(id, s, e)| acked.get(&id).is_some_and(|a| a.contains_range(s, e))) {
            lost_copies_acked_elsewhere += 1;
        }
    }
    let retransmissions = h.server.stats().retransmissions;
    eprintln!(
        "stream bytes sent {stream_bytes}, server packets with retransmitted data {retransmissions}, \
         lost path-1 copies {} ({lost_copies_acked_elsewhere} acknowledged via path 0), bytes re-sent after their ACK {resent_acked}",
        lost_on_path1.len()
    );
    assert!(lost_copies_acked_elsewhere > 50, "the test needs lost copies: {lost_copies_acked_elsewhere}");
    assert_eq!(resent_acked, 0, "stream bytes sent again after the server had received their ACK");
}

/// One run of [`redundancy_checks_parallel_copy_everything_sequential_copies_are_cut_and_skip_retransmissions`]:
/// what the server's SRE put on the wire.
#[derive(Debug, Default)]
struct CopyCount {
    copies: u64,
    /// Copies whose STREAM frames are exactly the primary's redundant ones.
    exact: u64,
    /// Copies with fewer stream bytes than the primary's redundant ones; of those, how many
    /// carry a PATH_ACK.
    smaller: u64,
    smaller_with_ack: u64,
    /// Copies that carry a PATH_ACK.
    with_ack: u64,
    /// Primaries that start with retransmitted priority data, and how many of them were copied.
    retransmissions: u64,
    retransmissions_copied: u64,
    /// Primaries that start with retransmitted priority data and also carry new priority data
    /// (background data may follow: it is not redundant content).
    retransmissions_with_new_data: u64,
    delivered: u64,
}

/// (stream id, offset, len, fin) of STREAM frames ([`stream_frames`]).
type Frames = Vec<(u64, u64, u64, bool)>;

/// SRE over two paths (20 and 40 ms), the congestion fix on, two paths needed for redundant
/// content; the server writes a 2400-byte message on a redundant priority stream every 100 ms
/// and 25 kB of background data; datagrams are lost on both paths. Counts the server's
/// primaries and copies from the wire: a copy leaves right after its primary, at the same
/// instant, on the other path, and starts with the same STREAM frame.
fn count_copies(checks: multiconn_multipath::RedundantChecks) -> CopyCount {
    use multiconn_transport::{StreamOptions, StreamProgress, Workload};
    use std::collections::HashMap;
    let mut p = mp_params(SchedulerKind::SelectiveRedundant);
    p.workload = Workload::Messages;
    if let Some(m) = &mut p.multipath {
        m.options.priority_ignores_cwnd = true;
        m.options.redundant_checks = checks;
    }
    let mut h = quic_pair(&p, &[symmetric(ms(20), Some(Rate::from_mbps(10.0))), symmetric(ms(40), Some(Rate::from_mbps(10.0)))]);
    h.script(0, Route::ToClient, lose_when(|i, _| i > 30 && i % 7 == 3));
    h.script(1, Route::ToClient, lose_when(|i, _| i > 10 && i % 5 == 2));
    h.run_until(Time(ms(500).0));
    let prio = h.server.open_stream(StreamOptions { priority: 0, urgent: true, redundant: true }).unwrap();
    let bg = h.server.open_stream(StreamOptions { priority: 1, ..StreamOptions::default() }).unwrap();
    let messages = 30;
    for i in 0..messages {
        h.server.write(prio, 2400).unwrap();
        h.server.write(bg, 25_000).unwrap();
        h.run_until(Time(ms(600 + 100 * i).0));
    }
    h.run_until(Time::from_secs_f64(8.0));
    let mut progress: Vec<StreamProgress> = Vec::new();
    h.client.drain_progress(&mut progress);
    let mut c = CopyCount {
        delivered: progress.iter().filter(|p| p.stream == prio).map(|p| p.delivered).max().unwrap_or(0),
        ..CopyCount::default()
    };
    assert_eq!(c.delivered, 2400 * messages, "{checks:?}: the priority data arrives");

    let mut highest: HashMap<u64, u64> = HashMap::new();
    // The last primary carrying priority data: time, path, its priority frames, whether it
    // started with retransmitted data.
    let mut last: Option<(Time, usize, Frames, bool)> = None;
    for w in h.log().iter().filter(|w| w.from == Role::Server) {
        let frames = stream_frames(&w.pkt);
        let Some(&(first_id, first_off, _, _)) = frames.first() else { continue };
        let has_ack = w.datagram().packets().flat_map(|q| q.frames.iter()).any(|f| matches!(f, Frame::PathAck { .. }));
        let is_copy = last.as_ref().is_some_and(|(t, path, pf, _)| {
            *t == w.sent && *path != w.pkt.path as usize && pf.first().is_some_and(|f| (f.0, f.1) == (first_id, first_off))
        });
        if is_copy {
            let (_, _, pf, rtx) = last.as_ref().unwrap();
            c.copies += 1;
            c.with_ack += u64::from(has_ack);
            c.retransmissions_copied += u64::from(*rtx);
            let bytes = |fs: &[(u64, u64, u64, bool)]| fs.iter().map(|f| f.2).sum::<u64>();
            if frames == *pf {
                c.exact += 1;
            } else {
                // Anything else is the primary's frames cut short: all but the last whole, the
                // last a prefix without FIN.
                let n = frames.len();
                assert!(n <= pf.len() && frames[..n - 1] == pf[..n - 1], "{checks:?}: copy {frames:?} of {pf:?}");
                let (l, q) = (frames[n - 1], pf[n - 1]);
                assert!((l.0, l.1) == (q.0, q.1) && l.2 <= q.2 && (!l.3 || l == q), "{checks:?}: copy {frames:?} of {pf:?}");
            }
            if bytes(&frames) < bytes(pf) {
                c.smaller += 1;
                c.smaller_with_ack += u64::from(has_ack);
            }
            continue;
        }
        let rtx = first_id == prio && first_off < highest.get(&prio).copied().unwrap_or(0);
        let prio_frames: Vec<_> = frames.iter().copied().filter(|f| f.0 == prio).collect();
        if rtx {
            c.retransmissions += 1;
            let end = highest.get(&prio).copied().unwrap_or(0);
            c.retransmissions_with_new_data += u64::from(frames.iter().any(|f| f.0 == prio && f.1 + f.2 > end));
        }
        for f in &frames {
            let e = highest.entry(f.0).or_default();
            *e = (*e).max(f.1 + f.2);
        }
        last = (!prio_frames.is_empty()).then_some((w.sent, w.pkt.path as usize, prio_frames, rtx));
    }
    eprintln!("{checks:?}: {c:?}");
    c
}

#[test]
fn redundancy_checks_parallel_copy_everything_sequential_copies_are_cut_and_skip_retransmissions() {
    use multiconn_multipath::RedundantChecks;
    // Parallel (the default): every copy carries exactly the primary's priority frames, and
    // retransmitted priority data is copied like new data. Copies carry no ACKs.
    let par = count_copies(RedundantChecks::Parallel);
    assert!(par.copies > 20, "{par:?}");
    assert_eq!(par.exact, par.copies, "{par:?}");
    assert_eq!((par.smaller, par.with_ack), (0, 0), "{par:?}");
    assert!(par.retransmissions > 0 && par.retransmissions_copied > 0, "{par:?}");
    // Sequential: a copy is prepared by its own path, its PATH_ACKs first, so some copies carry
    // less than their primary, each of them because of an ACK; a packet that starts with
    // retransmitted data is never copied, and (two paths needed) carries no new priority data.
    let seq = count_copies(RedundantChecks::Sequential);
    assert!(seq.copies > 20, "{seq:?}");
    assert!(seq.smaller > 0 && seq.smaller_with_ack == seq.smaller, "{seq:?}");
    assert!(seq.retransmissions > 0, "{seq:?}");
    assert_eq!((seq.retransmissions_copied, seq.retransmissions_with_new_data), (0, 0), "{seq:?}");
}

#[test]
fn tquic_redundant_sends_queued_copies_before_new_data_and_only_what_is_unacknowledged() {
    // tquic's redundant scheduler over the two paths (20 and 40 ms one way, 10 Mbit/s each,
    // no loss). From the wire, in the server's sending order: a STREAM frame is new data when
    // none of its bytes went out before, a copy when all of them did (nothing is lost, so no
    // retransmission). Every packet puts its copies before its new data; the new data of a
    // packet that carried copies is never copied (tquic copies only packets without buffered
    // frames), that of the others mostly is, on the other path; and no copy carries bytes whose
    // ACK the server had already received (copies are filtered by the ACKs when they leave).
    use multiconn_quic::packet::PacketType;
    use multiconn_quic::range_set::RangeSet;
    use std::collections::HashMap;
    let size = 2_000_000;
    let mut p = mp_params(SchedulerKind::TquicRedundant);
    p.workload = download(size);
    p.multipath.as_mut().unwrap().options = SchedulerOptions::default();
    let mut h = quic_pair(&p, &[symmetric(ms(20), Some(Rate::from_mbps(10.0))), symmetric(ms(40), Some(Rate::from_mbps(10.0)))]);
    let done = h.run_until_finished(Time::from_secs_f64(60.0)).expect("finished");
    h.run_until(done + ms(500));
    assert_eq!(h.client.stats().delivered, size);

    let log = h.log();
    let events = replay_order(&log);
    let mut sent_bytes = RangeSet::new();
    let mut acked = RangeSet::new();
    let mut by_pn: HashMap<(u32, u64), Vec<(u64, u64)>> = HashMap::new();
    // New-data ranges: (path, whether its packet carried copies).
    let mut new_ranges: Vec<(u64, u64, u32, bool)> = Vec::new();
    let (mut copies_after_new, mut copy_bytes_after_ack, mut copy_packets) = (0, 0u64, [0u64; 2]);
    let mut copy_paths: Vec<(u64, u64, u32)> = Vec::new();
    for (_, _, w) in events {
        for q in w.datagram().packets().filter(|q| q.ptype == PacketType::OneRtt) {
            if w.from == Role::Server {
                let path = w.pkt.path as u32;
                let ranges: Vec<(u64, u64)> = q
                    .frames
                    .iter()
                    .filter_map(|f| match f {
                        Frame::Stream { offset, len, .. } if *len > 0 => Some((*offset, *offset + *len as u64)),
                        _ => None,
                    })
                    .collect();
                let is_new = |s: u64, e: u64, sent: &RangeSet| sent.first_uncovered(s, e) == Some((s, e));
                let kinds: Vec<bool> = ranges.iter().map(|&(s, e)| is_new(s, e, &sent_bytes)).collect();
                for (&(s, e), &new) in ranges.iter().zip(&kinds) {
                    assert!(new || sent_bytes.contains_range(s, e), "a frame partly new: {s}..{e}");
                }
                let carried_copies = kinds.iter().any(|n| !n);
                if carried_copies {
                    copy_packets[path as usize] += 1;
                }
                if let Some(first_new) = kinds.iter().position(|n| *n) {
                    copies_after_new += kinds[first_new..].iter().filter(|n| !**n).count();
                }
                for (&(s, e), &new) in ranges.iter().zip(&kinds) {
                    if new {
                        new_ranges.push((s, e, path, carried_copies));
                    } else {
                        copy_bytes_after_ack += (e - s) - uncovered_len(&acked, s, e);
                        copy_paths.push((s, e, path));
                    }
                }
                for &(s, e) in &ranges {
                    sent_bytes.insert(s, e);
                }
                by_pn.insert((path, q.pn), ranges);
                continue;
            }
            for f in &q.frames {
                let Frame::PathAck { path, ack } = f else { continue };
                for r in ack.ranges() {
                    let (lo, hi) = r.expect("valid ACK ranges");
                    for pn in lo..=hi {
                        for &(s, e) in by_pn.get(&(*path, pn)).map(Vec::as_slice).unwrap_or_default() {
                            acked.insert(s, e);
                        }
                    }
                }
            }
        }
    }
    eprintln!("packets with copies per path {copy_packets:?}, new ranges {}", new_ranges.len());
    assert_eq!(copies_after_new, 0, "a copy followed new data in a packet");
    assert_eq!(copy_bytes_after_ack, 0, "copied bytes whose ACK the server had received");
    // Both paths sent copies (each copies the other's new data).
    assert!(copy_packets[0] > 0 && copy_packets[1] > 100, "{copy_packets:?}");
    // Copies go to the other path than the new data's.
    let copied_on = |s: u64, e: u64| -> Vec<u32> {
        copy_paths.iter().filter(|&&(a, b, _)| a < e && s < b).map(|&(_, _, p)| p).collect()
    };
    let (mut plain, mut plain_copied) = (0, 0);
    for &(s, e, path, carried) in &new_ranges {
        let on = copied_on(s, e);
        assert!(on.iter().all(|&p| p != path), "{s}..{e} sent on path {path} copied on the same path");
        if carried {
            assert!(on.is_empty(), "new data {s}..{e} of a packet that carried copies was copied");
        } else {
            plain += 1;
            plain_copied += usize::from(!on.is_empty());
        }
    }
    assert!(plain_copied * 2 > plain, "only {plain_copied} of {plain} new ranges were copied");
}

/// Bytes of `[s, e)` not covered by `set`.
fn uncovered_len(set: &multiconn_quic::range_set::RangeSet, s: u64, e: u64) -> u64 {
    let (mut from, mut n) = (s, 0);
    while let Some((x, y)) = set.first_uncovered(from, e) {
        n += y - x;
        from = y;
    }
    n
}

/// The wire log in replay order: client datagrams as they arrive at the server (before anything
/// the server sends at the same instant), server datagrams as they are sent.
fn replay_order(log: &[Sent]) -> Vec<(Time, u8, &Sent)> {
    let mut events: Vec<(Time, u8, &Sent)> = Vec::new();
    for w in log {
        match w.from {
            Role::Client if !w.dropped => events.push((w.arrival, 0, w)),
            Role::Server => events.push((w.sent, 1, w)),
            Role::Client => {}
        }
    }
    events.sort_by_key(|&(t, order, _)| (t, order));
    events
}
