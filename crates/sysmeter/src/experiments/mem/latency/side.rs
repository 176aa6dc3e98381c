//! The side series of `mem.latency`: one random cycle over all lines (every load a new
//! page, so TLB misses show) and the address-order strides of lmbench's stride x size table.

use sysmeter_sys::chase::ChaseBuffer;

use super::points::{self, Chain, Order, Sampler, measure_series, sizes};
use super::{KIB, Plan, RANDOM};
use crate::harness::{Ctx, ExperimentError, Measured};
use crate::model::units;

/// The random series (TLB misses) and the fixed strides: the TLB and stride findings read
/// ratios of their medians, not a level's end, so they get the side budget
/// (`Plan::side_samples`) and no probe before each take.
pub(super) fn series(
    ctx: &mut Ctx<'_>,
    buf: &mut ChaseBuffer,
    plan: &Plan,
    out: &mut Measured,
) -> Result<(), ExperimentError> {
    let side = Sampler {
        samples: plan.side_samples,
        ..plan.sampler
    };
    let random = Chain {
        kind: Order::Random,
        name: RANDOM,
        line: plan.line,
        sampler: side,
        probe: false,
    };
    let few = points::thinned(
        sizes(4 * KIB, plan.max, plan.random_per_octave),
        plan.thin_beyond,
    );
    let (series, _) = measure_series(ctx, buf, &random, &few, 1)?;
    out.series.push(series);
    for &stride in plan.strides {
        let xs = sizes(2 * stride as u64, plan.max, plan.stride_per_octave);
        let name = format!("stride {}", units::size(stride as u64));
        let kind = Chain {
            kind: Order::Stride(stride),
            name: &name,
            ..random
        };
        let (series, _) = measure_series(ctx, buf, &kind, &xs, 1)?;
        // A --max-size below twice the stride leaves no point for it.
        if !series.points.is_empty() {
            out.series.push(series);
        }
    }
    Ok(())
}
