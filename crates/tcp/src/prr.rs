//! Proportional rate reduction (RFC 6937) as Linux runs it: `tcp_init_cwnd_reduction`,
//! `tcp_cwnd_reduction` and `tcp_end_cwnd_reduction` in net/ipv4/tcp_input.c, in the form they
//! have had since Linux 5.19 ("tcp: improve PRR loss recovery"), kept through 6.x; RFC 9937,
//! which obsoletes RFC 6937, specifies the same reduction bounds.
//!
//! * At the start of a reduction (fast recovery, or CWR after an ECN echo) the sender notes
//!   the window it had, `prior_cwnd` (Linux's RecoverFS; RFC 6937 takes the pipe instead), and
//!   the controller's new `ssthresh`; `prr_delivered` and `prr_out` start at zero.
//! * Each ACK that delivers data (newly acknowledged or SACKed, `prr_delivered` grows by it)
//!   sets the window to `pipe + sndcnt`:
//!   - while `pipe > ssthresh`, `sndcnt = ⌈ssthresh · prr_delivered / prior_cwnd⌉ − prr_out`:
//!     the window comes down in proportion to what is delivered, over about a round trip;
//!   - else `sndcnt = min(ssthresh − pipe, max(prr_delivered − prr_out, delivered) + ε)`,
//!     with `ε` one segment when the ACK advanced `snd_una` and marked nothing newly lost
//!     (RFC 9937's "safe ACK": RFC 6937's slow-start reduction bound, PRR-SSRB; otherwise
//!     its conservative bound, which since 5.19 also spends credit banked earlier, e.g.
//!     while application-limited). Linux 5.11 to 5.18 (`banks_credit = false`) send only
//!     `min(ssthresh − pipe, delivered)` on an ACK that is not safe;
//!   - at least one segment while nothing has been sent yet (the fast retransmit);
//!   - an ACK that delivers nothing leaves the window as it was.
//! * Everything sent during the reduction counts in `prr_out`.
//! * At its end (`snd_una` reaches the recovery point, or passes the CWR point) the window is
//!   the controller's `ssthresh` again; the controller does not grow it meanwhile
//!   (`tcp_cong_control` runs either the reduction or the window increase).
//!
//! Linux counts segments, and so does this module: the windows it is given in bytes are
//! taken in whole segments of `mss` bytes (rounded down, as the sender sends only whole
//! segments within them), pipe in segments rounded up, and the window it sets is pipe plus
//! `sndcnt` whole segments.

/// The state of one window reduction, in segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prr {
    mss: u64,
    /// The window before the reduction (Linux `prior_cwnd`).
    prior_cwnd: u64,
    /// The controller's target (Linux `snd_ssthresh`).
    ssthresh: u64,
    /// Segments delivered to the receiver since the reduction began (`prr_delivered`).
    delivered: u64,
    /// Segments sent since the reduction began (`prr_out`).
    out: u64,
    /// The window the last ACK set, bytes.
    cwnd: u64,
    /// The conservative bound spends credit banked earlier (Linux 5.19+).
    banks_credit: bool,
}

impl Prr {
    /// Linux `tcp_init_cwnd_reduction`: a reduction from a window of `prior_cwnd` bytes
    /// towards `ssthresh` bytes. The window stays `prior_cwnd` until an ACK is counted.
    /// `banks_credit`: the conservative bound of Linux 5.19+ (else of 5.11 to 5.18).
    pub fn new(prior_cwnd: u64, ssthresh: u64, mss: u64, banks_credit: bool) -> Prr {
        let mss = mss.max(1);
        Prr { mss, prior_cwnd: (prior_cwnd / mss).max(1), ssthresh: ssthresh / mss, delivered: 0, out: 0, cwnd: prior_cwnd, banks_credit }
    }

