//! Packet schedulers: which path carries the next packet of a multipath connection, which
//! other paths carry a duplicate, or whether to wait for a faster path.
//!
//! The transport (the Multipath QUIC model, draft-ietf-quic-multipath-21, or the MPTCP model,
//! RFC 8684) builds one [`PathView`] per path and a [`Request`] saying what it is about to send,
//! and calls [`Scheduler::decide`]. The answer is a [`Decision`]; the transport then builds the
//! packet (the stream part with [`crate::priority::StreamPacker`]) and sends it. Nothing here
//! reads a clock or keeps packets: a scheduler holds at most a few words of state (the
//! round-robin turn, ECF's waiting flag, BLEST's λ), so the same code runs in the simulator and
//! in the emulator.
//!
//! Common rules, shared by every scheduler:
//!
//! * **Candidates.** Only paths with `usable == true` are ever named. Path status follows the
//!   draft (§1.6 of `reference/mpquic-and-transport.md`): a backup path is a candidate only when
//!   no usable non-backup path exists — not when the non-backup paths merely have a full window
//!   (that is `Blocked`, as in noq and upstream Linux MPTCP). With
//!   [`SchedulerOptions::skip_initial_path`] path 0 is dropped while another candidate exists
//!   (mp-quic `scheduler.go`).
//! * **Window space.** A path can take a packet when `bytes_in_flight + mss <= cwnd`
//!   ([`PathView::has_window_space`], the same test as XQUIC's `xqc_path_is_full`). With
//!   [`SchedulerOptions::priority_ignores_cwnd`], stream content of a priority stream may go on a
//!   path whose window is full (seed 004 §8.1.4, "congestion fix"); it still counts in
//!   `bytes_in_flight`, so the next background packet waits longer.
//! * **Control content is never duplicated** (seed 004 §6.1: path-specific frames are not sent
//!   redundantly) and never made to wait: it goes on the min-RTT choice (round-robin turn for
//!   [`RoundRobin`]).
//! * **Ties** are broken by the lowest path id, so every decision is a pure function of the
//!   views, the request and the scheduler's own state.
//!
//! Decision rules (reference §3, seed 004 §3.1.2, §6):
//!
//! * [`MinRtt`] (SRTTF): the candidate with window space and the lowest smoothed RTT. Paths
//!   without an RTT sample ("unprobed") are ordered by [`UnprobedPolicy`].
//! * [`TquicMinRtt`] (tquic 1.6, `src/multipath_scheduler/scheduler_minrtt.rs`): min-RTT over
//!   the candidates whose window has room *and whose pacer lets them send now*
//!   (`pacing_ready`, tquic's `can_send`): a path held by its pacer is passed over for the next
//!   one, where [`MinRtt`] waits for it. Control content is never made to wait (min-RTT).
//! * [`RoundRobin`]: the next candidate with window space after the previous turn's path, in
//!   path-id order, [`SchedulerOptions::rr_packets_per_turn`] packets per turn (Linux MPTCP
//!   `mptcp_rr.c` `num_segments`).
//! * [`Redundant`] (RE): stream content on the min-RTT path plus a copy on every other candidate
//!   with window space; control content on the min-RTT path only.
//! * [`SelectiveRedundant`] (SRE, seed 004 §6.2): stream content flagged `redundant` as RE, all
//!   other content as min-RTT.
//! * [`TquicRedundant`] (tquic 1.6, `src/multipath_scheduler/scheduler_redundant.rs`): content
//!   goes on the first candidate in path-id order whose window has room and whose pacer lets it
//!   send (`pacing_ready`), whatever its RTT; stream content is then copied onto every other
//!   candidate *whatever its window*, as queued copies ([`CopyDelivery::Queued`]): each path
//!   sends its queue the next time it sends, ahead of new data and within its own window and
//!   pacer, skipping what was acknowledged meanwhile (the transport's part, as tquic's
//!   connection does with the frames its scheduler buffers per path).
//! * RE and SRE check the paths in parallel by default
//!   ([`SchedulerOptions::redundant_checks`]): the copies are decided with every path's state
//!   known. With [`RedundantChecks::Sequential`] (seed 004's serial loop, §8.1.4, §9.4) a packet
//!   that starts with retransmitted data gets no copy, and with `redundant_min_paths >= 2` it
//!   carries no new data of the copied streams either (`hold_new`); how much of the stream data
//!   each copy carries is the transport's part (each copy path's own room).
//! * [`Blest`] (Ferlin, Alay, Mehani, Boreli, IFIP Networking 2016): when the fastest path is
//!   full and min-RTT would use a slower path `s`, estimate the bytes the fast path can send
//!   during one RTT of `s`; if they exceed the connection-level send window left after `s`'s
//!   bytes in flight plus this packet, wait for the fast path.
//! * [`Ecf`] (Lim, Nahum, Towsley, Gibbens, CoNEXT 2017): when the fastest path is full, wait
//!   for it if `(1 + k/cwnd_f)·rtt_f < (1 + w·β)·(rtt_s + δ)` and
//!   `k/cwnd_s·rtt_s >= 2·rtt_f + δ`, with hysteresis flag `w`.
//! * [`Picoquic`] (picoquic of early 2022, `sender.c` `picoquic_select_next_path_mp` at
//!   48525d89ef4d): among the candidates whose pacer lets them send now and whose window has
//!   room, the least recently used (the oldest last packet sent; a path that never sent comes
//!   first). Not min-RTT: traffic spreads over every path with an open window. picoquic's other
//!   rules live elsewhere: the candidates with the fewest timer-based retransmissions are the
//!   `picoquic` failover profiles' [`crate::path_health::PathHealthSet::usable`], and an ACK
//!   that is due goes on the path with the smallest minimum RTT (`ack_path = "min_rtt"`).
//!
//! Arithmetic is integer (nanoseconds, bytes, per-mille factors, `u128` products).

use std::fmt;
use std::str::FromStr;

use multiconn_core::{Dur, Time};
use serde::{Deserialize, Serialize};

use crate::atsss::AtsssParams;

/// Payload size assumed by [`PathView::new`]: the smallest datagram every QUIC path must carry
/// (RFC 9000 §14).
pub const DEFAULT_MSS: u64 = 1200;

