//! From a parsed [`ScenarioFile`] to runnable model parameters.
//!
//! Checks what the schema alone cannot (unique names, nodes that routes connect, required
//! values per direction, model parameters in range), reads trace files relative to the
//! scenario's folder, and parses them with the link crate's parsers. Every failure names the
//! field path it comes from.

use crate::schema::*;
use multiconn_core::units::Probability;
use multiconn_core::{Bytes, Dur, FlowId, Rate, Time};
use multiconn_link::availability::Schedule;
use multiconn_link::builder::LinkConfig;
pub use multiconn_net::Hop;
use multiconn_net::{FlowRoutes, NetworkSpec};
use multiconn_pdcp::SplitBearerConfig;
use multiconn_link::delay::{parse_delay_series, parse_histogram, DelayModel};
use multiconn_link::loss::{parse_loss_trace, LossModel};
use multiconn_link::rate::RateModel;
use multiconn_link::trace::{parse_bitrate_csv, parse_mahimahi, BitrateCsvFormat, TimeColumn};
use multiconn_cc::CcKind;
use multiconn_pdcp::{header_bytes, AdaptiveSignal, Rat, ReceiverConfig, SnLength, SplitPolicy, TransmitterConfig};
use multiconn_multipath::{LinkReaction, ManagerConfig, PathEvent, PathManager, ScheduledAction};
use multiconn_transport::profile::TransportKind;
use crate::messages::{MessageSource, StreamChoices};
use multiconn_transport::{AckPath, ConnectionParams, FailoverProfile, MultipathParams, Profile, SchedulerKind, UdpSocketConfig, Workload};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A problem at a field path (user-style segments).
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    pub path: Vec<String>,
    pub message: String,
}

fn err(path: &[&str], message: impl Into<String>) -> FieldError {
    FieldError { path: path.iter().map(|s| s.to_string()).collect(), message: message.into() }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Forward,
    Reverse,
}

impl Direction {
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
    pub name: String,
    pub direction: Direction,
    pub from: String,
    pub to: String,
    /// Its models (rate, delay, queue, loss, down windows).
    pub model: LinkConfig,
}

impl LinkDirection {
    /// The label its random streams derive from.
    pub fn label(&self) -> String {
        format!("link/{}/{}", self.name, self.direction.name())
    }
}

#[derive(Debug, Clone)]
pub struct Flow {
    pub name: String,
    pub transport: Transport,
    pub app: AppKind,
    pub cbr_rate: Option<Rate>,
    pub packet_size: u32,
    pub size: Option<u64>,
    pub start: Time,
    pub stop: Option<Time>,
    /// Hops from `from` to `to`, in order.
    pub route: Vec<Hop>,
    /// From `to` back to `from` (ACKs, requests): the same links in the opposite direction,
    /// and a split's uplink leg where the route crosses a split.
    pub reverse_route: Vec<Hop>,
    /// Multipath flows: the routes of paths 1, 2, ... (path 0 is `route` and
    /// `reverse_route`); empty for a single-path flow.
    pub extra_paths: Vec<PathRoutes>,
    /// TCP and QUIC flows: the connection's settings.
    pub connection: Option<ConnectionSpec>,
    /// app = "messages": the message sources.
    pub messages: Vec<MessageSource>,
}

/// The two routes of one path of a multipath flow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRoutes {
    /// From `from` to `to`.
    pub route: Vec<Hop>,
    /// From `to` back to `from`.
    pub reverse_route: Vec<Hop>,
}

impl Flow {
    /// The parameters its connection is built from (TCP and QUIC flows).
    pub fn connection_params(&self, flow: FlowId) -> Option<ConnectionParams> {
        let spec = self.connection.as_ref()?;
        Some(ConnectionParams {
            flow,
            start: self.start,
            workload: spec.workload,
            profile: spec.profile.clone(),
            cc: spec.cc,
            max_packet_size: self.packet_size,
            resume: spec.resume,
            address_token: spec.address_token,
            qlog: spec.qlog,
            multipath: spec.multipath.clone(),
        })
    }

    /// Its routes as the network keys them: per path, forward and reverse.
    pub fn routes(&self) -> FlowRoutes {
        let paths = (0..self.path_count() as u8).map(|p| [self.hops(p, 0).to_vec(), self.hops(p, 1).to_vec()]).collect();
        FlowRoutes { name: self.name.clone(), paths }
    }

    /// Number of paths: 1 for a single-path flow.
    pub fn path_count(&self) -> usize {
        1 + self.extra_paths.len()
    }

    pub fn is_multipath(&self) -> bool {
        !self.extra_paths.is_empty()
    }

    /// The hops of path `path`: `route` 0 from `from` to `to`, 1 back (a packet's `path` and
    /// `route`).
    pub fn hops(&self, path: u8, route: u16) -> &[Hop] {
        let (forward, reverse) = match path {
            0 => (&self.route, &self.reverse_route),
            p => {
                let p = self.extra_paths.get(p as usize - 1).unwrap_or_else(|| {
                    panic!("flow \"{}\": a packet names path {p}, but the flow has {} paths", self.name, self.path_count())
                });
                (&p.route, &p.reverse_route)
            }
        };
        if route == 0 {
            forward
        } else {
            reverse
        }
    }
}


/// A PDCP split bearer, ready to build (one bearer per flow path crossing it).
pub type Split = SplitBearerConfig;

/// The t-Reordering value of the seed study's testbed.
pub const DEFAULT_T_REORDERING: Dur = Dur::from_millis(200);
pub const DEFAULT_BATCH_SIZE: u32 = 100;
pub const DEFAULT_FEEDBACK: Dur = Dur::from_millis(10);

/// What a TCP or QUIC flow runs.
#[derive(Debug, Clone)]
pub struct ConnectionSpec {
    pub profile: Profile,
    pub cc: CcKind,
    pub workload: Workload,
    pub resume: bool,
    pub address_token: bool,
    pub qlog: bool,
    /// QUIC: the receiving host's UDP socket.
    pub udp_socket: Option<UdpSocketConfig>,
    /// Multipath flows: how the connection uses its paths.
    pub multipath: Option<MultipathParams>,
    /// Multipath QUIC flows with a path schedule or a link-down reaction: the client's path
    /// manager.
    pub path_manager: Option<PathManagerSpec>,
}

