//! The receiving side of one packet-number space: duplicate detection, the ranges to
//! acknowledge and when to send an ACK (RFC 9000 §13.2).
//!
//! * Initial and Handshake packets are acknowledged at once (§13.2.1).
//! * Application data: an ACK after `ack_eliciting_threshold` ack-eliciting packets
//!   (§13.2.2), at the latest `max_ack_delay` after the first unacknowledged one, and at once
//!   when a packet arrives out of order — below the largest received or after a gap — if
//!   `immediate_ack_on_reorder`.
//! * Non-ack-eliciting packets are acknowledged only together with others (§13.2.1).
//! * Ranges below the Largest Acknowledged of an ACK frame the peer has acknowledged are no
//!   longer reported (§13.2.4); at most [`MAX_ACK_RANGES`] ranges are kept and reported.
//! * With ECN on, the ECN field of every packet that is not a duplicate is counted (§13.4.1:
//!   each packet of a coalesced datagram counts), and the ACK frames carry the counts
//!   (type 0x03) once any is non-zero.

use multiconn_core::{Dur, Ecn, Time};

use crate::ack_ranges::{AckFrame, EcnCounts};
use crate::range_set::RangeSet;

/// Ranges reported in one ACK frame and kept for reporting.
pub const MAX_ACK_RANGES: usize = 32;
/// Ranges kept for duplicate detection; older packet numbers count as duplicates.
const MAX_SEEN_RANGES: usize = 256;

/// When to acknowledge the packets of one packet-number space (see the module header).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AckPolicy {
    /// false: acknowledge every ack-eliciting packet at once (Initial, Handshake).
    pub delay_acks: bool,
    /// An ACK goes once this many ack-eliciting packets arrived since the last one
    /// (ack_eliciting_threshold, RFC 9000 §13.2.2).
    pub threshold: u32,
    /// Longest time the first unacknowledged ack-eliciting packet waits for its ACK
    /// (max_ack_delay, RFC 9000 §18.2).
    pub max_ack_delay: Dur,
    /// Acknowledge at once a packet below the largest received or after a gap.
    pub immediate_on_reorder: bool,
    /// Count the ECN codepoints of arriving packets and report them (RFC 9000 §13.4.1).
    pub ecn: bool,
}

/// The receiving side of one packet-number space (see the module header).
#[derive(Clone, Debug)]
pub struct AckState {
    policy: AckPolicy,
    to_ack: RangeSet,
    seen: RangeSet,
    seen_floor: u64,
    largest: Option<u64>,
    largest_time: Time,
    eliciting_since_ack: u32,
    deadline: Option<Time>,
    immediate: bool,
    new_since_ack: bool,
    /// Packets dropped as duplicates.
    pub duplicates: u64,
    ecn: EcnCounts,
}

impl AckState {
    /// Nothing received yet.
    pub fn new(policy: AckPolicy) -> AckState {
        AckState {
            policy,
            to_ack: RangeSet::new(),
            seen: RangeSet::new(),
            seen_floor: 0,
            largest: None,
            largest_time: Time::ZERO,
            eliciting_since_ack: 0,
            deadline: None,
            immediate: false,
            new_since_ack: false,
            duplicates: 0,
            ecn: EcnCounts::default(),
        }
    }

    /// The ECN field of the IP packet that carried the packet just accepted by
    /// [`on_packet`](Self::on_packet) (RFC 9000 §13.4.1).
    pub fn on_ecn(&mut self, ecn: Ecn) {
        if !self.policy.ecn {
            return;
        }
        match ecn {
            Ecn::NotEct => {}
            Ecn::Ect0 => self.ecn.ect0 += 1,
            Ecn::Ect1 => self.ecn.ect1 += 1,
            Ecn::Ce => self.ecn.ce += 1,
        }
    }

    /// The ECN counts so far.
    pub fn ecn_counts(&self) -> EcnCounts {
        self.ecn
    }

    /// A packet `pn` arrived. Returns false for a duplicate (to be dropped).
    pub fn on_packet(&mut self, now: Time, pn: u64, ack_eliciting: bool) -> bool {
        if pn < self.seen_floor || self.seen.contains(pn) {
            self.duplicates += 1;
            return false;
        }
        self.seen.insert(pn, pn + 1);
        if self.seen.len() > MAX_SEEN_RANGES {
            self.seen_floor = self.seen.keep_highest(MAX_SEEN_RANGES / 2).unwrap_or(0);
        }
        self.to_ack.insert(pn, pn + 1);
        self.to_ack.keep_highest(MAX_ACK_RANGES);
        let prev = self.largest;
        if prev.map_or(true, |l| pn > l) {
            self.largest = Some(pn);
            self.largest_time = now;
        }
        self.new_since_ack = true;
        if ack_eliciting {
            self.eliciting_since_ack += 1;
            let out_of_order = prev.is_some_and(|l| pn < l || pn > l + 1);
            if !self.policy.delay_acks || self.eliciting_since_ack >= self.policy.threshold || (self.policy.immediate_on_reorder && out_of_order) {
                self.immediate = true;
            } else if self.deadline.is_none() {
                self.deadline = Some(now + self.policy.max_ack_delay);
            }
        }
        true
    }

    /// An ACK must be sent now (it may not wait for other data).
    pub fn ack_due(&self, now: Time) -> bool {
        self.immediate || self.deadline.is_some_and(|d| d <= now)
    }

    /// Something arrived since the last ACK: worth piggybacking on a packet sent anyway.
    pub fn has_new(&self) -> bool {
        self.new_since_ack
    }

    /// When the delayed-ACK timer fires.
    pub fn deadline(&self) -> Option<Time> {
        self.deadline
    }

    /// The delayed-ACK timer fired.
    pub fn on_timeout(&mut self, now: Time) {
        if self.deadline.is_some_and(|d| d <= now) {
            self.deadline = None;
            self.immediate = true;
        }
    }

    /// The ACK frame to send now, with the delay since the largest packet arrived.
    pub fn build(&self, now: Time) -> Option<AckFrame> {
        let mut f = AckFrame::from_ranges(&self.to_ack, now.since(self.largest_time), MAX_ACK_RANGES)?;
        if self.policy.ecn && self.ecn != EcnCounts::default() {
            f.ecn = Some(self.ecn);
        }
        Some(f)
    }

    /// An ACK frame was sent.
    pub fn on_ack_sent(&mut self) {
        self.eliciting_since_ack = 0;
        self.deadline = None;
        self.immediate = false;
        self.new_since_ack = false;
    }

    /// The peer acknowledged a packet carrying our ACK frame with this Largest Acknowledged.
    pub fn on_ack_acked(&mut self, largest: u64) {
        self.to_ack.remove_below(largest.saturating_add(1));
    }

    /// The largest packet number received; `None` before the first.
    pub fn largest(&self) -> Option<u64> {
        self.largest
    }
}
