//! Parsers for rate traces: text in, [`crate::rate`] models out (reading files is the caller's
//! business; `origin` only names the source in errors).
//!
//! * [`parse_mahimahi`] reads a Mahimahi packet-delivery trace (format from Mahimahi
//!   `traces/README`): one non-negative integer per line, a timestamp in milliseconds, each an
//!   opportunity to deliver one 1500-byte packet. Timestamps never decrease; repeated ones are
//!   several opportunities in the same millisecond; the last one is the period after which the
//!   trace loops, so it must be positive. Whitespace around a number is ignored and blank lines
//!   are allowed only at the end.
//! * [`parse_bitrate_csv`] reads a per-second bitrate CSV with a header row, such as the
//!   G-NetTrack Pro logs of the UCC 5G dataset (`Timestamp` as `YYYY.MM.DD_HH.MM.SS`,
//!   `DL_bitrate`/`UL_bitrate` in kbit/s). Fields are read by the `csv` crate (RFC 4180 quoting,
//!   surrounding whitespace trimmed); columns are found by header name. Time starts at the
//!   first row and each sample holds for one second. Real logs skip and repeat seconds, so:
//!   **samples with the same second are averaged, and a missing second holds the value of the
//!   previous second present.** Time going backwards is an error. The period is
//!   `last second − first second + 1 s`; the result has one step per second, with equal
//!   consecutive rates merged into one step.
//!
//! Every error is a [`TraceError`] naming the 1-based line and saying what is allowed. The
//! parsers never panic, whatever the input.

use crate::rate::{OpportunityTrace, StepTrace};
use crate::TraceError;
use multiconn_core::units::MAX_RATE;
use multiconn_core::{Dur, Rate};

/// Where the time of each row of a bitrate CSV comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimeColumn {
    /// A column of seconds (integer or decimal) since any origin.
    Seconds(String),
    /// A G-NetTrack timestamp column, `YYYY.MM.DD_HH.MM.SS` (the UCC datasets' `Timestamp`).
    GNetTrack(String),
    /// No time column: row i covers second i.
    RowIndex,
}

/// How to read a per-second bitrate CSV.
#[derive(Debug, Clone, PartialEq)]
pub struct BitrateCsvFormat {
    /// Where each row's time comes from.
    pub time: TimeColumn,
    /// The column holding the rate.
    pub rate_column: String,
    /// Bits per second per unit of the rate column (1000 for kbit/s).
    pub bps_per_unit: f64,
}

impl BitrateCsvFormat {
    /// The UCC G-NetTrack files: `Timestamp`, `DL_bitrate` (or `UL_bitrate`) in kbit/s.
    pub fn ucc(column: &str) -> BitrateCsvFormat {
        BitrateCsvFormat { time: TimeColumn::GNetTrack("Timestamp".into()), rate_column: column.into(), bps_per_unit: 1000.0 }
    }
}

/// The largest rate a trace may give: the largest rate anywhere, 320 Gbit/s (above it a
/// 40-byte packet would serialize in less than the clock's 1 ns). Larger ones are usually a
/// unit mistake.
const MAX_RATE_BPS: f64 = MAX_RATE.0 as f64;
/// Longest span a bitrate trace may cover (about 31 years), so that nanoseconds stay in range.
const MAX_SPAN_SECS: i64 = 1_000_000_000;

const MAHIMAHI_ALLOWED: &str = "each line must hold one non-negative integer (a timestamp in milliseconds)";

/// Parses a Mahimahi trace (one millisecond timestamp per line, one 1500-byte opportunity
/// each); `origin` names the text in errors.
pub fn parse_mahimahi(text: &str, origin: &str) -> Result<OpportunityTrace, TraceError> {
    let lines = content_lines(text, origin)?;
    let mut times_ms: Vec<u64> = Vec::with_capacity(lines.len());
    for &(line, content) in &lines {
        let err = |message: String| TraceError::new(origin, Some(line), message);
        let ms = parse_milliseconds(content).map_err(err)?;
        if let Some(&previous) = times_ms.last() {
            if ms < previous {
                return Err(err(format!(
                    "timestamp {ms} is smaller than the previous one ({previous}): timestamps must never decrease"
                )));
            }
        }
        times_ms.push(ms);
    }
    let (&last_line, &period_ms) = match (lines.last(), times_ms.last()) {
        (Some((line, _)), Some(ms)) => (line, ms),
        _ => return Err(TraceError::new(origin, Some(1), format!("empty trace: {MAHIMAHI_ALLOWED}"))),
    };
    if period_ms == 0 {
        return Err(TraceError::new(
            origin,
            Some(last_line),
            "the last timestamp is 0, so the trace would loop with period zero: the last timestamp sets the period and must be positive",
        ));
    }
    Ok(OpportunityTrace { times_ms, period_ms })
}

