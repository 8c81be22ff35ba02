//! The handover cases (reference §4.4 and §7.4) on small hand-made four-channel tables: sp emits
//! no events, case 1 rides out a one-second dip and switches after the time-to-trigger, case 2
//! swaps at the first second a third channel beats the weaker active one, a lost channel is
//! replaced at once, at most n swaps per second, the same input gives the same time line.

use multiconn_radio::*;
use proptest::prelude::*;

fn table(rows: [&[f64]; 4]) -> ChannelTable {
    ChannelTable::from_capacities(100, rows.iter().map(|r| r.to_vec()).collect()).unwrap()
}

fn run(t: &ChannelTable, case: Case) -> Timeline {
    run_case(t, &HandoverParams::for_case(case), &DelayModel::default()).unwrap()
}

fn ev(at_s: f64, slot: usize, channel: usize, action: PathAction, cause: Cause) -> PathEvent {
    PathEvent { at_s, slot, channel, action, cause }
}

use Cause::*;
use PathAction::*;

#[test]
fn sp_emits_no_events_and_follows_the_best_channel() {
    let t = table([
        &[10.0, 10.0, 10.0, 10.0, 2.0, 2.0, 10.0, 10.0],
        &[5.0, 5.0, 20.0, 20.0, 20.0, 5.0, 5.0, 5.0],
        &[1.0; 8],
        &[0.0, 0.0, 0.0, 30.0, 30.0, 0.0, 0.0, 0.0],
    ]);
    let tl = run(&t, Case::Sp);
    assert!(tl.events.is_empty());
    assert_eq!(tl.slots.len(), 1);
    let best: Vec<f64> = (0..8).map(|i| (0..4).map(|k| t.capacity(k, i)).fold(0.0, f64::max)).collect();
    assert_eq!(tl.slots[0].rate_mbps, best);
    assert_eq!(tl.sp_capacity_mbps, best);
    assert_eq!(tl.mp_capacity_mbps, best);
    assert_eq!(tl.slots[0].channel, [0, 0, 1, 3, 3, 1, 0, 0].map(Some));
    assert_eq!(tl.handovers, 4, "seamless changes are still counted");
    assert!(tl.channels.iter().all(|c| c.up.is_empty()));
    let d = DelayModel::default();
    assert_eq!(tl.slots[0].delay_ms[3], Some(d.delay_ms(30.0)));
}

#[test]
fn case_1_rides_out_a_one_second_dip_and_switches_after_the_time_to_trigger() {
    // ch0 dips for one second at t = 103 (ch1 is 3.98 dB better), recovers, then drops for good
    // at t = 106: ch1 satisfies the condition at 106 and 107 and takes over at 107.
    let t = table([&[20.0, 20.0, 20.0, 4.0, 20.0, 20.0, 4.0, 4.0, 4.0, 4.0], &[10.0; 10], &[1.0; 10], &[0.0; 10]]);
    let tl = run(&t, Case::One);
    assert_eq!(tl.events, [ev(100.0, 0, 0, Open, Fill), ev(107.0, 0, 1, Open, A3), ev(107.0, 0, 0, Abandon, A3)]);
    assert_eq!(tl.slots[0].rate_mbps, [20.0, 20.0, 20.0, 4.0, 20.0, 20.0, 4.0, 10.0, 10.0, 10.0]);
    assert_eq!(tl.handovers, 1);
    // sp would have switched at once, twice.
    assert_eq!(run(&t, Case::Sp).handovers, 3);
}

#[test]
fn case_1_needs_more_than_the_hysteresis() {
    // 15 vs 10 Mbit/s is 1.76 dB: never enough; 20.1 vs 10 is 3.03 dB: enough after two seconds.
    let weak = table([&[10.0; 5], &[5.0, 15.0, 15.0, 15.0, 15.0], &[0.0; 5], &[0.0; 5]]);
    assert_eq!(run(&weak, Case::One).handovers, 0);
    let strong = table([&[10.0; 5], &[5.0, 20.1, 20.1, 20.1, 20.1], &[0.0; 5], &[0.0; 5]]);
    let tl = run(&strong, Case::One);
    assert_eq!(tl.events[1..], [ev(102.0, 0, 1, Open, A3), ev(102.0, 0, 0, Abandon, A3)]);
    // Exactly 3 dB (20 vs 10 is 3.0103 dB, 19.9 is 2.99 dB) is the boundary.
    let edge = table([&[10.0; 5], &[5.0, 19.9, 19.9, 19.9, 19.9], &[0.0; 5], &[0.0; 5]]);
    assert_eq!(run(&edge, Case::One).handovers, 0);
}

