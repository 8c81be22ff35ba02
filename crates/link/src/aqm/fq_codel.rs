//! FQ-CoDel (RFC 8290): flow queues served by deficit round robin, CoDel on each.
//!
//! A packet's flow queue is chosen by hashing what stands for its 5-tuple here: its flow,
//! its path (a multipath subflow) and its direction on the flow's routes (data or ACKs), so
//! as with a real hash, distinct flows may share a queue when there are more flows than
//! queues. New flows are served first (the sparse-flow optimisation, §4.1–§4.2): a queue that
//! becomes active goes to the tail of the new list with one quantum of credit; when it runs
//! out of credit it moves to the old list; a new queue found empty moves to the old list
//! (so it cannot stay "new" forever), an old queue found empty leaves the lists. Above the
//! packet limit, packets are dropped from the head of the queue with the most bytes, at most
//! `drop_batch` packets or half its bytes at once, as Linux `fq_codel_drop` does (§4.1.3).

use multiconn_core::{Packet, Time};

use super::codel::{codel_dequeue, CodelParams, CodelVars};
use multiconn_core::units::QueueLimit;

use super::{within, AqmStats, Fifo, Qdisc};

/// FQ-CoDel's parameters (RFC 8290 §4–§5, Linux defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FqCodelParams {
    /// CoDel's parameters, applied to each flow queue.
    pub codel: CodelParams,
    /// The DRR quantum in bytes (one MTU plus the link header: 1514).
    pub quantum: u32,
    /// How many flow queues (1024).
    pub flows: u32,
    /// At most this many packets dropped at once from the fattest queue on overflow (64).
    pub drop_batch: u32,
}

impl Default for FqCodelParams {
    fn default() -> FqCodelParams {
        FqCodelParams { codel: CodelParams { ecn: true, ..CodelParams::default() }, quantum: 1514, flows: 1024, drop_batch: 64 }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

struct FlowQueue {
    fifo: Fifo,
    vars: CodelVars,
    credits: i64,
    list: List,
}

/// Flow queues with DRR and per-queue CoDel (Linux `fq_codel`).
pub struct FqCodel {
    params: FqCodelParams,
    queues: Vec<FlowQueue>,
    new_flows: std::collections::VecDeque<usize>,
    old_flows: std::collections::VecDeque<usize>,
    packets: u64,
    bytes: u64,
    limit: QueueLimit,
    stats: AqmStats,
}

/// The flow queue of a packet: a mix of its flow, path and route, modulo the queue count.
pub fn flow_queue_index(pkt: &Packet, flows: u32) -> usize {
    // SplitMix64's finalizer: fixed, so a scenario maps flows to queues the same way every run.
    let mut z = (u64::from(pkt.flow.0) << 24) ^ (u64::from(pkt.path) << 16) ^ u64::from(pkt.route);
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z % u64::from(flows.max(1))) as usize
}

impl FqCodel {
    /// An empty FQ-CoDel whose waiting packets in all are bounded by `limit`.
    pub fn new(params: FqCodelParams, limit: QueueLimit) -> FqCodel {
        let queues = (0..params.flows.max(1))
            .map(|_| FlowQueue { fifo: Fifo::default(), vars: CodelVars::default(), credits: 0, list: List::None })
            .collect();
        FqCodel {
            params,
            queues,
            new_flows: Default::default(),
            old_flows: Default::default(),
            packets: 0,
            bytes: 0,
            limit,
            stats: AqmStats::default(),
        }
    }

    /// Packets waiting in flow queue `i`.
    pub fn queue_len(&self, i: usize) -> usize {
        self.queues[i].fifo.len()
    }

