//! The integration tests of multiconn-multipath, one binary (`cargo test -p multiconn-multipath --test it`);
//! each module is one feature or protocol phase.

mod path_health;
mod path_manager;
mod priorities;
mod properties;
mod scheduler_rules;
