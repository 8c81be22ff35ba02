//! Stream ordering when packing a packet (seed 004 §6.3) and its use with the schedulers.

use multiconn_core::{Dur, Time};
use multiconn_multipath::priority::*;
use multiconn_multipath::scheduler::*;

fn bg(id: u64, pending: u64) -> StreamDemand {
    StreamDemand { id, priority: false, urgency: 0, redundant: false, pending }
}

fn prio(id: u64, pending: u64) -> StreamDemand {
    StreamDemand { id, priority: true, urgency: 0, redundant: true, pending }
}

fn ids(chunks: &[Chunk]) -> Vec<(u64, u64)> {
    chunks.iter().map(|c| (c.stream, c.bytes)).collect()
}

#[test]
fn priority_streams_are_packed_first_whatever_their_id_or_position() {
    let mut p = StreamPacker::new(0);
    let streams = [bg(0, 5000), bg(4, 5000), prio(8, 300)];
    let chunks = p.pack(&streams, 1000, PackFilter::ALL);
    assert_eq!(ids(&chunks), [(8, 300), (0, 700)]);
    assert_eq!(p.order(&streams), [8, 4, 0], "background continues after stream 0");
}

#[test]
fn background_streams_take_turns_round_robin() {
    let mut p = StreamPacker::new(0);
    let streams = [bg(4, 10_000), bg(0, 10_000), bg(8, 10_000)];
    let served: Vec<u64> = (0..6).map(|_| p.pack(&streams, 1200, PackFilter::ALL)[0].stream).collect();
    assert_eq!(served, [0, 4, 8, 0, 4, 8]);
}

#[test]
fn a_stream_that_runs_out_leaves_the_rest_of_the_packet_to_the_next_one() {
    let mut p = StreamPacker::new(0);
    let streams = [bg(0, 100), bg(4, 10_000), bg(8, 10_000)];
    assert_eq!(ids(&p.pack(&streams, 1200, PackFilter::ALL)), [(0, 100), (4, 1100)]);
    // Stream 4 was served last: the next packet starts with 8.
    let streams = [bg(4, 8_900), bg(8, 10_000)];
    assert_eq!(ids(&p.pack(&streams, 1200, PackFilter::ALL)), [(8, 1200)]);
    assert_eq!(ids(&p.pack(&streams, 1200, PackFilter::ALL)), [(4, 1200)]);
}

#[test]
fn several_priority_streams_take_turns_before_any_background() {
    let mut p = StreamPacker::new(0);
    let streams = [bg(0, 10_000), prio(4, 10_000), prio(8, 10_000)];
    let served: Vec<Vec<(u64, u64)>> = (0..3).map(|_| ids(&p.pack(&streams, 1000, PackFilter::ALL))).collect();
    assert_eq!(served, [vec![(4, 1000)], vec![(8, 1000)], vec![(4, 1000)]]);
}

#[test]
fn urgency_orders_streams_within_each_class() {
    let p = StreamPacker::new(0);
    let streams = [
        StreamDemand { urgency: 3, ..bg(0, 10) },
        StreamDemand { urgency: 1, ..bg(4, 10) },
        StreamDemand { urgency: 5, ..prio(8, 10) },
        StreamDemand { urgency: 2, ..prio(12, 10) },
    ];
    assert_eq!(p.order(&streams), [12, 8, 4, 0]);
}

#[test]
fn frame_overhead_is_counted_per_stream_and_tiny_leftovers_are_not_used() {
    let p = StreamPacker::new(20);
    let streams = [prio(0, 100), bg(4, 10_000), bg(8, 10_000)];
    // 100 + 20 for stream 0, then 1000 - 120 - 20 = 860 for stream 4; nothing left for 8.
    assert_eq!(ids(&p.preview(&streams, 1000, PackFilter::ALL)), [(0, 100), (4, 860)]);
    // Exactly the overhead left: no empty frame.
    assert_eq!(ids(&p.preview(&[prio(0, 100), bg(4, 50)], 140, PackFilter::ALL)), [(0, 100)]);
}

#[test]
fn streams_without_pending_data_are_skipped() {
    let p = StreamPacker::new(0);
    assert_eq!(p.order(&[bg(0, 0), prio(4, 0), bg(8, 1)]), [8]);
    assert!(p.preview(&[bg(0, 0)], 1000, PackFilter::ALL).is_empty());
}

#[test]
fn preview_does_not_move_the_round_robin_position() {
    let mut p = StreamPacker::new(0);
    let streams = [bg(0, 10_000), bg(4, 10_000)];
    assert_eq!(p.preview(&streams, 1000, PackFilter::ALL)[0].stream, 0);
    assert_eq!(p.preview(&streams, 1000, PackFilter::ALL)[0].stream, 0);
    assert_eq!(p.pack(&streams, 1000, PackFilter::ALL)[0].stream, 0);
    assert_eq!(p.pack(&streams, 1000, PackFilter::ALL)[0].stream, 4);
}

#[test]
fn priority_only_filter_packs_nothing_but_priority_streams() {
    let p = StreamPacker::new(0);
    let streams = [bg(0, 5000), prio(4, 300)];
    assert_eq!(ids(&p.preview(&streams, 1000, PackFilter::priority_only())), [(4, 300)]);
    let red_only = PackFilter { priority_only: false, redundant_only: true };
    let streams = [bg(0, 5000), StreamDemand { redundant: true, ..bg(4, 300) }];
    assert_eq!(ids(&p.preview(&streams, 1000, red_only)), [(4, 300)]);
}

#[test]
fn content_and_copies_follow_the_chunks() {
    let p = StreamPacker::new(0);
    let chunks = p.preview(&[bg(0, 5000), prio(4, 300)], 1000, PackFilter::ALL);
    assert_eq!(content_of(&chunks), Some(Content::Stream { redundant: true, priority: true }));
    assert_eq!(ids(&copy_part(&chunks, CopyScope::RedundantStreams)), [(4, 300)]);
    assert_eq!(ids(&copy_part(&chunks, CopyScope::AllStreams)), [(4, 300), (0, 700)]);
    assert_eq!(content_of(&[]), None);
    let only_bg = p.preview(&[bg(0, 5000)], 1000, PackFilter::ALL);
    assert_eq!(content_of(&only_bg), Some(Content::STREAM));
}

/// The seed's mixed-traffic packet under SRE: the priority message goes on both paths, the
/// background data only on the min-RTT path.
#[test]
fn selective_redundant_packet_with_priority_and_background_data() {
    let paths = [PathView::new(0, Dur::from_millis(40), 12_000), PathView::new(1, Dur::from_millis(15), 12_000)];
    let streams = [bg(4, 100_000), prio(8, 300)];
    let mut packer = StreamPacker::new(0);
    let chunks = packer.preview(&streams, 1200, PackFilter::ALL);
    let content = content_of(&chunks).unwrap();
    let mut s = new_scheduler(SchedulerKind::SelectiveRedundant, SchedulerOptions::default());
    let d = s.decide(&paths, &Request::new(Time::ZERO, content));
    let Decision::Send { path, copies, scope, .. } = d else { panic!("{d:?}") };
    assert_eq!((path, copies.as_slice()), (1, &[0][..]));
    let sent = packer.pack(&streams, 1200, PackFilter::ALL);
    assert_eq!(ids(&sent), [(8, 300), (4, 900)]);
    assert_eq!(ids(&copy_part(&sent, scope)), [(8, 300)]);
}
