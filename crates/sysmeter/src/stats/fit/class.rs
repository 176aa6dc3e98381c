//! The complexity classes `scale` fits, simplest first, with g(N) and their names.
//!
//! Pure.

/// A complexity class, simplest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// O(1).
    Constant,
    /// O(log N) (log base 2).
    Log,
    /// O(N).
    Linear,
    /// O(N log N) (log base 2).
    NLogN,
    /// O(N²).
    Quadratic,
    /// O(N³).
    Cubic,
    /// O(2^N).
    Exponential,
}

impl Class {
    /// Every class, simplest first (the order [`select`](super::select) prefers).
    pub const ALL: [Class; 7] = [
        Class::Constant,
        Class::Log,
        Class::Linear,
        Class::NLogN,
        Class::Quadratic,
        Class::Cubic,
        Class::Exponential,
    ];

    /// g(N); may be infinite (2^N for large N) or NaN for N ≤ 0 (the logarithms).
    pub fn g(self, n: f64) -> f64 {
        match self {
            Class::Constant => 1.0,
            Class::Log => n.log2(),
            Class::Linear => n,
            Class::NLogN => n * n.log2(),
            Class::Quadratic => n * n,
            Class::Cubic => n * n * n,
            Class::Exponential => n.exp2(),
        }
    }

    /// Big-O label: `O(N log N)`.
    pub fn label(self) -> &'static str {
        match self {
            Class::Constant => "O(1)",
            Class::Log => "O(log N)",
            Class::Linear => "O(N)",
            Class::NLogN => "O(N log N)",
            Class::Quadratic => "O(N²)",
            Class::Cubic => "O(N³)",
            Class::Exponential => "O(2^N)",
        }
    }

    /// The term g as written after the coefficient: `N log N` (empty for O(1)).
    pub fn term(self) -> &'static str {
        match self {
            Class::Constant => "",
            Class::Log => "log N",
            Class::Linear => "N",
            Class::NLogN => "N log N",
            Class::Quadratic => "N²",
            Class::Cubic => "N³",
            Class::Exponential => "2^N",
        }
    }

    /// Stable key for finding and metric names: `n_log_n`.
    pub fn key(self) -> &'static str {
        match self {
            Class::Constant => "const",
            Class::Log => "log_n",
            Class::Linear => "n",
            Class::NLogN => "n_log_n",
            Class::Quadratic => "n2",
            Class::Cubic => "n3",
            Class::Exponential => "exp2_n",
        }
    }
}
