//! The token check of `sysmeter serve`: a comparison whose time does not depend on where
//! the tokens differ, and the brake on guessing: a source with failed authentications waits
//! longer before each answer ([`super::sources`] keeps the count), and after too many is
//! refused for a while without its token even being looked at.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use super::sources::Source;
use super::{Shared, TICK};
use crate::wire::protocol::{ErrorCode, Hello, MAX_TOKEN, ProtocolError};

/// Whether `got` equals `want`, in a time that depends only on the lengths (both at most
/// [`MAX_TOKEN`], so the loop length is fixed): every byte is compared, with no early exit
/// at the first difference that would let a client find the token byte by byte by timing.
pub fn same_token(want: &str, got: &str) -> bool {
    let (a, b) = (want.as_bytes(), got.as_bytes());
    let mut diff = u8::from(a.len() != b.len());
    for i in 0..MAX_TOKEN.max(a.len()).max(b.len()) {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= std::hint::black_box(x ^ y);
    }
    diff == 0
}

/// The refusal of a source that failed too often.
pub fn blocked_error(src: Source, left: Duration) -> ProtocolError {
    ProtocolError {
        code: ErrorCode::Auth,
        message: format!(
            "too many failed authentications from {src}; retry in {} s with the token given to `serve --token`",
            left.as_secs().max(1)
        ),
    }
}

/// Check the hello's token, if the server wants one. A source with recent failures is
/// answered only after its delay; a blocked one is refused without a comparison.
pub fn authenticate(h: &Hello, peer: SocketAddr, shared: &Shared) -> Result<(), ProtocolError> {
    let Some(want) = &shared.cfg.token else {
        return Ok(());
    };
    let src = Source::of(peer.ip());
    let delay = shared.sources().auth_delay(src, Instant::now());
    pause(delay, shared);
    let now = Instant::now();
    if let Some(left) = shared.sources().blocked(src, now) {
        return Err(blocked_error(src, left));
    }
    let message = match &h.token {
        Some(got) if same_token(want, got) => {
            shared.sources().auth_ok(src);
            return Ok(());
        }
        Some(_) => "wrong token; pass the one given to `serve --token`",
        None => "this server needs a token; pass the one given to `serve --token`",
    };
    shared.sources().auth_failed(src, now);
    Err(ProtocolError {
        code: ErrorCode::Auth,
        message: message.into(),
    })
}

/// Sleep for `d`, or less when the server stops.
fn pause(d: Duration, shared: &Shared) {
    let until = Instant::now() + d;
    while !shared.stopping() {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        std::thread::sleep(left.min(TICK));
    }
}

#[cfg(test)]
mod tests {
    use super::same_token;

    #[test]
    fn tokens_match_only_when_equal() {
        assert!(same_token("s3cret", "s3cret"));
        assert!(!same_token("s3cret", "s3creT"));
        assert!(!same_token("s3cret", "s3cre"));
        assert!(!same_token("s3cret", "s3crett"));
        assert!(!same_token("s3cret", "Xs3cret"));
        assert!(!same_token("a", ""));
        let long = "x".repeat(200);
        assert!(same_token(&long, &long));
        assert!(!same_token(&long, &long[..199]));
    }
}
