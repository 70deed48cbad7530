//! The gzip UCI sets with their fold masks, MNIST in IDX format and the SHA-256 checks:
//! small synthetic files in a temporary directory for the correct layout and for every kind
//! of broken file, and, when `GP_DATA_DIR` is set, every real set of the data directory.

use std::io::Write;
use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;
use flate2::Compression;
use gp_bench::data::checksum::{sha256_file, ChecksumStatus, Checksums};
use gp_bench::data::listing::{mnist_files, uci_datasets};
use gp_bench::data::{
    load_mnist, load_mnist_files, load_uci, load_uci_files, uci_known, DataDir, DataDirOrigin,
    MnistSplit, UCI_CATALOG, UCI_FOLDS,
};
use gp_bench::BenchError;

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = GzEncoder::new(Vec::new(), Compression::default());
    enc.write_all(bytes).expect("compress");
    enc.finish().expect("compress")
}

fn write(path: &Path, bytes: &[u8]) -> PathBuf {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(path, bytes).expect("write");
    path.to_path_buf()
}

/// 12 rows `i, 10 i, y = 0.5 i`; row `i` is a test row of fold `i mod 10`.
fn good_data() -> String {
    (0..12)
        .map(|i| format!("{i},{},{}\n", 10 * i, 0.5 * i as f64))
        .collect()
}

fn mask_row(folds: &[usize]) -> String {
    let cells: Vec<&str> = (0..UCI_FOLDS)
        .map(|k| if folds.contains(&k) { "1" } else { "0" })
        .collect();
    format!("{}\n", cells.join(","))
}

fn good_mask() -> String {
    (0..12).map(|i| mask_row(&[i % 10])).collect()
}

/// Writes `uci/<name>/data.csv.gz` and `test_mask.csv.gz` under `dir` (gzip of the texts).
fn write_uci(dir: &Path, name: &str, data: &str, mask: &str) -> (PathBuf, PathBuf) {
    let folder = dir.join("uci").join(name);
    (
        write(&folder.join("data.csv.gz"), &gzip(data.as_bytes())),
        write(&folder.join("test_mask.csv.gz"), &gzip(mask.as_bytes())),
    )
}

fn load_err(data: &str, mask: &str) -> (BenchError, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (d, m) = write_uci(dir.path(), "toy", data, mask);
    match load_uci_files("toy", &d, &m) {
        Ok(_) => panic!("loaded a broken set: data {data:?}, mask {mask:?}"),
        Err(e) => (e, d, m),
    }
}

fn assert_names(e: &BenchError, path: &Path, words: &str) {
    let msg = e.to_string();
    assert!(
        msg.contains(&path.display().to_string()),
        "message does not name {}: {msg}",
        path.display()
    );
    assert!(msg.contains(words), "message lacks `{words}`: {msg}");
}

#[test]
fn uci_set_loads_values_and_folds() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (d, m) = write_uci(dir.path(), "toy", &good_data(), &good_mask());
    let set = load_uci_files("toy", &d, &m).expect("load");
    assert_eq!((set.data.len(), set.data.dim()), (12, 2));
    assert_eq!(set.data.x[(3, 1)], 30.0);
    assert_eq!(set.data.y[11], 5.5);
    assert_eq!(set.data.name, "toy");
    for k in 0..UCI_FOLDS {
        let split = set.fold_indices(k).expect("fold");
        let expected_test: Vec<usize> = (0..12).filter(|i| i % 10 == k).collect();
        assert_eq!(split.test, expected_test);
        // Disjoint and covering every row.
        let mut all: Vec<usize> = split.train.iter().chain(&split.test).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..12).collect::<Vec<_>>());
        let (train, test) = set.fold(k).expect("fold");
        assert_eq!(train.len() + test.len(), 12);
        assert_eq!(test.len(), if k < 2 { 2 } else { 1 });
        assert_eq!(test.y[0], 0.5 * k as f64);
        assert!(train.y.iter().all(|&v| v != 0.5 * k as f64));
    }
    assert!(matches!(
        set.fold(UCI_FOLDS),
        Err(BenchError::InvalidArgument { .. })
    ));
}

#[test]
fn uci_names_and_aliases() {
    assert_eq!(UCI_CATALOG.len(), 25);
    for (alias, name) in [
        ("slump", "concreteslump"),
        ("automobile", "autos"),
        ("cancer", "breastcancer"),
        ("hardware", "machine"),
        ("pumadyn", "pumadyn32nm"),
        ("keggu", "keggundirected"),
        ("PolTele", "pol"),
        ("KEGG", "keggdirected"),
        ("KEGGU", "keggundirected"),
        ("kin40k", "kin40k"),
    ] {
        assert_eq!(uci_known(alias).expect("known").name, name, "{alias}");
    }
    assert!(matches!(
        uci_known("3droad"),
        Err(BenchError::UnknownDataset { .. })
    ));
}

