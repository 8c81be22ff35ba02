//! Mahimahi and bitrate-CSV parsing: accepted layouts, the duplicate/gap rule, every error
//! with its line number and message, and no panics on arbitrary text.

use multiconn_core::{Dur, Rate, Time};
use multiconn_link::rate::{OpportunityTrace, RateModel, StepTrace};
use multiconn_link::trace::{parse_bitrate_csv, parse_mahimahi, BitrateCsvFormat, TimeColumn};
use multiconn_link::TraceError;
use proptest::prelude::*;

const SYNTHETIC_MAHIMAHI: &str = include_str!("../data/mahimahi-synthetic.down");
const SYNTHETIC_GNETTRACK: &str = include_str!("../data/gnettrack-synthetic.csv");

fn seconds_format() -> BitrateCsvFormat {
    BitrateCsvFormat { time: TimeColumn::Seconds("t".into()), rate_column: "mbps".into(), bps_per_unit: 1e6 }
}

fn steps_secs(steps: &[(u64, u64)], period_s: u64) -> StepTrace {
    StepTrace { steps: steps.iter().map(|&(s, bps)| (Dur::from_secs(s), Rate(bps))).collect(), period: Dur::from_secs(period_s) }
}

/// Asserts the error's line and that its message contains every fragment.
fn assert_error(result: Result<impl std::fmt::Debug, TraceError>, line: Option<usize>, fragments: &[&str]) {
    let error = result.expect_err("the input must be rejected");
    assert_eq!(error.line, line, "{error}");
    for fragment in fragments {
        assert!(error.message.contains(fragment), "message {:?} lacks {fragment:?}", error.message);
    }
}

#[test]
fn mahimahi_accepts_whitespace_crlf_and_trailing_blank_lines() {
    let trace = parse_mahimahi("  1\r\n2\n2 \n\t5\n\n  \n", "t").unwrap();
    assert_eq!(trace, OpportunityTrace { times_ms: vec![1, 2, 2, 5], period_ms: 5 });
    assert_eq!(parse_mahimahi("1", "t").unwrap(), OpportunityTrace { times_ms: vec![1], period_ms: 1 });
}

#[test]
fn mahimahi_synthetic_file_has_the_expected_shape() {
    let trace = parse_mahimahi(SYNTHETIC_MAHIMAHI, "mahimahi-synthetic.down").unwrap();
    assert_eq!(trace.times_ms.len(), 499 + 125 * 3 + 250 * 2 + 1);
    assert_eq!(trace.period_ms, 2000);
    let model = RateModel::Opportunities(trace);
    assert_eq!(model.mean_bps(), 1375.0 * 12_000.0 / 2.0);
    let ms = |m: u64| Time(m * 1_000_000);
    assert_eq!(model.capacity_bits(ms(1000), ms(1500)), 0.0, "the idle stretch");
    assert_eq!(model.capacity_bits(ms(500), ms(504)), 3.0 * 12_000.0, "one burst of three");
    assert_eq!(model.capacity_bits(ms(2000), ms(2002)), 2.0 * 12_000.0, "period end and next loop's 1 ms");
}

#[test]
fn mahimahi_rejects_text_that_is_not_an_integer() {
    assert_error(parse_mahimahi("1\n2\nabc\n", "t"), Some(3), &["not an integer", "\"abc\"", "non-negative integer"]);
    assert_error(parse_mahimahi("1.5\n", "t"), Some(1), &["not an integer", "milliseconds"]);
    assert_error(parse_mahimahi("1 2\n", "t"), Some(1), &["not an integer"]);
    assert_error(parse_mahimahi("99999999999999999999999\n", "t"), Some(1), &["too large"]);
}

#[test]
fn mahimahi_rejects_negative_timestamps() {
    assert_error(parse_mahimahi("1\n-3\n", "t"), Some(2), &["negative", "non-negative integer"]);
}

#[test]
fn mahimahi_rejects_decreasing_timestamps() {
    assert_error(parse_mahimahi("1\n5\n5\n3\n9\n", "t"), Some(4), &["3 is smaller than the previous one (5)", "never decrease"]);
}

#[test]
fn mahimahi_rejects_empty_traces() {
    for text in ["", "\n", "  \n\n"] {
        assert_error(parse_mahimahi(text, "t"), Some(1), &["empty trace", "non-negative integer"]);
    }
}

#[test]
fn mahimahi_rejects_a_zero_period() {
    assert_error(parse_mahimahi("0\n0\n0\n", "t"), Some(3), &["period zero", "must be positive"]);
}

#[test]
fn mahimahi_allows_blank_lines_only_at_the_end() {
    assert_error(parse_mahimahi("1\n\n2\n", "t"), Some(2), &["blank line", "only at the end"]);
}

#[test]
fn trace_errors_name_the_origin_and_line() {
    let error = parse_mahimahi("1\nx\n", "traces/att.down").unwrap_err();
    assert!(error.to_string().starts_with("traces/att.down:2: not an integer"), "{error}");
}

