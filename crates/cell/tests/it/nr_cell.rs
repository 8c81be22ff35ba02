//! An NR cell as a packet element (`CellHop` on a `Carrier::Nr`): the saturated single UE of
//! the reference (100 MHz, 30 kHz, DDDSU, one layer, MCS 27 of the 256QAM table) carries the
//! transport blocks of the TS 38.214 procedure, slot by slot; the downlink HARQ round trip
//! follows the TDD pattern; uplink data goes only in U slots; bad NR configurations are refused.

use multiconn_cell::nr::bandwidth::{n_rb, FrequencyRange};
use multiconn_cell::nr::mcs::McsTable;
use multiconn_cell::nr::numerology::Numerology;
use multiconn_cell::nr::peak::{overhead, peak_rate_bps};
use multiconn_cell::nr::tbs::{tbs_bits, TbsShape};
use multiconn_cell::nr::tdd::{Duplex, SpecialSlot, TddPattern};
use multiconn_cell::tables::Modulation;
use multiconn_cell::rlc_am::AmConfig;
use multiconn_cell::{BlerCurve, McsScheme, Carrier, CellConfig, CellDirection, CellHop, FadingConfig, FadingSpread, MacTiming, NrCarrier, RlcMode, SlotUse};

use crate::hop::{packet, quiet, run, MS};
use multiconn_cell::CellOutput;
use multiconn_core::Time;

/// 100 MHz at 30 kHz, DDDSU with a 10:2:2 special slot, the carrier's defaults (256QAM, one
/// layer, a 2-symbol CORESET, one DMRS symbol).
fn dddsu() -> NrCarrier {
    let mu = Numerology::new(1).unwrap();
    let pattern = TddPattern::parse("DDDSU", SpecialSlot::new(10, 2, 2).unwrap()).unwrap();
    NrCarrier::new(mu, Duplex::Tdd(pattern))
}

fn nr_cell(carrier: NrCarrier, distances: Vec<f64>) -> CellConfig {
    let mu = carrier.numerology;
    CellConfig { n_rb: n_rb(FrequencyRange::Fr1, mu, 100).unwrap(), carrier: Carrier::Nr(carrier), ..quiet(distances) }
}

#[test]
fn a_saturated_ue_at_high_sinr_carries_the_ts_38_214_transport_blocks_of_every_downlink_slot() {
    let cfg = nr_cell(dddsu(), vec![10.0]);
    assert_eq!(cfg.n_rb, 273);
    // The expected payload, slot by slot from the pattern: the TBS procedure over each slot's
    // PDSCH symbols at MCS 27 of Table 5.1.3.1-2.
    let e = McsTable::Qam256.entry(27).unwrap();
    let carrier = cfg.carrier.clone();
    let per_period: u64 = (0..5)
        .map(|slot| match carrier.downlink(slot) {
            SlotUse::Symbols(shape) => u64::from(tbs_bits(273, e.modulation, e.r_x1024, shape).unwrap()),
            _ => 0,
        })
        .sum();
    assert_eq!(per_period, 3 * 270_576 + 167_976, "the reference's vector H and the special slot");
    let expected_bps = per_period as f64 / 2.5e-3;
    assert!((expected_bps / 1e6 - 391.9).abs() < 0.05, "{expected_bps}");

    let mut cell = CellHop::new(cfg, 1, "nr").unwrap();
    let ms = 400;
    let t = run(&mut cell, CellDirection::Down, 300, ms);
    assert_eq!(t.stuck, 0, "every packet leaves the cell once");
    let c = t.at_end[0];
    assert_eq!(c.last_mcs, 27, "CQI 15 of Table 5.2.2.1-3 maps to MCS 27");
    assert_eq!(c.dl_tb_errors, 0);
    // Every downlink slot carries one TB of all 273 PRBs while the buffer is full: 4 of 5 slots.
    let slots = ms * 2;
    assert!(c.dl_new_tbs >= slots * 4 / 5 - 2 && c.dl_new_tbs <= slots * 4 / 5 + 2, "{} TBs in {slots} slots", c.dl_new_tbs);
    assert_eq!(c.dl_rb_ttis, 273 * c.dl_tbs);
    // The MAC payload rate within 1 %: the IP bytes delivered plus the RLC headers are the TBs'
    // bits (headers are at most a few bytes per 33 kB TB, so the IP rate is within 1 % too).
    let ip_bps = t.by_end[0] as f64 * 8.0 / (ms as f64 * 1e-3);
    assert!((ip_bps / expected_bps - 1.0).abs() < 0.01, "{:.1} Mbit/s of IP packets against {:.1} Mbit/s of TBs", ip_bps / 1e6, expected_bps / 1e6);
    // TS 38.306's peak-rate formula with the pattern's downlink share is an upper bound (its
    // flat 14 % overhead under-counts the CORESET and DMRS).
    let mu = Numerology::new(1).unwrap();
    let formula = peak_rate_bps(1, Modulation::Qam256, 1.0, 273, mu, overhead(FrequencyRange::Fr1, true)) * (52.0 / 70.0);
    assert!(expected_bps < formula && formula < 1.2 * expected_bps, "formula {formula}, TBS {expected_bps}");
}

