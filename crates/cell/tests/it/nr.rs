//! The NR physical-layer tables through the public API: PRBs per bandwidth, numerologies, TDD
//! patterns, and the saturated single-UE MAC payload of a TDD carrier (reference note §7.2)
//! computed from the TBS of each slot of the pattern.

use multiconn_cell::nr::{
    bandwidths_mhz, n_rb, overhead, peak_rate_bps, tbs_for_mcs, Duplex, FrequencyRange, McsTable, Numerology, SpecialSlot, TbsShape, TddPattern,
};
use multiconn_cell::Modulation;

fn mu(m: u8) -> Numerology {
    Numerology::new(m).unwrap()
}

#[test]
fn prbs_per_bandwidth_match_table_5_3_2_1() {
    // The bold entries of the reference's tables: (range, μ, MHz, N_RB).
    let fr1 = FrequencyRange::Fr1;
    let fr2 = FrequencyRange::Fr2;
    let rows = [
        (fr1, 0, 10, 52),
        (fr1, 0, 20, 106),
        (fr1, 0, 40, 216),
        (fr1, 0, 50, 270),
        (fr1, 1, 10, 24),
        (fr1, 1, 20, 51),
        (fr1, 1, 40, 106),
        (fr1, 1, 50, 133),
        (fr1, 1, 100, 273),
        (fr2, 2, 100, 132),
        (fr2, 2, 200, 264),
        (fr2, 3, 100, 66),
        (fr2, 3, 200, 132),
        (fr2, 3, 400, 264),
    ];
    for (range, m, mhz, rb) in rows {
        assert_eq!(n_rb(range, mu(m), mhz).unwrap(), rb, "{range:?} μ {m} {mhz} MHz");
        assert!(bandwidths_mhz(range, mu(m)).contains(&mhz));
    }
    assert_eq!(n_rb(fr1, mu(2), 100).unwrap(), 135);
    assert_eq!(n_rb(fr2, mu(3), 50).unwrap(), 32);
    assert_eq!(FrequencyRange::of_carrier_ghz(3.5).unwrap(), fr1);
    assert_eq!(FrequencyRange::of_carrier_ghz(28.0).unwrap(), fr2);
}

#[test]
fn a_bandwidth_not_in_the_table_is_refused_listing_the_allowed_ones() {
    let err = n_rb(FrequencyRange::Fr1, mu(0), 100).unwrap_err().to_string();
    assert!(err.contains("cell.bandwidth_mhz = 100") && err.contains("5, 10, 15, 20, 25, 30, 40, 50 MHz") && err.contains("15 kHz"), "{err}");
    let err = n_rb(FrequencyRange::Fr1, mu(1), 70).unwrap_err().to_string();
    assert!(err.contains("cell.bandwidth_mhz = 70") && err.contains("5, 10, 15, 20, 25, 30, 40, 50, 60, 80, 90, 100 MHz"), "{err}");
    let err = n_rb(FrequencyRange::Fr2, mu(3), 20).unwrap_err().to_string();
    assert!(err.contains("50, 100, 200, 400 MHz") && err.contains("FR2 at 120 kHz"), "{err}");
    let err = FrequencyRange::of_carrier_ghz(12.0).unwrap_err().to_string();
    assert!(err.contains("cell.carrier_ghz = 12"), "{err}");
}

#[test]
fn a_numerology_of_4_is_refused() {
    let err = Numerology::new(4).unwrap_err().to_string();
    assert_eq!(err, "cell.numerology = 4: must be 0, 1, 2 or 3");
}

#[test]
fn slot_lengths_per_numerology() {
    let want = [(0, 1_000_000, 15, 10), (1, 500_000, 30, 20), (2, 250_000, 60, 40), (3, 125_000, 120, 80)];
    for (m, ns, scs, per_frame) in want {
        let n = mu(m);
        assert_eq!((n.slot_ns(), n.scs_khz(), n.slots_per_frame()), (ns, scs, per_frame), "μ {m}");
        assert_eq!(u64::from(n.slots_per_frame()) * n.slot_ns(), 10_000_000, "a frame is 10 ms");
    }
}

