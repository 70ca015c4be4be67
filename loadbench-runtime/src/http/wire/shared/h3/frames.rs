//! The length of every HTTP/3 frame a server sends, checked as its bytes arrive, before h3 sees
//! them.
//!
//! h3 buffers a whole frame before it decodes it (a `HEADERS` frame, a `SETTINGS` frame, a frame
//! of an unknown type it then skips), and checks a header section's size only once it has it
//! all: a server that announces a frame of a gigabyte and sends it would have the client keep a
//! gigabyte. This reader follows the frames of a stream (RFC 9114 § 7.1: a type and a length,
//! both variable-length integers, then the payload) and refuses one whose announced length is
//! past the limit, unless it is `DATA`, whose payload h3 streams to the request as it arrives.

use std::fmt;

/// The type of a `DATA` frame (RFC 9114 § 7.2.1).
const DATA: u64 = 0x00;

/// Where a stream's bytes are, frame by frame.
#[derive(Debug, Clone)]
pub(super) struct FrameLimit {
    limit: u64,
    state: State,
}

#[derive(Debug, Clone)]
enum State {
    /// Reading a frame's type and length: the bytes so far (two integers of at most 8 bytes).
    Head { bytes: [u8; 16], len: usize },
    /// Inside a frame's payload: the bytes of it still to come.
    Payload { left: u64 },
}

/// A frame announced longer than the limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FrameTooLarge {
    pub(crate) frame_type: u64,
    pub(crate) length: u64,
    pub(crate) limit: u64,
}

/// [`FrameTooLarge::frame_type`] of a stream the server opened that is not read as frames: what
/// is too large is all it sent.
pub(super) const UNFRAMED: u64 = u64::MAX;

impl fmt::Display for FrameTooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.frame_type == UNFRAMED {
            let (sent, limit) = (self.length, self.limit);
            return write!(f, "the server sent {sent} bytes on a stream of its own, over the limit of {limit}");
        }
        let name = match self.frame_type {
            0x01 => "a HEADERS frame".to_owned(),
            0x04 => "a SETTINGS frame".to_owned(),
            other => format!("a frame of type {other:#x}"),
        };
        write!(f, "the server announced {name} of {} bytes, over the limit of {}", self.length, self.limit)
    }
}

impl std::error::Error for FrameTooLarge {}

impl FrameLimit {
    /// Frames other than `DATA` of at most `limit` bytes.
    pub(super) fn new(limit: u64) -> FrameLimit {
        FrameLimit { limit, state: State::Head { bytes: [0; 16], len: 0 } }
    }

    /// Follows `bytes`, the next bytes of the stream; fails on the first frame announced past
    /// the limit (its payload never needs to arrive).
    pub(super) fn feed(&mut self, mut bytes: &[u8]) -> Result<(), FrameTooLarge> {
        while !bytes.is_empty() {
            match &mut self.state {
                State::Payload { left } => {
                    let take = usize::try_from(*left).unwrap_or(usize::MAX).min(bytes.len());
                    bytes = &bytes[take..];
                    *left -= take as u64;
                    if *left == 0 {
                        self.state = State::Head { bytes: [0; 16], len: 0 };
                    }
                }
                State::Head { bytes: head, len } => {
                    head[*len] = bytes[0];
                    *len += 1;
                    bytes = &bytes[1..];
                    if let Some((frame_type, length)) = decode_head(&head[..*len]) {
                        if frame_type != DATA && length > self.limit {
                            return Err(FrameTooLarge { frame_type, length, limit: self.limit });
                        }
                        self.state = if length == 0 {
                            State::Head { bytes: [0; 16], len: 0 }
                        } else {
                            State::Payload { left: length }
                        };
                    }
                }
            }
        }
        Ok(())
    }
}

/// The type and the length of a frame whose head is `bytes`, once both integers are whole.
fn decode_head(bytes: &[u8]) -> Option<(u64, u64)> {
    let (frame_type, used) = varint(bytes)?;
    let (length, _) = varint(&bytes[used..])?;
    Some((frame_type, length))
}

