//! Connections: the settings only TCP and QUIC flows take — stack profile or a real QUIC
//! library (`stack`), congestion controller, workload (download, requests, messages), 0-RTT and tokens, qlog, the receiving
//! host's buffers — and, for multipath flows, how the connection uses its paths
//! ([`super::paths`]).

use super::errors::{choose, err, FieldError};
use super::files::Files;
use super::paths::{resolve_multipath, PathManagerSpec};
use crate::schema::{AppKind, EcnSetting, EcnWord, FlowDirection, FlowSection, MultipathSection, ReceiverSection, Transport};
use multiconn_cc::CcKind;
use multiconn_realquic::Library;
use multiconn_core::{Bytes, Dur};
use multiconn_transport::profile::TransportKind;
use multiconn_transport::{DatagramParams, MultipathParams, Profile, UdpSocketConfig, Workload};

/// What a TCP or QUIC flow runs.
#[derive(Debug, Clone)]
pub struct ConnectionSpec {
    /// The stack profile (built-in or from a file), with the receiver's overrides.
    pub profile: Profile,
    /// A real QUIC library run instead of the model (`stack`); `None`: the model.
    pub stack: Option<Library>,
    /// The congestion controller.
    pub cc: CcKind,
    /// What the application transfers.
    pub workload: Workload,
    /// QUIC: resume a previous session with 0-RTT.
    pub resume: bool,
    /// QUIC: the client holds an address-validation token.
    pub address_token: bool,
    /// QUIC: write a qlog of the connection.
    pub qlog: bool,
    /// QUIC: the receiving host's UDP socket.
    pub udp_socket: Option<UdpSocketConfig>,
    /// Multipath flows: how the connection uses its paths.
    pub multipath: Option<MultipathParams>,
    /// Multipath QUIC flows with a path schedule or a link-down reaction: the client's path
    /// manager.
    pub path_manager: Option<PathManagerSpec>,
    /// QUIC: DATAGRAM frames (RFC 9221; [`super::datagrams`]); `None`: neither end takes them.
    pub datagrams: Option<DatagramParams>,
}

/// The request a download starts with (an HTTP GET of typical size).
pub const DEFAULT_REQUEST_SIZE: u64 = 100;

