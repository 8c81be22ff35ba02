//! The server's key for its address-validation tokens, from the run's seed: noq-proto 1.4.0
//! keeps its own implementation (`RetryTokenKey`, HKDF-SHA256 then AES-256-GCM) private and
//! draws its master key from the operating system (`ServerConfig::with_crypto`), so this is
//! the same construction over a seeded key (`noq_proto::crypto::HandshakeTokenKey`).

use multiconn_core::RngStream;
use noq_proto::crypto::{CryptoError, HandshakeTokenKey};
use ring::{aead, hkdf};

use crate::common::seeds::bytes;

/// HKDF-SHA256 over a seeded master key; each token's key is expanded from its nonce.
pub(super) struct SeededTokenKey(hkdf::Prk);

impl SeededTokenKey {
    /// The key, from `rng`.
    pub(super) fn new(rng: &mut RngStream) -> SeededTokenKey {
        SeededTokenKey(hkdf::Salt::new(hkdf::HKDF_SHA256, &[]).extract(&bytes::<64>(rng)))
    }

    fn aead(&self, token_nonce: u128) -> aead::LessSafeKey {
        let nonce = token_nonce.to_le_bytes();
        let info = [&nonce[..]];
        let okm = self.0.expand(&info, hkdf::HKDF_SHA256).expect("32 bytes are within HKDF-SHA256's output");
        let mut key = [0u8; 32];
        okm.fill(&mut key).expect("32 bytes are within HKDF-SHA256's output");
        aead::LessSafeKey::new(aead::UnboundKey::new(&aead::AES_256_GCM, &key).expect("a 32-byte AES-256 key"))
    }
}

impl HandshakeTokenKey for SeededTokenKey {
    fn seal(&self, token_nonce: u128, data: &mut Vec<u8>) -> Result<(), CryptoError> {
        // Each token has a key of its own, so one fixed AEAD nonce is safe (as noq's own).
        let nonce = aead::Nonce::assume_unique_for_key([0u8; 12]);
        self.aead(token_nonce).seal_in_place_append_tag(nonce, aead::Aad::empty(), data).map_err(|_| CryptoError)
    }

    fn open<'a>(&self, token_nonce: u128, data: &'a mut [u8]) -> Result<&'a [u8], CryptoError> {
        let nonce = aead::Nonce::assume_unique_for_key([0u8; 12]);
        self.aead(token_nonce).open_in_place(nonce, aead::Aad::empty(), data).map(|d| &*d).map_err(|_| CryptoError)
    }
}
