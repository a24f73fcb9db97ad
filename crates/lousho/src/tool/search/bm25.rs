//! A small BM25 index over tool descriptions: what `tool_search` ranks with.
//!
//! Each tool is one document made of its name (split at `_`, `-` and
//! camelCase; counted twice, so a word of the name weighs more than one of
//! the description), its title, its server's name, its description and the
//! names of its parameters. Words are lower-cased, stop words dropped and
//! plural / `-ing` / `-ed` endings cut, the same way for the query.
//! Okapi BM25 with k1 = 1.2 and b = 0.75.

use super::super::ToolSpec;
use serde_json::Value;
use std::collections::HashMap;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Words that say nothing about what a tool does.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "for", "from", "get", "i", "in",
    "is", "it", "me", "my", "of", "on", "or", "that", "the", "this", "to", "tool", "with", "you",
    "your", "which", "what", "want", "need", "some", "all", "its", "into", "use",
];

/// A ranked index of tool documents.
#[derive(Debug)]
pub(crate) struct Bm25Index {
    /// Per document: term → count, and its length in terms.
    docs: Vec<(HashMap<String, u32>, usize)>,
    /// Term → how many documents hold it.
    df: HashMap<String, u32>,
    avg_len: f64,
}

impl Bm25Index {
    /// An index of `specs`, in order.
    pub(crate) fn new<'a>(specs: impl IntoIterator<Item = &'a ToolSpec>) -> Self {
        let mut docs = Vec::new();
        let mut df: HashMap<String, u32> = HashMap::new();
        for spec in specs {
            let terms = document(spec);
            let len = terms.len();
            let mut tf: HashMap<String, u32> = HashMap::new();
            for t in terms {
                *tf.entry(t).or_default() += 1;
            }
            for t in tf.keys() {
                *df.entry(t.clone()).or_default() += 1;
            }
            docs.push((tf, len));
        }
        let total: usize = docs.iter().map(|(_, l)| l).sum();
        let avg_len = if docs.is_empty() {
            1.0
        } else {
            (total as f64 / docs.len() as f64).max(1.0)
        };
        Self { docs, df, avg_len }
    }

    /// The indexes of the best `limit` documents for `query` (score > 0),
    /// best first; ties keep document order.
    pub(crate) fn search(&self, query: &str, limit: usize) -> Vec<(usize, f64)> {
        let mut terms = tokenize(query);
        terms.sort();
        terms.dedup();
        let n = self.docs.len() as f64;
        let mut scored: Vec<(usize, f64)> = self
            .docs
            .iter()
            .enumerate()
            .map(|(i, (tf, len))| {
                let score = terms
                    .iter()
                    .filter_map(|t| {
                        let f = f64::from(*tf.get(t)?);
                        let df = f64::from(self.df.get(t).copied().unwrap_or(0));
                        let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                        let norm = K1 * (1.0 - B + B * (*len as f64) / self.avg_len);
                        Some(idf * f * (K1 + 1.0) / (f + norm))
                    })
                    .sum::<f64>();
                (i, score)
            })
            .filter(|(_, s)| *s > 0.0)
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(limit);
        scored
    }
}

/// The terms of one tool's document.
fn document(spec: &ToolSpec) -> Vec<String> {
    let name = tokenize(&spec.name);
    let mut terms = name.clone();
    terms.extend(name);
    if let Some(title) = &spec.display_name {
        terms.extend(tokenize(title));
    }
    if let Some(server) = spec.origin.server() {
        terms.extend(tokenize(server));
    }
    terms.extend(tokenize(&spec.description));
    if let Some(Value::Object(props)) = spec.input_schema.get("properties") {
        for key in props.keys() {
            terms.extend(tokenize(key));
        }
    }
    terms
}

/// Lower-cased words, split at non-alphanumerics and camelCase, without
/// stop words, with common endings cut.
pub(crate) fn tokenize(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && prev_lower && !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            prev_lower = c.is_lowercase() || c.is_numeric();
            word.extend(c.to_lowercase());
        } else {
            prev_lower = false;
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
        .into_iter()
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .map(|w| stem(&w))
        .collect()
}

/// Cuts plural, `-ing` and `-ed` endings (a light stemmer: "files" and
/// "file", "listing" and "list" meet).
fn stem(word: &str) -> String {
    let n = word.len();
    if !word.is_ascii() || n <= 3 {
        return word.to_owned();
    }
    if let Some(base) = word.strip_suffix("ies").filter(|_| n > 4) {
        return format!("{base}y");
    }
    if let Some(base) = word.strip_suffix("ing").filter(|_| n > 5) {
        return base.to_owned();
    }
    if let Some(base) = word.strip_suffix("ed").filter(|_| n > 4) {
        return base.to_owned();
    }
    if let Some(base) = word.strip_suffix("es")
        && (base.ends_with("sh")
            || base.ends_with("ch")
            || base.ends_with('x')
            || base.ends_with('s'))
    {
        return base.to_owned();
    }
    if word.ends_with('s') && !word.ends_with("ss") && !word.ends_with("us") {
        return word[..n - 1].to_owned();
    }
    word.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn words_split_at_case_and_punctuation_and_lose_their_endings() {
        assert_eq!(
            tokenize("listPullRequests get_file-contents Issues"),
            ["list", "pull", "request", "file", "content", "issue"]
        );
        assert_eq!(tokenize("the branches"), ["branch"]);
    }

    #[test]
    fn the_tool_whose_words_match_ranks_first() {
        let specs = [
            ToolSpec::new(
                "send_message",
                "Post a message to a Slack channel",
                json!({"type": "object"}),
            ),
            ToolSpec::new(
                "create_issue",
                "Open a new issue in a repository",
                json!({"type": "object", "properties": {"title": {}, "body": {}}}),
            ),
        ];
        let index = Bm25Index::new(&specs);
        assert_eq!(index.search("open an issue", 3)[0].0, 1);
        assert_eq!(index.search("slack channel message", 3)[0].0, 0);
        assert!(index.search("weather", 3).is_empty());
    }
}