/// What a scheduler sees of one path at the moment of the decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathView {
    /// The transport's path identifier (QUIC path ID, MPTCP subflow index).
    pub id: usize,
    /// Validated, not abandoned, not potentially failed, status not frozen: the path may carry
    /// new data at all. (See [`crate::path_health::PathHealthSet::usable`].)
    pub usable: bool,
    /// The path's status is backup (PATH_STATUS_BACKUP, MPTCP `MP_PRIO` backup).
    pub backup: bool,
    /// Smoothed RTT (the initial guess until `rtt_sampled`).
    pub srtt: Dur,
    /// RTT variation (RFC 9002 §5.3).
    pub rttvar: Dur,
    /// Minimum RTT seen on the path.
    pub min_rtt: Dur,
    /// Congestion window, bytes.
    pub cwnd: u64,
    /// Bytes sent on this path and neither acknowledged nor declared lost.
    pub bytes_in_flight: u64,
    /// Largest payload of one packet on this path, bytes.
    pub mss: u64,
    /// At least one packet was sent on this path.
    pub has_sent_anything: bool,
    /// `srtt` comes from at least one RTT sample, not from the initial guess.
    pub rtt_sampled: bool,
    /// Packets sent on this path so far (mp-quic's "quota"; orders unprobed paths).
    pub packets_sent: u64,
    /// The path's congestion controller is in its initial slow start (ssthresh not yet set);
    /// BLEST then assumes the window doubles per round.
    pub in_slow_start: bool,
    /// Retransmitted data sent on this path is not yet acknowledged (TCP `retrans_stamp != 0`);
    /// BLEST raises λ when the slow path is in that state.
    pub retransmissions_outstanding: bool,
    /// When the path last sent a packet (`None`: never); [`Picoquic`] picks the least recently
    /// used.
    pub last_sent: Option<Time>,
    /// The path's pacer lets it send a packet now. Only [`Picoquic`] reads it (the others
    /// choose first and let the transport wait for the chosen path's pacer).
    pub pacing_ready: bool,
}

impl PathView {
    /// A usable, available path with one RTT sample `srtt` (rttvar = srtt/2, min_rtt = srtt,
    /// as after the first sample, RFC 9002 §5.3), an empty window of `cwnd` bytes and
    /// [`DEFAULT_MSS`]. Change fields with struct-update syntax.
    pub fn new(id: usize, srtt: Dur, cwnd: u64) -> PathView {
        PathView {
            id,
            usable: true,
            backup: false,
            srtt,
            rttvar: Dur(srtt.0 / 2),
            min_rtt: srtt,
            cwnd,
            bytes_in_flight: 0,
            mss: DEFAULT_MSS,
            has_sent_anything: true,
            rtt_sampled: true,
            packets_sent: 0,
            in_slow_start: false,
            retransmissions_outstanding: false,
            last_sent: None,
            pacing_ready: true,
        }
    }

    /// One more full-size packet fits in the congestion window: `bytes_in_flight + mss <= cwnd`.
    pub fn has_window_space(&self) -> bool {
        self.bytes_in_flight.saturating_add(self.mss) <= self.cwnd
    }
}

/// What the next packet carries, as far as path choice is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Content {
    /// Only control frames (MAX_DATA, PATH_STATUS, NEW_CONNECTION_ID, PING, ...). Never
    /// duplicated, never made to wait.
    Control,
    /// Stream data (possibly with control frames in front).
    Stream {
        /// At least one stream in the packet asks for redundancy (seed 004's duplication flag).
        redundant: bool,
        /// At least one stream in the packet is a priority stream (seed 004 §6.3).
        priority: bool,
    },
}

impl Content {
    /// Ordinary stream data: neither redundant nor priority.
    pub const STREAM: Content = Content::Stream { redundant: false, priority: false };

    /// Stream data, of whatever kind.
    pub fn is_stream(self) -> bool {
        matches!(self, Content::Stream { .. })
    }
    /// Stream data of at least one redundant stream.
    pub fn is_redundant_stream(self) -> bool {
        matches!(self, Content::Stream { redundant: true, .. })
    }
    /// Stream data of at least one priority stream.
    pub fn is_priority_stream(self) -> bool {
        matches!(self, Content::Stream { priority: true, .. })
    }
}

/// The question put to a scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// Current virtual time (BLEST rate-limits its λ updates).
    pub now: Time,
    /// What the packet carries.
    pub content: Content,
    /// Bytes of stream data waiting to be sent on the connection, this packet's included
    /// (ECF's `k`).
    pub queued_bytes: u64,
    /// Connection-level send window in bytes, counted from the lowest unacknowledged byte:
    /// MPTCP the peer's receive window (`snd_wnd`), QUIC the connection flow-control limit minus
    /// the data acknowledged in order (BLEST's `|MPTCP_SW|`). `u64::MAX` when unknown.
    pub send_window: u64,
    /// The packet starts with retransmitted stream data (data declared lost and queued again).
    /// Only RE and SRE under [`RedundantChecks::Sequential`] read it.
    pub retransmission: bool,
}

impl Request {
    /// `content` at `now`, nothing else queued, unlimited send window, no retransmission.
    pub fn new(now: Time, content: Content) -> Request {
        Request { now, content, queued_bytes: 0, send_window: u64::MAX, retransmission: false }
    }
}

/// A scheduler's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Build the packet for `path`. Each path in `copies` (never `path` itself, no repeats,
    /// fastest first) gets a duplicate of the packet's stream frames within `scope`
    /// ([`crate::priority::copy_part`]), sent as `delivery` says; control frames always travel
    /// on `path` only. Without copies the scope is `RedundantStreams` and the delivery `Now`
    /// ([`Decision::single`]), except with `hold_new`.
    ///
    /// `hold_new`: the packet carries only retransmitted data of the streams within `scope`;
    /// their new data waits for a later decision. False except under
    /// [`RedundantChecks::Sequential`] with `redundant_min_paths >= 2`, for a packet that starts
    /// with retransmitted data (seed 004 §8.1.4: the path that takes the retransmission is not
    /// usable for the redundant transmission, and with fewer than two usable paths "the
    /// transmission is not performed").
    Send {
        /// The path that carries the packet.
        path: usize,
        /// The paths that carry a duplicate.
        copies: Vec<usize>,
        /// Which stream frames the duplicates carry.
        scope: CopyScope,
        /// Only retransmitted data of the streams within `scope` goes in.
        hold_new: bool,
        /// When the duplicates go out.
        delivery: CopyDelivery,
    },
    /// Do not send now: a slower path has window space but the scheduler prefers to wait for
    /// `fast_path`, whose window is full (BLEST, ECF). Ask again when an acknowledgement opens a
    /// window.
    Wait {
        /// The faster path, whose window is full.
        fast_path: usize,
    },
    /// Some path is usable but none has window space for this content.
    Blocked,
    /// No path is usable.
    NoPath,
}

