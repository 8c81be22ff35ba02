//! The three-way handshake (RFC 9293 §3.5) and option negotiation: MSS (§3.7.1), window
//! scale and timestamps only when both SYNs carry them (RFC 7323 §2.2, §3.2), SACK only when
//! both sent SACK-permitted (RFC 2018 §2). SYN and SYN-ACK are retransmitted on the RFC 6298
//! initial RTO with exponential backoff (§5.5, §5.7); the handshake yields an RTT sample only
//! if its SYN was sent once (Karn's rule). ECN is agreed when the SYN carries ECE and CWR and
//! the SYN-ACK ECE alone (RFC 3168 §6.1.1).
//!
//! Accurate ECN (RFC 9768 §3.1): the SYN sets AE, CWR and ECE; a server that does AccECN
//! answers with a SYN-ACK whose (AE, CWR, ECE) reflect the IP ECN field the SYN arrived with
//! ([`accecn_reflect`]: not-ECT 0,1,0; ECT(1) 0,1,1; ECT(0) 1,0,0; CE 1,1,0), and the
//! client's first ACK reflects the SYN-ACK's field the same way in its ACE field. A server
//! that does only RFC 3168 answers ECE alone (as it would an RFC 3168 SYN) and both use
//! RFC 3168; one without ECN answers none of the three. A client that asked for AccECN reads
//! the SYN-ACK by RFC 9768's Table 2: 0,0,0 no ECN; 0,0,1 and 1,0,1 (an ECN-nonce server)
//! RFC 3168; 1,1,1 (a server reflecting the SYN's flags) no ECN; the four reflections AccECN.
//! Not modelled: falling back to a plain SYN after a lost AccECN SYN (§3.1.4), and the
//! SYN-ACK's own ECT codepoint (SYNs and SYN-ACKs go not-ECT).

use multiconn_cc::RttEstimator;
use multiconn_core::{Dur, Ecn, Time};
use multiconn_transport::Role;

use crate::rto::RtoTimer;
use crate::segment::Segment;

/// Connection state (RFC 9293 §3.3.2), as far as the model goes: no teardown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Client before its start time; server listening.
    Idle,
    /// Client: SYN sent, waiting for the SYN-ACK.
    SynSent,
    /// Server: SYN received and SYN-ACK sent, waiting for the ACK.
    SynReceived,
    /// The handshake is complete; data flows.
    Established,
}

/// What the peer's SYN (or SYN-ACK) offered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeerOptions {
    /// The SYN's window field in bytes (never scaled, RFC 7323 §2.2).
    pub window: u16,
    /// Window scale shift offered (at most 14); `None` without the option.
    pub wscale: Option<u8>,
    /// SACK-permitted was offered (RFC 2018 §2).
    pub sack: bool,
    /// The timestamps option was present (RFC 7323 §3.2).
    pub timestamps: bool,
    /// MSS option in bytes (RFC 9293 §3.7.1); `None` without it.
    pub mss: Option<u32>,
    /// TSval of the SYN (timestamp clock, see [`crate::segment::ts_from_time`]); 0 without timestamps.
    pub tsval: u64,
    /// The SYN was an ECN-setup SYN (ECE and CWR set), or the SYN-ACK an ECN-setup SYN-ACK
    /// (ECE set, CWR clear): RFC 3168 §6.1.1. An AccECN SYN is one too.
    pub ecn: bool,
    /// The SYN was an AccECN setup SYN (AE, CWR and ECE set), or the SYN-ACK one of the four
    /// AccECN answers (RFC 9768 §3.1.1).
    pub accecn: bool,
    /// The IP ECN field the SYN or SYN-ACK arrived with (what an AccECN answer reflects).
    pub ip_ecn: Ecn,
}

/// The (AE, CWR, ECE) an AccECN SYN-ACK carries, and the ACE of the client's first ACK, for
/// the IP ECN field of the SYN (or SYN-ACK) they answer (RFC 9768 §3.1.1 Table 2, §3.2.2.1).
pub fn accecn_reflect(ip_ecn: Ecn) -> u8 {
    match ip_ecn {
        Ecn::NotEct => 0b010,
        Ecn::Ect1 => 0b011,
        Ecn::Ect0 => 0b100,
        Ecn::Ce => 0b110,
    }
}

