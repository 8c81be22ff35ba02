//! Writes `crates/cell/src/dispersion_table.rs`, the channel dispersion tables of the NR
//! code-block error model, from their numerical integral
//! ([`multiconn_cell::amc::integrate_dispersion_table`]):
//!
//! ```sh
//! cargo run --release -p multiconn-cell --example dispersion_table > crates/cell/src/dispersion_table.rs
//! ```
//!
//! Floats are printed with Rust's shortest round-trip form, so the file holds the integral's
//! values bit for bit (a test of the crate checks it).

use multiconn_cell::amc::{integrate_dispersion_table, MI_TABLE_POINTS};
use multiconn_cell::tables::Modulation;

fn main() {
    println!("//! Channel dispersion per coded bit (bits², the variance of the information density of square");
    println!("//! QAM over AWGN divided by Q_m) of QPSK, 16QAM, 64QAM and 256QAM at −30 + k·0.1 dB, k = 0..{}:", MI_TABLE_POINTS - 1);
    println!("//! the tables of [`crate::amc::dispersion_per_bit`]. Generated from");
    println!("//! [`crate::amc::integrate_dispersion_table`] by");
    println!("//! `cargo run --release -p multiconn-cell --example dispersion_table > crates/cell/src/dispersion_table.rs`;");
    println!("//! do not edit. A test checks every value against the integral, bit for bit.");
    println!();
    println!("/// Per modulation (QPSK, 16QAM, 64QAM, 256QAM), bits² per coded bit on the 0.1 dB grid.");
    println!("#[rustfmt::skip]");
    println!("pub(crate) static DISPERSION_PER_CODED_BIT: [[f64; {MI_TABLE_POINTS}]; 4] = [");
    for m in [Modulation::Qpsk, Modulation::Qam16, Modulation::Qam64, Modulation::Qam256] {
        println!("    [");
        for row in integrate_dispersion_table(m).chunks(6) {
            let cells: Vec<String> = row.iter().map(|v| format!("{v:?}")).collect();
            println!("        {},", cells.join(", "));
        }
        println!("    ],");
    }
    println!("];");
}
