//! The integration tests of multiconn-cc, one binary (`cargo test -p multiconn-cc --test it`);
//! each module is one feature or protocol phase.

mod bbr3;
mod coupled;
mod prague;
mod westwood;
mod window_bounds;
mod wvegas;
