//! The transmitting PDCP entity at the split point of a DC split bearer (TS 38.323 §5.2.1,
//! §5.11 duplication; the split algorithm itself is not standardised, pdcp-dc.md §4.3).
//!
//! STUB: signatures only; bodies to be written.

use multiconn_core::{Dur, Time};

use crate::receiver::SnLength;

/// Radio access technology of the PDCP entity: sets the data-PDU header size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rat {
    Nr,
    Lte,
}

/// Data PDU header bytes (D/C bit, reserved bits, SN): NR 12 bit → 2, 18 bit → 3;
/// LTE 7 bit → 1, 12 bit → 2, 15 bit → 2, 18 bit → 3. `None` for a combination the RAT does
/// not define (NR 7 or 15 bit).
pub fn header_bytes(rat: Rat, sn: SnLength) -> Option<u32> {
    let _ = (rat, sn);
    todo!()
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AdaptiveSignal {
    /// Earliest estimated arrival: base delay + backlog / rate, per leg.
    Delay,
    /// Smallest estimated backlog in bytes.
    Queue,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SplitPolicy {
    /// Batches of `size` PDUs: the first round(size · share) on leg 0, the rest on leg 1.
    Batch { size: u32, share: f64 },
    /// Leg 0, leg 1, leg 0, ...
    Alternate,
    /// Per PDU, interleaved (smooth weighted round-robin): leg 0 carries `share` of the PDUs.
    Ratio { share: f64 },
    /// Every PDU on both legs (§5.11).
    Duplicate,
    /// Each PDU on the leg the latest leg reports favour.
    Adaptive { signal: AdaptiveSignal },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TransmitterConfig {
    pub rat: Rat,
    pub sn: SnLength,
    pub policy: SplitPolicy,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Legs {
    One(usize),
    Both,
}

/// A numbered PDU and where it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pdu {
    pub count: i64,
    pub sn: u32,
    pub legs: Legs,
    /// SDU size + header.
    pub size: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxRefusal {
    /// Window_Size − 1 PDUs are already outstanding beyond the receiver's RX_DELIV.
    WindowFull,
    /// COUNT 2^32 − 1 was used: the bearer must be re-keyed (TS 33.501), nothing more is sent.
    CountExhausted,
}

/// Flow-control feedback from one leg (the DL DATA DELIVERY STATUS idea of TS 38.425).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegReport {
    /// Bytes waiting in the leg's queue when the report was made.
    pub queued_bytes: u64,
    /// Bytes the leg delivered since its previous report.
    pub delivered_bytes: u64,
    /// Time since its previous report.
    pub interval: Dur,
    /// Smallest split-to-receiver delay of the PDUs it delivered in that interval.
    pub min_delay: Option<Dur>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxStats {
    pub pdus: [u64; 2],
    pub bytes: [u64; 2],
    pub window_full: u64,
}

pub struct Transmitter {
    _cfg: TransmitterConfig,
}

impl Transmitter {
    pub fn new(cfg: TransmitterConfig) -> Transmitter {
        Transmitter { _cfg: cfg }
    }
    pub fn starting_at(cfg: TransmitterConfig, count: i64) -> Transmitter {
        let _ = count;
        Transmitter { _cfg: cfg }
    }
    pub fn header_bytes(&self) -> u32 {
        todo!()
    }
    pub fn send(&mut self, now: Time, sdu_size: u32) -> Result<Pdu, TxRefusal> {
        let _ = (now, sdu_size);
        todo!()
    }
    pub fn on_delivered(&mut self, rx_deliv: i64) {
        let _ = rx_deliv;
        todo!()
    }
    pub fn on_leg_report(&mut self, now: Time, leg: usize, report: LegReport) {
        let _ = (now, leg, report);
        todo!()
    }
    pub fn outstanding(&self) -> i64 {
        todo!()
    }
    pub fn stats(&self) -> TxStats {
        todo!()
    }
}
