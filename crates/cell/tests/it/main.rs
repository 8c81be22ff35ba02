//! The integration tests of multiconn-cell, one binary (`cargo test -p multiconn-cell --test it`);
//! each module is one feature.

mod amc;
mod aqm;
mod fading;
mod harq;
mod hop;
mod l4s;
mod nr;
mod nr_bler;
mod nr_cell;
mod ran;
mod rlc;
mod rlc_am;
mod sched;
mod series;
mod tables;
mod tdl;
mod timing;
mod ul;
