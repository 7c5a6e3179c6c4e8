//! A small aligned-columns table used by the terminal renderer.

pub struct Table {
    headers: Vec<String>,
    /// True for right-aligned (numeric) columns.
    right: Vec<bool>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// Column headers; a header starting with `>` is right-aligned (the `>` is not shown).
    pub fn new(headers: &[&str]) -> Table {
        Table {
            headers: headers
                .iter()
                .map(|h| h.trim_start_matches('>').to_string())
                .collect(),
            right: headers.iter().map(|h| h.starts_with('>')).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row. Control characters (a terminal escape smuggled in through a label) are replaced.
    pub fn row(&mut self, cells: Vec<String>) {
        let clean = |c: String| {
            if c.chars().any(char::is_control) {
                c.chars()
                    .map(|ch| if ch.is_control() { '?' } else { ch })
                    .collect()
            } else {
                c
            }
        };
        self.rows.push(cells.into_iter().map(clean).collect());
    }

    pub fn render(&self, out: &mut String) {
        let width = |s: &str| s.chars().count();
        let mut widths: Vec<usize> = self.headers.iter().map(|h| width(h)).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate() {
                if i < widths.len() {
                    widths[i] = widths[i].max(width(c));
                }
            }
        }
        let line = |cells: &[String], out: &mut String| {
            let mut l = String::new();
            for (i, c) in cells.iter().enumerate() {
                let w = widths.get(i).copied().unwrap_or(0);
                let pad = " ".repeat(w.saturating_sub(width(c)));
                if i > 0 {
                    l.push_str("  ");
                }
                if self.right.get(i).copied().unwrap_or(false) {
                    l.push_str(&pad);
                    l.push_str(c);
                } else {
                    l.push_str(c);
                    l.push_str(&pad);
                }
            }
            out.push_str(l.trim_end());
            out.push('\n');
        };
        line(&self.headers, out);
        let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
        line(&rule, out);
        for r in &self.rows {
            line(r, out);
        }
    }
}