/// Which stream frames of a packet its duplicates carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum CopyScope {
    /// Frames of streams flagged redundant (SRE).
    #[default]
    RedundantStreams,
    /// Every stream frame (RE; mp-quic's duplicate on an unprobed path).
    AllStreams,
}

/// When a decision's copies go out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum CopyDelivery {
    /// Built with the packet and sent at once: the scheduler named only paths with window space
    /// (RE, SRE, mp-quic's duplicate on an unprobed path).
    #[default]
    Now,
    /// Queued on each copy path, behind what that path already has queued, and sent the next
    /// time the path sends: ahead of new data, within the path's own window and pacer, only
    /// the part not acknowledged by then (tquic's redundant scheduler). A packet that carries
    /// queued copies is not copied again.
    Queued,
}

impl Decision {
    /// `Send` on `path` alone.
    pub fn single(path: usize) -> Decision {
        Decision::Send { path, copies: Vec::new(), scope: CopyScope::RedundantStreams, hold_new: false, delivery: CopyDelivery::Now }
    }

    /// The path that carries the packet, if any.
    pub fn path(&self) -> Option<usize> {
        match self {
            Decision::Send { path, .. } => Some(*path),
            _ => None,
        }
    }
    /// The paths that carry duplicates (empty unless `Send`).
    pub fn copies(&self) -> &[usize] {
        match self {
            Decision::Send { copies, .. } => copies,
            _ => &[],
        }
    }
}

/// The schedulers, by their names in scenario files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum SchedulerKind {
    /// [`MinRtt`] (SRTTF): the lowest smoothed RTT with window space.
    #[serde(rename = "minrtt")]
    MinRtt,
    /// [`RoundRobin`]: the candidates with window space in turn.
    #[serde(rename = "roundrobin")]
    RoundRobin,
    /// [`Redundant`] (RE): stream content on every candidate with window space.
    #[serde(rename = "redundant")]
    Redundant,
    /// [`SelectiveRedundant`] (SRE): redundant streams as RE, the rest as min-RTT.
    #[serde(rename = "selective_redundant")]
    SelectiveRedundant,
    /// [`Blest`]: min-RTT, waiting for the fast path when a slower one would block the
    /// send window.
    #[serde(rename = "blest")]
    Blest,
    /// [`Ecf`]: min-RTT, waiting for the fast path when it would finish the queue earlier.
    #[serde(rename = "ecf")]
    Ecf,
    /// [`Picoquic`]: picoquic's of early 2022, the least recently used path that can send now.
    #[serde(rename = "picoquic")]
    Picoquic,
    /// [`TquicRedundant`]: tquic's redundant scheduler, with copies queued per path.
    #[serde(rename = "tquic_redundant")]
    TquicRedundant,
    /// [`TquicMinRtt`]: tquic's min-RTT, which passes over paths their pacers hold.
    #[serde(rename = "tquic_minrtt")]
    TquicMinRtt,
    /// ATSSS active-standby ([`crate::atsss`]).
    #[serde(rename = "atsss_active_standby")]
    AtsssActiveStandby,
    /// ATSSS smallest delay ([`crate::atsss`]).
    #[serde(rename = "atsss_smallest_delay")]
    AtsssSmallestDelay,
    /// ATSSS load balancing with fixed shares ([`crate::atsss`]).
    #[serde(rename = "atsss_load_balancing")]
    AtsssLoadBalancing,
    /// ATSSS priority-based ([`crate::atsss`]).
    #[serde(rename = "atsss_priority")]
    AtsssPriority,
    /// ATSSS redundant ([`crate::atsss`]).
    #[serde(rename = "atsss_redundant")]
    AtsssRedundant,
}

impl SchedulerKind {
    /// Every scheduler, in declaration order.
    pub const ALL: [SchedulerKind; 14] = [
        SchedulerKind::MinRtt,
        SchedulerKind::RoundRobin,
        SchedulerKind::Redundant,
        SchedulerKind::SelectiveRedundant,
        SchedulerKind::Blest,
        SchedulerKind::Ecf,
        SchedulerKind::Picoquic,
        SchedulerKind::TquicRedundant,
        SchedulerKind::TquicMinRtt,
        SchedulerKind::AtsssActiveStandby,
        SchedulerKind::AtsssSmallestDelay,
        SchedulerKind::AtsssLoadBalancing,
        SchedulerKind::AtsssPriority,
        SchedulerKind::AtsssRedundant,
    ];

    /// The name used in scenario files (same as the serde name).
    pub fn name(self) -> &'static str {
        match self {
            SchedulerKind::MinRtt => "minrtt",
            SchedulerKind::RoundRobin => "roundrobin",
            SchedulerKind::Redundant => "redundant",
            SchedulerKind::SelectiveRedundant => "selective_redundant",
            SchedulerKind::Blest => "blest",
            SchedulerKind::Ecf => "ecf",
            SchedulerKind::Picoquic => "picoquic",
            SchedulerKind::TquicRedundant => "tquic_redundant",
            SchedulerKind::TquicMinRtt => "tquic_minrtt",
            SchedulerKind::AtsssActiveStandby => "atsss_active_standby",
            SchedulerKind::AtsssSmallestDelay => "atsss_smallest_delay",
            SchedulerKind::AtsssLoadBalancing => "atsss_load_balancing",
            SchedulerKind::AtsssPriority => "atsss_priority",
            SchedulerKind::AtsssRedundant => "atsss_redundant",
        }
    }

    /// The QUIC stack whose scheduler this is, for the schedulers only the Multipath QUIC
    /// model runs (picoquic's reads the pacers; tquic's queues copies per path).
    pub fn quic_stack(self) -> Option<&'static str> {
        match self {
            SchedulerKind::Picoquic => Some("picoquic"),
            SchedulerKind::TquicRedundant | SchedulerKind::TquicMinRtt => Some("tquic"),
            _ => None,
        }
    }

    /// The scheduler weighs the paths' pacers ([`PathView::pacing_ready`]) before choosing;
    /// the others choose and let the transport wait for the chosen path's pacer.
    pub fn reads_pacer(self) -> bool {
        matches!(self, SchedulerKind::Picoquic | SchedulerKind::TquicRedundant | SchedulerKind::TquicMinRtt)
    }

    /// An ATSSS steering mode: it steers between two paths ([`crate::atsss`]).
    pub fn is_atsss(self) -> bool {
        matches!(
            self,
            SchedulerKind::AtsssActiveStandby | SchedulerKind::AtsssSmallestDelay | SchedulerKind::AtsssLoadBalancing | SchedulerKind::AtsssPriority | SchedulerKind::AtsssRedundant
        )
    }
}

