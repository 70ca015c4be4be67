//! Histograms in the results: a latency report made from an HdrHistogram, and the histogram
//! itself in HdrHistogram's standard compressed encoding (the V2 format, deflated, in base64),
//! which other HdrHistogram implementations read and which adds up exactly: the shards of a
//! distributed run merge into the percentiles of all their samples, not an average of averages.
//!
//! ```
//! use loadbench::report::histogram::{decode, encode};
//! let mut h = hdrhistogram::Histogram::<u64>::new(3).unwrap();
//! h.record(1_500).unwrap();
//! let text = encode(&h).unwrap();
//! assert_eq!(decode(&text).unwrap().len(), 1);
//! ```
//!
//! Decoding trusts nothing in the text: a histogram comes from a file anyone may have written.
//! The encoding's header says how many bytes follow and the histogram's range and precision, and
//! hdrhistogram's deserializer allocates what the header says before it reads a byte of it, so a
//! header claiming 4 GiB cost 4 GiB. [`decode`] checks the header first: no claimed length past
//! the bytes present, an inflated encoding no larger than the largest histogram it accepts can
//! take, at most [`MAX_SIGNIFICANT_DIGITS`] digits (which bounds the counts array allocated,
//! whatever the range). Every refusal is a sentence.

use std::borrow::Cow;
use std::io::Read as _;

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{DeserializeError, Deserializer, Serializer as _, V2DeflateSerializer};
use loadbench_grammar::Percentile;

use super::{LatencyReport, SpectrumPoint};

/// What a [`LatencyReport`] holds beside its figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Keep {
    /// Its percentile spectrum ([`LatencyReport::spectrum`]).
    pub spectrum: bool,
    /// The histogram itself ([`LatencyReport::histogram`]).
    pub histogram: bool,
}

/// `h` in HdrHistogram's V2 deflate encoding, in base64 (standard alphabet, padded).
pub fn encode(h: &Histogram<u64>) -> Result<String, String> {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new().serialize(h, &mut bytes).map_err(|e| format!("cannot encode a histogram: {e:?}"))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// The most significant digits a decoded histogram may have. loadbench records latencies at 3
/// and a timeline's seconds at 2; at 3, the counts array of the widest range (1 to `u64::MAX`)
/// has about 56,000 counters (450 KiB), where 5 digits would make it 6.3 million (50 MB) from a
/// header of 40 bytes.
pub const MAX_SIGNIFICANT_DIGITS: u32 = 3;

/// The most bytes a histogram's plain V2 encoding may take once inflated: 9 bytes (the longest
/// varint) for every counter of the largest histogram [`MAX_SIGNIFICANT_DIGITS`] allows, with
/// room to spare. A deflated stream inflates up to about a thousand times its size, so its own
/// length bounds nothing.
pub const MAX_INFLATED_BYTES: usize = 1 << 20;

/// The V2 encoding's cookie (HdrHistogram's `V2EncodingCookieBase | 0x10`).
const V2_COOKIE: u32 = 0x1c84_9303 | 0x10;

/// The V2 deflate encoding's cookie (`V2CompressedEncodingCookieBase | 0x10`).
const V2_DEFLATE_COOKIE: u32 = 0x1c84_9304 | 0x10;

/// The V2 header's length: cookie, payload length, normalizing offset, significant digits (4
/// bytes each), lowest and highest trackable values and the integer-to-double ratio (8 each).
const V2_HEADER: usize = 40;

/// A histogram from [`encode`]'s text (or any HdrHistogram implementation's V2 or V2 deflate
/// encoding, in base64, of at most [`MAX_SIGNIFICANT_DIGITS`] digits). What it allocates is
/// bounded by the text's own length and by [`MAX_INFLATED_BYTES`]; what is wrong with a text
/// that is refused is said in words.
pub fn decode(text: &str) -> Result<Histogram<u64>, String> {
    let bytes =
        base64::engine::general_purpose::STANDARD.decode(text.trim()).map_err(|e| format!("not base64: {e}"))?;
    let plain: Cow<'_, [u8]> = match be_u32(&bytes, 0) {
        Some(V2_COOKIE) => Cow::Borrowed(&bytes),
        Some(V2_DEFLATE_COOKIE) => Cow::Owned(inflate(&bytes)?),
        _ => return Err("not an HdrHistogram: it does not start as a V2 encoding does".to_owned()),
    };
    check_header(&plain)?;
    Deserializer::new().deserialize(&mut &*plain).map_err(|e| in_words(&e))
}

