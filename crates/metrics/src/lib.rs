//! multiconn-metrics: turns the [`Recorder`] stream into time series and totals.
//!
//! [`BinnedRecorder`] keeps, for every flow and every link direction, fixed-width time bins
//! (default 100 ms) of delivered bytes and drops by cause, and for links the time-weighted
//! mean queue length in each bin. Totals are kept alongside. Asked to
//! ([`BinnedRecorder::with_paths`], [`BinnedRecorder::with_bearers`]), it keeps the same bins
//! per path of a multipath flow (with the sender's state on the path), per leg of a split
//! bearer, and per split bearer (with the reordering delay and the reordering buffer's
//! time-weighted mean). Series are found by index, never by hashing. At the end of a run,
//! [`BinnedRecorder::finish`] gives every series' rows, or [`BinnedRecorder::take_series`]
//! hands its bins over to be made into rows one series at a time, each series' bins freed
//! then (a run of many series keeps most of its memory in them).
//! [`jain_index`] is Jain's fairness index (Jain, Chiu and Hawe, DEC-TR-301, 1984).

use multiconn_core::{BearerId, DropCause, Dur, FlowId, LinkId, QueueBin, Recorder, Time, TransportSample};

/// Jain's fairness index (Σx)² / (n·Σx²): 1 when all are equal, 1/n when one takes all.
/// `None` for an empty set or when every value is zero (fairness is undefined).
pub fn jain_index(xs: &[f64]) -> Option<f64> {
    let n = xs.len() as f64;
    let sum: f64 = xs.iter().sum();
    let sum_sq: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || sum_sq == 0.0 {
        None
    } else {
        Some(sum * sum / (n * sum_sq))
    }
}

/// Counters of one entity (flow, link direction, path, leg or split bearer) over one bin or
/// over the whole run.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counters {
    /// Bytes delivered: a flow's payload (goodput), a link's bytes on the wire, what a path
    /// or leg carried to its end, a split bearer's SDUs delivered in order upwards.
    pub bytes_delivered: u64,
    /// Packets delivered.
    pub packets_delivered: u64,
    /// Flows: bytes the sender put on the network, headers included.
    pub bytes_sent: u64,
    /// Packets dropped, by cause in the order of [`DropCause::ALL`].
    pub drops: [u64; DropCause::ALL.len()],
    /// Flows: the part of `drops` in the flow's reverse direction (ACKs, requests); the rest
    /// was in its data direction. Zero for other series.
    pub drops_reverse: [u64; DropCause::ALL.len()],
    /// ∫ queue packets dt and ∫ queue bytes dt over the bin, in packet·ns and byte·ns. Links:
    /// the queue; split bearers: the PDUs in the reordering buffer (bytes stay 0).
    pub queue_packet_ns: u128,
    /// See `queue_packet_ns`.
    pub queue_byte_ns: u128,
    /// Split bearers: Σ of the time the delivered SDUs waited in the reordering buffer, ns.
    pub reorder_delay_ns: u64,
    /// Transport flows and paths: the sender's state at the last event in the bin (carried
    /// over from earlier bins when nothing happened in this one).
    pub transport: Option<TransportSample>,
}

impl Counters {
    /// Packets dropped for `cause`.
    pub fn drops_by(&self, cause: DropCause) -> u64 {
        self.drops[cause_index(cause)]
    }

    /// Flows: packets of the reverse direction (ACKs, requests) dropped for `cause`.
    pub fn reverse_drops_by(&self, cause: DropCause) -> u64 {
        self.drops_reverse[cause_index(cause)]
    }

    /// Flows: packets of the data direction dropped for `cause`.
    pub fn data_drops_by(&self, cause: DropCause) -> u64 {
        self.drops_by(cause) - self.reverse_drops_by(cause)
    }
}

fn cause_index(cause: DropCause) -> usize {
    match cause {
        DropCause::Queue => 0,
        DropCause::RandomLoss => 1,
        DropCause::LinkDown => 2,
        DropCause::UdpBuffer => 3,
        DropCause::PdcpLate => 4,
        DropCause::PdcpWindow => 5,
    }
}

