//! Links: each `[[link]]` becomes two [`LinkDirection`]s (forward = `between[0]` to
//! `between[1]`, then reverse), with the per-direction overrides applied and every model
//! checked. Direction `d` of link `i` is element `2 * i + d` of the network. A queue given in
//! bandwidth-delay products becomes bytes here ([`bdp_queue`]), so the models only ever see
//! packets or bytes.

use super::errors::{check_name, err, FieldError};
use super::files::Files;
use super::models::{resolve_delay, resolve_loss, resolve_rate};
use crate::schema::{AqmKind, AqmSpec, AqmTable, DirectionSection, LinkSection, QueueSpec};
use multiconn_link::aqm::dualpi2::{DualScheduler, EcnMask, NativeAqm, PiInput, StepThreshold};
use multiconn_link::aqm::{AqmConfig, CodelParams, DualPi2Params, FqCodelParams, PieParams};
use multiconn_core::units::QueueLimit;
use multiconn_core::{Dur, Time};
use multiconn_link::availability::Schedule;
use multiconn_link::builder::LinkConfig;
use multiconn_link::delay::DelayModel;
use multiconn_link::rate::RateModel;
use multiconn_net::HopModel;
use std::collections::HashMap;
use std::sync::Arc;

/// The largest IP packet of a flow that does not say, headers included, in bytes (a link's
/// byte queue is never smaller).
pub const DEFAULT_PACKET_SIZE: u32 = 1500;

/// Which way a link direction carries packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// From `between[0]` to `between[1]`.
    Forward,
    /// From `between[1]` to `between[0]`.
    Reverse,
}

impl Direction {
    /// `"forward"` or `"reverse"`, as in the scenario and the report.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Forward => "forward",
            Direction::Reverse => "reverse",
        }
    }
}

/// One direction of one link, ready to build.
#[derive(Debug, Clone)]
pub struct LinkDirection {
    /// The link's name.
    pub name: String,
    /// Which of its two directions.
    pub direction: Direction,
    /// The node it leaves.
    pub from: String,
    /// The node it reaches.
    pub to: String,
    /// What its element is built from: a [`LinkConfig`] (rate, delay, queue, loss, down
    /// windows) for a `[[link]]`.
    pub model: Arc<dyn HopModel>,
    /// Its queue discipline's name (`"codel"`, `"fq_codel"`, `"pie"`, `"dualpi2"`); `None` for
    /// drop-tail.
    pub aqm: Option<&'static str>,
    /// Its queue discipline marks ECN-capable packets CE where it would drop them (`ecn` on:
    /// FQ-CoDel's default, CoDel's and PIE's with `ecn = true`; always for DualPI2).
    pub aqm_ecn: bool,
}

impl LinkDirection {
    /// The label its random streams derive from.
    pub fn label(&self) -> String {
        format!("link/{}/{}", self.name, self.direction.name())
    }
}

/// Every link's two directions, in file order, and each link's index by name. Names are
/// checked here (valid, unique); a link joins two different nodes.
pub(super) fn resolve_links<'f>(links: &'f [LinkSection], files: &mut Files) -> Result<(Vec<LinkDirection>, HashMap<&'f str, usize>), FieldError> {
    let mut directions = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (i, l) in links.iter().enumerate() {
        check_name("link", i, &l.name)?;
        if index.insert(&l.name, i).is_some() {
            return Err(err(&["link", &l.name, "name"], format!("two links are named \"{}\"", l.name)));
        }
        if l.between[0] == l.between[1] {
            return Err(err(&["link", &l.name, "between"], "a link must join two different nodes"));
        }
        for (direction, over) in [(Direction::Forward, &l.forward), (Direction::Reverse, &l.reverse)] {
            directions.push(resolve_direction(l, direction, over.as_ref(), files)?);
        }
    }
    Ok((directions, index))
}

