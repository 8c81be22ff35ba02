//! One end of a TCP connection as an [`Endpoint`]: glues the handshake, the sender, the
//! receiver and the application together and builds segments (RFC 9293 §3.10 event
//! processing, ACKs piggybacked on data, §3.8.6.3). With ECN on (profile or flow `ecn`) the
//! client's SYN asks for it and a server with ECN on agrees (RFC 3168 §6.1.1); the IP ECN
//! field of sent segments comes from the sender (ECT(0) on new data only), that of arriving
//! packets is handed to the receiver with the segment.
//!
//! Accurate ECN (RFC 9768): an end asks for it (or, as a server, agrees to it) when the
//! profile's `accecn` is on or its controller is scalable (Prague,
//! [`multiconn_cc::Controller::scalable_ecn`]); the data receiver's end may do less
//! (profile `receiver_ecn`: a kernel with RFC 3168 only, or none). With AccECN agreed every
//! segment but the SYNs carries the receiver's ACE field, and a scalable controller's data
//! goes ECT(1) (RFC 9331 §4.1). A scalable controller whose handshake ends without AccECN
//! gives way to NewReno, as Linux's Prague falls back to "prague-reno": with RFC 3168 agreed
//! it sends ECT(0) and halves once per window on ECE, without ECN it sees only losses; its
//! pacer stays on.

use multiconn_cc::{CcConfig, CcKind, Pacer, PacerConfig, RttEstimator};
use multiconn_core::{Dur, Ecn, FlowId, Packet, Payload, Time, TransportSample};
use multiconn_transport::profile::{RtoRule, TcpEcn, TcpKnobs, TransportKind};
use multiconn_transport::{AppEvent, ConnectionParams, EcnStats, Endpoint, Observation, Observations, Profile, ProfileError, Role, Workload};

use crate::app::App;
use crate::autotune::RcvBuf;
use crate::gro::{Gro, GroConfig};
use crate::handshake::{accecn_reflect, Handshake, PeerOptions, State};
use crate::receiver::{Receiver, ReceiverConfig};
use crate::rto::RtoTimer;
use crate::segment::{
    max_sack_blocks, mss_for, ts_from_time, Flags, SackBlocks, Segment, Timestamps,
};
use crate::sender::{Sender, SenderConfig};

/// Window scale shift Linux picks for a receive buffer of up to `space` bytes
/// (`tcp_select_initial_window`).
pub fn wscale_for(space: u64) -> u8 {
    let mut space = space;
    let mut ws = 0u8;
    while space > 65535 && ws < 14 {
        space >>= 1;
        ws += 1;
    }
    ws
}

/// One end of a single-path TCP connection carrying TLS 1.3 and the workload (see the crate
/// header).
pub struct TcpEndpoint {
    role: Role,
    flow: FlowId,
    start: Time,
    mss: u64,
    sack: bool,
    timestamps: bool,
    our_wscale: u8,
    /// ECN wanted (profile `ecn`) until the handshake, then whether both ends agreed.
    ecn: bool,
    /// The profile asked for ECN (the summary reports ECN only then).
    ecn_configured: bool,
    /// The ECN feedback this end does (asks for as a client, agrees to as a server).
    ecn_support: TcpEcn,
    /// The ECN feedback the handshake agreed on.
    ecn_mode: TcpEcn,
    /// The controller's settings, to build NewReno for a scalable controller without AccECN.
    cc_cfg: CcConfig,
    ect_sent: u64,
    ce_received: u64,
    hs: Handshake,
    sender: Sender,
    receiver: Receiver,
    /// Receive-side coalescing of arriving data segments (profile `gro`).
    gro: Gro,
    /// Segments GRO passed up, waiting to be processed (kept to reuse its allocation).
    gro_out: Vec<Segment>,
    app: App,
    /// Bytes the application still wants to write (saturates for an endless download).
    pending_write: u64,
    pkt_seq: u64,
    /// What an invariant checker watching this end sees (the bytes handed to the application).
    observations: Observations,
}

impl std::fmt::Debug for TcpEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpEndpoint")
            .field("role", &self.role)
            .field("state", &self.hs.state())
            .field("sender", &self.sender)
            .finish()
    }
}