/// The plain V2 encoding inside a V2 deflate one (`bytes`), inflated no further than
/// [`MAX_INFLATED_BYTES`] and read no further than the compressed length its header claims,
/// which must be present.
fn inflate(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let claimed = be_u32(bytes, 4).ok_or("an HdrHistogram cut short inside its header")?;
    let present = bytes.len().saturating_sub(8);
    let compressed = usize::try_from(claimed).ok().and_then(|claimed| bytes.get(8..8 + claimed)).ok_or_else(|| {
        format!("its header claims {claimed} bytes of compressed histogram, but only {present} follow")
    })?;
    let mut plain = Vec::new();
    let limit = u64::try_from(MAX_INFLATED_BYTES + 1).unwrap_or(u64::MAX);
    flate2::read::ZlibDecoder::new(compressed)
        .take(limit)
        .read_to_end(&mut plain)
        .map_err(|e| format!("its compressed histogram does not inflate: {e}"))?;
    if plain.len() > MAX_INFLATED_BYTES {
        return Err(format!(
            "it inflates to more than {MAX_INFLATED_BYTES} bytes, more than any histogram of at most {MAX_SIGNIFICANT_DIGITS} significant digits takes"
        ));
    }
    Ok(plain)
}

/// Refuses a plain V2 encoding whose header claims more bytes of counts than follow it, or more
/// significant digits than [`MAX_SIGNIFICANT_DIGITS`], before anything is allocated for it.
fn check_header(plain: &[u8]) -> Result<(), String> {
    if be_u32(plain, 0) != Some(V2_COOKIE) {
        return Err("its compressed data is not an HdrHistogram V2 encoding".to_owned());
    }
    let (Some(claimed), Some(digits)) = (be_u32(plain, 4), be_u32(plain, 12)) else {
        return Err("an HdrHistogram cut short inside its header".to_owned());
    };
    if plain.len() < V2_HEADER {
        return Err("an HdrHistogram cut short inside its header".to_owned());
    }
    let present = plain.len() - V2_HEADER;
    if usize::try_from(claimed).is_ok_and(|c| c > present) {
        return Err(format!("its header claims {claimed} bytes of counts, but only {present} follow"));
    }
    if digits > MAX_SIGNIFICANT_DIGITS {
        return Err(format!(
            "it has {digits} significant digits; loadbench reads histograms of at most {MAX_SIGNIFICANT_DIGITS}"
        ));
    }
    Ok(())
}

/// The big-endian `u32` at `at` in `bytes`, if the bytes are there.
fn be_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let four: [u8; 4] = bytes.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(u32::from_be_bytes(four))
}

/// hdrhistogram's refusal in a sentence.
fn in_words(err: &DeserializeError) -> String {
    let what = match err {
        DeserializeError::IoError(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            "it ends before its counts do".to_owned()
        }
        DeserializeError::IoError(e) => format!("it cannot be read: {e}"),
        DeserializeError::InvalidCookie => "it does not start as a V2 encoding does".to_owned(),
        DeserializeError::UnsupportedFeature => {
            "it uses what loadbench does not read (a normalizing offset, or counts that are not integers)".to_owned()
        }
        DeserializeError::UnsuitableCounterType => "a count is larger than 64 bits hold".to_owned(),
        DeserializeError::InvalidParameters => {
            "its range is not one (a lowest value of 0, or a highest below twice the lowest)".to_owned()
        }
        DeserializeError::UsizeTypeTooSmall => "it is larger than this machine can address".to_owned(),
        DeserializeError::EncodedArrayTooLong => "it holds more counts than its range has room for".to_owned(),
    };
    format!("not an HdrHistogram: {what}")
}

/// The latency report of a histogram of nanoseconds: its figures in microseconds, the `extra`
/// percentiles asked for beside the fixed ones, and what `keep` asks for; `None` when it is
/// empty. What a bench binary writes, and what `cargo loadbench merge` computes again from the
/// shards' histograms added up.
pub fn latency_report(h: &Histogram<u64>, extra: &[Percentile], keep: Keep) -> Option<LatencyReport> {
    if h.is_empty() {
        return None;
    }
    // Microseconds with nanosecond precision.
    let us = |ns: f64| ns.round() / 1_000.0;
    let at = |q: f64| us(h.value_at_quantile(q) as f64);
    Some(LatencyReport {
        mean: us(h.mean()),
        stdev: us(h.stdev()),
        min: us(h.min() as f64),
        p50: at(0.50),
        p90: at(0.90),
        p95: at(0.95),
        p99: at(0.99),
        p99_9: at(0.999),
        max: us(h.max() as f64),
        percentiles: extra
            .iter()
            .filter(|p| !LatencyReport::FIXED.contains(p))
            .map(|p| (p.name(), at(p.quantile())))
            .collect(),
        spectrum: if keep.spectrum { spectrum_of(h) } else { Vec::new() },
        histogram: if keep.histogram { encode(h).ok() } else { None },
    })
}