fn parse_milliseconds(content: &str) -> Result<u64, String> {
    let digits = content.strip_prefix('-').unwrap_or(content);
    let all_digits = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    if all_digits && digits.len() < content.len() {
        return Err(format!("negative timestamp \"{}\": {MAHIMAHI_ALLOWED}", excerpt(content)));
    }
    if !all_digits {
        return Err(format!("not an integer: \"{}\": {MAHIMAHI_ALLOWED}", excerpt(content)));
    }
    content.parse().map_err(|_| format!("timestamp \"{}\" is too large: {MAHIMAHI_ALLOWED}", excerpt(content)))
}

/// The trimmed lines of `text` with their 1-based numbers, up to the last non-blank one.
/// A blank line before that is an error; an empty result means the text is blank.
fn content_lines<'a>(text: &'a str, origin: &str) -> Result<Vec<(usize, &'a str)>, TraceError> {
    let lines: Vec<(usize, &str)> = text.split('\n').map(str::trim).enumerate().map(|(i, l)| (i + 1, l)).collect();
    let last_content = lines.iter().rposition(|(_, l)| !l.is_empty()).map_or(0, |i| i + 1);
    let lines = &lines[..last_content];
    if let Some(&(line, _)) = lines.iter().find(|(_, l)| l.is_empty()) {
        return Err(TraceError::new(origin, Some(line), "blank line inside the trace: blank lines are allowed only at the end"));
    }
    Ok(lines.to_vec())
}

/// At most 40 characters of `s`, for error messages.
fn excerpt(s: &str) -> String {
    const MAX_CHARS: usize = 40;
    match s.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_string(),
    }
}

/// Parses a per-second bitrate CSV laid out as `format` says; `origin` names the text in
/// errors.
pub fn parse_bitrate_csv(text: &str, origin: &str, format: &BitrateCsvFormat) -> Result<StepTrace, TraceError> {
    if !(format.bps_per_unit.is_finite() && format.bps_per_unit > 0.0) {
        return Err(TraceError::new(
            origin,
            None,
            format!("bps_per_unit must be a finite positive number, got {}", format.bps_per_unit),
        ));
    }
    // Blank lines are checked on the raw text (the CSV reader would skip them silently).
    content_lines(text, origin)?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let mut records = reader.records();
    let line_of = |r: &csv::StringRecord| r.position().map(|p| p.line() as usize);
    let read_err = |e: csv::Error| {
        let line = e.position().map(|p| p.line() as usize);
        TraceError::new(origin, line, format!("malformed CSV: {e}"))
    };
    let header = match records.next() {
        Some(r) => r.map_err(read_err)?,
        None => return Err(TraceError::new(origin, Some(1), "empty file: expected a header row naming the columns")),
    };
    let header_fields: Vec<String> = header.iter().map(String::from).collect();
    let columns = Columns::find(&header_fields, format).map_err(|m| TraceError::new(origin, line_of(&header), m))?;
    let mut per_second = PerSecondRates::new(format.bps_per_unit);
    let mut fields: Vec<String> = Vec::new();
    for (row_index, record) in records.enumerate() {
        let record = record.map_err(read_err)?;
        let err = |message: String| TraceError::new(origin, line_of(&record), message);
        fields.clear();
        fields.extend(record.iter().map(String::from));
        let time = columns.time_of(&fields, row_index).map_err(err)?;
        let value = columns.rate_of(&fields).map_err(err)?;
        per_second.add(time, value).map_err(err)?;
    }
    per_second.into_steps().map_err(|m| TraceError::new(origin, None, m))
}