impl fmt::Display for SchedulerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown scheduler name; the message lists the known ones.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown scheduler \"{0}\"; expected one of minrtt, roundrobin, redundant, selective_redundant, blest, ecf, picoquic, tquic_redundant, atsss_active_standby, atsss_smallest_delay, atsss_load_balancing, atsss_priority, atsss_redundant")]
pub struct UnknownScheduler(pub String);

impl FromStr for SchedulerKind {
    type Err = UnknownScheduler;
    fn from_str(s: &str) -> Result<SchedulerKind, UnknownScheduler> {
        SchedulerKind::ALL.into_iter().find(|k| k.name() == s).ok_or_else(|| UnknownScheduler(s.to_string()))
    }
}

/// Where paths without an RTT sample go in the min-RTT order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnprobedPolicy {
    /// A path that has never sent anything takes the next packet before any measured path
    /// (fewest packets sent, then lowest id), so a new path gets its first RTT sample at once.
    /// A path that has sent but has no sample yet waits behind the measured paths.
    #[default]
    First,
    /// mp-quic `selectPathLowLatency`: measured paths always win; unprobed paths are used only
    /// when no measured path has window space, fewest packets sent first. Combine with
    /// [`SchedulerOptions::duplicate_on_unprobed`] for mp-quic's fast RTT discovery.
    Last,
}

/// BLEST's λ correction factor (per mille), as in Linux `mptcp_blest.c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BlestParams {
    /// Starting λ (1.2).
    pub lambda_initial_permille: u32,
    /// Lower bound of λ (1.0).
    pub lambda_min_permille: u32,
    /// Upper bound of λ (1.3).
    pub lambda_max_permille: u32,
    /// Added when the slow path had retransmissions outstanding (0.04).
    pub lambda_up_permille: u32,
    /// Subtracted otherwise (0.01).
    pub lambda_down_permille: u32,
}

impl Default for BlestParams {
    fn default() -> BlestParams {
        BlestParams {
            lambda_initial_permille: 1200,
            lambda_min_permille: 1000,
            lambda_max_permille: 1300,
            lambda_up_permille: 40,
            lambda_down_permille: 10,
        }
    }
}

/// How RE and SRE decide a packet's copies (seed 004 §9.4, "parallelize the path checks for
/// redundancy").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RedundantChecks {
    /// Every path's state is known when the copies are decided: the primary packet is built
    /// once and each copy carries exactly its redundant stream frames, retransmitted data
    /// included.
    #[default]
    Parallel,
    /// Seed 004's serial loop (§8.1.4, §9.4), two effects:
    /// 1. a packet that starts with retransmitted data is not copied (the path that takes the
    ///    retransmission is "not usable" for the copy); with `redundant_min_paths >= 2` new data
    ///    of the copied streams also stays out of that packet (fewer than two usable paths: "the
    ///    transmission is not performed") and waits for the next packet — the retransmission
    ///    itself is never held back (mp-quic does not block a path that retransmits);
    /// 2. (transport) each copy is prepared on its own path: that path's ACK frames first, then
    ///    only as much of the redundant stream data as fits after them; the rest travels on the
    ///    primary alone.
    Sequential,
}

impl RedundantChecks {
    /// Both values, in declaration order.
    pub const ALL: [RedundantChecks; 2] = [RedundantChecks::Parallel, RedundantChecks::Sequential];

    /// The name used in scenario files (same as the serde name).
    pub fn name(self) -> &'static str {
        match self {
            RedundantChecks::Parallel => "parallel",
            RedundantChecks::Sequential => "sequential",
        }
    }
}

impl fmt::Display for RedundantChecks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RedundantChecks {
    type Err = OptionsError;
    fn from_str(s: &str) -> Result<RedundantChecks, OptionsError> {
        RedundantChecks::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| OptionsError(format!("redundant_checks: unknown value \"{s}\"; expected one of parallel, sequential")))
    }
}

/// Knobs shared by the schedulers. `Default` is the plain textbook behaviour;
/// [`SchedulerOptions::mp_quic`] reproduces mp-quic's quirks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SchedulerOptions {
    /// Stream content of a priority stream may use a path whose window is full (seed 004
    /// §8.1.4). Off by default.
    pub priority_ignores_cwnd: bool,
    /// Order of paths without an RTT sample (min-RTT family).
    pub unprobed: UnprobedPolicy,
    /// mp-quic: stream content sent on a path without an RTT sample is duplicated on one other
    /// candidate with window space that has sent no more packets (fewest first).
    pub duplicate_on_unprobed: bool,
    /// mp-quic: path 0 (the handshake path) carries nothing while another candidate exists.
    pub skip_initial_path: bool,
    /// RE/SRE: send redundant content only when at least this many candidates (capped at the
    /// number of candidates) have window space; otherwise `Blocked`. 1 sends on whatever has
    /// space; 2 is seed 004's implementation ("at least two paths must be available", §8.1.4).
    pub redundant_min_paths: usize,
    /// RE/SRE: copies decided with every path's state known (`parallel`), or as seed 004's
    /// serial loop (`sequential`; see [`RedundantChecks`]).
    pub redundant_checks: RedundantChecks,
    /// Round-robin: packets per turn (Linux `num_segments`, default 1).
    pub rr_packets_per_turn: u32,
    /// BLEST's λ and its bounds.
    pub blest: BlestParams,
    /// ECF's hysteresis β, per mille (0.25).
    pub ecf_beta_permille: u32,
    /// The ATSSS steering modes' parameters.
    pub atsss: AtsssParams,
}

impl Default for SchedulerOptions {
    fn default() -> SchedulerOptions {
        SchedulerOptions {
            priority_ignores_cwnd: false,
            unprobed: UnprobedPolicy::First,
            duplicate_on_unprobed: false,
            skip_initial_path: false,
            redundant_min_paths: 1,
            redundant_checks: RedundantChecks::Parallel,
            rr_packets_per_turn: 1,
            blest: BlestParams::default(),
            ecf_beta_permille: 250,
            atsss: AtsssParams::default(),
        }
    }
}

impl SchedulerOptions {
    /// mp-quic (qdeconinck/mp-quic `scheduler.go`): unprobed paths last, duplication of packets
    /// sent on unprobed paths, path 0 skipped once other paths exist.
    pub fn mp_quic() -> SchedulerOptions {
        SchedulerOptions {
            unprobed: UnprobedPolicy::Last,
            duplicate_on_unprobed: true,
            skip_initial_path: true,
            ..SchedulerOptions::default()
        }
    }

