//! Intended send times: request k is due at `intended_ns(k)` nanoseconds after the start.
//!
//! Constant arrivals are k / rate exactly; Poisson arrivals draw exponential
//! gaps from a seeded generator, so a run is repeatable. Times are produced in
//! order, one at a time: the generator never holds the schedule in memory.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrivals {
    Constant,
    Poisson,
}

pub struct Schedule {
    arrivals: Arrivals,
    period_ns: f64,
    rng: SplitMix64,
    next_index: u64,
    next_ns: f64,
}

impl Schedule {
    /// `rate_rps`: requests per second; `seed`: Poisson's random stream.
    pub fn new(arrivals: Arrivals, rate_rps: f64, seed: u64) -> Schedule {
        let mut schedule = Schedule { arrivals, period_ns: 1e9 / rate_rps, rng: SplitMix64(seed), next_index: 0, next_ns: 0.0 };
        if arrivals == Arrivals::Poisson {
            schedule.next_ns = schedule.gap_ns();
        }
        schedule
    }

    /// The intended time of the next request not yet taken, in ns from the start.
    pub fn peek_ns(&self) -> u64 {
        self.next_ns as u64
    }

    /// Takes the next request: its intended time in ns from the start.
    pub fn take(&mut self) -> u64 {
        let taken = self.next_ns as u64;
        self.next_index += 1;
        self.next_ns = match self.arrivals {
            // k * period, not a running sum: no drift over millions of requests.
            Arrivals::Constant => self.next_index as f64 * self.period_ns,
            Arrivals::Poisson => self.next_ns + self.gap_ns(),
        };
        taken
    }

    fn gap_ns(&mut self) -> f64 {
        // Exponential with mean `period_ns`; 1 - u is in (0, 1], so ln never sees 0.
        let u = (self.rng.next() >> 11) as f64 / (1u64 << 53) as f64;
        -(1.0 - u).ln() * self.period_ns
    }
}

/// Steele, Lea and Flood's SplitMix64: small, fast, and good enough for arrival gaps.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_arrivals_are_evenly_spaced_without_drift() {
        let mut schedule = Schedule::new(Arrivals::Constant, 3.0, 1);
        let times: Vec<u64> = (0..4).map(|_| schedule.take()).collect();
        assert_eq!(times, vec![0, 333_333_333, 666_666_666, 1_000_000_000]);
        let mut fast = Schedule::new(Arrivals::Constant, 100_000.0, 1);
        for _ in 0..6_000_000 {
            fast.take();
        }
        assert_eq!(fast.peek_ns(), 60_000_000_000);
    }

    #[test]
    fn poisson_arrivals_have_the_asked_mean_and_an_exponential_spread() {
        let mut schedule = Schedule::new(Arrivals::Poisson, 1000.0, 7);
        let mut previous = 0u64;
        let mut gaps = Vec::new();
        for _ in 0..200_000 {
            let at = schedule.take();
            gaps.push((at - previous) as f64);
            previous = at;
        }
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        assert!((mean - 1e6).abs() < 0.01 * 1e6, "mean gap {mean} ns");
        // An exponential's standard deviation equals its mean.
        let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
        assert!((sd / mean - 1.0).abs() < 0.02, "sd/mean {}", sd / mean);
    }

    #[test]
    fn the_same_seed_gives_the_same_schedule() {
        let mut a = Schedule::new(Arrivals::Poisson, 500.0, 42);
        let mut b = Schedule::new(Arrivals::Poisson, 500.0, 42);
        for _ in 0..1000 {
            assert_eq!(a.take(), b.take());
        }
    }
}
