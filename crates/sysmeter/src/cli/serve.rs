//! Arguments of `sysmeter serve`, the remote end of the net group.

use std::net::SocketAddr;

use clap::Args;

/// `sysmeter serve`.
#[derive(Debug, Args)]
#[command(
    after_help = "Answers the net group of `sysmeter bench --remote HOST[:PORT]` on \
    another host: TCP echo, sink, source and accept/close tests and a UDP responder on the \
    same port (default 7388). It binds 127.0.0.1 unless told otherwise: to be reachable from \
    another host, pass --bind 0.0.0.0:7388 and --token T (or --no-token, on a network you \
    trust). The token is not encryption: use it on trusted networks or through a tunnel. \
    Prints the address it listens on, then on stderr one line per finished test (accept \
    tests, which come by the hundred, excepted) and per refusal, at most one a minute per \
    source address. Ctrl-C or SIGTERM closes every connection and exits with code 130."
)]
pub struct ServeArgs {
    /// Address and port for TCP and UDP (port 0 picks a free one, printed at start).
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:7388")]
    pub bind: SocketAddr,
    /// Shared secret every client must send (clients pass it with `bench --token T` or
    /// SYSMETER_TOKEN); when not given, SYSMETER_TOKEN of this environment. Required for an
    /// address other than loopback, unless --no-token.
    #[arg(long, value_name = "T")]
    pub token: Option<String>,
    /// Serve without a token on an address other than loopback (anyone who reaches the port
    /// may run tests); also ignores SYSMETER_TOKEN.
    #[arg(long, conflicts_with = "token")]
    pub no_token: bool,
    /// Connections served at once; more are refused with an error.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub max_clients: u32,
    /// Connections one source address (IPv6: one /64) may hold at once; must be below
    /// --max-clients [default: half of --max-clients, at least 4, at most --max-clients - 1]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub max_per_source: Option<u32>,
    /// Longest any one test may run, seconds.
    #[arg(long, value_name = "S", default_value_t = 60, value_parser = clap::value_parser!(u32).range(1..=3600))]
    pub max_test_secs: u32,
    /// Seconds a client may take to send its request line before it is refused.
    #[arg(long, value_name = "S", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=600))]
    pub hello_timeout: u32,
}
