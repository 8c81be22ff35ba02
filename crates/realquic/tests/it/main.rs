//! The integration tests of multiconn-realquic, one binary (`cargo test -p multiconn-realquic
//! --test it`); each module is one property of the adapter. The scenario-level tests (runs
//! against the model, determinism of whole runs, the scenario's refusals) are in
//! `crates/scenario/tests/it/real_quinn.rs`.

mod seeds;
