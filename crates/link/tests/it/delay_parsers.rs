//! Histogram and delay-series parsers: accepted spellings, and the line and message of each
//! rejected input.

use multiconn_core::Dur;
use multiconn_link::delay::{parse_delay_series, parse_histogram, EmpiricalDelay};
use multiconn_link::TraceError;
use proptest::prelude::*;

fn histogram_error(text: &str) -> TraceError {
    let error = parse_histogram(text, "h.csv").expect_err("should be rejected");
    assert_eq!(error.origin, "h.csv");
    error
}

fn series_error(text: &str) -> TraceError {
    let error = parse_delay_series(text, "s.csv").expect_err("should be rejected");
    assert_eq!(error.origin, "s.csv");
    error
}

fn assert_error(error: TraceError, line: Option<usize>, needle: &str) {
    assert_eq!(error.line, line, "wrong line in {error}");
    assert!(
        error.message.contains(needle),
        "message \"{}\" lacks \"{needle}\"",
        error.message
    );
}

#[test]
fn histogram_accepts_tabs_commas_spaces_and_ms_suffixes() {
    let expected = EmpiricalDelay {
        lower_ms: vec![1.0, 1.5, 2.0],
        weights: vec![3.0, 0.0, 1.0],
    };
    for text in [
        "1\t3\n1.5\t0\n2\t1\n",
        "1,3\n1.5,0\n2,1",
        "1 3\n1.5   0\n  2 1  \n",
        "1ms\t3\n1.5 ms\t0\n2ms\t1\n",
        "1.0,3.0\r\n1.5,0\r\n\r\n2,1e0\r\n\r\n",
    ] {
        assert_eq!(
            parse_histogram(text, "h").unwrap(),
            expected,
            "input {text:?}"
        );
    }
}

#[test]
fn histogram_rejects_bad_rows_with_their_line() {
    assert_error(histogram_error("1\t3\n2\n"), Some(2), "found 1 column(s)");
    assert_error(histogram_error("1\t3\t4\n"), Some(1), "found 3 column(s)");
    assert_error(
        histogram_error("1\t3\n\nabc\t4\n"),
        Some(3),
        "invalid bin lower bound \"abc\"",
    );
    assert_error(histogram_error("-1\t3\n"), Some(1), "milliseconds >= 0");
    assert_error(
        histogram_error("1\t3\n2\tmany\n"),
        Some(2),
        "invalid weight \"many\"",
    );
    assert_error(
        histogram_error("1\t-2\n"),
        Some(1),
        "count or relative frequency >= 0",
    );
    assert_error(histogram_error("1\tNaN\n"), Some(1), "invalid weight");
    assert_error(histogram_error("1\tinf\n"), Some(1), "finite");
    assert_error(
        histogram_error("1\t1\n2\t1\n2\t1\n"),
        Some(3),
        "strictly increasing",
    );
    assert_error(
        histogram_error("2\t1\n1\t1\n"),
        Some(2),
        "strictly increasing",
    );
    assert_error(
        histogram_error("1 ms ms\t1\n"),
        Some(1),
        "invalid bin lower bound",
    );
}

#[test]
fn histogram_rejects_empty_and_weightless_files() {
    assert_error(histogram_error(""), None, "no histogram rows");
    assert_error(histogram_error("\n  \n"), None, "no histogram rows");
    assert_error(histogram_error("1\t0\n2\t0\n"), None, "add up to zero");
}

#[test]
fn histogram_error_names_file_and_line() {
    assert_eq!(
        histogram_error("1\t3\n2\n")
            .to_string()
            .split(':')
            .take(2)
            .collect::<Vec<_>>(),
        ["h.csv", "2"]
    );
}

#[test]
fn series_parses_points() {
    let series = parse_delay_series("time_s,delay_ms\n0,10\n0.5, 12.5\n\n0.5,3\n", "s").unwrap();
    assert_eq!(
        series.points,
        vec![
            (Dur::ZERO, Dur::from_millis(10)),
            (Dur::from_millis(500), Dur::from_micros(12_500)),
            (Dur::from_millis(500), Dur::from_millis(3)),
        ]
    );
}

#[test]
fn series_rejects_bad_input_with_its_line() {
    assert_error(
        series_error(""),
        None,
        "expected the header `time_s,delay_ms`",
    );
    assert_error(
        series_error("0,10\n"),
        Some(1),
        "expected the header `time_s,delay_ms`, found \"0,10\"",
    );
    assert_error(
        series_error("\ntime,delay\n"),
        Some(2),
        "expected the header",
    );
    assert_error(series_error("time_s,delay_ms\n"), None, "no rows");
    assert_error(
        series_error("time_s,delay_ms\n0,1\n1\n"),
        Some(3),
        "found 1 column(s)",
    );
    assert_error(
        series_error("time_s,delay_ms\n0,1\nx,1\n"),
        Some(3),
        "invalid time \"x\"",
    );
    assert_error(
        series_error("time_s,delay_ms\n-1,1\n"),
        Some(2),
        "seconds >= 0",
    );
    assert_error(
        series_error("time_s,delay_ms\n0,-1\n"),
        Some(2),
        "invalid delay \"-1\"",
    );
    assert_error(series_error("time_s,delay_ms\n0,inf\n"), Some(2), "finite");
    assert_error(
        series_error("time_s,delay_ms\n1,1\n2,1\n1.5,1\n"),
        Some(4),
        "non-decreasing",
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn parsers_never_panic_on_arbitrary_text(text in "\\PC{0,200}") {
        let _ = parse_histogram(&text, "fuzz");
        let _ = parse_delay_series(&text, "fuzz");
    }

    #[test]
    fn parsers_never_panic_on_nearly_valid_text(text in "(time_s,delay_ms\n)?[0-9.,\t ems\\-+naifNI\n]{0,200}") {
        if let Ok(hist) = parse_histogram(&text, "fuzz") {
            prop_assert!(hist.lower_ms.windows(2).all(|w| w[0] < w[1]));
            prop_assert!(hist.weights.iter().sum::<f64>() > 0.0);
        }
        if let Ok(series) = parse_delay_series(&text, "fuzz") {
            prop_assert!(series.points.windows(2).all(|w| w[0].0 <= w[1].0));
        }
    }

    /// Any valid histogram written as text reads back exactly.
    #[test]
    fn histograms_round_trip(rows in prop::collection::vec((1u32..1000, 0u32..1000), 1..50), extra in 1u32..10) {
        let mut lower = 0.0;
        let mut expected = EmpiricalDelay { lower_ms: vec![], weights: vec![] };
        for (step, weight) in &rows {
            lower += *step as f64 / 8.0;
            expected.lower_ms.push(lower);
            expected.weights.push(*weight as f64);
        }
        expected.weights[0] += extra as f64;
        let text: String = expected.lower_ms.iter().zip(&expected.weights).map(|(l, w)| format!("{l}\t{w}\n")).collect();
        prop_assert_eq!(parse_histogram(&text, "rt").unwrap(), expected);
    }
}
