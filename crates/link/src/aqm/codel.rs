//! CoDel, Controlled Delay (RFC 8289): the control law shared by the single-queue CoDel
//! discipline and each flow queue of FQ-CoDel.
//!
//! CoDel looks at the sojourn time of the packet it is about to send. Once the sojourn has
//! stayed at or above `target` (5 ms) for a whole `interval` (100 ms) it enters the dropping
//! state and drops (or, for an ECN-capable packet, marks) at intervals that shrink as
//! `interval / sqrt(count)` until the sojourn falls below the target again (RFC 8289 §4–§5,
//! following the pseudocode of §5.4–§5.5). A packet is never dropped while at most one MTU
//! waits behind it (`maxpacket`, §4.2). Marking instead of dropping follows Linux
//! `codel_dequeue`: the marked packet is sent and the control law advances as for a drop.

use multiconn_core::{Dur, Ecn, Packet, Time};

use multiconn_core::units::QueueLimit;

use super::{within, AqmStats, Fifo};

/// CoDel's parameters (RFC 8289 §4.3–§4.4).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CodelParams {
    /// The acceptable standing queue delay (RFC default 5 ms).
    pub target: Dur,
    /// The window over which the sojourn must stay above target before dropping starts, on
    /// the order of a worst-case RTT (RFC default 100 ms).
    pub interval: Dur,
    /// Bytes: no drop while at most this much waits after the packet (one MTU, §4.2).
    pub mtu: u32,
    /// Mark ECN-capable packets with CE instead of dropping them (RFC 8289 §5).
    pub ecn: bool,
}

impl Default for CodelParams {
    fn default() -> CodelParams {
        CodelParams { target: Dur::from_millis(5), interval: Dur::from_millis(100), mtu: 1500, ecn: false }
    }
}

/// CoDel's state variables (RFC 8289 §5.3).
#[derive(Debug, Clone, Default)]
pub struct CodelVars {
    /// When the sojourn first went above target, plus an interval; `None` while below.
    first_above_time: Option<Time>,
    /// When the next drop is due in the dropping state.
    drop_next: Time,
    /// Drops (and marks) since entering the dropping state.
    count: u32,
    /// `count` when the dropping state was last left.
    lastcount: u32,
    /// Whether CoDel is in the dropping state.
    dropping: bool,
}

impl CodelVars {
    /// Whether CoDel is in the dropping state.
    pub fn dropping(&self) -> bool {
        self.dropping
    }

    /// The drop count of the current (or last) dropping state.
    pub fn count(&self) -> u32 {
        self.count
    }
}

/// `t + interval / sqrt(count)` (RFC 8289 §5.5 `control_law`).
pub fn control_law(t: Time, interval: Dur, count: u32) -> Time {
    let step = interval.as_nanos() as f64 / f64::from(count.max(1)).sqrt();
    Time(t.as_nanos().saturating_add(step as u64))
}

/// One packet taken from the head and whether CoDel may drop it (RFC 8289 §5.4
/// `dodequeue`).
fn dodequeue(vars: &mut CodelVars, params: &CodelParams, now: Time, queue: &mut Fifo) -> Option<(Packet, bool)> {
    let Some((pkt, arrived)) = queue.pop() else {
        vars.first_above_time = None;
        return None;
    };
    let sojourn = now.since(arrived);
    let mut ok_to_drop = false;
    if sojourn < params.target || queue.bytes() <= u64::from(params.mtu) {
        vars.first_above_time = None;
    } else {
        match vars.first_above_time {
            None => vars.first_above_time = Some(now + params.interval),
            Some(first) if now >= first => ok_to_drop = true,
            Some(_) => {}
        }
    }
    Some((pkt, ok_to_drop))
}

