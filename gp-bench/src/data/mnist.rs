//! MNIST in its original IDX format, gzip-compressed (`mnist/` in the data directory): a
//! big-endian `u32` magic (2051 for images, 2049 for labels), `u32` counts (and 28, 28 for
//! images), then `u8` values row-major.

use std::io::Read;
use std::path::{Path, PathBuf};

use faer::Mat;

use super::uci::open_gzip;
use crate::error::BenchError;

/// The folder of the MNIST files inside the data directory.
pub const MNIST_DIR: &str = "mnist";

/// Pixels per image side.
pub const MNIST_SIDE: usize = 28;

/// Pixels per image (28 × 28).
pub const MNIST_PIXELS: usize = MNIST_SIDE * MNIST_SIDE;

const IMAGES_MAGIC: u32 = 2051;
const LABELS_MAGIC: u32 = 2049;

/// The layout the MNIST files must have, quoted when one is missing.
pub const MNIST_LAYOUT: &str = "a gzip-compressed IDX file: big-endian u32 magic (2051 images \
/ 2049 labels), u32 count (and 28, 28 for images), then one u8 per pixel or label";

/// Which MNIST split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MnistSplit {
    /// The first 20,000 of the 60,000 training images (IterNCGP's subset).
    Train,
    /// The complete 10,000-image test set.
    Test,
}

impl MnistSplit {
    /// Both splits, train first.
    pub const ALL: [MnistSplit; 2] = [MnistSplit::Train, MnistSplit::Test];

    /// The images file and the labels file of this split, inside `mnist/`.
    pub fn file_names(self) -> (&'static str, &'static str) {
        match self {
            Self::Train => (
                "train-images-idx3-ubyte-first20000.gz",
                "train-labels-idx1-ubyte-first20000.gz",
            ),
            Self::Test => ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
        }
    }

    /// The number of images the data directory's README documents.
    pub fn documented_len(self) -> usize {
        match self {
            Self::Train => 20_000,
            Self::Test => 10_000,
        }
    }

    /// A short name for listings (`train (first 20000)`, `test`).
    pub fn label(self) -> &'static str {
        match self {
            Self::Train => "train (first 20000)",
            Self::Test => "test",
        }
    }

    /// The images and labels paths of this split in `data_dir`.
    pub fn paths(self, data_dir: &Path) -> (PathBuf, PathBuf) {
        let (images, labels) = self.file_names();
        let dir = data_dir.join(MNIST_DIR);
        (dir.join(images), dir.join(labels))
    }
}

/// MNIST images with their labels.
#[derive(Debug, Clone)]
pub struct Mnist {
    /// One image per row, `n × 784`, pixels row-major, scaled from 0..=255 to [0, 1].
    pub images: Mat<f64>,
    /// The digit of each image (0..=9).
    pub labels: Vec<u8>,
}

impl Mnist {
    /// Number of images.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there are no images.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// How many images of each digit 0..=9.
    pub fn class_counts(&self) -> [usize; 10] {
        let mut counts = [0; 10];
        for &l in &self.labels {
            // Labels were checked to be digits when loaded; the guard keeps this total.
            if let Some(c) = counts.get_mut(usize::from(l)) {
                *c += 1;
            }
        }
        counts
    }
}

/// Loads an MNIST split from `data_dir/mnist/`. Checksums are not verified here (see
/// `gp-bench datasets`).
///
/// Errors: those of [`load_mnist_files`].
pub fn load_mnist(split: MnistSplit, data_dir: &Path) -> Result<Mnist, BenchError> {
    let (images, labels) = split.paths(data_dir);
    load_mnist_files(&images, &labels)
}

