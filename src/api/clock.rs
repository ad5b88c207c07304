//! The clock `fix --timings` reads: CPU seconds used by this process, so that stage timings do
//! not depend on how loaded the machine is (fensyn runs on one thread).

use std::sync::OnceLock;
use std::time::Instant;

/// CPU seconds this process has used so far (`CLOCK_PROCESS_CPUTIME_ID` on Unix). Where that
/// clock is unavailable, wall-clock seconds since the first call: differences of two readings
/// are what callers use.
pub fn cpu_seconds() -> f64 {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `clock_gettime` only writes the `timespec` the valid, exclusive pointer
        // points to.
        if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) } == 0 {
            return ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9;
        }
    }
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::cpu_seconds;

    #[test]
    fn cpu_time_advances_with_work() {
        let a = cpu_seconds();
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        let b = cpu_seconds();
        assert!(b > a, "{a} {b} {x}");
    }
}