/// The client's path manager of a multipath QUIC flow.
#[derive(Debug, Clone, PartialEq)]
pub struct PathManagerSpec {
    /// The schedule as the manager runs it: an opening at 0 s of every path open from the
    /// start, in path order (the connection opens those itself, with path IDs 0, 1, ...), then
    /// the scenario's entries.
    pub schedule: Vec<PathEvent>,
    pub config: ManagerConfig,
    /// How many of the schedule's first entries are those openings.
    pub opened_with_connection: usize,
}

/// The request a download starts with (an HTTP GET of typical size).
pub const DEFAULT_REQUEST_SIZE: u64 = 100;

#[derive(Debug, Clone)]
pub struct Resolved {
    pub name: String,
    pub duration: Option<Dur>,
    pub seed: Option<u64>,
    pub bin: Dur,
    pub links: Vec<LinkDirection>,
    pub splits: Vec<Split>,
    pub flows: Vec<Flow>,
}

impl Resolved {
    /// The network the run's flows cross: every link direction, split and route.
    pub fn network_spec(&self) -> NetworkSpec {
        NetworkSpec {
            links: self.links.iter().map(|l| (l.label(), l.model.clone())).collect(),
            splits: self.splits.clone(),
            flows: self.flows.iter().map(Flow::routes).collect(),
        }
    }
}

pub const DEFAULT_BIN: Dur = Dur::from_millis(100);
pub const DEFAULT_PACKET_SIZE: u32 = 1500;
const MIN_PACKET_SIZE: u64 = 29;
const MAX_PACKET_SIZE: u64 = 65_535;
/// Paths of a multipath flow.
pub const MIN_PATHS: usize = 2;
pub const MAX_PATHS: usize = 8;

/// Reads trace files once each, relative to the scenario's folder.
struct Files<'a> {
    base: &'a Path,
    cache: HashMap<PathBuf, String>,
}

impl Files<'_> {
    fn read(&mut self, file: &str, path: &[&str]) -> Result<(String, String), FieldError> {
        let full = self.base.join(file);
        if let Some(text) = self.cache.get(&full) {
            return Ok((text.clone(), full.display().to_string()));
        }
        let text = std::fs::read_to_string(&full)
            .map_err(|e| err(path, format!("cannot read \"{}\": {e}", full.display())))?;
        self.cache.insert(full.clone(), text.clone());
        Ok((text, full.display().to_string()))
    }
}

pub fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

pub fn resolve(file: &ScenarioFile, default_name: &str, base_dir: &Path) -> Result<Resolved, FieldError> {
    let mut files = Files { base: base_dir, cache: HashMap::new() };
    let bin = file.run.bin.unwrap_or(DEFAULT_BIN);
    if bin == Dur::ZERO {
        return Err(err(&["run", "bin"], "the bin width must be positive"));
    }
    if file.run.duration == Some(Dur::ZERO) {
        return Err(err(&["run", "duration"], "the duration must be positive"));
    }

    let mut links = Vec::new();
    let mut link_index: HashMap<&str, usize> = HashMap::new();
    for (i, l) in file.link.iter().enumerate() {
        if !valid_name(&l.name) {
            return Err(err(&["link", &format!("[{i}]"), "name"], format!("\"{}\" is not a valid name: use letters, digits, '_' and '-'", l.name)));
        }
        if link_index.insert(&l.name, i).is_some() {
            return Err(err(&["link", &l.name, "name"], format!("two links are named \"{}\"", l.name)));
        }
        if l.between[0] == l.between[1] {
            return Err(err(&["link", &l.name, "between"], "a link must join two different nodes"));
        }
        for (direction, over) in [(Direction::Forward, &l.forward), (Direction::Reverse, &l.reverse)] {
            links.push(resolve_direction(l, direction, over.as_ref(), &mut files)?);
        }
    }

    let mut splits = Vec::new();
    let mut split_index: HashMap<&str, usize> = HashMap::new();
    for (i, sp) in file.split.iter().enumerate() {
        if !valid_name(&sp.name) {
            return Err(err(&["split", &format!("[{i}]"), "name"], format!("\"{}\" is not a valid name: use letters, digits, '_' and '-'", sp.name)));
        }
        if link_index.contains_key(sp.name.as_str()) {
            return Err(err(&["split", &sp.name, "name"], format!("a link is also named \"{}\"; routes name links and splits alike, so names must differ", sp.name)));
        }
        if split_index.insert(&sp.name, splits.len()).is_some() {
            return Err(err(&["split", &sp.name, "name"], format!("two splits are named \"{}\"", sp.name)));
        }
        splits.push(resolve_split(sp, &file.link, &link_index)?);
    }

    let mut flows = Vec::new();
    let mut flow_names = HashMap::new();
    for (i, f) in file.flow.iter().enumerate() {
        if !valid_name(&f.name) {
            return Err(err(&["flow", &format!("[{i}]"), "name"], format!("\"{}\" is not a valid name: use letters, digits, '_' and '-'", f.name)));
        }
        if flow_names.insert(f.name.clone(), i).is_some() {
            return Err(err(&["flow", &f.name, "name"], format!("two flows are named \"{}\"", f.name)));
        }
        flows.push(resolve_flow(f, file, &link_index, &split_index, &mut files)?);
    }
    if flows.is_empty() {
        return Err(err(&["flow"], "the scenario has no flow: add at least one [[flow]]"));
    }
    if file.run.duration.is_none() {
        if let Some(f) = flows.iter().find(|f| f.size.is_none() && f.stop.is_none() && f.app != AppKind::Requests) {
            return Err(err(&["run", "duration"], format!("required because flow \"{}\" has neither a size nor a stop time", f.name)));
        }
    }
    Ok(Resolved {
        name: file.name.clone().unwrap_or_else(|| default_name.to_string()),
        duration: file.run.duration,
        seed: file.run.seed,
        bin,
        links,
        splits,
        flows,
    })
}

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

    let rate_path = at("rate", rate_over);
    let rate = match rate {
        None => return Err(err(&rate_path, format!("missing: give the {dir} direction a rate, e.g. rate = \"20 Mbit/s\""))),
        Some(r) => resolve_rate(r, &rate_path, files)?,
    };
    let queue_path = at("queue", queue_over);
    let queue = *queue.ok_or_else(|| err(&queue_path, "missing: give the link a queue limit, e.g. queue = \"100 packets\" or \"150 kB\""))?;
    let delay_path = at("delay", delay_over);
    let (delay, reorder) = match delay {
        None => (DelayModel::Constant(Dur::ZERO), false),
        Some(d) => resolve_delay(d, &delay_path, files)?,
    };
    let loss_path = at("loss", loss_over);
    let loss = loss.map(|l| resolve_loss(l, &loss_path, files)).transpose()?;
    let down_path = at("down", down_over);
    let windows: Vec<(Time, Time)> = down.map(|d| d.iter().map(|[a, b]| (Time(a.0), Time(b.0))).collect()).unwrap_or_default();
    let down = Schedule::new(windows).map_err(|m| err(&down_path, m))?;

    let (from, to) = match direction {
        Direction::Forward => (l.between[0].clone(), l.between[1].clone()),
        Direction::Reverse => (l.between[1].clone(), l.between[0].clone()),
    };
    Ok(LinkDirection { name: l.name.clone(), direction, from, to, model: LinkConfig { rate, delay, reorder, queue, loss, down } })
}

