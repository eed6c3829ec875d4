//! Connects and closes, done off the sending loop's thread.
//!
//! On loopback a `connect()` runs the handshake, both sides of it, inside the
//! call, and a `close()` sends the FIN and runs the peer's handling of it; both
//! have tails of milliseconds here. Run in the loop's own thread, one slow
//! connect or close holds back every request due meanwhile (a connection per
//! request left 0.5-20% of requests more than 1 ms late by the generator's own
//! doing at 1,000-1,400 req/s). So an opener thread connects (in the order it is
//! asked) and a closer thread closes; the loop only hands them work and never
//! waits for them. The opener reports when it began each connect: that, not
//! when the loop handed it the request, is when the request went out, so a
//! queue in front of the opener still counts as the generator's own delay.

use std::io;
use std::net::SocketAddrV4;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

/// One connect the opener made: for which slot and hand-off (`ticket`), when it began (ns, monotonic) and the
/// connecting (non-blocking) socket, or why there is none.
pub struct Opened {
    pub slot: usize,
    pub ticket: u64,
    pub started_ns: u64,
    pub result: io::Result<i32>,
}

pub struct Helpers {
    to_open: Option<Sender<(usize, u64)>>,
    to_close: Option<Sender<i32>>,
    opened: Receiver<Opened>,
    /// Readable (in the loop's epoll) when the opener has reported.
    pub eventfd: i32,
    /// Connects and closes handed over and not yet done.
    pending: Arc<AtomicUsize>,
    threads: Vec<JoinHandle<()>>,
}

impl Helpers {
    pub fn start(address: SocketAddrV4) -> io::Result<Helpers> {
        let eventfd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if eventfd < 0 {
            return Err(io::Error::last_os_error());
        }
        let (to_open, open_requests) = channel::<(usize, u64)>();
        let (report, opened) = channel::<Opened>();
        let (to_close, fds) = channel::<i32>();
        let pending = Arc::new(AtomicUsize::new(0));
        let (opener_pending, closer_pending) = (pending.clone(), pending.clone());
        let opener = std::thread::Builder::new().name("opener".into()).spawn(move || {
            for (slot, ticket) in open_requests {
                let started_ns = crate::engine::clock_ns();
                let result = connect(address);
                if report.send(Opened { slot, ticket, started_ns, result }).is_err() {
                    return;
                }
                let one = 1u64;
                unsafe { libc::write(eventfd, &one as *const u64 as *const libc::c_void, 8) };
                opener_pending.fetch_sub(1, Ordering::Release);
            }
        })?;
        let closer = std::thread::Builder::new().name("closer".into()).spawn(move || {
            for fd in fds {
                unsafe { libc::close(fd) };
                closer_pending.fetch_sub(1, Ordering::Release);
            }
        })?;
        Ok(Helpers { to_open: Some(to_open), to_close: Some(to_close), opened, eventfd, pending, threads: vec![opener, closer] })
    }

    /// Ask for a connection for `slot`; the answer comes back through `take_opened` with the same ticket.
    pub fn open(&self, slot: usize, ticket: u64) {
        self.pending.fetch_add(1, Ordering::Relaxed);
        self.to_open.as_ref().expect("opener running").send((slot, ticket)).expect("opener alive");
    }

    /// Close a socket (already out of the loop's epoll) without waiting for it.
    pub fn close(&self, fd: i32) {
        self.pending.fetch_add(1, Ordering::Relaxed);
        self.to_close.as_ref().expect("closer running").send(fd).expect("closer alive");
    }

    /// Whether a connect or close handed over is not done yet. The loop, polling for a request about to fall
    /// due, yields its core meanwhile: the helpers share that one core, and a loop that polled would starve them.
    pub fn busy(&self) -> bool {
        self.pending.load(Ordering::Acquire) > 0
    }

    /// Every connect reported since the last call.
    pub fn take_opened(&self) -> Vec<Opened> {
        let mut count = 0u64;
        unsafe { libc::read(self.eventfd, &mut count as *mut u64 as *mut libc::c_void, 8) };
        self.opened.try_iter().collect()
    }
}

impl Drop for Helpers {
    /// Both threads end once their queues are empty and closed; the closes they still hold are done first.
    fn drop(&mut self) {
        self.to_open.take();
        self.to_close.take();
        for opened in self.opened.try_iter() {
            if let Ok(fd) = opened.result {
                unsafe { libc::close(fd) };
            }
        }
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
        unsafe { libc::close(self.eventfd) };
    }
}

/// A non-blocking TCP socket with TCP_NODELAY, connecting (or connected) to `address`.
pub fn connect(address: SocketAddrV4) -> io::Result<i32> {
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let one: libc::c_int = 1;
    unsafe { libc::setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, &one as *const _ as *const libc::c_void, 4) };
    let sockaddr = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: address.port().to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from(*address.ip()).to_be() },
        sin_zero: [0; 8],
    };
    let result = unsafe { libc::connect(fd, &sockaddr as *const _ as *const libc::sockaddr, std::mem::size_of::<libc::sockaddr_in>() as u32) };
    let error = io::Error::last_os_error();
    if result == 0 || error.raw_os_error() == Some(libc::EINPROGRESS) {
        return Ok(fd);
    }
    unsafe { libc::close(fd) };
    Err(error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, TcpListener};

    fn wait_opened(helpers: &Helpers) -> Opened {
        for _ in 0..2000 {
            if let Some(opened) = helpers.take_opened().pop() {
                return opened;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        panic!("the opener never reported");
    }

    #[test]
    fn the_opener_connects_and_reports_slot_ticket_and_start() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let helpers = Helpers::start(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port)).unwrap();
        let before = crate::engine::clock_ns();
        helpers.open(7, 42);
        let opened = wait_opened(&helpers);
        assert_eq!((opened.slot, opened.ticket), (7, 42));
        assert!(opened.started_ns >= before);
        let fd = opened.result.unwrap();
        let (_accepted, _) = listener.accept().unwrap();
        helpers.close(fd);
    }

    #[test]
    fn a_refused_connect_is_reported_not_lost() {
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap().local_addr().unwrap().port(); // closed again
        let helpers = Helpers::start(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port)).unwrap();
        helpers.open(0, 1);
        // Non-blocking: refused either at once or later as the socket's error; both reach the loop.
        let opened = wait_opened(&helpers);
        if let Ok(fd) = opened.result {
            helpers.close(fd);
        }
    }
}