/// Marks `pkt` with CE if ECN is on and it is ECN-capable; whether it did.
fn try_mark(params: &CodelParams, pkt: &mut Packet, stats: &mut AqmStats) -> bool {
    if params.ecn && pkt.ecn.is_capable() {
        pkt.ecn = Ecn::Ce;
        stats.marks += 1;
        true
    } else {
        false
    }
}

/// The packet to send from `queue` at `now`, after CoDel's drops (appended to `dropped`) and
/// marks (RFC 8289 §5.5 `dequeue`).
pub fn codel_dequeue(vars: &mut CodelVars, params: &CodelParams, now: Time, queue: &mut Fifo, dropped: &mut Vec<Packet>, stats: &mut AqmStats) -> Option<Packet> {
    let Some((mut pkt, mut ok_to_drop)) = dodequeue(vars, params, now, queue) else {
        // An empty queue takes CoDel out of the dropping state.
        vars.dropping = false;
        return None;
    };
    if vars.dropping {
        if !ok_to_drop {
            vars.dropping = false;
        }
        while vars.dropping && now >= vars.drop_next {
            vars.count += 1;
            if try_mark(params, &mut pkt, stats) {
                vars.drop_next = control_law(vars.drop_next, params.interval, vars.count);
                return Some(pkt);
            }
            stats.early_drops += 1;
            dropped.push(pkt);
            match dodequeue(vars, params, now, queue) {
                None => {
                    vars.dropping = false;
                    return None;
                }
                Some((next, next_ok)) => {
                    pkt = next;
                    ok_to_drop = next_ok;
                }
            }
            if ok_to_drop {
                vars.drop_next = control_law(vars.drop_next, params.interval, vars.count);
            } else {
                vars.dropping = false;
            }
        }
        return Some(pkt);
    }
    if ok_to_drop {
        let mut sent = Some(pkt);
        if !try_mark(params, sent.as_mut().expect("just set"), stats) {
            stats.early_drops += 1;
            dropped.push(sent.take().expect("just set"));
            sent = dodequeue(vars, params, now, queue).map(|(p, _)| p);
        }
        vars.dropping = true;
        // If the last dropping state ended recently, start at the drop rate it had reached
        // rather than from 1 (RFC 8289 §5.5).
        let delta = vars.count.saturating_sub(vars.lastcount);
        vars.count = 1;
        if delta > 1 && now < vars.drop_next + Dur(params.interval.as_nanos().saturating_mul(16)) {
            vars.count = delta;
        }
        vars.drop_next = control_law(now, params.interval, vars.count);
        vars.lastcount = vars.count;
        return sent;
    }
    Some(pkt)
}

/// A single FIFO under CoDel (Linux `codel`), tail-dropping above a packet limit.
pub struct Codel {
    params: CodelParams,
    vars: CodelVars,
    queue: Fifo,
    limit: QueueLimit,
    stats: AqmStats,
}

impl Codel {
    /// An empty CoDel queue whose waiting packets are bounded by `limit`.
    pub fn new(params: CodelParams, limit: QueueLimit) -> Codel {
        Codel { params, vars: CodelVars::default(), queue: Fifo::default(), limit, stats: AqmStats::default() }
    }

    /// The control law's state, for tests and series.
    pub fn vars(&self) -> &CodelVars {
        &self.vars
    }
}

impl super::Qdisc for Codel {
    fn enqueue(&mut self, now: Time, pkt: Packet, _dropped: &mut Vec<Packet>) -> Result<(), Packet> {
        if !within(self.limit, self.queue.len() as u64, self.queue.bytes(), pkt.size) {
            self.stats.tail_drops += 1;
            return Err(pkt);
        }
        self.queue.push(pkt, now);
        Ok(())
    }
    fn dequeue(&mut self, now: Time, dropped: &mut Vec<Packet>) -> Option<Packet> {
        codel_dequeue(&mut self.vars, &self.params, now, &mut self.queue, dropped, &mut self.stats)
    }
    super::single_fifo_qdisc_methods!(queue, limit);
}
