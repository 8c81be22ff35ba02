//! The schedulers: shares among equal UEs, starvation under max-C/I, PF time shares, grants and
//! bad input.

use multiconn_cell::{assign_rbgs, Scheduler, SchedulerKind, UeReport};

/// Jain's fairness index of `x`.
fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let q: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * q)
}

/// Runs `ttis` TTIs of saturated UEs with flat CQIs `cqis` over 100 RBs; returns per UE the bits
/// and the RBGs served.
fn run(kind: SchedulerKind, cqis: &[u8], ttis: usize) -> (Vec<f64>, Vec<f64>) {
    let mut s = Scheduler::new(kind, 100, cqis.len()).unwrap();
    let rows: Vec<Vec<u8>> = cqis.iter().map(|&c| vec![c; s.rbg_count()]).collect();
    let mut bits = vec![0.0; cqis.len()];
    let mut rbgs = vec![0.0; cqis.len()];
    for _ in 0..ttis {
        let reports: Vec<UeReport> = rows.iter().map(|r| UeReport { rbg_cqi: r, buffer_bytes: 1 << 30 }).collect();
        for g in s.schedule(&reports).unwrap() {
            bits[g.ue] += g.tbs_bits as f64;
            rbgs[g.ue] += g.rbgs.len() as f64;
        }
    }
    (bits, rbgs)
}

#[test]
fn equal_ues_get_equal_shares_under_pf_and_rr() {
    for kind in [SchedulerKind::ProportionalFair, SchedulerKind::RoundRobin] {
        for n in [2, 3, 4, 7, 10] {
            let (bits, rbgs) = run(kind, &vec![10; n], 1000);
            assert!(jain(&bits) > 0.99, "{kind:?}, {n} UEs: {bits:?}");
            assert!(jain(&rbgs) > 0.99, "{kind:?}, {n} UEs: {rbgs:?}");
            // The whole band is used every TTI.
            assert_eq!(rbgs.iter().sum::<f64>(), 25.0 * 1000.0, "{kind:?}, {n} UEs");
        }
    }
}

#[test]
fn max_ci_starves_the_far_ue() {
    let (bits, _) = run(SchedulerKind::MaxCi, &[15, 4], 1000);
    assert_eq!(bits[1], 0.0);
    // The near UE gets the top MCS over the whole band every TTI: 75 376 bits.
    assert_eq!(bits[0], 75376.0 * 1000.0);
}

#[test]
fn pf_gives_a_near_and_a_far_ue_equal_time_shares() {
    let (bits, rbgs) = run(SchedulerKind::ProportionalFair, &[15, 4], 1000);
    let share = rbgs[0] / (rbgs[0] + rbgs[1]);
    assert!((share - 0.5).abs() < 0.03, "near UE's share of RBGs {share}");
    // So the near UE carries several times the far UE's bits.
    assert!(bits[0] > 4.0 * bits[1], "{bits:?}");
    // Round robin also shares time equally; max-C/I does not.
    let (_, rr) = run(SchedulerKind::RoundRobin, &[15, 4], 1000);
    assert!((rr[0] / (rr[0] + rr[1]) - 0.5).abs() < 0.03);
}

#[test]
fn pf_prefers_a_ue_on_its_good_subbands() {
    // Two UEs with complementary frequency-selective CQIs: PF gives each its good half.
    let mut s = Scheduler::new(SchedulerKind::ProportionalFair, 100, 2).unwrap();
    let a: Vec<u8> = (0..25).map(|g| if g < 12 { 15 } else { 5 }).collect();
    let b: Vec<u8> = (0..25).map(|g| if g < 12 { 5 } else { 15 }).collect();
    let mut good = 0;
    let mut total = 0;
    for _ in 0..500 {
        let grants =
            s.schedule(&[UeReport { rbg_cqi: &a, buffer_bytes: 1 << 30 }, UeReport { rbg_cqi: &b, buffer_bytes: 1 << 30 }]).unwrap();
        for g in grants {
            for r in g.rbgs {
                total += 1;
                let cqi = if g.ue == 0 { a[r as usize] } else { b[r as usize] };
                good += (cqi == 15) as usize;
            }
        }
    }
    assert!(good as f64 / total as f64 > 0.8, "{good}/{total}");
}

