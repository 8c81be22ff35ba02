//! `multiconn-emu SCENARIO --out DIR [--set KEY=VALUE]... [--seed N] [--python PATH]
//! [--time-limit SECONDS] [--budget-us N] [--max-rate-mbps N] [--realtime] [--base-dir DIR] [-q]`: one emulated run
//! ([`multiconn_emu::cli`]).
//!
//! `multiconn emulate` (the Python CLI) runs this program, or the same command line through
//! the Python extension where multiconn was installed by pip; it exits 0 after a run, 2 on bad
//! input or when this machine cannot emulate (with one line saying why), 1 when a run fails.

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(multiconn_emu::cli::main(std::env::args().skip(1)))
}