/// A variable-length integer (RFC 9000 § 16) at the start of `bytes`, and its size, once it is
/// whole.
pub(super) fn varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let first = *bytes.first()?;
    let size = 1usize << (first >> 6);
    let all = bytes.get(..size)?;
    let value = all[1..].iter().fold(u64::from(first & 0x3f), |value, &b| (value << 8) | u64::from(b));
    Some((value, size))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use proptest::prelude::*;

    use super::*;

    /// `value` as a variable-length integer of the smallest size.
    fn encode(value: u64, out: &mut Vec<u8>) {
        match value {
            0..=0x3f => out.push(value as u8),
            0x40..=0x3fff => out.extend_from_slice(&((value as u16) | 0x4000).to_be_bytes()),
            0x4000..=0x3fff_ffff => out.extend_from_slice(&((value as u32) | 0x8000_0000).to_be_bytes()),
            _ => out.extend_from_slice(&(value | 0xc000_0000_0000_0000).to_be_bytes()),
        }
    }

    fn frame(frame_type: u64, payload: usize, out: &mut Vec<u8>) {
        encode(frame_type, out);
        encode(payload as u64, out);
        out.extend(std::iter::repeat_n(0xab, payload));
    }

    #[test]
    fn a_frame_past_the_limit_is_refused_from_its_head_alone() {
        let mut head = Vec::new();
        encode(0x01, &mut head);
        encode(1 << 30, &mut head);
        let refused = FrameLimit::new(65_536).feed(&head).unwrap_err();
        assert_eq!(refused, FrameTooLarge { frame_type: 1, length: 1 << 30, limit: 65_536 });
        assert_eq!(
            refused.to_string(),
            "the server announced a HEADERS frame of 1073741824 bytes, over the limit of 65536"
        );
    }

    #[test]
    fn data_frames_of_any_length_pass_and_so_do_frames_at_the_limit() {
        let mut stream = Vec::new();
        frame(0x01, 100, &mut stream);
        frame(0x00, 5_000, &mut stream);
        frame(0x21, 100, &mut stream); // a reserved type, skipped by h3: held to the limit too
        frame(0x00, 0, &mut stream);
        assert_eq!(FrameLimit::new(100).feed(&stream), Ok(()));
        let mut over = Vec::new();
        frame(0x21, 101, &mut over);
        assert!(FrameLimit::new(100).feed(&over).is_err());
    }

    #[test]
    fn integers_of_every_size_decode() {
        for value in [0, 0x3f, 0x40, 0x3fff, 0x4000, 0x3fff_ffff, 0x4000_0000, (1 << 62) - 1] {
            let mut bytes = Vec::new();
            encode(value, &mut bytes);
            assert_eq!(varint(&bytes), Some((value, bytes.len())), "{value:#x}");
            assert_eq!(varint(&bytes[..bytes.len() - 1]), None, "{value:#x} cut short");
        }
    }

    proptest! {
        /// However a stream of frames is cut into reads, the same frame is refused, or none.
        #[test]
        fn the_verdict_does_not_depend_on_how_the_bytes_arrive(
            frames in prop::collection::vec((prop_oneof![Just(0u64), Just(1), Just(4), 0x21u64..0x4000], 0usize..300), 0..12),
            cuts in prop::collection::vec(1usize..64, 0..40),
            limit in 0u64..300,
        ) {
            let mut stream = Vec::new();
            for &(t, len) in &frames {
                frame(t, len, &mut stream);
            }
            let whole = FrameLimit::new(limit).feed(&stream);
            let expected = frames.iter().find(|&&(t, len)| t != DATA && len as u64 > limit);
            prop_assert_eq!(whole.as_ref().err().map(|e| (e.frame_type, e.length)), expected.map(|&(t, len)| (t, len as u64)));
            let mut reader = FrameLimit::new(limit);
            let mut rest = &stream[..];
            let mut verdict = Ok(());
            for cut in cuts.iter().copied().chain(std::iter::repeat(7)) {
                if rest.is_empty() || verdict.is_err() {
                    break;
                }
                let take = cut.min(rest.len());
                verdict = reader.feed(&rest[..take]);
                rest = &rest[take..];
            }
            prop_assert_eq!(verdict, whole);
        }

        /// Any bytes at all: the reader never panics, and refuses only what announced too much.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512), limit in 0u64..1_000) {
            if let Err(refused) = FrameLimit::new(limit).feed(&bytes) {
                prop_assert!(refused.length > limit && refused.frame_type != DATA);
            }
        }
    }
}
