//! Handshake timing without cryptography (RFC 9000 §7, RFC 9001 §4): which CRYPTO bytes each
//! side sends in which packet-number space, when keys become available and when the
//! handshake is complete and confirmed.
//!
//! * Client: Initial ClientHello → (server Initial ServerHello: Handshake keys) → (server
//!   Handshake EncryptedExtensions, Certificate, CertificateVerify, Finished: handshake
//!   complete, 1-RTT keys) → Handshake Finished → (HANDSHAKE_DONE: confirmed, §4.1.2).
//! * Server: (client Initial ClientHello) → Initial ServerHello + Handshake flight, 1-RTT send
//!   keys (0.5-RTT data), 0-RTT accepted when resuming → (client Handshake Finished: complete
//!   and confirmed) → HANDSHAKE_DONE.
//! * Resumption (RFC 8446 §2.2): the ClientHello carries a PSK; the server sends neither
//!   Certificate nor CertificateVerify.
//!
//! Message sizes are typical of TLS 1.3 with X25519 and an RSA-2048 certificate chain.

use multiconn_transport::Role;

use crate::packet::Space;
use crate::streams::{RecvBuffer, SendBuffer};

/// Bytes of each TLS handshake message (handshake header included).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HandshakeSizes {
    /// ClientHello with one key share.
    pub client_hello: u64,
    /// Extra ClientHello bytes when resuming (pre_shared_key with ticket and binder,
    /// early_data).
    pub client_hello_psk: u64,
    /// ServerHello.
    pub server_hello: u64,
    /// EncryptedExtensions.
    pub encrypted_extensions: u64,
    /// Certificate with the chain (not sent when resuming).
    pub certificate: u64,
    /// CertificateVerify (not sent when resuming).
    pub certificate_verify: u64,
    /// Finished (either side's).
    pub finished: u64,
}

impl Default for HandshakeSizes {
    fn default() -> HandshakeSizes {
        HandshakeSizes {
            client_hello: 280,
            client_hello_psk: 200,
            server_hello: 90,
            encrypted_extensions: 100,
            certificate: 2500,
            certificate_verify: 264,
            finished: 36,
        }
    }
}

impl HandshakeSizes {
    /// CRYPTO bytes `role` sends in `space`.
    pub fn flight(&self, role: Role, space: Space, resume: bool) -> u64 {
        match (role, space) {
            (Role::Client, Space::Initial) => self.client_hello + if resume { self.client_hello_psk } else { 0 },
            (Role::Client, Space::Handshake) => self.finished,
            (Role::Server, Space::Initial) => self.server_hello,
            (Role::Server, Space::Handshake) => {
                self.encrypted_extensions + if resume { 0 } else { self.certificate + self.certificate_verify } + self.finished
            }
            (_, Space::Data) => 0,
        }
    }
}

/// What a CRYPTO frame's arrival changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandshakeEvent {
    /// Handshake keys installed (client: ServerHello received; server: ClientHello received).
    HandshakeKeys,
    /// 1-RTT keys to send (server after its first flight; client when complete).
    OneRttKeys,
    /// The TLS handshake completed (client: server Finished; server: client Finished).
    Complete,
}

/// One end's handshake progress. The keys and the handshake's state change only as flights
/// arrive ([`Handshake::on_crypto`]) and, at the client, when HANDSHAKE_DONE does
/// ([`Handshake::on_handshake_done`]); the connection reads them.
#[derive(Clone, Debug)]
pub struct Handshake {
    role: Role,
    resume: bool,
    sizes: HandshakeSizes,
    /// CRYPTO send buffers for Initial and Handshake.
    send: [SendBuffer; 2],
    recv: [RecvBuffer; 2],
    has_handshake_keys: bool,
    has_one_rtt_keys: bool,
    /// 0-RTT keys (client: when resuming; server: after a resuming ClientHello).
    has_zero_rtt_keys: bool,
    complete: bool,
    confirmed: bool,
    started: bool,
}

impl Handshake {
    /// The `role` end's handshake, `resume` with a PSK (RFC 8446 §2.2), with TLS messages of
    /// `sizes`; nothing sent yet.
    pub fn new(role: Role, resume: bool, sizes: HandshakeSizes) -> Handshake {
        Handshake {
            role,
            resume,
            sizes,
            send: [SendBuffer::new(Some(0), false), SendBuffer::new(Some(0), false)],
            recv: [RecvBuffer::new(), RecvBuffer::new()],
            has_handshake_keys: false,
            has_one_rtt_keys: false,
            has_zero_rtt_keys: false,
            complete: false,
            confirmed: false,
            started: false,
        }
    }

    /// Handshake keys are installed (client: ServerHello received; server: ClientHello).
    pub fn has_handshake_keys(&self) -> bool {
        self.has_handshake_keys
    }

    /// 1-RTT keys to send with (server: after its first flight; client: once complete).
    pub fn has_one_rtt_keys(&self) -> bool {
        self.has_one_rtt_keys
    }

    /// 0-RTT keys (client: when resuming; server: after a resuming ClientHello).
    pub fn has_zero_rtt_keys(&self) -> bool {
        self.has_zero_rtt_keys
    }