/// Ticks per halving of the distance to 100 %, as HdrHistogram's `outputPercentileDistribution`
/// prints by default: about 100 points for a million samples.
const TICKS_PER_HALF_DISTANCE: u32 = 5;

/// The spectrum of `h` in microseconds (see [`LatencyReport::spectrum`]).
fn spectrum_of(h: &Histogram<u64>) -> Vec<SpectrumPoint> {
    let mut points: Vec<SpectrumPoint> = h
        .iter_quantiles(TICKS_PER_HALF_DISTANCE)
        .map(|v| SpectrumPoint {
            percentile: v.quantile_iterated_to() * 100.0,
            value_us: h.highest_equivalent(v.value_iterated_to()) as f64 / 1_000.0,
        })
        .collect();
    // The iterator ends on the last bucket, at a quantile of 1 but not always at the maximum's
    // own bucket value: the plot ends on the maximum.
    points.dedup_by(|b, a| a.percentile == b.percentile);
    points.push(SpectrumPoint { percentile: 100.0, value_us: h.max() as f64 / 1_000.0 });
    points.dedup_by(|b, a| {
        a.percentile == b.percentile && {
            a.value_us = a.value_us.max(b.value_us);
            true
        }
    });
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A histogram of nanoseconds as the engine makes them: 3 significant digits, growing.
    fn nanoseconds() -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, 10_000_000_000, 3).unwrap_or_else(|e| panic!("{e}"));
        h.auto(true);
        h
    }

    #[test]
    fn the_spectrum_climbs_from_the_minimum_to_the_maximum() {
        let mut h = nanoseconds();
        for ns in 1..=10_000u64 {
            h.record(ns * 1_000).unwrap_or_else(|e| panic!("{e}"));
        }
        let Some(latency) = latency_report(&h, &[], Keep { spectrum: true, histogram: false }) else {
            panic!("an empty histogram")
        };
        let spectrum = &latency.spectrum;
        assert!((40..=140).contains(&spectrum.len()), "{} points", spectrum.len());
        assert_eq!(spectrum.first().map(|p| p.percentile), Some(0.0));
        assert_eq!(spectrum.last().map(|p| (p.percentile, p.value_us)), Some((100.0, latency.max)));
        assert!(spectrum.windows(2).all(|w| w[0].percentile < w[1].percentile && w[0].value_us <= w[1].value_us));
        // The median's point reads the median, within the histogram's 0.1 %.
        let median = spectrum.iter().find(|p| p.percentile == 50.0).map_or(0.0, |p| p.value_us);
        assert!((median - 5_000.0).abs() <= 5.0, "median {median}");
        assert!(latency_report(&h, &[], Keep::default()).is_some_and(|l| l.spectrum.is_empty()), "only when asked");
    }

    #[test]
    fn a_histogram_survives_its_encoding_and_merges_exactly() {
        let (mut a, mut b, mut all) = (nanoseconds(), nanoseconds(), nanoseconds());
        for ns in (1..=5_000u64).map(|i| i * 7_919 % 1_000_003 + 1) {
            a.record(ns).unwrap_or_else(|e| panic!("{e}"));
            all.record(ns).unwrap_or_else(|e| panic!("{e}"));
        }
        for ns in (1..=3_000u64).map(|i| i * 104_729 % 50_000_017 + 1) {
            b.record(ns).unwrap_or_else(|e| panic!("{e}"));
            all.record(ns).unwrap_or_else(|e| panic!("{e}"));
        }
        let decoded = |h: &Histogram<u64>| decode(&encode(h).unwrap_or_default()).unwrap_or_else(|e| panic!("{e}"));
        let mut merged = decoded(&a);
        merged.add(decoded(&b)).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(merged, all, "value for value");
        let keep = Keep { spectrum: true, histogram: true };
        assert_eq!(latency_report(&merged, &[], keep), latency_report(&all, &[], keep));
        assert!(decode("not base64!").is_err_and(|e| e.starts_with("not base64")));
        assert!(decode("aGVsbG8=").is_err_and(|e| e.starts_with("not an HdrHistogram")));
    }

    /// A plain V2 header: `claimed` bytes of counts, `digits` significant digits, 1 to `high`.
    fn header(claimed: u32, digits: u32, high: u64) -> Vec<u8> {
        let mut bytes = Vec::new();
        bytes.extend(V2_COOKIE.to_be_bytes());
        bytes.extend(claimed.to_be_bytes());
        bytes.extend(0_u32.to_be_bytes());
        bytes.extend(digits.to_be_bytes());
        bytes.extend(1_u64.to_be_bytes());
        bytes.extend(high.to_be_bytes());
        bytes.extend(1.0_f64.to_be_bytes());
        bytes
    }

    fn deflated(plain: &[u8]) -> Vec<u8> {
        use std::io::Write as _;
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(plain).unwrap_or_else(|e| panic!("{e}"));
        let compressed = z.finish().unwrap_or_else(|e| panic!("{e}"));
        let mut bytes = Vec::new();
        bytes.extend(V2_DEFLATE_COOKIE.to_be_bytes());
        bytes.extend(u32::try_from(compressed.len()).unwrap_or(u32::MAX).to_be_bytes());
        bytes.extend(compressed);
        bytes
    }

    fn text(bytes: &[u8]) -> String {
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    #[test]
    fn a_header_claiming_more_than_is_there_is_refused_before_it_is_allocated() {
        let four_gib = header(u32::MAX, 3, 10_000_000_000);
        let started = std::time::Instant::now();
        assert_eq!(
            decode(&text(&four_gib)),
            Err("its header claims 4294967295 bytes of counts, but only 0 follow".to_owned())
        );
        assert_eq!(
            decode(&text(&deflated(&four_gib))),
            Err("its header claims 4294967295 bytes of counts, but only 0 follow".to_owned())
        );
        let mut outer = deflated(&header(0, 3, 10_000_000_000));
        outer[4..8].copy_from_slice(&u32::MAX.to_be_bytes());
        let present = outer.len() - 8;
        assert_eq!(
            decode(&text(&outer)),
            Err(format!("its header claims 4294967295 bytes of compressed histogram, but only {present} follow"))
        );
        // A zip bomb: zeros that inflate past the bound.
        let mut bomb = header(0, 3, 10_000_000_000);
        bomb.resize(MAX_INFLATED_BYTES * 4, 0);
        assert!(decode(&text(&deflated(&bomb))).is_err_and(|e| e.starts_with("it inflates to more than")));
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
    }

    #[test]
    fn precision_is_bounded_and_so_is_the_counts_array() {
        assert_eq!(
            decode(&text(&header(0, 5, u64::MAX))),
            Err("it has 5 significant digits; loadbench reads histograms of at most 3".to_owned())
        );
        let widest = decode(&text(&header(0, MAX_SIGNIFICANT_DIGITS, u64::MAX))).unwrap_or_else(|e| panic!("{e}"));
        // Every counter of the widest histogram accepted, at the longest varint, fits the bound.
        assert!(widest.distinct_values() * 9 + V2_HEADER <= MAX_INFLATED_BYTES, "{}", widest.distinct_values());
        assert!(widest.distinct_values() < 60_000, "{}", widest.distinct_values());
    }

    #[test]
    fn a_corrupt_histogram_is_refused_in_words() {
        let mut h = nanoseconds();
        for ns in 1..=1_000u64 {
            h.record(ns * 997).unwrap_or_else(|e| panic!("{e}"));
        }
        let mut plain = Vec::new();
        hdrhistogram::serialization::V2Serializer::new().serialize(&h, &mut plain).unwrap_or_else(|e| panic!("{e}"));
        // Cut inside the counts, the header's length corrected so that it is not refused for that.
        let cut = &mut plain[..V2_HEADER + 5].to_vec();
        cut[4..8].copy_from_slice(&5_u32.to_be_bytes());
        // A varint that goes on past the end.
        cut[V2_HEADER + 4] |= 0x80;
        for bad in [
            text(cut),
            text(&header(0, 3, 1)),
            text(&[0x1c, 0x84, 0x93]),
            text(&deflated(b"not a histogram at all")),
            text(&{
                // The zlib stream cut short.
                let mut z = deflated(&header(0, 3, 1_000));
                z.truncate(z.len() - 6);
                let claimed = u32::try_from(z.len() - 8).unwrap_or(0);
                z[4..8].copy_from_slice(&claimed.to_be_bytes());
                z
            }),
        ] {
            let err = decode(&bad).map(drop).map_or_else(|e| e, |()| panic!("accepted: {bad}"));
            assert!(!err.contains('{') && !err.contains("Error") && !err.contains('\n'), "{err}");
        }
        assert_eq!(
            decode(&text(&header(0, 3, 1))),
            Err("not an HdrHistogram: its range is not one (a lowest value of 0, or a highest below twice the lowest)"
                .to_owned())
        );
    }
}
