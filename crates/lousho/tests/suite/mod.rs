//! agent_loop
mod agent_loop;
mod approvals;
mod models;
mod permissions;
mod resume;
mod tools;
