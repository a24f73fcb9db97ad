mod agent_loop;
mod builtins_clock;
mod builtins_fs;
mod builtins_sandbox;
mod builtins_todo;
mod models;
mod tools;
