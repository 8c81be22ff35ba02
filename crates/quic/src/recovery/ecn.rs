//! The sending side of ECN on one path (RFC 9000 §13.4.2 and appendix A.4, RFC 9002 §7.1
//! and B.7): the validation of the path (ten testing packets, then the verdict of the ACK
//! frames' counts), and which CE increases begin a recovery period; for a scalable (L4S)
//! controller the codepoint is ECT(1) (RFC 9331 §4) and each ACK's count increases are its
//! feedback ([`EcnSender::on_ack_counts`] returns them). The loss recovery
//! ([`super::Recovery`]) owns one per path when ECN is on and tells it of every ECT packet
//! sent, every ACK frame's counts and every loss.

use multiconn_core::{Ecn, Time};

use crate::ack_ranges::EcnCounts;

/// Packets sent ECT to test a path before waiting for the verdict (RFC 9000 appendix A.4:
/// ten packets).
pub const ECN_TESTING_PACKETS: u64 = 10;

/// Where a path's ECN validation stands (RFC 9000 §13.4.2, appendix A.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnValidation {
    /// The first [`ECN_TESTING_PACKETS`] packets go ECT (ECT(0), or ECT(1) for L4S).
    Testing,
    /// Those went out; the next packets go not-ECT until an ACK validates them.
    Unknown,
    /// An ACK confirmed the marks: every packet goes ECT.
    Capable,
    /// ECN counts missing, wrong or decreasing, or every testing packet lost: no more marks.
    Failed,
}

impl EcnValidation {
    /// Its name in reports (`testing`, `unknown`, `capable`, `failed`).
    pub fn name(self) -> &'static str {
        match self {
            EcnValidation::Testing => "testing",
            EcnValidation::Unknown => "unknown",
            EcnValidation::Capable => "capable",
            EcnValidation::Failed => "failed",
        }
    }
}

/// The sending side of ECN on one path: validation and the CE reaction.
#[derive(Clone, Debug)]
pub(super) struct EcnSender {
    pub(super) state: EcnValidation,
    /// The codepoint sent: ECT(0), or ECT(1) for a scalable controller.
    codepoint: Ecn,
    /// Packets sent ECT(0) while testing, and how many of them were declared lost.
    testing_sent: u64,
    testing_lost: u64,
    /// Packets sent with the codepoint, per space.
    ect_sent: [u64; 3],
    /// The counts of the last ACK frame processed, per space.
    peer: [EcnCounts; 3],
    /// Start of the recovery period a loss or a CE increase last began (the controller's
    /// rule, RFC 9002 §7.3.2), to count the CE increases that start one.
    recovery_start: Option<Time>,
    pub(super) responses: u64,
}

/// What one ACK frame's counts newly report (RFC 9000 §13.4.2.1), when they validate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct CountsIncrease {
    /// Packets newly reported CE.
    pub(super) ce: u64,
    /// Packets newly reported with any ECN codepoint (ECT(0), ECT(1) or CE).
    pub(super) all: u64,
    /// The CE increase begins a recovery period (RFC 9002 B.7's congestion event).
    pub(super) congestion_event: bool,
}

/// ECN counters of one path's sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EcnSenderStats {
    /// Where validation stands.
    pub state: EcnValidation,
    /// CE count the peer reported, summed over the spaces.
    pub ce_reported: u64,
    /// Congestion events for a CE increase that began a recovery period.
    pub responses: u64,
}

impl EcnSender {
    /// A sender that starts testing the path, marking `codepoint` (ECT(0) or ECT(1)).
    pub(super) fn new(codepoint: Ecn) -> EcnSender {
        debug_assert!(matches!(codepoint, Ecn::Ect0 | Ecn::Ect1));
        EcnSender {
            state: EcnValidation::Testing,
            codepoint,
            testing_sent: 0,
            testing_lost: 0,
            ect_sent: [0; 3],
            peer: [EcnCounts::default(); 3],
            recovery_start: None,
            responses: 0,
        }
    }

    /// The codepoint marked packets carry.
    pub(super) fn codepoint(&self) -> Ecn {
        self.codepoint
    }

