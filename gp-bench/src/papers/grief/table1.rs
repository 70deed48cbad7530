//! The rows of GP-GRIEF's Table 1 (spec `grief.md` §3.4) that gp-bench can run: test RMSE
//! mean ± std over 10 folds, in original target units.

/// A mean ± standard deviation as the paper prints it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeanStd {
    /// Mean over folds.
    pub mean: f64,
    /// Standard deviation over folds.
    pub std: f64,
}

impl MeanStd {
    /// `mean ± std` with `digits` decimals.
    pub fn format(&self, digits: usize) -> String {
        format!("{:.*} ± {:.*}", digits, self.mean, digits, self.std)
    }

    /// The spec's accuracy criterion (§4.4, check 16) for a number printed with `digits`
    /// decimals: `|ours − paper| ≤ max(paper std, 10% of the paper mean)`, where a standard
    /// deviation printed as 0 stands for one unit of the last digit (the spec's rule for
    /// `stock`, ±0.001).
    pub fn within_printed_tolerance(&self, ours: f64, digits: usize) -> bool {
        let unit = 10f64.powi(-(digits as i32));
        let std = if self.std == 0.0 { unit } else { self.std };
        (ours - self.mean).abs() <= std.max(0.1 * self.mean.abs())
    }
}

/// One row of Table 1 as printed: the paper's GRIEF-II, GRIEF-I and Yang et al. (2015)
/// columns and the time columns (hours per fold on two Xeon E5-2680 v3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PaperRow {
    /// The paper's dataset name.
    pub paper_name: &'static str,
    /// The folder under `uci/` (the `uci_datasets` name), `None` where the collection does
    /// not hold the set.
    pub uci: Option<&'static str>,
    /// Full data set size `n` as printed.
    pub n: usize,
    /// Input dimension as printed.
    pub d: usize,
    /// GP-GRIEF-II test RMSE.
    pub grief2: MeanStd,
    /// GP-GRIEF-I test RMSE.
    pub grief1: MeanStd,
    /// The Yang et al. (2015) column.
    pub yang: MeanStd,
    /// Decimals the paper prints.
    pub digits: usize,
    /// GP-GRIEF-II hours per fold.
    pub hours2: f64,
    /// GP-GRIEF-I hours per fold.
    pub hours1: f64,
}

