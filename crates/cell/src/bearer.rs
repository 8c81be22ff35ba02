//! One UE's radio bearer in one direction, as the cell drives it: the RLC entity pair (the
//! transmitting side at the sender, the receiving side at the other end) in unacknowledged
//! mode (TS 36.322 UM, [`crate::rlc`] and [`crate::rlc_rx`]) or acknowledged mode (TS 38.322
//! AM, [`crate::rlc_am`]), and the IP packets it holds by RLC SDU id ([`SduPackets`]).
//!
//! What a transport block carries is a [`Payload`]: one UMD PDU (numbered, for the UM
//! receiver's reordering) or the AMD PDUs MAC multiplexed into it.
//!
//! **AM's STATUS PDUs** travel the other direction of the same UE as a MAC control element
//! decoded without error: a report built at the end of slot n reaches the transmitter at the
//! end of the first slot after n that can carry the reverse direction's data (LTE: the next
//! TTI; NR TDD: the next U slot for a downlink bearer, the next slot with PDSCH for an uplink
//! one) — it takes no grant bytes (a few bytes beside a TB's tens of thousands). ns-3 LENA
//! carries its RLC status reports as ideal control messages too. A transmitter that gives an
//! SDU up after maxRetxThreshold retransmissions has hit a radio link failure in RRC's terms;
//! both ends are then re-established (the SDUs in the transmitter discarded, the receiver
//! reset), as RRC would after recovering the link, and those packets are dropped with the
//! cause `rlc_max_retx`.
//!
//! With L4S marking on ([`crate::l4s`]), the bearer's marker sees every SDU queued and every
//! first byte of an SDU handed to MAC (new data only: an ARQ retransmission is not a dequeue).

use std::collections::VecDeque;

use multiconn_core::{Ecn, Packet};

use crate::error::CellError;
use crate::l4s::L4sMarker;
use crate::rlc::{RlcBufferStatus, UmPdu, UmTxBuffer};
use crate::rlc_am::{AmConfig, AmPdu, AmRx, AmStatus, AmTx};
use crate::rlc_rx::UmReceiver;
use crate::sdus::SduPackets;

/// The RLC mode of a cell's bearers.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum RlcMode {
    /// Unacknowledged mode (TS 36.322 §5.1.2): reordering with t-Reordering, no repair.
    #[default]
    Um,
    /// Acknowledged mode (TS 38.322 §5.2.3, §5.3): ARQ with status reports. The transmission
    /// buffer's capacity is the cell's `rlc_buffer_bytes`.
    Am(AmConfig),
}

impl RlcMode {
    /// Every mode by its name in scenarios.
    pub const NAMES: [&'static str; 2] = ["um", "am"];
}

/// What a transport block carries.
#[derive(Clone, Debug)]
pub enum Payload {
    /// One UMD PDU, numbered in the order the transmitter built them.
    Um(u64, UmPdu),
    /// The AMD PDUs multiplexed into the TB.
    Am(Vec<AmPdu>),
}

// A cell holds two bearers per UE and the UM pair is the common case: it stays inline.
#[allow(clippy::large_enum_variant)]
enum Rlc {
    Um { tx: UmTxBuffer, rx: UmReceiver, next_seq: u64 },
    Am { tx: Box<AmTx>, rx: Box<AmRx> },
}

/// A bearer: its RLC entities, the packets it holds and AM's status reports on their way.
pub(crate) struct Bearer {
    rlc: Rlc,
    /// Packets in the cell by SDU id.
    pub(crate) packets: SduPackets,
    /// AM: status reports on their way to the transmitter, with the slot at whose end each
    /// arrives.
    statuses: Vec<(u64, AmStatus)>,
    /// Scratch for the SDU ids a status acknowledged.
    acked: Vec<u64>,
    /// The PDCP SN each SDU still open carries, by SDU id (ascending), for the delivery status.
    pdcp_sns: VecDeque<(u64, u32)>,
    /// The PDCP SN of the newest SDU confirmed when `pdcp_sns` was last trimmed.
    confirmed_sn: Option<u32>,
    /// L4S marking on the transmission buffer, when the cell has it.
    pub(crate) l4s: Option<Box<L4sMarker>>,
}

impl Bearer {
    /// A bearer of `mode` with a transmission buffer of `capacity_bytes` and, in UM,
    /// t-Reordering of `t_reordering_us`.
    pub(crate) fn new(mode: RlcMode, capacity_bytes: u64, t_reordering_us: u64) -> Result<Bearer, CellError> {
        let rlc = match mode {
            RlcMode::Um => Rlc::Um { tx: UmTxBuffer::new(capacity_bytes)?, rx: UmReceiver::new(t_reordering_us), next_seq: 0 },
            RlcMode::Am(cfg) => {
                let cfg = AmConfig { capacity_bytes, ..cfg };
                Rlc::Am { tx: Box::new(AmTx::new(cfg)?), rx: Box::new(AmRx::new(cfg)?) }
            }
        };
        Ok(Bearer { rlc, packets: SduPackets::default(), statuses: Vec::new(), acked: Vec::new(), pdcp_sns: VecDeque::new(), confirmed_sn: None, l4s: None })
    }