/// The per-direction value when there is one (and `true`), else the link-wide one.
fn pick<'a, T>(base: &'a Option<T>, over: Option<&'a Option<T>>) -> (bool, Option<&'a T>) {
    match over {
        Some(Some(v)) => (true, Some(v)),
        _ => (false, base.as_ref()),
    }
}

fn resolve_rate(spec: &RateSpec, path: &[&str], files: &mut Files) -> Result<RateModel, FieldError> {
    let with_file = |p: &[&str]| -> Vec<String> { p.iter().map(|s| s.to_string()).chain(["file".to_string()]).collect() };
    let trace_err = |e: multiconn_link::TraceError| FieldError { path: with_file(path), message: e.to_string() };
    let model = match spec {
        RateSpec::Fixed(r) => {
            if r.bps() == 0 {
                return Err(err(path, "a rate must be positive"));
            }
            RateModel::Fixed(*r)
        }
        RateSpec::Trace(RateTrace::Mahimahi { file }) => {
            let (text, origin) = files.read(file, &[path, &["file"]].concat())?;
            RateModel::Opportunities(parse_mahimahi(&text, &origin).map_err(trace_err)?)
        }
        RateSpec::Trace(RateTrace::Ucc { file, column }) => {
            let (text, origin) = files.read(file, &[path, &["file"]].concat())?;
            RateModel::Steps(parse_bitrate_csv(&text, &origin, &BitrateCsvFormat::ucc(column)).map_err(trace_err)?)
        }
        RateSpec::Trace(RateTrace::Csv { file, column, unit, time_column, time_format }) => {
            let time = match (time_format.unwrap_or(TimeFormat::Seconds), time_column) {
                (TimeFormat::Row, _) => TimeColumn::RowIndex,
                (TimeFormat::Seconds, c) => TimeColumn::Seconds(c.clone().unwrap_or_else(|| "time".into())),
                (TimeFormat::Gnettrack, c) => TimeColumn::GNetTrack(c.clone().unwrap_or_else(|| "Timestamp".into())),
            };
            if unit.bps() == 0 {
                return Err(err(&[path, &["unit"]].concat(), "the unit of the rate column must be positive, e.g. \"1 kbit/s\""));
            }
            let format = BitrateCsvFormat { time, rate_column: column.clone(), bps_per_unit: unit.bps() as f64 };
            let (text, origin) = files.read(file, &[path, &["file"]].concat())?;
            RateModel::Steps(parse_bitrate_csv(&text, &origin, &format).map_err(trace_err)?)
        }
    };
    Ok(model)
}

fn resolve_delay(spec: &DelaySpec, path: &[&str], files: &mut Files) -> Result<(DelayModel, bool), FieldError> {
    let trace_err = |e: multiconn_link::TraceError| FieldError {
        path: path.iter().map(|s| s.to_string()).chain(["file".to_string()]).collect(),
        message: e.to_string(),
    };
    Ok(match spec {
        DelaySpec::Constant(d) | DelaySpec::Model(DelayTable::Constant { value: d }) => (DelayModel::Constant(*d), false),
        DelaySpec::Model(DelayTable::Normal { mean, cv, reorder }) => {
            if !(cv.is_finite() && *cv >= 0.0) {
                return Err(err(&[path, &["cv"]].concat(), format!("the coefficient of variation must be a finite number ≥ 0, got {cv}")));
            }
            (DelayModel::Normal { mean: *mean, cv: *cv }, *reorder)
        }
        DelaySpec::Model(DelayTable::Empirical { file, reorder }) => {
            let (text, origin) = files.read(file, &[path, &["file"]].concat())?;
            (DelayModel::Empirical(parse_histogram(&text, &origin).map_err(trace_err)?), *reorder)
        }
        DelaySpec::Model(DelayTable::Series { file }) => {
            let (text, origin) = files.read(file, &[path, &["file"]].concat())?;
            (DelayModel::Series(parse_delay_series(&text, &origin).map_err(trace_err)?), false)
        }
    })
}

fn resolve_loss(spec: &LossSpec, path: &[&str], files: &mut Files) -> Result<LossModel, FieldError> {
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
        LossSpec::Model(LossTable::Trace { file }) => {
            let (text, origin) = files.read(file, &[path, &["file"]].concat())?;
            LossModel::Trace(parse_loss_trace(&text, &origin).map_err(|e| FieldError {
                path: path.iter().map(|s| s.to_string()).chain(["file".to_string()]).collect(),
                message: e.to_string(),
            })?)
        }
    })
}