/// Settings that only TCP and QUIC flows take, and the connection they describe.
pub(super) fn resolve_connection(f: &FlowSection, paths: usize, files: &mut Files) -> Result<Option<ConnectionSpec>, FieldError> {
    let name = f.name.as_str();
    let path = |field: &'static str| vec!["flow", name, field];
    let kind = match f.transport {
        Transport::Udp => {
            let given = [
                ("cc", f.cc.is_some()),
                ("profile", f.profile.is_some()),
                ("stack", f.stack.is_some()),
                ("resume", f.resume.is_some()),
                ("address_token", f.address_token.is_some()),
                ("qlog", f.qlog.is_some()),
                ("ecn", f.ecn.is_some()),
                ("requests", f.requests.is_some()),
                ("parallel", f.parallel.is_some()),
                ("request_size", f.request_size.is_some()),
                ("response_size", f.response_size.is_some()),
                ("receiver", f.receiver.is_some()),
                ("host", f.host.is_some()),
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
    let stack = resolve_stack(f, kind)?;
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
    match f.ecn {
        Some(EcnSetting::Switch(ecn)) => profile.ecn = ecn,
        Some(EcnSetting::Word(EcnWord::AccEcn)) => {
            if kind != TransportKind::Tcp {
                return Err(err(&path("ecn"), "\"accecn\" is TCP's ECN feedback (RFC 9768); a quic flow reports ECN counts in its ACK frames with ecn = true"));
            }
            if f.paths.is_some() {
                return Err(err(&path("ecn"), "MPTCP's subflows negotiate RFC 3168 ECN only; give ecn = true"));
            }
            profile.ecn = true;
            profile.accecn = true;
        }
        None => {}
    }
    if let Some(library) = stack {
        // The libraries mark their packets ECT(0) and validate ECN themselves (RFC 9000
        // §13.4); no setting turns it off.
        if f.ecn == Some(EcnSetting::Switch(false)) {
            return Err(err(&path("ecn"), format!("stack {} always uses ECN (it marks ECT(0) and validates the path's ECN, RFC 9000 §13.4); leave ecn out", library.name())));
        }
        profile.ecn = true;
    }
    let cc = match &f.cc {
        None => profile.cc.default,
        Some(c) => choose(&path("cc"), "congestion control", c, &CcKind::NAMES)?,
    };
    // Prague needs Accurate ECN (Linux TCP_CONG_NEEDS_ACCECN): a TCP flow running it asks for
    // AccECN at both ends; a receiver that does less is said with receiver.ecn.
    if kind == TransportKind::Tcp && cc == CcKind::Prague {
        if f.ecn == Some(EcnSetting::Switch(false)) {
            return Err(err(&path("ecn"), "cc = \"prague\" asks for Accurate ECN (RFC 9768) itself; leave ecn out, or give receiver.ecn = \"none\" for a receiver without ECN"));
        }
        profile.ecn = true;
        profile.accecn = true;
    }
    if kind == TransportKind::Tcp && f.resume == Some(true) {
        return Err(err(&path("resume"), "0-RTT resumption is a quic feature; a tcp flow always does the 3-way handshake and TLS 1.3"));
    }
    if kind == TransportKind::Tcp && f.address_token == Some(true) {
        return Err(err(&path("address_token"), "an address-validation token is a quic feature (RFC 9000 §8.1.3); a tcp server has no amplification limit"));
    }
    if kind == TransportKind::Tcp && f.qlog == Some(true) {
        return Err(err(&path("qlog"), "qlog describes quic connections; a tcp flow has none"));
    }
    let workload = resolve_workload(f)?;
    if f.request_size == Some(Bytes(0)) {
        return Err(err(&path("request_size"), "requests must be at least 1 B"));
    }
    let udp_socket = resolve_receiver(f, kind, &mut profile)?;
    resolve_host(f, &mut profile)?;
    if let (Some(library), Some(m)) = (stack, &f.multipath) {
        refuse_model_multipath(f, library, m)?;
    }
    let (multipath, path_manager) = match f.paths {
        Some(_) => {
            let (m, pm) = resolve_multipath(f, paths, &profile)?;
            (Some(m), pm)
        }
        None => (None, None),
    };
    Ok(Some(ConnectionSpec {
        profile,
        stack,
        cc,
        workload,
        resume: f.resume.unwrap_or(false),
        address_token: f.address_token.unwrap_or(false),
        qlog: f.qlog.unwrap_or(false),
        udp_socket,
        multipath,
        path_manager,
        datagrams: None,
    }))
}

/// `stack`: the real QUIC library a quic flow runs instead of the model, if any.
fn resolve_stack(f: &FlowSection, kind: TransportKind) -> Result<Option<Library>, FieldError> {
    let path = |field: &'static str| vec!["flow", f.name.as_str(), field];
    let Some(name) = &f.stack else { return Ok(None) };
    if kind != TransportKind::Quic {
        return Err(err(&path("stack"), format!("stack runs a real QUIC library; this flow is {}", kind.name())));
    }
    let names = Library::ALL.map(|l| (l.name(), l));
    let library = choose(&path("stack"), "stack", name, &names)?;
    if f.profile.is_some() {
        return Err(err(&path("profile"), format!("stack {} is its own profile ({}): give stack or profile, not both", library.name(), library.version())));
    }
    if library.factory(0).is_none() {
        return Err(err(&path("stack"), format!("this build of multiconn has no stack {}: build multiconn-realquic with its feature \"{}\"", library.name(), library.feature())));
    }
    Ok(Some(library))
}

/// A real library with paths schedules, acknowledges and detects failed paths itself: the
/// model's multipath settings are refused at their field (the path manager's — `schedule`,
/// `on_link_down`, `detect_delay` — drive the library and stay). A single-path library is
/// refused for `paths` by its factory.
fn refuse_model_multipath(f: &FlowSection, library: Library, m: &MultipathSection) -> Result<(), FieldError> {
    let Some(scheduler) = library.scheduler() else { return Ok(()) };
    let name = library.name();
    let at = |field: &'static str| vec!["flow", f.name.as_str(), "multipath", field];
    if let Some(given) = m.scheduler {
        return Err(err(&at("scheduler"), format!("stack {name} schedules with its own scheduler ({scheduler}), not \"{}\": leave scheduler out", given.name())));
    }
    let refused = [
        ("ack_path", m.ack_path.is_some(), "sends its acknowledgements on the paths it chooses itself"),
        ("failover", m.failover.is_some(), "detects failed paths itself (its loss recovery on each path; on_link_down and schedule drive its paths)"),
        ("coupled", m.coupled.is_some(), "has no coupled congestion control (each path runs the flow's cc)"),
        ("options", m.options.is_some(), "has none of the model schedulers' options"),
    ];
    if let Some((field, _, why)) = refused.iter().find(|(_, set, _)| *set) {
        return Err(err(&at(field), format!("stack {name} {why}: leave {field} out")));
    }
    Ok(())
}

/// What a TCP or QUIC flow's application transfers.
fn resolve_workload(f: &FlowSection) -> Result<Workload, FieldError> {
    let path = |field: &'static str| vec!["flow", f.name.as_str(), field];
    Ok(match f.app {
        AppKind::Bulk => {
            for (field, set) in [("requests", f.requests.is_some()), ("parallel", f.parallel.is_some()), ("response_size", f.response_size.is_some())] {
                if set {
                    return Err(err(&path(field), "only app = \"requests\" takes this setting"));
                }
            }
            if f.direction == Some(FlowDirection::Up) {
                if f.request_size.is_some() {
                    return Err(err(&path("request_size"), "an upload (direction = \"up\") is one request of `size` bytes: leave request_size out"));
                }
                Workload::Upload { size: f.size.map(|b| b.0) }
            } else {
                Workload::Download { size: f.size.map(|b| b.0), request_size: f.request_size.map_or(DEFAULT_REQUEST_SIZE, |b| b.0) }
            }
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
        AppKind::Messages | AppKind::Datagrams | AppKind::Tunnel => {
            let app = f.app.name();
            for (field, set) in [
                ("size", f.size.is_some()),
                ("requests", f.requests.is_some()),
                ("parallel", f.parallel.is_some()),
                ("request_size", f.request_size.is_some()),
                ("response_size", f.response_size.is_some()),
            ] {
                if set {
                    let sources = match f.app {
                        AppKind::Messages => "[[flow.messages]] sources",
                        AppKind::Datagrams => "[flow.datagrams] source",
                        _ => "tunnelled flows",
                    };
                    return Err(err(&path(field), format!("app = \"{app}\" sends what its {sources} write; this setting belongs to bulk or requests")));
                }
            }
            Workload::Messages
        }
        AppKind::Cbr => unreachable!("cbr over tcp/quic is refused before"),
    })
}

/// `[flow.host]`: each field given replaces the profile's `[host]` one.
fn resolve_host(f: &FlowSection, profile: &mut Profile) -> Result<(), FieldError> {
    let Some(h) = &f.host else { return Ok(()) };
    if let Some(x) = h.per_packet {
        profile.host.per_packet = x;
    }
    if let Some(x) = h.per_packet_cv {
        profile.host.per_packet_cv = x;
    }
    if let Some(x) = h.timer_lateness {
        profile.host.timer_lateness = x;
    }
    if let Some((field, allowed)) = profile.host.invalid() {
        return Err(err(&["flow", f.name.as_str(), "host", field], format!("must be {allowed}")));
    }
    Ok(())
}

/// `[flow.receiver]`: a TCP flow's receive buffer (written into `profile`) or a QUIC flow's
/// UDP socket, which it returns.
fn resolve_receiver(f: &FlowSection, kind: TransportKind, profile: &mut Profile) -> Result<Option<UdpSocketConfig>, FieldError> {
    let name = f.name.as_str();
    let recv = f.receiver.clone();
    let rpath = |field: &'static str| vec!["flow", name, "receiver", field];
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
        if kind == TransportKind::Quic && r.ecn.is_some() {
            return Err(err(&rpath("ecn"), "a TCP setting (the receiver's kernel's tcp_ecn); this flow is quic"));
        }
        if kind == TransportKind::Tcp && f.paths.is_some() && r.ecn.is_some() {
            return Err(err(&rpath("ecn"), "MPTCP's subflows negotiate RFC 3168 ECN by the flow's ecn alone; leave receiver.ecn out"));
        }
        profile.receiver_ecn = r.ecn;
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
    if kind != TransportKind::Quic {
        return Ok(None);
    }
    let defaults = UdpSocketConfig::default();
    let r = recv.unwrap_or(ReceiverSection { udp_rcvbuf: None, rmem_default: None, rmem_max: None, truesize: None, read_rate: None, read_cost: None, tcp_rmem: None, ecn: None });
    Ok(Some(UdpSocketConfig {
        requested: r.udp_rcvbuf.map(|b| b.0),
        rmem_default: r.rmem_default.map_or(defaults.rmem_default, |b| b.0),
        rmem_max: r.rmem_max.map_or(defaults.rmem_max, |b| b.0),
        charge_per_datagram: r.truesize.map(|b| b.0),
        read_rate: r.read_rate,
        // The stack's own per-datagram cost unless the flow says otherwise.
        read_cost: r.read_cost.unwrap_or_else(|| profile.quic.as_ref().map_or(Dur::ZERO, |q| q.read_cost)),
    }))
}
