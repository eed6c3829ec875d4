//! The request's bytes, and an incremental parser of one HTTP/1.1 response.
//!
//! The parser is fed whatever a read returned and says when the response has
//! ended: after Content-Length bytes of body, after the last chunk of a
//! chunked body, or (neither given) when the server closes. It keeps the
//! status line and headers only; the body is counted, not stored.

/// `GET <path> HTTP/1.1` with Host, and `Connection: close` when each request has a connection of its own.
pub fn request_bytes(host_port: &str, path: &str, close: bool) -> Vec<u8> {
    let connection = if close { "Connection: close\r\n" } else { "" };
    format!("GET {path} HTTP/1.1\r\nHost: {host_port}\r\nUser-Agent: loadlab-openloop\r\n{connection}\r\n").into_bytes()
}

const MAX_HEADER_BYTES: usize = 64 * 1024;

#[derive(Debug, PartialEq, Eq)]
pub enum Progress {
    /// More bytes are needed.
    Partial,
    /// The response ended; `close` when the server said it will close the connection.
    Done { status: u16, close: bool },
}

#[derive(Debug)]
enum State {
    Head,
    Body { remaining: u64 },
    ChunkSize,
    ChunkData { remaining: u64 },
    ChunkEnd,
    Trailer,
    UntilClose,
}

#[derive(Debug)]
pub struct ResponseParser {
    state: State,
    line: Vec<u8>,
    status: u16,
    close: bool,
    pub body_bytes: u64,
}

impl Default for ResponseParser {
    fn default() -> Self {
        ResponseParser { state: State::Head, line: Vec::with_capacity(256), status: 0, close: false, body_bytes: 0 }
    }
}

impl ResponseParser {
    pub fn reset(&mut self) {
        self.state = State::Head;
        self.line.clear();
        self.status = 0;
        self.close = false;
        self.body_bytes = 0;
    }

    /// Whether any byte of a response has arrived.
    pub fn started(&self) -> bool {
        !matches!(self.state, State::Head) || !self.line.is_empty()
    }

    /// The server closed the connection: a response read until close ends here.
    pub fn eof(&mut self) -> Result<Progress, String> {
        match self.state {
            State::UntilClose => Ok(Progress::Done { status: self.status, close: true }),
            _ => Err("connection closed before the response ended".into()),
        }
    }

    /// Feed the bytes one read returned. Bytes after the response's end are an error: pipelining is off.
    pub fn feed(&mut self, mut data: &[u8]) -> Result<Progress, String> {
        while !data.is_empty() {
            match self.state {
                State::Head => {
                    let (taken, done) = take_through(&mut self.line, data, b"\r\n\r\n");
                    data = &data[taken..];
                    if !done {
                        if self.line.len() > MAX_HEADER_BYTES {
                            return Err("response head longer than 64 KiB".into());
                        }
                        return Ok(Progress::Partial);
                    }
                    self.state = self.parse_head()?;
                    self.line.clear();
                    if let State::Body { remaining: 0 } = self.state {
                        return self.finished(data);
                    }
                }
                State::Body { remaining } => {
                    let used = remaining.min(data.len() as u64);
                    self.body_bytes += used;
                    data = &data[used as usize..];
                    self.state = State::Body { remaining: remaining - used };
                    if remaining == used {
                        return self.finished(data);
                    }
                }
                State::UntilClose => {
                    self.body_bytes += data.len() as u64;
                    return Ok(Progress::Partial);
                }
                State::ChunkSize => {
                    let (taken, done) = take_through(&mut self.line, data, b"\r\n");
                    data = &data[taken..];
                    if !done {
                        return Ok(Progress::Partial);
                    }
                    let text = std::str::from_utf8(&self.line[..self.line.len() - 2]).map_err(|_| "chunk size not text")?;
                    let hex = text.split(';').next().unwrap_or("").trim();
                    let size = u64::from_str_radix(hex, 16).map_err(|_| format!("bad chunk size {hex:?}"))?;
                    self.line.clear();
                    self.state = if size == 0 { State::Trailer } else { State::ChunkData { remaining: size } };
                }
                State::ChunkData { remaining } => {
                    let used = remaining.min(data.len() as u64);
                    self.body_bytes += used;
                    data = &data[used as usize..];
                    self.state = if remaining == used { State::ChunkEnd } else { State::ChunkData { remaining: remaining - used } };
                }
                State::ChunkEnd => {
                    let (taken, done) = take_through(&mut self.line, data, b"\r\n");
                    data = &data[taken..];
                    if done {
                        if self.line.len() != 2 {
                            return Err("chunk not followed by CRLF".into());
                        }
                        self.line.clear();
                        self.state = State::ChunkSize;
                    }
                }
                State::Trailer => {
                    let (taken, done) = take_through(&mut self.line, data, b"\r\n");
                    data = &data[taken..];
                    if done {
                        if self.line.len() == 2 {
                            return self.finished(data);
                        }
                        self.line.clear(); // a trailer field: ignored
                    }
                }
            }
        }
        Ok(Progress::Partial)
    }

    fn finished(&mut self, rest: &[u8]) -> Result<Progress, String> {
        if !rest.is_empty() {
            return Err(format!("{} bytes after the response's end (no request was pipelined)", rest.len()));
        }
        Ok(Progress::Done { status: self.status, close: self.close })
    }