fn resolve_flow(
    f: &FlowSection,
    file: &ScenarioFile,
    link_index: &HashMap<&str, usize>,
    split_index: &HashMap<&str, usize>,
    files: &mut Files,
) -> Result<Flow, FieldError> {
    let name = f.name.as_str();
    let path = |field: &'static str| vec!["flow", name, field];
    let packet_size = f.packet_size.unwrap_or(Bytes(DEFAULT_PACKET_SIZE as u64)).0;
    if !(MIN_PACKET_SIZE..=MAX_PACKET_SIZE).contains(&packet_size) {
        return Err(err(&path("packet_size"), format!("must lie between {MIN_PACKET_SIZE} B and {MAX_PACKET_SIZE} B (headers included), got {packet_size} B")));
    }
    match (f.app, f.rate) {
        (AppKind::Cbr, _) if f.transport != Transport::Udp => {
            return Err(err(&path("app"), format!("app \"cbr\" runs over udp only; a {} flow takes app = \"bulk\" or \"requests\"", f.transport.name())))
        }
        (AppKind::Requests, _) if f.transport == Transport::Udp => {
            return Err(err(&path("app"), "app \"requests\" needs a transport with streams: transport = \"tcp\" or \"quic\""))
        }
        (AppKind::Messages, _) if f.transport != Transport::Quic => {
            return Err(err(&path("app"), format!("app \"messages\" writes each source on its own stream, which needs transport = \"quic\"; this flow is {}", f.transport.name())))
        }
        (AppKind::Requests | AppKind::Messages, Some(_)) => {
            return Err(err(&path("rate"), "only a cbr flow has a rate (a message source takes its own, in [[flow.messages]])"))
        }
        (AppKind::Cbr, None) => return Err(err(&path("rate"), "a cbr flow needs a rate, e.g. rate = \"10 Mbit/s\"")),
        (AppKind::Cbr, Some(r)) if r.bps() == 0 => return Err(err(&path("rate"), "a cbr rate must be positive")),
        (AppKind::Bulk, Some(_)) => return Err(err(&path("rate"), "only a cbr flow has a rate; a bulk flow sends as fast as the network accepts")),
        _ => {}
    }
    if f.size == Some(Bytes(0)) {
        return Err(err(&path("size"), "the size must be positive (leave it out for an unlimited flow)"));
    }
    let start = Time(f.start.unwrap_or(Dur::ZERO).0);
    let stop = f.stop.map(|d| Time(d.0));
    if let Some(stop) = stop {
        if stop <= start {
            return Err(err(&path("stop"), "stop must come after start"));
        }
    }
    if f.from == f.to {
        return Err(err(&path("to"), "a flow must go to another node"));
    }
    let links = &file.link;
    if let Some(paths) = &f.paths {
        if f.route.is_some() {
            return Err(err(&path("paths"), "give either route (one path) or paths (several), not both"));
        }
        match f.transport {
            Transport::Udp => return Err(err(&path("paths"), "only tcp (MPTCP) and quic (Multipath QUIC) flows take several paths; a udp flow has one route")),
            Transport::Tcp | Transport::Quic => {}
        }
        if !(MIN_PATHS..=MAX_PATHS).contains(&paths.len()) {
            return Err(err(&path("paths"), format!("a multipath flow needs {MIN_PATHS} to {MAX_PATHS} paths, got {}", paths.len())));
        }
    } else if f.multipath.is_some() {
        return Err(err(&path("multipath"), "the multipath table needs paths = [[...], [...]]: 2 to 8 routes from `from` to `to`, instead of route"));
    }
    let route_names: Vec<String> = match (&f.route, &f.paths) {
        (Some(r), _) if r.is_empty() => return Err(err(&path("route"), "a route needs at least one link")),
        (Some(r), _) => r.clone(),
        (None, Some(paths)) => paths[0].clone(),
        (None, None) => {
            let direct: Vec<&LinkSection> = links
                .iter()
                .filter(|l| (l.between[0] == f.from && l.between[1] == f.to) || (l.between[1] == f.from && l.between[0] == f.to))
                .collect();
            match direct.as_slice() {
                [one] => vec![one.name.clone()],
                [] => return Err(err(&path("route"), format!("no link joins \"{}\" and \"{}\" directly; give the route as a list of link names", f.from, f.to))),
                _ => return Err(err(&path("route"), format!("several links join \"{}\" and \"{}\"; say which with route = [...]", f.from, f.to))),
            }
        }
    };
    let routes = Routes { flow: f, file, link_index, split_index };
    let (route, reverse_route, extra_paths) = match &f.paths {
        None => {
            let (route, reverse_route) = routes.resolve(&route_names, None)?;
            (route, reverse_route, Vec::new())
        }
        Some(paths) => {
            for (i, p) in paths.iter().enumerate() {
                if p.is_empty() {
                    return Err(err(&path("paths"), format!("paths[{i}] is empty: each path needs at least one link")));
                }
                if let Some(j) = paths[..i].iter().position(|q| q == p) {
                    return Err(err(&path("paths"), format!("paths[{j}] and paths[{i}] are the same route; give each path its own")));
                }
            }
            let (route, reverse_route) = routes.resolve(&route_names, Some(0))?;
            let mut extra = Vec::new();
            for (i, p) in paths.iter().enumerate().skip(1) {
                let (route, reverse_route) = routes.resolve(p, Some(i))?;
                extra.push(PathRoutes { route, reverse_route });
            }
            (route, reverse_route, extra)
        }
    };
    if f.transport == Transport::Udp && f.app == AppKind::Bulk && matches!(route[0], Hop::Split { .. }) {
        return Err(err(&path("route"), "a bulk udp flow is paced by its first link's queue, and a split has two: start the route with a link, or use app = \"cbr\""));
    }
    let connection = resolve_connection(f, 1 + extra_paths.len(), files)?;
    let messages = resolve_messages(f, file.run.duration)?;
    let flow = Flow {
        name: f.name.clone(),
        transport: f.transport,
        app: f.app,
        cbr_rate: f.rate,
        packet_size: packet_size as u32,
        size: f.size.map(|b| b.0),
        start,
        stop,
        route,
        reverse_route,
        extra_paths,
        connection,
        messages,
    };
    // The transport's own rules (a controller its profile offers, MPTCP's scheduler and ACK
    // path...), asked of the model itself and mapped to the field they concern.
    if let (Some(params), Some(factory)) = (flow.connection_params(FlowId(0)), flow.transport.factory()) {
        factory.check(&params).map_err(|e| {
            let mut at = vec!["flow", name];
            at.extend_from_slice(e.knob.field());
            err(&at, e.message)
        })?;
    }
    Ok(flow)
}

