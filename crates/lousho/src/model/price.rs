//! Token prices, for the cost estimate on a [`Reply`](crate::Reply).
//!
//! [`PriceTable::builtin`] holds list prices in US dollars per million
//! tokens, copied by hand from the providers' public pricing pages
//! (OpenAI's API pricing page, Anthropic's "Pricing" page in the Claude
//! docs) as they read in 2026; nothing is fetched. Cached-input, batch and
//! long-context rates are not modelled, so the estimate is an upper bound
//! for cached prompts. Prices change: give your own with
//! [`AgentBuilder::prices`](crate::AgentBuilder::prices) (or a spec file's
//! `prices`), or [`PriceTable::empty`] for no estimate.

use super::Usage;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

/// One model's price, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Price {
    /// Per million input (prompt) tokens.
    pub input: f64,
    /// Per million output (completion) tokens.
    pub output: f64,
}

impl Price {
    /// A price per million input and output tokens.
    pub const fn new(input: f64, output: f64) -> Self {
        Self { input, output }
    }

    /// What `usage` costs at this price, in US dollars.
    pub fn cost(&self, usage: Usage) -> f64 {
        (usage.input_tokens as f64 * self.input + usage.output_tokens as f64 * self.output)
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

/// (model, input, output) in US dollars per million tokens.
const BUILTIN: &[(&str, f64, f64)] = &[
    // OpenAI
    ("gpt-5.4", 2.50, 15.00),
    ("gpt-5.2", 1.75, 14.00),
    ("gpt-5", 1.25, 10.00),
    ("gpt-5-mini", 0.25, 2.00),
    ("gpt-5-nano", 0.05, 0.40),
    ("gpt-4.1", 2.00, 8.00),
    ("gpt-4.1-mini", 0.40, 1.60),
    ("gpt-4.1-nano", 0.10, 0.40),
    ("gpt-4o", 2.50, 10.00),
    ("gpt-4o-mini", 0.15, 0.60),
    ("o3", 2.00, 8.00),
    ("o4-mini", 1.10, 4.40),
    // Anthropic
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

static BUILTIN_TABLE: LazyLock<Arc<PriceTable>> = LazyLock::new(|| {
    Arc::new(PriceTable {
        prices: BUILTIN
            .iter()
            .map(|&(m, i, o)| (m.to_owned(), Price::new(i, o)))
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

    #[test]
    fn a_price_is_found_with_or_without_vendor_and_for_dated_snapshots() {
        let t = PriceTable::builtin();
        assert_eq!(t.price("openai/gpt-4o-mini"), Some(Price::new(0.15, 0.60)));
        assert_eq!(
            t.price("gpt-4o-mini-2024-07-18"),
            Some(Price::new(0.15, 0.60))
        );
        assert_eq!(t.price("gpt-4o-2024-08-06"), Some(Price::new(2.50, 10.00)));
        assert_eq!(
            t.price("anthropic/claude-opus-4-1-20250805"),
            Some(Price::new(15.0, 75.0))
        );
        assert_eq!(
            t.price("openrouter/anthropic/claude-sonnet-4-5"),
            Some(Price::new(3.0, 15.0))
        );
        assert_eq!(t.price("test"), None);
        assert_eq!(t.price("gpt-4o-turbo"), None);
    }

    #[test]
    fn a_users_price_replaces_the_builtin_one() {
        let t = PriceTable::builtin().with("openai/gpt-4o-mini", Price::new(1.0, 2.0));
        assert_eq!(t.price("gpt-4o-mini"), Some(Price::new(1.0, 2.0)));
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 500_000,
        };
        assert!((Price::new(1.0, 2.0).cost(usage) - 2.0).abs() < 1e-9);
    }
}
