//! Tasks as both eras name them (the in-core tasks of 2025-11-25 and the extension of
//! 2026-07-28): a task's status, and the extension's identifier, as the client reads them and
//! serve reports them.

/// The tasks extension's identifier (2026-07-28), in capabilities.
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// A task's status, as both eras name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskStatus {
    Working,
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

impl TaskStatus {
    pub fn parse(name: &str) -> Option<TaskStatus> {
        Some(match name {
            "working" => TaskStatus::Working,
            "input_required" => TaskStatus::InputRequired,
            "completed" => TaskStatus::Completed,
            "failed" => TaskStatus::Failed,
            "cancelled" => TaskStatus::Cancelled,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// Whether the task has ended and will not change again.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}