/// The message sources of an app = "messages" flow (empty for other apps).
fn resolve_messages(f: &FlowSection, run_duration: Option<Dur>) -> Result<Vec<MessageSource>, FieldError> {
    let name = f.name.as_str();
    let sections = match (f.app, &f.messages) {
        // An empty list: the application opens its streams and writes itself (Python API).
        (AppKind::Messages, Some(m)) if m.is_empty() && run_duration.is_none() => {
            return Err(err(&["flow", name, "messages"], "a flow whose application writes its own messages (messages = []) needs run.duration: the run cannot tell when it is over"))
        }
        (AppKind::Messages, Some(m)) => m,
        (AppKind::Messages, None) => {
            return Err(err(&["flow", name, "messages"], "app = \"messages\" needs its sources: [[flow.messages]] with kind = \"priority\" or \"background\", or messages = [] when the application writes them itself"))
        }
        (_, Some(_)) => return Err(err(&["flow", name, "messages"], "only app = \"messages\" takes message sources")),
        (_, None) => return Ok(Vec::new()),
    };
    let mut out: Vec<MessageSource> = Vec::new();
    for (i, m) in sections.iter().enumerate() {
        let index = format!("messages[{i}]");
        let path = |field: &'static str| vec!["flow", name, index.as_str(), field];
        let defaults = m.kind.defaults();
        let source_name = m.name.clone().unwrap_or_else(|| m.kind.name().to_string());
        if !valid_name(&source_name) {
            return Err(err(&path("name"), format!("\"{source_name}\" is not a valid name: use letters, digits, '_' and '-'")));
        }
        if out.iter().any(|o| o.name == source_name) {
            return Err(err(&path("name"), format!("two sources are named \"{source_name}\"; give each its own name")));
        }
        let size = m.size.map_or(defaults.size, |b| b.0);
        if size == 0 {
            return Err(err(&path("size"), "a message needs at least 1 B"));
        }
        let interval = match (m.interval, m.rate) {
            (Some(_), Some(_)) => return Err(err(&path("rate"), "give either interval or rate, not both")),
            (Some(i), None) if i == Dur::ZERO => return Err(err(&path("interval"), "the interval must be positive, e.g. \"100 ms\"")),
            (Some(i), None) => i,
            (None, Some(r)) if r.bps() == 0 => return Err(err(&path("rate"), "the rate must be positive, e.g. \"2 Mbit/s\"")),
            (None, Some(r)) => r.tx_time(size),
            (None, None) => match defaults.interval {
                Some(i) => i,
                None => return Err(err(&path("rate"), format!("a {} source needs a rate (e.g. rate = \"2 Mbit/s\") or an interval", m.kind.name()))),
            },
        };
        if m.count == Some(0) {
            return Err(err(&path("count"), "at least one message (leave count out to write until the run ends)"));
        }
        if m.duration == Some(Dur::ZERO) {
            return Err(err(&path("duration"), "the duration must be positive"));
        }
        if m.count.is_none() && m.duration.is_none() && run_duration.is_none() {
            return Err(err(&path("count"), "this source would never stop: give count or duration, or run.duration"));
        }
        if m.deadline == Some(Dur::ZERO) {
            return Err(err(&path("deadline"), "the deadline must be positive, e.g. \"100 ms\""));
        }
        let (options, deadline) = StreamChoices { priority: m.priority, urgent: m.urgent, redundant: m.redundant, deadline: m.deadline }.resolve(m.kind);
        out.push(MessageSource {
            name: source_name,
            kind: m.kind,
            size,
            interval,
            start: m.start.unwrap_or(Dur::ZERO),
            count: m.count,
            duration: m.duration,
            options,
            deadline,
        });
    }
    Ok(out)
}

/// Resolves the routes of one flow: its `route`, or each of its `paths`.
struct Routes<'a> {
    flow: &'a FlowSection,
    file: &'a ScenarioFile,
    link_index: &'a HashMap<&'a str, usize>,
    split_index: &'a HashMap<&'a str, usize>,
}

impl Routes<'_> {
    /// The hops of `names` (links and splits) from the flow's `from` to its `to`, and the
    /// reverse route: the same links in the opposite direction, a split's uplink leg where the
    /// route crosses a split. `path` is the index in `paths` (errors name `paths`), or `None`
    /// for `route`.
    fn resolve(&self, names: &[String], path: Option<usize>) -> Result<(Vec<Hop>, Vec<Hop>), FieldError> {
        let f = self.flow;
        let links = &self.file.link;
        let field: Vec<&str> = vec!["flow", f.name.as_str(), if path.is_some() { "paths" } else { "route" }];
        // "the route" or "paths[1]" in messages.
        let what = path.map_or_else(|| "the route".to_string(), |i| format!("paths[{i}]"));
        let prefix = path.map_or_else(String::new, |i| format!("paths[{i}]: "));
        // The direction index of link `li` leaving node `at`, and the node it reaches.
        let step = |li: usize, at: &str, hop: &str| -> Result<(usize, String), FieldError> {
            let l = &links[li];
            if l.between[0] == at {
                Ok((2 * li, l.between[1].clone()))
            } else if l.between[1] == at {
                Ok((2 * li + 1, l.between[0].clone()))
            } else {
                Err(err(&field, format!("\"{hop}\" joins \"{}\" and \"{}\", but {what} is at \"{at}\" there", l.between[0], l.between[1])))
            }
        };
        let mut at = f.from.clone();
        let mut route = Vec::new();
        let mut reverse_route = Vec::new();
        for hop in names {
            if let Some(&si) = self.split_index.get(hop.as_str()) {
                let sp = &self.file.split[si];
                let [a, b] = [self.link_index[sp.legs[0].as_str()], self.link_index[sp.legs[1].as_str()]];
                let (da, next) = step(a, &at, hop)?;
                let (db, _) = step(b, &at, hop)?;
                let up = sp.uplink.as_deref().map_or(a, |u| self.link_index[u]);
                let (dup, _) = step(up, &at, hop)?;
                route.push(Hop::Split { split: si, legs: [da, db] });
                reverse_route.push(Hop::Link(dup ^ 1));
                at = next;
                continue;
            }
            let &li = self.link_index.get(hop.as_str()).ok_or_else(|| {
                let mut known: Vec<&str> = links.iter().map(|l| l.name.as_str()).collect();
                known.extend(self.file.split.iter().map(|s| s.name.as_str()));
                err(&field, format!("{prefix}there is no link or split named \"{hop}\" (known: {})", known.join(", ")))
            })?;
            let (d, next) = step(li, &at, hop)?;
            route.push(Hop::Link(d));
            reverse_route.push(Hop::Link(d ^ 1));
            at = next;
        }
        if at != f.to {
            let rule = if path.is_some() { ": each path must go from `from` to `to`" } else { "" };
            return Err(err(&field, format!("{what} ends at \"{at}\", not at \"{}\"{rule}", f.to)));
        }
        reverse_route.reverse();
        Ok((route, reverse_route))
    }
}

