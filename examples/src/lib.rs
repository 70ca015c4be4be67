//! The demo server the examples run against.
