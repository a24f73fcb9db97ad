//! Deterministic models for testing agents: [`TestModel`] (the model string
//! `"test"`) and [`ScriptedModel`] (a script of turns that records every
//! request).

mod args;
mod scripted;
mod test_model;

pub use args::arguments_for_schema;
pub use scripted::{ScriptedModel, ScriptedTurn};
pub use test_model::TestModel;