#[test]
fn case_2_swaps_at_the_first_second_a_third_channel_beats_the_weaker_active_one() {
    let t = table([
        &[30.0; 6],
        &[20.0; 6],
        &[5.0, 5.0, 20.0, 25.0, 25.0, 25.0], // equal at 102 (no swap), better from 103
        &[1.0; 6],
    ]);
    let tl = run(&t, Case::Two);
    assert_eq!(
        tl.events,
        [ev(100.0, 0, 0, Open, Fill), ev(100.0, 1, 1, Open, Fill), ev(103.0, 1, 2, Open, A3), ev(103.0, 1, 1, Abandon, A3)]
    );
    assert_eq!(tl.mp_capacity_mbps, [50.0, 50.0, 50.0, 55.0, 55.0, 55.0]);
    assert_eq!(tl.sp_capacity_mbps, [30.0; 6]);
    assert_eq!(tl.channels[1].active, [true, true, true, false, false, false]);
    assert_eq!(tl.channels[1].up, [(100.0, 103.0)]);
    assert_eq!(tl.channels[2].up, [(103.0, 106.0)]);
    assert_eq!(tl.channels[3].up, []);
}

#[test]
fn cases_3_and_4_use_the_best_three_and_four_channels() {
    let t = table([&[30.0; 3], &[20.0; 3], &[10.0, 10.0, 40.0], &[5.0; 3]]);
    let three = run(&t, Case::Three);
    assert_eq!(three.mp_capacity_mbps, [60.0, 60.0, 90.0]);
    assert_eq!(three.slots[2].channel, [Some(2), Some(2), Some(2)]);
    assert_eq!(three.slots[1].channel[2], Some(1));
    let four = run(&t, Case::Four);
    assert_eq!(four.mp_capacity_mbps, [65.0, 65.0, 95.0]);
    assert!(four.events.iter().all(|e| e.cause == Fill && e.at_s == 100.0));
}

#[test]
fn a_lost_channel_is_replaced_at_once() {
    // Case 1's 2 s time-to-trigger does not delay a loss.
    let t = table([&[20.0, 20.0, 0.0, 0.0], &[5.0; 4], &[3.0; 4], &[0.0; 4]]);
    let tl = run(&t, Case::One);
    assert_eq!(tl.events[1..], [ev(102.0, 0, 1, Open, Loss), ev(102.0, 0, 0, Abandon, Loss)]);
    assert_eq!(tl.slots[0].rate_mbps, [20.0, 20.0, 5.0, 5.0]);
    // Case 2: the lost slot takes the only free channel.
    let tl = run(&t, Case::Two);
    assert_eq!(tl.events[2..], [ev(102.0, 0, 2, Open, Loss), ev(102.0, 0, 0, Abandon, Loss)]);
    assert_eq!(tl.mp_capacity_mbps, [25.0, 25.0, 8.0, 8.0]);
}

#[test]
fn with_nothing_free_a_lost_channel_releases_its_slot_and_a_later_one_fills_it() {
    let t = table([&[20.0, 0.0, 0.0, 7.0], &[0.0; 4], &[0.0; 4], &[0.0; 4]]);
    let tl = run(&t, Case::Two);
    assert_eq!(tl.events, [ev(100.0, 0, 0, Open, Fill), ev(101.0, 0, 0, Abandon, Release), ev(103.0, 0, 0, Open, Fill)]);
    assert_eq!(tl.slots[0].channel, [Some(0), None, None, Some(0)]);
    assert_eq!(tl.slots[1].channel, [None; 4]);
    assert_eq!(tl.slots[0].delay_ms[1], None);
    assert_eq!(tl.channels[0].up, [(100.0, 101.0), (103.0, 104.0)]);
}

