//! One bounded retry loop for the HTTP clients (Kubernetes, GitHub): how many attempts, how long to
//! wait between them (a first backoff that doubles up to a cap, or the wait the server asked for),
//! and when to give up because the server asks for longer than we are willing to wait.
//!
//! What is worth retrying is the caller's call, made per failure: only the caller knows whether a
//! status means "try again", and whether its request may be repeated at all (a create that may have
//! happened must not be sent twice).

use std::future::Future;
use std::time::Duration;

/// How hard to try.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// Attempts in all, the first included.
    pub attempts: u32,
    /// The wait after the first failure, doubled after each later one...
    pub backoff: Duration,
    /// ...up to this.
    pub max_backoff: Duration,
    /// The longest server-given wait we accept; a longer one ends the loop.
    pub max_wait: Duration,
}

impl Schedule {
    /// The backoff after failed attempt `n` (1-based) when the server asks for nothing.
    pub fn backoff_after(&self, n: u32) -> Duration {
        let mut wait = self.backoff;
        for _ in 1..n {
            wait = (wait * 2).min(self.max_backoff);
        }
        wait
    }
}

/// What the caller makes of one attempt.
#[derive(Debug)]
pub enum Attempt<T, E> {
    /// Stop here with this answer: a success, or a failure not worth repeating.
    Done(Result<T, E>),
    /// Worth another try. `last` describes the failure (for the log and the final error);
    /// `asked` is the wait the server asked for, if any.
    Again {
        last: String,
        asked: Option<Duration>,
    },
}

/// Why the loop stopped without an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GaveUp {
    /// Every attempt failed; `last` describes the last failure.
    Exhausted { attempts: u32, last: String },
    /// The server asked us to wait `asked`, longer than [`Schedule::max_wait`].
    TooLong {
        attempts: u32,
        last: String,
        asked: Duration,
    },
}

/// Runs `attempt` (given its 1-based number) until it is done or the schedule is spent. Before each
/// wait, `on_retry(attempt, last, wait)` is told, for the caller's log.
pub async fn run<T, E, F, Fut>(
    schedule: &Schedule,
    mut attempt: F,
    mut on_retry: impl FnMut(u32, &str, Duration),
) -> Result<Result<T, E>, GaveUp>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Attempt<T, E>>,
{
    let mut last = String::new();
    let mut n = 0;
    while n < schedule.attempts {
        n += 1;
        let (l, asked) = match attempt(n).await {
            Attempt::Done(r) => return Ok(r),
            Attempt::Again { last, asked } => (last, asked),
        };
        last = l;
        let wait = match asked {
            Some(w) if w > schedule.max_wait => {
                return Err(GaveUp::TooLong {
                    attempts: n,
                    last,
                    asked: w,
                });
            }
            Some(w) => w,
            None => schedule.backoff_after(n),
        };
        if n < schedule.attempts {
            on_retry(n, &last, wait);
            tokio::time::sleep(wait).await;
        }
    }
    Err(GaveUp::Exhausted { attempts: n, last })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn quick(attempts: u32) -> Schedule {
        Schedule {
            attempts,
            backoff: Duration::ZERO,
            max_backoff: Duration::ZERO,
            max_wait: Duration::from_secs(60),
        }
    }

    fn block_on<F: Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a test runtime")
            .block_on(f)
    }

    #[test]
    fn the_backoff_doubles_up_to_its_cap() {
        let s = Schedule {
            attempts: 5,
            backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(1),
            max_wait: Duration::from_secs(60),
        };
        let waits: Vec<u128> = (1..=5).map(|n| s.backoff_after(n).as_millis()).collect();
        assert_eq!(waits, [200, 400, 800, 1000, 1000]);
    }

    #[test]
    fn retries_until_done_and_reports_each_wait() {
        let calls = Cell::new(0);
        let mut told = Vec::new();
        let out = block_on(run(
            &quick(5),
            |n| {
                calls.set(n);
                async move {
                    if n < 3 {
                        Attempt::Again {
                            last: format!("503 on {n}"),
                            asked: None,
                        }
                    } else {
                        Attempt::Done(Ok::<_, String>(n))
                    }
                }
            },
            |n, last, _| told.push(format!("{n}: {last}")),
        ));
        assert_eq!(out, Ok(Ok(3)));
        assert_eq!(calls.get(), 3);
        assert_eq!(told, ["1: 503 on 1", "2: 503 on 2"]);
    }

    #[test]
    fn a_final_failure_stops_at_once() {
        let calls = Cell::new(0);
        let out = block_on(run(
            &quick(5),
            |n| {
                calls.set(n);
                async { Attempt::Done(Err::<(), _>("403")) }
            },
            |_, _, _| {},
        ));
        assert_eq!(out, Ok(Err("403")));
        assert_eq!(calls.get(), 1);
    }

    #[test]
    fn gives_up_after_the_last_attempt_without_waiting_again() {
        let mut told = 0;
        let out = block_on(run(
            &quick(3),
            |n| async move {
                Attempt::<(), ()>::Again {
                    last: format!("timeout {n}"),
                    asked: None,
                }
            },
            |_, _, _| told += 1,
        ));
        assert_eq!(
            out,
            Err(GaveUp::Exhausted {
                attempts: 3,
                last: "timeout 3".into()
            })
        );
        assert_eq!(told, 2);
    }

    #[test]
    fn a_server_wait_is_honoured_or_ends_the_loop_when_too_long() {
        let mut waits = Vec::new();
        let out = block_on(run(
            &quick(2),
            |n| async move {
                Attempt::<(), ()>::Again {
                    last: "429".into(),
                    asked: Some(Duration::from_millis(if n == 1 { 1 } else { 61_000 })),
                }
            },
            |_, _, w| waits.push(w),
        ));
        assert_eq!(waits, [Duration::from_millis(1)]);
        assert_eq!(
            out,
            Err(GaveUp::TooLong {
                attempts: 2,
                last: "429".into(),
                asked: Duration::from_secs(61)
            })
        );
    }
}