#[test]
fn an_unknown_slot_letter_is_refused_naming_it_and_its_position() {
    let err = TddPattern::parse("DDXSU", SpecialSlot::default()).unwrap_err().to_string();
    assert!(err.starts_with("cell.tdd_pattern: "), "{err}");
    assert!(err.contains("'X' at position 3") && err.contains("D (downlink), U (uplink) and S (special)"), "{err}");
    let err = Duplex::parse(Some("DDDSU"), SpecialSlot { dl: 12, guard: 2, ul: 2 }).unwrap_err().to_string();
    assert!(err.contains("cell.special_slot") && err.contains("sum to 14"), "{err}");
}

#[test]
fn downlink_symbol_shares_of_the_common_patterns() {
    let dddsu = TddPattern::parse("DDDSU", SpecialSlot::default()).unwrap();
    assert!((dddsu.dl_symbol_share() - 52.0 / 70.0).abs() < 1e-15);
    assert!((dddsu.dl_symbol_share() - 0.742857).abs() < 1e-6);
    let long = TddPattern::parse("DDDDDDDSUU", SpecialSlot::new(6, 4, 4).unwrap()).unwrap();
    assert_eq!(long.period_slots(), 10);
    assert!((long.dl_symbol_share() - 104.0 / 140.0).abs() < 1e-15);
    assert!((long.ul_symbol_share() - 32.0 / 140.0).abs() < 1e-15);
}

/// The MAC payload per second of one UE on all 273 PRBs at 256QAM MCS 27 (Table 2), one
/// DMRS symbol (12 REs per PRB), after a 2-symbol CORESET in each slot with downlink symbols:
/// the TBS of every slot of the period, over the period's length.
fn saturated_dl_payload_bps(duplex: &Duplex, numerology: Numerology, period_slots: u64, layers: u8) -> f64 {
    let mut bits = 0u64;
    for slot in 0..period_slots {
        let pdsch = duplex.dl_symbols(slot).saturating_sub(2);
        if pdsch == 0 {
            continue;
        }
        let shape = TbsShape { symbols: pdsch, dmrs_re_per_prb: 12, overhead_re_per_prb: 0, layers };
        bits += u64::from(tbs_for_mcs(273, McsTable::Qam256, 27, shape).unwrap());
    }
    bits as f64 / (period_slots as f64 * numerology.slot_ns() as f64 * 1e-9)
}

#[test]
fn saturated_single_ue_payload_of_a_dddsu_carrier() {
    let n = mu(1);
    let dddsu = Duplex::parse(Some("DDDSU"), SpecialSlot::default()).unwrap();
    // 1 layer: (3 × 270 576 + 167 976) bits per 2.5 ms.
    let one = saturated_dl_payload_bps(&dddsu, n, 5, 1);
    assert!((one / 1e6 - 391.9).abs() < 0.05, "{one}");
    assert_eq!(one, (3.0 * 270_576.0 + 167_976.0) / 2.5e-3);
    // 4 layers: 1.567 Gbit/s; DDDDDDDSUU with 6:4:4 (4 PDSCH symbols in S): 1.573 Gbit/s.
    let four = saturated_dl_payload_bps(&dddsu, n, 5, 4);
    assert!((four / 1e9 - 1.567).abs() < 0.0005, "{four}");
    let long = Duplex::parse(Some("DDDDDDDSUU"), SpecialSlot::new(6, 4, 4).unwrap()).unwrap();
    let four_long = saturated_dl_payload_bps(&long, n, 10, 4);
    assert!((four_long / 1e9 - 1.573).abs() < 0.0005, "{four_long}");
    // Below the peak-rate formula scaled by the DL symbol share (≈ 1.73 Gbit/s).
    let formula = peak_rate_bps(4, Modulation::Qam256, 1.0, 273, n, overhead(FrequencyRange::Fr1, true)) * dddsu.dl_symbol_share();
    assert!((formula / 1e9 - 1.736).abs() < 0.001 && four < formula, "{formula}");
}
