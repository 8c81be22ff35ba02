//! The duplex mode of an NR carrier: FDD (every slot carries 14 downlink symbols on the DL
//! carrier and 14 uplink symbols on the UL carrier) or a TDD pattern repeated forever, as
//! TS 38.331 `TDD-UL-DL-ConfigCommon` configures it and TS 38.213 §11.1 applies it: a period of
//! downlink (D), uplink (U) and special (S) slots, the special slot starting with downlink
//! symbols (`nrofDownlinkSymbols`), ending with uplink symbols (`nrofUplinkSymbols`) and
//! flexible symbols between them used as the guard period.
//!
//! A pattern is written as one letter per slot, e.g. "DDDSU" (2.5 ms at 30 kHz) or
//! "DDDDDDDSUU" (5 ms), with one D:G:U split for all its S slots (10:2:2 by default, TS 38.213
//! slot format 32).

use crate::error::CellError;
use crate::nr::numerology::SYMBOLS_PER_SLOT;

/// The most slots a pattern may have: a 10 ms period at 120 kHz.
pub const MAX_PATTERN_SLOTS: usize = 80;

/// What a TDD slot carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotKind {
    /// 14 downlink symbols.
    Downlink,
    /// 14 uplink symbols.
    Uplink,
    /// A special slot: downlink symbols, then guard (flexible) symbols, then uplink symbols.
    Special {
        /// Downlink symbols at the start of the slot.
        dl_symbols: u8,
        /// Guard symbols between them.
        guard_symbols: u8,
        /// Uplink symbols at the end of the slot.
        ul_symbols: u8,
    },
}

impl SlotKind {
    /// Downlink symbols of the slot: 14, 0, or the special slot's.
    pub fn dl_symbols(self) -> u8 {
        match self {
            SlotKind::Downlink => SYMBOLS_PER_SLOT,
            SlotKind::Uplink => 0,
            SlotKind::Special { dl_symbols, .. } => dl_symbols,
        }
    }

    /// Uplink symbols of the slot: 0, 14, or the special slot's.
    pub fn ul_symbols(self) -> u8 {
        match self {
            SlotKind::Downlink => 0,
            SlotKind::Uplink => SYMBOLS_PER_SLOT,
            SlotKind::Special { ul_symbols, .. } => ul_symbols,
        }
    }
}

/// The symbol split of a special slot, D:G:U, summing to 14.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpecialSlot {
    /// Downlink symbols (`nrofDownlinkSymbols`).
    pub dl: u8,
    /// Guard (flexible) symbols.
    pub guard: u8,
    /// Uplink symbols (`nrofUplinkSymbols`).
    pub ul: u8,
}

impl Default for SpecialSlot {
    /// 10:2:2 (slot format 32).
    fn default() -> SpecialSlot {
        SpecialSlot { dl: 10, guard: 2, ul: 2 }
    }
}

impl SpecialSlot {
    /// The split `dl`:`guard`:`ul`, refused (field `cell.special_slot`) unless it sums to 14.
    pub fn new(dl: u8, guard: u8, ul: u8) -> Result<SpecialSlot, CellError> {
        let s = SpecialSlot { dl, guard, ul };
        s.validate()?;
        Ok(s)
    }

    /// `Ok` when the three counts sum to 14 symbols.
    pub fn validate(&self) -> Result<(), CellError> {
        let sum = u16::from(self.dl) + u16::from(self.guard) + u16::from(self.ul);
        if sum == u16::from(SYMBOLS_PER_SLOT) {
            Ok(())
        } else {
            Err(CellError::invalid(
                "cell.special_slot",
                format!("{}:{}:{} sums to {sum} symbols: the D:G:U symbols of a special slot must sum to 14", self.dl, self.guard, self.ul),
            ))
        }
    }

    fn kind(self) -> SlotKind {
        SlotKind::Special { dl_symbols: self.dl, guard_symbols: self.guard, ul_symbols: self.ul }
    }
}

/// One period of a TDD pattern, 1..=80 slots, repeated from slot 0. It has at least one
/// downlink and one uplink symbol, so that the next slot of either direction always exists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TddPattern {
    slots: Vec<SlotKind>,
}