fn resolve_split(sp: &SplitSection, links: &[LinkSection], link_index: &HashMap<&str, usize>) -> Result<Split, FieldError> {
    let name = sp.name.as_str();
    let path = |field: &'static str| vec!["split", name, field];
    let known = || links.iter().map(|l| l.name.as_str()).collect::<Vec<_>>().join(", ");
    for leg in &sp.legs {
        if !link_index.contains_key(leg.as_str()) {
            return Err(err(&path("legs"), format!("there is no link named \"{leg}\" (links: {})", known())));
        }
    }
    if sp.legs[0] == sp.legs[1] {
        return Err(err(&path("legs"), "the two legs must be different links"));
    }
    let [a, b] = [&links[link_index[sp.legs[0].as_str()]], &links[link_index[sp.legs[1].as_str()]]];
    let mut ends_a = a.between.clone();
    let mut ends_b = b.between.clone();
    ends_a.sort();
    ends_b.sort();
    if ends_a != ends_b {
        return Err(err(&path("legs"), format!(
            "both legs must join the same two nodes: \"{}\" joins {} and {}, \"{}\" joins {} and {}",
            a.name, a.between[0], a.between[1], b.name, b.between[0], b.between[1]
        )));
    }
    if let Some(up) = &sp.uplink {
        if !sp.legs.contains(up) {
            return Err(err(&path("uplink"), format!("must be one of the legs (\"{}\" or \"{}\")", sp.legs[0], sp.legs[1])));
        }
    }
    let rat = sp.rat.unwrap_or(Rat::Nr);
    let bits = sp.sn_length.unwrap_or(18);
    let sn = SnLength::new(bits).filter(|&sn| header_bytes(rat, sn).is_some()).ok_or_else(|| {
        let allowed = if rat == Rat::Nr { "12 or 18 (NR)" } else { "7, 12, 15 or 18 (LTE)" };
        err(&path("sn_length"), format!("{bits} bits is not a PDCP SN length here; allowed: {allowed}"))
    })?;
    let t_reordering = match sp.t_reordering {
        None => Some(DEFAULT_T_REORDERING),
        Some(TReordering::After(d)) => Some(d),
        Some(TReordering::Infinity) => None,
    };
    let ppath = |field: &'static str| vec!["split", name, "policy", field];
    let share = |p: Option<Probability>, field: &'static str| -> Result<f64, FieldError> {
        let v = p.map_or(0.5, |p| p.0);
        if !(0.0..=1.0).contains(&v) {
            return Err(err(&ppath(field), format!("the share of the first leg must lie between 0 and 1 (or 0 % and 100 %), got {v}")));
        }
        Ok(v)
    };
    let mut feedback = None;
    let mut duplication_switches = Vec::new();
    let policy = match sp.policy.clone().unwrap_or(PolicySection::Batch { size: DEFAULT_BATCH_SIZE, share: None }) {
        PolicySection::Batch { size, share: s } => {
            if size == 0 {
                return Err(err(&ppath("size"), "a batch holds at least one packet"));
            }
            SplitPolicy::Batch { size, share: share(s, "share")? }
        }
        PolicySection::Alternate {} => SplitPolicy::Alternate,
        PolicySection::Ratio { share: s } => SplitPolicy::Ratio { share: share(Some(s), "share")? },
        PolicySection::Duplicate { off } => {
            let mut last_until = None;
            for (i, &[from, until]) in off.iter().flatten().enumerate() {
                if from >= until {
                    return Err(err(&ppath("off"), format!("interval {} runs from {from} to {until}: it must end after it starts", i + 1)));
                }
                if last_until.is_some_and(|t| from < t) {
                    return Err(err(&ppath("off"), format!("interval {} starts at {from}, before the previous one ends: give the intervals in order, without overlap", i + 1)));
                }
                last_until = Some(until);
                duplication_switches.push((from, false));
                duplication_switches.push((until, true));
            }
            SplitPolicy::Duplicate
        }
        PolicySection::Adaptive { signal, feedback: period } => {
            let period = period.unwrap_or(DEFAULT_FEEDBACK);
            if period == Dur::ZERO {
                return Err(err(&ppath("feedback"), "the feedback period must be positive, e.g. \"10 ms\""));
            }
            feedback = Some(period);
            SplitPolicy::Adaptive { signal: signal.unwrap_or(AdaptiveSignal::Delay) }
        }
    };
    let retransmit_lost = sp.retransmit_lost.unwrap_or(false);
    if retransmit_lost && policy == SplitPolicy::Duplicate {
        return Err(err(&path("retransmit_lost"), "with duplication every PDU is already on both legs; retransmit_lost needs another policy"));
    }
    match (sp.ddds_period, feedback) {
        (Some(_), _) if !retransmit_lost => {
            return Err(err(&path("ddds_period"), "the report period matters only with retransmit_lost = true (the adaptive policy takes its own `feedback`)"));
        }
        (Some(p), Some(f)) if p != f => {
            return Err(err(&path("ddds_period"), format!("one report period serves both: ddds_period is {p} but policy.feedback is {f}")));
        }
        (Some(p), _) if p == Dur::ZERO => {
            return Err(err(&path("ddds_period"), "the report period must be positive, e.g. \"10 ms\""));
        }
        (period, None) if retransmit_lost => feedback = Some(period.unwrap_or(DEFAULT_FEEDBACK)),
        _ => {}
    }
    Ok(Split {
        name: sp.name.clone(),
        tx: TransmitterConfig { rat, sn, policy },
        rx: ReceiverConfig { sn, t_reordering, reordering: sp.reordering.unwrap_or(true) },
        processing_delay: sp.processing_delay.unwrap_or(Dur::ZERO),
        feedback,
        retransmit_lost,
        duplication_switches,
    })
}

