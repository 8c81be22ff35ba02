//! The receive buffer and Linux receive autotuning ("dynamic right-sizing",
//! `tcp_moderate_rcvbuf`), as net/ipv4/tcp_input.c `tcp_rcv_space_adjust` and
//! `tcp_rcv_rtt_measure{,_ts}` do it; the advertised window is `adv_win_fraction` of the free
//! buffer (RFC 9293 §3.8.6 leaves the policy to the receiver; Linux `tcp_adv_win_scale`).
//!
//! * The receiver estimates the RTT: with timestamps, `now − TSecr` of arriving full-sized
//!   data segments smoothed with gain 1/8; without, the time to receive one advertised window
//!   (the minimum is kept).
//! * Once per estimated RTT it counts the bytes the application consumed in that RTT
//!   (`copied`). If that exceeds the previous maximum (`space`), the window it wants is
//!   `rcvwin = 2·copied + 16·MSS`, plus twice the relative growth `rcvwin·(copied −
//!   space)/space` to let a slow-starting sender double, and the buffer grows to the size
//!   whose advertised fraction is `rcvwin` (Linux converts through the skb truesize ratio;
//!   here the ratio is `1 / adv_win_fraction`), never above `tcp_rmem[2]`, never shrinking.
//! * The first `space` is min(initial window, 10·MSS), as `tcp_init_buffer_space` sets it.

use multiconn_core::{Dur, Time};

/// A receive buffer (tcp_rmem) with Linux autotuning (see the module header).
#[derive(Clone, Debug)]
pub struct RcvBuf {
    rcvbuf: u64,
    max: u64,
    autotune: bool,
    fraction: f64,
    mss: u64,
    space: u64,
    space_seq: u64,
    space_time: Time,
    rtt: Option<Dur>,
    /// Window-based measurement without timestamps: (rcv_nxt to reach, start time).
    win_measure: Option<(u64, Time)>,
}

impl RcvBuf {
    /// `rmem` = tcp_rmem (min, default, max).
    pub fn new(rmem: [u64; 3], autotune: bool, fraction: f64, mss: u64) -> RcvBuf {
        let fraction = if fraction.is_finite() && fraction > 0.0 {
            fraction.min(1.0)
        } else {
            0.5
        };
        let rcvbuf = rmem[1].max(rmem[0]);
        let initial_window = ((rcvbuf as f64 * fraction) as u64).min(65535);
        RcvBuf {
            rcvbuf,
            max: rmem[2].max(rcvbuf),
            autotune,
            fraction,
            mss,
            space: initial_window.min(10 * mss).max(1),
            space_seq: 0,
            space_time: Time::ZERO,
            rtt: None,
            win_measure: None,
        }
    }

    /// Current buffer size in bytes (`sk_rcvbuf`).
    pub fn rcvbuf(&self) -> u64 {
        self.rcvbuf
    }
    /// The receiver's RTT estimate (`rcv_rtt_est`); `None` before the first measurement.
    pub fn receiver_rtt(&self) -> Option<Dur> {
        self.rtt
    }
    /// Largest window this buffer can ever advertise.
    pub fn max_window(&self) -> u64 {
        (self.max as f64 * self.fraction) as u64
    }

    /// The window to advertise with `queued` bytes held (out of order or unread).
    pub fn window(&self, queued: u64) -> u64 {
        (self.rcvbuf.saturating_sub(queued) as f64 * self.fraction) as u64
    }

    /// The connection is established: measurements start at `now` from stream position
    /// `copied`.
    pub fn start(&mut self, now: Time, copied: u64) {
        self.space_time = now;
        self.space_seq = copied;
    }

    /// An RTT sample from the timestamps option (`now − TSecr`) on a full-sized segment.
    pub fn on_ts_sample(&mut self, sample: Dur) {
        if sample.0 == 0 {
            return;
        }
        self.rtt = Some(match self.rtt {
            None => sample,
            Some(r) => Dur(r.0 - r.0 / 8 + sample.0 / 8),
        });
    }

    /// Sets the receiver's RTT estimate from outside (an MPTCP connection-level buffer takes
    /// the largest estimate of its subflows, as Linux `mptcp_rcv_space_adjust` does).
    pub fn set_receiver_rtt(&mut self, rtt: Dur) {
        if rtt.0 > 0 {
            self.rtt = Some(rtt);
        }
    }

    /// Window-based RTT measurement without timestamps: call with `rcv_nxt` after data
    /// arrived and the window currently advertised.
    pub fn on_data_no_ts(&mut self, now: Time, rcv_nxt: u64, window: u64) {
        match self.win_measure {
            Some((seq, _)) if rcv_nxt < seq => return,
            Some((_, t)) => {
                let m = now.since(t);
                if m.0 > 0 {
                    self.rtt = Some(self.rtt.map_or(m, |r| r.min(m)));
                }
            }
            None => {}
        }
        self.win_measure = Some((rcv_nxt + window.max(1), now));
    }

    /// The application has consumed the stream up to `copied` (tcp_rcv_space_adjust).
    pub fn on_consumed(&mut self, now: Time, copied: u64) {
        let Some(rtt) = self.rtt else { return };
        if now.since(self.space_time) < rtt {
            return;
        }
        let got = copied.saturating_sub(self.space_seq);
        if got > self.space {
            if self.autotune {
                let mut rcvwin = 2 * got + 16 * self.mss;
                let grow =
                    (rcvwin as u128 * (got - self.space) as u128 / self.space as u128) as u64;
                rcvwin = rcvwin.saturating_add(2 * grow);
                let want = ((rcvwin as f64 / self.fraction) as u64).min(self.max);
                if want > self.rcvbuf {
                    self.rcvbuf = want;
                }
            }
            self.space = got;
        }
        self.space_seq = copied;
        self.space_time = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn initial_window_is_half_the_default_buffer_capped_at_64k() {
        let b = RcvBuf::new([4096, 131072, 6291456], true, 0.5, 1448);
        assert_eq!(b.window(0), 65536);
        assert_eq!(b.max_window(), 3145728);
    }

    #[test]
    fn grows_once_per_rtt_to_twice_the_consumption_and_never_shrinks() {
        let mut b = RcvBuf::new([4096, 131072, 6291456], true, 0.5, 1000);
        b.start(Time(0), 0);
        b.on_ts_sample(Dur(100 * MS));
        // Less than one RTT later: nothing.
        b.on_consumed(Time(50 * MS), 40_000);
        assert_eq!(b.rcvbuf(), 131072);
        // 100 kB in the first RTT: space was 10 000 → rcvwin = 216 000 + 2·216 000·9 = 4 104 000.
        b.on_consumed(Time(100 * MS), 100_000);
        // The buffer wants 2 · 4 104 000 bytes and is capped at tcp_rmem[2].
        assert_eq!(b.rcvbuf(), 6291456);
        let before = b.rcvbuf();
        b.on_consumed(Time(300 * MS), 110_000);
        assert_eq!(b.rcvbuf(), before);
    }

    #[test]
    fn no_autotune_keeps_the_buffer() {
        let mut b = RcvBuf::new([4096, 32768, 6291456], false, 0.5, 1000);
        b.on_ts_sample(Dur(10 * MS));
        b.on_consumed(Time(20 * MS), 1_000_000);
        assert_eq!(b.rcvbuf(), 32768);
        assert_eq!(b.window(8192), 12288);
    }
}
