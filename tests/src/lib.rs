//! Test support: servers on loopback that count what they see.