impl TddPattern {
    /// The pattern written `pattern`, one upper-case letter per slot: `D` downlink, `U` uplink,
    /// `S` special with the split `special`. Refused (field `cell.tdd_pattern`): an empty
    /// pattern, more than 80 slots, another letter (the message names it and its position,
    /// counting from 1), or no downlink or no uplink symbol in the period; a split not summing
    /// to 14 is refused with field `cell.special_slot`.
    pub fn parse(pattern: &str, special: SpecialSlot) -> Result<TddPattern, CellError> {
        special.validate()?;
        let mut slots = Vec::with_capacity(pattern.len().min(MAX_PATTERN_SLOTS));
        for (i, c) in pattern.chars().enumerate() {
            if i >= MAX_PATTERN_SLOTS {
                let n = pattern.chars().count();
                return Err(CellError::invalid("cell.tdd_pattern", format!("{n} slots: a pattern has 1 to 80 slots (one letter per slot)")));
            }
            slots.push(match c {
                'D' => SlotKind::Downlink,
                'U' => SlotKind::Uplink,
                'S' => special.kind(),
                _ => {
                    return Err(CellError::invalid(
                        "cell.tdd_pattern",
                        format!("{pattern:?}: letter {c:?} at position {} is not a slot kind; allowed letters are D (downlink), U (uplink) and S (special)", i + 1),
                    ))
                }
            });
        }
        if slots.is_empty() {
            return Err(CellError::invalid("cell.tdd_pattern", "empty: a pattern has 1 to 80 slots, each D, U or S"));
        }
        let pattern = TddPattern { slots };
        if pattern.dl_symbols_per_period() == 0 || pattern.ul_symbols_per_period() == 0 {
            return Err(CellError::invalid(
                "cell.tdd_pattern",
                format!("{:?} has no downlink or no uplink symbol: a TDD pattern needs both (use FDD otherwise)", pattern.to_letters()),
            ));
        }
        Ok(pattern)
    }

    /// The slots of one period.
    pub fn slots(&self) -> &[SlotKind] {
        &self.slots
    }

    /// The period in slots, 1..=80.
    pub fn period_slots(&self) -> u32 {
        self.slots.len() as u32
    }

    /// The pattern written back as letters, e.g. "DDDSU".
    pub fn to_letters(&self) -> String {
        self.slots
            .iter()
            .map(|k| match k {
                SlotKind::Downlink => 'D',
                SlotKind::Uplink => 'U',
                SlotKind::Special { .. } => 'S',
            })
            .collect()
    }

    /// The kind of slot `slot` (counted from 0, the pattern repeating from slot 0).
    pub fn slot_kind(&self, slot: u64) -> SlotKind {
        self.slots[(slot % self.slots.len() as u64) as usize]
    }

    fn dl_symbols_per_period(&self) -> u32 {
        self.slots.iter().map(|k| u32::from(k.dl_symbols())).sum()
    }

    fn ul_symbols_per_period(&self) -> u32 {
        self.slots.iter().map(|k| u32::from(k.ul_symbols())).sum()
    }

    fn all_symbols_per_period(&self) -> f64 {
        f64::from(self.period_slots()) * f64::from(SYMBOLS_PER_SLOT)
    }

    /// The share of a period's symbols that are downlink (S slots count their D symbols), e.g.
    /// (3·14 + 10)/70 for DDDSU with 10:2:2.
    pub fn dl_symbol_share(&self) -> f64 {
        f64::from(self.dl_symbols_per_period()) / self.all_symbols_per_period()
    }

    /// The share of a period's symbols that are uplink (S slots count their U symbols).
    pub fn ul_symbol_share(&self) -> f64 {
        f64::from(self.ul_symbols_per_period()) / self.all_symbols_per_period()
    }