#[test]
fn uci_shape_is_checked_against_the_catalogue() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_uci(dir.path(), "concreteslump", &good_data(), &good_mask());
    // Loaded through GRIEF's name; the toy file is not 103 × 7.
    let e = load_uci("slump", dir.path()).expect_err("wrong shape");
    assert!(matches!(e, BenchError::BadData { .. }), "{e}");
    assert!(e.to_string().contains("documented 103 × 7"), "{e}");
    let e = load_uci("challenger", dir.path()).expect_err("missing");
    assert!(matches!(e, BenchError::MissingFile { .. }), "{e}");
}

#[test]
fn broken_gzip_is_a_typed_error_naming_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (d, m) = write_uci(dir.path(), "toy", &good_data(), &good_mask());
    let good = std::fs::read(&d).expect("read");

    // Not gzip at all.
    write(&d, good_data().as_bytes());
    let e = load_uci_files("toy", &d, &m).expect_err("plain text");
    assert!(matches!(e, BenchError::BadGzip { .. }), "{e}");
    assert_names(&e, &d, "cannot decompress");

    // Cut short.
    write(&d, &good[..good.len() / 2]);
    let e = load_uci_files("toy", &d, &m).expect_err("truncated");
    assert!(matches!(e, BenchError::BadGzip { .. }), "{e}");
    assert_names(&e, &d, "cannot decompress");

    // Corrupt: the CRC-32 in the trailer does not match the data.
    let mut corrupt = good.clone();
    let crc = corrupt.len() - 8;
    corrupt[crc] ^= 0xff;
    write(&d, &corrupt);
    let e = load_uci_files("toy", &d, &m).expect_err("bad crc");
    assert!(matches!(e, BenchError::BadGzip { .. }), "{e}");

    // A corrupt mask file is named, not the data file.
    write(&d, &good);
    write(&m, b"\x1f\x8b\x08\x00garbage");
    let e = load_uci_files("toy", &d, &m).expect_err("bad mask gzip");
    assert_names(&e, &m, "cannot decompress");
}

#[test]
fn malformed_uci_contents_are_typed_errors() {
    // A non-numeric field.
    let data = good_data().replacen("30", "3o", 1);
    let (e, d, _) = load_err(&data, &good_mask());
    assert!(matches!(e, BenchError::NonNumeric { line: 4, .. }), "{e}");
    assert_names(&e, &d, "`3o` is not a number");

    // A ragged data row.
    let data = good_data().replacen("2,20,1\n", "2,20\n", 1);
    let (e, d, _) = load_err(&data, &good_mask());
    assert!(matches!(e, BenchError::RaggedRow { line: 3, .. }), "{e}");
    assert_names(&e, &d, "line 3 has 2 cells");

    // A mask value other than 0/1.
    let mask = good_mask().replacen("1", "2", 1);
    let (e, _, m) = load_err(&good_data(), &mask);
    assert!(matches!(e, BenchError::BadCsv { .. }), "{e}");
    assert_names(&e, &m, "expected 0 or 1");

    // A mask row count different from the data's.
    let mask: String = good_mask()
        .lines()
        .take(11)
        .map(|l| format!("{l}\n"))
        .collect();
    let (e, _, m) = load_err(&good_data(), &mask);
    assert_names(&e, &m, "11 rows but the data file");

    // A mask without 10 columns.
    let mask: String = (0..12).map(|_| "0,1,0\n").collect();
    let (e, _, m) = load_err(&good_data(), &mask);
    assert_names(&e, &m, "expected 10");

    // A ragged mask row.
    let mask = good_mask().replacen("0,0\n", "0\n", 1);
    let (e, _, m) = load_err(&good_data(), &mask);
    assert!(matches!(e, BenchError::RaggedRow { .. }), "{e}");
    assert_names(&e, &m, "cells");

    // An empty data file, and a non-finite value.
    let (e, d, _) = load_err("", &good_mask());
    assert_names(&e, &d, "no data rows");
    let data = good_data().replacen("30", "NaN", 1);
    let (e, d, _) = load_err(&data, &good_mask());
    assert!(matches!(e, BenchError::NonFinite { .. }), "{e}");
    assert_names(&e, &d, "not finite");
}

fn idx(magic: u32, dims: &[u32], values: &[u8]) -> Vec<u8> {
    let mut out = magic.to_be_bytes().to_vec();
    for d in dims {
        out.extend_from_slice(&d.to_be_bytes());
    }
    out.extend_from_slice(values);
    out
}

