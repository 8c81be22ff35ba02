//! The integration tests of multiconn-scenario, one binary (`cargo test -p multiconn-scenario --test it`);
//! each module is one feature or protocol phase.

mod common;

mod aqm;
mod cell;
mod cell_study;
mod coupled_cc;
mod direction;
mod dual_connectivity;
mod endc;
mod ecn;
mod errors;
mod failover;
mod fairness;
mod invariants;
mod fuzz;
mod host_noise;
mod messages;
mod mobility;
mod mptcp;
mod multipath_scenario;
mod netsim;
mod nr_cell;
mod obsolete_messages;
mod path_manager;
mod pcap;
mod real_quinn;
mod redundant_checks;
mod run;
mod series;
mod steady;
mod stack_profiles;
mod trace_start;
mod tquic_redundant;
mod transport;
mod uplink_split;
mod wire;