#[derive(Debug, Clone, Default)]
struct Series {
    bins: Vec<Counters>,
    total: Counters,
    /// Split bearers: the reordering buffer since `queue_since` (links get theirs integrated: `link_queue_bin`).
    queue_packets: u32,
    queue_bytes: u64,
    queue_since: Time,
}

impl Series {
    fn bin(&mut self, idx: usize) -> &mut Counters {
        if idx >= self.bins.len() {
            self.bins.resize(idx + 1, Counters::default());
        }
        &mut self.bins[idx]
    }

    fn delivered(&mut self, idx: usize, packets: u64, bytes: u64) {
        let c = self.bin(idx);
        c.bytes_delivered += bytes;
        c.packets_delivered += packets;
        self.total.bytes_delivered += bytes;
        self.total.packets_delivered += packets;
    }

    fn dropped(&mut self, idx: usize, cause: DropCause) {
        self.bin(idx).drops[cause_index(cause)] += 1;
        self.total.drops[cause_index(cause)] += 1;
    }

    fn dropped_reverse(&mut self, idx: usize, cause: DropCause) {
        self.dropped(idx, cause);
        self.bin(idx).drops_reverse[cause_index(cause)] += 1;
        self.total.drops_reverse[cause_index(cause)] += 1;
    }

    fn transport(&mut self, idx: usize, sample: &TransportSample) {
        self.bin(idx).transport = Some(*sample);
        self.total.transport = Some(*sample);
    }

    /// Integrates the queue length from its last change up to `now`, bin by bin.
    fn integrate_queue(&mut self, bin: u64, now: Time) {
        let (pkts, bytes) = (self.queue_packets as u128, self.queue_bytes as u128);
        let mut t = self.queue_since.0;
        if pkts > 0 || bytes > 0 {
            while t < now.0 {
                let idx = (t / bin) as usize;
                let bin_end = (idx as u64 + 1) * bin;
                let until = bin_end.min(now.0);
                let dt = (until - t) as u128;
                let c = self.bin(idx);
                c.queue_packet_ns += pkts * dt;
                c.queue_byte_ns += bytes * dt;
                self.total.queue_packet_ns += pkts * dt;
                self.total.queue_byte_ns += bytes * dt;
                t = until;
            }
        }
        self.queue_since = self.queue_since.max(now);
    }

    /// The bins covering [0, end), the transport state carried over bins without an event.
    fn rows(&self, bin: Dur, end: Time) -> Vec<BinRow> {
        let n_bins = (end.0.div_ceil(bin.0)) as usize;
        let mut carried: Option<TransportSample> = None;
        (0..n_bins)
            .map(|i| {
                let start = Time(i as u64 * bin.0);
                let stop = Time(((i as u64 + 1) * bin.0).min(end.0));
                let mut counters = self.bins.get(i).copied().unwrap_or_default();
                match counters.transport {
                    Some(t) => carried = Some(t),
                    None => counters.transport = carried,
                }
                BinRow { start, length: stop - start, counters }
            })
            .collect()
    }
}

/// Records into fixed-width bins.
#[derive(Debug, Clone)]
pub struct BinnedRecorder {
    bin: Dur,
    flows: Vec<Series>,
    links: Vec<Series>,
    /// Where each flow's path series start in `paths`, plus the end: flow `f`'s path `p` is
    /// `paths[path_start[f] + p]` for `p < path_start[f + 1] - path_start[f]`.
    path_start: Vec<usize>,
    paths: Vec<Series>,
    /// Split bearer `b`'s leg `l` is `legs[2 * b + l]`.
    legs: Vec<Series>,
    bearers: Vec<Series>,
}

/// Every series' bins at the end of a run (see [`BinnedRecorder::finish`]): each series'
/// rows, or ([`BinnedRecorder::take_series`]) what makes them, [`PendingRows`].
#[derive(Debug, Clone, Default)]
pub struct Finished<R = Vec<BinRow>> {
    /// Per flow.
    pub flows: Vec<R>,
    /// Per link direction.
    pub links: Vec<R>,
    /// Per flow, per path (none for a flow without path series).
    pub paths: Vec<Vec<R>>,
    /// Per split bearer, per leg.
    pub legs: Vec<[R; 2]>,
    /// Per split bearer.
    pub bearers: Vec<R>,
}