    /// The first slot ≥ `from_slot` whose symbols in the wanted direction are not 0 (found
    /// within one period; saturates at `u64::MAX`).
    fn next_slot(&self, from_slot: u64, symbols: impl Fn(SlotKind) -> u8) -> u64 {
        let period = self.slots.len() as u64;
        let start = from_slot % period;
        (0..period).find(|&k| symbols(self.slots[((start + k) % period) as usize]) > 0).map_or(from_slot, |k| from_slot.saturating_add(k))
    }
}

/// How a carrier shares time between the directions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Duplex {
    /// Frequency division: every slot has 14 downlink and 14 uplink symbols (on two carriers).
    Fdd,
    /// Time division by a repeated pattern.
    Tdd(TddPattern),
}

impl Duplex {
    /// FDD for `None` or "FDD" (any case); otherwise the TDD pattern `pattern` with the split
    /// `special`, as [`TddPattern::parse`] (whose errors it returns).
    pub fn parse(pattern: Option<&str>, special: SpecialSlot) -> Result<Duplex, CellError> {
        match pattern {
            None => Ok(Duplex::Fdd),
            Some(p) if p.eq_ignore_ascii_case("fdd") => Ok(Duplex::Fdd),
            Some(p) => Ok(Duplex::Tdd(TddPattern::parse(p, special)?)),
        }
    }

    /// Downlink symbols of slot `slot`: FDD 14; TDD D 14, S its D symbols, U 0.
    pub fn dl_symbols(&self, slot: u64) -> u8 {
        match self {
            Duplex::Fdd => SYMBOLS_PER_SLOT,
            Duplex::Tdd(p) => p.slot_kind(slot).dl_symbols(),
        }
    }

    /// Uplink symbols of slot `slot`: FDD 14; TDD U 14, S its U symbols, D 0.
    pub fn ul_symbols(&self, slot: u64) -> u8 {
        match self {
            Duplex::Fdd => SYMBOLS_PER_SLOT,
            Duplex::Tdd(p) => p.slot_kind(slot).ul_symbols(),
        }
    }

    /// The first slot ≥ `from_slot` with uplink symbols (for HARQ feedback timing): `from_slot`
    /// itself in FDD, at most one period later in TDD (saturating at `u64::MAX`).
    pub fn next_ul_slot(&self, from_slot: u64) -> u64 {
        match self {
            Duplex::Fdd => from_slot,
            Duplex::Tdd(p) => p.next_slot(from_slot, SlotKind::ul_symbols),
        }
    }

    /// The first slot ≥ `from_slot` with downlink symbols: `from_slot` itself in FDD, at most
    /// one period later in TDD (saturating at `u64::MAX`).
    pub fn next_dl_slot(&self, from_slot: u64) -> u64 {
        match self {
            Duplex::Fdd => from_slot,
            Duplex::Tdd(p) => p.next_slot(from_slot, SlotKind::dl_symbols),
        }
    }

    /// The share of symbols that are downlink: 1 in FDD, the pattern's in TDD.
    pub fn dl_symbol_share(&self) -> f64 {
        match self {
            Duplex::Fdd => 1.0,
            Duplex::Tdd(p) => p.dl_symbol_share(),
        }
    }

