//! The event loop: one sending thread, epoll, a timerfd for the next intended send time (connects and closes are
//! done by two helper threads, `sockets.rs`).
//!
//! Requests are due on one schedule (`schedule.rs`) and go out in order, each
//! on whichever connection is free: an idle kept-alive connection, or a new
//! one while fewer than `connections` are open. When none is free the due
//! requests wait in order, and their latency runs from their intended time
//! all the same. So in-flight requests never exceed `connections` (one per
//! connection: no pipelining), and a server that stalls cannot make its stall
//! disappear from the record (coordinated omission).
//!
//! The loop also watches itself: for every request it records how long after
//! it could have gone (its intended time, or the moment a connection came free
//! if that was later) it did go. That delay is the generator's own.

use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddrV4;

use hdrhistogram::Histogram;

use crate::http::{Progress, ResponseParser};
use crate::schedule::{Arrivals, Schedule};
use crate::sockets::Helpers;

pub const NS_PER_S: u64 = 1_000_000_000;
const TIMER_TOKEN: u64 = u64::MAX;
const OPENED_TOKEN: u64 = u64::MAX - 1;
const READ_BUFFER_BYTES: usize = 64 * 1024;
const SCAN_INTERVAL_NS: u64 = 100_000_000; // how often in-flight requests are checked against the timeout
/// The timer wakes the loop ahead of a request's time, and the loop polls (epoll_wait with no timeout) for the
/// rest: a virtual machine's timer wake-up was seen 38 µs late at the median and 71 µs at p99 while busy, and up to
/// 1.4 ms when its idle CPU had halted between requests at a few hundred a second; that lateness would count in
/// every latency. How far ahead adapts to the wake-ups seen: one and a half times the latest late wake-up (decaying
/// by 1/64 a wake-up), within these bounds. The polled time is reported (`spin_s`), so it is not read as work.
const EARLY_WAKE_MIN_NS: u64 = 100_000;
const EARLY_WAKE_MAX_NS: u64 = 2_000_000;
/// The latency histogram's range, in microseconds: 1 µs to one hour, 3 significant digits (as the harness's).
pub const LATENCY_HIGHEST_US: u64 = 3_600_000_000;
/// Keep-alive connections are opened before the schedule starts for at most this long (ns): a server that accepts
/// slowly gets the rest opened on demand, inside the window, where their delays are counted as before.
const PRECONNECT_MAX_NS: u64 = 5 * NS_PER_S;

/// A non-blocking connect's outcome once its socket is writable: 0 when it opened, else the errno it failed with.
fn socket_error(fd: libc::c_int) -> libc::c_int {
    let mut error: libc::c_int = 0;
    let mut length = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    unsafe { libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_ERROR, &mut error as *mut _ as *mut libc::c_void, &mut length) };
    error
}

pub struct Config {
    pub address: SocketAddrV4,
    pub request: Vec<u8>,
    pub rate_rps: f64,
    pub arrivals: Arrivals,
    pub seed: u64,
    pub duration_ns: u64,
    pub connections: usize,
    pub timeout_ns: u64,
    pub connection_per_request: bool,
    pub late_after_ns: u64,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    Closed,
    /// Handed to the opener thread (`sockets.rs`): no socket yet.
    Opening,
    Connecting,
    Idle,
    Writing,
    Reading,
    /// Answered, and the server said it would close: waiting for its FIN before closing, so that the side that
    /// asked to close (the server) keeps the TIME-WAIT socket, not the generator's ephemeral ports.
    Closing,
}

struct Connection {
    fd: i32,
    phase: Phase,
    /// The request it carries: its intended time and when it was handed to this connection (ns, monotonic).
    intended_ns: u64,
    dispatched_ns: u64,
    /// When the request could have gone: its intended time, or when this slot came free if later (ns).
    could_go_ns: u64,
    /// Its departure (the delays, the dispatched count) is recorded when the opener begins its connect.
    departure_pending: bool,
    /// Which hand-off to the opener this slot is waiting for: a report for an older one is stale.
    ticket: u64,
    written: usize,
    /// Requests this connection carried before the current one (a failure on a reused connection is retried once).
    reused: bool,
    retried: bool,
    /// When this connection (or its slot) last became free, ns monotonic.
    free_since_ns: u64,
    parser: ResponseParser,
}

