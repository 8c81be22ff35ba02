//! The integration tests of multiconn-radio, one binary (`cargo test -p multiconn-radio --test it`);
//! each module is one feature.

mod aggregation;
mod capacity;
mod delay;
mod drive;
mod handover;
mod pathloss;
mod pipeline;
mod shadowing;
mod support;
mod tables;
mod units;