#[test]
fn the_downlink_harq_round_trip_follows_the_tdd_pattern() {
    // DDDSU, N1 = 10 symbols, K1 = 1: a PDSCH in slot 0 is acknowledged in the special slot's
    // U symbols (slot 3), in slot 3 (ending at its 10th symbol) only in slot 8's.
    let carrier = Carrier::Nr(dddsu());
    let (processes, timing) = carrier.dl_harq().unwrap();
    assert_eq!(processes, 16);
    let ready: Vec<u64> = (0..5).map(|n| timing.ready(n) - n).collect();
    assert_eq!(&ready[..4], &[4, 3, 2, 6]);
    // The next period repeats it.
    assert_eq!(timing.ready(5 + 3), 5 + 3 + 6);
    // FDD at 15 kHz: the ACK two slots on (N1 = 8 symbols do not fit in the next slot's start),
    // the process free from the third.
    let fdd = Carrier::Nr(NrCarrier::new(Numerology::new(0).unwrap(), Duplex::Fdd));
    assert_eq!(fdd.dl_harq().unwrap().1.ready(7), 10);
    // A retransmitted PUSCH of the U slot waits for the next period's U slot.
    assert_eq!(carrier.ul_harq().unwrap().ready(4), 9);
}

#[test]
fn uplink_data_goes_only_in_u_slots() {
    let mut cfg = nr_cell(dddsu(), vec![50.0]);
    cfg.n_rb = 273;
    let mut cell = CellHop::new(cfg, 3, "nr-ul").unwrap();
    let ms = 200;
    let t = run(&mut cell, CellDirection::Up, 100, ms);
    assert_eq!(t.stuck, 0);
    let c = t.at_end[0];
    // One U slot in five: at most one TB per 2.5 ms.
    assert!(c.ul_tbs > 0 && c.ul_tbs <= ms * 2 / 5 + 1, "{} uplink TBs in {ms} ms", c.ul_tbs);
    // Every delivery leaves at the end of a U slot (slot 4 of 5: 2.0–2.5 ms into each period).
    for &(at, _, _) in &t.trace {
        assert_eq!(at % 2_500_000, 0, "uplink packet out at {at} ns, not the end of a U slot");
    }
}

#[test]
fn nr_configurations_out_of_range_are_refused_naming_the_field() {
    let err = |cfg: CellConfig| CellHop::new(cfg, 1, "bad").err().map(|e| e.to_string()).unwrap_or_default();
    let base = nr_cell(dddsu(), vec![100.0]);
    assert!(err(CellConfig { n_rb: 300, ..base.clone() }).contains("cell.bandwidth_rb"));
    assert!(err(CellConfig { timing: MacTiming::Lena, ..base.clone() }).contains("cell.timing"));
    let mut no_uplink = dddsu();
    no_uplink.duplex = Duplex::Tdd(TddPattern::parse("DDDS", SpecialSlot::new(10, 2, 2).unwrap()).unwrap());
    assert!(err(CellConfig { carrier: Carrier::Nr(no_uplink), ..base.clone() }).contains("no U slot"));
    let mut layers = dddsu();
    layers.layers = 5;
    assert!(err(CellConfig { carrier: Carrier::Nr(layers), ..base.clone() }).contains("cell.layers"));
    let mut oh = dddsu();
    oh.overhead_re_per_prb = 7;
    assert!(err(CellConfig { carrier: Carrier::Nr(oh), ..base }).contains("cell.overhead_re_per_prb"));
}

#[test]
fn same_seed_same_run_and_lte_keeps_its_tti() {
    let cfg = nr_cell(dddsu(), vec![120.0, 400.0]);
    let once = |seed| {
        let mut cell = CellHop::new(cfg.clone(), seed, "nr").unwrap();
        run(&mut cell, CellDirection::Down, 50, 100)
    };
    assert_eq!(once(4), once(4));
    assert_eq!(CellHop::new(cfg, 1, "nr").unwrap().slot_ns(), 500_000);
    assert_eq!(CellHop::new(quiet(vec![100.0]), 1, "lte").unwrap().slot_ns(), 1_000_000);
    // The shape type is the one the carrier hands out.
    let _: TbsShape = match Carrier::Nr(dddsu()).downlink(3) {
        SlotUse::Symbols(s) => s,
        other => panic!("{other:?}"),
    };
}

