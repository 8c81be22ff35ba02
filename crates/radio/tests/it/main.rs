//! The integration tests of multiconn-radio, one binary (`cargo test -p multiconn-radio --test it`);
//! each module is one feature.

mod aggregation;
mod capacity;
mod delay;
mod handover;
mod pathloss;
mod support;
mod tables;
mod units;
