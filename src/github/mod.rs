//! Delivering reports to GitHub: the sticky pull-request comment, the drift tracking issue, and the
//! Actions runtime (event payload, step summary, outputs, annotations).
//!
//! Everything that decides *what* to post is pure and tested beside the code: the hidden markers
//! that find our comments and issues ([`marker`]), and the splitter that packs a long report's
//! blocks into parts without breaking fences, tables or `<details>` ([`split`]), what a comment or
//! an issue plan does ([`comment`], [`issue`]). [`api`] holds the typed GitHub objects and calls,
//! [`client`] moves the bytes with bounded retries, [`sync`] runs a plan against the API, and
//! [`frame`] is what surrounds a report on GitHub (footer, outputs, annotations). The binary's
//! `commands::github` only wires them.

pub mod actions;
pub mod api;
pub mod client;
pub mod comment;
pub mod event;
pub mod frame;
pub mod issue;
pub mod marker;
pub mod relay;
pub mod split;
pub mod sync;
