//! The Prometheus text exposition format (0.0.4): `# HELP` / `# TYPE` headers and samples with
//! escaped label values.

use std::fmt::Write as _;

/// A metrics page being written.
#[derive(Debug, Default)]
pub struct Page {
    out: String,
}

impl Page {
    /// Starts a family.
    pub fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.out, "# HELP {name} {help}\n# TYPE {name} {kind}");
    }

    /// An integer sample.
    pub fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: u64) {
        self.head(name, labels);
        let _ = writeln!(self.out, " {value}");
    }

    /// A floating-point sample.
    pub fn sample_f64(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        self.head(name, labels);
        let _ = writeln!(self.out, " {value}");
    }

    /// Appends text that already is in the exposition format (the data-plane families).
    pub fn raw(&mut self, text: &str) {
        self.out.push_str(text);
    }

    /// The page.
    pub fn finish(self) -> String {
        self.out
    }

    fn head(&mut self, name: &str, labels: &[(&str, &str)]) {
        self.out.push_str(name);
        if labels.is_empty() {
            return;
        }
        self.out.push('{');
        for (i, (k, v)) in labels.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            let _ = write!(self.out, "{k}=\"");
            for c in v.chars() {
                match c {
                    '\\' => self.out.push_str("\\\\"),
                    '"' => self.out.push_str("\\\""),
                    '\n' => self.out.push_str("\\n"),
                    c => self.out.push(c),
                }
            }
            self.out.push('"');
        }
        self.out.push('}');
    }
}