    /// Offers an SDU of `bytes` to the transmitting side: its id, or `None` if the buffer is
    /// full.
    pub(crate) fn enqueue(&mut self, bytes: u32, now_us: u64) -> Result<Option<u64>, CellError> {
        match &mut self.rlc {
            Rlc::Um { tx, .. } => tx.enqueue(bytes, now_us),
            Rlc::Am { tx, .. } => tx.enqueue(bytes, now_us),
        }
    }

    /// Notes that SDU `id`, just queued, carries PDCP SN `sn` (the packet's lower-layer SN),
    /// first forgetting the SDUs already confirmed.
    pub(crate) fn note_pdcp_sn(&mut self, id: u64, sn: u32) {
        let open = self.oldest_open_id();
        while let Some(&(_, first_sn)) = self.pdcp_sns.front().filter(|(i, _)| *i < open) {
            self.confirmed_sn = Some(first_sn);
            self.pdcp_sns.pop_front();
        }
        self.pdcp_sns.push_back((id, sn));
    }

    /// The PDCP SN of the newest SDU such that it and every SDU queued before it is confirmed:
    /// acknowledged (or given up, or discarded at re-establishment) in AM — TS 38.425's highest successfully delivered NR PDCP
    /// SN, TX_Next_Ack − 1 of TS 38.322 — or wholly handed to MAC in UM — its highest
    /// transmitted NR PDCP SN. `None` until an SDU is.
    pub(crate) fn confirmed_pdcp_sn(&self) -> Option<u32> {
        let open = self.oldest_open_id();
        let done = self.pdcp_sns.partition_point(|(id, _)| *id < open);
        done.checked_sub(1).map(|k| self.pdcp_sns[k].1).or(self.confirmed_sn)
    }

    /// Every SDU with an id below this one is confirmed (see [`Bearer::confirmed_pdcp_sn`]).
    fn oldest_open_id(&self) -> u64 {
        match &self.rlc {
            Rlc::Um { tx, .. } => tx.oldest_open_id(),
            Rlc::Am { tx, .. } => tx.oldest_open_id(),
        }
    }

    /// Handover (RLC re-establishment, TS 38.322 §5.1.2, with the source's data forwarding of
    /// TS 38.300 §9.2.3.2.2): the packets the bearer held, split into those the source forwards
    /// to the target — under AM every one not yet delivered (the UE's PDCP status report says
    /// which arrived), under UM those not a byte of which was sent — and the rest, lost (UM:
    /// sent in part, or in a TB still in HARQ). The bearer starts afresh.
    pub(crate) fn hand_over(&mut self, mode: RlcMode, capacity_bytes: u64, t_reordering_us: u64) -> Result<(Vec<Packet>, Vec<Packet>), CellError> {
        let unsent: Vec<u64> = match &self.rlc {
            Rlc::Um { tx, .. } => tx.unsent_ids().collect(),
            Rlc::Am { .. } => Vec::new(),
        };
        let am = matches!(self.rlc, Rlc::Am { .. });
        let mut l4s = self.l4s.take();
        if let Some(m) = &mut l4s {
            m.reset();
        }
        let (mut forward, mut lost) = (Vec::new(), Vec::new());
        for (id, pkt) in self.packets.drain() {
            if am || unsent.binary_search(&id).is_ok() {
                forward.push(pkt);
            } else {
                lost.push(pkt);
            }
        }
        *self = Bearer::new(mode, capacity_bytes, t_reordering_us)?;
        self.l4s = l4s;
        Ok((forward, lost))
    }