    /// Checks the values a scenario file may get wrong.
    pub fn validate(&self) -> Result<(), OptionsError> {
        if self.redundant_min_paths == 0 {
            return Err(OptionsError("redundant_min_paths must be at least 1".into()));
        }
        if self.rr_packets_per_turn == 0 {
            return Err(OptionsError("rr_packets_per_turn must be at least 1".into()));
        }
        self.atsss.validate().map_err(OptionsError)?;
        let b = &self.blest;
        if b.lambda_min_permille > b.lambda_max_permille
            || b.lambda_initial_permille < b.lambda_min_permille
            || b.lambda_initial_permille > b.lambda_max_permille
        {
            return Err(OptionsError(format!(
                "blest: need lambda_min_permille <= lambda_initial_permille <= lambda_max_permille, got {} <= {} <= {}",
                b.lambda_min_permille, b.lambda_initial_permille, b.lambda_max_permille
            )));
        }
        Ok(())
    }
}

/// An inconsistent [`SchedulerOptions`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("scheduler options: {0}")]
pub struct OptionsError(pub String);

/// One interface for every packet scheduler.
///
/// `decide` takes `&mut self` because round-robin advances its turn and ECF its waiting flag
/// when they answer: a `Send` answer is taken to mean the packet is sent. The caller asks once
/// per packet.
pub trait Scheduler: fmt::Debug + Send {
    /// Which scheduler this is.
    fn kind(&self) -> SchedulerKind;
    /// Where the packet `req` describes goes, given one view per path.
    fn decide(&mut self, paths: &[PathView], req: &Request) -> Decision;
}

/// Builds the scheduler `kind` with `options` (use [`SchedulerOptions::validate`] first on
/// values from a file; out-of-range values are clamped here).
pub fn new_scheduler(kind: SchedulerKind, options: SchedulerOptions) -> Box<dyn Scheduler> {
    match kind {
        SchedulerKind::MinRtt => Box::new(MinRtt::new(options)),
        SchedulerKind::RoundRobin => Box::new(RoundRobin::new(options)),
        SchedulerKind::Redundant => Box::new(Redundant::new(options)),
        SchedulerKind::SelectiveRedundant => Box::new(SelectiveRedundant::new(options)),
        SchedulerKind::Blest => Box::new(Blest::new(options)),
        SchedulerKind::Ecf => Box::new(Ecf::new(options)),
        SchedulerKind::Picoquic => Box::new(Picoquic::new(options)),
        SchedulerKind::TquicRedundant => Box::new(TquicRedundant::new(options)),
        SchedulerKind::TquicMinRtt => Box::new(TquicMinRtt::new(options)),
        SchedulerKind::AtsssActiveStandby => Box::new(crate::atsss::AtsssActiveStandby::new(options.atsss)),
        SchedulerKind::AtsssSmallestDelay => Box::new(crate::atsss::AtsssSmallestDelay::new(options.atsss)),
        SchedulerKind::AtsssLoadBalancing => Box::new(crate::atsss::AtsssLoadBalancing::new(options.atsss)),
        SchedulerKind::AtsssPriority => Box::new(crate::atsss::AtsssPriority::new(options.atsss)),
        SchedulerKind::AtsssRedundant => Box::new(crate::atsss::AtsssRedundant::new(options.atsss)),
    }
}

// ---------------------------------------------------------------------------------------------
// Shared rules

/// Which usable paths are candidates for this decision (backup class, path-0 quirk).
#[derive(Clone, Copy, Debug)]
struct Class {
    /// Some usable path is not backup: backup paths are out.
    any_available: bool,
    /// Drop path 0 (mp-quic) because another candidate exists.
    skip0: bool,
    /// Number of candidates.
    count: usize,
}

impl Class {
    fn of(paths: &[PathView], opts: &SchedulerOptions) -> Class {
        let any_available = paths.iter().any(|p| p.usable && !p.backup);
        let in_class = |p: &PathView| p.usable && (!any_available || !p.backup);
        let has0 = paths.iter().any(|p| p.id == 0 && in_class(p));
        let others = paths.iter().filter(|p| p.id != 0 && in_class(p)).count();
        let skip0 = opts.skip_initial_path && has0 && others > 0;
        let count = others + usize::from(has0 && !skip0);
        Class { any_available, skip0, count }
    }
    fn contains(&self, p: &PathView) -> bool {
        let wrong_class = self.any_available && p.backup;
        let skipped = self.skip0 && p.id == 0;
        p.usable && !wrong_class && !skipped
    }
}

/// The path may take this content now.
fn sendable(p: &PathView, content: Content, opts: &SchedulerOptions) -> bool {
    p.has_window_space() || (opts.priority_ignores_cwnd && content.is_priority_stream())
}

fn candidates(paths: &[PathView], class: Class) -> impl Iterator<Item = &PathView> {
    paths.iter().filter(move |p| class.contains(p))
}

fn sendable_candidates<'a>(
    paths: &'a [PathView],
    class: Class,
    content: Content,
    opts: &'a SchedulerOptions,
) -> impl Iterator<Item = &'a PathView> {
    candidates(paths, class).filter(move |p| sendable(p, content, opts))
}

fn keep_min<'a, K: Ord>(best: &mut Option<(K, &'a PathView)>, key: K, p: &'a PathView) {
    if best.as_ref().map_or(true, |(k, _)| key < *k) {
        *best = Some((key, p));
    }
}

/// The min-RTT choice among sendable candidates (SRTTF with the unprobed policy).
fn min_rtt_pick<'a>(paths: &'a [PathView], class: Class, content: Content, opts: &'a SchedulerOptions) -> Option<&'a PathView> {
    let mut measured = None;
    let mut fresh = None;
    let mut unmeasured = None;
    for p in sendable_candidates(paths, class, content, opts) {
        if opts.unprobed == UnprobedPolicy::First && !p.has_sent_anything {
            keep_min(&mut fresh, (p.packets_sent, p.id), p);
        } else if p.rtt_sampled {
            keep_min(&mut measured, (p.srtt, p.id), p);
        } else {
            keep_min(&mut unmeasured, (p.packets_sent, p.id), p);
        }
    }
    let fresh = fresh.map(|(_, p)| p);
    fresh.or(measured.map(|(_, p)| p)).or(unmeasured.map(|(_, p)| p))
}

