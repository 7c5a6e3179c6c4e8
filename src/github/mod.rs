//! Delivering reports to GitHub: the sticky pull-request comment, the drift tracking issue, and the
//! Actions runtime (event payload, step summary, outputs, annotations).
//!
//! Everything that decides *what* to post is pure and tested beside the code: the hidden markers
//! that find our comments and issues ([`marker`]), and the splitter that packs a long report's
//! blocks into parts without breaking fences, tables or `<details>` ([`split`]). The client ([`client`]) only moves bytes,
//! with bounded retries; the command layer (`commands::github`) wires the two.

pub mod actions;
pub mod api;
pub mod client;
pub mod comment;
pub mod event;
pub mod issue;
pub mod marker;
pub mod split;
pub mod sync;
