//! HPACK's Huffman code (RFC 7541, Appendix B), decoded four bits at a time.
//!
//! The code's shortest symbol is five bits, so four bits complete at most one symbol: a table of
//! 16 entries per state of the code's tree (256 of them) says, for each nibble, the state it
//! leads to and the symbol it completes, if any. The table is built once from the code itself
//! (`CODES`, the RFC's), the way nghttp2 decodes; a string then costs two lookups a byte.

use std::sync::OnceLock;

/// Each symbol's code: (its length in bits, its bits), for the bytes 0 to 255 and EOS (256).
#[rustfmt::skip]
const CODES: [(u8, u32); 257] = [
    (13, 0x1ff8), (23, 0x7fffd8), (28, 0xfffffe2), (28, 0xfffffe3), (28, 0xfffffe4), (28, 0xfffffe5),
    (28, 0xfffffe6), (28, 0xfffffe7), (28, 0xfffffe8), (24, 0xffffea), (30, 0x3ffffffc), (28, 0xfffffe9),
    (28, 0xfffffea), (30, 0x3ffffffd), (28, 0xfffffeb), (28, 0xfffffec), (28, 0xfffffed), (28, 0xfffffee),
    (28, 0xfffffef), (28, 0xffffff0), (28, 0xffffff1), (28, 0xffffff2), (30, 0x3ffffffe), (28, 0xffffff3),
    (28, 0xffffff4), (28, 0xffffff5), (28, 0xffffff6), (28, 0xffffff7), (28, 0xffffff8), (28, 0xffffff9),
    (28, 0xffffffa), (28, 0xffffffb), (6, 0x14), (10, 0x3f8), (10, 0x3f9), (12, 0xffa),
    (13, 0x1ff9), (6, 0x15), (8, 0xf8), (11, 0x7fa), (10, 0x3fa), (10, 0x3fb),
    (8, 0xf9), (11, 0x7fb), (8, 0xfa), (6, 0x16), (6, 0x17), (6, 0x18),
    (5, 0x0), (5, 0x1), (5, 0x2), (6, 0x19), (6, 0x1a), (6, 0x1b),
    (6, 0x1c), (6, 0x1d), (6, 0x1e), (6, 0x1f), (7, 0x5c), (8, 0xfb),
    (15, 0x7ffc), (6, 0x20), (12, 0xffb), (10, 0x3fc), (13, 0x1ffa), (6, 0x21),
    (7, 0x5d), (7, 0x5e), (7, 0x5f), (7, 0x60), (7, 0x61), (7, 0x62),
    (7, 0x63), (7, 0x64), (7, 0x65), (7, 0x66), (7, 0x67), (7, 0x68),
    (7, 0x69), (7, 0x6a), (7, 0x6b), (7, 0x6c), (7, 0x6d), (7, 0x6e),
    (7, 0x6f), (7, 0x70), (7, 0x71), (7, 0x72), (8, 0xfc), (7, 0x73),
    (8, 0xfd), (13, 0x1ffb), (19, 0x7fff0), (13, 0x1ffc), (14, 0x3ffc), (6, 0x22),
    (15, 0x7ffd), (5, 0x3), (6, 0x23), (5, 0x4), (6, 0x24), (5, 0x5),
    (6, 0x25), (6, 0x26), (6, 0x27), (5, 0x6), (7, 0x74), (7, 0x75),
    (6, 0x28), (6, 0x29), (6, 0x2a), (5, 0x7), (6, 0x2b), (7, 0x76),
    (6, 0x2c), (5, 0x8), (5, 0x9), (6, 0x2d), (7, 0x77), (7, 0x78),
    (7, 0x79), (7, 0x7a), (7, 0x7b), (15, 0x7ffe), (11, 0x7fc), (14, 0x3ffd),
    (13, 0x1ffd), (28, 0xffffffc), (20, 0xfffe6), (22, 0x3fffd2), (20, 0xfffe7), (20, 0xfffe8),
    (22, 0x3fffd3), (22, 0x3fffd4), (22, 0x3fffd5), (23, 0x7fffd9), (22, 0x3fffd6), (23, 0x7fffda),
    (23, 0x7fffdb), (23, 0x7fffdc), (23, 0x7fffdd), (23, 0x7fffde), (24, 0xffffeb), (23, 0x7fffdf),
    (24, 0xffffec), (24, 0xffffed), (22, 0x3fffd7), (23, 0x7fffe0), (24, 0xffffee), (23, 0x7fffe1),
    (23, 0x7fffe2), (23, 0x7fffe3), (23, 0x7fffe4), (21, 0x1fffdc), (22, 0x3fffd8), (23, 0x7fffe5),
    (22, 0x3fffd9), (23, 0x7fffe6), (23, 0x7fffe7), (24, 0xffffef), (22, 0x3fffda), (21, 0x1fffdd),
    (20, 0xfffe9), (22, 0x3fffdb), (22, 0x3fffdc), (23, 0x7fffe8), (23, 0x7fffe9), (21, 0x1fffde),
    (23, 0x7fffea), (22, 0x3fffdd), (22, 0x3fffde), (24, 0xfffff0), (21, 0x1fffdf), (22, 0x3fffdf),
    (23, 0x7fffeb), (23, 0x7fffec), (21, 0x1fffe0), (21, 0x1fffe1), (22, 0x3fffe0), (21, 0x1fffe2),
    (23, 0x7fffed), (22, 0x3fffe1), (23, 0x7fffee), (23, 0x7fffef), (20, 0xfffea), (22, 0x3fffe2),
    (22, 0x3fffe3), (22, 0x3fffe4), (23, 0x7ffff0), (22, 0x3fffe5), (22, 0x3fffe6), (23, 0x7ffff1),
    (26, 0x3ffffe0), (26, 0x3ffffe1), (20, 0xfffeb), (19, 0x7fff1), (22, 0x3fffe7), (23, 0x7ffff2),
    (22, 0x3fffe8), (25, 0x1ffffec), (26, 0x3ffffe2), (26, 0x3ffffe3), (26, 0x3ffffe4), (27, 0x7ffffde),
    (27, 0x7ffffdf), (26, 0x3ffffe5), (24, 0xfffff1), (25, 0x1ffffed), (19, 0x7fff2), (21, 0x1fffe3),
    (26, 0x3ffffe6), (27, 0x7ffffe0), (27, 0x7ffffe1), (26, 0x3ffffe7), (27, 0x7ffffe2), (24, 0xfffff2),
    (21, 0x1fffe4), (21, 0x1fffe5), (26, 0x3ffffe8), (26, 0x3ffffe9), (28, 0xffffffd), (27, 0x7ffffe3),
    (27, 0x7ffffe4), (27, 0x7ffffe5), (20, 0xfffec), (24, 0xfffff3), (20, 0xfffed), (21, 0x1fffe6),
    (22, 0x3fffe9), (21, 0x1fffe7), (21, 0x1fffe8), (23, 0x7ffff3), (22, 0x3fffea), (22, 0x3fffeb),
    (25, 0x1ffffee), (25, 0x1ffffef), (24, 0xfffff4), (24, 0xfffff5), (26, 0x3ffffea), (23, 0x7ffff4),
    (26, 0x3ffffeb), (27, 0x7ffffe6), (26, 0x3ffffec), (26, 0x3ffffed), (27, 0x7ffffe7), (27, 0x7ffffe8),
    (27, 0x7ffffe9), (27, 0x7ffffea), (27, 0x7ffffeb), (28, 0xffffffe), (27, 0x7ffffec), (27, 0x7ffffed),
    (27, 0x7ffffee), (27, 0x7ffffef), (27, 0x7fffff0), (26, 0x3ffffee), (30, 0x3fffffff),
];

