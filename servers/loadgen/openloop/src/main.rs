//! loadlab-openloop: an open-loop HTTP/1.1 load generator for one core.
//!
//! Usage: openloop --url http://HOST:PORT/PATH --rate RPS --duration S [--connections N]
//!        [--arrivals constant|poisson] [--seed N] [--timeout S] [--connection-per-request]
//!        [--late-after-us US] [--report PATH]
//!
//! Every request has an intended send time on the schedule; its latency runs
//! from that time to the last byte of its answer. The report (JSON) carries
//! the counts, the latency HdrHistogram (microseconds, V2 deflate, base64),
//! per-second counts and the generator's check of itself: how late requests
//! went out and the CPU it used. README.md describes the model.

mod engine;
mod http;
mod schedule;
mod sockets;

use std::fmt::Write as _;
use std::net::{SocketAddr, SocketAddrV4, ToSocketAddrs};
use std::process::ExitCode;

use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

use engine::{Config, NS_PER_S, Outcome};
use schedule::Arrivals;

const USAGE: &str = "usage: openloop --url http://HOST:PORT/PATH --rate RPS --duration SECONDS [--connections N] \
[--arrivals constant|poisson] [--seed N] [--timeout SECONDS] [--connection-per-request] [--late-after-us US] [--report PATH]";

struct Options {
    url: String,
    host_port: String,
    path: String,
    config: Config,
    arrivals_name: &'static str,
    report: Option<String>,
}

fn parse_options(args: &[String]) -> Result<Options, String> {
    let mut values = std::collections::HashMap::new();
    let mut per_request = false;
    let mut iter = args.iter();
    while let Some(flag) = iter.next() {
        match flag.as_str() {
            "--connection-per-request" => per_request = true,
            "--url" | "--rate" | "--duration" | "--connections" | "--arrivals" | "--seed" | "--timeout" | "--late-after-us" | "--report" => {
                let value = iter.next().ok_or(format!("{flag} needs a value"))?;
                values.insert(flag.trim_start_matches("--").to_string(), value.clone());
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    let number = |name: &str, default: Option<f64>, low: f64, high: f64| -> Result<f64, String> {
        let value = match values.get(name) {
            Some(text) => text.parse::<f64>().map_err(|_| format!("--{name} {text:?} is not a number"))?,
            None => default.ok_or(format!("--{name} is required"))?,
        };
        if !(low..=high).contains(&value) {
            return Err(format!("--{name} {value} is outside {low}..={high}"));
        }
        Ok(value)
    };
    let url = values.get("url").ok_or("--url is required")?.clone();
    let rest = url.strip_prefix("http://").ok_or(format!("--url {url:?}: only http:// is spoken"))?;
    let (host_port, path) = match rest.find('/') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, "/"),
    };
    let with_port = if host_port.contains(':') { host_port.to_string() } else { format!("{host_port}:80") };
    let address = with_port
        .to_socket_addrs()
        .map_err(|e| format!("--url {url:?}: {e}"))?
        .find_map(|a| match a {
            SocketAddr::V4(v4) => Some(v4),
            SocketAddr::V6(_) => None,
        })
        .ok_or(format!("--url {url:?}: no IPv4 address"))?;
    let (arrivals, arrivals_name) = match values.get("arrivals").map(String::as_str).unwrap_or("constant") {
        "constant" => (Arrivals::Constant, "constant"),
        "poisson" => (Arrivals::Poisson, "poisson"),
        other => return Err(format!("--arrivals {other:?}: constant or poisson")),
    };
    let duration_s = number("duration", None, 0.001, 86_400.0)?;
    let config = Config {
        address: SocketAddrV4::new(*address.ip(), address.port()),
        request: http::request_bytes(host_port, path, per_request),
        rate_rps: number("rate", None, 0.001, 10_000_000.0)?,
        arrivals,
        seed: number("seed", Some(1.0), 0.0, 9.0e15)? as u64,
        duration_ns: (duration_s * 1e9) as u64,
        connections: number("connections", Some(1000.0), 1.0, 1_000_000.0)? as usize,
        timeout_ns: (number("timeout", Some(2.0), 0.001, 3600.0)? * 1e9) as u64,
        connection_per_request: per_request,
        late_after_ns: (number("late-after-us", Some(1000.0), 1.0, 3.6e9)? * 1000.0) as u64,
    };
    Ok(Options { url: url.clone(), host_port: host_port.to_string(), path: path.to_string(), config, arrivals_name, report: values.get("report").cloned() })
}

fn encode_histogram(histogram: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new().serialize(histogram, &mut bytes).expect("histogram serializes");
    base64(&bytes)
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            out.push(if i <= chunk.len() { ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char } else { '=' });
        }
    }
    out
}

fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => write!(out, "\\u{:04x}", c as u32).unwrap(),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// p50, p99, p99.9 and max of a histogram, divided by `unit` (so µs from ns with 1000).
fn quantiles(histogram: &Histogram<u64>, unit: f64) -> String {
    if histogram.is_empty() {
        return "null".into();
    }
    let at = |q: f64| histogram.value_at_quantile(q) as f64 / unit;
    format!("{{\"p50\": {:.3}, \"p90\": {:.3}, \"p99\": {:.3}, \"p99_9\": {:.3}, \"max\": {:.3}, \"mean\": {:.3}}}",
        at(0.5), at(0.9), at(0.99), at(0.999), histogram.max() as f64 / unit, histogram.mean() / unit)
}

fn report(options: &Options, out: &Outcome) -> String {
    let config = &options.config;
    let duration_s = config.duration_ns as f64 / NS_PER_S as f64;
    let errors_total: u64 = out.errors.values().sum();
    let busy = (out.cpu_user_s + out.cpu_system_s - out.spin_s).max(0.0) / out.window_wall_s.max(1e-9);
    let mut text = String::from("{\n");
    let mut field = |name: &str, value: String| writeln!(text, "  {}: {value},", json_string(name)).unwrap();
    field("generator", json_string("loadlab-openloop"));
    field("version", json_string(env!("CARGO_PKG_VERSION")));
    field("url", json_string(&options.url));
    field("host", json_string(&options.host_port));
    field("path", json_string(&options.path));
    field("rate_asked_rps", format!("{}", config.rate_rps));
    field("arrivals", json_string(options.arrivals_name));
    field("seed", config.seed.to_string());
    field("duration_s", format!("{duration_s}"));
    field("connections", config.connections.to_string());
    field("timeout_s", format!("{}", config.timeout_ns as f64 / 1e9));
    field("connection_per_request", config.connection_per_request.to_string());
    field("late_after_us", format!("{}", config.late_after_ns as f64 / 1000.0));
    field("scheduled", out.scheduled.to_string());
    field("dispatched", out.dispatched.to_string());
    field("answered", out.answered.to_string());
    field("ok", out.ok.to_string());
    field("unsent", out.unsent.to_string());
    field("late", out.late.to_string());
    field("late_generator", out.late_generator.to_string());
    field("retried", out.retried.to_string());
    field("closes_forced", out.closes_forced.to_string());
    field("errors_total", errors_total.to_string());
    let codes: Vec<String> = out.status_codes.iter().map(|(code, n)| format!("\"{code}\": {n}")).collect();
    field("status_codes", format!("{{{}}}", codes.join(", ")));
    let errors: Vec<String> = out.errors.iter().map(|(kind, n)| format!("\"{kind}\": {n}")).collect();
    field("errors", format!("{{{}}}", errors.join(", ")));
    let samples: Vec<String> = out.error_samples.iter().map(|s| json_string(s)).collect();
    field("error_samples", format!("[{}]", samples.join(", ")));
    field("connections_opened", out.connections_opened.to_string());
    field("connections_open_max", out.connections_open_max.to_string());
    field("preconnected", out.preconnected.to_string());
    field("preconnect_s", format!("{:.6}", out.preconnect_s));
    field("in_flight_max", out.in_flight_max.to_string());
    field("body_bytes", out.body_bytes.to_string());
    field("window_wall_s", format!("{:.6}", out.window_wall_s));
    field("cpu_user_s", format!("{:.6}", out.cpu_user_s));
    field("cpu_system_s", format!("{:.6}", out.cpu_system_s));
    field("spin_s", format!("{:.6}", out.spin_s));
    field("run_queue_wait_s", out.run_queue_wait_s.map_or("null".into(), |s| format!("{s:.6}")));
    field("cpu_busy_share", format!("{busy:.4}"));
    field("dispatched_rate_rps", format!("{:.3}", out.dispatched as f64 / duration_s));
    field("throughput_rps", format!("{:.3}", out.ok as f64 / duration_s));
    field("latency_us", quantiles(&out.latency_us, 1.0));
    field("send_delay_us", quantiles(&out.send_delay_ns, 1000.0));
    field("generator_delay_us", quantiles(&out.generator_delay_ns, 1000.0));
    field("latency_histogram_hdr", json_string(&encode_histogram(&out.latency_us)));
    let seconds: Vec<String> = out.seconds.iter().enumerate().map(|(i, s)| format!(
        "    {{\"second\": {}, \"scheduled\": {}, \"dispatched\": {}, \"ok\": {}, \"errors\": {}, \"late\": {}}}",
        i + 1, s.scheduled, s.dispatched, s.ok, s.errors, s.late)).collect();
    writeln!(text, "  \"per_second\": [\n{}\n  ]\n}}", seconds.join(",\n")).unwrap();
    text
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() || args.iter().any(|a| a == "-h" || a == "--help") {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    }
    let options = match parse_options(&args) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("openloop: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let outcome = match engine::run(&options.config) {
        Ok(outcome) => outcome,
        Err(error) => {
            eprintln!("openloop: {error}");
            return ExitCode::from(1);
        }
    };
    let text = report(&options, &outcome);
    match &options.report {
        Some(path) => {
            let temporary = format!("{path}.tmp");
            if let Err(error) = std::fs::write(&temporary, &text).and_then(|_| std::fs::rename(&temporary, path)) {
                eprintln!("openloop: cannot write {path}: {error}");
                return ExitCode::from(1);
            }
        }
        None => print!("{text}"),
    }
    eprintln!(
        "openloop: {} scheduled, {} sent, {} ok, {} errors, {} unsent; p50 {} us, p99 {} us; own delay p99 {:.1} us; cpu {:.0}% (polling for due requests left out)",
        outcome.scheduled, outcome.dispatched, outcome.ok, outcome.errors.values().sum::<u64>(), outcome.unsent,
        outcome.latency_us.value_at_quantile(0.5), outcome.latency_us.value_at_quantile(0.99),
        outcome.generator_delay_ns.value_at_quantile(0.99) as f64 / 1000.0,
        100.0 * (outcome.cpu_user_s + outcome.cpu_system_s - outcome.spin_s).max(0.0) / outcome.window_wall_s.max(1e-9)
    );
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard_alphabet_and_padding() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn bad_options_are_named() {
        let args = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert!(parse_options(&args("--rate 10 --duration 1")).err().unwrap().contains("--url"));
        assert!(parse_options(&args("--url https://x/ --rate 10 --duration 1")).err().unwrap().contains("http://"));
        assert!(parse_options(&args("--url http://127.0.0.1:1/ --rate 0 --duration 1")).err().unwrap().contains("--rate"));
        assert!(parse_options(&args("--url http://127.0.0.1:1/ --rate 5 --duration 1 --arrivals bursty")).err().unwrap().contains("poisson"));
        let options = parse_options(&args("--url http://127.0.0.1:8080/plaintext --rate 5 --duration 2 --connection-per-request")).unwrap();
        assert_eq!(options.path, "/plaintext");
        assert_eq!(options.config.duration_ns, 2 * NS_PER_S);
        assert!(String::from_utf8(options.config.request).unwrap().contains("Connection: close"));
    }
}