    /// The transmitting side's buffer as the scheduler sees it.
    pub(crate) fn status(&self, now_us: u64) -> RlcBufferStatus {
        match &self.rlc {
            Rlc::Um { tx, .. } => tx.status(now_us),
            Rlc::Am { tx, .. } => tx.status(now_us),
        }
    }

    /// What a TB of `bytes` granted to the bearer carries, if anything.
    pub(crate) fn pull(&mut self, bytes: u32, now_us: u64) -> Option<Payload> {
        let payload = match &mut self.rlc {
            Rlc::Um { tx, next_seq, .. } => {
                let pdu = tx.pull(bytes)?;
                let seq = *next_seq;
                *next_seq += 1;
                Payload::Um(seq, pdu)
            }
            Rlc::Am { tx, .. } => {
                let mut pdus = Vec::new();
                tx.pull(bytes, now_us, &mut pdus);
                if pdus.is_empty() {
                    return None;
                }
                Payload::Am(pdus)
            }
        };
        if let Some(m) = &mut self.l4s {
            mark_on_dequeue(m, &mut self.packets, &payload, now_us);
        }
        Some(payload)
    }

    /// SDUs that have entered the transmission buffer so far (what a buffer status report
    /// follows).
    pub(crate) fn arrived_sdus(&self) -> u64 {
        let (offered, dropped) = match &self.rlc {
            Rlc::Um { tx, .. } => (tx.counters().offered_sdus, tx.counters().dropped_sdus),
            Rlc::Am { tx, .. } => (tx.counters().offered_sdus, tx.counters().dropped_sdus),
        };
        offered - dropped
    }

    /// Whether the bearer has work: packets inside, or in AM acknowledgements, reports or
    /// timers still to come.
    pub(crate) fn busy(&self) -> bool {
        if !self.packets.is_empty() {
            return true;
        }
        match &self.rlc {
            Rlc::Um { .. } => false,
            Rlc::Am { tx, rx, .. } => tx.unacked_sdus() > 0 || !self.statuses.is_empty() || rx.status_triggered() || rx.timer_expiry_us().is_some() || tx.poll_timeout().is_some(),
        }
    }

    /// A TB's payload reached the receiving side at `now_us`: the SDUs it completes are
    /// appended to `delivered`, those that can no longer be completed (UM) to `broken`.
    pub(crate) fn receive(&mut self, now_us: u64, payload: Payload, delivered: &mut Vec<u64>, broken: &mut Vec<u64>) {
        match (&mut self.rlc, payload) {
            (Rlc::Um { rx, .. }, Payload::Um(seq, pdu)) => rx.receive(now_us, seq, pdu, delivered, broken),
            (Rlc::Am { rx, .. }, Payload::Am(pdus)) => {
                for pdu in pdus {
                    rx.receive(now_us, pdu, delivered);
                }
            }
            // A bearer only ever carries its own mode's payloads.
            _ => {}
        }
    }

    /// HARQ gave a TB up: in UM the SDUs it carried a part of can no longer be reassembled
    /// (appended to `broken`); in AM its PDUs are simply missing, for ARQ to repair.
    pub(crate) fn lost(&self, payload: &Payload, broken: &mut Vec<u64>) {
        if let Payload::Um(_, pdu) = payload {
            broken.extend(pdu.segments.iter().map(|s| s.sdu_id));
        }
    }