const EOS: u16 = 256;

/// A transition: the state reached, and the symbol completed on the way (`NONE` if none).
#[derive(Debug, Clone, Copy)]
struct Step {
    next: u8,
    symbol: u16,
}

const NONE: u16 = u16::MAX;
/// The transition of a nibble that completes EOS, which a string must never hold.
const FAIL: u16 = u16::MAX - 1;

#[derive(Debug)]
struct Table {
    steps: Vec<Step>,
    /// Whether a string may end in this state: within the last byte's padding, which is the
    /// most significant bits of EOS (all ones), shorter than eight bits.
    accepting: Vec<bool>,
}

/// The code's tree: `nodes[i]` are the children of internal node `i` (the root is 0); a child
/// is `Ok(node)` or `Err(symbol)`.
fn tree() -> Vec<[Option<Result<u8, u16>>; 2]> {
    let mut nodes: Vec<[Option<Result<u8, u16>>; 2]> = vec![[None, None]];
    for (symbol, &(len, bits)) in (0u16..).zip(CODES.iter()) {
        let mut node = 0usize;
        for i in (0..len).rev() {
            let bit = usize::from((bits >> i) & 1 == 1);
            if i == 0 {
                nodes[node][bit] = Some(Err(symbol));
            } else {
                node = match nodes[node][bit] {
                    Some(Ok(next)) => usize::from(next),
                    _ => {
                        nodes.push([None, None]);
                        let next = nodes.len() - 1;
                        // 256 internal nodes for 257 leaves: they fit a byte.
                        nodes[node][bit] = Some(Ok(next as u8));
                        next
                    }
                };
            }
        }
    }
    nodes
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let nodes = tree();
        let mut steps = Vec::with_capacity(nodes.len() * 16);
        for state in 0..nodes.len() {
            for nibble in 0..16u8 {
                let (mut node, mut symbol) = (state, NONE);
                for i in (0..4).rev() {
                    let bit = usize::from((nibble >> i) & 1 == 1);
                    match nodes[node][bit] {
                        Some(Ok(next)) => node = usize::from(next),
                        Some(Err(EOS)) | None => {
                            symbol = FAIL;
                            node = 0;
                            break;
                        }
                        Some(Err(sym)) => {
                            symbol = sym;
                            node = 0;
                        }
                    }
                }
                steps.push(Step { next: node as u8, symbol });
            }
        }
        // The states reached from the root by up to seven 1 bits.
        let mut accepting = vec![false; nodes.len()];
        let mut node = 0usize;
        accepting[0] = true;
        for _ in 0..7 {
            match nodes[node][1] {
                Some(Ok(next)) => {
                    node = usize::from(next);
                    accepting[node] = true;
                }
                _ => break,
            }
        }
        Table { steps, accepting }
    })
}

