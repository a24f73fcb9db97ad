//! What a run is doing, on one spinner line: waiting for the model, or which
//! tools are running (and for how long).

use super::Spinner;

/// A run's spinner (on a terminal only; silent otherwise).
pub struct Activity {
    model: String,
    message: String,
    running: Vec<(String, String)>,
    spinner: Option<Spinner>,
    /// Spinners may be drawn: stderr is a terminal, and the answer is not in
    /// the middle of a line on the same screen.
    allowed: bool,
}

impl Activity {
    /// For a run of `model`; `on` is false where no spinner may show.
    pub fn new(model: &str, on: bool) -> Self {
        Self {
            model: model.to_owned(),
            message: String::new(),
            running: Vec::new(),
            spinner: None,
            allowed: on && super::enabled(),
        }
    }

    /// The model is working on its turn.
    pub fn waiting(&mut self) {
        let message = format!("waiting for {}", self.model);
        self.show(message);
    }

    /// The model failed and the run asks the next model of its list.
    pub fn failed_over(&mut self, model: &str) {
        model.clone_into(&mut self.model);
        self.waiting();
    }

    /// The model's client-side rate limit holds its request back.
    pub fn throttled(&mut self, model: &str, wait: std::time::Duration) {
        self.show(format!(
            "rate limit: waiting about {} s for {model}",
            wait.as_secs().max(1)
        ));
    }

    /// Another run of the session holds its lease: this one waits for it.
    pub fn session_busy(&mut self, session: &str) {
        self.show(format!(
            "waiting for another run of session `{session}` to finish"
        ));
    }

    /// A tool call started.
    pub fn call_started(&mut self, id: &str, name: &str) {
        self.running.push((id.to_owned(), name.to_owned()));
        self.show_running();
    }

    /// A tool call finished.
    pub fn call_finished(&mut self, id: &str) {
        self.running.retain(|(running, _)| running != id);
        if self.running.is_empty() {
            self.waiting();
        } else {
            self.show_running();
        }
    }

    /// The answer is being written: no spinner (it would share the line).
    pub fn writing(&mut self, at_line_start: bool) {
        self.spinner = None;
        self.allowed_at(at_line_start);
    }

    /// Whether spinners may show again (the answer's line is complete).
    fn allowed_at(&mut self, at_line_start: bool) {
        self.allowed = at_line_start && super::enabled();
    }

    /// Clears the spinner.
    pub fn stop(&mut self) {
        self.spinner = None;
    }

    fn show_running(&mut self) {
        let names: Vec<&str> = self.running.iter().map(|(_, n)| n.as_str()).collect();
        let message = format!("running {}", names.join(", "));
        self.show(message);
    }

    fn show(&mut self, message: String) {
        if !self.allowed {
            return;
        }
        if self.message == message && self.spinner.as_ref().is_some_and(|s| !s.is_gone()) {
            return;
        }
        // A new spinner for a new state, so its clock starts now.
        self.spinner = None;
        self.spinner = Some(Spinner::quiet(message.clone()));
        self.message = message;
    }
}