impl TcpEndpoint {
    /// Whether the profile offers the connection's controller (the one rule
    /// [`new`](Self::new) applies), without building it.
    pub fn check(params: &ConnectionParams) -> Result<(), ProfileError> {
        params.cc_config(1).map(|_| ())
    }

    /// One end of the connection `params` describes; fails if the profile does not offer
    /// the congestion controller.
    pub fn new(role: Role, params: &ConnectionParams) -> Result<TcpEndpoint, ProfileError> {
        let profile = &params.profile;
        let knobs: TcpKnobs = match &profile.tcp {
            Some(k) => k.clone(),
            None => Profile::default_for(TransportKind::Tcp)
                .tcp
                .expect("the default TCP profile has TCP knobs"),
        };
        let mss = mss_for(
            params.max_packet_size,
            knobs.timestamps,
            profile.packet.max_payload,
        ) as u64;
        let cc_cfg: CcConfig = params.cc_config(mss)?;
        let rec = &profile.recovery;
        let rtt = RttEstimator::new(rec.initial_rtt, rec.rttvar_rule);
        let timer = || match rec.rto_rule {
            RtoRule::Rfc6298 => RtoTimer::new(rec.granularity, rec.min_rto, rec.max_rto, rec.initial_rto),
            // Linux floors the variance term at min_rto: pass it as the granularity G of
            // srtt + max(G, 4·rttvar) and leave no separate floor.
            RtoRule::Linux => RtoTimer::new(rec.min_rto.max(rec.granularity), Dur::ZERO, rec.max_rto, rec.initial_rto),
        };
        let cc = multiconn_cc::build(&cc_cfg);
        // AccECN when asked for or when the controller needs it (Linux TCP_CONG_NEEDS_ACCECN);
        // the data receiver's kernel may do less.
        let own = if profile.accecn || cc.scalable_ecn() {
            TcpEcn::AccEcn
        } else if profile.ecn {
            TcpEcn::Rfc3168
        } else {
            TcpEcn::None
        };
        let data_receiver = if matches!(params.workload, Workload::Upload { .. }) { Role::Server } else { Role::Client };
        let ecn_support = match profile.receiver_ecn {
            Some(r) if role == data_receiver => r,
            _ => own,
        };
        let ecn_configured = profile.ecn || own != TcpEcn::None || profile.receiver_ecn.is_some();
        let pacer = Pacer::new(
            PacerConfig {
                enabled: profile.pacing.enabled,
                factor: profile.pacing.factor,
                burst: profile.pacing.burst,
                max_datagram_size: mss,
                initial_window: cc_cfg.initial_window,
            }
            .for_controller(cc.as_ref()),
        );
        let sender_cfg = SenderConfig::from_profile(mss, &knobs, rec);
        let sender = Sender::new(sender_cfg, 1, rtt, timer(), cc, pacer);
        let our_wscale = wscale_for(knobs.rmem[2].max(knobs.rmem[1]));
        let rcv_cfg = ReceiverConfig {
            mss,
            ack_threshold: profile.ack.ack_eliciting_threshold,
            max_ack_delay: profile.ack.max_ack_delay,
            immediate_ack_on_reorder: profile.ack.immediate_ack_on_reorder,
            sack: knobs.sack,
            timestamps: knobs.timestamps,
            wscale: our_wscale,
        };
        let buf = RcvBuf::new(knobs.rmem, knobs.autotune, knobs.adv_win_fraction, mss);
        Ok(TcpEndpoint {
            role,
            flow: params.flow,
            start: params.start,
            mss,
            sack: knobs.sack,
            timestamps: knobs.timestamps,
            our_wscale,
            ecn: ecn_support != TcpEcn::None,
            ecn_configured,
            ecn_support,
            ecn_mode: TcpEcn::None,
            cc_cfg,
            ect_sent: 0,
            ce_received: 0,
            hs: Handshake::new(role, timer()),
            sender,
            receiver: Receiver::new(rcv_cfg, buf, 1),
            gro: Gro::new(GroConfig { enabled: knobs.gro, max_bytes: knobs.gro_max_bytes }),
            gro_out: Vec::new(),
            app: App::new(role, params.exchanges()),
            pending_write: 0,
            pkt_seq: 0,
            observations: Observations::default(),
        })
    }