#[test]
fn rlc_am_delivers_what_harq_gives_up_in_a_fast_fade() {
    // A UE far out in a fast fade (200 Hz): HARQ gives some TBs up. UM loses their SDUs; AM
    // sends them again after a status report and loses none.
    let faded = |rlc| CellConfig {
        fading: FadingConfig::Rayleigh { doppler_hz: 200.0, spread: FadingSpread::Flat },
        rlc,
        ..nr_cell(dddsu(), vec![900.0])
    };
    let um_cfg = faded(RlcMode::Um);
    let mut um = CellHop::new(um_cfg.clone(), 5, "nr").unwrap();
    let t_um = run(&mut um, CellDirection::Down, 100, 2000);
    let lost = t_um.at_end[0].harq_drops;
    assert!(lost > 0, "the fade makes HARQ give TBs up: {:?}", t_um.at_end[0]);
    let mut am = CellHop::new(faded(RlcMode::Am(AmConfig::nr_default(um_cfg.rlc_buffer_bytes))), 5, "nr").unwrap();
    let t_am = run(&mut am, CellDirection::Down, 100, 2000);
    let c = t_am.at_end[0];
    assert_eq!((c.harq_drops, c.rlc_max_retx_drops), (0, 0), "{c:?}");
    assert_eq!(t_am.stuck, 0, "every packet leaves the cell");
    assert!(t_am.dropped.is_empty(), "{:?}", t_am.dropped);
    let counts = am.rlc_am_counts(0, CellDirection::Down).unwrap();
    assert!(counts.retransmitted_pdus > 0 && counts.status_reports > 0, "{counts:?}");
    assert!(um.rlc_am_counts(0, CellDirection::Down).is_none());
    // Every packet offered in AM came out, in the order it went in per SDU id? NR delivers
    // out of order; what matters is that none is missing.
    let delivered: u64 = t_am.delivered[0][0];
    assert_eq!(delivered as usize, t_am.order[0].len());
}

#[test]
fn the_bler_curve_of_two_nr_mcss_has_the_shape_of_its_modulation_and_rate() {
    // MCS 0 (QPSK, R 120/1024) and MCS 27 (256QAM, R 948/1024) of Table 5.1.3.1-2, on the
    // cell's MIESM curve: 10 % BLER at the threshold, 50 % one width below, falling in the SINR;
    // each threshold above the Shannon bound for its efficiency (a constellation carries less
    // than the Gaussian-input capacity) plus the gap, and 256QAM's far to the right of QPSK's.
    let curve = BlerCurve::default();
    let scheme = McsScheme::Nr(McsTable::Qam256);
    let mut thresholds = Vec::new();
    for mcs in [0u8, 27] {
        let t = curve.threshold_db_in(scheme, mcs).unwrap();
        let p = |sinr: f64| curve.error_probability_in(scheme, mcs, sinr).unwrap();
        assert!((p(t) - 0.1).abs() < 1e-12, "MCS {mcs}: {}", p(t));
        assert!((p(t - curve.width_db) - 0.5).abs() < 1e-12);
        let sweep: Vec<f64> = (-40..=80).map(|k| p(t + f64::from(k) * 0.25)).collect();
        assert!(sweep.windows(2).all(|w| w[1] < w[0]), "MCS {mcs}: not falling");
        let eff = McsTable::Qam256.entry(mcs).unwrap().efficiency;
        let shannon_db = 10.0 * (2f64.powf(eff) - 1.0).log10();
        assert!(t > shannon_db + curve.gap_db, "MCS {mcs}: threshold {t} dB, Shannon {shannon_db} dB");
        thresholds.push(t);
    }
    assert!(thresholds[0] < -3.0 && thresholds[1] > 20.0, "{thresholds:?}");
    // The same MCS index means another code rate in the 64QAM table: MCS 27 there is 64QAM at
    // R 910/1024, a lower threshold than 256QAM's MCS 27.
    let t64 = curve.threshold_db_in(McsScheme::Nr(McsTable::Qam64), 27).unwrap();
    assert!(t64 < thresholds[1] - 3.0, "{t64} vs {}", thresholds[1]);
}

