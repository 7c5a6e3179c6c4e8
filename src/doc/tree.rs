//! The tree itself: spans of text, tables, charts and the blocks a document is a list of, with
//! the builders sections use. How it is laid out is the writers' ([`super::markdown`],
//! [`super::terminal`]).

/// A piece of inline text.
#[derive(Debug, Clone, PartialEq)]
pub enum Span {
    /// Any text, including text from the cluster or the repository: escaped by the writer.
    Plain(String),
    /// Bold.
    Strong(Vec<Span>),
    /// Italic.
    Emph(Vec<Span>),
    /// Inline code (a path, a ref, a field name).
    Code(String),
    /// A link; the URL is ours (a run, a blob), never taken from the repository unchecked.
    Link { text: Vec<Span>, url: String },
}

/// Inline text: a sequence of spans, built with the chaining methods.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Text(pub Vec<Span>);

impl Text {
    pub fn new() -> Text {
        Text(Vec::new())
    }

    pub fn plain(mut self, s: impl Into<String>) -> Text {
        self.0.push(Span::Plain(s.into()));
        self
    }

    pub fn strong(mut self, t: impl Into<Text>) -> Text {
        self.0.push(Span::Strong(t.into().0));
        self
    }

    pub fn emph(mut self, t: impl Into<Text>) -> Text {
        self.0.push(Span::Emph(t.into().0));
        self
    }

    pub fn code(mut self, s: impl Into<String>) -> Text {
        self.0.push(Span::Code(s.into()));
        self
    }

    pub fn link(mut self, t: impl Into<Text>, url: impl Into<String>) -> Text {
        self.0.push(Span::Link {
            text: t.into().0,
            url: url.into(),
        });
        self
    }

    /// Appends every span of `other`.
    pub fn append(mut self, other: Text) -> Text {
        self.0.extend(other.0);
        self
    }

    /// True when the text shows nothing.
    pub fn is_empty(&self) -> bool {
        fn empty(spans: &[Span]) -> bool {
            spans.iter().all(|s| match s {
                Span::Plain(p) | Span::Code(p) => p.is_empty(),
                Span::Strong(t) | Span::Emph(t) => empty(t),
                Span::Link { .. } => false,
            })
        }
        empty(&self.0)
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text::new().plain(s)
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text::new().plain(s)
    }
}

impl From<&String> for Text {
    fn from(s: &String) -> Text {
        Text::new().plain(s.as_str())
    }
}

/// How a table column is aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    /// Numbers.
    Right,
}

/// A table. Cells are inline text; the headers are ours.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub headers: Vec<String>,
    pub align: Vec<Align>,
    pub rows: Vec<Vec<Text>>,
    /// At most this many rows on a terminal (the rest are counted in a line below); markdown shows
    /// every row.
    pub limit: Option<usize>,
}

impl Table {
    /// Column headers; a header starting with `>` is right-aligned (the `>` is not shown).
    pub fn new(headers: &[&str]) -> Table {
        Table {
            headers: headers
                .iter()
                .map(|h| h.trim_start_matches('>').to_string())
                .collect(),
            align: headers
                .iter()
                .map(|h| {
                    if h.starts_with('>') {
                        Align::Right
                    } else {
                        Align::Left
                    }
                })
                .collect(),
            rows: Vec::new(),
            limit: None,
        }
    }

    pub fn row(&mut self, cells: Vec<Text>) {
        self.rows.push(cells);
    }

    /// Adds rows built from `items`.
    pub fn rows<T>(
        mut self,
        items: impl IntoIterator<Item = T>,
        f: impl Fn(T) -> Vec<Text>,
    ) -> Table {
        self.rows.extend(items.into_iter().map(f));
        self
    }

    pub fn limit(mut self, n: usize) -> Table {
        self.limit = Some(n);
        self
    }

    /// Without the columns in which no row says anything: a reader should not scan an empty
    /// column to learn that it is empty. A table without rows keeps its columns.
    pub fn drop_empty_columns(mut self) -> Table {
        if self.rows.is_empty() {
            return self;
        }
        let keep: Vec<bool> = (0..self.headers.len())
            .map(|i| {
                self.rows
                    .iter()
                    .any(|r| r.get(i).is_some_and(|c| !c.is_empty()))
            })
            .collect();
        fn kept<T>(v: &mut Vec<T>, keep: &[bool]) {
            let mut i = 0;
            v.retain(|_| {
                i += 1;
                keep.get(i - 1).copied().unwrap_or(true)
            });
        }
        kept(&mut self.headers, &keep);
        kept(&mut self.align, &keep);
        for r in &mut self.rows {
            kept(r, &keep);
        }
        self
    }
}

/// A chart. Markdown draws it with mermaid; a terminal leaves it out (the table beside it holds the
/// same figures).
#[derive(Debug, Clone, PartialEq)]
pub enum Chart {
    /// A pie of labelled values.
    Pie {
        title: String,
        slices: Vec<(String, u64)>,
    },
    /// Lines over shared x labels (a trend): one line per series, in the pie's colours, the y
    /// axis from 0. The writer labels at most [`MAX_X_LABELS`] points of the x axis and names
    /// each line's colour under the chart (mermaid's xychart has no legend).
    Lines {
        title: String,
        /// One label per point, oldest first.
        x: Vec<String>,
        /// What y counts (`GPUs`).
        y: String,
        /// (name, one value per x label); at most [`MAX_LINES`], the first in the first colour.
        series: Vec<(String, Vec<f64>)>,
    },
    /// A timeline of bars (a plan): `dateFormat YYYY-MM-DD HH:mm`, one section per group.
    Gantt {
        title: String,
        /// (section, bars); a bar is (name, start `YYYY-MM-DD HH:mm`, minutes, late).
        sections: Vec<(String, Vec<GanttBar>)>,
    },
}

