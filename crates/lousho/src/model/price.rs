//! Token prices, for the cost estimate on a [`Reply`](crate::Reply).
//!
//! [`PriceTable::builtin`] holds list prices in US dollars per million
//! tokens, copied by hand from the providers' public pricing pages
//! (OpenAI's API pricing page, Anthropic's "Pricing" page in the Claude
//! docs) as they read in 2026; nothing is fetched. Prompt-cache reads and
//! writes are billed at their own rates (Anthropic: reads 0.1×, 5-minute
//! writes 1.25× the input price; OpenAI: each model's cached-input price,
//! writes free); batch and long-context rates are not modelled. Prices
//! change: give your own with
//! [`AgentBuilder::prices`](crate::AgentBuilder::prices) (or a spec file's
//! `prices`), or [`PriceTable::empty`] for no estimate.

use super::Usage;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

/// One model's price, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Price {
    /// Per million input (prompt) tokens.
    pub input: f64,
    /// Per million output (completion) tokens.
    pub output: f64,
    /// Per million input tokens read from the prompt cache (the input price
    /// when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<f64>,
    /// Per million input tokens written to the prompt cache (the input price
    /// when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
}

impl Price {
    /// A price per million input and output tokens (cache reads and writes
    /// at the input price).
    pub const fn new(input: f64, output: f64) -> Self {
        Self {
            input,
            output,
            cache_read: None,
            cache_write: None,
        }
    }

    /// With prices per million tokens read from and written to the prompt
    /// cache.
    #[must_use]
    pub const fn with_cache(mut self, read: f64, write: f64) -> Self {
        self.cache_read = Some(read);
        self.cache_write = Some(write);
        self
    }

    /// What `usage` costs at this price, in US dollars: uncached input at
    /// the input price, cache reads and writes at theirs, output (reasoning
    /// included) at the output price.
    pub fn cost(&self, usage: Usage) -> f64 {
        let read = usage.cache_read_tokens.min(usage.input_tokens);
        let write = usage.cache_write_tokens.min(usage.input_tokens - read);
        let fresh = usage.input_tokens - read - write;
        (fresh as f64 * self.input
            + read as f64 * self.cache_read.unwrap_or(self.input)
            + write as f64 * self.cache_write.unwrap_or(self.input)
            + usage.output_tokens as f64 * self.output)
            / 1_000_000.0
    }
}

/// Prices by model name (without the vendor prefix: `gpt-4o-mini`,
/// `claude-sonnet-4-5`). A dated snapshot (`claude-sonnet-4-5-20250929`,
/// `gpt-4o-2024-08-06`) takes its family's price.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceTable {
    prices: HashMap<String, Price>,
}

/// (model, input, output, cache read) in US dollars per million tokens.
/// OpenAI charges nothing extra for cache writes (they are billed as input).
const OPENAI: &[(&str, f64, f64, f64)] = &[
    ("gpt-5.4", 2.50, 15.00, 0.25),
    ("gpt-5.2", 1.75, 14.00, 0.175),
    ("gpt-5", 1.25, 10.00, 0.125),
    ("gpt-5-mini", 0.25, 2.00, 0.025),
    ("gpt-5-nano", 0.05, 0.40, 0.005),
    ("gpt-4.1", 2.00, 8.00, 0.50),
    ("gpt-4.1-mini", 0.40, 1.60, 0.10),
    ("gpt-4.1-nano", 0.10, 0.40, 0.025),
    ("gpt-4o", 2.50, 10.00, 1.25),
    ("gpt-4o-mini", 0.15, 0.60, 0.075),
    ("o3", 2.00, 8.00, 0.50),
    ("o4-mini", 1.10, 4.40, 0.275),
];

/// (model, input, output) in US dollars per million tokens; cache reads
/// are [`ANTHROPIC_CACHE_READ`] and 5-minute cache writes
/// [`ANTHROPIC_CACHE_WRITE`] times the input price.
const ANTHROPIC: &[(&str, f64, f64)] = &[
    ("claude-opus-4-6", 5.00, 25.00),
    ("claude-opus-4-5", 5.00, 25.00),
    ("claude-opus-4-1", 15.00, 75.00),
    ("claude-opus-4", 15.00, 75.00),
    ("claude-sonnet-4-6", 3.00, 15.00),
    ("claude-sonnet-4-5", 3.00, 15.00),
    ("claude-sonnet-4", 3.00, 15.00),
    ("claude-3-7-sonnet", 3.00, 15.00),
    ("claude-haiku-4-5", 1.00, 5.00),
    ("claude-3-5-haiku", 0.80, 4.00),
    ("claude-3-haiku", 0.25, 1.25),
];

/// Anthropic's cache-read price as a multiple of the input price.
const ANTHROPIC_CACHE_READ: f64 = 0.1;
/// Anthropic's 5-minute cache-write price as a multiple of the input price
/// (the breakpoints lousho sets use the default 5-minute lifetime).
const ANTHROPIC_CACHE_WRITE: f64 = 1.25;