/// Three 28 × 28 images: image `i` has every pixel `51 i` (0, 0.2, 0.4 after scaling).
fn toy_images(count_in_header: u32, images: usize) -> Vec<u8> {
    let pixels: Vec<u8> = (0..images)
        .flat_map(|i| std::iter::repeat_n(51 * i as u8, 784))
        .collect();
    idx(2051, &[count_in_header, 28, 28], &pixels)
}

fn mnist_err(images: &[u8], labels: &[u8]) -> (BenchError, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let i = write(&dir.path().join("images.gz"), &gzip(images));
    let l = write(&dir.path().join("labels.gz"), &gzip(labels));
    match load_mnist_files(&i, &l) {
        Ok(_) => panic!("loaded broken MNIST files"),
        Err(e) => (e, i, l),
    }
}

#[test]
fn mnist_idx_loads_scaled_pixels_and_labels() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (i, l) = MnistSplit::Test.paths(dir.path());
    write(&i, &gzip(&toy_images(3, 3)));
    write(&l, &gzip(&idx(2049, &[3], &[7, 0, 7])));
    let m = load_mnist(MnistSplit::Test, dir.path()).expect("load");
    assert_eq!((m.images.nrows(), m.images.ncols()), (3, 784));
    assert_eq!(m.labels, vec![7, 0, 7]);
    assert_eq!(m.images[(0, 5)], 0.0);
    assert!((m.images[(1, 783)] - 0.2).abs() < 1e-15);
    assert!((m.images[(2, 0)] - 0.4).abs() < 1e-15);
    assert_eq!(m.class_counts(), [1, 0, 0, 0, 0, 0, 0, 2, 0, 0]);
    let full = idx(2051, &[1, 28, 28], &[255; 784]);
    write(&i, &gzip(&full));
    write(&l, &gzip(&idx(2049, &[1], &[3])));
    let m = load_mnist(MnistSplit::Test, dir.path()).expect("load");
    assert!(m.images.col_iter().all(|c| c[0] == 1.0));
}

#[test]
fn malformed_mnist_files_are_typed_errors() {
    let labels3 = idx(2049, &[3], &[1, 2, 3]);

    // Wrong magic numbers (images and labels swapped).
    let (e, i, _) = mnist_err(&labels3, &toy_images(3, 3));
    assert!(matches!(e, BenchError::BadIdx { .. }), "{e}");
    assert_names(&e, &i, "magic number 2049; expected 2051");
    let (e, _, l) = mnist_err(&toy_images(3, 3), &idx(2051, &[3], &[1, 2, 3]));
    assert_names(&e, &l, "magic number 2051; expected 2049");

    // Header count larger than the bytes present (a truncated payload), and smaller.
    let (e, i, _) = mnist_err(&toy_images(4, 3), &labels3);
    assert_names(&e, &i, "4 × 28 × 28");
    let (e, i, _) = mnist_err(&toy_images(2, 3), &labels3);
    assert_names(&e, &i, "2352 bytes follow the header");
    let (e, _, l) = mnist_err(&toy_images(3, 3), &idx(2049, &[3], &[1, 2]));
    assert_names(&e, &l, "2 bytes follow the header");

    // Label count different from the image count.
    let (e, _, l) = mnist_err(&toy_images(3, 3), &idx(2049, &[2], &[1, 2]));
    assert_names(&e, &l, "2 labels but");

    // Not 28 × 28, a label that is not a digit, a file shorter than its header.
    let (e, i, _) = mnist_err(&idx(2051, &[1, 27, 29], &[0; 783]), &idx(2049, &[1], &[1]));
    assert_names(&e, &i, "27 × 29");
    let (e, _, l) = mnist_err(&toy_images(3, 3), &idx(2049, &[3], &[1, 12, 3]));
    assert_names(&e, &l, "label 12 of image 1");
    let (e, i, _) = mnist_err(&[0, 0, 8, 3, 0], &labels3);
    assert_names(&e, &i, "shorter than the 16-byte header");

    // A truncated gzip stream.
    let dir = tempfile::tempdir().expect("temp dir");
    let full = gzip(&toy_images(3, 3));
    let i = write(&dir.path().join("i.gz"), &full[..full.len() - 20]);
    let l = write(&dir.path().join("l.gz"), &gzip(&labels3));
    let e = load_mnist_files(&i, &l).expect_err("truncated");
    assert!(matches!(e, BenchError::BadGzip { .. }), "{e}");
    assert_names(&e, &i, "cannot decompress");
}