/// The header positions of the columns a [`BitrateCsvFormat`] needs.
struct Columns<'f> {
    format: &'f BitrateCsvFormat,
    time: Option<usize>,
    rate: usize,
}

impl<'f> Columns<'f> {
    fn find(header: &[String], format: &'f BitrateCsvFormat) -> Result<Columns<'f>, String> {
        let position = |name: &str| {
            header.iter().position(|h| h == name).ok_or_else(|| {
                format!("no column named \"{}\"; the header has: {}", excerpt(name), header.join(", "))
            })
        };
        let time = match &format.time {
            TimeColumn::Seconds(name) | TimeColumn::GNetTrack(name) => Some(position(name)?),
            TimeColumn::RowIndex => None,
        };
        Ok(Columns { format, time, rate: position(&format.rate_column)? })
    }

    fn field<'r>(&self, fields: &'r [String], index: usize, name: &str) -> Result<&'r str, String> {
        fields.get(index).map(String::as_str).ok_or_else(|| {
            format!("the row has {} fields but column \"{}\" is field {} of the header", fields.len(), excerpt(name), index + 1)
        })
    }

    /// The row's time in seconds since an arbitrary origin.
    fn time_of(&self, fields: &[String], row_index: usize) -> Result<f64, String> {
        let Some(index) = self.time else { return Ok(row_index as f64) };
        match &self.format.time {
            TimeColumn::Seconds(name) => {
                let text = self.field(fields, index, name)?;
                text.trim().parse::<f64>().ok().filter(|s| s.is_finite()).ok_or_else(|| {
                    format!("column \"{}\": expected a number of seconds, got \"{}\"", excerpt(name), excerpt(text))
                })
            }
            TimeColumn::GNetTrack(name) => {
                let text = self.field(fields, index, name)?;
                gnettrack_seconds(text.trim()).map(|s| s as f64).ok_or_else(|| {
                    format!(
                        "column \"{}\": expected a G-NetTrack timestamp YYYY.MM.DD_HH.MM.SS such as 2020.02.14_13.21.26, got \"{}\"",
                        excerpt(name),
                        excerpt(text)
                    )
                })
            }
            TimeColumn::RowIndex => Ok(row_index as f64),
        }
    }

    fn rate_of(&self, fields: &[String]) -> Result<f64, String> {
        let name = &self.format.rate_column;
        let text = self.field(fields, self.rate, name)?;
        text.trim().parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0).ok_or_else(|| {
            format!("column \"{}\": expected a finite non-negative number, got \"{}\"", excerpt(name), excerpt(text))
        })
    }
}

