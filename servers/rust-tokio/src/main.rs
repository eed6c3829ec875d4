//! rust-tokio serves the loadlab contract (servers/CONTRACT.md) with axum on
//! tokio's multi-thread runtime: every connection is a task, tasks are
//! spread over `WORKER_THREADS` worker threads (work stealing), and `/io`
//! yields to the runtime with `tokio::time::sleep`. `/cpu` runs its loop on
//! the worker thread like any other handler code (no `spawn_blocking`).

use std::{num::NonZeroUsize, process, thread, time::Duration};

use axum::{
    Router,
    body::Body,
    extract::RawQuery,
    http::{
        HeaderValue, StatusCode,
        header::{ALLOW, CONTENT_TYPE, SERVER},
    },
    response::Response,
    routing::get,
    serve::ListenerExt,
};
use bytes::Bytes;
use serde::Serialize;

const SERVER_NAME: &str = "rust-tokio";
const MODEL: &str = "tokio-multi-thread-tasks";
const IO_MS_MAX: u64 = 10_000;
const CPU_N_MAX: u64 = 10_000_000;
const CPU_SEED: u64 = 0xcbf29ce484222325;

const TEXT_PLAIN: &str = "text/plain";
const APPLICATION_JSON: &str = "application/json";

#[derive(Serialize)]
struct User {
    id: u32,
    name: &'static str,
    email: &'static str,
    age: u32,
    active: bool,
}

const fn user(id: u32, name: &'static str, email: &'static str, age: u32, active: bool) -> User {
    User { id, name, email, age, active }
}

static USERS: [User; 10] = [
    user(1, "Ada Lovelace", "ada.lovelace@example.com", 36, true),
    user(2, "Alan Turing", "alan.turing@example.com", 41, true),
    user(3, "Grace Hopper", "grace.hopper@example.com", 85, false),
    user(4, "Edsger Dijkstra", "edsger.dijkstra@example.com", 72, true),
    user(5, "Barbara Liskov", "barbara.liskov@example.com", 86, true),
    user(6, "Donald Knuth", "donald.knuth@example.com", 88, false),
    user(7, "Margaret Hamilton", "margaret.hamilton@example.com", 90, true),
    user(8, "Ken Thompson", "ken.thompson@example.com", 83, true),
    user(9, "Frances Allen", "frances.allen@example.com", 88, false),
    user(10, "Dennis Ritchie", "dennis.ritchie@example.com", 70, true),
];

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
}

#[derive(Serialize)]
struct IoResult {
    io_ms: u64,
}

#[derive(Serialize)]
struct CpuResult {
    n: u64,
    hash: String,
}

#[derive(Serialize)]
struct MixedResult {
    n: u64,
    hash: String,
    io_ms: u64,
}

#[derive(Serialize)]
struct Settings {
    #[serde(rename = "WORKER_THREADS")]
    worker_threads: usize,
    #[serde(rename = "HOST")]
    host: String,
    #[serde(rename = "PORT")]
    port: String,
}

#[derive(Serialize)]
struct Health {
    server: &'static str,
    runtime: &'static str,
    runtime_version: &'static str,
    model: &'static str,
    settings: Settings,
    contract: u32,
    tokio_version: &'static str,
    axum_version: &'static str,
    hyper_version: &'static str,
    available_parallelism: usize,
}

/// Effective configuration, fixed at start.
#[derive(Clone)]
struct Config {
    host: String,
    port: u16,
    worker_threads: usize,
    available_parallelism: usize,
}

/// The contract's xorshift loop: `<<` on u64 drops the bits shifted past
/// bit 63, `>>` is logical, and XOR cannot overflow.
fn cpu_hash(rounds: u64) -> u64 {
    let mut x = CPU_SEED;
    for i in 0..rounds {
        x ^= i;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

fn respond(status: StatusCode, content_type: &'static str, body: Bytes) -> Response {
    // A body of known length: axum/hyper send Content-Length, never chunked;
    // hyper adds the Date header (refreshed every second).
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(SERVER, HeaderValue::from_static(SERVER_NAME));
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn json<T: Serialize>(status: StatusCode, value: &T) -> Response {
    match serde_json::to_vec(value) {
        Ok(body) => respond(status, APPLICATION_JSON, Bytes::from(body)),
        Err(_) => respond(
            StatusCode::INTERNAL_SERVER_ERROR,
            APPLICATION_JSON,
            Bytes::from_static(br#"{"error":"internal error"}"#),
        ),
    }
}

fn error(status: StatusCode, message: &str) -> Response {
    json(status, &ErrorBody { error: message })
}

fn hex_value(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    }
}

/// URL query-component decoding (`+` is a space, `%XX` a byte); `None` for
/// a malformed escape, as Go's `url.QueryUnescape`.
fn unescape(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let high = hex_value(*bytes.get(i + 1)?)?;
                let low = hex_value(*bytes.get(i + 2)?)?;
                out.push(high << 4 | low);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            byte => {
                out.push(byte);
                i += 1;
            }
        }
    }
    Some(out)
}

/// The value of the first occurrence of `name` in a raw query, decoded.
/// Pairs are separated by `&` only, and a part with a malformed escape is
/// kept literally (CONTRACT.md, "Parameters"), so `ms=%zz` and `ms=1;x=2`
/// are present but not integers.
fn find_param(query: &str, name: &str) -> Option<Vec<u8>> {
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = unescape(key).unwrap_or_else(|| key.as_bytes().to_vec());
        if key != name.as_bytes() {
            continue;
        }
        return Some(unescape(value).unwrap_or_else(|| value.as_bytes().to_vec()));
    }
    None
}

