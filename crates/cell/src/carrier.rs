//! The air interface a cell runs on, slot by slot: LTE (TS 36.211/36.213: a 1 ms TTI, FDD,
//! downlink and uplink in every TTI, the tables of 36.213) or NR (TS 38.211/38.213/38.214: a
//! slot of 1/2^μ ms, FDD or a TDD pattern, the PDSCH and PUSCH symbols of each slot, the MCS
//! tables and TBS procedure of 38.214, HARQ feedback timed by K1 and the UE's processing time).
//!
//! What the cell asks here, per slot n: may it schedule downlink data, and over which REs
//! ([`Carrier::downlink`]); may UEs send uplink data ([`Carrier::uplink`]); and when a HARQ
//! process used in slot n is free again ([`Carrier::dl_harq`], [`Carrier::ul_harq`]).
//!
//! NR's timing, a modelling choice documented in `docs/nr-cell.md` (TS 38.213 §9.2.3, 38.214
//! §5.3 and §6.4 for the bounds it respects):
//!
//! * **Downlink HARQ.** The ACK/NACK of a PDSCH ending at symbol e of slot n goes in the first
//!   slot m ≥ n + K1 whose uplink symbols start at least N1 symbols after the PDSCH's end (in a
//!   special slot its U symbols, else a U slot; every slot in FDD). The gNB decodes it within
//!   that slot and may retransmit from slot m + 1.
//! * **Uplink HARQ.** A PUSCH in slot n is decoded within the next slot; the retransmission is
//!   granted in the first downlink slot g ≥ n + 1 and sent in the first uplink slot ≥ g + K2.
//! * **PDSCH** uses a slot's downlink symbols after a CORESET of `coreset_symbols`; **PUSCH**
//!   only U slots (a special slot's few U symbols carry PUCCH and SRS), all 14 symbols.
//!   Both lose `dmrs_re_per_prb` REs per PRB to DMRS and `overhead_re_per_prb` to CSI-RS,
//!   TRS or PT-RS.

use crate::error::CellError;
use crate::harq::HarqTiming;
use crate::nr::bandwidth::RbgConfig;
use crate::nr::mcs::McsTable;
use crate::nr::numerology::{Numerology, SYMBOLS_PER_SLOT};
use crate::nr::tbs::TbsShape;
use crate::nr::tdd::Duplex;
use crate::scheme::McsScheme;

/// LTE's TTI, ns.
pub const LTE_TTI_NS: u64 = 1_000_000;

/// What a slot offers one direction's data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SlotUse {
    /// Nothing (a TDD slot of the other direction, or too few symbols).
    Closed,
    /// LTE's TTI (its TBS table needs no symbol count).
    Tti,
    /// NR: transport blocks over these REs.
    Symbols(TbsShape),
}

/// An NR carrier's configuration (one bandwidth part).
#[derive(Clone, Debug, PartialEq)]
pub struct NrCarrier {
    /// Subcarrier spacing and slot length.
    pub numerology: Numerology,
    /// FDD or a TDD pattern.
    pub duplex: Duplex,
    /// PDSCH/PUSCH MCS table (and its CQI table).
    pub mcs_table: McsTable,
    /// PDCCH symbols at the start of every downlink slot (1..=3; 2 typical).
    pub coreset_symbols: u8,
    /// DMRS REs per PRB of a transport block (12: one front-loaded type-1 symbol with both CDM
    /// groups left without data; 36 with two additional positions, the RRC default pos2).
    pub dmrs_re_per_prb: u8,
    /// Other overhead REs per PRB (TS 38.214 `xOverhead`: 0, 6, 12 or 18).
    pub overhead_re_per_prb: u8,
    /// MIMO layers of a downlink transport block (1..=4, one codeword); the uplink sends one.
    pub layers: u8,
    /// HARQ processes per UE and direction (1..=16).
    pub harq_processes: u8,
    /// The smallest PDSCH-to-HARQ-ACK offset K1, slots (0..=15).
    pub k1_slots: u8,
    /// The smallest grant-to-PUSCH offset K2, slots (0..=15).
    pub k2_slots: u8,
    /// The UE's PDSCH processing time N1, symbols (TS 38.214 Table 5.3-1, capability 1: 8, 10,
    /// 17, 20 for μ 0–3).
    pub n1_symbols: u8,
    /// The RBG size configuration (TS 38.214 Table 5.1.2.2.1-1).
    pub rbg: RbgConfig,
}