#[test]
fn a_drawn_line_of_sight_follows_the_38_901_probability_and_the_seed() {
    use multiconn_radio::pathloss::{uma_los_probability, PathLoss, Uma};
    // 200 UEs at 100 m in UMa: P(LOS) = 0.3477.
    let mut cfg = nr_cell(dddsu(), vec![100.0; 200]);
    cfg.budget.pathloss = PathLoss::Uma(Uma::default());
    cfg.draw_los = true;
    let sighted = |seed| {
        let cell = CellHop::new(cfg.clone(), seed, "los").unwrap();
        (0..200).filter(|&u| cell.in_sight(u) == Some(true)).count()
    };
    let n = sighted(1);
    let p = uma_los_probability(100.0);
    // Binomial(200, 0.35): a standard deviation of 6.7 UEs.
    assert!((n as f64 - 200.0 * p).abs() < 25.0, "{n} of 200 in sight, expected about {}", 200.0 * p);
    assert_eq!(n, sighted(1));
    assert_ne!(n, sighted(2));
    // A UE in sight loses less than one out of it at the same distance.
    let cell = CellHop::new(cfg.clone(), 1, "los").unwrap();
    let (los, nlos): (Vec<usize>, Vec<usize>) = (0..200).partition(|&u| cell.in_sight(u) == Some(true));
    assert!(cell.loss_db(los[0]) + 15.0 < cell.loss_db(nlos[0]), "{} vs {}", cell.loss_db(los[0]), cell.loss_db(nlos[0]));
    // Without a drawn state nobody is said to be in sight or not; a model without a LOS
    // probability is refused.
    assert_eq!(CellHop::new(CellConfig { draw_los: false, ..cfg.clone() }, 1, "x").unwrap().in_sight(0), None);
    let e = CellHop::new(CellConfig { draw_los: true, ..nr_cell(dddsu(), vec![100.0]) }, 1, "x").err().unwrap().to_string();
    assert!(e.contains("cell.los"), "{e}");
}

#[test]
fn the_delivery_status_confirms_what_am_acknowledged_and_um_transmitted() {
    // TS 38.425's DL DATA DELIVERY STATUS from the cell's RLC: under AM the highest PDCP SN
    // delivered with every earlier one (acknowledged), under UM the highest transmitted (wholly
    // handed to MAC). A UE in a fast fade, so HARQ gives TBs up and AM repairs them.
    let faded = |rlc| CellConfig {
        fading: FadingConfig::Rayleigh { doppler_hz: 200.0, spread: FadingSpread::Flat },
        rlc,
        ..nr_cell(dddsu(), vec![900.0])
    };
    for am in [false, true] {
        let cfg = faded(if am { RlcMode::Am(AmConfig::nr_default(524_288)) } else { RlcMode::Um });
        let mut cell = CellHop::new(cfg, 5, "nr").unwrap();
        let (mut next, mut in_cell, mut delivered, mut confirmed_seen) = (0u32, 0usize, std::collections::BTreeSet::new(), Vec::new());
        let mut now = 0u64;
        while now < 1500 * MS {
            while in_cell < 100 {
                let mut pkt = packet(u64::from(next), 0);
                pkt.lower_sn = next;
                next += 1;
                cell.enqueue(Time(now), 0, CellDirection::Down, pkt).unwrap();
                in_cell += 1;
            }
            assert_eq!(cell.confirmed_pdcp_sn(0, CellDirection::Up), None, "nothing went up");
            while let Some(out) = cell.poll(Time(now)).unwrap() {
                in_cell -= 1;
                if let CellOutput::Delivered { pkt, .. } = out {
                    delivered.insert(pkt.lower_sn);
                    if !am {
                        // Delivered means transmitted: UM's confirmed SN is at or beyond it.
                        assert!(cell.confirmed_pdcp_sn(0, CellDirection::Down) >= Some(pkt.lower_sn));
                    }
                }
            }
            if let Some(sn) = cell.confirmed_pdcp_sn(0, CellDirection::Down) {
                assert!(sn < next, "{sn} confirmed, {next} sent");
                if am {
                    // Acknowledged means delivered, with every SN before it.
                    assert!((0..=sn).all(|s| delivered.contains(&s)), "AM confirmed {sn} before delivering them all");
                }
                confirmed_seen.push(sn);
            }
            now += MS / 2;
        }
        assert!(confirmed_seen.windows(2).all(|w| w[0] <= w[1]), "the confirmed SN never goes back");
        let last = *confirmed_seen.last().unwrap();
        assert!(last > 500, "{} confirmed by the end (am {am})", last);
        let c = cell.ue_counters(0);
        assert!(am || c.harq_drops > 0, "the fade makes HARQ give TBs up in UM: {c:?}");
        // In AM the confirmed SN trails what was delivered by the status round; in UM what was
        // transmitted leads what arrived.
        let highest = *delivered.iter().next_back().unwrap();
        if am {
            assert!(last <= highest);
        } else {
            assert!(last >= highest);
        }
    }
}