    /// Linux `tcp_cwnd_reduction`: an ACK delivered `delivered` segments (newly acknowledged
    /// or SACKed); `pipe` is the bytes in flight after it (and after the losses it revealed),
    /// `una_advanced` whether it moved `snd_una`, `newly_lost` whether it marked something
    /// lost. Returns the new window in bytes.
    pub fn on_ack(&mut self, delivered: u64, pipe: u64, una_advanced: bool, newly_lost: bool) -> u64 {
        if delivered == 0 {
            return self.cwnd;
        }
        self.delivered += delivered;
        let in_flight = pipe.div_ceil(self.mss) as i64;
        let (ssthresh, out) = (self.ssthresh as i64, self.out as i64);
        let delta = ssthresh - in_flight;
        let mut sndcnt = if delta < 0 {
            let prior = self.prior_cwnd as i64;
            (ssthresh * self.delivered as i64 + prior - 1) / prior - out
        } else {
            let safe = una_advanced && !newly_lost;
            let s = if safe || self.banks_credit {
                (self.delivered as i64 - out).max(delivered as i64) + safe as i64
            } else {
                delivered as i64
            };
            s.min(delta)
        };
        // Force a fast retransmit upon entering fast recovery.
        sndcnt = sndcnt.max(if self.out > 0 { 0 } else { 1 });
        self.cwnd = pipe + sndcnt as u64 * self.mss;
        self.cwnd
    }

    /// A segment went out during the reduction (new data or a retransmission).
    pub fn on_sent(&mut self) {
        self.out += 1;
    }

