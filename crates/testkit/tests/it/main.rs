//! The integration tests of multiconn-testkit, one binary (`cargo test -p multiconn-testkit
//! --test it`); each module is one feature of the pair.

mod toy;

mod crossing;
mod determinism;
mod driving;
mod scripted_drops;
