//! The integration tests of multiconn-quic, one binary (`cargo test -p multiconn-quic --test it`);
//! each module is one feature or protocol phase.

mod support;

mod ack;
mod app_streams;
mod coupled_cc;
mod datagrams;
mod download;
mod ecn;
mod external_cc;
mod factory;
mod flow_control;
mod handshake;
mod multipath;
mod path_manager;
mod mpquic_2018;
mod picoquic_2022;
mod qlog;
mod recovery_timers;
mod speed;
mod timers;