    /// The TLS handshake completed (RFC 9001 §4.1.1).
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// The handshake is confirmed (RFC 9001 §4.1.2): at the server when it completes, at the
    /// client when HANDSHAKE_DONE arrives.
    pub fn is_confirmed(&self) -> bool {
        self.confirmed
    }

    /// A HANDSHAKE_DONE frame arrived. At the client it confirms the handshake (RFC 9001
    /// §4.1.2); true if this confirmed it (a repeated frame, or one at a server, changes nothing).
    pub fn on_handshake_done(&mut self) -> bool {
        if self.role != Role::Client || self.confirmed {
            return false;
        }
        self.confirmed = true;
        true
    }

    /// CRYPTO data of `space` (Initial or Handshake) waits to be sent or sent again.
    pub fn has_crypto_to_send(&self, space: Space) -> bool {
        match space {
            Space::Initial => self.send[0].has_retransmit() || self.send[0].has_new(),
            Space::Handshake => self.send[1].has_retransmit() || self.send[1].has_new(),
            Space::Data => false,
        }
    }

    /// Client: write the ClientHello.
    pub fn start(&mut self) {
        if self.role == Role::Client && !self.started {
            self.started = true;
            self.send[0].write(self.sizes.flight(Role::Client, Space::Initial, self.resume));
            self.has_zero_rtt_keys = self.resume;
        }
    }

    /// The client wrote its ClientHello.
    pub fn started(&self) -> bool {
        self.started
    }

    /// A CRYPTO frame arrived; `out` receives the resulting events in order.
    pub fn on_crypto(&mut self, space: Space, offset: u64, len: u64, out: &mut Vec<HandshakeEvent>) {
        let i = match space {
            Space::Initial => 0,
            Space::Handshake => 1,
            // Post-handshake messages (NewSessionTicket) are not modelled.
            Space::Data => return,
        };
        let peer = self.role.peer();
        let expected = self.sizes.flight(peer, space, self.resume);
        if offset.saturating_add(len) > expected {
            return;
        }
        let was_complete = self.recv[i].delivered() == expected;
        self.recv[i].on_data(offset, len, false);
        if was_complete || self.recv[i].delivered() != expected {
            return;
        }
        match (self.role, space) {
            (Role::Client, Space::Initial) => {
                self.has_handshake_keys = true;
                out.push(HandshakeEvent::HandshakeKeys);
            }
            (Role::Client, Space::Handshake) => {
                if self.has_handshake_keys && !self.complete {
                    self.send[1].write(self.sizes.flight(Role::Client, Space::Handshake, self.resume));
                    self.complete = true;
                    self.has_one_rtt_keys = true;
                    out.push(HandshakeEvent::Complete);
                    out.push(HandshakeEvent::OneRttKeys);
                }
            }
            (Role::Server, Space::Initial) => {
                self.started = true;
                self.send[0].write(self.sizes.flight(Role::Server, Space::Initial, self.resume));
                self.send[1].write(self.sizes.flight(Role::Server, Space::Handshake, self.resume));
                self.has_handshake_keys = true;
                self.has_one_rtt_keys = true;
                self.has_zero_rtt_keys = self.resume;
                out.push(HandshakeEvent::HandshakeKeys);
                out.push(HandshakeEvent::OneRttKeys);
            }
            (Role::Server, Space::Handshake) => {
                if !self.complete {
                    self.complete = true;
                    self.confirmed = true;
                    out.push(HandshakeEvent::Complete);
                }
            }
            (_, Space::Data) => {}
        }
    }

    /// Crypto buffer of a space (Initial or Handshake).
    pub fn send_buffer(&mut self, space: Space) -> Option<&mut SendBuffer> {
        match space {
            Space::Initial => Some(&mut self.send[0]),
            Space::Handshake => Some(&mut self.send[1]),
            Space::Data => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_first_flight_fits_the_amplification_limit() {
        let s = HandshakeSizes::default();
        let server = s.flight(Role::Server, Space::Initial, false) + s.flight(Role::Server, Space::Handshake, false);
        // Three 1200-byte client datagrams' worth minus room for headers of a few packets.
        assert!(server + 300 < 3 * 1200, "{server}");
        assert!(s.flight(Role::Server, Space::Handshake, true) < 300);
    }

    #[test]
    fn keys_appear_as_flights_complete() {
        let mut c = Handshake::new(Role::Client, false, HandshakeSizes::default());
        let mut srv = Handshake::new(Role::Server, false, HandshakeSizes::default());
        let mut ev = Vec::new();
        c.start();
        srv.on_crypto(Space::Initial, 0, 100, &mut ev);
        assert!(ev.is_empty());
        srv.on_crypto(Space::Initial, 100, 180, &mut ev);
        assert_eq!(ev, vec![HandshakeEvent::HandshakeKeys, HandshakeEvent::OneRttKeys]);
        ev.clear();
        c.on_crypto(Space::Initial, 0, 90, &mut ev);
        let hs = HandshakeSizes::default().flight(Role::Server, Space::Handshake, false);
        c.on_crypto(Space::Handshake, 0, hs, &mut ev);
        assert_eq!(ev, vec![HandshakeEvent::HandshakeKeys, HandshakeEvent::Complete, HandshakeEvent::OneRttKeys]);
        assert!(c.is_complete() && !c.is_confirmed());
        assert!(c.on_handshake_done() && c.is_confirmed() && !c.on_handshake_done());
    }
}