/// Decompresses a whole gzip file into memory.
fn read_gzip_bytes(path: &Path) -> Result<Vec<u8>, BenchError> {
    let mut bytes = Vec::new();
    open_gzip(path, MNIST_LAYOUT)?
        .read_to_end(&mut bytes)
        .map_err(|e| BenchError::BadGzip {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
    Ok(bytes)
}

/// Splits an IDX file into its header words and its payload, checking the magic and that
/// the payload holds exactly the values the header announces.
fn parse_idx<'a>(
    path: &Path,
    bytes: &'a [u8],
    magic: u32,
    header_words: usize,
    what: &str,
) -> Result<(Vec<usize>, &'a [u8]), BenchError> {
    let bad = |reason: String| BenchError::BadIdx {
        path: path.to_path_buf(),
        reason,
    };
    let header_len = 4 * (1 + header_words);
    let too_short = || {
        bad(format!(
            "{} bytes after decompression, shorter than the {header_len}-byte header of an IDX {what} file",
            bytes.len()
        ))
    };
    // Big-endian u32 number `i` of the header, `None` past the end of the bytes.
    let word = |i: usize| {
        bytes
            .get(4 * i..4 * i + 4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(u32::from_be_bytes)
    };
    // The magic is checked first: a wrong kind of file is the likelier mistake than a short one.
    let found = word(0).ok_or_else(too_short)?;
    if found != magic {
        return Err(bad(format!(
            "magic number {found}; expected {magic} for an IDX {what} file"
        )));
    }
    if bytes.len() < header_len {
        return Err(too_short());
    }
    let dims: Vec<usize> = (1..=header_words)
        .map(|i| word(i).map_or(0, |w| w as usize))
        .collect();
    let payload = &bytes[header_len..];
    let expected = dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
    if expected != Some(payload.len()) {
        let shape = dims
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(" × ");
        return Err(bad(format!(
            "the header announces {what} of shape {shape}, {} bytes of values, but {} bytes \
             follow the header (a truncated file or a wrong count)",
            expected.map_or_else(|| "more than addressable".to_string(), |e| e.to_string()),
            payload.len()
        )));
    }
    Ok((dims, payload))
}

/// Loads MNIST from an images file and a labels file (gzip IDX).
///
/// Errors: [`BenchError::MissingFile`]; [`BenchError::BadGzip`] for a file that is not gzip,
/// is corrupt or is cut short; [`BenchError::BadIdx`] for a wrong magic number, images that
/// are not 28 × 28, a count in the header that does not match the bytes present, a label
/// that is not a digit, or a label count different from the image count.
pub fn load_mnist_files(images_path: &Path, labels_path: &Path) -> Result<Mnist, BenchError> {
    let image_bytes = read_gzip_bytes(images_path)?;
    let (dims, pixels) = parse_idx(images_path, &image_bytes, IMAGES_MAGIC, 3, "images")?;
    if dims[1] != MNIST_SIDE || dims[2] != MNIST_SIDE {
        return Err(BenchError::BadIdx {
            path: images_path.to_path_buf(),
            reason: format!(
                "images of {} × {} pixels; expected {MNIST_SIDE} × {MNIST_SIDE}",
                dims[1], dims[2]
            ),
        });
    }
    let n = dims[0];
    let label_bytes = read_gzip_bytes(labels_path)?;
    let (label_dims, labels) = parse_idx(labels_path, &label_bytes, LABELS_MAGIC, 1, "labels")?;
    if label_dims[0] != n {
        return Err(BenchError::BadIdx {
            path: labels_path.to_path_buf(),
            reason: format!(
                "{} labels but {} has {n} images",
                label_dims[0],
                images_path.display()
            ),
        });
    }
    if let Some(i) = labels.iter().position(|&l| l > 9) {
        return Err(BenchError::BadIdx {
            path: labels_path.to_path_buf(),
            reason: format!("label {} of image {i} is not a digit 0..=9", labels[i]),
        });
    }
    let images = Mat::from_fn(n, MNIST_PIXELS, |i, j| {
        f64::from(pixels[i * MNIST_PIXELS + j]) / 255.0
    });
    Ok(Mnist {
        images,
        labels: labels.to_vec(),
    })
}