/// A contract parameter: its value, or the error message the contract
/// prescribes. Never overflows: digits stop counting once above `max`.
fn int_param(query: Option<&str>, name: &str, max: u64) -> Result<u64, String> {
    let raw = match find_param(query.unwrap_or(""), name) {
        Some(raw) if !raw.is_empty() => raw,
        _ => return Err(format!("parameter {name} is required")),
    };
    if !raw.iter().all(u8::is_ascii_digit) {
        return Err(format!("parameter {name} must be a non-negative integer"));
    }
    let mut value: u64 = 0;
    for digit in raw {
        // Once above max the value only grows, so stopping here is exact.
        value = value * 10 + u64::from(digit - b'0');
        if value > max {
            return Err(format!("parameter {name} must be at most {max}"));
        }
    }
    Ok(value)
}

async fn plaintext() -> Response {
    respond(StatusCode::OK, TEXT_PLAIN, Bytes::from_static(b"Hello, World!"))
}

/// S1's 200-byte answer: "0123456789" twenty times.
const PLAINTEXT_200: &[u8; 200] = b"01234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789";

async fn plaintext200() -> Response {
    respond(StatusCode::OK, TEXT_PLAIN, Bytes::from_static(PLAINTEXT_200))
}

async fn json_route() -> Response {
    json(StatusCode::OK, &Message { message: "Hello, World!" })
}

async fn api_users() -> Response {
    json(StatusCode::OK, &USERS)
}

async fn io_route(RawQuery(query): RawQuery) -> Response {
    match int_param(query.as_deref(), "ms", IO_MS_MAX) {
        Ok(ms) => {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            json(StatusCode::OK, &IoResult { io_ms: ms })
        }
        Err(message) => error(StatusCode::BAD_REQUEST, &message),
    }
}

async fn cpu_route(RawQuery(query): RawQuery) -> Response {
    match int_param(query.as_deref(), "n", CPU_N_MAX) {
        Ok(n) => json(StatusCode::OK, &CpuResult { n, hash: cpu_hash(n).to_string() }),
        Err(message) => error(StatusCode::BAD_REQUEST, &message),
    }
}

async fn mixed_route(RawQuery(query): RawQuery) -> Response {
    let query = query.as_deref();
    let params = int_param(query, "cpu", CPU_N_MAX)
        .and_then(|n| int_param(query, "io", IO_MS_MAX).map(|ms| (n, ms)));
    match params {
        Ok((n, ms)) => {
            let hash = cpu_hash(n).to_string();
            tokio::time::sleep(Duration::from_millis(ms)).await;
            json(StatusCode::OK, &MixedResult { n, hash, io_ms: ms })
        }
        Err(message) => error(StatusCode::BAD_REQUEST, &message),
    }
}

async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "not found")
}

async fn method_not_allowed() -> Response {
    let mut response = error(StatusCode::METHOD_NOT_ALLOWED, "method not allowed");
    // axum leaves an Allow header set by the handler alone.
    response.headers_mut().insert(ALLOW, HeaderValue::from_static("GET"));
    response
}

fn router(config: Config) -> Router {
    let health = move || {
        let config = config.clone();
        async move {
            json(
                StatusCode::OK,
                &Health {
                    server: SERVER_NAME,
                    runtime: "rust",
                    runtime_version: env!("LOADLAB_RUSTC_VERSION"),
                    model: MODEL,
                    settings: Settings {
                        worker_threads: config.worker_threads,
                        host: config.host,
                        port: config.port.to_string(),
                    },
                    contract: 1,
                    tokio_version: env!("LOADLAB_TOKIO_VERSION"),
                    axum_version: env!("LOADLAB_AXUM_VERSION"),
                    hyper_version: env!("LOADLAB_HYPER_VERSION"),
                    available_parallelism: config.available_parallelism,
                },
            )
        }
    };
    // `get` also answers HEAD; any other method on a known path goes to the
    // method-not-allowed fallback, any unknown path to the fallback.
    Router::new()
        .route("/plaintext", get(plaintext))
        .route("/plaintext200", get(plaintext200))
        .route("/json", get(json_route))
        .route("/api/users", get(api_users))
        .route("/io", get(io_route))
        .route("/cpu", get(cpu_route))
        .route("/mixed", get(mixed_route))
        .route("/health", get(health))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
}