    /// The share of symbols that are uplink: 1 in FDD, the pattern's in TDD.
    pub fn ul_symbol_share(&self) -> f64 {
        match self {
            Duplex::Fdd => 1.0,
            Duplex::Tdd(p) => p.ul_symbol_share(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dddsu() -> TddPattern {
        TddPattern::parse("DDDSU", SpecialSlot::default()).unwrap()
    }

    #[test]
    fn a_pattern_repeats_its_slots_with_the_special_split() {
        let p = dddsu();
        assert_eq!(p.period_slots(), 5);
        assert_eq!(p.to_letters(), "DDDSU");
        let s = SlotKind::Special { dl_symbols: 10, guard_symbols: 2, ul_symbols: 2 };
        let kinds: Vec<SlotKind> = (0..10).map(|i| p.slot_kind(i)).collect();
        assert_eq!(kinds[..5], [SlotKind::Downlink, SlotKind::Downlink, SlotKind::Downlink, s, SlotKind::Uplink]);
        assert_eq!(kinds[..5], kinds[5..]);
        assert_eq!(p.slot_kind(u64::MAX), p.slot_kind(u64::MAX % 5));
        assert!((p.dl_symbol_share() - 52.0 / 70.0).abs() < 1e-15);
        assert!((p.ul_symbol_share() - 16.0 / 70.0).abs() < 1e-15);
    }

    #[test]
    fn duplex_counts_symbols_per_slot_and_finds_the_next_slot_of_a_direction() {
        let tdd = Duplex::parse(Some("DDDSU"), SpecialSlot::new(6, 4, 4).unwrap()).unwrap();
        let dl: Vec<u8> = (0..5).map(|s| tdd.dl_symbols(s)).collect();
        let ul: Vec<u8> = (0..5).map(|s| tdd.ul_symbols(s)).collect();
        assert_eq!((dl, ul), (vec![14, 14, 14, 6, 0], vec![0, 0, 0, 4, 14]));
        assert_eq!([0, 3, 4, 5].map(|s| tdd.next_ul_slot(s)), [3, 3, 4, 8]);
        assert_eq!([0, 3, 4, 9].map(|s| tdd.next_dl_slot(s)), [0, 3, 5, 10]);
        // A special slot without uplink symbols is skipped.
        let no_ul_in_s = Duplex::parse(Some("DSU"), SpecialSlot::new(12, 2, 0).unwrap()).unwrap();
        assert_eq!(no_ul_in_s.next_ul_slot(0), 2);
        // u64::MAX is slot 0 of its period (2^64 ≡ 1 mod 5).
        assert_eq!(tdd.next_dl_slot(u64::MAX - 1), u64::MAX);
        assert_eq!(tdd.next_ul_slot(u64::MAX), u64::MAX, "saturates");
        for fdd in [Duplex::parse(None, SpecialSlot::default()).unwrap(), Duplex::parse(Some("FDD"), SpecialSlot::default()).unwrap()] {
            assert_eq!(fdd, Duplex::Fdd);
            assert_eq!((fdd.dl_symbols(7), fdd.ul_symbols(7), fdd.next_ul_slot(7), fdd.next_dl_slot(7)), (14, 14, 7, 7));
            assert_eq!((fdd.dl_symbol_share(), fdd.ul_symbol_share()), (1.0, 1.0));
        }
    }

    #[test]
    fn bad_patterns_and_splits_are_refused_with_what_is_allowed() {
        let err = TddPattern::parse("DDdSU", SpecialSlot::default()).unwrap_err().to_string();
        assert!(err.contains("cell.tdd_pattern") && err.contains("'d' at position 3") && err.contains("D (downlink), U (uplink) and S"), "{err}");
        let err = TddPattern::parse("", SpecialSlot::default()).unwrap_err().to_string();
        assert!(err.contains("cell.tdd_pattern") && err.contains("empty"), "{err}");
        let err = TddPattern::parse(&"DU".repeat(41), SpecialSlot::default()).unwrap_err().to_string();
        assert!(err.contains("82 slots") && err.contains("1 to 80"), "{err}");
        assert_eq!(TddPattern::parse(&"DU".repeat(40), SpecialSlot::default()).unwrap().period_slots(), 80);
        let err = TddPattern::parse("DDD", SpecialSlot::default()).unwrap_err().to_string();
        assert!(err.contains("no downlink or no uplink"), "{err}");
        assert!(TddPattern::parse("UUS", SpecialSlot::new(0, 2, 12).unwrap()).is_err());
        assert!(TddPattern::parse("DDDSU", SpecialSlot { dl: 10, guard: 2, ul: 2 }).is_ok());
        let err = TddPattern::parse("DDDSU", SpecialSlot { dl: 10, guard: 2, ul: 3 }).unwrap_err().to_string();
        assert!(err.contains("cell.special_slot") && err.contains("10:2:3 sums to 15") && err.contains("14"), "{err}");
        assert!(SpecialSlot::new(255, 255, 255).is_err());
        let err = Duplex::parse(Some("DDDéU"), SpecialSlot::default()).unwrap_err().to_string();
        assert!(err.contains("'é' at position 4"), "{err}");
    }
}
