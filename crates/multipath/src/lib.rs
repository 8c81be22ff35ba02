//! multiconn-multipath: the protocol-independent decisions of a multipath transport, shared by
//! the Multipath QUIC model (draft-ietf-quic-multipath-21) and the MPTCP model (RFC 8684).
//!
//! * [`scheduler`]: which path carries the next packet and which paths get a duplicate —
//!   min-RTT (SRTTF), round-robin, redundant (RE), selective redundant (SRE), BLEST, ECF,
//!   picoquic's, and tquic's redundant one — behind one [`Scheduler`] trait and a factory keyed
//!   by [`SchedulerKind`].
//! * [`atsss`]: 3GPP ATSSS's steering modes (active-standby, smallest delay, load balancing,
//!   priority-based, redundant) as schedulers over a connection's two paths.
//! * [`priority`]: which streams' data goes into a packet: priority streams first, round-robin
//!   among the others (seed 004 §6.3).
//! * [`path_health`]: per-path failure detection with the rules of mp-quic, picoquic, XQUIC and
//!   Linux MPTCP ([`FailoverProfile`]).
//! * [`path_manager`]: when paths are opened, abandoned or change status, from the scenario's
//!   schedule and the reaction to links going down and up.
//!
//! Everything is sans-IO and deterministic: time is a parameter, state is small and explicit,
//! ties break by path or stream id, arithmetic is integer.

pub mod atsss;
pub mod path_health;
pub mod path_manager;
pub mod priority;
pub mod scheduler;

pub use atsss::AtsssParams;
pub use path_health::{FailoverProfile, HealthConfig, PathHealth, PathHealthSet, PathStatus, Peers, Reaction};
pub use path_manager::{
    plan, Action, LinkChange, LinkReaction, ManagerConfig, PathEvent, PathManager, PlanError, Planned, ScheduledAction,
};
pub use priority::{content_of, copy_part, Chunk, PackFilter, StreamDemand, StreamPacker};
pub use scheduler::{
    new_scheduler, Blest, BlestParams, Content, CopyDelivery, CopyScope, Decision, Ecf, MinRtt, PathView, Redundant, RedundantChecks, Request, RoundRobin, Scheduler,
    SchedulerKind, SchedulerOptions, SelectiveRedundant, TquicRedundant, UnprobedPolicy,
};
