//! `each_backend!`: a diagnosis with several backends runs each of its backend tests once
//! per backend, as `<test>::<backend>` (`locks::…::perf`, `trace::…::bpf`), each holding
//! what the tests of that diagnosis hold while they run (the locks of the kernel events
//! they observe, `support::observing`, and the CPUs). Depends on nothing else of `support`.

/// `each_backend!(hold GUARD; [perf, bpf]; test_a, test_b)`: a module per test with a
/// `#[test]` per backend that takes `GUARD` (an expression, dropped when the test ends) and
/// calls `super::test("backend")`.
macro_rules! each_backend {
    (hold $hold:expr; $backends:tt; $($test:ident),+ $(,)?) => {
        $($crate::support::each_backend::each_backend!(@one $test, $hold, $backends);)+
    };
    (@one $test:ident, $hold:expr, [$($backend:ident),+]) => {
        mod $test {
            $(
                #[test]
                fn $backend() {
                    let _held = $hold;
                    super::$test(stringify!($backend));
                }
            )+
        }
    };
}

pub(crate) use each_backend;