/// Settings that only TCP and QUIC flows take, and the connection they describe.
fn resolve_connection(f: &FlowSection, paths: usize, files: &mut Files) -> Result<Option<ConnectionSpec>, FieldError> {
    let name = f.name.as_str();
    let path = |field: &'static str| vec!["flow", name, field];
    let kind = match f.transport {
        Transport::Udp => {
            let given = [
                ("cc", f.cc.is_some()),
                ("profile", f.profile.is_some()),
                ("resume", f.resume.is_some()),
                ("address_token", f.address_token.is_some()),
                ("qlog", f.qlog.is_some()),
                ("requests", f.requests.is_some()),
                ("parallel", f.parallel.is_some()),
                ("request_size", f.request_size.is_some()),
                ("response_size", f.response_size.is_some()),
                ("receiver", f.receiver.is_some()),
            ];
            if let Some((field, _)) = given.iter().find(|(_, set)| *set) {
                return Err(err(&path(field), "only tcp and quic flows take this setting; this flow is udp"));
            }
            return Ok(None);
        }
        Transport::Tcp => TransportKind::Tcp,
        Transport::Quic => TransportKind::Quic,
    };
    if f.stop.is_some() {
        return Err(err(&path("stop"), format!("a {} flow ends when its transfer is done or the run ends: give a size or run.duration instead of stop", kind.name())));
    }
    let mut profile = match &f.profile {
        None => Profile::default_for(kind),
        Some(p) if p.ends_with(".toml") => {
            let (text, origin) = files.read(p, &path("profile"))?;
            let prof = Profile::from_toml(&text, &origin).map_err(|e| err(&path("profile"), e.to_string()))?;
            if prof.transport != kind {
                return Err(err(&path("profile"), format!("profile \"{}\" is for {}, but this flow is {}", prof.name, prof.transport.name(), kind.name())));
            }
            prof
        }
        Some(p) => Profile::builtin(p, kind).map_err(|e| err(&path("profile"), e.to_string()))?,
    };
    let cc = match &f.cc {
        None => profile.cc.default,
        Some(c) => c.parse::<CcKind>().map_err(|e| err(&path("cc"), e.to_string()))?,
    };
    if kind == TransportKind::Tcp && f.resume == Some(true) {
        return Err(err(&path("resume"), "0-RTT resumption is a quic feature; a tcp flow always does the 3-way handshake and TLS 1.3"));
    }
    if kind == TransportKind::Tcp && f.address_token == Some(true) {
        return Err(err(&path("address_token"), "an address-validation token is a quic feature (RFC 9000 §8.1.3); a tcp server has no amplification limit"));
    }
    if kind == TransportKind::Tcp && f.qlog == Some(true) {
        return Err(err(&path("qlog"), "qlog describes quic connections; a tcp flow has none"));
    }
    let workload = match f.app {
        AppKind::Bulk => {
            for (field, set) in [("requests", f.requests.is_some()), ("parallel", f.parallel.is_some()), ("response_size", f.response_size.is_some())] {
                if set {
                    return Err(err(&path(field), "only app = \"requests\" takes this setting"));
                }
            }
            Workload::Download { size: f.size.map(|b| b.0), request_size: f.request_size.map_or(DEFAULT_REQUEST_SIZE, |b| b.0) }
        }
        AppKind::Requests => {
            if f.size.is_some() {
                return Err(err(&path("size"), "app = \"requests\" takes requests and response_size instead of size"));
            }
            let count = f.requests.ok_or_else(|| err(&path("requests"), "app = \"requests\" needs the number of requests, e.g. requests = 10"))?;
            let response = f.response_size.ok_or_else(|| err(&path("response_size"), "app = \"requests\" needs response_size, e.g. response_size = \"1 MB\""))?;
            let parallel = f.parallel.unwrap_or(1);
            if count == 0 {
                return Err(err(&path("requests"), "at least one request"));
            }
            if parallel == 0 {
                return Err(err(&path("parallel"), "at least one request must be outstanding at a time"));
            }
            if response.0 == 0 {
                return Err(err(&path("response_size"), "responses must be at least 1 B"));
            }
            Workload::Requests { count, parallel, request_size: f.request_size.map_or(DEFAULT_REQUEST_SIZE, |b| b.0), response_size: response.0 }
        }
        AppKind::Messages => {
            for (field, set) in [
                ("size", f.size.is_some()),
                ("requests", f.requests.is_some()),
                ("parallel", f.parallel.is_some()),
                ("request_size", f.request_size.is_some()),
                ("response_size", f.response_size.is_some()),
            ] {
                if set {
                    return Err(err(&path(field), "app = \"messages\" sends what its [[flow.messages]] sources write; this setting belongs to bulk or requests"));
                }
            }
            Workload::Messages
        }
        AppKind::Cbr => unreachable!("cbr over tcp/quic is refused before"),
    };
    if f.request_size == Some(Bytes(0)) {
        return Err(err(&path("request_size"), "requests must be at least 1 B"));
    }
    let recv = f.receiver.clone();
    let rpath = |field: &'static str| vec!["flow", name, "receiver", field];
    let mut udp_socket = None;
    if let Some(r) = &recv {
        let udp_fields = [("udp_rcvbuf", r.udp_rcvbuf.is_some()), ("rmem_default", r.rmem_default.is_some()), ("rmem_max", r.rmem_max.is_some()), ("truesize", r.truesize.is_some()), ("read_rate", r.read_rate.is_some()), ("read_cost", r.read_cost.is_some())];
        if kind == TransportKind::Tcp {
            if let Some((field, _)) = udp_fields.iter().find(|(_, set)| *set) {
                return Err(err(&rpath(field), "a UDP socket setting; this flow is tcp (its receive buffer is receiver.tcp_rmem)"));
            }
        }
        if kind == TransportKind::Quic && r.tcp_rmem.is_some() {
            return Err(err(&rpath("tcp_rmem"), "a TCP setting; this flow is quic (its socket buffer is receiver.udp_rcvbuf)"));
        }
        if let Some(rmem) = r.tcp_rmem {
            if !(rmem[0].0 <= rmem[1].0 && rmem[1].0 <= rmem[2].0) || rmem[0].0 == 0 {
                return Err(err(&rpath("tcp_rmem"), "must be [min, default, max] with 0 < min ≤ default ≤ max"));
            }
            if let Some(tcp) = &mut profile.tcp {
                tcp.rmem = [rmem[0].0, rmem[1].0, rmem[2].0];
            }
        }
        if r.read_rate.is_some_and(|x| x.bps() == 0) {
            return Err(err(&rpath("read_rate"), "must be positive (leave it out for a reader as fast as arrivals)"));
        }
        for (field, v) in [("udp_rcvbuf", r.udp_rcvbuf), ("rmem_default", r.rmem_default), ("rmem_max", r.rmem_max), ("truesize", r.truesize)] {
            if v == Some(Bytes(0)) {
                return Err(err(&rpath(field), "must be at least 1 B"));
            }
        }
    }
    if kind == TransportKind::Quic {
        let defaults = UdpSocketConfig::default();
        let r = recv.unwrap_or(ReceiverSection { udp_rcvbuf: None, rmem_default: None, rmem_max: None, truesize: None, read_rate: None, read_cost: None, tcp_rmem: None });
        udp_socket = Some(UdpSocketConfig {
            requested: r.udp_rcvbuf.map(|b| b.0),
            rmem_default: r.rmem_default.map_or(defaults.rmem_default, |b| b.0),
            rmem_max: r.rmem_max.map_or(defaults.rmem_max, |b| b.0),
            charge_per_datagram: r.truesize.map(|b| b.0),
            read_rate: r.read_rate,
            read_cost: r.read_cost.unwrap_or(Dur::ZERO),
        });
    }
    let (multipath, path_manager) = match f.paths {
        Some(_) => {
            let (m, pm) = resolve_multipath(f, paths)?;
            (Some(m), pm)
        }
        None => (None, None),
    };
    Ok(Some(ConnectionSpec {
        profile,
        cc,
        workload,
        resume: f.resume.unwrap_or(false),
        address_token: f.address_token.unwrap_or(false),
        qlog: f.qlog.unwrap_or(false),
        udp_socket,
        multipath,
        path_manager,
    }))
}

