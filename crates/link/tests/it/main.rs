//! The integration tests of multiconn-link, one binary (`cargo test -p multiconn-link --test it`);
//! each module is one feature or protocol phase.

mod delay_support;

mod aqm;
mod availability_intermittent;
mod delay_decorator;
mod delay_models;
mod delay_parsers;
mod dualpi2;
mod fifo_fast_path;
mod lazy_departures;
mod loss_models;
mod queue_droptail;
mod rate_capacity;
mod rate_timing;
mod scripted_faults;
mod tc_change;
mod trace_parsing;
