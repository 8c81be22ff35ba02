//! TLS 1.3 for both ends (rustls with the ring provider): one self-signed Ed25519 certificate
//! for `localhost`, shipped as DER in `fixture/` (made with `openssl req -x509 -newkey
//! ed25519`, valid from 2026-11-29 to 2126: rustls checks it against the machine's clock, so a
//! clock set before that refuses the handshake), which the client trusts as its only root.
//! Ed25519 signatures are always 64 bytes, so the handshake's datagrams have the same sizes in
//! every run (an ECDSA signature's DER length varies by a byte or two from run to run). Each
//! library wraps these in its own QUIC configuration (`QuicServerConfig::try_from`).

use std::sync::Arc;

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::RootCertStore;

const CERT: &[u8] = include_bytes!("fixture/cert.der");
const KEY: &[u8] = include_bytes!("fixture/key.der");
/// The name the client connects to, the certificate's subject alternative name.
pub(crate) const SERVER_NAME: &str = "localhost";
/// The application protocol both ends announce (ALPN).
const ALPN: &[u8] = b"multiconn";

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The server's TLS configuration.
pub(crate) fn server() -> rustls::ServerConfig {
    let mut config = rustls::ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("the ring provider has TLS 1.3")
        .with_no_client_auth()
        .with_single_cert(vec![CertificateDer::from(CERT)], PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(KEY)))
        .expect("the fixture's certificate and key belong together");
    config.alpn_protocols = vec![ALPN.to_vec()];
    config
}

/// The client's TLS configuration: the fixture's certificate is its only root.
pub(crate) fn client() -> rustls::ClientConfig {
    let mut roots = RootCertStore::empty();
    roots.add(CertificateDer::from(CERT)).expect("the fixture's certificate parses");
    let mut config = rustls::ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("the ring provider has TLS 1.3")
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![ALPN.to_vec()];
    config
}
