//! Per-UE time series (`series`): the bins agree with the closed-form SINR, with the top MCS
//! and full band of a saturated near UE, add up to the cell's own counters (TBs, errors,
//! HARQ losses, RB·TTIs, drops, delivered bytes), show the RLC buffer filling to its 512 kB,
//! and are the same for the same seed.

use crate::hop::{packet, quiet, run, MS, PACKET};
use multiconn_cell::{CellConfig, CellDirection, CellHop, FadingConfig, FadingSpread, UeBin};
use multiconn_core::Time;

const BIN: u64 = 100 * MS;

fn bins(cell: &CellHop, ue: usize, dir: usize, until_ms: u64) -> Vec<UeBin> {
    cell.series().expect("series were asked for").rows(ue, dir, until_ms * MS)
}

fn sum(rows: &[UeBin], f: impl Fn(&UeBin) -> u64) -> u64 {
    rows.iter().map(f).sum()
}

#[test]
fn a_saturated_near_ue_shows_the_closed_form_sinr_the_top_mcs_and_the_whole_band() {
    let mut cell = CellHop::new(quiet(vec![50.0]), 1, "cell").unwrap();
    cell.record_series(BIN);
    let t = run(&mut cell, CellDirection::Down, 200, 1000);
    let rows = bins(&cell, 0, 0, 7000);
    // Downlink SNR without fading: eNB power per RB − path loss − noise over 180 kHz with
    // the UE's 9 dB noise figure (reference §2: 138.45 − PL).
    let pl = 46.6777 + 30.0 * 50f64.log10();
    let snr = 46.0 - 10.0 * 100f64.log10() - pl - (-174.0 + 10.0 * 180e3f64.log10() + 9.0);
    for b in &rows[1..10] {
        assert!((b.mean_sinr_db().unwrap() - snr).abs() < 1e-6, "{b:?} vs {snr}");
        assert_eq!(b.mean_cqi(), Some(15.0));
        assert_eq!(b.mean_mcs(), Some(28.0));
        // One 100-PRB TB of new data every TTI of the bin, none in error.
        assert_eq!((b.tbs, b.tbs_new, b.rb_ttis), (100, 100, 100 * 100));
        assert_eq!((b.tb_errors, b.tb_errors_first, b.tbs_lost), (0, 0, 0));
        assert!(b.rlc_max_bytes > 0);
    }
    // Once drained: no samples, an empty buffer.
    let last = rows.last().unwrap();
    assert!(last.mean_sinr_db().is_none() && last.rlc_last_bytes == Some(0) && last.tbs == 0);
    assert_eq!(sum(&rows, |b| b.bytes_delivered), t.bytes[0][0]);
    // Nothing went up: the uplink rows are empty.
    assert!(bins(&cell, 0, 1, 7000).iter().all(|b| b.samples == 0 && b.tbs == 0 && b.rlc_max_bytes == 0));
}

#[test]
fn the_bins_add_up_to_the_cells_counters_in_both_directions() {
    // Vehicular Doppler at 1.1 km: errors at the first transmission, TBs HARQ gives up.
    let fading = FadingConfig::Rayleigh { doppler_hz: 300.0, spread: FadingSpread::Flat };
    let cfg = CellConfig { fading, ..CellConfig::study(vec![300.0, 1100.0]) };
    for dir in [CellDirection::Down, CellDirection::Up] {
        let mut cell = CellHop::new(cfg.clone(), 3, "cell").unwrap();
        cell.record_series(BIN);
        let t = run(&mut cell, dir, 60, 3000);
        for ue in 0..2 {
            let k = cell.ue_counters(ue);
            let rows = bins(&cell, ue, dir as usize, 9000);
            let (tbs, errors, rbs) = match dir {
                CellDirection::Down => (k.dl_tbs, k.dl_tb_errors, k.dl_rb_ttis),
                CellDirection::Up => (k.ul_tbs, k.ul_tb_errors, k.ul_rb_ttis),
            };
            assert_eq!(sum(&rows, |b| b.tbs), tbs);
            assert_eq!(sum(&rows, |b| b.tb_errors), errors);
            assert_eq!(sum(&rows, |b| b.rb_ttis), rbs);
            assert_eq!(sum(&rows, |b| b.drops_radio), k.harq_drops + k.reordering_drops);
            assert_eq!(sum(&rows, |b| b.bytes_delivered), t.bytes[ue][dir as usize]);
            if dir == CellDirection::Down {
                assert_eq!(sum(&rows, |b| b.tbs_new), k.dl_new_tbs);
                assert_eq!(sum(&rows, |b| b.tb_errors_first), k.dl_first_tx_errors);
            }
            // Every error either was retransmitted or given up: lost ≤ errors.
            assert!(sum(&rows, |b| b.tbs_lost) <= errors);
        }
        // The far UE sees a lower SINR and CQI than the near one.
        let mean = |ue: usize, f: fn(&UeBin) -> Option<f64>| {
            let v: Vec<f64> = bins(&cell, ue, dir as usize, 3000).iter().filter_map(f).collect();
            v.iter().sum::<f64>() / v.len() as f64
        };
        assert!(mean(1, UeBin::mean_sinr_db) < mean(0, UeBin::mean_sinr_db) - 10.0, "{dir:?}");
        assert!(mean(1, UeBin::mean_cqi) < mean(0, UeBin::mean_cqi), "{dir:?}");
        let lost: u64 = (0..2).map(|ue| sum(&bins(&cell, ue, dir as usize, 9000), |b| b.tbs_lost)).sum();
        assert!(lost > 0 || dir == CellDirection::Up, "no TB given up on the {dir:?}link");
    }
}