/// One direction of `l`: its own value of each field where `over` has one, else the link's.
fn resolve_direction(
    l: &LinkSection,
    direction: Direction,
    over: Option<&DirectionSection>,
    files: &mut Files,
) -> Result<LinkDirection, FieldError> {
    let dir = direction.name();
    let name = l.name.as_str();
    // The path of a field: the per-direction one when it is overridden there.
    let at = |field: &'static str, overridden: bool| -> Vec<&str> {
        if overridden { vec!["link", name, dir, field] } else { vec!["link", name, field] }
    };
    let (rate_over, rate) = pick(&l.rate, over.map(|o| &o.rate));
    let (delay_over, delay) = pick(&l.delay, over.map(|o| &o.delay));
    let (queue_over, queue) = pick(&l.queue, over.map(|o| &o.queue));
    let (loss_over, loss) = pick(&l.loss, over.map(|o| &o.loss));
    let (down_over, down) = pick(&l.down, over.map(|o| &o.down));
    let (replaced_over, replaced) = pick(&l.replaced, over.map(|o| &o.replaced));
    let (aqm_over, aqm) = pick(&l.aqm, over.map(|o| &o.aqm));

    let rate_path = at("rate", rate_over);
    let rate = match rate {
        None => return Err(err(&rate_path, format!("missing: give the {dir} direction a rate, e.g. rate = \"20 Mbit/s\""))),
        Some(r) => resolve_rate(r, &rate_path, files)?,
    };
    let queue_path = at("queue", queue_over);
    let queue = *queue.ok_or_else(|| err(&queue_path, "missing: give the link a queue limit, e.g. queue = \"100 packets\", \"150 kB\" or \"1.5 BDP\""))?;
    let delay_path = at("delay", delay_over);
    let (delay, reorder) = match delay {
        None => (DelayModel::Constant(Dur::ZERO), false),
        Some(d) => resolve_delay(d, &delay_path, files)?,
    };
    let queue = match queue {
        QueueSpec::Limit(limit) => limit,
        QueueSpec::Bdp(factor) => bdp_queue(factor, &rate, &delay, dir).map_err(|m| err(&queue_path, m))?,
    };
    let loss_path = at("loss", loss_over);
    let loss = loss.map(|l| resolve_loss(l, &loss_path, files)).transpose()?;
    let down_path = at("down", down_over);
    let windows: Vec<(Time, Time)> = down.map(|d| d.iter().map(|[a, b]| (Time(a.0), Time(b.0))).collect()).unwrap_or_default();
    let down = Schedule::new(windows).map_err(|m| err(&down_path, m))?;
    let replaced: Vec<Time> = replaced.map(|r| r.iter().map(|d| Time(d.0)).collect()).unwrap_or_default();
    if let Some(i) = replaced.windows(2).position(|w| w[0] > w[1]) {
        return Err(err(&at("replaced", replaced_over), format!("instant {} ({} s) comes before instant {} ({} s): list them in time order", i + 2, replaced[i + 1].as_secs_f64(), i + 1, replaced[i].as_secs_f64())));
    }
    let aqm = aqm.map(resolve_aqm).transpose().map_err(|(field, m)| {
        let mut path = at("aqm", aqm_over);
        if let Some(field) = field {
            path.push(field);
        }
        err(&path, m)
    })?.flatten();

    let (from, to) = match direction {
        Direction::Forward => (l.between[0].clone(), l.between[1].clone()),
        Direction::Reverse => (l.between[1].clone(), l.between[0].clone()),
    };
    let aqm_name = aqm.as_ref().map(|a| a.name());
    let aqm_ecn = match &aqm {
        None => false,
        Some(AqmConfig::Codel(p)) => p.ecn,
        Some(AqmConfig::FqCodel(p)) => p.codel.ecn,
        Some(AqmConfig::Pie(p)) => p.ecn,
        Some(AqmConfig::DualPi2(_)) => true,
    };
    Ok(LinkDirection { name: l.name.clone(), direction, from, to, model: Arc::new(LinkConfig { rate, delay, reorder, queue, aqm, loss, down, replaced }), aqm: aqm_name, aqm_ecn })
}

