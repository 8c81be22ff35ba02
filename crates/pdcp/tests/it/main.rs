//! The integration tests of multiconn-pdcp, one binary (`cargo test -p multiconn-pdcp --test it`);
//! each module is one feature or protocol phase.

mod properties;
mod split_bearer;
mod transmitter;
mod vectors;