    /// Client or server.
    pub fn role(&self) -> Role {
        self.role
    }
    /// Payload bytes per segment (MSS), from the packet size, headers and options.
    pub fn mss(&self) -> u64 {
        self.mss
    }
    /// Where the three-way handshake is.
    pub fn state(&self) -> State {
        self.hs.state()
    }
    /// The sending half: send buffer, loss recovery, RTO and congestion controller.
    pub fn sender(&self) -> &Sender {
        &self.sender
    }
    /// The receiving half: reassembly, SACK, delayed ACKs and advertised window.
    pub fn receiver(&self) -> &Receiver {
        &self.receiver
    }
    /// The receive-side coalescing (GRO) of this end.
    pub fn gro(&self) -> &Gro {
        &self.gro
    }

    fn negotiate(&mut self, peer: PeerOptions) {
        let sack = self.sack && peer.sack;
        let ts = self.timestamps && peer.timestamps;
        let (ours, theirs) = match peer.wscale {
            Some(w) => (self.our_wscale, w),
            None => (0, 0),
        };
        self.sack = sack;
        self.timestamps = ts;
        self.our_wscale = ours;
        self.ecn_mode = match self.ecn_support {
            TcpEcn::None => TcpEcn::None,
            TcpEcn::AccEcn if peer.accecn => TcpEcn::AccEcn,
            // A client that asked for AccECN takes an RFC 3168 answer; a server that does
            // AccECN agrees to RFC 3168 with a client that asks for that (RFC 9768 §3.1.1).
            _ if peer.ecn => TcpEcn::Rfc3168,
            _ => TcpEcn::None,
        };
        self.ecn = self.ecn_mode != TcpEcn::None;
        if self.ecn_mode == TcpEcn::AccEcn {
            self.sender.set_accecn();
            self.receiver.set_accecn((self.role == Role::Client).then(|| accecn_reflect(peer.ip_ecn)));
        } else {
            self.sender.set_ecn(self.ecn);
            self.receiver.set_ecn(self.ecn);
            if self.sender.controller().scalable_ecn() {
                let reno = CcConfig { kind: CcKind::NewReno, external: None, ..self.cc_cfg.clone() };
                self.sender.replace_controller(multiconn_cc::build(&reno));
            }
        }
        self.sender.negotiate(sack, ts);
        self.receiver.negotiate(sack, ts, ours);
        self.sender.set_peer_window(peer.window, theirs);
        if ts {
            self.receiver.set_ts_recent(peer.tsval);
        }
    }

    fn on_established(&mut self, now: Time) {
        if let Some(sample) = self.hs.on_established(now) {
            self.sender
                .rtt_mut()
                .update(sample, multiconn_core::Dur::ZERO);
        }
        self.receiver.start(now);
        let w = self.app.on_established();
        self.pending_write = self.pending_write.saturating_add(w);
        self.fill_send_buffer();
    }

    fn fill_send_buffer(&mut self) {
        let n = self.pending_write.min(self.sender.writable());
        if n > 0 {
            self.sender.write(n);
            self.pending_write -= n;
        }
        self.sender.set_more_pending(self.pending_write > 0);
    }

