//! The invariant checker over whole runs: it passes on sound models, leaves results
//! byte-identical, and names the run, the entity and the instant when an endpoint breaks a
//! rule (here, real endpoints whose reports a wrapper falsifies).

use std::path::PathBuf;

use multiconn_core::{Packet, Time, TransportSample};
use multiconn_scenario::sim::{InvariantViolation, World};
use multiconn_scenario::{load, Origin, Scenario, Simulation};
use multiconn_transport::{AppError, AppEvent, Endpoint, Observation, PathAction, PathStats, StreamOptions, StreamProgress};

use crate::common::{load_with, BULK};

fn example(name: &str, sets: &[(&str, &str)]) -> Scenario {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/scenarios");
    let text = std::fs::read_to_string(dir.join(name)).unwrap();
    let sets: Vec<(String, String)> = sets.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    load(&text, &Origin { name: name.into(), base_dir: dir }, &sets).unwrap_or_else(|e| panic!("{e}"))
}

/// The summary and time series of a run with the checker on or off.
fn outputs(scenario: &Scenario, check: bool) -> (String, String) {
    let mut sim = Simulation::new(scenario, None).unwrap();
    sim.set_check_invariants(check).unwrap();
    sim.run_to_end();
    assert_eq!(sim.checks_invariants(), check);
    sim.check().unwrap_or_else(|e| panic!("{e}"));
    let out = sim.finish();
    (out.summary_json, format!("{:?}", out.columns))
}

#[test]
fn results_are_byte_identical_with_the_checker_on_and_off() {
    let short = [("run.duration", "3 s")];
    for scenario in [
        example("bulk.toml", &short),
        example("tcp_quic_share.toml", &short),
        example("demo.toml", &short),
        example("mpquic_handover.toml", &[("run.duration", "16 s")]),
        example("cbr_lossy.toml", &short),
    ] {
        let (on, off) = (outputs(&scenario, true), outputs(&scenario, false));
        assert!(on == off, "{}: the checker changed the results", scenario.name());
    }
}

#[test]
fn the_checker_is_turned_on_only_before_the_run_starts() {
    let scenario = load_with(BULK, &[]).unwrap();
    let mut sim = Simulation::new(&scenario, None).unwrap();
    sim.set_check_invariants(false).unwrap();
    sim.run_until(Time::from_secs_f64(0.5));
    let err = sim.set_check_invariants(true).unwrap_err();
    assert!(err.to_string().contains("only be turned on before the run starts"), "{err}");
    assert!(!sim.checks_invariants());
}

/// How [`Falsified`] alters what its endpoint reports to the checker.
#[derive(Clone, Copy)]
enum Lie {
    /// The third in-order delivery starts one byte early (a byte handed up twice).
    Overlap,
    /// A path ID above 1 is reported as 1 (a path ID opened again).
    ReusePathId,
    /// The third datagram handed over is reported as the first (a datagram delivered twice).
    DatagramTwice,
}

/// A real endpoint whose observations [`Lie`] falsifies; everything else passes through.
struct Falsified {
    inner: Box<dyn Endpoint>,
    lie: Lie,
    deliveries: u32,
}

impl Endpoint for Falsified {
    fn handle_packet(&mut self, now: Time, pkt: Packet) {
        self.inner.handle_packet(now, pkt)
    }
    fn poll_transmit(&mut self, now: Time, next_id: &mut u64) -> Option<Packet> {
        self.inner.poll_transmit(now, next_id)
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.inner.poll_timeout()
    }
    fn handle_timeout(&mut self, now: Time) {
        self.inner.handle_timeout(now)
    }
    fn poll_event(&mut self) -> Option<AppEvent> {
        self.inner.poll_event()
    }
    fn sample(&self) -> TransportSample {
        self.inner.sample()
    }
    fn cc_state(&self) -> &'static str {
        self.inner.cc_state()
    }
    fn drain_qlog(&mut self, out: &mut Vec<String>) {
        self.inner.drain_qlog(out)
    }
    fn on_path_status(&mut self, now: Time, path: u8, up: bool) {
        self.inner.on_path_status(now, path, up)
    }
    fn on_path_action(&mut self, now: Time, action: PathAction) {
        self.inner.on_path_action(now, action)
    }
    fn path_stats(&self, out: &mut Vec<PathStats>) {
        self.inner.path_stats(out)
    }
    fn path_samples(&self, out: &mut Vec<(u8, TransportSample)>) {
        self.inner.path_samples(out)
    }
    fn open_stream(&mut self, options: StreamOptions) -> Result<u64, AppError> {
        self.inner.open_stream(options)
    }
    fn write(&mut self, stream: u64, bytes: u64) -> Result<(), AppError> {
        self.inner.write(stream, bytes)
    }
    fn finish(&mut self, stream: u64) -> Result<(), AppError> {
        self.inner.finish(stream)
    }
    fn drain_progress(&mut self, out: &mut Vec<StreamProgress>) {
        self.inner.drain_progress(out)
    }
    fn drain_datagram_events(&mut self, out: &mut Vec<multiconn_transport::DatagramEvent>) {
        self.inner.drain_datagram_events(out)
    }
    fn observe(&mut self, on: bool) {
        self.inner.observe(on)
    }
    fn drain_observations(&mut self, out: &mut Vec<Observation>) {
        let start = out.len();
        self.inner.drain_observations(out);
        for o in &mut out[start..] {
            match (self.lie, o) {
                (Lie::Overlap, Observation::Delivered { from, .. }) => {
                    self.deliveries += 1;
                    if self.deliveries == 3 {
                        *from -= 1;
                    }
                }
                (Lie::ReusePathId, Observation::PathIdOpened { path_id, .. }) if *path_id > 1 => *path_id = 1,
                (Lie::DatagramTwice, Observation::DatagramDelivered { tag }) => {
                    self.deliveries += 1;
                    if self.deliveries == 3 {
                        *tag = 0;
                    }
                }
                _ => {}
            }
        }
    }
}