/// The fastest candidate with an RTT sample, window space or not (BLEST's and ECF's `f`).
fn fastest_measured(paths: &[PathView], class: Class) -> Option<&PathView> {
    let mut best = None;
    for p in candidates(paths, class).filter(|p| p.rtt_sampled) {
        keep_min(&mut best, (p.srtt, p.id), p);
    }
    best.map(|(_, p)| p)
}

/// `Blocked` when some candidate exists, `NoPath` otherwise.
fn nothing(class: Class) -> Decision {
    if class.count == 0 {
        Decision::NoPath
    } else {
        Decision::Blocked
    }
}

/// Send on `p`, with mp-quic's duplicate when `p` has no RTT sample yet.
fn single(paths: &[PathView], class: Class, p: &PathView, content: Content, opts: &SchedulerOptions) -> Decision {
    if opts.duplicate_on_unprobed && content.is_stream() && !p.rtt_sampled {
        let mut best = None;
        for q in sendable_candidates(paths, class, content, opts) {
            if q.id != p.id && q.packets_sent <= p.packets_sent {
                keep_min(&mut best, (q.packets_sent, q.id), q);
            }
        }
        if let Some((_, q)) = best {
            return Decision::Send { path: p.id, copies: vec![q.id], scope: CopyScope::AllStreams, hold_new: false, delivery: CopyDelivery::Now };
        }
    }
    Decision::single(p.id)
}

/// The min-RTT decision.
fn min_rtt_decision(paths: &[PathView], req: &Request, opts: &SchedulerOptions) -> Decision {
    let class = Class::of(paths, opts);
    match min_rtt_pick(paths, class, req.content, opts) {
        Some(p) => single(paths, class, p, req.content, opts),
        None => nothing(class),
    }
}

/// The redundant decision: min-RTT primary, every other sendable candidate gets a copy.
fn redundant_decision(paths: &[PathView], req: &Request, opts: &SchedulerOptions, scope: CopyScope) -> Decision {
    let class = Class::of(paths, opts);
    let Some(primary) = min_rtt_pick(paths, class, req.content, opts) else {
        return nothing(class);
    };
    let mut others: Vec<&PathView> = sendable_candidates(paths, class, req.content, opts).filter(|p| p.id != primary.id).collect();
    let needed = opts.redundant_min_paths.max(1).min(class.count);
    if opts.redundant_checks == RedundantChecks::Sequential && req.retransmission {
        // The serial loop: the path that takes the retransmission is not usable for a copy, so
        // no copy; the retransmission goes out, new data of the copied streams waits when two
        // usable paths are needed.
        if needed < 2 {
            return Decision::single(primary.id);
        }
        return Decision::Send { path: primary.id, copies: Vec::new(), scope, hold_new: true, delivery: CopyDelivery::Now };
    }
    if 1 + others.len() < needed {
        return Decision::Blocked;
    }
    if others.is_empty() {
        return Decision::single(primary.id);
    }
    others.sort_by_key(|p| (p.srtt, p.id));
    Decision::Send { path: primary.id, copies: others.into_iter().map(|p| p.id).collect(), scope, hold_new: false, delivery: CopyDelivery::Now }
}

// ---------------------------------------------------------------------------------------------
// The schedulers

/// SRTTF / min-RTT: the default of Linux MPTCP v0.9x, mp-quic, TQUIC and XQUIC.
#[derive(Clone, Debug)]
pub struct MinRtt {
    opts: SchedulerOptions,
}

impl MinRtt {
    /// A min-RTT scheduler with `opts`.
    pub fn new(opts: SchedulerOptions) -> MinRtt {
        MinRtt { opts }
    }
}

impl Scheduler for MinRtt {
    fn kind(&self) -> SchedulerKind {
        SchedulerKind::MinRtt
    }
    fn decide(&mut self, paths: &[PathView], req: &Request) -> Decision {
        min_rtt_decision(paths, req, &self.opts)
    }
}

/// tquic 1.6's min-RTT (`scheduler_minrtt.rs` `on_select`): the lowest smoothed RTT among the
/// paths whose `can_send` holds — window room and the pacer's leave. Stream content therefore
/// goes to a slower path while the fastest one waits for its pacer (a rate-based controller
/// such as BBR is seldom window-limited, so [`MinRtt`] would keep it all on the fastest path);
/// control content takes the min-RTT choice and never waits.
#[derive(Clone, Debug)]
pub struct TquicMinRtt {
    opts: SchedulerOptions,
}

impl TquicMinRtt {
    /// tquic's min-RTT scheduler with `opts`.
    pub fn new(opts: SchedulerOptions) -> TquicMinRtt {
        TquicMinRtt { opts }
    }
}

impl Scheduler for TquicMinRtt {
    fn kind(&self) -> SchedulerKind {
        SchedulerKind::TquicMinRtt
    }
    fn decide(&mut self, paths: &[PathView], req: &Request) -> Decision {
        if !req.content.is_stream() {
            return min_rtt_decision(paths, req, &self.opts);
        }
        // The class (available or backup paths) is the connection's, whatever the pacers say.
        let class = Class::of(paths, &self.opts);
        let ready: Vec<PathView> = paths.iter().filter(|p| p.pacing_ready).copied().collect();
        match min_rtt_pick(&ready, class, req.content, &self.opts) {
            Some(p) => single(&ready, class, p, req.content, &self.opts),
            None => nothing(class),
        }
    }
}

/// Round-robin over the candidates with window space, in path-id order.
#[derive(Clone, Debug)]
pub struct RoundRobin {
    opts: SchedulerOptions,
    /// The path whose turn it was last, and how many packets it sent in that turn.
    turn: Option<(usize, u32)>,
}

impl RoundRobin {
    /// A round-robin scheduler with `opts`; the first turn goes to the lowest-id candidate that
    /// can send.
    pub fn new(opts: SchedulerOptions) -> RoundRobin {
        RoundRobin { opts, turn: None }
    }
}

impl Scheduler for RoundRobin {
    fn kind(&self) -> SchedulerKind {
        SchedulerKind::RoundRobin
    }
    fn decide(&mut self, paths: &[PathView], req: &Request) -> Decision {
        let class = Class::of(paths, &self.opts);
        let per_turn = self.opts.rr_packets_per_turn.max(1);
        let ok = |p: &&PathView| sendable(p, req.content, &self.opts);
        // Stay on the current path while its turn lasts and it can send.
        if let Some((id, n)) = self.turn {
            if n < per_turn && candidates(paths, class).filter(ok).any(|p| p.id == id) {
                self.turn = Some((id, n + 1));
                return Decision::single(id);
            }
        }
        let last = self.turn.map(|(id, _)| id);
        let mut after: Option<usize> = None;
        let mut lowest: Option<usize> = None;
        for p in candidates(paths, class).filter(ok) {
            if last.is_some_and(|l| p.id > l) && after.map_or(true, |a| p.id < a) {
                after = Some(p.id);
            }
            if lowest.map_or(true, |l| p.id < l) {
                lowest = Some(p.id);
            }
        }
        match after.or(lowest) {
            Some(id) => {
                self.turn = Some((id, 1));
                Decision::single(id)
            }
            None => nothing(class),
        }
    }
}