    fn build(&mut self, now: Time, seq: u64, len: u32, syn: bool) -> Segment {
        let ts = if syn && self.role == Role::Client {
            self.timestamps.then(|| Timestamps {
                tsval: ts_from_time(now),
                tsecr: 0,
            })
        } else {
            self.timestamps.then(|| Timestamps {
                tsval: ts_from_time(now),
                tsecr: self.receiver.ts_recent(),
            })
        };
        if syn {
            let is_ack = self.role == Role::Server;
            let offer_ws =
                self.role == Role::Client || self.hs.peer().is_some_and(|p| p.wscale.is_some());
            return Segment {
                seq: 0,
                ack: if is_ack { self.receiver.rcv_nxt() } else { 0 },
                // RFC 3168 §6.1.1: an ECN-setup SYN carries ECE and CWR, an ECN-setup
                // SYN-ACK ECE alone (the server's `ecn` is already the agreement). RFC 9768
                // §3.1.1: an AccECN SYN all three, an AccECN SYN-ACK the reflection of the
                // SYN's IP ECN field.
                flags: match (is_ack, self.ecn_support, self.ecn_mode) {
                    (false, TcpEcn::AccEcn, _) => Flags { syn: true, ack: false, ece: true, cwr: true, ae: true },
                    (true, _, TcpEcn::AccEcn) => {
                        let mut f = Flags { syn: true, ack: true, ..Flags::default() };
                        f.set_ace(accecn_reflect(self.hs.peer().map_or(Ecn::NotEct, |p| p.ip_ecn)));
                        f
                    }
                    _ => Flags {
                        syn: true,
                        ack: is_ack,
                        ece: self.ecn,
                        cwr: self.ecn && !is_ack,
                        ae: false,
                    },
                },
                window: self.receiver.syn_window(),
                wscale: offer_ws.then_some(self.our_wscale),
                sack_permitted: self.sack,
                mss: Some(self.mss as u32),
                ts,
                sack: SackBlocks::new(),
                len: 0,
                ip_ecn: Ecn::NotEct,
                packets: 1,
            };
        }
        let info = self.receiver.build_ack(max_sack_blocks(self.timestamps));
        let mut flags = Flags {
            syn: false,
            ack: true,
            ece: info.ece,
            cwr: false,
            ae: false,
        };
        if let Some(ace) = info.ace {
            flags.set_ace(ace);
        }
        Segment {
            seq,
            ack: info.ack,
            flags,
            window: info.window,
            wscale: None,
            sack_permitted: false,
            mss: None,
            ts: ts.map(|t| Timestamps {
                tsecr: info.tsecr,
                ..t
            }),
            sack: info.sack,
            len,
            ip_ecn: Ecn::NotEct,
            packets: 1,
        }
    }

    fn packet(&mut self, now: Time, next_id: &mut u64, seg: Segment) -> Packet {
        let ecn = seg.ip_ecn;
        self.ect_sent += u64::from(matches!(ecn, Ecn::Ect0 | Ecn::Ect1));
        let p = Packet::new(*next_id, self.flow, seg.wire_size(), self.pkt_seq, now)
            .with_payload(Payload::with_header(seg))
            .with_ecn(ecn);
        *next_id += 1;
        self.pkt_seq += 1;
        p
    }

    fn process(&mut self, now: Time, seg: &Segment) {
        let out = self.receiver.on_segment(now, seg);
        if out.in_order > 0 {
            let n = self.receiver.read(now, u64::MAX);
            let to = self.receiver.copied();
            self.observations.note(Observation::Delivered { stream: 0, from: to - n, to });
            let w = self.app.on_received(to);
            self.pending_write = self.pending_write.saturating_add(w);
        }
        self.sender.on_ack(now, seg);
        self.fill_send_buffer();
    }
}

impl TcpEndpoint {
    /// Passes up what GRO holds: the end of the instant it arrived in.
    fn flush_gro(&mut self, now: Time) {
        if let Some(seg) = self.gro.flush() {
            self.segment(now, &seg);
        }
    }

    /// One segment as TCP receives it (after GRO).
    fn segment(&mut self, now: Time, seg: &Segment) {
        if seg.flags.syn {
            match (self.role, self.hs.state(), seg.flags.ack) {
                (Role::Server, State::Idle, false) => {
                    self.hs.on_syn(seg);
                    if let Some(peer) = self.hs.peer() {
                        self.negotiate(peer);
                    }
                }
                (Role::Server, State::SynReceived, false) => self.hs.on_syn(seg),
                (Role::Client, State::SynSent, true) if seg.ack == 1 => {
                    self.hs.on_syn_ack(seg);
                    if let Some(peer) = self.hs.peer() {
                        self.negotiate(peer);
                    }
                    self.on_established(now);
                    self.receiver.force_ack();
                }
                (_, State::Established, _) => self.receiver.force_ack(),
                _ => {}
            }
            return;
        }
        match self.hs.state() {
            State::Established => self.process(now, seg),
            State::SynReceived if seg.flags.ack && seg.ack == 1 => {
                self.on_established(now);
                self.process(now, seg);
            }
            _ => {}
        }
    }
}

impl Endpoint for TcpEndpoint {
    fn observe(&mut self, on: bool) {
        self.observations.watch(on);
    }

    fn drain_observations(&mut self, out: &mut Vec<Observation>) {
        self.observations.drain(out);
    }

