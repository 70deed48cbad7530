//! Regular grids: axes, padding rule, flat index order (= Kronecker order).

use approx::assert_relative_eq;
use faer::Mat;
use gp_structured::{GridAxis, InterpolationScheme, RegularGrid, StructuredError};
use proptest::prelude::*;

#[test]
fn axis_is_linspace_with_endpoints() {
    let a = GridAxis::new(-1.0, 2.0, 4).unwrap();
    assert_eq!(a.points(), vec![-1.0, 0.0, 1.0, 2.0]);
    assert_relative_eq!(a.spacing(), 1.0);
    assert_relative_eq!(a.hi(), 2.0);
    assert_eq!(a.num_points(), 4);
}

#[test]
fn axis_rejects_bad_input() {
    assert!(GridAxis::new(1.0, 1.0, 4).is_err());
    assert!(GridAxis::new(0.0, 1.0, 1).is_err());
    assert!(GridAxis::new(f64::NAN, 1.0, 4).is_err());
    assert!(GridAxis::from_spacing(0.0, -1.0, 4).is_err());
    assert!(GridAxis::from_spacing(0.0, 0.0, 4).is_err());
}

#[test]
fn padding_rule_puts_k_cells_beyond_the_data() {
    // Data range [0, 6] with 11 points and 2 cells of padding: 6 inner cells of width 1.
    let a = GridAxis::from_data_range(0.0, 6.0, 11, 2).unwrap();
    assert_relative_eq!(a.spacing(), 1.0);
    assert_relative_eq!(a.lo(), -2.0);
    assert_relative_eq!(a.hi(), 8.0, epsilon = 1e-12);
    // Too few points for the padding.
    let e = GridAxis::from_data_range(0.0, 6.0, 5, 2).unwrap_err();
    assert!(matches!(
        e,
        StructuredError::InvalidArgument { name: "m", .. }
    ));
    // A constant column is widened to unit width.
    let c = GridAxis::from_data_range(3.0, 3.0, 6, 2).unwrap();
    assert_relative_eq!(c.lo(), 2.5 - 2.0);
    assert_relative_eq!(c.hi(), 3.5 + 2.0, epsilon = 1e-12);
}

#[test]
fn from_data_uses_bounding_box_and_recommended_padding() {
    let x = Mat::from_fn(5, 2, |i, j| (i as f64) * (j as f64 + 1.0));
    let k = InterpolationScheme::Cubic.recommended_padding();
    assert_eq!(k, 2);
    let g = RegularGrid::from_data(x.as_ref(), &[10, 13], k).unwrap();
    assert_eq!(g.sizes(), &[10, 13]);
    assert_eq!(g.num_points(), 130);
    for l in 0..2 {
        let a = g.axes()[l];
        let (min, max) = (0.0, 4.0 * (l as f64 + 1.0));
        assert_relative_eq!(a.lo(), min - 2.0 * a.spacing(), epsilon = 1e-12);
        assert_relative_eq!(a.hi(), max + 2.0 * a.spacing(), epsilon = 1e-12);
    }
    assert!(RegularGrid::from_data(x.as_ref(), &[10], 2).is_err());
    let mut bad = x.clone();
    bad[(1, 1)] = f64::INFINITY;
    assert!(RegularGrid::from_data(bad.as_ref(), &[10, 10], 2).is_err());
    assert!(RegularGrid::from_data(Mat::<f64>::zeros(0, 2).as_ref(), &[10, 10], 2).is_err());
}

#[test]
fn empty_and_overflowing_grids_are_errors() {
    assert!(RegularGrid::new(vec![]).is_err());
    let big = GridAxis::new(0.0, 1.0, 1 << 40).unwrap();
    assert!(RegularGrid::new(vec![big, big]).is_err());
}

/// Dense Kronecker product of matrices, the reference for the index order.
fn kron(a: &Mat<f64>, b: &Mat<f64>) -> Mat<f64> {
    Mat::from_fn(a.nrows() * b.nrows(), a.ncols() * b.ncols(), |i, j| {
        a[(i / b.nrows(), j / b.ncols())] * b[(i % b.nrows(), j % b.ncols())]
    })
}

#[test]
fn flat_order_is_kronecker_order_last_dimension_fastest() {
    let g = RegularGrid::from_bounds(&[0.0, 0.0, 0.0], &[1.0, 2.0, 3.0], &[2, 3, 4]).unwrap();
    assert_eq!(g.strides(), &[12, 4, 1]);
    assert_eq!(g.flat_index(&[1, 2, 3]).unwrap(), (3 + 2) * 4 + 3);
    // Column vectors holding each axis' coordinates: their Kronecker product with ones picks
    // out coordinate l of each flat grid point.
    let pts = g.points();
    for l in 0..3 {
        let mut v = Mat::<f64>::ones(1, 1);
        for (k, axis) in g.axes().iter().enumerate() {
            let f = if k == l {
                Mat::from_fn(axis.num_points(), 1, |i, _| axis.point(i))
            } else {
                Mat::<f64>::ones(axis.num_points(), 1)
            };
            v = kron(&v, &f);
        }
        for j in 0..g.num_points() {
            assert_eq!(pts[(j, l)], v[(j, 0)]);
            assert_eq!(g.point(j).unwrap()[l], v[(j, 0)]);
        }
    }
    assert!(g.flat_index(&[2, 0, 0]).is_err());
    assert!(g.flat_index(&[0, 0]).is_err());
    assert!(g.multi_index(24).is_err());
}

proptest! {
    #[test]
    fn flat_and_multi_index_round_trip(sizes in prop::collection::vec(2usize..6, 1..5), seed in 0usize..1000) {
        let lo = vec![0.0; sizes.len()];
        let hi = vec![1.0; sizes.len()];
        let g = RegularGrid::from_bounds(&lo, &hi, &sizes).unwrap();
        let flat = seed % g.num_points();
        let multi = g.multi_index(flat).unwrap();
        prop_assert_eq!(g.flat_index(&multi).unwrap(), flat);
        // C order: flat = ((i1·m2 + i2)·m3 + i3)…
        let horner = multi.iter().zip(&sizes).fold(0, |acc, (&i, &m)| acc * m + i);
        prop_assert_eq!(horner, flat);
    }
}
