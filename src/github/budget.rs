//! Markdown budget: split a long report into parts that fit GitHub's comment limit without cutting
//! inside a code fence or a `<details>` element. (Being written; see the issue for the rules.)