#[test]
fn an_rlf_gap_breaks_before_it_makes() {
    let t = table([&[20.0, 0.0, 0.0], &[5.0; 3], &[0.0; 3], &[0.0; 3]]);
    let p = HandoverParams { rlf_gap_s: 1.5, ..HandoverParams::for_case(Case::One) };
    let tl = run_case(&t, &p, &DelayModel::default()).unwrap();
    assert_eq!(tl.events, [ev(100.0, 0, 0, Open, Fill), ev(101.0, 0, 0, Abandon, Loss), ev(102.5, 0, 1, Open, Loss)]);
    assert_eq!(tl.slots[0].rate_mbps, [20.0, 0.0, 0.0], "nothing carried during the gap");
    assert_eq!(tl.slots[0].channel, [Some(0), Some(1), Some(1)]);
}

#[test]
fn release_abandons_first_and_fill_reopens() {
    let t = table([&[20.0, 0.0], &[5.0; 2], &[0.0; 2], &[0.0; 2]]);
    let p = HandoverParams { loss_action: LossAction::Release, ..HandoverParams::for_case(Case::One) };
    let tl = run_case(&t, &p, &DelayModel::default()).unwrap();
    assert_eq!(tl.events[1..], [ev(101.0, 0, 0, Abandon, Release), ev(101.0, 0, 1, Open, Fill)]);
}

#[test]
fn at_most_n_swaps_per_second() {
    // A −10 dB offset makes every free channel "better": one swap a second in case 1, not a loop.
    let t = table([&[10.0; 4], &[10.0; 4], &[0.0; 4], &[0.0; 4]]);
    let p = HandoverParams { offset_db: -10.0, ttt_s: 0.0, ..HandoverParams::for_case(Case::One) };
    let tl = run_case(&t, &p, &DelayModel::default()).unwrap();
    assert_eq!(tl.handovers, 4);
    assert_eq!(tl.slots[0].channel, [Some(1), Some(0), Some(1), Some(0)]);
    // Case 2: two new channels beat both active ones in the same second: two swaps.
    let t = table([&[10.0; 3], &[9.0; 3], &[1.0, 1.0, 30.0], &[1.0, 1.0, 40.0]]);
    let tl = run(&t, Case::Two);
    let at_102: Vec<_> = tl.events.iter().filter(|e| e.at_s == 102.0).copied().collect();
    assert_eq!(at_102, [ev(102.0, 1, 3, Open, A3), ev(102.0, 1, 1, Abandon, A3), ev(102.0, 0, 2, Open, A3), ev(102.0, 0, 0, Abandon, A3)]);
    assert_eq!(tl.mp_capacity_mbps[2], 70.0);
}

#[test]
fn minimum_dwell_holds_a_new_channel() {
    let t = table([&[30.0; 6], &[20.0; 6], &[5.0, 25.0, 25.0, 25.0, 25.0, 25.0], &[5.0, 5.0, 28.0, 28.0, 28.0, 28.0]]);
    let tl = run(&t, Case::Two);
    assert_eq!(tl.slots[1].channel, [Some(1), Some(2), Some(3), Some(3), Some(3), Some(3)]);
    let p = HandoverParams { min_dwell_s: 3.0, ..HandoverParams::for_case(Case::Two) };
    let tl = run_case(&t, &p, &DelayModel::default()).unwrap();
    // The swap into ch2 at 101 restarts the clock; ch3 has to wait until 104.
    assert_eq!(tl.slots[1].channel, [Some(1), Some(1), Some(1), Some(3), Some(3), Some(3)]);
}

#[test]
fn rsrp_quantity_and_cell_changes_need_their_columns() {
    let t = table([&[10.0; 2], &[10.0; 2], &[0.0; 2], &[0.0; 2]]);
    let p = HandoverParams { quantity: Quantity::Rsrp, ..HandoverParams::for_case(Case::One) };
    let err = run_case(&t, &p, &DelayModel::default()).unwrap_err();
    assert!(err.to_string().starts_with("handover quantity rsrp_dbm needs a rsrp_dbm series for channel \"ch0\""), "{err}");
    let p = HandoverParams { cell_change_is_handover: true, ..HandoverParams::for_case(Case::One) };
    assert!(run_case(&t, &p, &DelayModel::default()).unwrap_err().to_string().contains("cell ids"));
}