#[test]
fn grants_use_the_worst_cqi_and_respect_the_buffer() {
    let mut s = Scheduler::new(SchedulerKind::MaxCi, 100, 1).unwrap();
    let mut cqi = vec![15u8; 25];
    cqi[3] = 7;
    let g = s.schedule(&[UeReport { rbg_cqi: &cqi, buffer_bytes: 1 << 30 }]).unwrap();
    assert_eq!(g.len(), 1);
    assert_eq!((g[0].mcs, g[0].n_prb, g[0].tbs_bits), (12, 100, 19848));
    // A small buffer takes few RBGs: 100 bytes fit in one RBG at CQI 15 (4 PRBs, 2984 bits).
    let g = s.schedule(&[UeReport { rbg_cqi: &[15; 25], buffer_bytes: 100 }]).unwrap();
    assert_eq!(g[0].rbgs.len(), 1);
    // No data, or CQI 0 everywhere: no grant.
    assert!(s.schedule(&[UeReport { rbg_cqi: &[15; 25], buffer_bytes: 0 }]).unwrap().is_empty());
    assert!(s.schedule(&[UeReport { rbg_cqi: &[0; 25], buffer_bytes: 1000 }]).unwrap().is_empty());
    // The last RBG of a 50-RB band has 2 PRBs (17 RBGs of 3).
    let mut s = Scheduler::new(SchedulerKind::RoundRobin, 50, 1).unwrap();
    assert_eq!(s.rbg_count(), 17);
    let g = s.schedule(&[UeReport { rbg_cqi: &[15; 17], buffer_bytes: 1 << 30 }]).unwrap();
    assert_eq!((g[0].n_prb, g[0].tbs_bits), (50, 36696));
}

#[test]
fn pure_assignment_and_bad_input() {
    let rates = vec![vec![1e6, 2e6], vec![3e6, 1e6]];
    let owner = assign_rbgs(SchedulerKind::MaxCi, &rates, &[1 << 20, 1 << 20], &[1.0, 1.0], 0).unwrap();
    assert_eq!(owner, vec![Some(1), Some(0)]);
    // PF divides by the average: UE 1's average is 10× higher.
    let owner = assign_rbgs(SchedulerKind::ProportionalFair, &rates, &[1 << 20, 1 << 20], &[1e6, 1e7], 0).unwrap();
    assert_eq!(owner, vec![Some(0), Some(0)]);
    let err = assign_rbgs(SchedulerKind::ProportionalFair, &rates, &[1, 1], &[1.0, 0.0], 0).unwrap_err().to_string();
    assert!(err.starts_with("avg_bps[1] = 0"), "{err}");
    assert!(assign_rbgs(SchedulerKind::MaxCi, &rates, &[1], &[1.0, 1.0], 0).is_err());
    assert!(assign_rbgs(SchedulerKind::MaxCi, &[vec![f64::NAN]], &[1], &[1.0], 0).is_err());
    let err = SchedulerKind::from_name("fair").unwrap_err().to_string();
    assert!(err.contains("unknown scheduler \"fair\"") && err.contains("pf, rr, maxci"), "{err}");
    assert_eq!(SchedulerKind::from_name("pf").unwrap(), SchedulerKind::ProportionalFair);
    assert!(Scheduler::new(SchedulerKind::RoundRobin, 0, 1).is_err());
    let mut s = Scheduler::new(SchedulerKind::RoundRobin, 100, 2).unwrap();
    assert!(s.schedule(&[UeReport { rbg_cqi: &[1; 25], buffer_bytes: 1 }]).unwrap_err().to_string().contains("1 reports for 2 UEs"));
    let bad = [16u8; 25];
    let e = s.schedule(&[UeReport { rbg_cqi: &bad, buffer_bytes: 1 }, UeReport { rbg_cqi: &bad, buffer_bytes: 1 }]).unwrap_err();
    assert!(e.to_string().starts_with("ues[0].rbg_cqi[0] = 16"), "{e}");
    assert!(Scheduler::new(SchedulerKind::ProportionalFair, 100, 1).unwrap().with_window(0.5).is_err());
}
