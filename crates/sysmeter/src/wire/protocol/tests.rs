//! Unit tests of the wire codec: round trips, every refusal, and random input.

use super::*;

fn hello(test: Test) -> Hello {
    Hello {
        version: VERSION,
        test,
        token: None,
        secs: None,
        size: None,
    }
}

#[test]
fn hellos_round_trip() {
    for test in [
        Test::Echo,
        Test::Sink,
        Test::Source,
        Test::Accept,
        Test::Udp,
    ] {
        let h = Hello {
            token: Some("s3cr-t".into()),
            secs: Some(7),
            size: Some(65536),
            ..hello(test)
        };
        let line = h.encode();
        assert!(line.ends_with('\n') && line.len() <= MAX_LINE);
        assert_eq!(Hello::parse(line.as_bytes()), Ok(h));
        assert_eq!(
            Hello::parse(hello(test).encode().as_bytes()),
            Ok(hello(test))
        );
    }
    assert_eq!(Hello::parse(b"SYSMETER/1 echo\r\n"), Ok(hello(Test::Echo)));
}

#[test]
fn bad_hellos_are_refused_with_the_right_code() {
    let code = |b: &[u8]| Hello::parse(b).err().map(|e| e.code);
    assert_eq!(code(b"GET / HTTP/1.1\n"), Some(ErrorCode::Malformed));
    assert_eq!(code(b"SYSMETER/x echo\n"), Some(ErrorCode::Malformed));
    assert_eq!(code(b"SYSMETER/2 echo\n"), Some(ErrorCode::Version));
    assert_eq!(code(b"SYSMETER/1 dance\n"), Some(ErrorCode::UnknownTest));
    assert_eq!(code(b"SYSMETER/1\n"), Some(ErrorCode::UnknownTest));
    assert_eq!(
        code(b"SYSMETER/1 echo secs=0\n"),
        Some(ErrorCode::Malformed)
    );
    assert_eq!(
        code(b"SYSMETER/1 echo secs=99999\n"),
        Some(ErrorCode::Malformed)
    );
    assert_eq!(
        code(b"SYSMETER/1 source size=2000000\n"),
        Some(ErrorCode::Malformed)
    );
    assert_eq!(
        code(b"SYSMETER/1 echo token=\n"),
        Some(ErrorCode::Malformed)
    );
    assert_eq!(
        code(b"SYSMETER/1 echo colour=red\n"),
        Some(ErrorCode::Malformed)
    );
    assert_eq!(code(b"SYSMETER/1 echo secs\n"), Some(ErrorCode::Malformed));
    assert_eq!(code(b"SYSMETER/1 \xff\n"), Some(ErrorCode::Malformed));
    let long = format!("SYSMETER/1 echo token={}\n", "a".repeat(MAX_TOKEN + 1));
    assert_eq!(code(long.as_bytes()), Some(ErrorCode::Malformed));
}

/// Asserts that `reply` reads back as itself from its line.
fn assert_round_trips(reply: Reply) {
    assert_eq!(Reply::parse(reply.encode().as_bytes()), Ok(reply));
}

#[test]
fn replies_round_trip() {
    let g = Granted {
        test: Test::Udp,
        secs: 10,
        size: None,
        port: Some(7388),
        cookie: Some(0xdead_beef_0123_4567),
    };
    assert_round_trips(Reply::Ok(g));
    let g = Granted {
        test: Test::Source,
        secs: 3,
        size: Some(131072),
        port: None,
        cookie: None,
    };
    assert_round_trips(Reply::Ok(g));
    let e = ProtocolError {
        code: ErrorCode::Auth,
        message: "wrong token; pass --token".into(),
    };
    assert_round_trips(Reply::Err(e));
    // A message can never break the one-line framing.
    let e = ProtocolError {
        code: ErrorCode::Busy,
        message: "two\nlines".into(),
    };
    assert_eq!(Reply::Err(e).encode().matches('\n').count(), 1);
    assert!(Reply::parse(b"HTTP/1.1 400 Bad Request\n").is_err());
    assert!(Reply::parse(b"ERR nonsense x\n").is_err());
    assert!(Reply::parse(b"OK echo secs=x\n").is_err());
}

#[test]
fn udp_datagrams_carry_cookie_and_clamped_length() {
    let d = udp_request(42, 120, 30);
    assert_eq!(d.len(), UDP_HEADER + 30);
    assert_eq!(udp_parse(&d), Some((42, 120)));
    assert_eq!(
        udp_parse(&udp_request(1, 65000, 0)),
        Some((1, MAX_UDP_REPLY))
    );
    assert_eq!(udp_parse(&udp_request(1, 0, 0)), Some((1, UDP_HEADER)));
    assert_eq!(udp_parse(&d[..9]), None);
}

#[test]
fn random_and_truncated_input_never_panics() {
    let mut rng = fastrand::Rng::with_seed(4);
    let valid = hello(Test::Source).encode().into_bytes();
    for i in 0..20_000 {
        let bytes: Vec<u8> = if i % 2 == 0 {
            (0..rng.usize(0..80)).map(|_| rng.u8(..)).collect()
        } else {
            valid[..rng.usize(0..valid.len())].to_vec()
        };
        let _ = Hello::parse(&bytes);
        let _ = Reply::parse(&bytes);
        let _ = udp_parse(&bytes);
    }
}

#[test]
fn every_test_and_error_code_has_one_wire_name() {
    for (t, name) in TESTS {
        assert_eq!((t.as_str(), Test::parse(name)), (name, Some(t)));
    }
    for (c, name) in ERROR_CODES {
        assert_eq!((c.as_str(), ErrorCode::parse(name)), (name, Some(c)));
    }
    assert_eq!(Test::parse("nope"), None);
    assert_eq!(ErrorCode::parse("nope"), None);
    // Exhaustive: a new variant does not compile here until it is counted, and the count
    // must then match its table.
    let tests = |t: Test| match t {
        Test::Echo | Test::Sink | Test::Source | Test::Accept | Test::Udp => 5,
    };
    let codes = |c: ErrorCode| match c {
        ErrorCode::Malformed
        | ErrorCode::Version
        | ErrorCode::TooLong
        | ErrorCode::Timeout
        | ErrorCode::Auth
        | ErrorCode::Busy
        | ErrorCode::UnknownTest => 7,
    };
    assert_eq!(tests(Test::Echo), TESTS.len());
    assert_eq!(codes(ErrorCode::Busy), ERROR_CODES.len());
}
