mod agent_loop;
mod models;
mod tools;