impl NrCarrier {
    /// A carrier of numerology `numerology` and duplex `duplex` with the common defaults: the
    /// 256QAM table, a 2-symbol CORESET, one DMRS symbol (12 REs), no other overhead, one layer,
    /// 16 HARQ processes, K1 = 1, K2 = 1, N1 of capability 1, RBG configuration 1.
    pub fn new(numerology: Numerology, duplex: Duplex) -> NrCarrier {
        NrCarrier {
            numerology,
            duplex,
            mcs_table: McsTable::Qam256,
            coreset_symbols: 2,
            dmrs_re_per_prb: 12,
            overhead_re_per_prb: 0,
            layers: 1,
            harq_processes: 16,
            k1_slots: 1,
            k2_slots: 1,
            n1_symbols: N1_CAPABILITY_1[numerology.mu() as usize],
            rbg: RbgConfig::Config1,
        }
    }

    /// Checks every field; errors name `cell.<field>`.
    pub fn validate(&self) -> Result<(), CellError> {
        let check = |field: &str, v: u8, lo: u8, hi: u8| {
            if (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err(CellError::out_of_range(field, f64::from(v), &format!("an integer in [{lo}, {hi}]")))
            }
        };
        check("cell.coreset_symbols", self.coreset_symbols, 1, 3)?;
        check("cell.layers", self.layers, 1, 4)?;
        check("cell.harq_processes", self.harq_processes, 1, 16)?;
        check("cell.k1_slots", self.k1_slots, 0, 15)?;
        check("cell.k2_slots", self.k2_slots, 0, 15)?;
        check("cell.n1_symbols", self.n1_symbols, 1, 40)?;
        check("cell.dmrs_re_per_prb", self.dmrs_re_per_prb, 0, 72)?;
        if ![0, 6, 12, 18].contains(&self.overhead_re_per_prb) {
            return Err(CellError::out_of_range("cell.overhead_re_per_prb", f64::from(self.overhead_re_per_prb), "0, 6, 12 or 18"));
        }
        if let Duplex::Tdd(p) = &self.duplex {
            if !p.slots().iter().any(|k| k.dl_symbols() > self.coreset_symbols) {
                return Err(CellError::invalid("cell.tdd_pattern", format!("{:?} has no slot with downlink symbols after the CORESET", p.to_letters())));
            }
            if !p.slots().iter().any(|k| k.ul_symbols() == SYMBOLS_PER_SLOT) {
                return Err(CellError::invalid("cell.tdd_pattern", format!("{:?} has no U slot: the uplink and HARQ feedback need one", p.to_letters())));
            }
        }
        // Every slot's REs must make a valid transport block shape.
        for symbols in [SYMBOLS_PER_SLOT - self.coreset_symbols, SYMBOLS_PER_SLOT] {
            self.shape(symbols, self.layers).validate()?;
        }
        Ok(())
    }

    fn shape(&self, symbols: u8, layers: u8) -> TbsShape {
        TbsShape { symbols, dmrs_re_per_prb: self.dmrs_re_per_prb, overhead_re_per_prb: self.overhead_re_per_prb, layers }
    }

    fn period(&self) -> u64 {
        match &self.duplex {
            Duplex::Fdd => 1,
            Duplex::Tdd(p) => u64::from(p.period_slots()),
        }
    }

    /// PDSCH symbols of slot `slot`: its downlink symbols after the CORESET (0 if none are
    /// left, or none of the DMRS's REs would fit).
    fn pdsch_symbols(&self, slot: u64) -> u8 {
        self.duplex.dl_symbols(slot).saturating_sub(self.coreset_symbols)
    }

    /// The last symbol (absolute: slot·14 + index) of slot `slot`'s PDSCH.
    fn pdsch_end(&self, slot: u64) -> u64 {
        slot * u64::from(SYMBOLS_PER_SLOT) + u64::from(self.duplex.dl_symbols(slot)) - 1
    }

    /// Slots from a PDSCH in slot `n` to the reuse of its process (see the module header).
    fn dl_ready_after(&self, n: u64) -> u64 {
        if self.duplex.dl_symbols(n) == 0 {
            return 1; // no PDSCH in this slot: never asked
        }
        let sym = u64::from(SYMBOLS_PER_SLOT);
        let earliest = self.pdsch_end(n) + 1 + u64::from(self.n1_symbols);
        // A valid carrier has a U slot in every period: found within two periods past K1 and N1.
        let first = n + u64::from(self.k1_slots);
        (first..first + 2 * self.period() + 4)
            .find(|&m| {
                let ul = u64::from(self.duplex.ul_symbols(m));
                ul > 0 && m * sym + (sym - ul) >= earliest
            })
            .map_or(2 * self.period() + 4, |m| m + 1 - n)
    }