#[test]
fn rsrp_quantity_follows_the_strongest_cell_not_the_capacity() {
    let mut a = ChannelSeries::new("a", vec![10.0, 10.0, 10.0]);
    a.rsrp_dbm = Some(vec![Some(-90.0); 3]);
    let mut b = ChannelSeries::new("b", vec![30.0, 30.0, 30.0]);
    b.rsrp_dbm = Some(vec![Some(-100.0), Some(-85.0), Some(-85.0)]);
    let t = ChannelTable::new(0, vec![a, b]).unwrap();
    let p = HandoverParams { quantity: Quantity::Rsrp, ..HandoverParams::for_case(Case::One) };
    let tl = run_case(&t, &p, &DelayModel::default()).unwrap();
    assert_eq!(tl.slots[0].channel, [Some(0), Some(0), Some(1)]);
    // A usable second without an RSRP is an error, not a guess.
    let mut c = ChannelSeries::new("c", vec![10.0]);
    c.rsrp_dbm = Some(vec![None]);
    let err = run_case(&ChannelTable::new(0, vec![c]).unwrap(), &p, &DelayModel::default()).unwrap_err();
    assert!(err.to_string().contains("at second 0"), "{err}");
}

#[test]
fn a_cell_change_within_the_channel_is_a_handover_when_asked() {
    let mut a = ChannelSeries::new("a", vec![10.0; 4]);
    a.cell_id = Some(["x", "x", "y", "y"].iter().map(|c| Some(c.to_string())).collect());
    let t = ChannelTable::new(0, vec![a]).unwrap();
    let p = HandoverParams { cell_change_is_handover: true, ..HandoverParams::for_case(Case::One) };
    let tl = run_case(&t, &p, &DelayModel::default()).unwrap();
    assert_eq!(tl.events, [ev(0.0, 0, 0, Open, Fill), ev(2.0, 0, 0, Open, CellChange), ev(2.0, 0, 0, Abandon, CellChange)]);
    assert_eq!(tl.handovers, 1);
    assert_eq!(tl.channels[0].up, [(0.0, 4.0)]);
    assert_eq!(run(&t, Case::One).handovers, 0, "off by default");
}

#[test]
fn overlap_keeps_a_released_link_up_a_little_longer() {
    let t = table([&[30.0; 6], &[20.0; 6], &[5.0, 5.0, 25.0, 25.0, 25.0, 25.0], &[1.0; 6]]);
    let p = HandoverParams { overlap_s: 0.25, ..HandoverParams::for_case(Case::Two) };
    let tl = run_case(&t, &p, &DelayModel::default()).unwrap();
    assert_eq!(tl.channels[1].up, [(0.0 + 100.0, 102.25)]);
}

#[test]
fn min_usable_capacity_counts_as_unavailable() {
    let t = table([&[20.0, 0.5, 20.0], &[5.0; 3], &[0.0; 3], &[0.0; 3]]);
    let p = HandoverParams { min_usable_mbps: 1.0, ..HandoverParams::for_case(Case::One) };
    let tl = run_case(&t, &p, &DelayModel::default()).unwrap();
    assert_eq!(tl.slots[0].channel, [Some(0), Some(1), Some(1)]);
}