/// A queue of `factor` bandwidth-delay products of a direction: `factor` × its rate × twice
/// its one-way delay (the delay model's mean), in bytes, at least one packet of
/// [`DEFAULT_PACKET_SIZE`] bytes. The rate must be fixed and the delay positive.
pub(super) fn bdp_queue(factor: f64, rate: &RateModel, delay: &DelayModel, dir: &str) -> Result<QueueLimit, String> {
    let RateModel::Fixed(rate) = rate else {
        return Err(format!("a queue in BDP needs a fixed rate, and the {dir} direction's rate is a trace: give the queue in packets or bytes"));
    };
    let one_way = delay.mean();
    if one_way == Dur::ZERO {
        return Err(format!("a queue in BDP needs a delay, and the {dir} direction's is zero: give the queue in packets or bytes, or the link a delay"));
    }
    let bytes = factor * rate.bps() as f64 * 2.0 * one_way.as_secs_f64() / 8.0;
    Ok(QueueLimit::Bytes((bytes.round() as u64).max(u64::from(DEFAULT_PACKET_SIZE))))
}

/// A direction's queue discipline from its spec (`None` for drop-tail); an error names the
/// table's field at fault, if one is.
pub(super) fn resolve_aqm(spec: &AqmSpec) -> Result<Option<AqmConfig>, (Option<&'static str>, String)> {
    let positive = |field: &'static str, d: Option<Dur>, default: Dur| match d {
        Some(d) if d == Dur::ZERO => Err((Some(field), format!("{field} must be above zero, e.g. \"{}\"", default))),
        Some(d) => Ok(d),
        None => Ok(default),
    };
    let count = |field: &'static str, v: Option<u32>, default: u32, max: u32| match v {
        Some(v) if v == 0 || v > max => Err((Some(field), format!("{field} must be from 1 to {max}, got {v}"))),
        Some(v) => Ok(v),
        None => Ok(default),
    };
    let weight = |field: &'static str, v: Option<f64>, default: f64| match v {
        Some(v) if !v.is_finite() || v < 0.0 => Err((Some(field), format!("{field} must be a finite number at or above zero, got {v}"))),
        Some(v) => Ok(v),
        None => Ok(default),
    };
    let codel = |target: Option<Dur>, interval: Option<Dur>, ecn: Option<bool>, base: CodelParams| -> Result<CodelParams, (Option<&'static str>, String)> {
        let target = positive("target", target, base.target)?;
        let interval = positive("interval", interval, base.interval)?;
        if target >= interval {
            return Err((Some("target"), format!("target ({target}) must be shorter than interval ({interval}); RFC 8289 sets it to 5-10 % of the interval")));
        }
        Ok(CodelParams { target, interval, ecn: ecn.unwrap_or(base.ecn), ..base })
    };
    Ok(Some(match spec {
        AqmSpec::Kind(AqmKind::None) => return Ok(None),
        AqmSpec::Kind(AqmKind::Codel) => AqmConfig::Codel(CodelParams::default()),
        AqmSpec::Kind(AqmKind::FqCodel) => AqmConfig::FqCodel(FqCodelParams::default()),
        AqmSpec::Kind(AqmKind::Pie) => AqmConfig::Pie(PieParams::default()),
        AqmSpec::Kind(AqmKind::Dualpi2) => AqmConfig::DualPi2(DualPi2Params::default()),
        AqmSpec::Model(table @ AqmTable::Dualpi2 { .. }) => AqmConfig::DualPi2(resolve_dualpi2(table)?),
        AqmSpec::Model(AqmTable::Codel { target, interval, ecn }) => AqmConfig::Codel(codel(*target, *interval, *ecn, CodelParams::default())?),
        AqmSpec::Model(AqmTable::FqCodel { target, interval, ecn, quantum, flows, drop_batch }) => {
            let base = FqCodelParams::default();
            let quantum = match quantum {
                Some(q) if q.0 < 64 || q.0 > 65_536 => return Err((Some("quantum"), format!("quantum must be from 64 B to 64 KiB, got {} B", q.0))),
                Some(q) => q.0 as u32,
                None => base.quantum,
            };
            AqmConfig::FqCodel(FqCodelParams {
                codel: codel(*target, *interval, *ecn, base.codel)?,
                quantum,
                flows: count("flows", *flows, base.flows, 65_536)?,
                drop_batch: count("drop_batch", *drop_batch, base.drop_batch, 65_536)?,
            })
        }
        AqmSpec::Model(AqmTable::Pie { target, tupdate, alpha, beta, max_burst, ecn, mark_ecn_th }) => {
            let base = PieParams::default();
            AqmConfig::Pie(PieParams {
                target: positive("target", *target, base.target)?,
                tupdate: positive("tupdate", *tupdate, base.tupdate)?,
                alpha: weight("alpha", *alpha, base.alpha)?,
                beta: weight("beta", *beta, base.beta)?,
                max_burst: max_burst.unwrap_or(base.max_burst),
                ecn: ecn.unwrap_or(base.ecn),
                mark_ecn_th: mark_ecn_th.map(|p| p.0).unwrap_or(base.mark_ecn_th),
                ..base
            })
        }
    }))
}

