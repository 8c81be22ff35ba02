//! multiconn-emu: a scenario's network in real time, between network namespaces where
//! unmodified programs run.
//!
//! The emulator drives the simulator's own network object ([`multiconn_net::Network`]: links,
//! PDCP splits, cells, routes) with the monotonic clock instead of an event queue. Each node a
//! flow starts or ends at becomes a host — its own network, PID and mount namespaces, held by
//! a process that dies with the emulator ([`sandbox`]) — and each flow's path becomes a TUN
//! device at both ends ([`tun`]). Packets read from a TUN enter the network, and come out of
//! it into the far host's TUN when the models release them ([`fabric`]); real stacks (kernel
//! TCP and MPTCP, ngtcp2, aioquic, or the user's own programs) run in the hosts ([`stacks`]).
//! [`run`] does one run, [`report`] writes its files and [`cli`] is its command line. Design and limits:
//! `docs/emulator.md`; the machine's measured abilities: `docs/adr/0005-emulator.md`.
//!
//! Dependencies point down: `core`, `link`, `metrics`, `net` and `scenario` (to read the same
//! scenario files); only the Python extension (`crates/py`, for its `multiconn-emu` entry
//! point) depends on this crate.

pub mod cli;
pub mod ecn;
pub mod fabric;
pub mod report;
pub mod run;
pub mod sandbox;
pub mod stacks;
pub mod sys;
pub mod transfer;
pub mod tun;

pub use run::{emulate, EmuError, Options};