    /// Whether the next datagram goes ECT (RFC 9000 §13.4.2, appendix A.4).
    pub(super) fn marks(&self) -> bool {
        match self.state {
            EcnValidation::Testing => self.testing_sent < ECN_TESTING_PACKETS,
            EcnValidation::Capable => true,
            EcnValidation::Unknown | EcnValidation::Failed => false,
        }
    }

    /// The CE count the peer reported, summed over the spaces.
    pub(super) fn ce_reported(&self) -> u64 {
        self.peer.iter().map(|c| c.ce).sum()
    }

    /// A packet of space `si` went out with the codepoint.
    pub(super) fn on_ect_sent(&mut self, si: usize) {
        self.ect_sent[si] += 1;
        if self.state == EcnValidation::Testing {
            self.testing_sent += 1;
            if self.testing_sent >= ECN_TESTING_PACKETS {
                self.state = EcnValidation::Unknown;
            }
        }
    }

    /// RFC 9000 §13.4.2.1 validation of an ACK frame's ECN counts for space `si` (`None`: the
    /// frame had none) that newly acknowledged `newly_ect` ECT packets; returns what the counts
    /// newly report when they validate: the CE increase, a congestion event for a classic
    /// controller (RFC 9002 B.7) when it begins a recovery period (the largest acknowledged
    /// packet, `largest_sent`, was sent after the last one began), counted as a response.
    pub(super) fn on_ack_counts(&mut self, now: Time, si: usize, counts: Option<EcnCounts>, newly_ect: u64, largest_sent: Time) -> Option<CountsIncrease> {
        if self.state == EcnValidation::Failed {
            return None;
        }
        let Some(c) = counts else {
            // Newly acknowledged ECT packets and no counts: the marks were lost on the way.
            if newly_ect > 0 {
                self.state = EcnValidation::Failed;
            }
            return None;
        };
        let prev = self.peer[si];
        let decreased = c.ect0 < prev.ect0 || c.ect1 < prev.ect1 || c.ce < prev.ce;
        // Only one codepoint is sent: more of it + CE than sent, or any of the other, is a
        // remarking path (for ECT(1), RFC 9331's ECT(1) → ECT(0) mangling).
        let (sent_count, prev_sent_count, other) = match self.codepoint {
            Ecn::Ect1 => (c.ect1, prev.ect1, c.ect0),
            _ => (c.ect0, prev.ect0, c.ect1),
        };
        let too_many = sent_count + c.ce > self.ect_sent[si] || other > 0;
        if decreased || too_many || (sent_count - prev_sent_count) + (c.ce - prev.ce) < newly_ect {
            self.state = EcnValidation::Failed;
            return None;
        }
        self.peer[si] = c;
        if newly_ect > 0 && matches!(self.state, EcnValidation::Testing | EcnValidation::Unknown) {
            self.state = EcnValidation::Capable;
        }
        let mut increase = CountsIncrease { ce: c.ce - prev.ce, all: (sent_count - prev_sent_count) + (c.ce - prev.ce), congestion_event: false };
        if increase.ce == 0 {
            return Some(increase);
        }
        if !self.recovery_start.is_some_and(|s| largest_sent <= s) {
            self.recovery_start = Some(now);
            self.responses += 1;
        }
        increase.congestion_event = true;
        Some(increase)
    }

    /// Loss detection declared packets lost, `lost_ect` of them sent ECT(0), the newest sent at
    /// `largest_lost_sent`: every testing packet lost fails the validation (the marks may be
    /// what was dropped, RFC 9000 §13.4.2), and the loss begins a recovery period.
    pub(super) fn on_lost(&mut self, now: Time, lost_ect: u64, largest_lost_sent: Time) {
        if matches!(self.state, EcnValidation::Testing | EcnValidation::Unknown) {
            self.testing_lost += lost_ect;
            if self.state == EcnValidation::Unknown && self.testing_lost >= self.testing_sent {
                self.state = EcnValidation::Failed;
            }
        }
        if !self.recovery_start.is_some_and(|s| largest_lost_sent <= s) {
            self.recovery_start = Some(now);
        }
    }
}
