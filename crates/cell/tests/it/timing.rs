//! The cell's control delays (`MacTiming`): with LENA's, a downlink packet reaches its UE two
//! TTIs later than with ideal timing, and an uplink packet waits for its buffer status report
//! and grant (5 + 6 TTIs); everything still gets through, and a busy uplink keeps its rate.

use multiconn_cell::{CellConfig, CellDirection, CellHop, CellOutput, MacTiming, LENA_DL_DELAY_TTIS};
use multiconn_core::Time;

use crate::hop::{packet, quiet, run, MS};

/// When a single packet sent into an idle cell at `at_ns` leaves it.
fn lone_packet_leaves(timing: MacTiming, dir: CellDirection, at_ns: u64) -> u64 {
    let mut cell = CellHop::new(CellConfig { timing, ..quiet(vec![100.0]) }, 1, "timing").unwrap();
    cell.enqueue(Time(at_ns), 0, dir, packet(1, 0)).unwrap();
    let mut now = at_ns;
    loop {
        if let Some(out) = cell.poll(Time(now)).unwrap() {
            match out {
                CellOutput::Delivered { at, .. } => return at.0,
                CellOutput::Dropped { cause, .. } => panic!("dropped: {cause:?}"),
            }
        }
        now = cell.poll_timeout().expect("the packet is still in the cell").0.max(now);
        assert!(now < 100 * MS, "still in the cell after 100 ms");
    }
}

#[test]
fn lenas_timing_delays_a_downlink_tb_two_ttis_and_an_uplink_packet_by_the_report_and_the_grant() {
    let half = MS / 2;
    // Ideal: the packet goes in the TTI after it arrives (starting at 1 ms) and is whole at its end.
    assert_eq!(lone_packet_leaves(MacTiming::Ideal, CellDirection::Down, half), 2 * MS);
    assert_eq!(lone_packet_leaves(MacTiming::Ideal, CellDirection::Up, half), 2 * MS);
    // LENA: the downlink TB goes on air two TTIs after the scheduler picked it.
    assert_eq!(lone_packet_leaves(MacTiming::Lena, CellDirection::Down, half), (2 + LENA_DL_DELAY_TTIS) * MS);
    // The uplink: report at TTI 1, known at 6, granted for 12, whole at the end of 12.
    assert_eq!(lone_packet_leaves(MacTiming::Lena, CellDirection::Up, half), 13 * MS);
}

#[test]
fn with_lenas_timing_a_saturated_ue_keeps_the_rate_and_nothing_is_lost() {
    for dir in [CellDirection::Down, CellDirection::Up] {
        let mut ideal = CellHop::new(quiet(vec![100.0]), 7, "rate").unwrap();
        let mut lena = CellHop::new(CellConfig { timing: MacTiming::Lena, ..quiet(vec![100.0]) }, 7, "rate").unwrap();
        let (a, b) = (run(&mut ideal, dir, 200, 2000), run(&mut lena, dir, 200, 2000));
        for t in [&a, &b] {
            assert_eq!(t.stuck, 0, "{dir:?}: everything drains");
            assert!(t.dropped.is_empty(), "{dir:?}: nothing dropped: {:?}", t.dropped);
        }
        // The delays cost a few TTIs at the start, not throughput.
        let (x, y) = (a.by_end[0] as f64, b.by_end[0] as f64);
        assert!(y > 0.97 * x && y <= x, "{dir:?}: {y} bytes with LENA's timing against {x}");
        // Every packet waits at least the added delay more than the least wait with ideal timing.
        let extra = if dir == CellDirection::Down { LENA_DL_DELAY_TTIS * MS } else { 11 * MS };
        let (min_a, min_b) = (a.delays[0].iter().min().copied().unwrap(), b.delays[0].iter().min().copied().unwrap());
        assert!(min_b >= min_a + extra, "{dir:?}: least delay {min_b} ns against {min_a} ns");
    }
}

#[test]
fn an_unknown_timing_is_refused_by_name() {
    let err = MacTiming::from_name("fast").unwrap_err().to_string();
    assert!(err.contains("timing") && err.contains("ideal, lena"), "{err}");
    assert_eq!(MacTiming::from_name("lena").unwrap(), MacTiming::Lena);
}
