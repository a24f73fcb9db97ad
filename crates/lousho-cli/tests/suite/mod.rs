mod bad_spec;
mod call;
mod common;
mod help;
mod login;
mod mcp_stdio;
mod run;
mod tools;