/// The most x labels a [`Chart::Lines`] shows: more overlap.
pub const MAX_X_LABELS: usize = 8;

/// The most lines a [`Chart::Lines`] draws: one for each of the pie's colours.
pub const MAX_LINES: usize = 8;

/// One bar of a [`Chart::Gantt`].
#[derive(Debug, Clone, PartialEq)]
pub struct GanttBar {
    pub name: String,
    /// `YYYY-MM-DD HH:mm`, UTC.
    pub start: String,
    pub minutes: u64,
    /// Drawn as critical (it misses its deadline).
    pub late: bool,
}

/// One block of a document.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A heading of level 2 (a document's title) or 3 (a section).
    Heading {
        level: u8,
        text: Text,
    },
    Paragraph(Text),
    /// A bulleted list, one item a line.
    List(Vec<Text>),
    /// A quoted note, one line each.
    Quote(Vec<Text>),
    Table(Table),
    /// A folded section: collapsed on GitHub, shown open on a terminal.
    Details {
        summary: Text,
        body: Vec<Block>,
    },
    /// Preformatted lines (a diff), with the info string of the fence (`diff`).
    Fence {
        info: String,
        lines: Vec<String>,
    },
    Chart(Chart),
    /// Small print (a footer).
    Small(Text),
    /// A GitHub alert (`> [!CAUTION]`): a verdict that must not be missed — a failed gate, an
    /// incomplete read, a render failure. On a terminal, its lines under the kind's label.
    Alert {
        kind: Alert,
        lines: Vec<Text>,
    },
}

/// The kind of an [`Block::Alert`], as GitHub names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alert {
    /// Something to act on before merging or trusting the figures.
    Caution,
    /// Something that may mislead if missed.
    Warning,
}

impl Alert {
    pub fn label(self) -> &'static str {
        match self {
            Alert::Caution => "CAUTION",
            Alert::Warning => "WARNING",
        }
    }
}

/// A whole document: blocks in reading order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Doc {
    pub blocks: Vec<Block>,
}

impl Doc {
    pub fn new() -> Doc {
        Doc::default()
    }

    pub fn push(&mut self, b: Block) {
        self.blocks.push(b);
    }

    pub fn extend(&mut self, other: Doc) {
        self.blocks.extend(other.blocks);
    }

    pub fn heading(&mut self, level: u8, text: impl Into<Text>) {
        self.push(Block::Heading {
            level,
            text: text.into(),
        });
    }

    pub fn paragraph(&mut self, text: impl Into<Text>) {
        self.push(Block::Paragraph(text.into()));
    }

    /// A titled table: open under a heading, or folded into `Details` (with its row count) when it
    /// has more than `fold` rows. Nothing when it has no rows.
    pub fn section(&mut self, title: &str, table: Table, fold: Option<usize>) {
        if table.rows.is_empty() {
            return;
        }
        match fold {
            Some(n) if table.rows.len() > n => self.push(Block::Details {
                summary: Text::from(format!("{title} ({})", table.rows.len())),
                body: vec![Block::Table(table)],
            }),
            _ => {
                self.heading(3, title);
                self.push(Block::Table(table));
            }
        }
    }

    /// The document with every link replaced by its text: what a report says, whatever commit
    /// its links point at (the digest that decides whether a comment or issue changed).
    pub fn unlinked(&self) -> Doc {
        fn spans(v: &[Span]) -> Vec<Span> {
            v.iter()
                .flat_map(|s| match s {
                    Span::Link { text, .. } => spans(text),
                    Span::Strong(t) => vec![Span::Strong(spans(t))],
                    Span::Emph(t) => vec![Span::Emph(spans(t))],
                    other => vec![other.clone()],
                })
                .collect()
        }
        fn text(t: &Text) -> Text {
            Text(spans(&t.0))
        }
        fn blocks(v: &[Block]) -> Vec<Block> {
            v.iter()
                .map(|b| match b {
                    Block::Heading { level, text: t } => Block::Heading {
                        level: *level,
                        text: text(t),
                    },
                    Block::Paragraph(t) => Block::Paragraph(text(t)),
                    Block::Small(t) => Block::Small(text(t)),
                    Block::List(v) => Block::List(v.iter().map(text).collect()),
                    Block::Quote(v) => Block::Quote(v.iter().map(text).collect()),
                    Block::Alert { kind, lines } => Block::Alert {
                        kind: *kind,
                        lines: lines.iter().map(text).collect(),
                    },
                    Block::Table(t) => Block::Table(Table {
                        rows: t
                            .rows
                            .iter()
                            .map(|r| r.iter().map(text).collect())
                            .collect(),
                        ..t.clone()
                    }),
                    Block::Details { summary, body } => Block::Details {
                        summary: text(summary),
                        body: blocks(body),
                    },
                    other => other.clone(),
                })
                .collect()
        }
        Doc {
            blocks: blocks(&self.blocks),
        }
    }
}