    /// The end of slot `slot` (at `now_us`): the receiving side's timers due by then (UM
    /// t-Reordering: what it completes or breaks is appended; AM t-Reassembly and
    /// t-StatusProhibit), then AM's status report to send, on its way to arrive at the end of
    /// slot `status_slot`.
    pub(crate) fn end_of_slot(&mut self, now_us: u64, status_slot: u64, delivered: &mut Vec<u64>, broken: &mut Vec<u64>) {
        match &mut self.rlc {
            Rlc::Um { rx, .. } => {
                if rx.timer_expiry_us().is_some_and(|t| t <= now_us) {
                    rx.expire(now_us, delivered, broken);
                }
            }
            Rlc::Am { rx, .. } => {
                if rx.timer_expiry_us().is_some_and(|t| t <= now_us) {
                    rx.expire(now_us);
                }
                if let Some(status) = rx.poll_status(now_us) {
                    self.statuses.push((status_slot, status));
                }
            }
        }
    }

    /// The end of a slot for the L4S marker, if the bearer has one: what its grants drained
    /// is a sample of its rate.
    pub(crate) fn l4s_end_of_slot(&mut self) {
        if let Some(m) = &mut self.l4s {
            let queued = match &self.rlc {
                Rlc::Um { tx, .. } => tx.status(0).queued_bytes,
                Rlc::Am { tx, .. } => tx.status(0).queued_bytes,
            };
            m.end_of_slot(queued);
        }
    }

    /// The start of slot `slot` (at `now_us`), AM only: the status reports that arrived by
    /// then reach the transmitter, and t-PollRetransmit fires if due. SDUs given up after
    /// maxRetxThreshold retransmissions, and the others the re-establishment that follows
    /// discards, are appended to `failed`.
    pub(crate) fn start_of_slot(&mut self, slot: u64, now_us: u64, failed: &mut Vec<u64>) {
        let Rlc::Am { tx, rx, .. } = &mut self.rlc else { return };
        let before = failed.len();
        let mut k = 0;
        while k < self.statuses.len() {
            if self.statuses[k].0 < slot {
                let (_, status) = self.statuses.remove(k);
                self.acked.clear();
                tx.on_status(now_us, &status, &mut self.acked, failed);
            } else {
                k += 1;
            }
        }
        if tx.poll_timeout().is_some_and(|t| t <= now_us) {
            failed.extend(tx.handle_timeout(now_us));
        }
        if failed.len() > before {
            // A radio link failure: both ends start afresh.
            tx.reestablish(failed);
            rx.reestablish();
            self.statuses.clear();
        }
    }

    /// AM: the RLC counters worth reporting (retransmitted PDUs, status reports, SDUs given
    /// up); `None` in UM.
    pub(crate) fn am_counts(&self) -> Option<AmCounts> {
        let Rlc::Am { tx, rx } = &self.rlc else { return None };
        let (t, r) = (tx.counters(), rx.counters());
        Some(AmCounts { retransmitted_pdus: t.retx_pdus, status_reports: r.status_reports, polls: t.polls, failed_sdus: t.failed_sdus })
    }
}

/// The SDUs whose first byte `payload` carries (new data, not ARQ retransmissions) leave the
/// queue now: the marker counts their bytes as drained and, under the sojourn rule, marks
/// those that waited too long.
fn mark_on_dequeue(m: &mut L4sMarker, packets: &mut SduPackets, payload: &Payload, now_us: u64) {
    let mut first = |m: &mut L4sMarker, id: u64| {
        if m.on_first_byte(id, now_us) {
            if let Some(pkt) = packets.get_mut(id).filter(|p| p.ecn == Ecn::Ect1) {
                pkt.ecn = Ecn::Ce;
                m.count_mark();
            }
        }
    };
    match payload {
        Payload::Um(_, pdu) => {
            for s in &pdu.segments {
                m.on_drained(u64::from(s.len));
                if s.offset == 0 {
                    first(m, s.sdu_id);
                }
            }
        }
        Payload::Am(pdus) => {
            for p in pdus.iter().filter(|p| !p.retransmission) {
                m.on_drained(u64::from(p.segment.len));
                if p.segment.offset == 0 {
                    first(m, p.segment.sdu_id);
                }
            }
        }
    }
}

/// What an AM bearer counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AmCounts {
    /// AMD PDUs (or segments) sent again.
    pub retransmitted_pdus: u64,
    /// STATUS PDUs the receiving side sent.
    pub status_reports: u64,
    /// PDUs sent with the poll bit.
    pub polls: u64,
    /// SDUs given up after maxRetxThreshold retransmissions.
    pub failed_sdus: u64,
}
