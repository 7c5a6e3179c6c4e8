//! Glob matching for paths and names: `*` and `?` within a path segment, `**` across segments,
//! `[abc]` classes and `{a,b}` alternatives. Used for Argo CD directory include/exclude patterns,
//! ApplicationSet git generators and `.gpuledger.yaml` path and name patterns.

/// Most `{a,b}` alternatives one pattern may expand to; beyond, the pattern matches nothing.
const MAX_ALTERNATIVES: usize = 256;

/// True when `text` matches `pattern`. Patterns come from repositories under review, so matching
/// is bounded: alternatives are capped and the matcher remembers the states that failed, which
/// keeps it polynomial however many `**` a pattern holds.
pub fn matches(pattern: &str, text: &str) -> bool {
    let mut expanded = Vec::new();
    expand(pattern, &mut expanded);
    if expanded.len() > MAX_ALTERNATIVES {
        return false;
    }
    let t: Vec<char> = text.chars().collect();
    expanded.iter().any(|p| {
        // `**/**/` is `**/`.
        let mut p = p.clone();
        while p.contains("**/**/") {
            p = p.replace("**/**/", "**/");
        }
        let p: Vec<char> = p.chars().collect();
        let mut failed = std::collections::HashSet::new();
        match_from(&p, &t, 0, 0, &mut failed)
    })
}

fn expand(pattern: &str, out: &mut Vec<String>) {
    if out.len() > MAX_ALTERNATIVES {
        return;
    }
    if let Some(open) = pattern.find('{')
        && let Some(close) = pattern[open..].find('}').map(|c| c + open)
    {
        let (head, tail) = (&pattern[..open], &pattern[close + 1..]);
        for alt in pattern[open + 1..close].split(',') {
            expand(&format!("{head}{alt}{tail}"), out);
        }
        return;
    }
    out.push(pattern.to_string());
}

fn match_from(
    p: &[char],
    t: &[char],
    pi: usize,
    ti: usize,
    failed: &mut std::collections::HashSet<(usize, usize)>,
) -> bool {
    if failed.contains(&(pi, ti)) {
        return false;
    }
    let ok = step(p, t, pi, ti, failed);
    if !ok {
        failed.insert((pi, ti));
    }
    ok
}

fn step(
    p: &[char],
    t: &[char],
    pi: usize,
    ti: usize,
    failed: &mut std::collections::HashSet<(usize, usize)>,
) -> bool {
    match p.get(pi) {
        None => ti == t.len(),
        Some('*') if p.get(pi + 1) == Some(&'*') => {
            // `**` matches anything, separators included; `**/` may also match nothing.
            let rest = pi + 2;
            let rest_no_slash = if p.get(rest) == Some(&'/') {
                rest + 1
            } else {
                rest
            };
            (ti..=t.len()).any(|i| {
                match_from(p, t, rest, i, failed) || match_from(p, t, rest_no_slash, i, failed)
            })
        }
        Some('*') => {
            for i in ti..=t.len() {
                if match_from(p, t, pi + 1, i, failed) {
                    return true;
                }
                if i < t.len() && t[i] == '/' {
                    break;
                }
            }
            false
        }
        Some('?') => ti < t.len() && t[ti] != '/' && match_from(p, t, pi + 1, ti + 1, failed),
        Some('[') => {
            let Some(end) = p[pi..].iter().position(|&c| c == ']').map(|e| e + pi) else {
                return ti < t.len() && t[ti] == '[' && match_from(p, t, pi + 1, ti + 1, failed);
            };
            let class = &p[pi + 1..end];
            let (negate, class) = match class.first() {
                Some('!' | '^') => (true, &class[1..]),
                _ => (false, class),
            };
            let Some(&c) = t.get(ti) else { return false };
            let mut hit = false;
            let mut i = 0;
            while i < class.len() {
                if i + 2 < class.len() && class[i + 1] == '-' {
                    hit |= class[i] <= c && c <= class[i + 2];
                    i += 3;
                } else {
                    hit |= class[i] == c;
                    i += 1;
                }
            }
            hit != negate && match_from(p, t, end + 1, ti + 1, failed)
        }
        Some(&c) => ti < t.len() && t[ti] == c && match_from(p, t, pi + 1, ti + 1, failed),
    }
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn globs() {
        assert!(matches("*.yaml", "a.yaml"));
        assert!(!matches("*.yaml", "dir/a.yaml"));
        assert!(matches("apps/*", "apps/x"));
        assert!(!matches("apps/*", "apps/x/y"));
        assert!(matches("apps/**", "apps/x/y"));
        assert!(matches("**/*.yaml", "a.yaml"));
        assert!(matches("**/*.yaml", "x/y/a.yaml"));
        assert!(matches("{a,b}.yaml", "b.yaml"));
        assert!(matches("llama-*-prod", "llama-70b-prod"));
        assert!(matches("v?", "v1"));
        assert!(matches("[a-c]x", "bx"));
        assert!(!matches("[!a-c]x", "bx"));
        assert!(matches("*", ""));
        assert!(!matches("a", "ab"));
    }

    #[test]
    fn hostile_patterns_stay_fast() {
        let deep = format!("{}x.json", "d/".repeat(16));
        // Exponential backtracking would make this test hang, not merely slow.
        assert!(!matches(&format!("{}y.txt", "**/".repeat(12)), &deep));
        assert!(matches(&format!("{}*.json", "**/".repeat(12)), &deep));
        assert!(!matches(&"*a".repeat(40), &"a".repeat(39)));
        assert!(
            !matches(&"{a,b}".repeat(12), "ab"),
            "2^12 alternatives are refused"
        );
    }
}
