//! Keyed refs: `cx_` and 128 bits of HMAC-SHA-256 of the content under the store's secret.
//!
//! The ref is content-addressed within one store (the same original kept twice has one ref, so
//! it is stored once) but reveals nothing across stores: without the secret, a ref cannot be
//! predicted from guessed content, and equal content has different refs in different stores.
//! HMAC rather than a hash of secret and content: a plain SHA-256 prefix-keyed hash would let
//! anyone holding one ref compute the ref of that content with text appended (length extension).

use sha2::{Digest, Sha256};

use super::backend::SECRET_LEN;

/// The prefix of every original's ref.
pub const REF_PREFIX: &str = "cx_";

/// Hex digits after the prefix: 128 bits, so refs neither collide nor can be guessed.
const REF_HEX_DIGITS: usize = 32;

/// The key refs are made with.
#[derive(Clone)]
pub(crate) struct RefKey([u8; SECRET_LEN]);

impl std::fmt::Debug for RefKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RefKey(…)")
    }
}

impl RefKey {
    pub(crate) fn new(secret: [u8; SECRET_LEN]) -> Self {
        RefKey(secret)
    }

    /// A key from the OS's random source, for a store that lives only in this process.
    pub(crate) fn random() -> Self {
        RefKey(random_secret())
    }

    /// The ref of `content`.
    pub(crate) fn reference(&self, content: &[u8]) -> String {
        let mac = hmac_sha256(&self.0, content);
        let mut out = String::with_capacity(REF_PREFIX.len() + REF_HEX_DIGITS);
        out.push_str(REF_PREFIX);
        push_hex(&mut out, &mac[..REF_HEX_DIGITS / 2]);
        out
    }
}

/// Whether `reference` has the shape of a ref this version makes.
pub(crate) fn is_well_formed(reference: &str) -> bool {
    reference.strip_prefix(REF_PREFIX).is_some_and(|hex| {
        hex.len() == REF_HEX_DIGITS && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// 32 bytes from the OS's random source.
///
/// # Panics
///
/// When the OS has no random source, where no secret could be made safely at all.
pub(crate) fn random_secret() -> [u8; SECRET_LEN] {
    let mut secret = [0u8; SECRET_LEN];
    getrandom::fill(&mut secret).expect("the operating system provides random bytes");
    secret
}

fn push_hex(out: &mut String, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 15)] as char);
    }
}

/// HMAC-SHA-256 (RFC 2104) with a key no longer than the block.
fn hmac_sha256(key: &[u8; SECRET_LEN], message: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut inner_pad = [0x36u8; BLOCK];
    let mut outer_pad = [0x5cu8; BLOCK];
    for (i, k) in key.iter().enumerate() {
        inner_pad[i] ^= k;
        outer_pad[i] ^= k;
    }
    let inner = Sha256::new()
        .chain_update(inner_pad)
        .chain_update(message)
        .finalize();
    let outer = Sha256::new()
        .chain_update(outer_pad)
        .chain_update(inner)
        .finalize();
    let mut mac = [0u8; 32];
    mac.copy_from_slice(&outer);
    mac
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        let mut out = String::new();
        push_hex(&mut out, bytes);
        out
    }

    #[test]
    fn hmac_matches_rfc_4231_with_a_32_byte_key() {
        // RFC 4231 test case 2 uses a short key; zero-padding it to 32 bytes does not change
        // HMAC (keys are zero-padded to the block), so the published result must come out.
        let mut key = [0u8; SECRET_LEN];
        key[..4].copy_from_slice(b"Jefe");
        assert_eq!(
            hex(&hmac_sha256(&key, b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn refs_are_keyed_and_content_addressed() {
        let one = RefKey::random();
        let other = RefKey::random();
        assert_eq!(one.reference(b"a"), one.reference(b"a"));
        assert_ne!(one.reference(b"a"), one.reference(b"b"));
        assert_ne!(one.reference(b"a"), other.reference(b"a"));
        assert!(is_well_formed(&one.reference(b"a")));
        assert_eq!(one.reference(b"a").len(), 3 + 32);
        assert!(!is_well_formed("cx_0000"));
        assert!(!is_well_formed("cx_../../../../etc/passwd00000000000"));
    }
}