/// RE: every stream packet on every candidate with window space (seed 004 §6.1; Linux
/// `mptcp_redundant.c`). tquic's redundant scheduler differs: it queues a copy on every other
/// path whatever its window ([`TquicRedundant`]).
#[derive(Clone, Debug)]
pub struct Redundant {
    opts: SchedulerOptions,
}

impl Redundant {
    /// An RE scheduler with `opts`.
    pub fn new(opts: SchedulerOptions) -> Redundant {
        Redundant { opts }
    }
}

impl Scheduler for Redundant {
    fn kind(&self) -> SchedulerKind {
        SchedulerKind::Redundant
    }
    fn decide(&mut self, paths: &[PathView], req: &Request) -> Decision {
        if req.content.is_stream() {
            redundant_decision(paths, req, &self.opts, CopyScope::AllStreams)
        } else {
            min_rtt_decision(paths, req, &self.opts)
        }
    }
}

/// SRE: stream content flagged redundant as [`Redundant`], the rest as [`MinRtt`] (seed 004
/// §6.2).
#[derive(Clone, Debug)]
pub struct SelectiveRedundant {
    opts: SchedulerOptions,
}

impl SelectiveRedundant {
    /// An SRE scheduler with `opts`.
    pub fn new(opts: SchedulerOptions) -> SelectiveRedundant {
        SelectiveRedundant { opts }
    }
}

impl Scheduler for SelectiveRedundant {
    fn kind(&self) -> SchedulerKind {
        SchedulerKind::SelectiveRedundant
    }
    fn decide(&mut self, paths: &[PathView], req: &Request) -> Decision {
        if req.content.is_redundant_stream() {
            redundant_decision(paths, req, &self.opts, CopyScope::RedundantStreams)
        } else {
            min_rtt_decision(paths, req, &self.opts)
        }
    }
}

/// The min-RTT choice `best`, and the fast path `f` when BLEST/ECF must arbitrate between
/// waiting for `f` (full window) and sending on the slower `best`.
enum Arbitration<'a> {
    Done(Decision),
    Choose { fast: &'a PathView, slow: &'a PathView },
}

fn arbitrate<'a>(paths: &'a [PathView], req: &Request, opts: &'a SchedulerOptions) -> Arbitration<'a> {
    let class = Class::of(paths, opts);
    let Some(best) = min_rtt_pick(paths, class, req.content, opts) else {
        return Arbitration::Done(nothing(class));
    };
    if req.content.is_stream() && best.rtt_sampled {
        if let Some(fast) = fastest_measured(paths, class) {
            if fast.id != best.id && !sendable(fast, req.content, opts) && fast.srtt < best.srtt {
                return Arbitration::Choose { fast, slow: best };
            }
        }
    }
    Arbitration::Done(single(paths, class, best, req.content, opts))
}

/// BLEST — BLocking ESTimation (Ferlin et al., IFIP Networking 2016; Linux `mptcp_blest.c`).
///
/// Estimate of what the fast path `f` sends while one packet lingers on the slow path `s`
/// (`n = srtt_s / srtt_f` rounds):
/// * congestion avoidance (paper's Reno model): `(cwnd_f + mss_f·(n−1)/2)·n` bytes, with `n`
///   kept fractional (per mille);
/// * initial slow start (Linux variant): `cwnd_f·(2^n − 1)` bytes, `n = ⌈srtt_s/srtt_f⌉ ≤ 16`.
///
/// Times λ. Wait for `f` when that exceeds `send_window − (bytes_in_flight_s + mss_s)`.
/// λ moves at most once per `min_rtt_s / 8`: up by `lambda_up` when `s` has retransmissions
/// outstanding, otherwise down by `lambda_down`, within [min, max].
#[derive(Clone, Debug)]
pub struct Blest {
    opts: SchedulerOptions,
    lambda_permille: u32,
    last_lambda_update: Option<Time>,
}

impl Blest {
    /// A BLEST scheduler with `opts`; λ starts at `lambda_initial_permille`, clamped to
    /// [min, max].
    pub fn new(opts: SchedulerOptions) -> Blest {
        let b = opts.blest;
        let lambda = b
            .lambda_initial_permille
            .clamp(b.lambda_min_permille.min(b.lambda_max_permille), b.lambda_max_permille.max(b.lambda_min_permille));
        Blest { opts, lambda_permille: lambda, last_lambda_update: None }
    }

    /// Current λ, per mille.
    pub fn lambda_permille(&self) -> u32 {
        self.lambda_permille
    }

    fn update_lambda(&mut self, now: Time, slow: &PathView) {
        if let Some(last) = self.last_lambda_update {
            if now.since(last) < Dur(slow.min_rtt.0 / 8) {
                return;
            }
        }
        let b = self.opts.blest;
        let lo = b.lambda_min_permille.min(b.lambda_max_permille);
        let hi = b.lambda_max_permille.max(b.lambda_min_permille);
        let l = if slow.retransmissions_outstanding {
            self.lambda_permille.saturating_add(b.lambda_up_permille)
        } else {
            self.lambda_permille.saturating_sub(b.lambda_down_permille)
        };
        self.lambda_permille = l.clamp(lo, hi);
        self.last_lambda_update = Some(now);
    }

    /// Bytes the fast path is expected to send during one RTT of the slow path, λ included.
    pub fn estimate_fast_bytes(&self, fast: &PathView, slow: &PathView) -> u64 {
        let srtt_f = u128::from(fast.srtt.0.max(1));
        let srtt_s = u128::from(slow.srtt.0);
        let cwnd_f = u128::from(fast.cwnd);
        let bytes = if fast.in_slow_start {
            let n = srtt_s.div_ceil(srtt_f).clamp(1, 16) as u32;
            cwnd_f * ((1u128 << n) - 1)
        } else {
            // n = r / 1000; (cwnd_f + mss_f (n - 1) / 2) * n
            let r = srtt_s * 1000 / srtt_f;
            (2000 * cwnd_f + u128::from(fast.mss) * r.saturating_sub(1000)) * r / 2_000_000
        };
        let scaled = bytes * u128::from(self.lambda_permille) / 1000;
        scaled.min(u128::from(u64::MAX)) as u64
    }
}