/// One row of the time series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BinRow {
    /// When the bin starts.
    pub start: Time,
    /// The bin's length (the last bin may be cut short by the end of the run).
    pub length: Dur,
    /// What happened in the bin.
    pub counters: Counters,
}

impl BinRow {
    /// Delivered bytes over the bin's length, in Mbit/s.
    pub fn throughput_mbps(&self) -> f64 {
        if self.length.0 == 0 {
            0.0
        } else {
            self.counters.bytes_delivered as f64 * 8.0 / self.length.as_secs_f64() / 1e6
        }
    }
    /// The time-weighted mean number of packets waiting over the bin (links).
    pub fn mean_queue_packets(&self) -> f64 {
        if self.length.0 == 0 { 0.0 } else { self.counters.queue_packet_ns as f64 / self.length.0 as f64 }
    }
    /// The time-weighted mean of bytes waiting over the bin (links).
    pub fn mean_queue_bytes(&self) -> f64 {
        if self.length.0 == 0 { 0.0 } else { self.counters.queue_byte_ns as f64 / self.length.0 as f64 }
    }
    /// Split bearers: the mean time the SDUs delivered in the bin waited in the reordering
    /// buffer, ms; `None` when none was delivered.
    pub fn mean_reorder_delay_ms(&self) -> Option<f64> {
        let n = self.counters.packets_delivered;
        (n > 0).then(|| self.counters.reorder_delay_ns as f64 / n as f64 / 1e6)
    }
}

impl BinnedRecorder {
    /// A recorder for `flows` flows and `links` link directions with bins `bin` wide.
    pub fn new(bin: Dur, flows: usize, links: usize) -> BinnedRecorder {
        assert!(bin.0 > 0, "bin width must be positive");
        BinnedRecorder {
            bin,
            flows: vec![Series::default(); flows],
            links: vec![Series::default(); links],
            path_start: vec![0; flows + 1],
            paths: Vec::new(),
            legs: Vec::new(),
            bearers: Vec::new(),
        }
    }

    /// Keeps a series per path for flow `f`'s `paths[f]` paths (0: none; calls about its paths
    /// are ignored). `paths` has one entry per flow.
    pub fn with_paths(mut self, paths: &[usize]) -> BinnedRecorder {
        assert_eq!(paths.len(), self.flows.len(), "one path count per flow");
        self.path_start = std::iter::once(0).chain(paths.iter().scan(0, |acc, n| { *acc += n; Some(*acc) })).collect();
        self.paths = vec![Series::default(); self.path_start[self.flows.len()]];
        self
    }

    /// Keeps a series per split bearer and per leg of each, for `bearers` bearers.
    pub fn with_bearers(mut self, bearers: usize) -> BinnedRecorder {
        self.legs = vec![Series::default(); 2 * bearers];
        self.bearers = vec![Series::default(); bearers];
        self
    }

    /// The bins' width.
    pub fn bin_width(&self) -> Dur {
        self.bin
    }

    fn index(&self, t: Time) -> usize {
        (t.0 / self.bin.0) as usize
    }

    /// What flow `flow` did over the whole run.
    pub fn flow_total(&self, flow: FlowId) -> &Counters {
        &self.flows[flow.0 as usize].total
    }

    /// What link direction `link` did over the whole run.
    pub fn link_total(&self, link: LinkId) -> &Counters {
        &self.links[link.0 as usize].total
    }

    /// The number of path series of `flow` (0 unless asked for with [`Self::with_paths`]).
    pub fn path_count(&self, flow: FlowId) -> usize {
        let f = flow.0 as usize;
        self.path_start[f + 1] - self.path_start[f]
    }

    /// Totals of one path of a multipath flow; `None` for a flow with fewer paths.
    pub fn path_total(&self, flow: FlowId, path: u8) -> Option<&Counters> {
        self.path_index(flow, path).map(|i| &self.paths[i].total)
    }

