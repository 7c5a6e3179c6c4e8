//! Gzipped tar archives (chart packages, OCI layers) read in memory, never unpacked by the archive's
//! own paths: each regular file's path is normalised and one that climbs out (`..`, an absolute
//! path) refuses the archive; links, devices and directories are passed over, as Helm's archive
//! loader does (helm `pkg/chart/loader/archive.go` reads regular files only). Sizes are bounded:
//! each file, the whole, and the number of files, so a decompression bomb stops early.

use std::collections::BTreeMap;
use std::io::Read;

use super::error::FetchError;

/// The most bytes one file of an archive may have (Flux: 5 MiB per chart file).
const MAX_FILE: u64 = 5 * 1024 * 1024;
/// The most bytes an archive may hold in all.
const MAX_TOTAL: u64 = 200 * 1024 * 1024;
/// The most files.
const MAX_FILES: usize = 20_000;

/// Files by path (`/`-separated, relative).
pub type Files = BTreeMap<String, Vec<u8>>;

/// The regular files of a `.tar.gz` (or a plain `.tar`), by normalised path.
pub fn read(bytes: &[u8], what: &str) -> Result<Files, FetchError> {
    let gz = bytes.starts_with(&[0x1f, 0x8b]);
    let reader: Box<dyn Read + '_> = if gz {
        Box::new(flate2::read::GzDecoder::new(bytes))
    } else {
        Box::new(bytes)
    };
    let mut tar = tar::Archive::new(reader.take(MAX_TOTAL + 1));
    let bad = |m: String| FetchError::invalid(what, m);
    let mut out = Files::new();
    let mut total: u64 = 0;
    for entry in tar
        .entries()
        .map_err(|e| bad(format!("not a tar archive: {e}")))?
    {
        let mut entry = entry.map_err(|e| bad(format!("not a tar archive: {e}")))?;
        if entry.header().entry_type() != tar::EntryType::Regular
            && entry.header().entry_type() != tar::EntryType::Continuous
        {
            continue;
        }
        let raw = entry
            .path()
            .map_err(|e| bad(format!("a path that does not read: {e}")))?
            .to_string_lossy()
            .replace('\\', "/");
        let Some(path) = crate::desired::tree::normalize(&raw) else {
            return Err(bad(format!("{raw:?} leaves the archive: refused")));
        };
        if path.is_empty() {
            continue;
        }
        let size = entry.size();
        if size > MAX_FILE {
            return Err(bad(format!(
                "{path}: {size} bytes, over {MAX_FILE}: refused"
            )));
        }
        total += size;
        if total > MAX_TOTAL || out.len() >= MAX_FILES {
            return Err(bad(format!(
                "more than {MAX_TOTAL} bytes or {MAX_FILES} files unpacked: refused"
            )));
        }
        let mut buf = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        entry
            .read_to_end(&mut buf)
            .map_err(|e| bad(format!("{path}: {e}")))?;
        out.insert(path, buf);
    }
    Ok(out)
}

/// A chart package's files without its top directory (`llm/Chart.yaml` → `Chart.yaml`), as Helm
/// loads a chart archive, and the name of that directory.
pub fn chart(bytes: &[u8], what: &str) -> Result<(String, Files), FetchError> {
    let files = read(bytes, what)?;
    let top = files
        .keys()
        .find_map(|p| p.strip_suffix("/Chart.yaml").filter(|t| !t.contains('/')))
        .map(str::to_string)
        .ok_or_else(|| {
            FetchError::invalid(what, "no Chart.yaml at the archive's top: not a chart")
        })?;
    let prefix = format!("{top}/");
    let inside = files
        .into_iter()
        .filter_map(|(p, b)| p.strip_prefix(&prefix).map(|r| (r.to_string(), b)))
        .collect();
    Ok((top, inside))
}

#[cfg(test)]
pub(crate) fn pack(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut b = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    for (p, data) in files {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_entry_type(tar::EntryType::Regular);
        // `append_data` refuses `..`; hostile paths are written raw into the header.
        let name = h.as_old_mut().name.as_mut();
        let n = p.len().min(name.len());
        name[..n].copy_from_slice(&p.as_bytes()[..n]);
        h.set_cksum();
        b.append(&h, *data).unwrap();
    }
    b.into_inner().unwrap().finish().unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chart_loses_its_top_directory() {
        let a = pack(&[
            ("llm/Chart.yaml", b"name: llm\nversion: 1.0.0\n"),
            ("llm/templates/d.yaml", b"kind: X\n"),
            ("llm/charts/sub/Chart.yaml", b"name: sub\n"),
        ]);
        let (top, files) = chart(&a, "llm").unwrap();
        assert_eq!(top, "llm");
        assert_eq!(
            files.keys().collect::<Vec<_>>(),
            ["Chart.yaml", "charts/sub/Chart.yaml", "templates/d.yaml"]
        );
        assert!(chart(&pack(&[("x/values.yaml", b"")]), "x").is_err());
    }

    #[test]
    fn paths_out_of_the_archive_refuse_it() {
        let a = pack(&[("llm/../../etc/passwd", b"x")]);
        let e = read(&a, "evil").unwrap_err().to_string();
        assert!(e.contains("leaves the archive"), "{e}");
        assert!(read(b"not an archive at all, really not", "junk").is_err());
    }
}