/// Every row of Table 1 (Evans & Nair 2018), in the paper's order.
pub const PAPER_TABLE: &[PaperRow] = &[
    PaperRow {
        paper_name: "challenger",
        uci: Some("challenger"),
        n: 23,
        d: 4,
        grief2: MeanStd {
            mean: 0.554,
            std: 0.277,
        },
        grief1: MeanStd {
            mean: 0.519,
            std: 0.261,
        },
        yang: MeanStd {
            mean: 0.63,
            std: 0.26,
        },
        digits: 3,
        hours2: 0.0,
        hours1: 0.178,
    },
    PaperRow {
        paper_name: "fertility",
        uci: Some("fertility"),
        n: 100,
        d: 9,
        grief2: MeanStd {
            mean: 0.172,
            std: 0.055,
        },
        grief1: MeanStd {
            mean: 0.166,
            std: 0.051,
        },
        yang: MeanStd {
            mean: 0.21,
            std: 0.05,
        },
        digits: 3,
        hours2: 0.001,
        hours1: 0.66,
    },
    PaperRow {
        paper_name: "slump",
        uci: Some("concreteslump"),
        n: 103,
        d: 7,
        grief2: MeanStd {
            mean: 3.972,
            std: 1.891,
        },
        grief1: MeanStd {
            mean: 3.470,
            std: 1.712,
        },
        yang: MeanStd {
            mean: 4.72,
            std: 2.42,
        },
        digits: 3,
        hours2: 0.0,
        hours1: 0.566,
    },
    PaperRow {
        paper_name: "automobile",
        uci: Some("autos"),
        n: 159,
        d: 25,
        grief2: MeanStd {
            mean: 0.145,
            std: 0.057,
        },
        grief1: MeanStd {
            mean: 0.111,
            std: 0.036,
        },
        yang: MeanStd {
            mean: 0.18,
            std: 0.07,
        },
        digits: 3,
        hours2: 0.007,
        hours1: 0.604,
    },
    PaperRow {
        paper_name: "servo",
        uci: Some("servo"),
        n: 167,
        d: 4,
        grief2: MeanStd {
            mean: 0.280,
            std: 0.085,
        },
        grief1: MeanStd {
            mean: 0.268,
            std: 0.075,
        },
        yang: MeanStd {
            mean: 0.28,
            std: 0.09,
        },
        digits: 3,
        hours2: 0.0,
        hours1: 0.265,
    },
    PaperRow {
        paper_name: "cancer",
        uci: Some("breastcancer"),
        n: 194,
        d: 33,
        grief2: MeanStd {
            mean: 27.843,
            std: 3.910,
        },
        grief1: MeanStd {
            mean: 30.568,
            std: 3.340,
        },
        yang: MeanStd {
            mean: 35.0,
            std: 4.0,
        },
        digits: 3,
        hours2: 0.007,
        hours1: 0.667,
    },
    PaperRow {
        paper_name: "hardware",
        uci: Some("machine"),
        n: 209,
        d: 7,
        grief2: MeanStd {
            mean: 0.408,
            std: 0.046,
        },
        grief1: MeanStd {
            mean: 0.402,
            std: 0.045,
        },
        yang: MeanStd {
            mean: 0.43,
            std: 0.04,
        },
        digits: 3,
        hours2: 0.0,
        hours1: 0.637,
    },
    PaperRow {
        paper_name: "yacht",
        uci: Some("yacht"),
        n: 308,
        d: 6,
        grief2: MeanStd {
            mean: 0.170,
            std: 0.083,
        },
        grief1: MeanStd {
            mean: 0.120,
            std: 0.070,
        },
        yang: MeanStd {
            mean: 0.16,
            std: 0.11,
        },
        digits: 3,
        hours2: 0.001,
        hours1: 0.595,
    },
    PaperRow {
        paper_name: "autompg",
        uci: Some("autompg"),
        n: 392,
        d: 7,
        grief2: MeanStd {
            mean: 2.607,
            std: 0.356,
        },
        grief1: MeanStd {
            mean: 2.563,
            std: 0.369,
        },
        yang: MeanStd {
            mean: 2.63,
            std: 0.38,
        },
        digits: 3,
        hours2: 0.001,
        hours1: 0.594,
    },
    PaperRow {
        paper_name: "housing",
        uci: Some("housing"),
        n: 506,
        d: 13,
        grief2: MeanStd {
            mean: 3.212,
            std: 0.864,
        },
        grief1: MeanStd {
            mean: 2.887,
            std: 0.489,
        },
        yang: MeanStd {
            mean: 2.91,
            std: 0.54,
        },
        digits: 3,
        hours2: 0.004,
        hours1: 0.62,
    },
    PaperRow {
        paper_name: "forest",
        uci: Some("forest"),
        n: 517,
        d: 12,
        grief2: MeanStd {
            mean: 1.386,
            std: 0.14,
        },
        grief1: MeanStd {
            mean: 1.384,
            std: 0.139,
        },
        yang: MeanStd {
            mean: 1.39,
            std: 0.16,
        },
        digits: 3,
        hours2: 0.001,
        hours1: 0.621,
    },
    PaperRow {
        paper_name: "stock",
        uci: Some("stock"),
        n: 536,
        d: 11,
        grief2: MeanStd {
            mean: 0.005,
            std: 0.000,
        },
        grief1: MeanStd {
            mean: 0.005,
            std: 0.000,
        },
        yang: MeanStd {
            mean: 0.005,
            std: 0.001,
        },
        digits: 3,
        hours2: 0.001,
        hours1: 0.567,
    },
    PaperRow {
        paper_name: "energy",
        uci: Some("energy"),
        n: 768,
        d: 8,
        grief2: MeanStd {
            mean: 0.49,
            std: 0.057,
        },
        grief1: MeanStd {
            mean: 0.461,
            std: 0.064,
        },
        yang: MeanStd {
            mean: 0.46,
            std: 0.07,
        },
        digits: 3,
        hours2: 0.002,
        hours1: 0.622,
    },
    PaperRow {
        paper_name: "concrete",
        uci: Some("concrete"),
        n: 1030,
        d: 8,
        grief2: MeanStd {
            mean: 5.232,
            std: 0.723,
        },
        grief1: MeanStd {
            mean: 5.156,
            std: 0.766,
        },
        yang: MeanStd {
            mean: 4.95,
            std: 0.77,
        },
        digits: 3,
        hours2: 0.008,
        hours1: 0.57,
    },
    PaperRow {
        paper_name: "solar",
        uci: Some("solar"),
        n: 1066,
        d: 10,
        grief2: MeanStd {
            mean: 0.786,
            std: 0.198,
        },
        grief1: MeanStd {
            mean: 0.809,
            std: 0.193,
        },
        yang: MeanStd {
            mean: 0.83,
            std: 0.20,
        },
        digits: 3,
        hours2: 0.003,
        hours1: 0.628,
    },
    PaperRow {
        paper_name: "wine",
        uci: Some("wine"),
        n: 1599,
        d: 11,
        grief2: MeanStd {
            mean: 0.483,
            std: 0.052,
        },
        grief1: MeanStd {
            mean: 0.477,
            std: 0.047,
        },
        yang: MeanStd {
            mean: 0.47,
            std: 0.08,
        },
        digits: 3,
        hours2: 0.012,
        hours1: 0.583,
    },
    PaperRow {
        paper_name: "skillcraft",
        uci: Some("skillcraft"),
        n: 3338,
        d: 19,
        grief2: MeanStd {
            mean: 0.248,
            std: 0.016,
        },
        grief1: MeanStd {
            mean: 0.248,
            std: 0.016,
        },
        yang: MeanStd {
            mean: 0.25,
            std: 0.02,
        },
        digits: 3,
        hours2: 0.011,
        hours1: 0.573,
    },
    PaperRow {
        paper_name: "pumadyn",
        uci: Some("pumadyn32nm"),
        n: 8192,
        d: 32,
        grief2: MeanStd {
            mean: 0.20,
            std: 0.00,
        },
        grief1: MeanStd {
            mean: 0.212,
            std: 0.004,
        },
        yang: MeanStd {
            mean: 0.20,
            std: 0.00,
        },
        digits: 3,
        hours2: 0.156,
        hours1: 0.645,
    },
    PaperRow {
        paper_name: "elevators",
        uci: Some("elevators"),
        n: 16599,
        d: 18,
        grief2: MeanStd {
            mean: 0.091,
            std: 0.002,
        },
        grief1: MeanStd {
            mean: 0.097,
            std: 0.001,
        },
        yang: MeanStd {
            mean: 0.090,
            std: 0.001,
        },
        digits: 3,
        hours2: 0.283,
        hours1: 0.664,
    },
    PaperRow {
        paper_name: "kin40k",
        uci: Some("kin40k"),
        n: 40000,
        d: 8,
        grief2: MeanStd {
            mean: 0.206,
            std: 0.004,
        },
        grief1: MeanStd {
            mean: 0.206,
            std: 0.004,
        },
        yang: MeanStd {
            mean: 0.28,
            std: 0.01,
        },
        digits: 3,
        hours2: 0.38,
        hours1: 0.649,
    },
    PaperRow {
        paper_name: "keggu",
        uci: Some("keggundirected"),
        n: 63608,
        d: 27,
        grief2: MeanStd {
            mean: 0.118,
            std: 0.003,
        },
        grief1: MeanStd {
            mean: 0.134,
            std: 0.005,
        },
        yang: MeanStd {
            mean: 0.12,
            std: 0.00,
        },
        digits: 3,
        hours2: 3.642,
        hours1: 0.704,
    },
    PaperRow {
        paper_name: "3droad",
        uci: None,
        n: 434874,
        d: 3,
        grief2: MeanStd {
            mean: 11.648,
            std: 0.281,
        },
        grief1: MeanStd {
            mean: 12.966,
            std: 0.077,
        },
        yang: MeanStd {
            mean: 10.91,
            std: 0.05,
        },
        digits: 3,
        hours2: 0.869,
        hours1: 0.221,
    },
    PaperRow {
        paper_name: "electric",
        uci: None,
        n: 2049280,
        d: 11,
        grief2: MeanStd {
            mean: 0.064,
            std: 0.002,
        },
        grief1: MeanStd {
            mean: 0.058,
            std: 0.006,
        },
        yang: MeanStd {
            mean: 0.12,
            std: 0.12,
        },
        digits: 3,
        hours2: 8.019,
        hours1: 0.418,
    },
];
