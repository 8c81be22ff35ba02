//! Downlink HARQ and the per-TTI MAC: no retransmissions without errors, the retransmission 8
//! TTIs later and before new data, the drop after 4 transmissions, soft combining against its
//! analytic expectation, determinism and bad input.

use multiconn_cell::amc::sinr_for_mi;
use multiconn_cell::tables::LENA_MCS_EFFICIENCY;
use multiconn_cell::McsScheme;
use multiconn_cell::{
    mcs_entry, mi_per_bit, BlerCurve, CellError, DlMac, DlTti, DlUeInput, HarqEntity, HarqTb, MiCombining, Scheduler, SchedulerKind,
    TbDecoder, TxAttempt, TxOutcome, HARQ_PROCESSES,
};
use multiconn_core::rng::RngStream;

const N_RB: u16 = 100;
const N_RBG: usize = 25;

/// Fails the transmissions for which `fail(attempt)` is true.
struct Forced<F: FnMut(&TxAttempt) -> bool>(F);

impl<F: FnMut(&TxAttempt) -> bool> TbDecoder for Forced<F> {
    fn decode(&mut self, attempt: &TxAttempt, _rng: &mut RngStream) -> Result<bool, CellError> {
        Ok(!(self.0)(attempt))
    }
}

fn mac<D: TbDecoder>(kind: SchedulerKind, n_ues: usize, decoder: D, seed: u64) -> DlMac<u64, D> {
    let s = Scheduler::new(kind, N_RB, n_ues).unwrap();
    DlMac::new(s, decoder, RngStream::derive(seed, "cell/harq"))
}

/// One TTI with every UE saturated, flat CQI `cqi[u]` and flat SINR `sinr[u]`; the payload of a
/// new TB is the TTI it was first sent in.
fn step<D: TbDecoder>(m: &mut DlMac<u64, D>, tti: u64, cqi: &[u8], sinr: &[f64]) -> DlTti<u64> {
    let cqis: Vec<Vec<u8>> = cqi.iter().map(|&c| vec![c; N_RBG]).collect();
    let sinrs: Vec<Vec<f64>> = sinr.iter().map(|&s| vec![s; N_RB as usize]).collect();
    let ues: Vec<DlUeInput> = (0..cqi.len()).map(|u| DlUeInput { rbg_cqi: &cqis[u], sinr_db: &sinrs[u], buffer_bytes: 1 << 30 }).collect();
    m.tti(tti, &ues, |_, _| Some(tti)).unwrap()
}

#[test]
fn no_errors_no_retransmissions() {
    // At 40 dB, MCS 28's error probability is ~1e-21: every TB decodes at once.
    let mut m = mac(SchedulerKind::ProportionalFair, 2, MiCombining::default(), 1);
    for t in 0..500 {
        let out = step(&mut m, t, &[15, 15], &[40.0, 40.0]);
        assert!(out.tbs.iter().all(|tb| tb.transmission == 1 && tb.decoded && !tb.dropped), "TTI {t}: {:?}", out.tbs);
        assert_eq!(out.delivered.len(), out.tbs.len());
    }
    let c = m.counters();
    assert_eq!((c.retransmissions, c.errors, c.dropped_tbs), (0, 0, 0));
    assert_eq!(c.new_tbs, c.decoded);
    // The whole band every TTI at MCS 28: 75 376 bits per TTI.
    assert_eq!(c.decoded_bits, 500 * 75_376);
}

