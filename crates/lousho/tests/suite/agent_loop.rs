//! agent_loop
