//! A small document tree between a report and the people who read it.
//!
//! Every human output — the terminal table, the markdown of a pull-request comment, an issue or a
//! job summary — is built once as a list of [`Block`]s (headings, paragraphs, lists, quotes,
//! tables, `Details`, fences, charts) and laid out by one of two writers: [`markdown`] for
//! GitHub-flavoured markdown, the one place that escapes text, and [`terminal`] for aligned plain
//! text. The tree knows nothing of GPUs. Text that came from the cluster or a repository is always
//! a [`Span::Plain`] or [`Span::Code`], so no label, name or error message can open a tag, break a
//! table or mention a team: the writer decides what each character becomes. The markdown writer
//! also lays a document out as [`markdown::Node`]s, so that a long document can be split over
//! several comments at block boundaries ([`crate::github::split`]) without ever reading markdown
//! back.

pub mod markdown;
pub mod terminal;
mod tree;

pub use tree::*;

impl Doc {
    /// The document as GitHub-flavoured markdown.
    pub fn markdown(&self) -> String {
        markdown::write(self)
    }

    /// Plain terminal text: no width limit, no colour, tables cut at their limit.
    pub fn terminal(&self) -> String {
        terminal::write(self, &terminal::Style::default())
    }
}
