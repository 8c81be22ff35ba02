//! multiconn-metrics: turns the [`Recorder`] stream into time series and totals.
//!
//! [`BinnedRecorder`] keeps, for every flow and every link direction, fixed-width time bins
//! (default 100 ms) of delivered bytes and drops by cause, and for links the time-weighted
//! mean queue length in each bin. Totals are kept alongside. [`jain_index`] is Jain's fairness
//! index (Jain, Chiu and Hawe, DEC-TR-301, 1984).

use multiconn_core::{DropCause, Dur, FlowId, LinkId, Recorder, Time, TransportSample};

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

/// Counters of one entity (flow or link direction) over one bin or over the whole run.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counters {
    /// Bytes delivered: a flow's payload (goodput), a link's bytes on the wire.
    pub bytes_delivered: u64,
    /// Packets delivered.
    pub packets_delivered: u64,
    /// Flows: bytes the sender put on the network, headers included.
    pub bytes_sent: u64,
    /// Packets dropped, by cause in the order of [`DropCause::ALL`].
    pub drops: [u64; DropCause::ALL.len()],
    /// ∫ queue packets dt and ∫ queue bytes dt over the bin, in packet·ns and byte·ns.
    pub queue_packet_ns: u128,
    /// See `queue_packet_ns`.
    pub queue_byte_ns: u128,
    /// Transport flows: the sender's state at the last event in the bin (carried over from
    /// earlier bins when nothing happened in this one).
    pub transport: Option<TransportSample>,
}

impl Counters {
    /// Packets dropped for `cause`.
    pub fn drops_by(&self, cause: DropCause) -> u64 {
        self.drops[cause_index(cause)]
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
    /// Queue state since `queue_since` (links only).
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
}

/// Records into fixed-width bins.
#[derive(Debug, Clone)]
pub struct BinnedRecorder {
    bin: Dur,
    flows: Vec<Series>,
    links: Vec<Series>,
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
}

impl BinnedRecorder {
    /// A recorder for `flows` flows and `links` link directions with bins `bin` wide.
    pub fn new(bin: Dur, flows: usize, links: usize) -> BinnedRecorder {
        assert!(bin.0 > 0, "bin width must be positive");
        BinnedRecorder { bin, flows: vec![Series::default(); flows], links: vec![Series::default(); links] }
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

    /// Integrates a link's queue length from its last change up to `now`, bin by bin.
    fn integrate_queue(&mut self, link: usize, now: Time) {
        let bin = self.bin.0;
        let s = &mut self.links[link];
        let (pkts, bytes) = (s.queue_packets as u128, s.queue_bytes as u128);
        let mut t = s.queue_since.0;
        if pkts > 0 || bytes > 0 {
            while t < now.0 {
                let idx = (t / bin) as usize;
                let bin_end = (idx as u64 + 1) * bin;
                let until = bin_end.min(now.0);
                let dt = (until - t) as u128;
                let c = s.bin(idx);
                c.queue_packet_ns += pkts * dt;
                c.queue_byte_ns += bytes * dt;
                s.total.queue_packet_ns += pkts * dt;
                s.total.queue_byte_ns += bytes * dt;
                t = until;
            }
        }
        s.queue_since = s.queue_since.max(now);
    }

    /// Closes the run at `end`: integrates queues up to it and returns, per entity, its bins
    /// covering [0, end).
    pub fn finish(&mut self, end: Time) -> (Vec<Vec<BinRow>>, Vec<Vec<BinRow>>) {
        for l in 0..self.links.len() {
            self.integrate_queue(l, end);
        }
        let n_bins = (end.0.div_ceil(self.bin.0)) as usize;
        let rows = |s: &Series| -> Vec<BinRow> {
            let mut carried: Option<TransportSample> = None;
            (0..n_bins)
                .map(|i| {
                    let start = Time(i as u64 * self.bin.0);
                    let stop = Time(((i as u64 + 1) * self.bin.0).min(end.0));
                    let mut counters = s.bins.get(i).copied().unwrap_or_default();
                    match counters.transport {
                        Some(t) => carried = Some(t),
                        None => counters.transport = carried,
                    }
                    BinRow { start, length: stop - start, counters }
                })
                .collect()
        };
        (self.flows.iter().map(rows).collect(), self.links.iter().map(rows).collect())
    }
}

impl Recorder for BinnedRecorder {
    fn link_delivered(&mut self, now: Time, link: LinkId, bytes: u32) {
        let idx = self.index(now);
        let s = &mut self.links[link.0 as usize];
        let c = s.bin(idx);
        c.bytes_delivered += bytes as u64;
        c.packets_delivered += 1;
        s.total.bytes_delivered += bytes as u64;
        s.total.packets_delivered += 1;
    }