    /// Totals of one leg (0 or 1) of a split bearer.
    pub fn leg_total(&self, bearer: BearerId, leg: u8) -> &Counters {
        &self.legs[2 * bearer.0 as usize + leg as usize].total
    }

    /// Totals of a split bearer's receiving entity.
    pub fn bearer_total(&self, bearer: BearerId) -> &Counters {
        &self.bearers[bearer.0 as usize].total
    }

    fn path_index(&self, flow: FlowId, path: u8) -> Option<usize> {
        let f = flow.0 as usize;
        let i = self.path_start[f] + path as usize;
        (i < self.path_start[f + 1]).then_some(i)
    }

    fn path_mut(&mut self, flow: FlowId, path: u8) -> Option<&mut Series> {
        self.path_index(flow, path).map(|i| &mut self.paths[i])
    }

    /// The bin in which flow `flow` delivered the most bytes, and those bytes (the first such
    /// bin on a tie); `None` when it delivered nothing.
    pub fn flow_peak_bin(&self, flow: FlowId) -> Option<(usize, u64)> {
        let bins = &self.flows[flow.0 as usize].bins;
        let (i, c) = bins.iter().enumerate().rev().max_by_key(|(_, c)| c.bytes_delivered)?;
        (c.bytes_delivered > 0).then_some((i, c.bytes_delivered))
    }

    /// The bytes flow `flow` delivered in its bins from `first` on.
    pub fn flow_bytes_from_bin(&self, flow: FlowId, first: usize) -> u64 {
        self.flows[flow.0 as usize].bins.iter().skip(first).map(|c| c.bytes_delivered).sum()
    }

    /// Closes the run at `end`: integrates queues (and reordering buffers) up to it and
    /// returns, per series, its bins covering [0, end).
    pub fn finish(&mut self, end: Time) -> Finished {
        let bin = self.bin.0;
        // Links' queues come integrated (`link_queue_bin`); bearers' buffers are integrated here.
        for s in &mut self.bearers {
            s.integrate_queue(bin, end);
        }
        let rows = |s: &Series| s.rows(self.bin, end);
        Finished {
            flows: self.flows.iter().map(rows).collect(),
            links: self.links.iter().map(rows).collect(),
            paths: self.path_start.windows(2).map(|w| self.paths[w[0]..w[1]].iter().map(rows).collect()).collect(),
            legs: self.legs.chunks(2).map(|pair| [rows(&pair[0]), rows(&pair[1])]).collect(),
            bearers: self.bearers.iter().map(rows).collect(),
        }
    }

    /// As [`Self::finish`], but the rows are made only when asked for, one series at a time
    /// ([`PendingRows::rows`]), and each series' bins are freed then: a run with many series
    /// keeps most of its memory in its bins, and the rows (larger) replace them one series at
    /// a time instead of all at once. The totals stay in the recorder; the bins do not
    /// ([`Self::flow_peak_bin`] and the like then see none).
    pub fn take_series(&mut self, end: Time) -> Finished<PendingRows> {
        let bin = self.bin.0;
        // Links' queues come integrated (`link_queue_bin`); bearers' buffers are integrated here.
        for s in &mut self.bearers {
            s.integrate_queue(bin, end);
        }
        let width = self.bin;
        let take = |s: &mut Series| PendingRows { bins: std::mem::take(&mut s.bins), bin: width, end };
        let flows = self.flows.iter_mut().map(take).collect();
        let links = self.links.iter_mut().map(take).collect();
        let mut paths = Vec::with_capacity(self.flows.len());
        for w in self.path_start.windows(2) {
            paths.push(self.paths[w[0]..w[1]].iter_mut().map(take).collect());
        }
        let mut legs = Vec::with_capacity(self.bearers.len());
        for pair in self.legs.chunks_mut(2) {
            let (first, second) = pair.split_at_mut(1);
            legs.push([take(&mut first[0]), take(&mut second[0])]);
        }
        let bearers = self.bearers.iter_mut().map(take).collect();
        Finished { flows, links, paths, legs, bearers }
    }
}

