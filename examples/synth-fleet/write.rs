//! Writing: kubectl-style indented JSON List, or multi-document block YAML, streamed object by
//! object so that memory stays small.

use std::io::{self, Write};

use serde_json::Value;

use crate::Format;

pub(crate) struct Counting<W> {
    pub(crate) inner: W,
    pub(crate) bytes: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

pub(crate) fn pad(w: &mut impl Write, n: usize) -> io::Result<()> {
    const SPACES: &[u8] = &[b' '; 64];
    let mut left = n;
    while left > 0 {
        let k = left.min(SPACES.len());
        w.write_all(&SPACES[..k])?;
        left -= k;
    }
    Ok(())
}

/// Pretty JSON with 4-space indentation, as kubectl prints it; `indent` is the current depth.
pub(crate) fn write_json<W: Write>(w: &mut W, v: &Value, indent: usize) -> io::Result<()> {
    match v {
        Value::Object(m) if !m.is_empty() => {
            w.write_all(b"{\n")?;
            for (i, (k, v)) in m.iter().enumerate() {
                if i > 0 {
                    w.write_all(b",\n")?;
                }
                pad(w, indent + 4)?;
                serde_json::to_writer(&mut *w, k)?;
                w.write_all(b": ")?;
                write_json(w, v, indent + 4)?;
            }
            w.write_all(b"\n")?;
            pad(w, indent)?;
            w.write_all(b"}")
        }
        Value::Array(a) if !a.is_empty() => {
            w.write_all(b"[\n")?;
            for (i, v) in a.iter().enumerate() {
                if i > 0 {
                    w.write_all(b",\n")?;
                }
                pad(w, indent + 4)?;
                write_json(w, v, indent + 4)?;
            }
            w.write_all(b"\n")?;
            pad(w, indent)?;
            w.write_all(b"]")
        }
        _ => Ok(serde_json::to_writer(&mut *w, v)?),
    }
}

pub(crate) fn yaml_key<W: Write>(w: &mut W, k: &str) -> io::Result<()> {
    let plain = k.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | '-'))
        && !matches!(
            k.to_ascii_lowercase().as_str(),
            "y" | "n" | "yes" | "no" | "on" | "off" | "true" | "false" | "null"
        );
    if plain {
        w.write_all(k.as_bytes())
    } else {
        Ok(serde_json::to_writer(&mut *w, k)?)
    }
}

/// Block YAML mapping at `indent`; with `inline_first` the first key follows a `- ` already written.
pub(crate) fn write_yaml_map<W: Write>(
    w: &mut W,
    m: &serde_json::Map<String, Value>,
    indent: usize,
    inline_first: bool,
) -> io::Result<()> {
    for (i, (k, v)) in m.iter().enumerate() {
        if i > 0 || !inline_first {
            pad(w, indent)?;
        }
        yaml_key(w, k)?;
        w.write_all(b":")?;
        match v {
            Value::Object(o) if !o.is_empty() => {
                w.write_all(b"\n")?;
                write_yaml_map(w, o, indent + 2, false)?;
            }
            Value::Array(a) if !a.is_empty() => {
                w.write_all(b"\n")?;
                write_yaml_seq(w, a, indent)?;
            }
            _ => {
                w.write_all(b" ")?;
                serde_json::to_writer(&mut *w, v)?;
                w.write_all(b"\n")?;
            }
        }
    }
    Ok(())
}

pub(crate) fn write_yaml_seq<W: Write>(w: &mut W, a: &[Value], indent: usize) -> io::Result<()> {
    for v in a {
        pad(w, indent)?;
        w.write_all(b"- ")?;
        match v {
            Value::Object(o) if !o.is_empty() => write_yaml_map(w, o, indent + 2, true)?,
            // Scalars, empty collections and nested sequences as JSON flow (valid YAML).
            _ => {
                serde_json::to_writer(&mut *w, v)?;
                w.write_all(b"\n")?;
            }
        }
    }
    Ok(())
}

pub(crate) struct Out<W: Write> {
    pub(crate) w: W,
    pub(crate) format: Format,
    pub(crate) compact: bool,
    pub(crate) items: usize,
}

impl<W: Write> Out<W> {
    pub(crate) fn begin(&mut self) -> io::Result<()> {
        if self.format == Format::Json {
            self.w
                .write_all(b"{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n")?;
        }
        Ok(())
    }

    pub(crate) fn emit(&mut self, v: &Value) -> io::Result<()> {
        match self.format {
            Format::Json => {
                if self.items > 0 {
                    self.w.write_all(b",\n")?;
                }
                if self.compact {
                    serde_json::to_writer(&mut self.w, v)?;
                } else {
                    pad(&mut self.w, 8)?;
                    write_json(&mut self.w, v, 8)?;
                }
            }
            Format::Yaml => {
                self.w.write_all(b"---\n")?;
                if let Value::Object(m) = v {
                    write_yaml_map(&mut self.w, m, 0, false)?;
                }
            }
        }
        self.items += 1;
        Ok(())
    }

    pub(crate) fn end(&mut self) -> io::Result<()> {
        if self.format == Format::Json {
            self.w.write_all(
                b"\n    ],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n",
            )?;
        }
        self.w.flush()
    }
}
