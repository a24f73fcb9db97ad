mod agent_loop;
mod models;
mod providers_anthropic;
mod providers_common;
mod providers_compatible;
mod providers_openai;
mod tools;