/// Per second of the window, by each request's intended second (dispatched: by the second it went out).
#[derive(Clone, Default)]
pub struct Second {
    pub scheduled: u64,
    pub dispatched: u64,
    pub ok: u64,
    pub errors: u64,
    pub late: u64,
}

pub struct Outcome {
    pub scheduled: u64,
    pub dispatched: u64,
    pub answered: u64,
    pub ok: u64,
    pub unsent: u64,
    pub late: u64,
    pub late_generator: u64,
    pub retried: u64,
    pub status_codes: BTreeMap<u16, u64>,
    pub errors: BTreeMap<&'static str, u64>,
    pub error_samples: Vec<String>,
    pub connections_opened: u64,
    pub connections_open_max: usize,
    pub in_flight_max: usize,
    pub latency_us: Histogram<u64>,
    pub send_delay_ns: Histogram<u64>,
    pub generator_delay_ns: Histogram<u64>,
    pub seconds: Vec<Second>,
    pub window_wall_s: f64,
    pub cpu_user_s: f64,
    pub cpu_system_s: f64,
    /// Time spent polling for a request about to fall due (EARLY_WAKE_NS), in the window: CPU time, not work.
    pub spin_s: f64,
    /// How long the sending loop's thread was ready to run but waited for the core, in the window (s; the
    /// scheduler's run_delay): its own helper threads' turns on the shared core, and other work's; not the loop's.
    /// None where the kernel keeps no schedstat.
    pub run_queue_wait_s: Option<f64>,
    pub body_bytes: u64,
    /// Connections whose server said it would close but had not within the timeout: closed by the generator.
    pub closes_forced: u64,
    /// Keep-alive: connections opened and connected before the schedule's first instant (`preconnect`), and how
    /// long that took (s). The rest, if any, are opened when a request needs them, as before.
    pub preconnected: usize,
    pub preconnect_s: f64,
}

pub fn clock_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * NS_PER_S + ts.tv_nsec as u64
}

fn cpu_times_s() -> (f64, f64) {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (seconds(usage.ru_utime), seconds(usage.ru_stime))
}

/// This thread's time spent waiting on a run queue so far, in ns (the second field of its schedstat).
fn run_queue_wait_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().nth(1)?.parse().ok()
}

fn check(result: i32, what: &str) -> io::Result<i32> {
    if result < 0 { Err(io::Error::new(io::Error::last_os_error().kind(), format!("{what}: {}", io::Error::last_os_error()))) } else { Ok(result) }
}

struct Engine<'a> {
    config: &'a Config,
    epoll: i32,
    timer: i32,
    helpers: Helpers,
    armed_ns: u64,
    /// How late the timer's wake-ups have been lately (ns; a decaying maximum) and how early it is armed.
    wake_late_ns: u64,
    early_ns: u64,
    start_ns: u64,
    connections: Vec<Connection>,
    idle: Vec<usize>,
    closed: Vec<usize>,
    open: usize,
    in_flight: usize,
    schedule: Schedule,
    /// A connection came free while handling events: the waiting requests go out before the next event.
    slot_freed: bool,
    /// Due requests waiting for a free connection (their intended times, in order).
    waiting: std::collections::VecDeque<u64>,
    out: Outcome,
    buffer: Vec<u8>,
}

