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
//!
//! **A queue discipline above RLC** (`cell.aqm`, e.g. DualPI2 of RFC 9332; `BearerAqm`):
//! packets then wait in the discipline (its limit the cell's `rlc_buffer_bytes`, in bytes),
//! where a gNB-CU holds them before PDCP/RLC, instead of in the RLC buffer. When the bearer
//! fills a grant, the transmitting RLC entity takes packets from the discipline
//! ([`multiconn_link::aqm::Qdisc::dequeue`] at the slot's start, where DualPI2 decides its
//! marks and drops and its weighted round robin between the L and C queues) only for the part
//! of the grant its own data (AM retransmissions first, then new data already segmented) does
//! not fill, and each packet taken becomes an RLC SDU. The sojourn a discipline sees is from
//! the packet's arrival to the start of the slot that pulls it. The buffer status the MAC
//! schedules on counts the discipline's packets (bytes, plus the RLC header estimate of one
//! SDU each), so the scheduler grants what waits above RLC. Packets the discipline drops wait
//! in the bearer for the cell to report (cause `aqm`). The RLC entity under a discipline has
//! room for `rlc_buffer_bytes` plus one largest SDU, and is filled to at most
//! `rlc_buffer_bytes` of new data, so it never refuses a packet taken.
//!
//! The **PDCP SN** noted for an SDU (the delivery status, `Bearer::confirmed_pdcp_sn`) is,
//! under a discipline, not the SN of the packet itself but that of the newest packet such that
//! it and every packet that arrived before it has left the discipline (into RLC, or dropped):
//! DualPI2 lets an L4S packet overtake a Classic one, and the SN the split sees must never
//! claim a packet still waiting above RLC. So the SNs noted are monotone in the order the
//! packets arrived, and an SDU that overtook an older packet notes the SN before that one.
//! At a handover the discipline's packets are forwarded with the RLC's unsent ones (they are
//! unsent); an RLC re-establishment after maxRetxThreshold discards the RLC entity's SDUs
//! only: packets above RLC are not the entity's and stay (TS 38.322 §5.1.2).

use std::collections::VecDeque;

use multiconn_core::{Ecn, Packet, Time};
use multiconn_link::aqm::{AqmStats, Qdisc};

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
    /// A queue discipline above the RLC entity, when the cell has one.
    pub(crate) aqm: Option<Box<BearerAqm>>,
}

/// A queue discipline above a bearer's RLC entity (`cell.aqm`) and its bookkeeping.
pub(crate) struct BearerAqm {
    qdisc: Box<dyn Qdisc>,
    /// The packets that entered the discipline and have not all left it, in arrival order:
    /// (packet id, PDCP SN, whether it has left). The front has not left.
    arrivals: VecDeque<(u64, u32, bool)>,
    /// The PDCP SN of the newest packet such that it and every one before it has left.
    left_sn: Option<u32>,
    /// Packets the discipline dropped, for the cell to report.
    dropped: Vec<Packet>,
    /// Packets it admitted so far (what an uplink buffer status report follows).
    admitted: u64,
    /// The most new-data bytes the RLC entity is filled to.
    fill_limit: u64,
    scratch: Vec<Packet>,
}

impl BearerAqm {
    /// `qdisc` above an RLC entity filled to at most `fill_limit` bytes of new data.
    pub(crate) fn new(qdisc: Box<dyn Qdisc>, fill_limit: u64) -> BearerAqm {
        BearerAqm { qdisc, arrivals: VecDeque::new(), left_sn: None, dropped: Vec::new(), admitted: 0, fill_limit, scratch: Vec::new() }
    }

    /// Packet `id` left the discipline: the newest SN every packet up to which has left.
    fn left(&mut self, id: u64) -> Option<u32> {
        if let Some(e) = self.arrivals.iter_mut().find(|e| e.0 == id) {
            e.2 = true;
        }
        while let Some(&(_, sn, true)) = self.arrivals.front() {
            self.left_sn = Some(sn);
            self.arrivals.pop_front();
        }
        self.left_sn
    }

    /// Moves the packets the discipline dropped into `dropped`, noting that they left.
    fn note_drops(&mut self) {
        let mut scratch = std::mem::take(&mut self.scratch);
        for pkt in scratch.drain(..) {
            self.left(pkt.id);
            self.dropped.push(pkt);
        }
        self.scratch = scratch;
    }

    /// What the discipline did so far.
    pub(crate) fn stats(&self) -> AqmStats {
        self.qdisc.stats()
    }
}

/// The RLC entity's capacity under a discipline limited to `capacity_bytes`: that plus one
/// largest SDU (65 535 B), within the 1 GiB an entity takes.
pub(crate) fn rlc_capacity_under_aqm(capacity_bytes: u64) -> u64 {
    (capacity_bytes + u64::from(u16::MAX)).min(1 << 30)
}