    /// The window the reduction allows now, bytes.
    pub fn cwnd(&self) -> u64 {
        self.cwnd
    }
    /// The controller's target, segments.
    pub fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    /// The window before the reduction, segments.
    pub fn prior_cwnd(&self) -> u64 {
        self.prior_cwnd
    }
    /// `prr_delivered`, segments.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }
    /// `prr_out`, segments.
    pub fn out(&self) -> u64 {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// The sender of a PRR test: it sends whole segments whenever the window allows.
    fn send_allowed(p: &mut Prr, pipe: &mut u64) -> u64 {
        let mut n = 0;
        while *pipe + MSS <= p.cwnd() {
            *pipe += MSS;
            p.on_sent();
            n += 1;
        }
        n
    }

    /// A single loss out of 20 segments in flight, ssthresh 10 (RFC 6937 §3.1's first example
    /// without limited transmit): the hole is marked lost on the first ACK and each of the 19
    /// ACKs delivers one segment. PRR sends on every other ACK while pipe is above ssthresh
    /// (the retransmission first), skips the two ACKs on which pipe has come down to ssthresh
    /// and fills it back on the last two: 10 segments in all, pipe ends at ssthresh. An
    /// immediate reduction (RFC 6675) would send nothing for 9 ACKs and then one per ACK.
    #[test]
    fn a_single_loss_sends_on_every_other_ack_and_ends_at_ssthresh() {
        let mut p = Prr::new(20 * MSS, 10 * MSS, MSS, true);
        let mut pipe = 19 * MSS;
        let mut sends = Vec::new();
        for ack in 0..19 {
            pipe -= MSS;
            p.on_ack(1, pipe, false, ack == 0);
            sends.push(send_allowed(&mut p, &mut pipe));
        }
        assert_eq!(sends, vec![1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1]);
        assert_eq!((p.out(), p.delivered(), pipe), (10, 19, 10 * MSS));
    }

    /// RFC 6937 §3.1's second example: segments 0–14 of 20 lost, two segments of limited
    /// transmit, recovery on the third duplicate ACK with pipe 4 below ssthresh 10. RFC 6937's
    /// PRR-SSRB would send two segments on each of those ACKs; Linux since 5.19 (and RFC 9937)
    /// adds the extra segment only on an ACK that advances `snd_una` without a new loss, so
    /// the duplicate ACKs send one for one (RFC 6937's PRR-CRB row), and the partial ACKs that
    /// follow two for one, up to ssthresh.
    #[test]
    fn a_burst_loss_sends_one_for_one_until_snd_una_advances() {
        let mut p = Prr::new(20 * MSS, 10 * MSS, MSS, true);
        let mut pipe = 4 * MSS;
        let mut sends = Vec::new();
        for ack in 0..3 {
            if ack > 0 {
                pipe -= MSS;
            }
            p.on_ack(1, pipe, false, ack == 0);
            sends.push(send_allowed(&mut p, &mut pipe));
        }
        assert_eq!((sends.as_slice(), pipe), ([1, 1, 1].as_slice(), 5 * MSS));
        // The retransmissions arrive: each partial ACK delivers one segment, moves snd_una and
        // finds no new loss.
        for _ in 0..3 {
            pipe -= MSS;
            p.on_ack(1, pipe, true, false);
            sends.push(send_allowed(&mut p, &mut pipe));
        }
        assert_eq!((&sends[3..], pipe), ([2, 2, 2].as_slice(), 8 * MSS));
        // A partial ACK that reveals another loss: one for one again.
        pipe -= MSS;
        p.on_ack(1, pipe, true, true);
        assert_eq!(send_allowed(&mut p, &mut pipe), 1);
        // However much is delivered, pipe does not pass ssthresh.
        pipe -= 3 * MSS;
        p.on_ack(5, pipe, true, false);
        assert_eq!((send_allowed(&mut p, &mut pipe), pipe), (5, 10 * MSS));
    }

    /// The proportional part is ⌈ssthresh · prr_delivered / prior_cwnd⌉ − prr_out in whole
    /// segments (Linux: `dividend = ssthresh · prr_delivered + prior_cwnd − 1`), here with
    /// CUBIC's ssthresh of 7 for a window of 10: 1, 1, 1, 0, 1, 1, 0 ... segments per ACK.
    #[test]
    fn the_proportional_part_rounds_up_to_whole_segments() {
        let mut p = Prr::new(10 * MSS, 7 * MSS + 999, MSS, true);
        assert_eq!(p.ssthresh(), 7, "ssthresh is taken in whole segments");
        let mut sends = Vec::new();
        for _ in 0..7 {
            // pipe stays at 9 segments: one delivered, what is sent replaces it.
            let mut pipe = 9 * MSS;
            p.on_ack(1, pipe, false, false);
            sends.push(send_allowed(&mut p, &mut pipe));
        }
        // ⌈0.7⌉, ⌈1.4⌉ − 1, ⌈2.1⌉ − 2, ⌈2.8⌉ − 3, ⌈3.5⌉ − 3, ⌈4.2⌉ − 4, ⌈4.9⌉ − 5.
        assert_eq!(sends, vec![1, 1, 1, 0, 1, 1, 0]);
    }

    /// Since Linux 5.19 the conservative bound also spends credit banked earlier (delivered but
    /// not sent, e.g. while application-limited): `max(prr_delivered − prr_out, delivered)`.
    /// Linux 5.11 to 5.18 send only what the ACK delivered unless it advanced `snd_una`
    /// without a new loss, when they too spend the credit (and one segment more).
    #[test]
    fn credit_banked_while_application_limited_is_spent_later() {
        for (banks, sack_only, partial) in [(true, 6, 7), (false, 3, 7)] {
            let mut p = Prr::new(20 * MSS, 10 * MSS, MSS, banks);
            // Pipe below ssthresh; the first ACK forces the retransmission.
            assert_eq!(p.on_ack(1, 5 * MSS, false, true), 6 * MSS);
            p.on_sent();
            // Three more ACKs deliver a segment each while the application has nothing to send.
            for pipe in [5, 4, 3] {
                p.on_ack(1, pipe * MSS, false, false);
            }
            // A SACK-only ACK: 5.19+ may send everything delivered and not sent, 5 − 1 = 4;
            // 5.11 only the one segment it delivered.
            assert_eq!(p.on_ack(1, 2 * MSS, false, false), sack_only * MSS, "banks credit: {banks}");
            // A partial ACK: both spend the credit, 6 − 1 = 5, plus one.
            assert_eq!(p.on_ack(1, MSS, true, false), partial * MSS, "banks credit: {banks}");
        }
    }

    /// An ACK that delivers nothing (a bare duplicate, a D-SACK) leaves the window unchanged;
    /// before the first counted ACK it is the window before the reduction. Nothing sent yet:
    /// at least one segment even where pipe already is at ssthresh; pipe counts a partial
    /// segment as one.
    #[test]
    fn acks_that_deliver_nothing_change_nothing_and_the_first_send_is_forced() {
        let mut p = Prr::new(20 * MSS, 10 * MSS, MSS, true);
        assert_eq!(p.cwnd(), 20 * MSS);
        assert_eq!(p.on_ack(0, 19 * MSS, false, false), 20 * MSS);
        // Pipe 9 segments and a bit: 10, at ssthresh, so min(ssthresh − pipe, ..) = 0; forced 1.
        assert_eq!(p.on_ack(1, 9 * MSS + 1, false, true), 10 * MSS + 1);
        p.on_sent();
        assert_eq!(p.on_ack(1, 10 * MSS, false, false), 10 * MSS);
        assert_eq!(p.on_ack(0, 8 * MSS, false, false), 10 * MSS, "kept while nothing is delivered");
    }
}
