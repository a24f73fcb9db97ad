//! When a tool call may run: approval policies (and, with the approvals
//! feature set, permission rules).

mod approval;

pub use approval::{Approval, ApprovalFn};