/// The new-data bytes an RLC entity of `rlc_capacity` under a discipline is filled to.
pub(crate) fn rlc_fill_limit(rlc_capacity: u64) -> u64 {
    rlc_capacity.saturating_sub(u64::from(u16::MAX)).max(1)
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
        Ok(Bearer { rlc, packets: SduPackets::default(), statuses: Vec::new(), acked: Vec::new(), pdcp_sns: VecDeque::new(), confirmed_sn: None, l4s: None, aqm: None })
    }

    /// Offers `pkt` to the queue discipline at `now`: refused, it comes back with whether the
    /// discipline had room for it (true: its own rule refused it, false: its limit). Packets it
    /// dropped from its queue to make room are appended to `dropped`. Without a discipline the
    /// packet comes back as refused for room.
    pub(crate) fn aqm_enqueue(&mut self, now: Time, pkt: Packet, dropped: &mut Vec<Packet>) -> Result<(), (Packet, bool)> {
        let Some(a) = &mut self.aqm else { return Err((pkt, false)) };
        let room = a.qdisc.has_room(pkt.size);
        let (id, sn) = (pkt.id, pkt.lower_sn);
        let mut scratch = std::mem::take(&mut a.scratch);
        let admitted = a.qdisc.enqueue(now, pkt, &mut scratch);
        for p in scratch.drain(..) {
            a.left(p.id);
            dropped.push(p);
        }
        a.scratch = scratch;
        match admitted {
            Ok(()) => {
                a.admitted += 1;
                a.arrivals.push_back((id, sn, false));
                Ok(())
            }
            Err(pkt) => Err((pkt, room)),
        }
    }

    /// Takes the packets the discipline dropped since the last call.
    pub(crate) fn take_aqm_drops(&mut self, out: &mut Vec<Packet>) {
        if let Some(a) = &mut self.aqm {
            out.append(&mut a.dropped);
        }
    }

    /// Fills the RLC entity from the discipline at `now` for a grant of `grant_bytes`: packets
    /// are taken while what the entity has to send (retransmissions, new data, header
    /// estimates) is less than the grant and its new data below the fill limit.
    fn fill_from_aqm(&mut self, grant_bytes: u32, now: Time) {
        let Some(mut a) = self.aqm.take() else { return };
        let now_us = now.0 / 1000;
        loop {
            let st = self.rlc_status(now_us);
            if st.tx_queue_bytes >= u64::from(grant_bytes) || st.queued_bytes >= a.fill_limit {
                break;
            }
            let mut scratch = std::mem::take(&mut a.scratch);
            let next = a.qdisc.dequeue(now, &mut scratch);
            a.scratch = scratch;
            a.note_drops();
            let Some(pkt) = next else { break };
            let sn = a.left(pkt.id);
            match self.enqueue(pkt.size.max(1), now_us) {
                Ok(Some(id)) => {
                    if let Some(sn) = sn {
                        self.note_pdcp_sn(id, sn);
                    }
                    if let Err(pkt) = self.packets.insert(id, pkt) {
                        a.dropped.push(pkt);
                    }
                }
                // The entity has room for one more SDU than the fill limit: not reached.
                _ => a.dropped.push(pkt),
            }
        }
        self.aqm = Some(a);
    }

    /// What the discipline did so far; `None` without one.
    pub(crate) fn aqm_stats(&self) -> Option<AqmStats> {
        self.aqm.as_ref().map(|a| a.stats())
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
        // The discipline's packets are unsent: forwarded after the RLC's (its drops not yet
        // reported stay to be reported).
        let mut aqm = self.aqm.take();
        if let Some(a) = &mut aqm {
            a.qdisc.drain(&mut forward);
            a.arrivals.clear();
            a.left_sn = None;
        }
        *self = Bearer::new(mode, capacity_bytes, t_reordering_us)?;
        self.l4s = l4s;
        self.aqm = aqm;
        Ok((forward, lost))
    }

    /// The transmitting side's buffer as the scheduler sees it: the RLC entity's and, under a
    /// queue discipline, the packets waiting in it (bytes, and one SDU's header estimate each).
    pub(crate) fn status(&self, now_us: u64) -> RlcBufferStatus {
        let mut st = self.rlc_status(now_us);
        if let Some(a) = &self.aqm {
            let (packets, bytes) = (a.qdisc.packets(), a.qdisc.bytes());
            let header = match &self.rlc {
                Rlc::Um { .. } => crate::rlc::HEADER_ESTIMATE_PER_SDU,
                Rlc::Am { tx, .. } => u64::from(crate::rlc_am::am_header_bytes(tx.config().sn_bits, 0)),
            };
            st.queued_bytes += bytes;
            st.queued_sdus += packets;
            st.tx_queue_bytes += bytes + header * packets;
        }
        st
    }

    /// The RLC entity's buffer status alone.
    fn rlc_status(&self, now_us: u64) -> RlcBufferStatus {
        match &self.rlc {
            Rlc::Um { tx, .. } => tx.status(now_us),
            Rlc::Am { tx, .. } => tx.status(now_us),
        }
    }

    /// What a TB of `bytes` granted to the bearer at `now` (the slot's start) carries, if
    /// anything; under a queue discipline, the RLC entity first takes what it needs from it.
    pub(crate) fn pull(&mut self, bytes: u32, now: Time) -> Option<Payload> {
        let now_us = now.0 / 1000;
        if self.aqm.is_some() {
            self.fill_from_aqm(bytes, now);
        }
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
        if let Some(a) = &self.aqm {
            // Packets enter the bearer at the discipline.
            return a.admitted;
        }
        let (offered, dropped) = match &self.rlc {
            Rlc::Um { tx, .. } => (tx.counters().offered_sdus, tx.counters().dropped_sdus),
            Rlc::Am { tx, .. } => (tx.counters().offered_sdus, tx.counters().dropped_sdus),
        };
        offered - dropped
    }

    /// Whether the bearer has work: packets inside, or in AM acknowledgements, reports or
    /// timers still to come.
    pub(crate) fn busy(&self) -> bool {
        if !self.packets.is_empty() || self.aqm.as_ref().is_some_and(|a| a.qdisc.packets() > 0 || !a.dropped.is_empty()) {
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