#[test]
fn csv_with_a_seconds_column_holds_each_sample_for_one_second() {
    let text = "t,mbps\n10,1\n11,2.5\n12,0\n13,4\n";
    let trace = parse_bitrate_csv(text, "t", &seconds_format()).unwrap();
    assert_eq!(trace, steps_secs(&[(0, 1_000_000), (1, 2_500_000), (2, 0), (3, 4_000_000)], 4));
}

#[test]
fn csv_averages_repeated_seconds_and_holds_values_across_gaps() {
    // Seconds 0, 0, 1, 4 (2 and 3 missing), 5, 5, 5.
    let text = "t,mbps\n100,1\n100,3\n101,6\n104,8\n105,1\n105,2\n105,3\n";
    let trace = parse_bitrate_csv(text, "t", &seconds_format()).unwrap();
    let rates = [2, 6, 6, 6, 8, 2];
    assert_eq!(trace.period, Dur::from_secs(6));
    for (second, mbps) in rates.iter().enumerate() {
        let bits = RateModel::Steps(trace.clone()).capacity_bits(Time::from_secs_f64(second as f64), Time::from_secs_f64(second as f64 + 1.0));
        assert_eq!(bits, *mbps as f64 * 1e6, "second {second}");
    }
    assert_eq!(trace.steps.len(), 4, "equal consecutive seconds merge: {:?}", trace.steps);
}

#[test]
fn csv_with_decimal_seconds_bins_rows_by_whole_second_since_the_first() {
    let text = "t,mbps\n0.5,1\n1.0,3\n1.5,6\n2.7,2\n";
    let trace = parse_bitrate_csv(text, "t", &seconds_format()).unwrap();
    assert_eq!(trace, steps_secs(&[(0, 2_000_000), (1, 6_000_000), (2, 2_000_000)], 3));
}

#[test]
fn csv_without_time_column_uses_the_row_index() {
    let format = BitrateCsvFormat { time: TimeColumn::RowIndex, rate_column: "kbps".into(), bps_per_unit: 1000.0 };
    let trace = parse_bitrate_csv("kbps\n5\n5\n\"7\"\n", "t", &format).unwrap();
    assert_eq!(trace, steps_secs(&[(0, 5000), (2, 7000)], 3));
}

#[test]
fn gnettrack_synthetic_file_follows_the_duplicate_and_gap_rule_across_a_leap_day() {
    let trace = parse_bitrate_csv(SYNTHETIC_GNETTRACK, "gnettrack-synthetic.csv", &BitrateCsvFormat::ucc("DL_bitrate")).unwrap();
    // 2020.02.29_23.59.50 to 2020.03.01_00.00.06: 16 s apart, 17 one-second samples.
    assert_eq!(trace.period, Dur::from_secs(17));
    let kbps = [1000, 3000, 0, 0, 5000, 4000, 4000, 4000, 1000, 1000, 1000, 12000, 12000, 12000, 500, 500, 8000];
    let model = RateModel::Steps(trace.clone());
    for (second, rate) in kbps.iter().enumerate() {
        let from = Time(second as u64 * 1_000_000_000);
        assert_eq!(model.capacity_bits(from, from + Dur::from_secs(1)), *rate as f64 * 1000.0, "second {second}");
    }
    assert_eq!(trace.steps.len(), 9);
    let uplink = parse_bitrate_csv(SYNTHETIC_GNETTRACK, "g", &BitrateCsvFormat::ucc("UL_bitrate")).unwrap();
    let uplink_mean = RateModel::Steps(uplink).mean_bps();
    assert!((uplink_mean * 10.0 - model.mean_bps()).abs() < 1e-6, "UL is a tenth of DL in every row");
}

#[test]
fn csv_missing_column_lists_the_available_ones() {
    let format = BitrateCsvFormat::ucc("DL_bitrate");
    assert_error(parse_bitrate_csv("Timestamp,UL_bitrate\n", "t", &format), Some(1), &["\"DL_bitrate\"", "Timestamp, UL_bitrate"]);
    assert_error(parse_bitrate_csv("time,DL_bitrate\n", "t", &format), Some(1), &["\"Timestamp\"", "time, DL_bitrate"]);
}

#[test]
fn csv_rejects_time_going_backwards() {
    let text = "t,mbps\n1,1\n2,1\n1.5,1\n";
    assert_error(parse_bitrate_csv(text, "t", &seconds_format()), Some(4), &["backwards", "time order"]);
    let gnettrack = "Timestamp,DL_bitrate\n2020.01.01_00.00.01,1\n2020.01.01_00.00.00,1\n";
    assert_error(parse_bitrate_csv(gnettrack, "t", &BitrateCsvFormat::ucc("DL_bitrate")), Some(3), &["backwards"]);
}