/// Appends the decoding of `bytes` to `out`; `Err` if they are not a valid Huffman string.
pub(super) fn decode(bytes: &[u8], out: &mut Vec<u8>) -> Result<(), ()> {
    let table = table();
    let mut state = 0usize;
    out.reserve(bytes.len() * 8 / 5);
    for &byte in bytes {
        for nibble in [byte >> 4, byte & 0xf] {
            let step = table.steps[state * 16 + usize::from(nibble)];
            match step.symbol {
                NONE => {}
                FAIL => return Err(()),
                // Below 256: a byte.
                symbol => out.push(symbol as u8),
            }
            state = usize::from(step.next);
        }
    }
    if table.accepting[state] { Ok(()) } else { Err(()) }
}

/// Encodes `bytes` (for the tests: this client sends its strings as they are).
#[cfg(test)]
pub(super) fn encode(bytes: &[u8]) -> Vec<u8> {
    let (mut out, mut acc, mut bits) = (Vec::new(), 0u64, 0u32);
    for &b in bytes {
        let (len, code) = CODES[usize::from(b)];
        acc = (acc << len) | u64::from(code);
        bits += u32::from(len);
        while bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    if bits > 0 {
        out.push(((acc << (8 - bits)) | (0xff >> bits)) as u8);
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use proptest::prelude::*;

    use super::*;

    fn decoded(bytes: &[u8]) -> Result<Vec<u8>, ()> {
        let mut out = Vec::new();
        decode(bytes, &mut out).map(|()| out)
    }

    #[test]
    fn the_rfc_s_examples_decode() {
        // RFC 7541, C.4.1 and C.6.1.
        let www = [0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff];
        assert_eq!(decoded(&www).unwrap(), b"www.example.com");
        assert_eq!(decoded(&[0x64, 0x02]).unwrap(), b"302");
        assert_eq!(decoded(&[0xae, 0xc3, 0x77, 0x1a, 0x4b]).unwrap(), b"private");
        assert_eq!(encode(b"www.example.com"), www);
    }

    #[test]
    fn padding_longer_than_seven_bits_or_not_all_ones_is_refused() {
        // "0" is 00000 (5 bits): then three 1 bits of padding, or a whole byte of them.
        assert_eq!(decoded(&[0x07]).unwrap(), b"0");
        assert!(decoded(&[0x07, 0xff]).is_err(), "eight bits of padding");
        assert!(decoded(&[0x06]).is_err(), "padding with a 0 bit");
        assert!(decoded(&[0xff, 0xff, 0xff, 0xff]).is_err(), "EOS in a string");
    }

    proptest! {
        #[test]
        fn any_bytes_round_trip(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            prop_assert_eq!(decoded(&encode(&bytes)).unwrap(), bytes);
        }
    }
}