#[test]
fn parameters_are_validated_with_the_field_named() {
    let t = table([&[1.0], &[1.0], &[1.0], &[1.0]]);
    let cases = [
        (
            HandoverParams { hysteresis_db: -1.0, ..HandoverParams::for_case(Case::One) },
            "handover.hysteresis_db = -1: must be in [0, 30] dB",
        ),
        (HandoverParams { n: 0, ..HandoverParams::for_case(Case::One) }, "handover.n = 0: must be a whole number in [1, 16]"),
        (HandoverParams { ttt_s: f64::NAN, ..HandoverParams::for_case(Case::One) }, "handover.ttt_s = NaN: must be in [0, 3600] s"),
        (HandoverParams { offset_db: 31.0, ..HandoverParams::for_case(Case::One) }, "handover.offset_db = 31: must be in [-30, 30] dB"),
        (HandoverParams { min_dwell_s: -2.0, ..HandoverParams::for_case(Case::One) }, "handover.min_dwell_s = -2"),
        (HandoverParams { rlf_gap_s: -0.1, ..HandoverParams::for_case(Case::One) }, "handover.rlf_gap_s = -0.1"),
        (HandoverParams { min_usable_mbps: f64::INFINITY, ..HandoverParams::for_case(Case::One) }, "handover.min_usable_mbps = inf"),
        (HandoverParams { overlap_s: -1.0, ..HandoverParams::for_case(Case::One) }, "handover.overlap_s = -1"),
    ];
    for (p, expected) in cases {
        let err = run_case(&t, &p, &DelayModel::default()).unwrap_err().to_string();
        assert!(err.starts_with(expected), "{err} vs {expected}");
    }
    let bad_delay = DelayModel { c1_mbps: -1.0, ..DelayModel::default() };
    assert!(run_case(&t, &HandoverParams::for_case(Case::Sp), &bad_delay).is_err());
}

#[test]
fn the_case_defaults_and_presets() {
    let p: Vec<_> = Case::ALL.iter().map(|&c| HandoverParams::for_case(c)).collect();
    assert_eq!(p.iter().map(|p| p.n).collect::<Vec<_>>(), [1, 1, 2, 3, 4]);
    assert_eq!(p.iter().map(|p| p.seamless).collect::<Vec<_>>(), [true, false, false, false, false]);
    assert_eq!(p.iter().map(|p| p.hysteresis_db).collect::<Vec<_>>(), [0.0, 3.0, 0.0, 0.0, 0.0]);
    assert_eq!(p.iter().map(|p| p.ttt_samples()).collect::<Vec<_>>(), [1, 2, 1, 1, 1]);
    let r = HandoverParams::preset(Case::Three, HandoverPreset::RealisticAll);
    assert_eq!((r.n, r.hysteresis_db, r.ttt_s), (3, 3.0, 2.0));
    assert_eq!(HandoverParams::preset(Case::Sp, HandoverPreset::RealisticAll), HandoverParams::for_case(Case::Sp));
    assert_eq!(HandoverParams { ttt_s: 0.256, ..p[1].clone() }.ttt_samples(), 1);
    assert_eq!(HandoverParams { ttt_s: 2.56, ..p[1].clone() }.ttt_samples(), 3);
}

#[test]
fn a_case_reads_from_a_scenario_table() {
    let c: HandoverConfig =
        toml::from_str("case = \"2\"\npreset = \"realistic_all\"\nmin_dwell_s = 5.0\nloss_action = \"release\"").unwrap();
    let p = c.resolve().unwrap();
    assert_eq!((p.n, p.hysteresis_db, p.ttt_s, p.min_dwell_s, p.loss_action), (2, 3.0, 2.0, 5.0, LossAction::Release));
    let c: HandoverConfig = toml::from_str("case = \"sp\"").unwrap();
    assert_eq!(c.resolve().unwrap(), HandoverParams::for_case(Case::Sp));
    let c: HandoverConfig = toml::from_str("case = \"1\"\nhysteresis_db = -3.0").unwrap();
    assert_eq!(c.resolve().unwrap_err().to_string(), "handover.hysteresis_db = -3: must be in [0, 30] dB");
    assert!(toml::from_str::<HandoverConfig>("case = \"5\"").is_err());
    assert!(toml::from_str::<HandoverConfig>("case = \"1\"\nhysteresis = 3.0").unwrap_err().to_string().contains("unknown field"));
    assert_eq!(Case::parse("3").unwrap(), Case::Three);
    assert_eq!(Case::parse("5").unwrap_err().to_string(), "unknown case \"5\"; known: sp, 1, 2, 3, 4");
}

