//! Implementation profiles: named bundles of knobs, as data (`profiles/*.toml`), that make the
//! one TCP model and the one QUIC model behave like a given real stack.
//!
//! Every knob is documented in `docs/profiles.md` with the source it was read from. A profile
//! file must set every field (no silent defaults); unknown fields are refused.

use multiconn_cc::pacer::BurstRule;
use multiconn_cc::{CcConfig, CcKind, RttVarRule};
use multiconn_core::Dur;
use serde::Deserialize;

/// Which transport a profile is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransportKind {
    Quic,
    Tcp,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub name: String,
    pub transport: TransportKind,
    /// One line: what real stack and version this models.
    pub description: String,
    pub cc: CcKnobs,
    pub recovery: RecoveryKnobs,
    pub pacing: PacingKnobs,
    pub ack: AckKnobs,
    pub packet: PacketKnobs,
    /// QUIC only.
    pub quic: Option<QuicKnobs>,
    /// TCP only.
    pub tcp: Option<TcpKnobs>,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CcKnobs {
    /// Algorithms the stack offers; a scenario asking for another is refused.
    pub allowed: Vec<CcKind>,
    pub default: CcKind,
    /// Initial window in datagrams/segments; absent = RFC 9002 min(10·MDS, max(2·MDS, 14720)).
    pub initial_window_packets: Option<u64>,
    pub minimum_window_packets: u64,
    pub reno_beta: f64,
    pub cubic_beta: f64,
    pub cubic_c: f64,
    pub fast_convergence: bool,
    pub hystart: bool,
    pub reduce_from_flight: bool,
    pub app_limited_check: bool,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecoveryKnobs {
    /// kPacketThreshold (QUIC) / DupThresh (TCP).
    pub packet_threshold: u64,
    /// kTimeThreshold as a fraction [num, den] (RFC 9002: [9, 8]).
    pub time_threshold: [u64; 2],
    /// Floor the loss delay at kGranularity.
    pub time_threshold_floor: bool,
    pub granularity: Dur,
    pub initial_rtt: Dur,
    pub rttvar_rule: RttVarRule,
    /// QUIC: declare persistent congestion (RFC 9002 §7.6).
    pub persistent_congestion: bool,
    /// kPersistentCongestionThreshold.
    pub persistent_congestion_threshold: u32,
    /// TCP RTO bounds and initial value (RFC 6298; Linux: 200 ms, 120 s, 1 s).
    pub min_rto: Dur,
    pub max_rto: Dur,
    pub initial_rto: Dur,
    /// How the RTO follows from the RTT estimate.
    pub rto_rule: RtoRule,
}

/// RTO from the RTT estimate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RtoRule {
    /// RFC 6298 §2: `srtt + max(G, 4·rttvar)`, then at least `min_rto`.
    Rfc6298,
    /// Linux (`tcp_set_rto`): the variance term is floored at `min_rto` instead, so the RTO is
    /// `srtt + max(4·rttvar, min_rto)` — always above the smoothed RTT by at least `min_rto`.
    Linux,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacingKnobs {
    pub enabled: bool,
    pub factor: f64,
    pub burst: BurstRule,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AckKnobs {
    /// QUIC max_ack_delay (transport parameter) / TCP delayed-ACK timer.
    pub max_ack_delay: Dur,
    /// ACK after this many ack-eliciting packets (RFC 9000 §13.2.2: 2).
    pub ack_eliciting_threshold: u32,
    /// ACK at once when a packet arrives out of order (RFC 9000 §13.2.1, RFC 5681 §4.2).
    pub immediate_ack_on_reorder: bool,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacketKnobs {
    /// Cap on the UDP payload (QUIC) or MSS (TCP); absent = as large as the path allows.
    pub max_payload: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuicKnobs {
    /// Connection-level and per-stream flow-control windows (initial_max_data,
    /// initial_max_stream_data_*), bytes.
    pub initial_max_data: u64,
    pub initial_max_stream_data: u64,
    /// Send MAX_DATA / MAX_STREAM_DATA when this fraction of the window has been consumed.
    pub flow_control_update_fraction: f64,
    /// Destination connection ID length in short headers, bytes.
    pub dcid_len: u32,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpKnobs {
    /// net.ipv4.tcp_rmem: min, default, max (bytes).
    pub rmem: [u64; 3],
    /// net.ipv4.tcp_wmem: min, default, max (bytes).
    pub wmem: [u64; 3],
    /// tcp_moderate_rcvbuf: receive-buffer autotuning.
    pub autotune: bool,
    /// Fraction of the receive buffer advertised as window (tcp_adv_win_scale = 1: 1/2).
    pub adv_win_fraction: f64,
    pub sack: bool,
    /// RACK-TLP (RFC 8985) loss detection.
    pub rack_tlp: bool,
    /// TCP timestamps option (12 bytes per segment, RFC 7323).
    pub timestamps: bool,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ProfileError {
    #[error("unknown profile \"{name}\"; available for {transport}: {available}")]
    Unknown { name: String, transport: &'static str, available: String },
    #[error("profile \"{profile}\" does not offer congestion control \"{cc}\"; it offers: {offered}")]
    CcNotOffered { profile: String, cc: &'static str, offered: String },
    #[error("profile file {origin}: {message}")]
    Parse { origin: String, message: String },
}

/// The built-in profiles: (name, TOML text).
const BUILTIN: &[(&str, &str)] = &[
    ("rfc9002", include_str!("../profiles/rfc9002.toml")),
    ("linux-tcp", include_str!("../profiles/linux-tcp.toml")),
    ("aioquic", include_str!("../profiles/aioquic.toml")),
    ("ngtcp2", include_str!("../profiles/ngtcp2.toml")),
];

impl TransportKind {
    pub fn name(self) -> &'static str {
        match self {
            TransportKind::Quic => "quic",
            TransportKind::Tcp => "tcp",
        }
    }
}

impl Profile {
    /// Parses a profile from TOML text; `origin` names it in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<Profile, ProfileError> {
        toml::from_str(text).map_err(|e| ProfileError::Parse { origin: origin.to_string(), message: e.to_string() })
    }

    /// Names of the built-in profiles for a transport.
    pub fn builtin_names(transport: TransportKind) -> Vec<&'static str> {
        BUILTIN.iter().filter(|(_, text)| Profile::from_toml(text, "").map(|p| p.transport == transport).unwrap_or(false)).map(|(n, _)| *n).collect()
    }

    /// A built-in profile by name, for the given transport.
    pub fn builtin(name: &str, transport: TransportKind) -> Result<Profile, ProfileError> {
        let found = BUILTIN.iter().find(|(n, _)| *n == name).map(|(n, text)| Profile::from_toml(text, &format!("(built-in {n})")));
        match found {
            Some(Ok(p)) if p.transport == transport => Ok(p),
            Some(Err(e)) => Err(e),
            _ => Err(ProfileError::Unknown { name: name.to_string(), transport: transport.name(), available: Profile::builtin_names(transport).join(", ") }),
        }
    }

    /// The default profile of a transport (`rfc9002` for QUIC, `linux-tcp` for TCP).
    pub fn default_for(transport: TransportKind) -> Profile {
        let name = match transport {
            TransportKind::Quic => "rfc9002",
            TransportKind::Tcp => "linux-tcp",
        };
        Profile::builtin(name, transport).expect("built-in default profiles parse")
    }

    /// The controller configuration for `cc` with datagrams/segments of `mds` bytes, or an
    /// error if this stack does not offer `cc`.
    pub fn cc_config(&self, cc: CcKind, mds: u64) -> Result<CcConfig, ProfileError> {
        if !self.cc.allowed.contains(&cc) {
            return Err(ProfileError::CcNotOffered {
                profile: self.name.clone(),
                cc: cc.name(),
                offered: self.cc.allowed.iter().map(|c| c.name()).collect::<Vec<_>>().join(", "),
            });
        }
        let base = match self.transport {
            TransportKind::Quic => CcConfig::quic_default(cc, mds),
            TransportKind::Tcp => CcConfig::tcp_default(cc, mds),
        };
        let minimum_window = self.cc.minimum_window_packets * mds;
        Ok(CcConfig {
            initial_window: self.cc.initial_window_packets.map_or(base.initial_window, |n| n * mds),
            minimum_window,
            loss_window: match self.transport {
                TransportKind::Quic => minimum_window,
                TransportKind::Tcp => mds,
            },
            reno_beta: self.cc.reno_beta,
            cubic_beta: self.cc.cubic_beta,
            cubic_c: self.cc.cubic_c,
            fast_convergence: self.cc.fast_convergence,
            hystart: self.cc.hystart,
            reduce_from_flight: self.cc.reduce_from_flight,
            app_limited_check: self.cc.app_limited_check,
            ..base
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_profile_parses_and_its_default_cc_is_allowed() {
        for (name, text) in BUILTIN {
            let p = Profile::from_toml(text, name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(&p.name, name);
            assert!(p.cc.allowed.contains(&p.cc.default), "{name}");
            assert_eq!(p.quic.is_some(), p.transport == TransportKind::Quic, "{name}");
            assert_eq!(p.tcp.is_some(), p.transport == TransportKind::Tcp, "{name}");
        }
    }

    #[test]
    fn unknown_profile_lists_the_available_ones() {
        let e = Profile::builtin("quiche", TransportKind::Quic).unwrap_err();
        assert!(e.to_string().contains("rfc9002"), "{e}");
        assert!(e.to_string().contains("aioquic") && e.to_string().contains("ngtcp2"), "{e}");
        assert!(!e.to_string().contains("linux-tcp"), "{e}");
    }

    #[test]
    fn builtin_names_are_split_by_transport() {
        assert_eq!(Profile::builtin_names(TransportKind::Quic), ["rfc9002", "aioquic", "ngtcp2"]);
        assert_eq!(Profile::builtin_names(TransportKind::Tcp), ["linux-tcp"]);
        assert!(Profile::builtin("aioquic", TransportKind::Tcp).is_err());
    }

    #[test]
    fn aioquic_refuses_bbr_and_names_what_it_offers() {
        let p = Profile::builtin("aioquic", TransportKind::Quic).unwrap();
        let e = p.cc_config(CcKind::Bbr, 1200).unwrap_err();
        assert_eq!(e, ProfileError::CcNotOffered { profile: "aioquic".into(), cc: "bbr", offered: "newreno, cubic".into() });
        assert!(e.to_string().contains("offers: newreno, cubic"), "{e}");
        assert!(p.cc_config(CcKind::Cubic, 1200).is_ok());
    }

    #[test]
    fn aioquic_and_ngtcp2_knobs_reach_the_controller() {
        let a = Profile::builtin("aioquic", TransportKind::Quic).unwrap();
        let cfg = a.cc_config(a.cc.default, 1200).unwrap();
        assert_eq!((cfg.kind, cfg.initial_window, cfg.minimum_window), (CcKind::NewReno, 12_000, 2_400));
        assert!(!cfg.app_limited_check && !cfg.hystart);
        assert_eq!((a.pacing.factor, a.pacing.burst), (1.0, BurstRule::Aioquic));
        assert_eq!((a.recovery.rttvar_rule, a.recovery.time_threshold_floor, a.recovery.persistent_congestion), (RttVarRule::Aioquic, false, false));
        assert_eq!(a.packet.max_payload, Some(1200));

        let n = Profile::builtin("ngtcp2", TransportKind::Quic).unwrap();
        let cfg = n.cc_config(n.cc.default, 1444).unwrap();
        // No explicit initial window: RFC 9002 min(10·MDS, max(2·MDS, 14720)).
        assert_eq!((cfg.kind, cfg.initial_window), (CcKind::Cubic, 14_440));
        assert!(cfg.hystart && cfg.app_limited_check && !cfg.reduce_from_flight);
        assert_eq!((n.pacing.factor, n.pacing.burst), (1.25, BurstRule::SendQuantum));
        assert!(n.cc_config(CcKind::Bbr, 1444).is_ok());
    }
}
