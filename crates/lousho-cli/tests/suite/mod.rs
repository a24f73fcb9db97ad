mod bad_spec;
mod call;
mod common;
mod help;
mod mcp_stdio;
mod run;
mod tools;