    fn handle_packet(&mut self, now: Time, pkt: Packet) {
        let size = pkt.size;
        let Some(payload) = pkt.payload else { return };
        let Some(seg) = payload.get::<Segment>() else {
            return;
        };
        self.ce_received += u64::from(pkt.ecn == Ecn::Ce);
        // The segment as the receiver sees it: with the ECN field the network delivered.
        let marked;
        let seg = if seg.ip_ecn == pkt.ecn {
            seg
        } else {
            marked = Segment { ip_ecn: pkt.ecn, ..seg.clone() };
            &marked
        };
        if !self.gro.enabled() {
            self.segment(now, seg);
            return;
        }
        // Only an established connection's data is coalesced; anything else passes what is
        // held up first.
        if !self.hs.established() {
            self.flush_gro(now);
            self.segment(now, seg);
            return;
        }
        let mut out = std::mem::take(&mut self.gro_out);
        self.gro.receive(now, seg.clone(), size, &mut out);
        for s in out.drain(..) {
            self.segment(now, &s);
        }
        self.gro_out = out;
    }

    fn poll_transmit(&mut self, now: Time, next_id: &mut u64) -> Option<Packet> {
        if self.role == Role::Client && self.hs.state() == State::Idle && now >= self.start {
            self.hs.open();
        }
        if self.hs.control_due() {
            let seg = self.build(now, 0, 0, true);
            let rtt = self.sender.rtt().clone();
            self.hs.on_control_sent(now, &rtt);
            return Some(self.packet(now, next_id, seg));
        }
        if !self.hs.established() {
            return None;
        }
        if let Some(d) = self.sender.poll_data(now) {
            self.fill_send_buffer();
            let mut seg = self.build(now, d.seq, d.len, false);
            // RFC 3168's CWR; with AccECN the flag is the ACE field's and `d.cwr` is never set.
            seg.flags.cwr |= d.cwr;
            if d.ect {
                seg.ip_ecn = if self.sender.scalable() { Ecn::Ect1 } else { Ecn::Ect0 };
            }
            return Some(self.packet(now, next_id, seg));
        }
        if self.receiver.ack_due() {
            let seg = self.build(now, self.sender.scoreboard().snd_nxt(), 0, false);
            return Some(self.packet(now, next_id, seg));
        }
        None
    }

    fn poll_timeout(&self) -> Option<Time> {
        let start =
            (self.role == Role::Client && self.hs.state() == State::Idle).then_some(self.start);
        let (delack, sender) = if self.hs.established() {
            (self.receiver.delack_deadline(), self.sender.next_timeout())
        } else {
            (None, None)
        };
        let gro = self.gro.deadline();
        Time::earliest(
            Time::earliest(Time::earliest(start, self.hs.deadline()), Time::earliest(delack, sender)),
            gro,
        )
    }

    fn handle_timeout(&mut self, now: Time) {
        if self.gro.deadline().is_some_and(|t| t <= now) {
            self.flush_gro(now);
        }
        if self.role == Role::Client && self.hs.state() == State::Idle && now >= self.start {
            self.hs.open();
        }
        self.hs.on_timeout(now);
        if self.hs.established() {
            self.receiver.on_timeout(now);
            self.sender.on_timeout(now);
        }
    }

    fn poll_event(&mut self) -> Option<AppEvent> {
        self.app.poll_event()
    }

    fn sample(&self) -> TransportSample {
        let rtt = self.sender.rtt();
        TransportSample {
            cwnd: self.sender.window(),
            bytes_in_flight: self.sender.scoreboard().pipe(),
            srtt: if rtt.has_sample() {
                rtt.smoothed()
            } else {
                multiconn_core::Dur::ZERO
            },
            retransmissions: self.sender.retransmissions(),
            spurious_retransmissions: self.sender.spurious_retransmissions(),
            lost: self.sender.lost(),
        }
    }

    fn cc_state(&self) -> &'static str {
        self.sender.controller().state().name()
    }

    fn ecn_stats(&self) -> Option<EcnStats> {
        self.ecn_configured.then(|| EcnStats {
            state: match (self.hs.established(), self.ecn_mode) {
                (true, TcpEcn::AccEcn) => "accecn",
                (true, TcpEcn::Rfc3168) => "negotiated",
                _ => "not_negotiated",
            }
            .to_string(),
            ect_sent: self.ect_sent,
            ce_received: self.ce_received,
            echoes_sent: self.receiver.ece_acks(),
            echoes_received: self.sender.ece_acks(),
            congestion_responses: self.sender.ecn_responses(),
        })
    }
}