#[test]
fn a_nacked_tb_goes_again_8_ttis_later_before_new_data() {
    // UE 0's first transmission at TTI 10 fails; everything else decodes.
    let dec = Forced(|a: &TxAttempt| a.ue == 0 && a.tti == 10 && a.transmission == 1);
    let mut m = mac(SchedulerKind::ProportionalFair, 2, dec, 2);
    let mut original = None;
    for t in 0..40 {
        let out = step(&mut m, t, &[12, 12], &[30.0, 30.0]);
        let retx: Vec<_> = out.tbs.iter().filter(|tb| tb.transmission > 1).collect();
        if t == 10 {
            let tb = out.tbs.iter().find(|tb| tb.ue == 0).expect("UE 0 served at TTI 10");
            assert!(!tb.decoded && !tb.dropped);
            original = Some(tb.clone());
        }
        if t == 18 {
            let o = original.clone().unwrap();
            assert_eq!(retx.len(), 1, "{:?}", out.tbs);
            let r = &out.tbs[0];
            // Served first, on the same process, with the same MCS, size and PRB count.
            assert_eq!((r.ue, r.process, r.mcs, r.tbs_bits, r.n_prb, r.transmission), (0, o.process, o.mcs, o.tbs_bits, o.n_prb, 2));
            assert_eq!(r.rbgs, o.rbgs, "its previous RBGs were free");
            assert!(r.decoded);
            // Its payload is the TB first sent at TTI 10; UE 0 gets no new data in this TTI.
            assert!(out.delivered.contains(&(0, 10)));
            assert!(out.tbs.iter().filter(|tb| tb.ue == 0).count() == 1);
            // UE 1 gets new data on RBGs the retransmission left.
            for tb in out.tbs.iter().skip(1) {
                assert!(tb.rbgs.iter().all(|g| !r.rbgs.contains(g)), "{:?}", out.tbs);
            }
        } else {
            assert!(retx.is_empty(), "TTI {t}: {:?}", out.tbs);
        }
    }
    assert_eq!(m.counters().retransmissions, 1);
}

#[test]
fn four_failures_drop_the_tb() {
    let mut m = mac(SchedulerKind::MaxCi, 1, Forced(|_: &TxAttempt| true), 3);
    for t in 0..40 {
        let out = step(&mut m, t, &[10], &[20.0]);
        for tb in &out.tbs {
            assert!(!tb.decoded);
            assert_eq!(tb.dropped, tb.transmission == 4, "TTI {t}: {tb:?}");
        }
        // The TB first sent at TTI 0 goes at 0, 8, 16 and 24, and is dropped at 24.
        if t == 24 {
            assert_eq!(out.lost, vec![(0, 0)]);
            assert_eq!(out.tbs[0].transmission, 4);
        }
        if t < 24 {
            assert!(out.lost.is_empty());
        }
        // 8 processes, each busy for 8 TTIs per transmission: one TB per TTI at most.
        assert_eq!(out.tbs.len(), 1, "TTI {t}");
    }
    let c = m.counters();
    // TTIs 0..8 send new TBs, 8..32 their 3 retransmissions each (the last dropping them),
    // and 32..40 new TBs on the processes freed 8 TTIs after the drops.
    assert_eq!((c.new_tbs, c.retransmissions, c.errors, c.dropped_tbs), (16, 24, 40, 8));
    assert_eq!(c.dropped_bits, 8 * out_bits(10));
}

/// The TB size of the whole band at CQI `cqi`.
fn out_bits(cqi: u8) -> u64 {
    let mcs = multiconn_cell::mcs_for_cqi(cqi).unwrap().unwrap();
    multiconn_cell::tbs_for_mcs(mcs, N_RB).unwrap() as u64
}

/// MCS `mcs`'s error probability after `n` transmissions all at `sinr_db`, from the curve's
/// definition: the 10 % point moves to where the capacity per coded bit equals the MCS's
/// efficiency / (Q_m · n).
fn analytic(curve: &BlerCurve, mcs: u8, sinr_db: f64, n: u32) -> f64 {
    let m = mcs_entry(mcs).unwrap().modulation;
    let threshold = sinr_for_mi(m, LENA_MCS_EFFICIENCY[mcs as usize] / (m.order() as f64 * n as f64)) + curve.gap_db;
    let eff = sinr_for_mi(m, mi_per_bit(m, sinr_db));
    1.0 / (1.0 + 9f64.powf(1.0 + (eff - threshold) / curve.width_db))
}