/// The listen queue every server in servers/ asks for (CONTRACT.md): the kernel's net.core.somaxconn here.
/// tokio's TcpListener::bind would ask for 1,024, and under a connection per request a burst past the queue
/// costs each dropped client a one-second SYN retransmission, a difference of setting, not of runtime.
const LISTEN_BACKLOG: u32 = 4096;

/// Binds and listens as TcpListener::bind does (the first address `host` resolves to, SO_REUSEADDR), with
/// the contract's backlog.
async fn listen(host: &str, port: u16) -> std::io::Result<tokio::net::TcpListener> {
    let address = tokio::net::lookup_host((host, port)).await?.next().ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::AddrNotAvailable, "the host resolves to no address")
    })?;
    let socket = if address.is_ipv4() { tokio::net::TcpSocket::new_v4()? } else { tokio::net::TcpSocket::new_v6()? };
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(LISTEN_BACKLOG)
}

fn fail(message: String) -> ! {
    eprintln!("{SERVER_NAME}: {message}");
    process::exit(2);
}

fn env_or(name: &str, default: &str) -> String {
    match std::env::var(name) {
        Ok(value) if !value.is_empty() => value,
        _ => default.to_owned(),
    }
}

fn main() {
    // CPUs this process may run on (sched affinity, i.e. the container's
    // cpuset, and cgroup CPU quota), as tokio's own default would be.
    let available = thread::available_parallelism().map_or(1, NonZeroUsize::get);
    let worker_threads = match std::env::var("WORKER_THREADS") {
        Ok(value) if !value.is_empty() => match value.parse::<usize>() {
            Ok(n) if (1..=1024).contains(&n) => n,
            _ => fail(format!("WORKER_THREADS must be an integer from 1 to 1024, got {value:?}")),
        },
        _ => available,
    };
    let host = env_or("HOST", "0.0.0.0");
    let port_text = env_or("PORT", "8080");
    let port = port_text
        .parse::<u16>()
        .unwrap_or_else(|_| fail(format!("PORT must be a TCP port, got {port_text:?}")));
    let config = Config { host: host.clone(), port, worker_threads, available_parallelism: available };

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(worker_threads)
        .thread_name("tokio-worker")
        .enable_all()
        .build()
        .unwrap_or_else(|err| fail(format!("cannot start the tokio runtime: {err}")));

    runtime.block_on(async move {
        let listener = listen(&host, port)
            .await
            .unwrap_or_else(|err| fail(format!("cannot listen on {host}:{port}: {err}")))
            .tap_io(|stream| {
                // Small responses: send them now rather than wait for an ACK.
                let _ = stream.set_nodelay(true);
            });
        eprintln!(
            "{SERVER_NAME} ({}, tokio {}, axum {}) listening on {host}:{port} (WORKER_THREADS={worker_threads})",
            env!("LOADLAB_RUSTC_VERSION"),
            env!("LOADLAB_TOKIO_VERSION"),
            env!("LOADLAB_AXUM_VERSION"),
        );
        if let Err(err) = axum::serve(listener, router(config)).await {
            fail(format!("server error: {err}"));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_vectors() {
        for (n, hash) in [
            (0, 14695981039346656037u64),
            (1, 4156492551529958947),
            (2, 278897846428681918),
            (3, 6555612005006764081),
            (10, 7708545552399661815),
            (1000, 13253976860997364882),
            (100000, 1508644155094704437),
            (1000000, 16349668788851284727),
        ] {
            assert_eq!(cpu_hash(n), hash, "n={n}");
        }
    }

    #[test]
    fn params() {
        let n = |q: &str| int_param(Some(q), "n", CPU_N_MAX);
        assert_eq!(n("n=5"), Ok(5));
        assert_eq!(n("x=1&n=0007&n=9"), Ok(7));
        assert_eq!(n("n=%31%32"), Ok(12));
        assert_eq!(n("n=10000000"), Ok(10_000_000));
        assert_eq!(n(""), Err("parameter n is required".into()));
        assert_eq!(n("n="), Err("parameter n is required".into()));
        assert_eq!(n("n=%zz"), Err("parameter n must be a non-negative integer".into()));
        assert_eq!(n("n=%zz&n=3"), Err("parameter n must be a non-negative integer".into()));
        assert_eq!(n("n=1;x=2"), Err("parameter n must be a non-negative integer".into()));
        assert_eq!(n("n=-1"), Err("parameter n must be a non-negative integer".into()));
        assert_eq!(n("n=1.0"), Err("parameter n must be a non-negative integer".into()));
        assert_eq!(n("n=+1"), Err("parameter n must be a non-negative integer".into()));
        assert_eq!(n("n=10000001"), Err("parameter n must be at most 10000000".into()));
        assert_eq!(
            n("n=99999999999999999999999999999999"),
            Err("parameter n must be at most 10000000".into())
        );
        assert_eq!(n("n=0000000000000000000000000000001"), Ok(1));
    }
}
