//! Writes `crates/cell/src/mi_table.rs`, the mutual-information tables of the MIESM link
//! adaptation, from their numerical integral ([`multiconn_cell::amc::integrate_mi_table`]):
//!
//! ```sh
//! cargo run --release -p multiconn-cell --example mi_table > crates/cell/src/mi_table.rs
//! ```
//!
//! Floats are printed with Rust's shortest round-trip form, so the file holds the integral's
//! values bit for bit (a test of the crate checks it).

use multiconn_cell::amc::{integrate_mi_table, MI_TABLE_POINTS};
use multiconn_cell::tables::Modulation;

fn main() {
    println!("//! Mutual information per coded bit of QPSK, 16QAM, 64QAM and 256QAM (square QAM, constellation-");
    println!("//! constrained capacity over AWGN, divided by Q_m) at −30 + k·0.1 dB, k = 0..{}: the tables", MI_TABLE_POINTS - 1);
    println!("//! of [`crate::amc::mi_per_bit`]. Generated from [`crate::amc::integrate_mi_table`] by");
    println!("//! `cargo run --release -p multiconn-cell --example mi_table > crates/cell/src/mi_table.rs`;");
    println!("//! do not edit. A test checks every value against the integral, bit for bit.");
    println!();
    println!("/// Per modulation (QPSK, 16QAM, 64QAM, 256QAM), bits per coded bit on the 0.1 dB grid.");
    println!("#[rustfmt::skip]");
    println!("pub(crate) static MI_PER_CODED_BIT: [[f64; {MI_TABLE_POINTS}]; 4] = [");
    for m in [Modulation::Qpsk, Modulation::Qam16, Modulation::Qam64, Modulation::Qam256] {
        println!("    [");
        for row in integrate_mi_table(m).chunks(6) {
            let cells: Vec<String> = row.iter().map(|v| format!("{v:?}")).collect();
            println!("        {},", cells.join(", "));
        }
        println!("    ],");
    }
    println!("];");
}
