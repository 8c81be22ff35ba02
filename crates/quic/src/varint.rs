//! Variable-length integers of RFC 9000 §16: 1, 2, 4 or 8 bytes, the two high bits of the
//! first byte giving the length, values up to 2^62 − 1.

/// Largest encodable value (2^62 − 1).
pub const MAX: u64 = (1 << 62) - 1;

/// A varint could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VarIntError;

/// Encoded length of `v` in bytes (values above [`MAX`] count as 8, the longest form).
#[inline]
pub fn len(v: u64) -> usize {
    if v < 1 << 6 {
        1
    } else if v < 1 << 14 {
        2
    } else if v < 1 << 30 {
        4
    } else {
        8
    }
}

/// Appends the encoding of `v` (saturated at [`MAX`]) to `buf`.
pub fn encode(v: u64, buf: &mut Vec<u8>) {
    let v = v.min(MAX);
    match len(v) {
        1 => buf.push(v as u8),
        2 => buf.extend_from_slice(&((v as u16) | 0x4000).to_be_bytes()),
        4 => buf.extend_from_slice(&((v as u32) | 0x8000_0000).to_be_bytes()),
        _ => buf.extend_from_slice(&(v | 0xc000_0000_0000_0000).to_be_bytes()),
    }
}

/// Reads one varint at `*pos`, advancing it.
pub fn decode(buf: &[u8], pos: &mut usize) -> Result<u64, VarIntError> {
    let first = *buf.get(*pos).ok_or(VarIntError)?;
    let n = 1usize << (first >> 6);
    let bytes = buf.get(*pos..*pos + n).ok_or(VarIntError)?;
    let mut v = (first & 0x3f) as u64;
    for b in &bytes[1..] {
        v = (v << 8) | *b as u64;
    }
    *pos += n;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc9000_appendix_a1_examples() {
        let cases: [(&[u8], u64); 4] = [
            (&[0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8, 0x8c], 151_288_809_941_952_652),
            (&[0x9d, 0x7f, 0x3e, 0x7d], 494_878_333),
            (&[0x7b, 0xbd], 15_293),
            (&[0x25], 37),
        ];
        for (bytes, value) in cases {
            let mut pos = 0;
            assert_eq!(decode(bytes, &mut pos), Ok(value));
            assert_eq!(pos, bytes.len());
            let mut out = Vec::new();
            encode(value, &mut out);
            assert_eq!(out, bytes);
            assert_eq!(len(value), bytes.len());
        }
        assert_eq!(decode(&[0x40], &mut 0), Err(VarIntError));
    }
}