impl Scheduler for Blest {
    fn kind(&self) -> SchedulerKind {
        SchedulerKind::Blest
    }
    fn decide(&mut self, paths: &[PathView], req: &Request) -> Decision {
        let opts = self.opts;
        match arbitrate(paths, req, &opts) {
            Arbitration::Done(d) => d,
            Arbitration::Choose { fast, slow } => {
                self.update_lambda(req.now, slow);
                let fast_bytes = self.estimate_fast_bytes(fast, slow);
                let slow_bytes = slow.bytes_in_flight.saturating_add(slow.mss);
                let avail = req.send_window.saturating_sub(slow_bytes);
                if fast_bytes > avail {
                    Decision::Wait { fast_path: fast.id }
                } else {
                    Decision::single(slow.id)
                }
            }
        }
    }
}

/// ECF — Earliest Completion First (Lim et al., CoNEXT 2017; Linux `mptcp_ecf.c`).
///
/// With `k = max(queued_bytes, cwnd_f)`, `δ = max(rttvar_f, rttvar_s)`, β per mille and the
/// waiting flag `w`: if `(cwnd_f + k)·srtt_f·1000 < cwnd_f·(srtt_s + δ)·(1000 + w·β)` then
/// wait for `f` (and set `w`) when `k·srtt_s >= cwnd_s·(2·srtt_f + δ)`, else send on `s`;
/// otherwise send on `s` and clear `w`.
#[derive(Clone, Debug)]
pub struct Ecf {
    opts: SchedulerOptions,
    waiting: bool,
}

impl Ecf {
    /// An ECF scheduler with `opts`, not waiting.
    pub fn new(opts: SchedulerOptions) -> Ecf {
        Ecf { opts, waiting: false }
    }

    /// ECF's hysteresis flag `w`.
    pub fn waiting(&self) -> bool {
        self.waiting
    }
}

impl Scheduler for Ecf {
    fn kind(&self) -> SchedulerKind {
        SchedulerKind::Ecf
    }
    fn decide(&mut self, paths: &[PathView], req: &Request) -> Decision {
        let opts = self.opts;
        match arbitrate(paths, req, &opts) {
            Arbitration::Done(d) => d,
            Arbitration::Choose { fast, slow } => {
                let cwnd_f = u128::from(fast.cwnd);
                let cwnd_s = u128::from(slow.cwnd);
                let k = u128::from(req.queued_bytes).max(cwnd_f);
                let srtt_f = u128::from(fast.srtt.0);
                let srtt_s = u128::from(slow.srtt.0);
                let delta = u128::from(fast.rttvar.0.max(slow.rttvar.0));
                let w = u128::from(self.waiting);
                let beta = u128::from(opts.ecf_beta_permille);
                let lhs = (cwnd_f + k) * srtt_f * 1000;
                let rhs = cwnd_f * (srtt_s + delta) * (1000 + w * beta);
                if lhs < rhs {
                    if k * srtt_s >= cwnd_s * (2 * srtt_f + delta) {
                        self.waiting = true;
                        return Decision::Wait { fast_path: fast.id };
                    }
                } else {
                    self.waiting = false;
                }
                Decision::single(slow.id)
            }
        }
    }
}

/// picoquic's multipath scheduler of early 2022 (`picoquic_select_next_path_mp`): the least
/// recently used candidate that its pacer lets send now and whose window has room; ties (two
/// paths that never sent) go to the lower id. When no candidate has both, nothing is sent
/// (`Blocked`); the transport wakes up when a pacer or a window allows.
#[derive(Clone, Debug)]
pub struct Picoquic {
    opts: SchedulerOptions,
}

impl Picoquic {
    /// picoquic's scheduler with `opts`.
    pub fn new(opts: SchedulerOptions) -> Picoquic {
        Picoquic { opts }
    }
}

impl Scheduler for Picoquic {
    fn kind(&self) -> SchedulerKind {
        SchedulerKind::Picoquic
    }
    fn decide(&mut self, paths: &[PathView], req: &Request) -> Decision {
        let class = Class::of(paths, &self.opts);
        let mut best = None;
        for p in sendable_candidates(paths, class, req.content, &self.opts).filter(|p| p.pacing_ready) {
            // `None` (never sent) sorts before every time.
            keep_min(&mut best, (p.last_sent, p.id), p);
        }
        match best {
            Some((_, p)) => Decision::single(p.id),
            None => nothing(class),
        }
    }
}

/// tquic 1.6's redundant scheduler (`src/multipath_scheduler/scheduler_redundant.rs`): its
/// `on_select` takes the first active path, in path order, that can send (tquic's
/// `can_send`: the window has room and the pacer lets a packet go), whatever its RTT; its
/// `on_sent` then buffers every STREAM frame of a packet that carried no buffered frame, at
/// high priority, on every other active path, whatever that path's window. Here: the first
/// candidate in path-id order with window space and `pacing_ready`; stream content gets
/// [`CopyDelivery::Queued`] copies on every other candidate (fastest first), control content
/// none. `Blocked` when no candidate can send now.
#[derive(Clone, Debug)]
pub struct TquicRedundant {
    opts: SchedulerOptions,
}

impl TquicRedundant {
    /// tquic's redundant scheduler with `opts`.
    pub fn new(opts: SchedulerOptions) -> TquicRedundant {
        TquicRedundant { opts }
    }
}

impl Scheduler for TquicRedundant {
    fn kind(&self) -> SchedulerKind {
        SchedulerKind::TquicRedundant
    }
    fn decide(&mut self, paths: &[PathView], req: &Request) -> Decision {
        let class = Class::of(paths, &self.opts);
        let first = sendable_candidates(paths, class, req.content, &self.opts).filter(|p| p.pacing_ready).min_by_key(|p| p.id);
        let Some(primary) = first else {
            return nothing(class);
        };
        if !req.content.is_stream() {
            return Decision::single(primary.id);
        }
        let mut others: Vec<&PathView> = candidates(paths, class).filter(|p| p.id != primary.id).collect();
        if others.is_empty() {
            return Decision::single(primary.id);
        }
        others.sort_by_key(|p| (p.srtt, p.id));
        Decision::Send {
            path: primary.id,
            copies: others.into_iter().map(|p| p.id).collect(),
            scope: CopyScope::AllStreams,
            hold_new: false,
            delivery: CopyDelivery::Queued,
        }
    }
}
