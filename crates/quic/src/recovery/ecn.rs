//! The sending side of ECN on one path (RFC 9000 §13.4.2 and appendix A.4, RFC 9002 §7.1
//! and B.7): the validation of the path (ten testing packets, then the verdict of the ACK
//! frames' counts), and which CE increases begin a recovery period. The loss recovery
//! ([`super::Recovery`]) owns one per path when ECN is on and tells it of every ECT packet
//! sent, every ACK frame's counts and every loss.

use multiconn_core::Time;

use crate::ack_ranges::EcnCounts;

/// Packets sent ECT(0) to test a path before waiting for the verdict (RFC 9000 appendix A.4:
/// ten packets).
pub const ECN_TESTING_PACKETS: u64 = 10;

/// Where a path's ECN validation stands (RFC 9000 §13.4.2, appendix A.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnValidation {
    /// The first [`ECN_TESTING_PACKETS`] packets go ECT(0).
    Testing,
    /// Those went out; the next packets go not-ECT until an ACK validates them.
    Unknown,
    /// An ACK confirmed the marks: every packet goes ECT(0).
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
    /// Packets sent ECT(0) while testing, and how many of them were declared lost.
    testing_sent: u64,
    testing_lost: u64,
    /// Packets sent ECT(0), per space.
    ect_sent: [u64; 3],
    /// The counts of the last ACK frame processed, per space.
    peer: [EcnCounts; 3],
    /// Start of the recovery period a loss or a CE increase last began (the controller's
    /// rule, RFC 9002 §7.3.2), to count the CE increases that start one.
    recovery_start: Option<Time>,
    pub(super) responses: u64,
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
    /// A sender that starts testing the path.
    pub(super) fn new() -> EcnSender {
        EcnSender {
            state: EcnValidation::Testing,
            testing_sent: 0,
            testing_lost: 0,
            ect_sent: [0; 3],
            peer: [EcnCounts::default(); 3],
            recovery_start: None,
            responses: 0,
        }
    }

    /// Whether the next datagram goes ECT(0) (RFC 9000 §13.4.2, appendix A.4).
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

    /// A packet of space `si` went out ECT(0).
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
    /// frame had none) that newly acknowledged `newly_ect` ECT packets; returns whether the CE
    /// count grew, a congestion event for the controller (RFC 9002 B.7), counting it as a
    /// response when it begins a recovery period (the largest acknowledged packet,
    /// `largest_sent`, was sent after the last one began).
    pub(super) fn on_ack_counts(&mut self, now: Time, si: usize, counts: Option<EcnCounts>, newly_ect: u64, largest_sent: Time) -> bool {
        if self.state == EcnValidation::Failed {
            return false;
        }
        let Some(c) = counts else {
            // Newly acknowledged ECT packets and no counts: the marks were lost on the way.
            if newly_ect > 0 {
                self.state = EcnValidation::Failed;
            }
            return false;
        };
        let prev = self.peer[si];
        let decreased = c.ect0 < prev.ect0 || c.ect1 < prev.ect1 || c.ce < prev.ce;
        // Only ECT(0) is sent: more ECT(0) + CE than sent, or any ECT(1), is a remarking path.
        let too_many = c.ect0 + c.ce > self.ect_sent[si] || c.ect1 > 0;
        if decreased || too_many || (c.ect0 - prev.ect0) + (c.ce - prev.ce) < newly_ect {
            self.state = EcnValidation::Failed;
            return false;
        }
        self.peer[si] = c;
        if newly_ect > 0 && matches!(self.state, EcnValidation::Testing | EcnValidation::Unknown) {
            self.state = EcnValidation::Capable;
        }
        if c.ce <= prev.ce {
            return false;
        }
        if !self.recovery_start.is_some_and(|s| largest_sent <= s) {
            self.recovery_start = Some(now);
            self.responses += 1;
        }
        true
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
