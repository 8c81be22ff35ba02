//! The integration tests of multiconn-tcp, one binary (`cargo test -p multiconn-tcp --test it`);
//! each module is one feature or protocol phase.

mod support;

mod accecn;
mod autotune;
mod bulk;
mod delayed_ack;
mod external_cc;
mod gro;
mod handshake;
mod mptcp;
mod recovery;
mod robustness;
mod rto;
mod scoreboard_prop;
mod spurious;