#[test]
fn the_same_input_gives_the_same_time_line() {
    let t = table([
        &[20.0, 20.0, 20.0, 4.0, 20.0, 20.0, 4.0, 4.0, 0.0, 4.0],
        &[10.0, 0.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0],
        &[1.0, 8.0, 30.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        &[0.0, 0.0, 9.0, 0.0, 12.0, 12.0, 0.0, 0.0, 0.0, 0.0],
    ]);
    for case in Case::ALL {
        assert_eq!(run(&t, case), run(&t, case), "{case:?}");
    }
}

/// Random four-channel tables: distinct capacities of at least 0.01 Mbit/s, or 0.
fn arb_channels() -> impl Strategy<Value = Vec<Vec<f64>>> {
    prop::collection::vec(prop::collection::vec(prop_oneof![1 => Just(0.0), 4 => 0.01f64..60.0], 4), 1..40)
        .prop_map(|secs| (0..4).map(|k| secs.iter().map(|s| s[k]).collect()).collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn study_cases_keep_their_invariants(caps in arb_channels()) {
        let t = ChannelTable::from_capacities(0, caps).unwrap();
        let len = t.len();
        for case in Case::ALL {
            let tl = run(&t, case);
            let n = case.slots();
            for i in 0..len {
                let mut usable: Vec<(f64, usize)> = (0..4).filter(|&k| t.capacity(k, i) > 0.0).map(|k| (t.capacity(k, i), k)).collect();
                usable.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                // Slots hold distinct, usable channels, and as many as there are (up to n).
                let held: Vec<usize> = tl.slots.iter().filter_map(|s| s.channel[i]).collect();
                let mut dedup = held.clone();
                dedup.sort();
                dedup.dedup();
                prop_assert_eq!(dedup.len(), held.len());
                prop_assert!(held.iter().all(|&k| t.capacity(k, i) > 0.0));
                prop_assert_eq!(held.len(), n.min(usable.len()));
                prop_assert!(tl.sp_capacity_mbps[i] <= tl.mp_capacity_mbps[i]);
                let total: f64 = usable.iter().map(|u| u.0).sum();
                prop_assert!(tl.mp_capacity_mbps[i] <= total + 1e-9);
                if case == Case::Sp {
                    // sp carries the best channel every second.
                    prop_assert_eq!(tl.slots[0].rate_mbps[i], usable.first().map_or(0.0, |u| u.0));
                }
                if matches!(case, Case::Two | Case::Three | Case::Four) {
                    // With no hysteresis and one-sample TTT, the active set is the top n.
                    let mut top: Vec<usize> = usable.iter().take(n).map(|u| u.1).collect();
                    top.sort();
                    let mut held = held.clone();
                    held.sort();
                    let top_caps: Vec<f64> = top.iter().map(|&k| t.capacity(k, i)).collect();
                    let held_caps: Vec<f64> = held.iter().map(|&k| t.capacity(k, i)).collect();
                    let mut a = top_caps.clone();
                    let mut b = held_caps.clone();
                    a.sort_by(f64::total_cmp);
                    b.sort_by(f64::total_cmp);
                    prop_assert_eq!(a, b);
                }
            }
            // Events: every abandon closes a path that is open, and with no RLF gap a handover
            // never leaves the connection without a path.
            let mut open: Vec<usize> = Vec::new();
            for e in &tl.events {
                match e.action {
                    PathAction::Open => open.push(e.channel),
                    PathAction::Abandon => {
                        let pos = open.iter().position(|&c| c == e.channel);
                        prop_assert!(pos.is_some(), "abandon of a channel without a path: {:?}", e);
                        open.remove(pos.unwrap());
                        if matches!(e.cause, Cause::A3 | Cause::Loss) {
                            prop_assert!(!open.is_empty());
                        }
                    }
                }
            }
            if case == Case::Sp {
                prop_assert!(tl.events.is_empty());
            }
        }
    }
}

#[test]
fn a_channel_lost_within_an_rlf_gap_withdraws_the_pending_opening() {
    // ch0 is lost at 101; the slot switches to ch1 with a 1.5 s gap; ch1 is lost at 102, before
    // its path opened at 102.5: that opening is withdrawn and ch2 opens at 103.5.
    let t = table([&[20.0, 0.0, 0.0, 0.0, 0.0], &[5.0, 5.0, 0.0, 0.0, 0.0], &[3.0; 5], &[0.0; 5]]);
    let p = HandoverParams { rlf_gap_s: 1.5, ..HandoverParams::for_case(Case::One) };
    let tl = run_case(&t, &p, &DelayModel::default()).unwrap();
    assert_eq!(tl.events, [ev(100.0, 0, 0, Open, Fill), ev(101.0, 0, 0, Abandon, Loss), ev(103.5, 0, 2, Open, Loss)]);
    assert_eq!(tl.slots[0].rate_mbps, [20.0, 0.0, 0.0, 0.0, 3.0]);
    assert_eq!(tl.channels[1].up, []);
}

fn arb_params() -> impl Strategy<Value = HandoverParams> {
    (
        (1usize..=4, any::<bool>(), -5.0f64..5.0, 0.0f64..6.0, 0u32..4),
        (prop_oneof![Just(0.0), Just(2.0)], any::<bool>(), prop_oneof![Just(0.0), Just(0.5), Just(1.0), Just(2.5)], any::<bool>()),
        (prop_oneof![Just(0.0), Just(3.0)], prop_oneof![Just(0.0), Just(0.5)]),
    )
        .prop_map(
            |((n, seamless, offset_db, hysteresis_db, ttt), (min_dwell_s, release, rlf_gap_s, cells), (min_usable_mbps, overlap_s))| {
                HandoverParams {
                    n,
                    seamless,
                    quantity: Quantity::CapacityDb,
                    offset_db,
                    hysteresis_db,
                    ttt_s: ttt as f64,
                    min_dwell_s,
                    loss_action: if release { LossAction::Release } else { LossAction::Switch },
                    rlf_gap_s,
                    cell_change_is_handover: cells,
                    min_usable_mbps,
                    overlap_s,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn path_events_always_describe_the_carried_channels(
        caps in arb_channels(),
        cells in prop::collection::vec(prop::collection::vec(0u8..2, 40), 4),
        p in arb_params(),
    ) {
        let len = caps[0].len();
        let channels: Vec<ChannelSeries> = caps
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let mut s = ChannelSeries::new(&format!("ch{k}"), c.clone());
                s.cell_id = Some(cells[k][..len].iter().map(|x| Some(x.to_string())).collect());
                s
            })
            .collect();
        let t = ChannelTable::new(0, channels).unwrap();
        let tl = run_case(&t, &p, &DelayModel::default()).unwrap();
        prop_assert_eq!(&tl, &run_case(&t, &p, &DelayModel::default()).unwrap());
        for i in 0..len {
            let held: Vec<usize> = tl.slots.iter().filter_map(|s| s.channel[i]).collect();
            let mut d = held.clone();
            d.sort();
            d.dedup();
            prop_assert_eq!(d.len(), held.len(), "a channel in two slots");
            for (s, slot) in tl.slots.iter().enumerate() {
                if slot.rate_mbps[i] > 0.0 {
                    let k = slot.channel[i].unwrap();
                    prop_assert!(t.capacity(k, i) >= p.min_usable_mbps, "slot {} carries an unusable channel", s);
                    prop_assert_eq!(slot.rate_mbps[i], t.capacity(k, i));
                }
            }
        }
        if p.seamless {
            prop_assert!(tl.events.is_empty());
            return Ok(());
        }
        // Replaying the events in time order, the open paths at each whole second are exactly
        // the channels the slots carry then.
        prop_assert!(tl.events.windows(2).all(|w| w[0].at_s <= w[1].at_s));
        let mut open: Vec<(usize, usize)> = Vec::new(); // (slot, channel)
        let mut next = 0;
        for i in 0..len {
            let now = i as f64;
            while next < tl.events.len() && tl.events[next].at_s <= now {
                let e = tl.events[next];
                match e.action {
                    PathAction::Open => open.push((e.slot, e.channel)),
                    PathAction::Abandon => {
                        let pos = open.iter().position(|&x| x == (e.slot, e.channel));
                        prop_assert!(pos.is_some(), "abandon without an open path: {:?}", e);
                        open.remove(pos.unwrap());
                    }
                }
                next += 1;
            }
            let mut carried: Vec<usize> = (0..4).filter(|&k| tl.channels[k].active[i]).collect();
            let mut opened: Vec<usize> = open.iter().map(|x| x.1).collect();
            carried.sort();
            opened.sort();
            prop_assert_eq!(opened, carried, "at second {}", i);
        }
    }
}