#[test]
fn soft_combining_decodes_retransmissions_as_expected() {
    let curve = BlerCurve::default();
    let mcs = 16u8;
    let m = mcs_entry(mcs).unwrap().modulation;
    // A SINR where two combined transmissions fail 30 % of the time (bisection on the curve).
    let (mut lo, mut hi) = (-20.0, curve.threshold_db(mcs).unwrap());
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if analytic(&curve, mcs, mid, 2) > 0.3 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let sinr = 0.5 * (lo + hi);
    let p1 = analytic(&curve, mcs, sinr, 1);
    let p2 = analytic(&curve, mcs, sinr, 2);
    assert!((p2 - 0.3).abs() < 1e-6);
    assert!(p1 > 0.9, "alone, the transmission nearly always fails: p1 = {p1}");
    let mi = mi_per_bit(m, sinr);
    let mut rng = RngStream::derive(7, "cell/harq/combining");
    let mut dec = MiCombining { curve, scheme: McsScheme::Lte };
    let (mut first_fail, mut second_ok) = (0u32, 0u32);
    let trials = 20_000;
    for _ in 0..trials {
        let mut h: HarqEntity<()> = HarqEntity::default();
        let tb = HarqTb { rbgs: vec![0], n_prb: 4, mcs, tbs_bits: 1000, transmissions: 0, mi_per_tx: Vec::new(), payload: () };
        if h.send_new(0, 0, 0, tb, mi, &mut dec, &mut rng).unwrap() == TxOutcome::Nacked {
            first_fail += 1;
            assert!(h.pending_retx(7).is_empty(), "no retransmission before n + 8");
            assert_eq!(h.pending_retx(8), vec![(0, 8)]);
            if h.send_retx(0, 8, 0, vec![0], mi, &mut dec, &mut rng).unwrap() == TxOutcome::Decoded(()) {
                second_ok += 1;
            }
        }
    }
    let f = first_fail as f64 / trials as f64;
    let sd1 = (p1 * (1.0 - p1) / trials as f64).sqrt();
    assert!((f - p1).abs() < 4.0 * sd1, "first-transmission errors {f} vs {p1}");
    let s = second_ok as f64 / first_fail as f64;
    let sd2 = (p2 * (1.0 - p2) / first_fail as f64).sqrt();
    assert!((s - (1.0 - p2)).abs() < 4.0 * sd2, "retransmission decodes {s} vs {}", 1.0 - p2);
    // Without combining the retransmission would decode with probability 1 − p1 only.
    assert!(s > 1.0 - p1 + 0.5, "{s} vs {}", 1.0 - p1);
}

#[test]
fn combined_probability_matches_single_transmission_and_falls_with_more() {
    let curve = BlerCurve::default();
    for mcs in [0u8, 9, 16, 28] {
        let m = mcs_entry(mcs).unwrap().modulation;
        let sinr = curve.threshold_db(mcs).unwrap() - 2.0;
        let one = curve.combined_error_probability(mcs, &[mi_per_bit(m, sinr)]).unwrap();
        let direct = curve.error_probability(mcs, sinr).unwrap();
        assert!((one - direct).abs() < 1e-3, "MCS {mcs}: {one} vs {direct}");
        let mut last = one;
        for n in 2..=4 {
            let p = curve.combined_error_probability(mcs, &vec![mi_per_bit(m, sinr); n]).unwrap();
            assert!(p < last, "MCS {mcs}, {n} transmissions: {p} ≥ {last}");
            assert!((p - analytic(&curve, mcs, sinr, n as u32)).abs() < 1e-12);
            last = p;
        }
    }
}

fn run_random(seed: u64) -> Vec<String> {
    let mut m = mac(SchedulerKind::ProportionalFair, 3, MiCombining::default(), seed);
    let mut ch = RngStream::derive(99, "channel");
    let mut log = Vec::new();
    for t in 0..300 {
        let sinr: Vec<f64> = (0..3).map(|_| 2.0 + 12.0 * ch.uniform()).collect();
        let out = step(&mut m, t, &[7, 8, 9], &sinr);
        log.push(format!("{:?} {:?} {:?}", out.tbs, out.delivered, out.lost));
    }
    log
}