/// DualPI2's parameters from its table: Linux's defaults where absent; an error names the field.
fn resolve_dualpi2(table: &AqmTable) -> Result<DualPi2Params, (Option<&'static str>, String)> {
    let AqmTable::Dualpi2 {
        target,
        tupdate,
        alpha,
        beta,
        max_rtt,
        typical_rtt,
        coupling,
        l_aqm,
        step_threshold,
        step_packets,
        min_qlen_step,
        ramp_min_th,
        ramp_range,
        ramp_th_len,
        scheduler,
        classic_protection,
        tshift,
        pi_input,
        overload,
        drop_at,
        ecn_mask,
    } = table
    else {
        unreachable!("called on a dualpi2 table")
    };
    let base = DualPi2Params::default();
    fn fail<T>(field: &'static str, m: String) -> Result<T, (Option<&'static str>, String)> {
        Err((Some(field), m))
    }
    let positive = |field: &'static str, d: Option<Dur>, default: Dur| match d {
        Some(d) if d == Dur::ZERO => fail(field, format!("{field} must be above zero, e.g. \"{default}\"")),
        Some(d) => Ok(d),
        None => Ok(default),
    };
    let gain = |field: &'static str, v: Option<f64>, default: f64| match v {
        Some(v) if !v.is_finite() || v <= 0.0 => fail(field, format!("{field} must be a finite number of Hz above zero, got {v}")),
        Some(v) => Ok(v),
        None => Ok(default),
    };
    let word = |field: &'static str, v: &Option<String>, known: &[&'static str]| -> Result<Option<&'static str>, (Option<&'static str>, String)> {
        match v {
            None => Ok(None),
            Some(v) => match known.iter().find(|k| **k == v.as_str()) {
                Some(k) => Ok(Some(*k)),
                None => fail(field, format!("{field} must be {}, got \"{v}\"", known.iter().map(|k| format!("\"{k}\"")).collect::<Vec<_>>().join(" or "))),
            },
        }
    };
    let mut params = DualPi2Params {
        target: positive("target", *target, base.target)?,
        tupdate: positive("tupdate", *tupdate, base.tupdate)?,
        alpha: gain("alpha", *alpha, base.alpha)?,
        beta: gain("beta", *beta, base.beta)?,
        ..base
    };
    if max_rtt.is_some() || typical_rtt.is_some() {
        let field = if max_rtt.is_some() { "max_rtt" } else { "typical_rtt" };
        if let Some(given) = [("target", target.is_some()), ("tupdate", tupdate.is_some()), ("alpha", alpha.is_some()), ("beta", beta.is_some())].iter().find(|g| g.1) {
            return fail(field, format!("{field} sets target, tupdate, alpha and beta (as tc does), and {} is given too: give one or the other", given.0));
        }
        let max = max_rtt.map(|d| positive("max_rtt", Some(d), Dur::from_millis(100))).transpose()?;
        let typical = typical_rtt.map(|d| positive("typical_rtt", Some(d), Dur::from_millis(15))).transpose()?;
        params = params.tuned_for(max, typical);
    }
    params.coupling = match coupling {
        Some(k) if !k.is_finite() || *k <= 0.0 || *k > 255.0 => return fail("coupling", format!("coupling must be above 0 and at most 255, got {k}")),
        Some(k) => *k,
        None => base.coupling,
    };
    let ramp = word("l_aqm", l_aqm, &["step", "ramp"])? == Some("ramp");
    let step_given = [("step_threshold", step_threshold.is_some()), ("step_packets", step_packets.is_some()), ("min_qlen_step", min_qlen_step.is_some())];
    let ramp_given = [("ramp_min_th", ramp_min_th.is_some()), ("ramp_range", ramp_range.is_some()), ("ramp_th_len", ramp_th_len.is_some())];
    params.native = if ramp {
        if let Some((field, _)) = step_given.iter().find(|g| g.1) {
            return fail(field, format!("{field} is for the step; with l_aqm = \"ramp\" give ramp_min_th, ramp_range or ramp_th_len"));
        }
        let NativeAqm::Ramp { min_th, range, th_len } = DualPi2Params::RFC_RAMP else { unreachable!() };
        NativeAqm::Ramp { min_th: ramp_min_th.unwrap_or(min_th), range: ramp_range.unwrap_or(range), th_len: ramp_th_len.unwrap_or(th_len) }
    } else {
        if let Some((field, _)) = ramp_given.iter().find(|g| g.1) {
            return fail(field, format!("{field} is for the ramp: set l_aqm = \"ramp\" to use it"));
        }
        let threshold = match (step_threshold, step_packets) {
            (Some(_), Some(_)) => return fail("step_packets", "give the step as a sojourn (step_threshold) or a packet count (step_packets), not both".to_string()),
            (Some(t), None) => StepThreshold::Time(*t),
            (None, Some(n)) => StepThreshold::Packets(*n),
            (None, None) => StepThreshold::Time(Dur::from_millis(1)),
        };
        NativeAqm::Step { threshold, min_qlen: min_qlen_step.unwrap_or(0) }
    };
    let ts_fifo = word("scheduler", scheduler, &["wrr", "ts_fifo"])? == Some("ts_fifo");
    params.scheduler = if ts_fifo {
        if classic_protection.is_some() {
            return fail("classic_protection", "classic_protection is the WRR's weight; with scheduler = \"ts_fifo\" give tshift".to_string());
        }
        DualScheduler::TsFifo { tshift: tshift.unwrap_or(Dur::from_millis(50)) }
    } else {
        if tshift.is_some() {
            return fail("tshift", "tshift is for the time-shifted FIFO: set scheduler = \"ts_fifo\" to use it".to_string());
        }
        let wc = match classic_protection {
            None => 10,
            Some(p) => {
                let percent = p.0 * 100.0;
                if (percent - percent.round()).abs() > 1e-9 {
                    return fail("classic_protection", format!("classic_protection must be a whole percentage from 0 % to 100 %, got {percent} %"));
                }
                percent.round() as u8
            }
        };
        DualScheduler::Wrr { classic_protection: wc }
    };
    params.pi_input = if word("pi_input", pi_input, &["max", "classic"])? == Some("classic") { PiInput::Classic } else { PiInput::Max };
    params.drop_overload = word("overload", overload, &["drop", "overflow"])? != Some("overflow");
    params.drop_early = word("drop_at", drop_at, &["dequeue", "enqueue"])? == Some("enqueue");
    params.ecn_mask = if word("ecn_mask", ecn_mask, &["l4s", "any"])? == Some("any") { EcnMask::Any } else { EcnMask::L4s };
    Ok(params)
}

/// The per-direction value when there is one (and `true`), else the link-wide one.
fn pick<'a, T>(base: &'a Option<T>, over: Option<&'a Option<T>>) -> (bool, Option<&'a T>) {
    match over {
        Some(Some(v)) => (true, Some(v)),
        _ => (false, base.as_ref()),
    }
}