    fn link_dropped(&mut self, now: Time, link: LinkId, cause: DropCause, _bytes: u32) {
        let idx = self.index(now);
        let s = &mut self.links[link.0 as usize];
        s.bin(idx).drops[cause_index(cause)] += 1;
        s.total.drops[cause_index(cause)] += 1;
    }

    fn link_queue(&mut self, now: Time, link: LinkId, packets: u32, bytes: u64) {
        let l = link.0 as usize;
        self.integrate_queue(l, now);
        let s = &mut self.links[l];
        s.queue_packets = packets;
        s.queue_bytes = bytes;
    }

    fn flow_sent(&mut self, now: Time, flow: FlowId, bytes: u32) {
        let idx = self.index(now);
        let s = &mut self.flows[flow.0 as usize];
        s.bin(idx).bytes_sent += bytes as u64;
        s.total.bytes_sent += bytes as u64;
    }

    fn flow_delivered(&mut self, now: Time, flow: FlowId, bytes: u64) {
        let idx = self.index(now);
        let s = &mut self.flows[flow.0 as usize];
        let c = s.bin(idx);
        c.bytes_delivered += bytes;
        c.packets_delivered += 1;
        s.total.bytes_delivered += bytes;
        s.total.packets_delivered += 1;
    }

    fn flow_dropped(&mut self, now: Time, flow: FlowId, cause: DropCause, _bytes: u32) {
        let idx = self.index(now);
        let s = &mut self.flows[flow.0 as usize];
        s.bin(idx).drops[cause_index(cause)] += 1;
        s.total.drops[cause_index(cause)] += 1;
    }

    fn flow_transport(&mut self, now: Time, flow: FlowId, sample: &TransportSample) {
        let idx = self.index(now);
        let s = &mut self.flows[flow.0 as usize];
        s.bin(idx).transport = Some(*sample);
        s.total.transport = Some(*sample);
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
            let (flows, links) = r.finish(Time(10_000_000_000));
            prop_assert_eq!(flows[0].iter().map(|b| b.counters.bytes_delivered).sum::<u64>(), total);
            prop_assert_eq!(links[0].iter().map(|b| b.counters.bytes_delivered).sum::<u64>(), total);
            prop_assert_eq!(flows[0].len(), 100);
        }
    }

    #[test]
    fn queue_mean_is_time_weighted_across_bins() {
        let mut r = BinnedRecorder::new(Dur::from_millis(100), 0, 1);
        // 10 packets from 50 ms to 150 ms, then empty.
        r.link_queue(Time::ZERO, LinkId(0), 0, 0);
        r.link_queue(Time(50_000_000), LinkId(0), 10, 15_000);
        r.link_queue(Time(150_000_000), LinkId(0), 0, 0);
        let (_, links) = r.finish(Time(250_000_000));
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
        let (flows, _) = r.finish(Time(400_000_000));
        let cwnds: Vec<u64> = flows[0].iter().map(|b| b.counters.transport.unwrap().cwnd).collect();
        assert_eq!(cwnds, vec![20, 20, 20, 40]);
        assert_eq!(r.flow_total(FlowId(0)).transport.unwrap().cwnd, 40);
    }

    #[test]
    fn throughput_uses_the_actual_length_of_a_short_last_bin() {
        let mut r = BinnedRecorder::new(Dur::from_millis(100), 1, 0);
        r.flow_delivered(Time(120_000_000), FlowId(0), 12_500);
        let (flows, _) = r.finish(Time(150_000_000));
        assert_eq!(flows[0].len(), 2);
        assert!((flows[0][1].throughput_mbps() - 2.0).abs() < 1e-12);
    }
}