#[test]
fn same_seed_same_run() {
    let a = run_random(5);
    assert_eq!(a, run_random(5));
    assert_ne!(a, run_random(6));
    assert!(a.iter().any(|l| l.contains("transmission: 2")), "the set-up should cause retransmissions");
}

#[test]
fn a_ue_has_eight_processes() {
    // Always failing, one UE: processes fill in TTIs 0..8, then only retransmissions until the
    // first TB is dropped at TTI 24.
    let mut m = mac(SchedulerKind::RoundRobin, 1, Forced(|_: &TxAttempt| true), 4);
    for t in 0..8 {
        step(&mut m, t, &[10], &[20.0]);
    }
    assert_eq!(m.harq(0).unwrap().busy(), HARQ_PROCESSES);
}

#[test]
fn bad_input_is_an_error() {
    let mut m = mac(SchedulerKind::ProportionalFair, 1, MiCombining::default(), 1);
    let cqi = vec![10u8; N_RBG];
    let sinr = vec![10.0; N_RB as usize];
    let short = vec![10.0; 10];
    let nan = {
        let mut v = sinr.clone();
        v[3] = f64::NAN;
        v
    };
    let ok = [DlUeInput { rbg_cqi: &cqi, sinr_db: &sinr, buffer_bytes: 100 }];
    m.tti(5, &ok, |_, _| Some(0)).unwrap();
    assert!(m.tti(5, &ok, |_, _| Some(0)).is_err(), "TTIs must increase");
    assert!(m.tti(6, &[DlUeInput { rbg_cqi: &cqi, sinr_db: &short, buffer_bytes: 100 }], |_, _| Some(0)).is_err());
    assert!(m.tti(7, &[DlUeInput { rbg_cqi: &cqi, sinr_db: &nan, buffer_bytes: 100 }], |_, _| Some(0)).is_err());
    assert!(m.tti(8, &[], |_, _| Some(0)).is_err());
    let cqi16 = vec![16u8; N_RBG];
    assert!(m.tti(9, &[DlUeInput { rbg_cqi: &cqi16, sinr_db: &sinr, buffer_bytes: 100 }], |_, _| Some(0)).is_err());
    assert!(m.tti(9, &[DlUeInput { rbg_cqi: &cqi[1..], sinr_db: &sinr, buffer_bytes: 100 }], |_, _| Some(0)).is_err());
    // A refused TTI changes nothing: the same TTI can be run with good input.
    m.tti(9, &ok, |_, _| Some(0)).unwrap();
    let curve = BlerCurve::default();
    assert!(curve.combined_error_probability(5, &[]).is_err());
    assert!(curve.combined_error_probability(5, &[0.5; 9]).is_err());
    assert!(curve.combined_error_probability(5, &[1.5]).is_err());
    assert!(curve.combined_error_probability(29, &[0.5]).is_err());
    let mut h: HarqEntity<()> = HarqEntity::default();
    let mut rng = RngStream::derive(1, "x");
    let mut dec = MiCombining::default();
    assert!(h.send_retx(0, 8, 0, vec![0], 0.5, &mut dec, &mut rng).is_err(), "nothing to retransmit");
    let tb = || HarqTb { rbgs: vec![0], n_prb: 4, mcs: 5, tbs_bits: 100, transmissions: 0, mi_per_tx: Vec::new(), payload: () };
    assert!(h.send_new(8, 0, 0, tb(), 0.5, &mut dec, &mut rng).is_err(), "process 8 does not exist");
    h.send_new(0, 0, 0, tb(), 0.99, &mut dec, &mut rng).unwrap();
    assert!(h.send_new(0, 1, 0, tb(), 0.99, &mut dec, &mut rng).is_err(), "process 0 is busy");
}
