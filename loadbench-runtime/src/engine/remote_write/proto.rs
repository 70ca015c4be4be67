//! Prometheus remote-write 1.0's messages (`prometheus.WriteRequest`, from Prometheus'
//! `prompb/remote.proto` and `prompb/types.proto`), as prost derives: the fields loadbench sends,
//! with their numbers and wire types. A `oneof` of one scalar is an `optional` field here, which
//! encodes the same bytes.

/// What one push carries.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct WriteRequest {
    #[prost(message, repeated, tag = "1")]
    pub(crate) timeseries: Vec<TimeSeries>,
}

/// One series: its labels, sorted by name, and its samples (floats or native histograms).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct TimeSeries {
    #[prost(message, repeated, tag = "1")]
    pub(crate) labels: Vec<Label>,
    #[prost(message, repeated, tag = "2")]
    pub(crate) samples: Vec<Sample>,
    #[prost(message, repeated, tag = "4")]
    pub(crate) histograms: Vec<Histogram>,
}

/// A label: `__name__` is the metric's name.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Label {
    #[prost(string, tag = "1")]
    pub(crate) name: String,
    #[prost(string, tag = "2")]
    pub(crate) value: String,
}

/// A float sample at a time in milliseconds since the Unix epoch.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Sample {
    #[prost(double, tag = "1")]
    pub(crate) value: f64,
    #[prost(int64, tag = "2")]
    pub(crate) timestamp: i64,
}

/// A native histogram sample with integer counts: `count`, `sum`, the zero bucket, and the
/// positive buckets as spans and deltas (each bucket's count less the one before it).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Histogram {
    /// `oneof count { uint64 count_int = 1; … }`
    #[prost(uint64, optional, tag = "1")]
    pub(crate) count_int: Option<u64>,
    #[prost(double, tag = "3")]
    pub(crate) sum: f64,
    /// Bucket boundaries are powers of 2^(2^-schema).
    #[prost(sint32, tag = "4")]
    pub(crate) schema: i32,
    #[prost(double, tag = "5")]
    pub(crate) zero_threshold: f64,
    /// `oneof zero_count { uint64 zero_count_int = 6; … }`
    #[prost(uint64, optional, tag = "6")]
    pub(crate) zero_count_int: Option<u64>,
    #[prost(message, repeated, tag = "11")]
    pub(crate) positive_spans: Vec<BucketSpan>,
    #[prost(sint64, repeated, tag = "12")]
    pub(crate) positive_deltas: Vec<i64>,
    #[prost(int64, tag = "15")]
    pub(crate) timestamp: i64,
}

/// A run of consecutive buckets: `offset` from the end of the span before it (from index 0 for
/// the first), `length` buckets.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct BucketSpan {
    #[prost(sint32, tag = "1")]
    pub(crate) offset: i32,
    #[prost(uint32, tag = "2")]
    pub(crate) length: u32,
}
