//! The integration tests of multiconn-net, one binary (`cargo test -p multiconn-net --test it`).

mod driver;

mod elements;
mod invariants;
mod ports;
mod split_bearer;