    /// Slots from a PUSCH in slot `n` to the first slot its retransmission may go in.
    fn ul_ready_after(&self, n: u64) -> u64 {
        let grant = self.duplex.next_dl_slot(n + 1);
        let first = grant + u64::from(self.k2_slots);
        (first..first + self.period() + 1).find(|&m| self.duplex.ul_symbols(m) == SYMBOLS_PER_SLOT).map_or(2 * self.period() + 2, |m| m - n)
    }
}

/// TS 38.214 Table 5.3-1, UE capability 1 without additional DMRS: N1 symbols for μ 0–3.
pub const N1_CAPABILITY_1: [u8; 4] = [8, 10, 17, 20];

/// A cell's air interface.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Carrier {
    /// LTE FDD: 1 ms TTIs, 36.213's tables, 8 HARQ processes with an 8-TTI round trip.
    #[default]
    Lte,
    /// NR.
    Nr(NrCarrier),
}

impl Carrier {
    /// The scheduling unit, ns.
    pub fn slot_ns(&self) -> u64 {
        match self {
            Carrier::Lte => LTE_TTI_NS,
            Carrier::Nr(c) => c.numerology.slot_ns(),
        }
    }

    /// The scheduling unit, s.
    pub fn slot_s(&self) -> f64 {
        self.slot_ns() as f64 * 1e-9
    }

    /// The width of one resource block, Hz.
    pub fn rb_hz(&self) -> f64 {
        match self {
            Carrier::Lte => crate::channel::RB_BANDWIDTH_HZ,
            Carrier::Nr(c) => c.numerology.rb_bandwidth_hz(),
        }
    }

    /// The MCS/CQI/TBS tables.
    pub fn scheme(&self) -> McsScheme {
        match self {
            Carrier::Lte => McsScheme::Lte,
            Carrier::Nr(c) => McsScheme::Nr(c.mcs_table),
        }
    }

    /// What slot `slot` offers downlink data.
    pub fn downlink(&self, slot: u64) -> SlotUse {
        match self {
            Carrier::Lte => SlotUse::Tti,
            Carrier::Nr(c) => match c.pdsch_symbols(slot) {
                0 => SlotUse::Closed,
                symbols => SlotUse::Symbols(c.shape(symbols, c.layers)),
            },
        }
    }

    /// What slot `slot` offers uplink data (NR: U slots only, one layer).
    pub fn uplink(&self, slot: u64) -> SlotUse {
        match self {
            Carrier::Lte => SlotUse::Tti,
            Carrier::Nr(c) if c.duplex.ul_symbols(slot) == SYMBOLS_PER_SLOT => SlotUse::Symbols(c.shape(SYMBOLS_PER_SLOT, 1)),
            Carrier::Nr(_) => SlotUse::Closed,
        }
    }

    /// The first slot from `from` on that carries the uplink's data (`up`) or the downlink's.
    pub fn next_open(&self, up: bool, from: u64) -> u64 {
        (from..from + 1280).find(|&slot| if up { self.uplink(slot) } else { self.downlink(slot) } != SlotUse::Closed).unwrap_or(from)
    }

    /// The REs of a full uplink slot (NR), none for LTE.
    pub fn uplink_shape(&self) -> Option<TbsShape> {
        match self {
            Carrier::Lte => None,
            Carrier::Nr(c) => Some(c.shape(SYMBOLS_PER_SLOT, 1)),
        }
    }

    /// Downlink HARQ processes per UE and their reuse after a transmission.
    pub fn dl_harq(&self) -> Result<(usize, HarqTiming), CellError> {
        match self {
            Carrier::Lte => Ok((crate::harq::HARQ_PROCESSES, HarqTiming::default())),
            Carrier::Nr(c) => Ok((usize::from(c.harq_processes), HarqTiming::periodic((0..c.period()).map(|n| c.dl_ready_after(n)).collect())?)),
        }
    }

    /// When an uplink TB in error may be sent again.
    pub fn ul_harq(&self) -> Result<HarqTiming, CellError> {
        match self {
            Carrier::Lte => Ok(HarqTiming::default()),
            Carrier::Nr(c) => HarqTiming::periodic((0..c.period()).map(|n| c.ul_ready_after(n)).collect()),
        }
    }

    /// Checks the NR fields (LTE has none).
    pub fn validate(&self) -> Result<(), CellError> {
        match self {
            Carrier::Lte => Ok(()),
            Carrier::Nr(c) => c.validate(),
        }
    }
}