impl PeerOptions {
    /// The options `seg`, a SYN or SYN-ACK, carries (window scale capped at 14).
    pub fn from_syn(seg: &Segment) -> PeerOptions {
        PeerOptions {
            window: seg.window,
            wscale: seg.wscale.map(|w| w.min(14)),
            sack: seg.sack_permitted,
            timestamps: seg.ts.is_some(),
            mss: seg.mss,
            tsval: seg.ts.map_or(0, |t| t.tsval),
            ecn: if seg.flags.ack { seg.flags.ece && !seg.flags.cwr } else { seg.flags.ece && seg.flags.cwr },
            accecn: if seg.flags.ack { matches!(seg.flags.ace(), 0b010 | 0b011 | 0b100 | 0b110) } else { seg.flags.ace() == 0b111 },
            ip_ecn: seg.ip_ecn,
        }
    }
}

/// One end's three-way handshake: state, SYN/SYN-ACK retransmission timer and the peer's
/// options (see the module header).
#[derive(Clone, Debug)]
pub struct Handshake {
    role: Role,
    state: State,
    send_pending: bool,
    sent_at: Option<Time>,
    retransmitted: bool,
    timer: RtoTimer,
    peer: Option<PeerOptions>,
}

impl Handshake {
    /// `Idle`, retransmitting on `timer`.
    pub fn new(role: Role, timer: RtoTimer) -> Handshake {
        Handshake {
            role,
            state: State::Idle,
            send_pending: false,
            sent_at: None,
            retransmitted: false,
            timer,
            peer: None,
        }
    }
    /// Current state.
    pub fn state(&self) -> State {
        self.state
    }
    /// Client or server.
    pub fn role(&self) -> Role {
        self.role
    }
    /// The state is `Established`.
    pub fn established(&self) -> bool {
        self.state == State::Established
    }
    /// The options of the peer's SYN (server) or SYN-ACK (client), once one arrived.
    pub fn peer(&self) -> Option<PeerOptions> {
        self.peer
    }
    /// A SYN (client) or SYN-ACK (server) should leave now.
    pub fn control_due(&self) -> bool {
        self.send_pending && matches!(self.state, State::SynSent | State::SynReceived)
    }
    /// When the SYN or SYN-ACK is retransmitted; `None` outside `SynSent` and `SynReceived`.
    pub fn deadline(&self) -> Option<Time> {
        if matches!(self.state, State::SynSent | State::SynReceived) {
            self.timer.deadline()
        } else {
            None
        }
    }

    /// Client: the application opens the connection.
    pub fn open(&mut self) {
        if self.role == Role::Client && self.state == State::Idle {
            self.state = State::SynSent;
            self.send_pending = true;
        }
    }

    /// Server: a SYN arrived. A repeated SYN makes the SYN-ACK go again.
    pub fn on_syn(&mut self, seg: &Segment) {
        if self.role != Role::Server {
            return;
        }
        match self.state {
            State::Idle => {
                self.peer = Some(PeerOptions::from_syn(seg));
                self.state = State::SynReceived;
                self.send_pending = true;
            }
            State::SynReceived => self.send_pending = true,
            _ => {}
        }
    }

    /// Client: the SYN-ACK arrived.
    pub fn on_syn_ack(&mut self, seg: &Segment) {
        if self.role == Role::Client && self.state == State::SynSent {
            self.peer = Some(PeerOptions::from_syn(seg));
        }
    }

    /// The SYN or SYN-ACK left at `now`.
    pub fn on_control_sent(&mut self, now: Time, rtt: &RttEstimator) {
        self.send_pending = false;
        if self.sent_at.is_some() {
            self.retransmitted = true;
        }
        self.sent_at = Some(now);
        self.timer.restart(now, rtt);
    }

    /// The retransmission timer fired by `now`: back off and send the SYN or SYN-ACK again.
    pub fn on_timeout(&mut self, now: Time) {
        if matches!(self.state, State::SynSent | State::SynReceived) && self.timer.expired(now) {
            self.timer.on_expired();
            self.send_pending = true;
        }
    }

    /// Our SYN was acknowledged: established. Returns the RTT sample it gives, if any.
    pub fn on_established(&mut self, now: Time) -> Option<Dur> {
        if self.state == State::Established {
            return None;
        }
        self.state = State::Established;
        self.send_pending = false;
        self.timer.stop();
        match (self.sent_at, self.retransmitted) {
            (Some(t), false) => Some(now.since(t)),
            _ => None,
        }
    }
}