static BUILTIN_TABLE: LazyLock<Arc<PriceTable>> = LazyLock::new(|| {
    Arc::new(PriceTable {
        prices: OPENAI
            .iter()
            .map(|&(m, i, o, read)| (m.to_owned(), Price::new(i, o).with_cache(read, i)))
            .chain(ANTHROPIC.iter().map(|&(m, i, o)| {
                let price = Price::new(i, o)
                    .with_cache(i * ANTHROPIC_CACHE_READ, i * ANTHROPIC_CACHE_WRITE);
                (m.to_owned(), price)
            }))
            .collect(),
    })
});

impl PriceTable {
    /// No prices: replies carry no cost estimate.
    pub fn empty() -> Self {
        Self::default()
    }

    /// The list prices that ship with lousho (see the module docs for where
    /// they come from).
    pub fn builtin() -> Self {
        (**BUILTIN_TABLE).clone()
    }

    pub(crate) fn shared_builtin() -> Arc<PriceTable> {
        BUILTIN_TABLE.clone()
    }

    /// Sets (or replaces) a model's price; `model` with or without its
    /// vendor prefix.
    #[must_use]
    pub fn with(mut self, model: impl Into<String>, price: Price) -> Self {
        let model = model.into();
        self.prices.insert(bare(&model).to_owned(), price);
        self
    }

    /// Adds every price of `other`, replacing this table's for the same models.
    #[must_use]
    pub fn extend(mut self, other: PriceTable) -> Self {
        self.prices.extend(other.prices);
        self
    }

    /// The price of `model` (`"openai/gpt-4o-mini"`, `"gpt-4o-mini"`, or a
    /// dated snapshot of a listed model).
    pub fn price(&self, model: &str) -> Option<Price> {
        let name = bare(model);
        if let Some(p) = self.prices.get(name) {
            return Some(*p);
        }
        // The longest listed family the name is a dated snapshot of.
        self.prices
            .iter()
            .filter(|(family, _)| {
                name.strip_prefix(family.as_str())
                    .and_then(|rest| rest.strip_prefix('-'))
                    .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
            })
            .max_by_key(|(family, _)| family.len())
            .map(|(_, p)| *p)
    }
}

/// The model's name without the vendor (`openai/`, `openrouter/anthropic/`).
fn bare(model: &str) -> &str {
    model.rsplit('/').next().unwrap_or(model)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (input, output) of a price.
    fn io(p: Option<Price>) -> Option<(f64, f64)> {
        p.map(|p| (p.input, p.output))
    }

    #[test]
    fn a_price_is_found_with_or_without_vendor_and_for_dated_snapshots() {
        let t = PriceTable::builtin();
        assert_eq!(io(t.price("openai/gpt-4o-mini")), Some((0.15, 0.60)));
        assert_eq!(io(t.price("gpt-4o-mini-2024-07-18")), Some((0.15, 0.60)));
        assert_eq!(io(t.price("gpt-4o-2024-08-06")), Some((2.50, 10.00)));
        assert_eq!(
            io(t.price("anthropic/claude-opus-4-1-20250805")),
            Some((15.0, 75.0))
        );
        assert_eq!(
            io(t.price("openrouter/anthropic/claude-sonnet-4-5")),
            Some((3.0, 15.0))
        );
        assert_eq!(t.price("test"), None);
        assert_eq!(t.price("gpt-4o-turbo"), None);
    }

    #[test]
    fn a_users_price_replaces_the_builtin_one() {
        let t = PriceTable::builtin().with("openai/gpt-4o-mini", Price::new(1.0, 2.0));
        assert_eq!(t.price("gpt-4o-mini"), Some(Price::new(1.0, 2.0)));
        let usage = Usage::new(1_000_000, 500_000);
        assert!((Price::new(1.0, 2.0).cost(usage) - 2.0).abs() < 1e-9);
    }

    #[test]
    fn cache_reads_and_writes_are_billed_at_their_own_rates() {
        let usage = Usage {
            cache_read_tokens: 600_000,
            cache_write_tokens: 200_000,
            ..Usage::new(1_000_000, 100_000)
        };
        // Sonnet: 0.2M fresh × 3 + 0.6M read × 0.3 + 0.2M written × 3.75 + 0.1M out × 15.
        let sonnet = PriceTable::builtin().price("claude-sonnet-4-5").unwrap();
        assert!((sonnet.cost(usage) - (0.6 + 0.18 + 0.75 + 1.5)).abs() < 1e-9);
        // gpt-4o: cached input at half price, writes at the input price.
        let gpt = PriceTable::builtin().price("gpt-4o").unwrap();
        assert!((gpt.cost(usage) - (0.5 + 0.75 + 0.5 + 1.0)).abs() < 1e-9);
        // Without cache prices, every input token is billed as input.
        assert!((Price::new(1.0, 2.0).cost(usage) - 1.2).abs() < 1e-9);
        // Counts past the input (a confused server) never go negative.
        let odd = Usage {
            cache_read_tokens: 5,
            cache_write_tokens: 5,
            ..Usage::new(4, 0)
        };
        assert!((Price::new(1.0, 1.0).with_cache(0.0, 0.0).cost(odd)).abs() < 1e-12);
    }
}