/// Seconds since 1970-01-01 00:00:00 of a G-NetTrack timestamp `YYYY.MM.DD_HH.MM.SS`, read as
/// a proleptic Gregorian date without time zone; `None` if malformed or out of range.
fn gnettrack_seconds(text: &str) -> Option<i64> {
    let (date, time) = text.split_once('_')?;
    let [year, month, day] = three_numbers(date)?;
    let [hour, minute, second] = three_numbers(time)?;
    let valid = (1..=9999).contains(&year)
        && (1..=12).contains(&month)
        && (1..=days_in_month(year, month)).contains(&day)
        && hour < 24
        && minute < 60
        && second < 60;
    valid.then(|| days_since_1970(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second)
}

/// `"2020.02.14"` → `[2020, 2, 14]`: three dot-separated unsigned numbers of at most 4 digits.
fn three_numbers(text: &str) -> Option<[i64; 3]> {
    let mut parts = text.split('.');
    let mut number = || -> Option<i64> {
        let part = parts.next()?;
        let ok = (1..=4).contains(&part.len()) && part.bytes().all(|b| b.is_ascii_digit());
        ok.then(|| part.parse().ok()).flatten()
    };
    let numbers = [number()?, number()?, number()?];
    parts.next().is_none().then_some(numbers)
}

fn is_leap_year(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 0001-01-01 to January 1st of `year` (year >= 1).
fn days_before_year(year: i64) -> i64 {
    let y = year - 1;
    365 * y + y / 4 - y / 100 + y / 400
}

fn days_since_1970(year: i64, month: i64, day: i64) -> i64 {
    let before_month: i64 = (1..month).map(|m| days_in_month(year, m)).sum();
    days_before_year(year) - days_before_year(1970) + before_month + day - 1
}

/// Accumulates (time, value) rows into one rate per second: equal seconds are averaged, a
/// missing second keeps the previous rate (the step simply lasts longer).
struct PerSecondRates {
    bps_per_unit: f64,
    first_time: Option<f64>,
    previous_time: f64,
    /// The second being accumulated (relative to the first row), with the sum and count of its values.
    current: Option<(i64, f64, u32)>,
    steps: Vec<(Dur, Rate)>,
    any_nonzero: bool,
}

impl PerSecondRates {
    fn new(bps_per_unit: f64) -> PerSecondRates {
        PerSecondRates { bps_per_unit, first_time: None, previous_time: f64::MIN, current: None, steps: Vec::new(), any_nonzero: false }
    }

    fn add(&mut self, time: f64, value: f64) -> Result<(), String> {
        if time < self.previous_time {
            return Err(format!(
                "time goes backwards ({} s before the previous row): rows must be in time order",
                self.previous_time - time
            ));
        }
        self.previous_time = time;
        let first = *self.first_time.get_or_insert(time);
        let second = (time - first).floor();
        if second >= MAX_SPAN_SECS as f64 {
            return Err(format!("the trace spans more than {MAX_SPAN_SECS} s"));
        }
        let second = second as i64;
        match &mut self.current {
            Some((current, sum, count)) if *current == second => {
                *sum += value;
                *count += 1;
            }
            _ => {
                self.close_current_second()?;
                self.current = Some((second, value, 1));
            }
        }
        Ok(())
    }

    fn close_current_second(&mut self) -> Result<(), String> {
        let Some((second, sum, count)) = self.current.take() else { return Ok(()) };
        let bps = sum / count as f64 * self.bps_per_unit;
        if bps.is_nan() || bps > MAX_RATE_BPS {
            return Err(format!("rate {bps} bit/s is above the largest allowed, 320 Gbit/s ({MAX_RATE_BPS} bit/s); check the unit of the rate column"));
        }
        let rate = Rate(bps.round() as u64);
        self.any_nonzero |= rate.bps() > 0;
        if self.steps.last().map(|&(_, r)| r) != Some(rate) {
            self.steps.push((Dur::from_secs(second as u64), rate));
        }
        Ok(())
    }

    fn into_steps(mut self) -> Result<StepTrace, String> {
        let last_second = match self.current {
            Some((second, _, _)) => second,
            None => return Err("the header is not followed by any data row".into()),
        };
        self.close_current_second()?;
        if !self.any_nonzero {
            return Err("every rate in the trace is zero: the link would never carry anything".into());
        }
        Ok(StepTrace { steps: self.steps, period: Dur::from_secs(last_second as u64 + 1) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gnettrack_timestamps_follow_the_calendar() {
        assert_eq!(gnettrack_seconds("1970.01.01_00.00.00"), Some(0));
        // 2020-02-14T13:21:26Z is 1581686486 s after the epoch.
        assert_eq!(gnettrack_seconds("2020.02.14_13.21.26"), Some(1_581_686_486));
        assert_eq!(gnettrack_seconds("2020.03.01_00.00.00").unwrap() - gnettrack_seconds("2020.02.28_00.00.00").unwrap(), 2 * 86_400);
        assert_eq!(gnettrack_seconds("2019.03.01_00.00.00").unwrap() - gnettrack_seconds("2019.02.28_00.00.00").unwrap(), 86_400);
        assert_eq!(gnettrack_seconds("2000.01.01_00.00.00"), Some(946_684_800));
        assert_eq!(gnettrack_seconds("2019.02.29_00.00.00"), None);
        assert_eq!(gnettrack_seconds("2020.13.01_00.00.00"), None);
        assert_eq!(gnettrack_seconds("2020.01.01_24.00.00"), None);
        assert_eq!(gnettrack_seconds("2020.01.01 00.00.00"), None);
        assert_eq!(gnettrack_seconds("2020.01.01_00.00"), None);
        assert_eq!(gnettrack_seconds("2020.01.01_00.00.00.00"), None);
    }
}
