//! The local web server of `sysmeter live` (tiny_http): a fixed pool of [`WORKERS`] threads
//! answers the page, `/api/snapshot`, `/metrics`, `/debug/pprof/profile`, and the only two
//! actions, pause and save. Every request needs the token (`?token=` or `Authorization:
//! Bearer`), else 401. A viewer only ever reads a view the session already built; a slow
//! or vanished one holds one worker at most, never the session (which runs on its own
//! thread and takes the state's lock only to add a second).

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use tiny_http::{Header, Method, Request, Response};

use super::Served;
use crate::report::live::{PAGE, json, metrics};

/// Requests answered at once; more wait in the server's queue.
pub const WORKERS: usize = 8;

/// The longest profile `/debug/pprof/profile` records: the seconds the window keeps.
const MAX_PROFILE_S: u64 = crate::diagnose::live::window::KEEP_SECONDS as u64;

/// The running server; dropping it stops the workers.
pub struct Server {
    server: Arc<tiny_http::Server>,
    workers: Vec<JoinHandle<()>>,
    /// Where it listens.
    pub addr: SocketAddr,
}

/// Listens on `bind:port` and answers with `served`.
pub fn start(bind: IpAddr, port: u16, served: Arc<Served>) -> anyhow::Result<Server> {
    let server = tiny_http::Server::http(SocketAddr::new(bind, port)).map_err(|e| {
        anyhow::anyhow!(
            "cannot listen on {bind}:{port}: {e}; choose another --port (0 takes a free one)"
        )
    })?;
    let addr = server
        .server_addr()
        .to_ip()
        .ok_or_else(|| anyhow::anyhow!("the server listens on no IP address"))?;
    let server = Arc::new(server);
    let workers = (0..WORKERS)
        .map(|_| {
            let (server, served) = (Arc::clone(&server), Arc::clone(&served));
            std::thread::spawn(move || {
                while let Ok(request) = server.recv() {
                    answer(&served, request);
                }
            })
        })
        .collect();
    Ok(Server {
        server,
        workers,
        addr,
    })
}

impl Drop for Server {
    fn drop(&mut self) {
        for _ in &self.workers {
            self.server.unblock();
        }
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

/// The query parameters of `url`.
fn query(url: &str) -> HashMap<String, String> {
    let Some((_, q)) = url.split_once('?') else {
        return HashMap::new();
    };
    q.split('&')
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (k.to_string(), v.to_string())
        })
        .collect()
}

/// Whether the request carries the token (always, when there is none).
fn authorised(served: &Served, request: &Request, q: &HashMap<String, String>) -> bool {
    let Some(token) = &served.token else {
        return true;
    };
    let bearer = request
        .headers()
        .iter()
        .any(|h| h.field.equiv("Authorization") && h.value.as_str() == format!("Bearer {token}"));
    bearer || q.get("token") == Some(token)
}

type Answer = Response<std::io::Cursor<Vec<u8>>>;

/// `response` with the header `name: value` (the values here are fixed ASCII, always valid).
fn with(response: Answer, name: &str, value: &str) -> Answer {
    match Header::from_bytes(name.as_bytes(), value.as_bytes()) {
        Ok(h) => response.with_header(h),
        Err(()) => response,
    }
}

fn text(status: u16, content_type: &str, body: String) -> Answer {
    let response = Response::from_data(body.into_bytes()).with_status_code(status);
    with(
        with(response, "Content-Type", content_type),
        "Cache-Control",
        "no-store",
    )
}

/// The window a request names: `10`, `60` (seconds) or `all` (since the start).
fn span(q: &HashMap<String, String>) -> Option<u64> {
    match q.get("window").map(String::as_str) {
        Some("all") => None,
        Some(s) => Some(s.parse().unwrap_or(10).clamp(1, MAX_PROFILE_S)),
        None => Some(10),
    }
}

fn answer(served: &Served, request: Request) {
    let url = request.url().to_string();
    let q = query(&url);
    let path = url.split('?').next().unwrap_or("");
    let response = if !authorised(served, &request, &q) {
        text(
            401,
            "text/plain",
            "401: this view needs its token: open the URL sysmeter live printed (…?token=…), \
             or send Authorization: Bearer TOKEN\n"
                .into(),
        )
    } else {
        route(served, request.method(), path, &q)
    };
    // A viewer that went away cannot be answered: nothing to do.
    let _ = request.respond(response);
}

fn route(served: &Served, method: &Method, path: &str, q: &HashMap<String, String>) -> Answer {
    match (method, path) {
        (Method::Get, "/") => text(200, "text/html; charset=utf-8", PAGE.to_string()),
        (Method::Get, "/api/snapshot") => {
            text(200, "application/json", json(&served.live.view(span(q))))
        }
        (Method::Get, "/metrics") => text(
            200,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
            metrics(&served.live.view(Some(10))),
        ),
        (Method::Post, "/api/pause") => {
            served.live.pause(q.get("paused").is_some_and(|v| v == "1"));
            text(200, "application/json", "{}".into())
        }
        (Method::Post, "/api/save") => match served.save(span(q)) {
            Ok(id) => text(200, "application/json", format!("{{\"id\":\"{id}\"}}")),
            Err(e) => text(500, "application/json", json_error(&e.to_string())),
        },
        (Method::Get, "/debug/pprof/profile") => profile(served, q),
        _ => text(404, "text/plain", format!("404: no such page: {path}\n")),
    }
}

fn json_error(message: &str) -> String {
    serde_json::json!({ "error": message }).to_string()
}

/// A pprof CPU profile of the next `seconds` (default 30, as Go's), once they passed.
fn profile(served: &Served, q: &HashMap<String, String>) -> Answer {
    let seconds = q
        .get("seconds")
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(30)
        .clamp(1, MAX_PROFILE_S);
    let (from, _) = served.live.now();
    loop {
        let (now, ended) = served.live.now();
        if now >= from + seconds || ended {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    match served.pprof(from) {
        Ok(bytes) => with(
            Response::from_data(bytes),
            "Content-Type",
            "application/octet-stream",
        ),
        Err(e) => text(500, "text/plain", format!("{e}\n")),
    }
}

/// What serializes the store's use between workers.
pub type SharedStore = Mutex<Option<crate::store::Store>>;
