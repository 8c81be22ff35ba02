//! multiconn-tcp: a sans-IO model of one TCP connection carrying TLS 1.3.
pub mod rack;
pub mod rto;
pub mod scoreboard;
pub mod segment;