    fn parse_head(&mut self) -> Result<State, String> {
        let head = std::str::from_utf8(&self.line).map_err(|_| "response head is not text".to_string())?;
        let mut lines = head.split("\r\n");
        let status_line = lines.next().unwrap_or("");
        let mut parts = status_line.splitn(3, ' ');
        let version = parts.next().unwrap_or("");
        if !version.starts_with("HTTP/1.") {
            return Err(format!("not an HTTP/1.x status line: {status_line:?}"));
        }
        self.status = parts.next().and_then(|code| code.parse().ok()).ok_or(format!("no status in {status_line:?}"))?;
        self.close = version == "HTTP/1.0";
        let mut length = None;
        let mut chunked = false;
        for line in lines.filter(|l| !l.is_empty()) {
            let (name, value) = line.split_once(':').ok_or(format!("header without a colon: {line:?}"))?;
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                length = Some(value.parse::<u64>().map_err(|_| format!("bad Content-Length {value:?}"))?);
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = value.to_ascii_lowercase().split(',').any(|c| c.trim() == "chunked");
            } else if name.eq_ignore_ascii_case("connection") {
                let value = value.to_ascii_lowercase();
                if value.split(',').any(|t| t.trim() == "close") {
                    self.close = true;
                } else if value.split(',').any(|t| t.trim() == "keep-alive") {
                    self.close = false;
                }
            }
        }
        Ok(if chunked {
            State::ChunkSize
        } else if let Some(remaining) = length {
            State::Body { remaining }
        } else if self.status == 204 || self.status == 304 || self.status < 200 {
            State::Body { remaining: 0 }
        } else {
            self.close = true;
            State::UntilClose
        })
    }
}

/// Appends `data` to `line` up to and including the first `end`; returns (bytes taken, whether `end` was seen).
fn take_through(line: &mut Vec<u8>, data: &[u8], end: &[u8]) -> (usize, bool) {
    // The delimiter may straddle the previous read: search from a little before the old end.
    let start = line.len().saturating_sub(end.len() - 1);
    line.extend_from_slice(data);
    match line[start..].windows(end.len()).position(|w| w == end) {
        Some(at) => {
            let end_at = start + at + end.len();
            let taken = data.len() - (line.len() - end_at);
            line.truncate(end_at);
            (taken, true)
        }
        None => (data.len(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_in_pieces(response: &[u8], piece: usize) -> (Result<Progress, String>, u64) {
        let mut parser = ResponseParser::default();
        let mut last = Ok(Progress::Partial);
        for chunk in response.chunks(piece) {
            last = parser.feed(chunk);
            if last != Ok(Progress::Partial) {
                break;
            }
        }
        (last, parser.body_bytes)
    }

    #[test]
    fn content_length_in_any_split() {
        let response = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, World!";
        for piece in 1..response.len() + 1 {
            let (progress, body) = parse_in_pieces(response, piece);
            assert_eq!(progress, Ok(Progress::Done { status: 200, close: false }), "piece {piece}");
            assert_eq!(body, 13);
        }
    }

    #[test]
    fn chunked_in_any_split() {
        let response = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nHello\r\n8\r\n, World!\r\n0\r\nX-T: 1\r\n\r\n";
        for piece in 1..response.len() + 1 {
            let (progress, body) = parse_in_pieces(response, piece);
            assert_eq!(progress, Ok(Progress::Done { status: 200, close: false }), "piece {piece}");
            assert_eq!(body, 13);
        }
    }

    #[test]
    fn connection_close_and_http_1_0_are_seen() {
        let (progress, _) = parse_in_pieces(b"HTTP/1.1 400 Bad Request\r\nconnection: Close\r\ncontent-length: 0\r\n\r\n", 7);
        assert_eq!(progress, Ok(Progress::Done { status: 400, close: true }));
        let (progress, _) = parse_in_pieces(b"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", 100);
        assert_eq!(progress, Ok(Progress::Done { status: 200, close: true }));
    }

    #[test]
    fn a_body_read_until_close_ends_at_eof() {
        let mut parser = ResponseParser::default();
        assert_eq!(parser.feed(b"HTTP/1.1 200 OK\r\n\r\nabc"), Ok(Progress::Partial));
        assert_eq!(parser.eof(), Ok(Progress::Done { status: 200, close: true }));
        assert_eq!(parser.body_bytes, 3);
    }

    #[test]
    fn malformed_and_extra_bytes_are_errors() {
        assert!(parse_in_pieces(b"SSH-2.0-OpenSSH\r\n\r\n", 100).0.is_err());
        assert!(parse_in_pieces(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", 100).0.is_err());
        assert!(parse_in_pieces(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxy", 100).0.is_err());
        let mut parser = ResponseParser::default();
        parser.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab").unwrap();
        assert!(parser.eof().is_err());
    }

    #[test]
    fn the_parser_starts_over_after_reset() {
        let mut parser = ResponseParser::default();
        let response = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        for _ in 0..3 {
            assert!(!parser.started());
            assert_eq!(parser.feed(response), Ok(Progress::Done { status: 200, close: false }));
            parser.reset();
        }
    }

    #[test]
    fn request_bytes_ask_for_close_only_when_told() {
        assert_eq!(request_bytes("h:1", "/x", false), b"GET /x HTTP/1.1\r\nHost: h:1\r\nUser-Agent: loadlab-openloop\r\n\r\n".to_vec());
        assert!(String::from_utf8(request_bytes("h:1", "/x", true)).unwrap().contains("Connection: close\r\n\r\n"));
    }
}
