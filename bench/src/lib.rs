//! Support for the peer benchmark (`bench/peers.sh`): the server every generator is measured
//! against. See `bench/README.md`.