/// One series' bins taken out of the recorder ([`BinnedRecorder::take_series`]), made into
/// rows when asked.
#[derive(Debug, Clone)]
pub struct PendingRows {
    bins: Vec<Counters>,
    bin: Dur,
    end: Time,
}

impl PendingRows {
    /// The number of rows it will make.
    pub fn len(&self) -> usize {
        self.end.0.div_ceil(self.bin.0) as usize
    }

    /// Whether it will make none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes its bins take (freed by [`Self::rows`]).
    pub fn bin_bytes(&self) -> usize {
        self.bins.capacity() * std::mem::size_of::<Counters>()
    }

    /// Its rows, as [`BinnedRecorder::finish`] makes them; its bins are freed.
    pub fn rows(self) -> Vec<BinRow> {
        Series { bins: self.bins, ..Series::default() }.rows(self.bin, self.end)
    }
}

impl Recorder for BinnedRecorder {
    fn link_delivered(&mut self, now: Time, link: LinkId, bytes: u32) {
        let idx = self.index(now);
        self.links[link.0 as usize].delivered(idx, 1, bytes as u64);
    }

    fn link_dropped(&mut self, now: Time, link: LinkId, cause: DropCause, _bytes: u32) {
        let idx = self.index(now);
        self.links[link.0 as usize].dropped(idx, cause);
    }

    fn link_queue_bin(&mut self, link: LinkId, q: QueueBin) {
        let s = &mut self.links[link.0 as usize];
        let c = s.bin(q.bin as usize);
        c.queue_packet_ns += q.packet_ns;
        c.queue_byte_ns += q.byte_ns;
        s.total.queue_packet_ns += q.packet_ns;
        s.total.queue_byte_ns += q.byte_ns;
    }

    fn flow_sent(&mut self, now: Time, flow: FlowId, bytes: u32) {
        let idx = self.index(now);
        let s = &mut self.flows[flow.0 as usize];
        s.bin(idx).bytes_sent += bytes as u64;
        s.total.bytes_sent += bytes as u64;
    }

    fn flow_delivered(&mut self, now: Time, flow: FlowId, bytes: u64) {
        let idx = self.index(now);
        self.flows[flow.0 as usize].delivered(idx, 1, bytes);
    }

    fn flow_dropped(&mut self, now: Time, flow: FlowId, cause: DropCause, _bytes: u32, reverse: bool) {
        let idx = self.index(now);
        let s = &mut self.flows[flow.0 as usize];
        if reverse {
            s.dropped_reverse(idx, cause);
        } else {
            s.dropped(idx, cause);
        }
    }

    fn flow_transport(&mut self, now: Time, flow: FlowId, sample: &TransportSample) {
        let idx = self.index(now);
        self.flows[flow.0 as usize].transport(idx, sample);
    }

    fn path_delivered(&mut self, now: Time, flow: FlowId, path: u8, bytes: u32) {
        let idx = self.index(now);
        if let Some(s) = self.path_mut(flow, path) {
            s.delivered(idx, 1, bytes as u64);
        }
    }

    fn path_dropped(&mut self, now: Time, flow: FlowId, path: u8, cause: DropCause, _bytes: u32) {
        let idx = self.index(now);
        if let Some(s) = self.path_mut(flow, path) {
            s.dropped(idx, cause);
        }
    }

    fn path_transport(&mut self, now: Time, flow: FlowId, path: u8, sample: &TransportSample) {
        let idx = self.index(now);
        if let Some(s) = self.path_mut(flow, path) {
            s.transport(idx, sample);
        }
    }

    fn leg_delivered(&mut self, now: Time, bearer: BearerId, leg: u8, bytes: u32) {
        let idx = self.index(now);
        if let Some(s) = self.legs.get_mut(2 * bearer.0 as usize + leg as usize) {
            s.delivered(idx, 1, bytes as u64);
        }
    }

    fn leg_dropped(&mut self, now: Time, bearer: BearerId, leg: u8, cause: DropCause, _bytes: u32) {
        let idx = self.index(now);
        if let Some(s) = self.legs.get_mut(2 * bearer.0 as usize + leg as usize) {
            s.dropped(idx, cause);
        }
    }