#[test]
fn checksums_verify_and_report_mismatches() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (d, _) = write_uci(dir.path(), "challenger", &good_data(), &good_mask());
    let uci = dir.path().join("uci");
    let data_sum = sha256_file(&d).expect("hash");
    let wrong = "0".repeat(64);
    write(
        &uci.join("SHA256SUMS"),
        format!(
            "{data_sum}  ./challenger/data.csv.gz\n{wrong}  ./challenger/test_mask.csv.gz\n{wrong}  ./gone/data.csv.gz\n"
        )
        .as_bytes(),
    );
    let sums = Checksums::read(&uci).expect("sums");
    assert_eq!(sums.verify("challenger/data.csv.gz"), ChecksumStatus::Ok);
    assert!(matches!(
        sums.verify("challenger/test_mask.csv.gz"),
        ChecksumStatus::Mismatch { .. }
    ));
    assert_eq!(sums.verify("gone/data.csv.gz"), ChecksumStatus::FileMissing);
    write(&uci.join("extra.gz"), b"not listed");
    assert_eq!(sums.verify("extra.gz"), ChecksumStatus::NotListed);
    // The known empty-input digest, to pin the hex encoding.
    let empty = write(&dir.path().join("empty"), b"");
    assert_eq!(
        sha256_file(&empty).expect("hash"),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );

    // The listing reports the mismatch (and the wrong shape of the toy `challenger`).
    let data_dir = DataDir {
        path: Some(dir.path().to_path_buf()),
        origin: DataDirOrigin::Argument,
    };
    let table = uci_datasets(&data_dir).to_string();
    let row = table
        .lines()
        .find(|l| l.starts_with("| challenger "))
        .expect("challenger row");
    assert!(row.contains("test_mask.csv.gz: MISMATCH"), "{row}");
    assert!(row.contains("12 × 2 (documented 23 × 4)"), "{row}");
    let row = table
        .lines()
        .find(|l| l.starts_with("| keggundirected "))
        .expect("kegg row");
    assert!(
        row.contains("is missing") && row.contains("file missing"),
        "{row}"
    );
    assert!(row.contains("as keggu, KEGGU"), "{row}");
    assert!(mnist_files(&data_dir).to_string().contains("not verified"));

    // A malformed list is an error naming it.
    write(&uci.join("SHA256SUMS"), b"abc  file\n");
    let e = Checksums::read(&uci).expect_err("bad list");
    assert!(matches!(e, BenchError::BadChecksumList { .. }), "{e}");
    assert!(e.to_string().contains("SHA256SUMS"), "{e}");
}

#[test]
fn real_data_directory_has_every_set() {
    let Some(dir) = std::env::var_os("GP_DATA_DIR").filter(|v| !v.is_empty()) else {
        eprintln!(
            "real_data_directory_has_every_set: skipped, GP_DATA_DIR is not set \
             (set it to the shared datasets folder to load the 25 UCI sets and MNIST)"
        );
        return;
    };
    let dir = PathBuf::from(dir);
    for k in UCI_CATALOG {
        let set = load_uci(k.name, &dir).unwrap_or_else(|e| panic!("{}: {e}", k.name));
        assert_eq!((set.data.len(), set.data.dim()), (k.n, k.d), "{}", k.name);
        let mut test_total = 0;
        for f in 0..UCI_FOLDS {
            let split = set.fold_indices(f).expect("fold");
            assert_eq!(split.train.len() + split.test.len(), k.n);
            assert!(
                !split.test.is_empty() && !split.train.is_empty(),
                "{}",
                k.name
            );
            test_total += split.test.len();
        }
        // Each fold holds out about 10%.
        assert!(test_total >= k.n * 9 / 10, "{}: {test_total}", k.name);
    }
    let train = load_mnist(MnistSplit::Train, &dir).expect("train");
    assert_eq!((train.images.nrows(), train.images.ncols()), (20_000, 784));
    assert_eq!(
        train.class_counts(),
        [1994, 2281, 1929, 2076, 1945, 1775, 1971, 2093, 1922, 2014]
    );
    // The listing verifies every file against the SHA256SUMS lists.
    let data_dir = DataDir {
        path: Some(dir.clone()),
        origin: DataDirOrigin::Environment,
    };
    for table in [uci_datasets(&data_dir), mnist_files(&data_dir)] {
        let text = table.to_string();
        for row in text.lines().skip(2) {
            let last = row.trim_end().trim_end_matches('|').rsplit('|').next();
            assert_eq!(last.map(str::trim), Some("ok"), "{row}");
        }
    }
    let test = load_mnist(MnistSplit::Test, &dir).expect("test");
    assert_eq!((test.images.nrows(), test.labels.len()), (10_000, 10_000));
    assert!(test
        .images
        .col_iter()
        .all(|c| c.iter().all(|&p| (0.0..=1.0).contains(&p))));
}
