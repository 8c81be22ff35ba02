//! A link direction's models from their scenario values: rate (fixed or a trace), delay
//! (constant, normal, empirical histogram, series) and loss (Bernoulli, Gilbert–Elliott,
//! trace). Trace files are parsed by the link crate; their errors are reported at the field's
//! `file`. Every trace's `start` goes through [`trace`], which reads it from there on
//! ([`multiconn_link::start`]); an impossible start is reported at the field's `start`.

use super::errors::{err, FieldError};
use super::files::Files;
use crate::schema::{DelaySpec, DelayTable, LossSpec, LossTable, RateSpec, RateTrace, SeriesInterpolation, TimeFormat};
use multiconn_link::delay::{parse_delay_series, parse_histogram, DelayModel, DelaySeries, Interpolation};
use multiconn_link::loss::{parse_loss_trace, LossModel};
use multiconn_link::rate::RateModel;
use multiconn_link::start::{start_at, Trace};
use multiconn_link::trace::{parse_bitrate_csv, parse_mahimahi, BitrateCsvFormat, TimeColumn};

/// Reads trace `file` named at `path`, parses it and reads it from `start` on: a file that
/// cannot be read or parsed is reported at `path.file`, a start the trace cannot take at
/// `path.start`.
fn trace<T: Trace, E: std::fmt::Display>(
    files: &mut Files,
    file: &str,
    start: Option<T::Position>,
    path: &[&str],
    parse: impl FnOnce(&str, &str) -> Result<T, E>,
) -> Result<T, FieldError> {
    let at = [path, &["file"]].concat();
    let (text, origin) = files.read(file, &at)?;
    let parsed = parse(&text, &origin).map_err(|e| err(&at, e.to_string()))?;
    start_at(parsed, start.unwrap_or_default()).map_err(|e| err(&[path, &["start"]].concat(), e.to_string()))
}

/// The rate model of `spec`, given at `path`.
pub(super) fn resolve_rate(spec: &RateSpec, path: &[&str], files: &mut Files) -> Result<RateModel, FieldError> {
    let model = match spec {
        RateSpec::Fixed(r) => {
            if r.bps() == 0 {
                return Err(err(path, "a rate must be positive"));
            }
            RateModel::Fixed(*r)
        }
        RateSpec::Trace(RateTrace::Mahimahi { file, start }) => {
            RateModel::Opportunities(trace(files, file, *start, path, parse_mahimahi)?)
        }
        RateSpec::Trace(RateTrace::Ucc { file, column, start }) => {
            RateModel::Steps(trace(files, file, *start, path, |text, origin| parse_bitrate_csv(text, origin, &BitrateCsvFormat::ucc(column)))?)
        }
        RateSpec::Trace(RateTrace::Csv { file, column, unit, time_column, time_format, start }) => {
            let time = match (time_format.unwrap_or(TimeFormat::Seconds), time_column) {
                (TimeFormat::Row, _) => TimeColumn::RowIndex,
                (TimeFormat::Seconds, c) => TimeColumn::Seconds(c.clone().unwrap_or_else(|| "time".into())),
                (TimeFormat::Gnettrack, c) => TimeColumn::GNetTrack(c.clone().unwrap_or_else(|| "Timestamp".into())),
            };
            if unit.bps() == 0 {
                return Err(err(&[path, &["unit"]].concat(), "the unit of the rate column must be positive, e.g. \"1 kbit/s\""));
            }
            let format = BitrateCsvFormat { time, rate_column: column.clone(), bps_per_unit: unit.bps() as f64 };
            RateModel::Steps(trace(files, file, *start, path, |text, origin| parse_bitrate_csv(text, origin, &format))?)
        }
    };
    Ok(model)
}

/// The largest coefficient of variation of a normal delay. The draws are truncated at 0: at
/// cv = 1 a sixth of them are, at 10 nearly half (46 %), and the others spread over tens of
/// means, one of which holds up every packet behind it in a FIFO link.
pub const MAX_DELAY_CV: f64 = 10.0;

/// The delay model of `spec`, given at `path`, and whether it may reorder packets.
pub(super) fn resolve_delay(spec: &DelaySpec, path: &[&str], files: &mut Files) -> Result<(DelayModel, bool), FieldError> {
    Ok(match spec {
        DelaySpec::Constant(d) | DelaySpec::Model(DelayTable::Constant { value: d }) => (DelayModel::Constant(*d), false),
        DelaySpec::Model(DelayTable::Normal { mean, cv, reorder }) => {
            if !(cv.is_finite() && *cv >= 0.0) {
                return Err(err(&[path, &["cv"]].concat(), format!("the coefficient of variation must be a finite number ≥ 0, got {cv}")));
            }
            if *cv > MAX_DELAY_CV {
                return Err(err(&[path, &["cv"]].concat(), format!(
                    "the coefficient of variation must be at most {MAX_DELAY_CV}, got {}: beyond it nearly half the draws are cut to 0 and the rest reach tens of means, so the delay no longer varies around its mean (for a heavy tail, use an empirical histogram or a delay series)",
                    crate::diagnostics::show_number(*cv)
                )));
            }
            (DelayModel::Normal { mean: *mean, cv: *cv }, *reorder)
        }
        DelaySpec::Model(DelayTable::Empirical { file, reorder }) => {
            let at = [path, &["file"]].concat();
            let (text, origin) = files.read(file, &at)?;
            (DelayModel::Empirical(parse_histogram(&text, &origin).map_err(|e| err(&at, e.to_string()))?), *reorder)
        }
        DelaySpec::Model(DelayTable::Series { file, interpolation, reorder, start }) => {
            // The interpolation is set before the start, which reads the series' value there.
            let interpolation = match interpolation {
                SeriesInterpolation::Linear => Interpolation::Linear,
                SeriesInterpolation::Step => Interpolation::Step,
            };
            let series = trace(files, file, *start, path, |text, origin| {
                parse_delay_series(text, origin).map(|series| DelaySeries { interpolation, ..series })
            })?;
            (DelayModel::Series(series), *reorder)
        }
    })
}

/// The loss model of `spec`, given at `path`.
pub(super) fn resolve_loss(spec: &LossSpec, path: &[&str], files: &mut Files) -> Result<LossModel, FieldError> {
    Ok(match spec {
        LossSpec::Bernoulli(p) | LossSpec::Model(LossTable::Bernoulli { p }) => LossModel::Bernoulli { p: p.0 },
        LossSpec::Model(LossTable::GilbertElliott { p, r, loss_good, loss_bad }) => {
            if r.0 == 0.0 && p.0 > 0.0 {
                return Err(err(&[path, &["r"]].concat(), "r (bad → good) must be positive, or the link stays in the bad state forever"));
            }
            LossModel::GilbertElliott {
                p: p.0,
                r: r.0,
                loss_good: loss_good.map_or(0.0, |x| x.0),
                loss_bad: loss_bad.map_or(1.0, |x| x.0),
            }
        }
        LossSpec::Model(LossTable::Trace { file, start }) => {
            LossModel::Trace(trace(files, file, *start, path, parse_loss_trace)?)
        }
    })
}
