//! The integration tests of multiconn-radio, one binary (`cargo test -p multiconn-radio --test it`);
//! each module is one feature.

mod capacity;
mod support;
mod units;