/// Runs `scenario` (seed 1) with its first flow's client lying as `lie`, the checker on; the
/// violation it ended with.
fn lying_client(scenario: &Scenario, lie: Lie) -> InvariantViolation {
    let mut world = World::new(scenario.resolved(), 1).unwrap();
    let conn = world.hosts.flows[0].conn_mut().unwrap();
    let real = std::mem::replace(&mut conn.client, Box::new(Idle));
    conn.client = Box::new(Falsified { inner: real, lie, deliveries: 0 });
    world.check_invariants(true);
    while !world.run_until(Time::MAX) {}
    let violation = world.violation().expect("the checker saw the lie").clone();
    InvariantViolation { scenario: scenario.name().to_string(), seed: 1, violation }
}

/// A placeholder while the real client is moved into its wrapper.
struct Idle;

impl Endpoint for Idle {
    fn handle_packet(&mut self, _: Time, _: Packet) {}
    fn poll_transmit(&mut self, _: Time, _: &mut u64) -> Option<Packet> {
        None
    }
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    fn handle_timeout(&mut self, _: Time) {}
    fn poll_event(&mut self) -> Option<AppEvent> {
        None
    }
    fn sample(&self) -> TransportSample {
        TransportSample::default()
    }
    fn cc_state(&self) -> &'static str {
        ""
    }
}

#[test]
fn a_byte_handed_up_twice_names_the_run_the_stream_and_the_instant() {
    for transport in ["quic", "tcp"] {
        let scenario = load_with(BULK, &[("flow.bulk.transport", transport), ("run.duration", "2 s")]).unwrap();
        let v = lying_client(&scenario, Lie::Overlap);
        assert_eq!(v.violation.entity, "flow bulk, client, stream 0", "{transport}: {v}");
        assert!(v.violation.at > Time::ZERO && v.violation.at < Time::from_secs_f64(1.0), "{transport}: {v}");
        let text = v.to_string();
        let at = format!("{:.9} s", v.violation.at.as_secs_f64());
        assert!(text.starts_with(&format!("invariant violated in scenario \"test\" (seed 1): flow bulk, client, stream 0 at {at}: handed the application bytes [")), "{text}");
        assert!(text.contains("(delivered twice)"), "{text}");
    }
}

#[test]
fn a_datagram_handed_up_twice_is_named_with_its_tag() {
    let scenario = load_with(&BULK.replace("app = \"bulk\"", "app = \"datagrams\"\ndatagrams = { interval = \"10 ms\", count = 20 }"), &[("flow.bulk.transport", "quic"), ("run.duration", "2 s")]).unwrap();
    let v = lying_client(&scenario, Lie::DatagramTwice);
    assert_eq!(v.violation.entity, "flow bulk, client, datagram 0", "{v}");
    assert!(v.to_string().contains("handed the application datagram twice"), "{v}");
}

#[test]
fn a_path_id_opened_again_is_named_with_its_path_and_instant() {
    // Operator B's path is abandoned at 10.2 s and opened again, under a new path ID, at
    // 14.2 s; the lying client reports the old ID.
    let scenario = example("mpquic_handover.toml", &[("run.duration", "16 s")]);
    let v = lying_client(&scenario, Lie::ReusePathId);
    assert_eq!(v.violation.entity, "flow download, client, path 1");
    assert!((v.violation.at.as_secs_f64() - 14.2).abs() < 0.05, "{v}");
    assert!(v.to_string().contains("opened path ID 1, already opened on path 1 at 0.000000000 s"), "{v}");
}