    fn bearer_delivered(&mut self, now: Time, bearer: BearerId, sdus: u64, bytes: u64, reorder_delay: Dur) {
        let idx = self.index(now);
        if let Some(s) = self.bearers.get_mut(bearer.0 as usize) {
            s.delivered(idx, sdus, bytes);
            s.bin(idx).reorder_delay_ns += reorder_delay.0;
            s.total.reorder_delay_ns += reorder_delay.0;
        }
    }

    fn bearer_dropped(&mut self, now: Time, bearer: BearerId, cause: DropCause, _bytes: u32) {
        let idx = self.index(now);
        if let Some(s) = self.bearers.get_mut(bearer.0 as usize) {
            s.dropped(idx, cause);
        }
    }

    fn bearer_buffer(&mut self, now: Time, bearer: BearerId, pdus: u32) {
        let bin = self.bin.0;
        if let Some(s) = self.bearers.get_mut(bearer.0 as usize) {
            s.integrate_queue(bin, now);
            s.queue_packets = pdus;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn jain_of_equal_shares_is_one_and_of_a_monopoly_is_one_over_n() {
        assert_eq!(jain_index(&[5.0, 5.0, 5.0]), Some(1.0));
        assert!((jain_index(&[9.0, 0.0, 0.0]).unwrap() - 1.0 / 3.0).abs() < 1e-12);
        assert!((jain_index(&[1.0, 3.0]).unwrap() - 0.8).abs() < 1e-12);
        assert_eq!(jain_index(&[]), None);
        assert_eq!(jain_index(&[0.0, 0.0]), None);
    }

    proptest! {
        #[test]
        fn jain_lies_between_one_over_n_and_one(xs in prop::collection::vec(0.0f64..1e6, 1..20)) {
            if let Some(j) = jain_index(&xs) {
                let n = xs.len() as f64;
                prop_assert!(j <= 1.0 + 1e-12 && j >= 1.0 / n - 1e-12);
            }
        }

        #[test]
        fn bins_add_up_to_totals(events in prop::collection::vec((0u64..10_000_000_000, 1u32..1500), 1..300)) {
            let mut r = BinnedRecorder::new(Dur::from_millis(100), 1, 1);
            let mut sorted = events.clone();
            sorted.sort();
            for (t, b) in &sorted {
                r.flow_delivered(Time(*t), FlowId(0), *b as u64);
                r.link_delivered(Time(*t), LinkId(0), *b);
            }
            let total = r.flow_total(FlowId(0)).bytes_delivered;
            let Finished { flows, links, .. } = r.finish(Time(10_000_000_000));
            prop_assert_eq!(flows[0].iter().map(|b| b.counters.bytes_delivered).sum::<u64>(), total);
            prop_assert_eq!(links[0].iter().map(|b| b.counters.bytes_delivered).sum::<u64>(), total);
            prop_assert_eq!(flows[0].len(), 100);
        }
    }

    #[test]
    fn a_flows_drops_are_split_by_direction() {
        let mut r = BinnedRecorder::new(Dur::from_millis(100), 1, 0);
        r.flow_dropped(Time(1), FlowId(0), DropCause::Queue, 1500, false);
        r.flow_dropped(Time(2), FlowId(0), DropCause::Queue, 52, true);
        r.flow_dropped(Time(150_000_000), FlowId(0), DropCause::Queue, 52, true);
        r.flow_dropped(Time(3), FlowId(0), DropCause::RandomLoss, 52, true);
        let t = r.flow_total(FlowId(0));
        assert_eq!((t.drops_by(DropCause::Queue), t.data_drops_by(DropCause::Queue), t.reverse_drops_by(DropCause::Queue)), (3, 1, 2));
        assert_eq!((t.data_drops_by(DropCause::RandomLoss), t.reverse_drops_by(DropCause::RandomLoss)), (0, 1));
        let rows = r.finish(Time(200_000_000));
        assert_eq!(rows.flows[0][0].counters.reverse_drops_by(DropCause::Queue), 1);
        assert_eq!(rows.flows[0][1].counters.reverse_drops_by(DropCause::Queue), 1);
    }

    #[test]
    fn queue_mean_is_time_weighted_across_bins() {
        let mut r = BinnedRecorder::new(Dur::from_millis(100), 0, 1);
        // 10 packets from 50 ms to 150 ms, then empty, as the link's meter integrates it.
        let mut meter = multiconn_core::QueueMeter::new(Dur::from_millis(100));
        meter.change(Time::ZERO, 0, 0);
        meter.change(Time(50_000_000), 10, 15_000);
        meter.change(Time(150_000_000), 0, 0);
        meter.close(Time(250_000_000));
        let mut bins = Vec::new();
        meter.take_closed(&mut bins);
        for q in bins {
            r.link_queue_bin(LinkId(0), q);
        }
        let links = r.finish(Time(250_000_000)).links;
        let means: Vec<f64> = links[0].iter().map(|b| b.mean_queue_packets()).collect();
        assert_eq!(means, vec![5.0, 5.0, 0.0]);
        assert_eq!(links[0][2].length, Dur::from_millis(50));
        assert_eq!(links[0][0].mean_queue_bytes(), 7500.0);
    }

    #[test]
    fn transport_state_is_the_last_in_its_bin_and_carries_over_empty_bins() {
        let mut r = BinnedRecorder::new(Dur::from_millis(100), 1, 0);
        let at = |cwnd| TransportSample { cwnd, ..Default::default() };
        r.flow_transport(Time(10_000_000), FlowId(0), &at(10));
        r.flow_transport(Time(90_000_000), FlowId(0), &at(20));
        r.flow_transport(Time(310_000_000), FlowId(0), &at(40));
        let flows = r.finish(Time(400_000_000)).flows;
        let cwnds: Vec<u64> = flows[0].iter().map(|b| b.counters.transport.unwrap().cwnd).collect();
        assert_eq!(cwnds, vec![20, 20, 20, 40]);
        assert_eq!(r.flow_total(FlowId(0)).transport.unwrap().cwnd, 40);
    }

    #[test]
    fn path_series_exist_only_for_the_flows_given_paths() {
        let mut r = BinnedRecorder::new(Dur::from_millis(100), 2, 0).with_paths(&[0, 2]);
        r.path_delivered(Time(10_000_000), FlowId(0), 0, 1000);
        r.path_delivered(Time(10_000_000), FlowId(1), 0, 1000);
        r.path_delivered(Time(150_000_000), FlowId(1), 1, 500);
        r.path_delivered(Time(150_000_000), FlowId(1), 2, 500);
        r.path_dropped(Time(20_000_000), FlowId(1), 1, DropCause::Queue, 1500);
        r.path_transport(Time(30_000_000), FlowId(1), 1, &TransportSample { cwnd: 7, ..Default::default() });
        assert_eq!((r.path_count(FlowId(0)), r.path_count(FlowId(1))), (0, 2));
        assert!(r.path_total(FlowId(0), 0).is_none());
        assert_eq!(r.path_total(FlowId(1), 1).unwrap().bytes_delivered, 500);
        let rows = r.finish(Time(200_000_000));
        assert!(rows.paths[0].is_empty());
        let [p0, p1] = [&rows.paths[1][0], &rows.paths[1][1]];
        assert_eq!(p0.iter().map(|b| b.counters.bytes_delivered).collect::<Vec<_>>(), vec![1000, 0]);
        assert_eq!(p1.iter().map(|b| b.counters.bytes_delivered).collect::<Vec<_>>(), vec![0, 500]);
        assert_eq!(p1[0].counters.drops_by(DropCause::Queue), 1);
        // The sender's state carries over to the next bin, as a flow's does.
        assert_eq!(p1[1].counters.transport.unwrap().cwnd, 7);
        assert_eq!(p0[1].counters.transport, None);
    }

    #[test]
    fn bearer_series_keep_legs_reordering_delay_and_the_buffer() {
        let mut r = BinnedRecorder::new(Dur::from_millis(100), 1, 0).with_bearers(2);
        let b = BearerId(1);
        r.leg_delivered(Time(10_000_000), b, 0, 100);
        r.leg_delivered(Time(20_000_000), b, 1, 200);
        r.leg_dropped(Time(20_000_000), b, 1, DropCause::RandomLoss, 200);
        r.bearer_delivered(Time(20_000_000), b, 2, 250, Dur::from_millis(30));
        r.bearer_delivered(Time(40_000_000), b, 1, 100, Dur::ZERO);
        r.bearer_dropped(Time(120_000_000), b, DropCause::PdcpLate, 100);
        // 4 PDUs held from 50 ms to 150 ms.
        r.bearer_buffer(Time(50_000_000), b, 4);
        r.bearer_buffer(Time(150_000_000), b, 0);
        assert_eq!(r.leg_total(b, 1).bytes_delivered, 200);
        assert_eq!(r.bearer_total(b).reorder_delay_ns, 30_000_000);
        let rows = r.finish(Time(200_000_000));
        assert_eq!(rows.legs.len(), 2);
        assert_eq!(rows.legs[1][0][0].counters.bytes_delivered, 100);
        assert_eq!(rows.legs[1][1][0].counters.drops_by(DropCause::RandomLoss), 1);
        let bearer = &rows.bearers[1];
        assert_eq!(bearer[0].counters.bytes_delivered, 350);
        assert_eq!(bearer[0].mean_reorder_delay_ms(), Some(10.0));
        assert_eq!(bearer[1].mean_reorder_delay_ms(), None);
        assert_eq!(bearer[1].counters.drops_by(DropCause::PdcpLate), 1);
        assert_eq!(bearer.iter().map(BinRow::mean_queue_packets).collect::<Vec<_>>(), vec![2.0, 2.0]);
        assert!(rows.bearers[0].iter().all(|b| b.counters == Counters::default()));
    }

    #[test]
    fn taken_series_make_the_rows_finish_makes_and_free_the_bins() {
        let record = || {
            let mut r = BinnedRecorder::new(Dur::from_millis(100), 2, 2).with_paths(&[0, 2]).with_bearers(1);
            r.flow_delivered(Time(120_000_000), FlowId(1), 12_500);
            r.link_queue_bin(LinkId(1), QueueBin { bin: 0, packet_ns: 3 * 90_000_000, byte_ns: 4500 * 90_000_000 });
            r.path_delivered(Time(150_000_000), FlowId(1), 1, 500);
            r.path_transport(Time(30_000_000), FlowId(1), 1, &TransportSample { cwnd: 7, ..Default::default() });
            r.leg_delivered(Time(10_000_000), BearerId(0), 1, 100);
            r.bearer_buffer(Time(50_000_000), BearerId(0), 4);
            r
        };
        let end = Time(250_000_000);
        let expected = record().finish(end);
        let mut r = record();
        let taken = r.take_series(end);
        assert!(r.flows.iter().chain(&r.links).all(|s| s.bins.capacity() == 0));
        assert_eq!(r.flow_total(FlowId(1)).bytes_delivered, 12_500, "the totals stay");
        assert!(taken.flows.iter().all(|p| p.len() == 3));
        let rows = |series: Vec<PendingRows>| series.into_iter().map(PendingRows::rows).collect::<Vec<_>>();
        assert_eq!(rows(taken.flows), expected.flows);
        assert_eq!(rows(taken.links), expected.links);
        assert_eq!(taken.paths.into_iter().map(rows).collect::<Vec<_>>(), expected.paths);
        assert_eq!(taken.legs.into_iter().map(|[a, b]| [a.rows(), b.rows()]).collect::<Vec<_>>(), expected.legs);
        assert_eq!(rows(taken.bearers), expected.bearers);
    }

    #[test]
    fn throughput_uses_the_actual_length_of_a_short_last_bin() {
        let mut r = BinnedRecorder::new(Dur::from_millis(100), 1, 0);
        r.flow_delivered(Time(120_000_000), FlowId(0), 12_500);
        let flows = r.finish(Time(150_000_000)).flows;
        assert_eq!(flows[0].len(), 2);
        assert!((flows[0][1].throughput_mbps() - 2.0).abs() < 1e-12);
    }
}