#[test]
fn csv_rejects_bad_rate_values_with_line_and_column() {
    for bad in ["-", "-1", "NaN", "inf", "", "12kbps"] {
        let text = format!("t,mbps\n0,1\n1,{bad}\n");
        assert_error(parse_bitrate_csv(&text, "t", &seconds_format()), Some(3), &["column \"mbps\"", "finite non-negative number"]);
    }
}

#[test]
fn csv_rejects_bad_times() {
    let format = BitrateCsvFormat::ucc("DL_bitrate");
    for bad in ["2020.02.30_00.00.00", "2020-02-14 13:21:26", "2020.02.14_13.21", "x"] {
        let text = format!("Timestamp,DL_bitrate\n2020.02.14_13.21.26,1\n{bad},1\n");
        assert_error(parse_bitrate_csv(&text, "t", &format), Some(3), &["column \"Timestamp\"", "YYYY.MM.DD_HH.MM.SS"]);
    }
    assert_error(parse_bitrate_csv("t,mbps\nsoon,1\n", "t", &seconds_format()), Some(2), &["column \"t\"", "number of seconds"]);
}

#[test]
fn csv_rejects_short_rows() {
    assert_error(parse_bitrate_csv("t,x,mbps\n0,1,1\n1,1\n", "t", &seconds_format()), Some(3), &["2 fields", "\"mbps\" is field 3"]);
}

#[test]
fn csv_rejects_traces_that_carry_nothing() {
    assert_error(parse_bitrate_csv("t,mbps\n0,0\n5,0\n", "t", &seconds_format()), None, &["every rate", "zero"]);
    assert_error(parse_bitrate_csv("t,mbps\n", "t", &seconds_format()), None, &["not followed by any data row"]);
    assert_error(parse_bitrate_csv("", "t", &seconds_format()), Some(1), &["empty file", "header"]);
}

#[test]
fn csv_rejects_blank_lines_in_the_middle_and_bad_units() {
    assert_error(parse_bitrate_csv("t,mbps\n0,1\n\n1,1\n", "t", &seconds_format()), Some(3), &["blank line"]);
    let format = BitrateCsvFormat { bps_per_unit: 0.0, ..seconds_format() };
    assert_error(parse_bitrate_csv("t,mbps\n0,1\n", "t", &format), None, &["bps_per_unit"]);
    assert_error(parse_bitrate_csv("t,mbps\n0,1e300\n", "t", &seconds_format()), None, &["above the largest allowed"]);
    // The largest rate anywhere, 320 Gbit/s, bounds a trace's rates too (1 Pbit/s did).
    let kbps = BitrateCsvFormat { time: TimeColumn::Seconds("t".into()), rate_column: "kbps".into(), bps_per_unit: 1000.0 };
    assert_error(parse_bitrate_csv("t,kbps\n0,320000001\n", "t", &kbps), None, &["above the largest allowed, 320 Gbit/s"]);
    assert_error(parse_bitrate_csv("t,kbps\n0,10\n1,320000000000\n", "t", &kbps), None, &["320000000000000 bit/s"]);
    assert!(parse_bitrate_csv("t,kbps\n0,320000000\n", "t", &kbps).is_ok());
}

fn trace_like_text() -> impl Strategy<Value = String> {
    prop_oneof![
        ".{0,200}",
        "[0-9 \\-\r\n]{0,120}",
        "t,mbps\n([0-9.eE+\\-]{0,12},[0-9.eE+\\-naif\"]{0,12}\n){0,12}",
        "Timestamp,DL_bitrate\n([0-9]{1,4}\\.[0-9]{1,3}\\.[0-9]{1,3}_[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3},[0-9\\-\"]{0,6}\n){0,8}",
    ]
}

proptest! {
    #[test]
    fn parsers_never_panic_on_arbitrary_text(text in trace_like_text(), per_unit in prop::num::f64::ANY) {
        let _ = parse_mahimahi(&text, "fuzz");
        for format in [
            BitrateCsvFormat::ucc("DL_bitrate"),
            seconds_format(),
            BitrateCsvFormat { time: TimeColumn::RowIndex, rate_column: "mbps".into(), bps_per_unit: per_unit },
        ] {
            if let Ok(trace) = parse_bitrate_csv(&text, "fuzz", &format) {
                prop_assert!(trace.period > Dur::ZERO);
                prop_assert!(RateModel::Steps(trace).mean_bps() > 0.0);
            }
        }
    }

    /// Valid Mahimahi text round-trips: written timestamps come back, period = last one.
    #[test]
    fn mahimahi_round_trips(deltas in prop::collection::vec(0u64..50, 1..100)) {
        let times: Vec<u64> = deltas.iter().scan(0, |t, d| { *t += d; Some(*t) }).collect();
        prop_assume!(*times.last().unwrap() > 0);
        let text: String = times.iter().map(|t| format!("{t}\n")).collect();
        let trace = parse_mahimahi(&text, "t").unwrap();
        prop_assert_eq!(trace.period_ms, *times.last().unwrap());
        prop_assert_eq!(trace.times_ms, times);
    }
}