pub fn run(config: &Config) -> io::Result<Outcome> {
    // A timer due in 20 µs must not wait for the kernel's default 50 µs of slack.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0) };
    let epoll = check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) }, "epoll_create1")?;
    let timer = check(unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) }, "timerfd_create")?;
    let mut event = libc::epoll_event { events: libc::EPOLLIN as u32, u64: TIMER_TOKEN };
    check(unsafe { libc::epoll_ctl(epoll, libc::EPOLL_CTL_ADD, timer, &mut event) }, "epoll_ctl timer")?;
    let helpers = Helpers::start(config.address)?;
    let mut event = libc::epoll_event { events: libc::EPOLLIN as u32, u64: OPENED_TOKEN };
    check(unsafe { libc::epoll_ctl(epoll, libc::EPOLL_CTL_ADD, helpers.eventfd, &mut event) }, "epoll_ctl eventfd")?;
    let seconds = (config.duration_ns.div_ceil(NS_PER_S)) as usize;
    let histogram = |high: u64| Histogram::<u64>::new_with_bounds(1, high, 3).expect("histogram bounds");
    let mut engine = Engine {
        config,
        epoll,
        timer,
        helpers,
        armed_ns: 0,
        wake_late_ns: 0,
        early_ns: EARLY_WAKE_MIN_NS,
        start_ns: 0,
        connections: (0..config.connections)
            .map(|_| Connection { fd: -1, phase: Phase::Closed, intended_ns: 0, dispatched_ns: 0, could_go_ns: 0, departure_pending: false, ticket: 0, written: 0, reused: false, retried: false, free_since_ns: 0, parser: ResponseParser::default() })
            .collect(),
        idle: Vec::new(),
        closed: (0..config.connections).rev().collect(),
        open: 0,
        in_flight: 0,
        schedule: Schedule::new(config.arrivals, config.rate_rps, config.seed),
        waiting: std::collections::VecDeque::new(),
        slot_freed: false,
        out: Outcome {
            scheduled: 0, dispatched: 0, answered: 0, ok: 0, unsent: 0, late: 0, late_generator: 0, retried: 0,
            status_codes: BTreeMap::new(), errors: BTreeMap::new(), error_samples: Vec::new(),
            connections_opened: 0, connections_open_max: 0, in_flight_max: 0,
            latency_us: histogram(LATENCY_HIGHEST_US), send_delay_ns: histogram(3_600 * NS_PER_S),
            generator_delay_ns: histogram(3_600 * NS_PER_S), seconds: vec![Second::default(); seconds.max(1)],
            window_wall_s: 0.0, cpu_user_s: 0.0, cpu_system_s: 0.0, spin_s: 0.0, run_queue_wait_s: None, body_bytes: 0, closes_forced: 0,
            preconnected: 0, preconnect_s: 0.0,
        },
        buffer: vec![0u8; READ_BUFFER_BYTES],
    };
    if !config.connection_per_request {
        engine.preconnect()?;
    }
    engine.run_loop()?;
    drop(engine.helpers); // the sockets still being closed are closed before the report
    unsafe {
        libc::close(engine.timer);
        libc::close(engine.epoll);
    }
    Ok(engine.out)
}