#[test]
fn the_rlc_buffer_fills_to_its_capacity_and_the_refusals_are_binned() {
    let mut cell = CellHop::new(quiet(vec![100.0]), 1, "cell").unwrap();
    cell.record_series(BIN);
    let fits = 524_288 / PACKET as u64;
    for i in 0..=fits {
        let _ = cell.enqueue(Time(0), 0, CellDirection::Down, packet(i, 0));
    }
    let rows = bins(&cell, 0, 0, 100);
    assert_eq!(rows[0].rlc_max_bytes, fits * u64::from(PACKET));
    assert_eq!(rows[0].drops_buffer, 1);
}

#[test]
fn the_same_seed_gives_the_same_series() {
    let series = |seed| {
        let cfg = CellConfig { fading: FadingConfig::Rayleigh { doppler_hz: 5.89, spread: FadingSpread::PerRb }, ..CellConfig::study(vec![200.0, 600.0]) };
        let mut cell = CellHop::new(cfg, seed, "cell").unwrap();
        cell.record_series(BIN);
        run(&mut cell, CellDirection::Down, 40, 300);
        (0..2).map(|ue| bins(&cell, ue, 0, 600)).collect::<Vec<_>>()
    };
    assert_eq!(series(5), series(5));
    assert_ne!(series(5), series(6));
}

#[test]
fn throughput_falls_along_a_trajectory_moving_away_as_at_the_same_fixed_distances() {
    use multiconn_cell::Trajectory;
    // From 200 m to 2200 m at 50 m/s: 40 s, then it stays at 2200 m.
    let away = Trajectory { start_m: 200.0, end_m: 2200.0, speed_mps: 50.0, doppler_hz: None };
    let mut cfg = quiet(vec![200.0]);
    cfg.trajectories = vec![Some(away)];
    let mut cell = CellHop::new(cfg, 1, "cell").unwrap();
    cell.record_series(1_000 * MS);
    run(&mut cell, CellDirection::Down, 100, 44_000);
    let rows = bins(&cell, 0, 0, 44_000);
    let mbps = |b: &UeBin| b.bytes_delivered as f64 * 8.0 / 1e6;
    // The path loss of the last TTI is the one at the end of the trajectory.
    assert!((cell.loss_db(0) - (46.6777 + 30.0 * 2200f64.log10())).abs() < 1e-9);
    // Each second delivers what a static UE at that second's mid-point distance delivers
    // (within 10 %, the TB errors aside), so the throughput falls along the way.
    for s in [2usize, 10, 20, 30, 38] {
        let d = away.distance_at(s as f64 + 0.5);
        let mut fixed = CellHop::new(quiet(vec![d]), 1, "cell").unwrap();
        fixed.record_series(1_000 * MS);
        run(&mut fixed, CellDirection::Down, 100, 3_000);
        let reference = mbps(&bins(&fixed, 0, 0, 3_000)[1]);
        let moving = mbps(&rows[s]);
        assert!((moving - reference).abs() < 0.1 * reference, "{s} s at {d} m: {moving} vs {reference} Mbit/s");
    }
    let early = mbps(&rows[2]);
    let late = mbps(&rows[42]);
    assert!(late < 0.5 * early, "{early} → {late} Mbit/s");
    assert!(rows[2].mean_sinr_db().unwrap() > rows[42].mean_sinr_db().unwrap() + 20.0, "{:?} {:?}", rows[2], rows[42]);
    // After the end, the UE stays at 2200 m: the last bins are alike.
    assert!((mbps(&rows[41]) - mbps(&rows[42])).abs() < 0.1 * mbps(&rows[41]));
}
