//! multiconn-tcp: a sans-IO model of one TCP connection carrying TLS 1.3.
pub mod scoreboard;
pub mod segment;