/// The `multipath` table of a flow with `paths` paths (defaults when it is absent), and its
/// path manager if it has a schedule or a link-down reaction.
fn resolve_multipath(f: &FlowSection, paths: usize) -> Result<(MultipathParams, Option<PathManagerSpec>), FieldError> {
    let m = f.multipath.clone().unwrap_or_default();
    let options = m.options.unwrap_or_default();
    options.validate().map_err(|e| {
        // The message starts with the field it is about ("rr_packets_per_turn must ...").
        let fields = ["redundant_min_paths", "rr_packets_per_turn", "blest", "ecf_beta_permille"];
        let mut at = vec!["flow", f.name.as_str(), "multipath", "options"];
        if let Some(field) = fields.iter().find(|k| e.0.starts_with(*k)) {
            at.push(field);
        }
        err(&at, e.0)
    })?;
    let at = |field: &'static str| vec!["flow", f.name.as_str(), "multipath", field];
    match f.transport {
        Transport::Quic => {}
        Transport::Tcp => {
            for (field, set) in [("schedule", m.schedule.is_some()), ("on_link_down", m.on_link_down.is_some()), ("detect_delay", m.detect_delay.is_some())] {
                if set {
                    return Err(err(
                        &at(field),
                        "the path manager (path IDs opened, abandoned, set to backup) is modelled for quic flows; an MPTCP connection keeps one subflow per path, which follows its link's down windows",
                    ));
                }
            }
        }
        Transport::Udp => {}
    }
    // MPTCP follows Linux: subflows go stale after 4 retransmission timeouts.
    let failover_default = if f.transport == Transport::Tcp { FailoverProfile::LinuxMptcp } else { FailoverProfile::MpQuic };
    let path_manager = resolve_path_manager(f, &m, paths)?;
    let opened_later = path_manager
        .as_ref()
        .map(|pm| (0..paths as u8).filter(|&p| !pm.schedule[..pm.opened_with_connection].iter().any(|e| e.path == usize::from(p))).collect())
        .unwrap_or_default();
    let params = MultipathParams {
        paths: u8::try_from(paths).expect("validated: at most 8 paths"),
        scheduler: m.scheduler.unwrap_or(SchedulerKind::MinRtt),
        options,
        ack_path: m.ack_path.unwrap_or(AckPath::Same),
        failover: m.failover.unwrap_or(failover_default),
        coupled: m.coupled,
        opened_later,
    };
    Ok((params, path_manager))
}

/// `schedule`, `on_link_down` and `detect_delay` of `[flow.multipath]`: checked entry by entry
/// (a path exists; "open" only when closed, the rest only when open; path 0, the handshake's,
/// open from the start; some path always open).
fn resolve_path_manager(f: &FlowSection, m: &MultipathSection, paths: usize) -> Result<Option<PathManagerSpec>, FieldError> {
    let schedule = m.schedule.clone().unwrap_or_default();
    let reaction = m.on_link_down.unwrap_or_default();
    let at = |field: String| vec!["flow".to_string(), f.name.clone(), "multipath".to_string(), field];
    let fail = |path: Vec<String>, msg: String| FieldError { path, message: msg };
    if m.detect_delay.is_some() && reaction == LinkReaction::None {
        return Err(fail(at("detect_delay".into()), "applies to a link-down reaction: set on_link_down = \"abandon_reopen\" or \"standby\" too".into()));
    }
    if m.schedule.is_none() && reaction == LinkReaction::None {
        return Ok(None);
    }
    let entry = |i: usize, field: &str| {
        let mut p = at(format!("schedule[{i}]"));
        p.push(field.to_string());
        p
    };
    for (i, e) in schedule.iter().enumerate() {
        if e.path >= paths {
            return Err(fail(entry(i, "path"), format!("{} but the flow has {paths} paths (0 to {})", e.path, paths - 1)));
        }
    }
    // Entries in the order they run: by time, then as written.
    let mut order: Vec<usize> = (0..schedule.len()).collect();
    order.sort_by_key(|&i| (schedule[i].at, i));
    let first_action = |p: usize| order.iter().map(|&i| &schedule[i]).find(|e| e.path == p).map(|e| e.action);
    if first_action(0) == Some(ScheduledAction::Open) {
        let i = order.iter().copied().find(|&i| schedule[i].path == 0).expect("path 0 has an entry");
        return Err(fail(entry(i, "action"), "\"open\" but path 0 carries the handshake and is open from the start".into()));
    }
    let mut open: Vec<bool> = (0..paths).map(|p| first_action(p) != Some(ScheduledAction::Open)).collect();
    let opened_with_connection: Vec<PathEvent> =
        (0..paths).filter(|&p| open[p]).map(|p| PathEvent { at: Dur::ZERO, path: p, action: ScheduledAction::Open }).collect();
    for &i in &order {
        let e = schedule[i];
        let name = |a: ScheduledAction| match a {
            ScheduledAction::Open => "open",
            ScheduledAction::Abandon => "abandon",
            ScheduledAction::Backup => "backup",
            ScheduledAction::Available => "available",
        };
        match (e.action, open[e.path]) {
            (ScheduledAction::Open, true) => {
                return Err(fail(entry(i, "action"), format!("\"open\" at {} s but path {} is already open then", e.at.as_secs_f64(), e.path)));
            }
            (ScheduledAction::Open, false) => open[e.path] = true,
            (a, false) => {
                return Err(fail(entry(i, "action"), format!("\"{}\" at {} s but path {} is not open then", name(a), e.at.as_secs_f64(), e.path)));
            }
            (ScheduledAction::Abandon, true) => {
                open[e.path] = false;
                if !open.contains(&true) {
                    return Err(fail(
                        entry(i, "action"),
                        format!("\"abandon\" at {} s would leave no path open (the connection needs one; open another path first)", e.at.as_secs_f64()),
                    ));
                }
            }
            (_, true) => {}
        }
    }
    let n = opened_with_connection.len();
    let full: Vec<PathEvent> = opened_with_connection.into_iter().chain(schedule).collect();
    let config = ManagerConfig { on_link_down: reaction, detect_delay: m.detect_delay.unwrap_or(Dur::ZERO) };
    // The checks above are the manager's own; it must agree.
    PathManager::new(config, &full).map_err(|e| fail(at("schedule".into()), e.to_string()))?;
    Ok(Some(PathManagerSpec { schedule: full, config, opened_with_connection: n }))
}
