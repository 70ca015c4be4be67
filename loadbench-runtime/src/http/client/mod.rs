//! The author's client: what a scenario calls on its [`Ctx`](ctx::Ctx) (requests through the
//! builder, cookies, redirects, checks, named steps and requests, JSON, its feed) and what a
//! user keeps between requests (its session, its last request). Goes over the wire through
//! `wire`, never the other way.

pub(crate) mod builder;
pub(crate) mod checks;
pub(crate) mod cookies;
pub(crate) mod ctx;
pub(crate) mod feed;
pub(crate) mod json;
pub(crate) mod last_request;
pub(crate) mod measure;
pub(crate) mod names;
pub(crate) mod redirects;
pub(crate) mod session;
pub(crate) mod steps;