impl Engine<'_> {
    fn run_loop(&mut self) -> io::Result<()> {
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 1024];
        let (user0, system0) = cpu_times_s();
        let waited0 = run_queue_wait_ns();
        self.start_ns = clock_ns();
        for slot in 0..self.connections.len() {
            self.connections[slot].free_since_ns = self.start_ns;
        }
        let end_ns = self.start_ns + self.config.duration_ns;
        let give_up_ns = end_ns + self.config.timeout_ns + NS_PER_S;
        let mut window_open = true;
        let mut last_scan_ns = self.start_ns;
        let mut spin_ns = 0u64;
        loop {
            let now = clock_ns();
            if window_open && now >= end_ns {
                window_open = false;
                let (user1, system1) = cpu_times_s();
                self.out.window_wall_s = (now - self.start_ns) as f64 / 1e9;
                self.out.cpu_user_s = user1 - user0;
                self.out.cpu_system_s = system1 - system0;
                self.out.spin_s = spin_ns as f64 / 1e9;
                self.out.run_queue_wait_s = waited0.zip(run_queue_wait_ns()).map(|(a, b)| b.saturating_sub(a) as f64 / 1e9);
                self.count_unsent(end_ns);
            }
            if window_open {
                self.dispatch(now);
            }
            if !window_open && self.in_flight == 0 {
                break;
            }
            if now >= give_up_ns {
                self.expire(u64::MAX, "timeout");
                break;
            }
            if now - last_scan_ns >= SCAN_INTERVAL_NS {
                last_scan_ns = now;
                self.expire(now.saturating_sub(self.config.timeout_ns), "timeout");
            }
            let wake_ns = if !window_open {
                now + SCAN_INTERVAL_NS
            } else if self.waiting.is_empty() {
                (self.start_ns + self.schedule.peek_ns()).min(end_ns)
            } else {
                end_ns // due requests wait for a connection: sockets wake the loop
            };
            let spinning = wake_ns <= now + self.early_ns;
            let timeout_ms = if spinning {
                0
            } else {
                self.arm(wake_ns - self.early_ns)?;
                SCAN_INTERVAL_NS / 1_000_000
            } as i32;
            let mut poll_from = now;
            if spinning && self.helpers.busy() {
                // The opener and closer share this core: polling would starve them. Their time is work, not polling.
                unsafe { libc::sched_yield() };
                poll_from = clock_ns();
            }
            let ready = unsafe { libc::epoll_wait(self.epoll, events.as_mut_ptr(), events.len() as i32, timeout_ms) };
            if spinning && ready == 0 && wake_ns > now && window_open {
                spin_ns += clock_ns() - poll_from;
            }
            if ready < 0 {
                let error = io::Error::last_os_error();
                if error.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(error);
            }
            for event in &events[..ready as usize] {
                let (token, flags) = (event.u64, event.events);
                if token == TIMER_TOKEN {
                    let mut expirations = 0u64;
                    unsafe { libc::read(self.timer, &mut expirations as *mut u64 as *mut libc::c_void, 8) };
                    self.learn_wake_up(clock_ns());
                    self.armed_ns = 0;
                } else if token == OPENED_TOKEN {
                    for opened in self.helpers.take_opened() {
                        self.on_opened(opened);
                    }
                    if self.slot_freed {
                        self.slot_freed = false;
                        if window_open && !self.waiting.is_empty() {
                            self.dispatch(clock_ns());
                        }
                    }
                } else {
                    self.on_event(token as usize, flags);
                    // A request waiting for a connection goes out as soon as one comes free, not after the
                    // rest of the batch (up to 1,024 events: milliseconds of closes under a connection per request).
                    if self.slot_freed {
                        self.slot_freed = false;
                        if window_open && !self.waiting.is_empty() {
                            self.dispatch(clock_ns());
                        }
                    }
                }
            }
        }
        self.expire(u64::MAX, "timeout");
        Ok(())
    }

    /// Keep-alive: open every connection before the schedule starts, as wrk2 does. Opened inside the window, the
    /// first second's requests waited for hundreds of handshakes at once (on loopback each runs the server's side
    /// too, on this core): in the reference's 04 open loop most of the generator's late sends at half of capacity
    /// fell in the window's first second, 13-44 ms late, although the windows after a keep-alive warm-up measure a
    /// server serving kept-alive connections. Connects that fail or are not done within PRECONNECT_MAX_NS leave
    /// their slots closed, to be opened when a request needs them, as before; the count is reported.
    fn preconnect(&mut self) -> io::Result<()> {
        let started = clock_ns();
        let deadline = started + PRECONNECT_MAX_NS.min(self.config.timeout_ns);
        let mut connecting = 0usize;
        while let Some(slot) = self.closed.pop() {
            match crate::sockets::connect(self.config.address) {
                Ok(fd) => {
                    let mut event = libc::epoll_event {
                        events: (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLRDHUP | libc::EPOLLET) as u32,
                        u64: slot as u64,
                    };
                    if unsafe { libc::epoll_ctl(self.epoll, libc::EPOLL_CTL_ADD, fd, &mut event) } < 0 {
                        unsafe { libc::close(fd) };
                        self.closed.push(slot);
                        break;
                    }
                    let connection = &mut self.connections[slot];
                    connection.fd = fd;
                    connection.phase = Phase::Connecting;
                    self.open += 1;
                    connecting += 1;
                }
                Err(_) => {
                    self.closed.push(slot);
                    break; // out of sockets or refused: the rest are opened on demand, where errors are counted
                }
            }
        }
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 1024];
        while connecting > 0 {
            let now = clock_ns();
            if now >= deadline {
                break;
            }
            let wait_ms = ((deadline - now) / 1_000_000).clamp(1, 100) as i32;
            let ready = unsafe { libc::epoll_wait(self.epoll, events.as_mut_ptr(), events.len() as i32, wait_ms) };
            if ready < 0 {
                let error = io::Error::last_os_error();
                if error.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(error);
            }
            for event in &events[..ready as usize] {
                let slot = event.u64 as usize;
                if event.u64 == TIMER_TOKEN || event.u64 == OPENED_TOKEN
                    || self.connections[slot].phase != Phase::Connecting {
                    continue;
                }
                let error = socket_error(self.connections[slot].fd);
                let hung_up = event.events & (libc::EPOLLHUP | libc::EPOLLRDHUP | libc::EPOLLERR) as u32 != 0;
                if error != 0 || hung_up {
                    self.close(slot, clock_ns());
                    self.closed.push(slot);
                } else if event.events & libc::EPOLLOUT as u32 != 0 {
                    let connection = &mut self.connections[slot];
                    connection.phase = Phase::Idle;
                    // It waited idle before its first request, as a kept-alive one does: if the server closed it
                    // meanwhile, the request is sent again on a new connection, once (`fail`).
                    connection.reused = true;
                    self.idle.push(slot);
                    self.out.preconnected += 1;
                } else {
                    continue;
                }
                connecting -= 1;
            }
        }
        for slot in 0..self.connections.len() {
            if self.connections[slot].phase == Phase::Connecting {
                self.close(slot, clock_ns()); // not connected in time: opened on demand, as before
                self.closed.push(slot);
            }
        }
        self.out.connections_opened += self.out.preconnected as u64;
        self.out.connections_open_max = self.out.connections_open_max.max(self.open);
        self.out.preconnect_s = (clock_ns() - started) as f64 / 1e9;
        Ok(())
    }

    /// The timer fired at `now` (ns): how late it was sets how early the next one is armed.
    fn learn_wake_up(&mut self, now: u64) {
        if self.armed_ns == 0 {
            return;
        }
        let late = now.saturating_sub(self.armed_ns);
        self.wake_late_ns = late.max(self.wake_late_ns - self.wake_late_ns / 64);
        self.early_ns = (self.wake_late_ns * 3 / 2).clamp(EARLY_WAKE_MIN_NS, EARLY_WAKE_MAX_NS);
    }

    /// Arm the timer for an absolute monotonic instant (ns), unless it already is.
    fn arm(&mut self, at_ns: u64) -> io::Result<()> {
        if self.armed_ns == at_ns {
            return Ok(());
        }
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec { tv_sec: (at_ns / NS_PER_S) as libc::time_t, tv_nsec: (at_ns % NS_PER_S) as libc::c_long },
        };
        check(unsafe { libc::timerfd_settime(self.timer, libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut()) }, "timerfd_settime")?;
        self.armed_ns = at_ns;
        Ok(())
    }

    fn second_of(&self, at_ns: u64) -> usize {
        (((at_ns.saturating_sub(self.start_ns)) / NS_PER_S) as usize).min(self.out.seconds.len() - 1)
    }

    /// Hand every due request to a free connection, in order; those left wait for one.
    fn dispatch(&mut self, now: u64) {
        self.enqueue_due_before(now + 1);
        while let Some(&intended) = self.waiting.front() {
            let slot = if let Some(slot) = self.idle.pop() {
                slot
            } else if let Some(slot) = self.closed.pop() {
                slot
            } else {
                return; // every connection carries a request: the rest wait, their clocks running
            };
            self.waiting.pop_front();
            self.send(slot, intended, now);
        }
    }

    fn send(&mut self, slot: usize, intended: u64, now: u64) {
        self.in_flight += 1;
        self.out.in_flight_max = self.out.in_flight_max.max(self.in_flight);
        let connection = &mut self.connections[slot];
        connection.intended_ns = intended;
        connection.could_go_ns = intended.max(connection.free_since_ns.min(now));
        connection.dispatched_ns = now;
        connection.retried = false;
        connection.departure_pending = connection.phase == Phase::Closed;
        if !connection.departure_pending {
            self.depart(slot, now);
        }
        self.start_request(slot);
    }

    /// The slot's request went out at `at_ns`: on a kept-alive connection when handed to it, on a new one when
    /// the opener began its connect. How late after its intended time, and after it could have gone, is recorded.
    fn depart(&mut self, slot: usize, at_ns: u64) {
        let connection = &mut self.connections[slot];
        connection.departure_pending = false;
        let (intended, could_go) = (connection.intended_ns, connection.could_go_ns);
        let delay = at_ns.saturating_sub(intended);
        let own_delay = at_ns.saturating_sub(could_go);
        self.out.send_delay_ns.saturating_record(delay.max(1));
        self.out.generator_delay_ns.saturating_record(own_delay.max(1));
        let late_after = self.config.late_after_ns;
        let second = self.second_of(intended);
        if delay > late_after {
            self.out.late += 1;
            self.out.seconds[second].late += 1;
        }
        if own_delay > late_after {
            self.out.late_generator += 1;
        }
        let dispatched_second = self.second_of(at_ns);
        self.out.seconds[dispatched_second].dispatched += 1;
        self.out.dispatched += 1;
    }

    /// Put the slot's request on the wire: on its open connection, or once the opener has connected a new one.
    fn start_request(&mut self, slot: usize) {
        let connection = &mut self.connections[slot];
        connection.written = 0;
        connection.parser.reset();
        if connection.phase == Phase::Closed {
            connection.phase = Phase::Opening;
            connection.ticket += 1;
            self.open += 1;
            self.out.connections_opened += 1;
            self.out.connections_open_max = self.out.connections_open_max.max(self.open);
            return self.helpers.open(slot, connection.ticket);
        }
        connection.phase = Phase::Writing;
        self.write(slot);
    }

    /// The opener began a connect for a slot at `opened.started_ns`: its request went out then. The socket joins
    /// the epoll set, and its first EPOLLOUT (at once when the handshake is done) writes the request.
    fn on_opened(&mut self, opened: crate::sockets::Opened) {
        let connection = &self.connections[opened.slot];
        if connection.phase != Phase::Opening || connection.ticket != opened.ticket {
            if let Ok(fd) = opened.result {
                self.helpers.close(fd); // its request timed out meanwhile
            }
            return;
        }
        let slot = opened.slot;
        if connection.departure_pending {
            self.depart(slot, opened.started_ns);
        }
        let fd = match opened.result {
            Ok(fd) => fd,
            Err(error) => return self.fail(slot, "connect", error.to_string()),
        };
        self.connections[slot].fd = fd;
        self.connections[slot].reused = false;
        self.connections[slot].phase = Phase::Connecting;
        let mut event = libc::epoll_event { events: (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLRDHUP | libc::EPOLLET) as u32, u64: slot as u64 };
        if unsafe { libc::epoll_ctl(self.epoll, libc::EPOLL_CTL_ADD, fd, &mut event) } < 0 {
            let error = io::Error::last_os_error();
            self.fail(slot, "connect", error.to_string());
        }
    }

    fn write(&mut self, slot: usize) {
        let request = &self.config.request;
        let connection = &mut self.connections[slot];
        while connection.written < request.len() {
            let rest = &request[connection.written..];
            let sent = unsafe { libc::send(connection.fd, rest.as_ptr() as *const libc::c_void, rest.len(), libc::MSG_NOSIGNAL) };
            if sent < 0 {
                let error = io::Error::last_os_error();
                if error.kind() == io::ErrorKind::WouldBlock {
                    return; // EPOLLOUT resumes
                }
                return self.fail(slot, "write", error.to_string());
            }
            connection.written += sent as usize;
        }
        connection.phase = Phase::Reading;
    }

    fn on_event(&mut self, slot: usize, flags: u32) {
        let phase = self.connections[slot].phase;
        let out = flags & (libc::EPOLLOUT | libc::EPOLLERR | libc::EPOLLHUP) as u32 != 0;
        match phase {
            Phase::Connecting if out => {
                let error = socket_error(self.connections[slot].fd);
                if error != 0 {
                    return self.fail(slot, "connect", io::Error::from_raw_os_error(error).to_string());
                }
                self.connections[slot].phase = Phase::Writing;
                self.write(slot);
            }
            Phase::Writing if out => self.write(slot),
            _ => {}
        }
        if flags & (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR) as u32 != 0 {
            match self.connections[slot].phase {
                Phase::Reading | Phase::Writing => self.read(slot),
                Phase::Idle => self.read_idle(slot),
                Phase::Closing => {
                    self.read_closing(slot);
                }
                _ => {}
            }
        }
    }

    fn read(&mut self, slot: usize) {
        loop {
            let fd = self.connections[slot].fd;
            let got = unsafe { libc::recv(fd, self.buffer.as_mut_ptr() as *mut libc::c_void, self.buffer.len(), 0) };
            let progress = if got > 0 {
                self.connections[slot].parser.feed(&self.buffer[..got as usize])
            } else if got == 0 {
                self.connections[slot].parser.eof()
            } else {
                let error = io::Error::last_os_error();
                if error.kind() == io::ErrorKind::WouldBlock {
                    return;
                }
                return self.fail(slot, "read", error.to_string());
            };
            match progress {
                Ok(Progress::Partial) if got > 0 => continue,
                Ok(Progress::Partial) => return self.fail(slot, "read", "connection closed before the response ended".into()),
                Ok(Progress::Done { status, close }) => return self.complete(slot, status, close || got == 0),
                Err(message) => return self.fail(slot, if got == 0 { "read" } else { "parse" }, message),
            }
        }
    }

    /// A connection the server is closing: closed here once its FIN (end of file) has come.
    /// Returns whether it closed (false: nothing has come yet, and EPOLLRDHUP will bring it).
    fn read_closing(&mut self, slot: usize) -> bool {
        let fd = self.connections[slot].fd;
        let got = unsafe { libc::recv(fd, self.buffer.as_mut_ptr() as *mut libc::c_void, self.buffer.len(), 0) };
        if got < 0 && io::Error::last_os_error().kind() == io::ErrorKind::WouldBlock {
            return false;
        }
        self.close(slot, clock_ns());
        self.closed.push(slot);
        self.slot_freed = true;
        true
    }

    /// An idle kept-alive connection became readable: the server closed it (or sent what nobody asked for).
    fn read_idle(&mut self, slot: usize) {
        if self.read_closing(slot) {
            self.idle.retain(|&s| s != slot);
        }
    }

    fn complete(&mut self, slot: usize, status: u16, close: bool) {
        let now = clock_ns();
        let intended = self.connections[slot].intended_ns;
        let latency_us = ((now - intended) / 1000).clamp(1, LATENCY_HIGHEST_US);
        self.out.latency_us.saturating_record(latency_us);
        self.out.body_bytes += self.connections[slot].parser.body_bytes;
        self.out.answered += 1;
        *self.out.status_codes.entry(status).or_default() += 1;
        let second = self.second_of(intended);
        if (200..400).contains(&status) {
            self.out.ok += 1;
            self.out.seconds[second].ok += 1;
        } else {
            *self.out.errors.entry("status").or_default() += 1;
            self.out.seconds[second].errors += 1;
        }
        self.in_flight -= 1;
        if close || self.config.connection_per_request {
            self.connections[slot].dispatched_ns = now; // the wait for the server's FIN is timed from here
            self.connections[slot].phase = Phase::Closing;
            self.read_closing(slot);
        } else {
            let connection = &mut self.connections[slot];
            connection.phase = Phase::Idle;
            connection.reused = true;
            connection.free_since_ns = now;
            self.idle.push(slot);
            self.slot_freed = true;
        }
    }

    fn fail(&mut self, slot: usize, kind: &'static str, message: String) {
        let now = clock_ns();
        if self.connections[slot].departure_pending {
            self.depart(slot, now); // it never went: timed out waiting for the opener, and counted so
        }
        let connection = &self.connections[slot];
        // A kept-alive connection the server closed while it was idle fails the next request before any answer;
        // HTTP clients send such a request again on a new connection, once (RFC 9110, 9.2.2: GET is idempotent).
        let retry = connection.reused && !connection.retried && !connection.parser.started() && kind != "timeout";
        self.close(slot, now);
        if retry {
            self.out.retried += 1;
            self.connections[slot].retried = true;
            return self.start_request(slot);
        }
        *self.out.errors.entry(kind).or_default() += 1;
        if self.out.error_samples.len() < 10 {
            self.out.error_samples.push(format!("{kind}: {message}"));
        }
        let second = self.second_of(self.connections[slot].intended_ns);
        self.out.seconds[second].errors += 1;
        self.in_flight -= 1;
        self.closed.push(slot);
        self.slot_freed = true;
    }

    fn close(&mut self, slot: usize, now: u64) {
        let connection = &mut self.connections[slot];
        if connection.fd >= 0 {
            // Out of the epoll set here (no event of it can reach the slot's next connection), closed by the
            // closer thread: close() runs the FIN's exchange, and its tail, on loopback.
            let mut unused = libc::epoll_event { events: 0, u64: 0 };
            unsafe { libc::epoll_ctl(self.epoll, libc::EPOLL_CTL_DEL, connection.fd, &mut unused) };
            self.helpers.close(connection.fd);
            connection.fd = -1;
            self.open -= 1;
        } else if connection.phase == Phase::Opening {
            self.open -= 1; // the opener's socket, when it reports, is stale and closed
        }
        connection.phase = Phase::Closed;
        connection.free_since_ns = now;
    }

    /// Fail every in-flight request handed out before `before_ns` (ns monotonic) with `kind`.
    fn expire(&mut self, before_ns: u64, kind: &'static str) {
        for slot in 0..self.connections.len() {
            let connection = &self.connections[slot];
            let busy = matches!(connection.phase, Phase::Opening | Phase::Connecting | Phase::Writing | Phase::Reading);
            if busy && connection.dispatched_ns < before_ns {
                self.fail(slot, kind, "no complete answer within the timeout".into());
            } else if connection.phase == Phase::Closing && connection.dispatched_ns < before_ns {
                // Answered; the server never closed as it said it would: the request counted, the socket goes.
                self.close(slot, clock_ns());
                self.closed.push(slot);
                self.out.closes_forced += 1;
            }
        }
    }

    /// Take every request of the schedule due before `before_ns` (monotonic) into the queue, counted as scheduled.
    fn enqueue_due_before(&mut self, before_ns: u64) {
        while self.start_ns + self.schedule.peek_ns() < before_ns {
            let intended = self.start_ns + self.schedule.take();
            let second = self.second_of(intended);
            self.out.seconds[second].scheduled += 1;
            self.out.scheduled += 1;
            self.waiting.push_back(intended);
        }
    }

    /// Requests due before the window's end that never left: counted, as errors of their own kind.
    fn count_unsent(&mut self, end_ns: u64) {
        self.enqueue_due_before(end_ns);
        while let Some(intended) = self.waiting.pop_front() {
            let second = self.second_of(intended);
            self.out.seconds[second].errors += 1;
            self.out.unsent += 1;
        }
        if self.out.unsent > 0 {
            *self.out.errors.entry("unsent").or_default() += self.out.unsent;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{Ipv4Addr, TcpListener};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// A responder on loopback: answers every request "ok" (and closes after one that asked it to), and counts the
    /// connections it accepted.
    fn responder() -> (SocketAddrV4, Arc<AtomicUsize>) {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                counter.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(move || {
                    let mut buffer = [0u8; 4096];
                    let mut pending = Vec::new();
                    loop {
                        let Ok(got) = stream.read(&mut buffer) else { return };
                        if got == 0 {
                            return;
                        }
                        pending.extend_from_slice(&buffer[..got]);
                        while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                            let close = String::from_utf8_lossy(&pending[..end]).to_ascii_lowercase().contains("connection: close");
                            pending.drain(..end + 4);
                            if stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").is_err() || close {
                                return; // asked to close: the server closes first, as servers do
                            }
                        }
                    }
                });
            }
        });
        (SocketAddrV4::new(Ipv4Addr::LOCALHOST, port), accepted)
    }

    fn config(address: SocketAddrV4, connections: usize, per_request: bool) -> Config {
        Config {
            address,
            request: crate::http::request_bytes(&address.to_string(), "/", per_request),
            rate_rps: 200.0,
            arrivals: Arrivals::Constant,
            seed: 1,
            duration_ns: NS_PER_S / 2,
            connections,
            timeout_ns: 2 * NS_PER_S,
            connection_per_request: per_request,
            late_after_ns: 1_000_000,
        }
    }

    #[test]
    fn keep_alive_connections_are_open_before_the_schedule_starts() {
        let (address, accepted) = responder();
        let out = run(&config(address, 8, false)).unwrap();
        assert_eq!(out.preconnected, 8);
        assert_eq!(out.connections_opened, 8, "no connection opened inside the window");
        assert_eq!(accepted.load(Ordering::SeqCst), 8);
        assert_eq!(out.ok, out.scheduled);
        assert!(out.scheduled >= 99 && out.scheduled <= 101, "200/s for 0.5 s: {}", out.scheduled);
        assert!(out.preconnect_s < 5.0);
    }

    #[test]
    fn a_connection_per_request_opens_none_ahead() {
        let (address, _accepted) = responder();
        let out = run(&config(address, 8, true)).unwrap();
        assert_eq!(out.preconnected, 0);
        assert_eq!(out.connections_opened, out.scheduled);
        assert_eq!(out.ok, out.scheduled);
    }

    #[test]
    fn a_refused_preconnect_leaves_the_slots_to_be_opened_on_demand() {
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap().local_addr().unwrap().port(); // closed again
        let out = run(&config(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port), 4, false)).unwrap();
        assert_eq!(out.preconnected, 0);
        assert_eq!(out.ok, 0);
        assert!(out.errors.get("connect").copied().unwrap_or(0) > 0, "refusals counted as connect errors: {:?}", out.errors);
    }
}
