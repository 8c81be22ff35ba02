//! The run's invariant checker: the network's own checks ([`multiconn_net::invariants`]) and
//! the hosts' — what every TCP and QUIC endpoint hands its application, and the path IDs
//! multipath endpoints open.
//!
//! * **In-order, once, per stream.** Each endpoint notes the byte ranges it hands its
//!   application ([`Observation::Delivered`]); per connection, end and stream, each range must
//!   start where the previous one ended and be non-empty: no byte twice, none skipped, none
//!   out of order. (UDP flows have no such guarantee and are not checked.)
//! * **Path IDs never reused.** Per connection and end, a multipath path ID opens once
//!   ([`Observation::PathIdOpened`]).
//! * **Datagrams once.** Per connection and end, a QUIC datagram (RFC 9221) is handed to the
//!   application at most once ([`Observation::DatagramDelivered`]), and settled (acknowledged
//!   or declared lost) at most once ([`Observation::DatagramSettled`]).
//!
//! The checker is on when asked for ([`crate::Simulation::set_check_invariants`]) or when the
//! environment variable [`ENV`] is `1`; it observes only (no events, no random draws), so a
//! run's results are the same with it on or off. The first violation ends the run; it names
//! the scenario, the seed, the entity and the virtual instant ([`InvariantViolation`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use multiconn_core::Time;
use multiconn_net::Violation;
use multiconn_transport::{Observation, Role};

/// The environment variable that turns the checker on for every run (`1`), e.g. in tests.
pub const ENV: &str = "MULTICONN_CHECK_INVARIANTS";

/// Whether [`ENV`] asks for the checker: set, and neither empty nor `0`.
pub fn requested_by_env() -> bool {
    std::env::var_os(ENV).is_some_and(|v| !v.is_empty() && v != "0")
}

/// A run that broke an invariant: the run, and the first violation seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvariantViolation {
    /// The scenario's name.
    pub scenario: String,
    /// The run's seed.
    pub seed: u64,
    /// The element or endpoint, the instant and what happened.
    pub violation: Violation,
}

impl fmt::Display for InvariantViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invariant violated in scenario \"{}\" (seed {}): {}", self.scenario, self.seed, self.violation)
    }
}

impl std::error::Error for InvariantViolation {}

/// What one end of one connection handed its application so far.
#[derive(Debug, Default)]
struct EndTally {
    /// Per stream: the offset the next delivery must start at.
    next: BTreeMap<u64, u64>,
    /// Per path ID opened: the path and the instant.
    path_ids: BTreeMap<u32, (u8, Time)>,
    /// QUIC datagrams handed to the application.
    datagrams_delivered: BTreeSet<u64>,
    /// QUIC datagrams settled at the sender.
    datagrams_settled: BTreeSet<u64>,
}

/// The hosts' checks: per flow, per end (client, server).
pub(crate) struct HostChecks {
    flows: Vec<(String, [EndTally; 2])>,
    violation: Option<Violation>,
    /// Scratch space for what an endpoint noted.
    pub(crate) scratch: Vec<Observation>,
}

fn end_name(role: Role) -> &'static str {
    match role {
        Role::Client => "client",
        Role::Server => "server",
    }
}

impl HostChecks {
    /// Checks for the flows named `flows`.
    pub(crate) fn new(flows: impl Iterator<Item = String>) -> HostChecks {
        HostChecks { flows: flows.map(|name| (name, Default::default())).collect(), violation: None, scratch: Vec::new() }
    }

    pub(crate) fn violation(&self) -> Option<&Violation> {
        self.violation.as_ref()
    }

    /// Checks what `role`'s end of flow `f` noted (in `self.scratch`, emptied) at `now`.
    pub(crate) fn observed(&mut self, f: usize, role: Role, now: Time) {
        let mut scratch = std::mem::take(&mut self.scratch);
        for &o in &scratch {
            let (name, ends) = &mut self.flows[f];
            let end = &mut ends[usize::from(role == Role::Server)];
            let broken = match o {
                Observation::Delivered { stream, from, to } => {
                    let next = end.next.entry(stream).or_insert(0);
                    let problem = if to <= from {
                        Some(format!("an empty or reversed range [{from}, {to})"))
                    } else if from < *next {
                        Some(format!("bytes [{from}, {to}), but bytes up to {next} were already delivered (delivered twice)"))
                    } else if from > *next {
                        Some(format!("bytes [{from}, {to}), but the next byte due was {next} (a gap: out of order)"))
                    } else {
                        None
                    };
                    *next = (*next).max(to);
                    problem.map(|p| (format!("flow {name}, {}, stream {stream}", end_name(role)), format!("handed the application {p}")))
                }
                Observation::PathIdOpened { path, path_id } => match end.path_ids.get(&path_id) {
                    Some(&(first_path, first_at)) => Some((
                        format!("flow {name}, {}, path {path}", end_name(role)),
                        format!("opened path ID {path_id}, already opened on path {first_path} at {:.9} s", first_at.as_secs_f64()),
                    )),
                    None => {
                        end.path_ids.insert(path_id, (path, now));
                        None
                    }
                },
                Observation::DatagramDelivered { tag } => (!end.datagrams_delivered.insert(tag))
                    .then(|| (format!("flow {name}, {}, datagram {tag}", end_name(role)), "handed the application datagram twice".to_string())),
                Observation::DatagramSettled { tag } => (!end.datagrams_settled.insert(tag))
                    .then(|| (format!("flow {name}, {}, datagram {tag}", end_name(role)), "settled the datagram twice (acknowledged or lost once only)".to_string())),
            };
            if let (Some((entity, what)), None) = (broken, &self.violation) {
                self.violation = Some(Violation { at: now, entity, what });
            }
        }
        scratch.clear();
        self.scratch = scratch;
    }
}
