//! The server's one log writer: every line `serve` logs on stderr (a refusal, a finished
//! test, a failed accept) passes the one escaping of outside text (`model::visible`) here,
//! so a peer address, a token, a hostname or request text a client chose never writes a
//! control or bidi character to the operator's terminal or log, whichever line carries it.
//! Best effort, like every stderr line (`sysmeter_sys::stdio::errln`): a dead log pipe never
//! stops the server. Depends on `model::visible` only.

/// Writes `line` to stderr, escaped.
pub fn line(line: impl std::fmt::Display) {
    sysmeter_sys::stdio::errln(shown(&line.to_string()));
}

/// `text` as the log shows it.
fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    crate::model::visible::visible(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_text_in_a_log_line_is_shown_escaped() {
        let hostile =
            "serve: [::1]:9: refused: token=\u{1b}]0;x\u{7} from good\u{202e}evil \u{9b}2J";
        let escaped = shown(hostile);
        assert!(
            !escaped.chars().any(crate::model::visible::acts),
            "{escaped}"
        );
        assert!(escaped.contains("\\u001b]0;x\\u0007"), "{escaped}");
        assert!(escaped.contains("good\\u202eevil"), "{escaped}");
        assert_eq!(
            shown("serve: 127.0.0.1:5: echo for 1.0 s"),
            "serve: 127.0.0.1:5: echo for 1.0 s"
        );
    }

    /// No other file of the server writes to stderr, so no log line can skip the escaping.
    #[test]
    fn every_log_line_of_the_server_passes_here() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/server");
        let mut writers = Vec::new();
        for entry in std::fs::read_dir(&dir).expect("list src/server").flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(entry.path()).expect("read");
            let writes = ["stdio::err", "eprint", "stderr()", "console::"]
                .iter()
                .any(|w| text.contains(w));
            if writes && name != "log.rs" {
                writers.push(name);
            }
        }
        assert!(
            writers.is_empty(),
            "writing stderr past server::log: {writers:?}"
        );
    }
}
