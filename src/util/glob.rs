//! Glob matching for paths and names: `*` and `?` within a path segment, `**` across segments,
//! `[abc]` classes and `{a,b}` alternatives. Used for Argo CD directory include/exclude patterns,
//! ApplicationSet git generators and `.gpuledger.yaml` path and name patterns.

/// True when `text` matches `pattern`.
pub fn matches(pattern: &str, text: &str) -> bool {
    // Expand `{a,b}` alternatives first (not nested).
    if let Some(open) = pattern.find('{')
        && let Some(close) = pattern[open..].find('}').map(|c| c + open)
    {
        let (head, tail) = (&pattern[..open], &pattern[close + 1..]);
        return pattern[open + 1..close]
            .split(',')
            .any(|alt| matches(&format!("{head}{alt}{tail}"), text));
    }
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    match_from(&p, &t)
}

fn match_from(p: &[char], t: &[char]) -> bool {
    match p.first() {
        None => t.is_empty(),
        Some('*') if p.get(1) == Some(&'*') => {
            // `**` matches anything, separators included; `**/` may also match nothing.
            let rest = &p[2..];
            let rest_no_slash = rest.strip_prefix(&['/']).unwrap_or(rest);
            (0..=t.len()).any(|i| match_from(rest, &t[i..]) || match_from(rest_no_slash, &t[i..]))
        }
        Some('*') => {
            let rest = &p[1..];
            for i in 0..=t.len() {
                if match_from(rest, &t[i..]) {
                    return true;
                }
                if i < t.len() && t[i] == '/' {
                    break;
                }
            }
            false
        }
        Some('?') => !t.is_empty() && t[0] != '/' && match_from(&p[1..], &t[1..]),
        Some('[') => {
            let Some(end) = p.iter().position(|&c| c == ']') else {
                return !t.is_empty() && t[0] == '[' && match_from(&p[1..], &t[1..]);
            };
            let class = &p[1..end];
            let (negate, class) = match class.first() {
                Some('!' | '^') => (true, &class[1..]),
                _ => (false, class),
            };
            let Some(&c) = t.first() else { return false };
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
            hit != negate && match_from(&p[end + 1..], &t[1..])
        }
        Some(&c) => !t.is_empty() && t[0] == c && match_from(&p[1..], &t[1..]),
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
}