    /// Drops from the head of the queue with the most bytes (RFC 8290 §4.1.3): up to
    /// `drop_batch` packets or half its bytes.
    fn drop_from_fattest(&mut self, dropped: &mut Vec<Packet>) {
        let Some(fattest) = (0..self.queues.len()).max_by_key(|&i| (self.queues[i].fifo.bytes(), std::cmp::Reverse(i))) else {
            return;
        };
        let q = &mut self.queues[fattest];
        let threshold = q.fifo.bytes() / 2;
        let mut freed = 0u64;
        let mut n = 0;
        while let Some((pkt, _)) = q.fifo.pop() {
            freed += u64::from(pkt.size);
            self.packets -= 1;
            self.bytes -= u64::from(pkt.size);
            self.stats.overflow_drops += 1;
            dropped.push(pkt);
            n += 1;
            if n >= self.params.drop_batch.max(1) || freed >= threshold {
                break;
            }
        }
    }
}

impl Qdisc for FqCodel {
    fn enqueue(&mut self, now: Time, pkt: Packet, dropped: &mut Vec<Packet>) -> Result<(), Packet> {
        let i = flow_queue_index(&pkt, self.params.flows);
        let pkt_size = pkt.size;
        let size = u64::from(pkt_size);
        let q = &mut self.queues[i];
        q.fifo.push(pkt, now);
        if q.list == List::None {
            q.list = List::New;
            q.credits = i64::from(self.params.quantum);
            self.new_flows.push_back(i);
        }
        let over = !within(self.limit, self.packets, self.bytes, pkt_size);
        self.packets += 1;
        self.bytes += size;
        if over {
            self.drop_from_fattest(dropped);
        }
        Ok(())
    }

    fn dequeue(&mut self, now: Time, dropped: &mut Vec<Packet>) -> Option<Packet> {
        loop {
            let (i, from_new) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&i), _) => (i, true),
                (None, Some(&i)) => (i, false),
                (None, None) => return None,
            };
            let quantum = i64::from(self.params.quantum);
            let q = &mut self.queues[i];
            if q.credits <= 0 {
                q.credits += quantum;
                q.list = List::Old;
                if from_new {
                    self.new_flows.pop_front();
                } else {
                    self.old_flows.pop_front();
                }
                self.old_flows.push_back(i);
                continue;
            }
            let before = (q.fifo.len(), q.fifo.bytes());
            let got = codel_dequeue(&mut q.vars, &self.params.codel, now, &mut q.fifo, dropped, &mut self.stats);
            let after = (q.fifo.len(), q.fifo.bytes());
            self.packets -= (before.0 - after.0) as u64;
            self.bytes -= before.1 - after.1;
            match got {
                Some(pkt) => {
                    q.credits -= i64::from(pkt.size);
                    return Some(pkt);
                }
                None => {
                    if from_new {
                        self.new_flows.pop_front();
                        // An emptied new queue goes to the old list so it cannot come back as new
                        // at once (RFC 8290 §4.2).
                        if self.old_flows.is_empty() {
                            q.list = List::None;
                        } else {
                            q.list = List::Old;
                            self.old_flows.push_back(i);
                        }
                    } else {
                        self.old_flows.pop_front();
                        q.list = List::None;
                    }
                }
            }
        }
    }

    fn packets(&self) -> u64 {
        self.packets
    }
    fn bytes(&self) -> u64 {
        self.bytes
    }
    fn has_room(&self, size: u32) -> bool {
        within(self.limit, self.packets, self.bytes, size)
    }
    fn drain(&mut self, out: &mut Vec<Packet>) {
        for q in &mut self.queues {
            q.fifo.drain(out);
            q.list = List::None;
        }
        self.new_flows.clear();
        self.old_flows.clear();
        self.packets = 0;
        self.bytes = 0;
    }
    fn discard(&mut self, discard: &mut dyn FnMut(&Packet) -> bool, out: &mut Vec<Packet>) {
        let start = out.len();
        for q in &mut self.queues {
            q.fifo.discard(discard, out);
        }
        for pkt in &out[start..] {
            self.packets -= 1;
            self.bytes -= u64::from(pkt.size);
        }
    }
    fn stats(&self) -> AqmStats {
        self.stats
    }
}
