"""data=real for task `densenet`: NIH ChestX-ray14 from a directory the user has, on a small
generated copy in NIH's layout (Data_Entry_2017.csv as NIH writes it, PNGs of several sizes
and modes spread over images_001/images and images_002/images). The module and real.prepare
are called directly, and through the CLI (`python -m bench prepare`, then a run)."""

import csv
import os
import re
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf
from PIL import Image

import bench
from bench.data import cache, chestxray14, real
from bench.errors import DataError
from bench.run import config

# NIH's header: the bracketed names hold commas, so they are two fields each, and every row
# (header included) ends with a comma
HEADER = (
    "Image Index,Finding Labels,Follow-up #,Patient ID,Patient Age,Patient Gender,"
    "View Position,OriginalImage[Width,Height],OriginalImagePixelSpacing[x,y],"
)
# (patient ID, findings of each of its images), in the order the CSV lists the patients: not
# sorted, and 102 < 21 as text, so the split's numeric order shows
PATIENTS = [
    (44, ["No Finding", "Effusion", "Effusion|Infiltration"]),
    (3, ["Cardiomegaly", "Cardiomegaly|Emphysema", "No Finding"]),
    (102, ["Hernia", "No Finding"]),
    (21, ["Atelectasis|Consolidation|Edema|Effusion", "No Finding"]),
    (7, ["Mass", "Nodule", "Mass|Nodule", "No Finding"]),
    (58, ["Pneumonia", "Pneumothorax|Pneumonia"]),
    (12, ["Fibrosis", "Pleural_Thickening"]),
    (75, ["No Finding", "Infiltration", "Pneumothorax"]),
    (30, ["Emphysema|Fibrosis|Hernia|Mass"]),
    (15, ["No Finding", "No Finding"]),
    (60, ["Consolidation", "Edema|Pleural_Thickening"]),
    (31, ["Nodule|Pneumothorax|Atelectasis"]),
]
SIZE = 40  # the tests' image size; real.prepare's own (264) in test_real_prepare_*
# what each image is on disk: (width, height, mode); the rest are 96 x 80 L
SHAPES = {
    "00000003_000.png": (1024, 1024, "L"),
    "00000044_001.png": (1024, 1024, "L"),
    "00000102_000.png": (1024, 1024, "RGBA"),
    "00000007_002.png": (300, 417, "RGB"),
    "00000058_001.png": (37, 29, "L"),
}
HALVES = "00000012_001.png"  # dark top half, bright bottom half: shows orientation


def image_names():
    return [
        f"{patient:08d}_{k:03d}.png" for patient, findings in PATIENTS for k in range(len(findings))
    ]


def gray_value(row):
    """The fixture's images are uniform grey, each its own value: where an image landed."""
    return 20 + 5 * row


def make_fixture(directory, header=HEADER):
    """A ChestX-ray14 directory: the CSV at the top, the first half of the images under
    images_001/images, the rest under images_002/images. {name: (patient, findings)}."""
    listed = {}
    lines = [header]
    names = image_names()
    for row, name in enumerate(names):
        patient = int(name[:8])
        findings = dict(PATIENTS)[patient][int(name[9:12])]
        listed[name] = (patient, findings)
        width, height, mode = SHAPES.get(name, (96, 80, "L"))
        lines.append(
            f"{name},{findings},{int(name[9:12])},{patient},058Y,M,PA,{width},{height},0.143,0.143,"
        )
        folder = directory / ("images_001" if row < len(names) // 2 else "images_002") / "images"
        folder.mkdir(parents=True, exist_ok=True)
        if name == HALVES:
            pixels = np.full((height, width), 10, np.uint8)
            pixels[height // 2 :] = 240
        else:
            pixels = np.full((height, width), gray_value(row), np.uint8)
        image = Image.fromarray(pixels, "L")
        if mode != "L":
            image = image.convert(mode)  # NIH's few RGBA images: equal channels, opaque
        image.save(folder / name)
    (directory / chestxray14.CSV_NAME).write_text("\n".join(lines) + "\n")
    return listed


@pytest.fixture
def xray(tmp_path):
    directory = tmp_path / "ChestX-ray14"
    return directory, make_fixture(directory)


def load(entry, name):
    return np.load(entry / f"{name}.npy")


def csv_rows(directory):
    with open(directory / chestxray14.CSV_NAME, newline="") as f:
        return list(csv.reader(f))


def expected_split():
    """The 2018 rule written out for the fixture's 12 patients: ascending ID, the first
    floor(0.7 * 12) = 8 train, floor(4 / 3) = 1 valid, the remaining 3 test."""
    ids = sorted(patient for patient, _ in PATIENTS)
    assert ids == [3, 7, 12, 15, 21, 30, 31, 44, 58, 60, 75, 102]
    return {"train": set(ids[:8]), "valid": set(ids[8:9]), "test": set(ids[9:])}


# ---- what is prepared ----------------------------------------------------------------------


def test_arrays_are_uint8_images_and_float32_multi_hot_labels(xray, tmp_path):
    directory, _ = xray
    entry = tmp_path / "cache" / "entry"
    manifest = chestxray14.prepare(directory, entry, SIZE)
    total = len(image_names())
    shapes = {name: tuple(a["shape"]) for name, a in manifest["arrays"].items()}
    assert list(shapes) == ["train_x", "train_y", "valid_x", "valid_y", "test_x", "test_y"]
    assert sum(shapes[f"{s}_x"][0] for s in chestxray14.SPLITS) == total
    for split in chestxray14.SPLITS:
        x, y = load(entry, f"{split}_x"), load(entry, f"{split}_y")
        assert x.dtype == np.uint8 and x.shape == (len(x), SIZE, SIZE) == shapes[f"{split}_x"]
        assert y.dtype == np.float32 and y.shape == (len(x), 14)
        assert manifest["arrays"][f"{split}_x"]["dtype"] == "uint8"
    assert manifest["labels"] == list(chestxray14.LABELS)
    assert manifest["source"]["directory"] == str(directory)


def test_split_by_patient_in_id_order_rows_in_csv_order(xray, tmp_path):
    directory, listed = xray
    entry = tmp_path / "entry"
    manifest = chestxray14.prepare(directory, entry, SIZE)
    names = image_names()
    want = expected_split()
    for split in chestxray14.SPLITS:
        # which image is where: each fixture image has its own grey value
        x = load(entry, f"{split}_x")
        rows = [names.index(name) for name in names if listed[name][0] in want[split]]
        assert len(x) == len(rows)
        values = [gray_value(r) for r in rows]
        for i, (image, value) in enumerate(zip(x, values)):
            if names[rows[i]] == HALVES:
                continue
            assert np.abs(image.astype(int) - value).max() <= 1, (split, i, names[rows[i]])
        assert manifest["split"][split] == {"patients": len(want[split]), "images": len(rows)}
    # each patient in exactly one split
    assert set().union(*want.values()) == {p for p, _ in PATIENTS}
    assert sum(len(v) for v in want.values()) == len(PATIENTS)


def test_labels_match_the_csv_without_no_finding(xray, tmp_path):
    directory, listed = xray
    entry = tmp_path / "entry"
    chestxray14.prepare(directory, entry, SIZE)
    want = expected_split()
    rows = csv_rows(directory)[1:]  # the labels as the CSV says them, in its order
    for split in chestxray14.SPLITS:
        y = load(entry, f"{split}_y")
        findings = [row[1] for row in rows if int(row[3]) in want[split]]
        assert len(y) == len(findings)
        for hot, text in zip(y, findings):
            named = {chestxray14.LABELS[i] for i in np.flatnonzero(hot)}
            assert named == set(text.split("|")) - {"No Finding"}, text
            assert set(np.unique(hot)) <= {0.0, 1.0}
    # the fixture has every finding at least once, and "No Finding" rows of zeros
    all_y = np.concatenate([load(entry, f"{s}_y") for s in chestxray14.SPLITS])
    assert all_y.sum(axis=0).min() >= 1 and (all_y.sum(axis=1) == 0).sum() >= 8


def test_label_order_is_the_2018_get_dummies_order():
    # pandas' Series.str.get_dummies sorts its columns; the 2018 code dropped "No Finding"
    assert list(chestxray14.LABELS) == sorted(chestxray14.LABELS)
    assert len(chestxray14.LABELS) == 14 and "No Finding" not in chestxray14.LABELS
    assert chestxray14.LABELS[8] == "Infiltration"  # the 2018 notebooks' lowest AUC (~0.63)


def test_split_sizes_are_the_2018_notebooks_counts():
    # the 2018 notebooks print "train:21563 valid:3080 test:6162" for 30,805 patients
    assert chestxray14.split_sizes(30805) == (21563, 3080, 6162)
    # sklearn would refuse 10 (floor(7.0) + ceil(3.0000000000000004) > 10): the rest is test
    assert chestxray14.split_sizes(10) == (7, 1, 2)
    for n in range(3, 200):
        sizes = chestxray14.split_sizes(n)
        assert sum(sizes) == n and min(sizes) >= 0


def test_images_are_grayscale_resized_bilinear(xray, tmp_path):
    directory, _ = xray
    entry = tmp_path / "entry"
    chestxray14.prepare(directory, entry, SIZE)
    names = image_names()
    train = load(entry, "train_x")
    train_names = [n for n in names if int(n[:8]) in expected_split()["train"]]
    halves = train[train_names.index(HALVES)]
    assert (halves[: SIZE // 2 - 1] <= 11).all() and (halves[SIZE // 2 + 1 :] >= 239).all()
    # a textured image: exactly Pillow's bilinear resize of its grayscale
    rng = np.random.default_rng(0)
    texture = (np.add.outer(np.arange(300), np.arange(200)) % 256).astype(np.uint8)
    texture ^= rng.integers(0, 32, texture.shape, dtype=np.uint8)
    file = tmp_path / "texture.png"
    Image.fromarray(np.stack([texture] * 3 + [np.full_like(texture, 255)], -1), "RGBA").save(file)
    got = chestxray14.load_image(file, SIZE)
    gray = Image.fromarray(texture, "L")
    want = np.asarray(gray.resize((SIZE, SIZE), Image.Resampling.BILINEAR))
    assert got.dtype == np.uint8 and got.shape == (SIZE, SIZE)
    assert np.array_equal(got, want)
    nearest = np.asarray(gray.resize((SIZE, SIZE), Image.Resampling.NEAREST))
    assert not np.array_equal(got, nearest)


def test_images_are_written_to_their_files_in_chunks(xray, tmp_path, monkeypatch):
    """Chunks smaller than a split, and no np.save of the images (they would be in memory)."""
    directory, _ = xray
    monkeypatch.setattr(chestxray14, "CHUNK_IMAGES", 3)
    saved = []
    original = np.save
    monkeypatch.setattr(
        np,
        "save",
        lambda path, a, *args, **kw: (
            saved.append(os.path.basename(path)),
            original(path, a, *args, **kw),
        ),
    )
    entry = tmp_path / "entry"
    chestxray14.prepare(directory, entry, SIZE)
    assert sorted(saved) == ["test_y.npy", "train_y.npy", "valid_y.npy"]
    names = image_names()
    train = load(entry, "train_x")
    rows = [i for i, n in enumerate(names) if int(n[:8]) in expected_split()["train"]]
    for image, row in zip(train, rows):
        if names[row] != HALVES:
            assert abs(int(image[5, 5]) - gray_value(row)) <= 1


@pytest.mark.parametrize("writable", [False, True])
def test_cache_keeps_arrays_written_in_place(tmp_path, writable):
    def build(directory):
        if writable:  # a writable memory map: its pages must reach the file
            x = np.lib.format.open_memmap(
                directory / "x.npy", mode="w+", dtype=np.uint8, shape=(4, 3)
            )
            x[:] = np.arange(12).reshape(4, 3)
            return {"x": x, "y": np.arange(4)}
        np.save(directory / "x.npy", np.arange(12, dtype=np.uint8).reshape(4, 3))
        return {"x": np.load(directory / "x.npy", mmap_mode="r"), "y": np.arange(4)}

    entry = tmp_path / "entry"
    manifest = cache.prepared(entry, build, "test", in_place=True)
    assert np.array_equal(np.load(entry / "x.npy"), np.arange(12).reshape(4, 3))
    assert manifest["arrays"]["x"] == {"shape": [4, 3], "dtype": "uint8"}
    assert not cache.check(entry, manifest, rehash=True)


# ---- through data=real ---------------------------------------------------------------------


def real_config(tmp_path, directory):
    cfg = config.RealDataConfig(cache_dir=str(tmp_path / "cache"))
    cfg.cifar10 = config.ArchiveConfig(filename="cifar-10-python.tar.gz", urls=[])
    cfg.imdb = config.ArchiveConfig(filename="imdb.npz", urls=[])
    cfg.chestxray14 = config.DirectoryConfig(directory=str(directory) if directory else None)
    return cfg


def test_real_prepare_at_264_then_reuses_the_cache(xray, tmp_path):
    directory, _ = xray
    cfg = real_config(tmp_path, directory)
    entry, manifest = real.prepare("densenet", "chestxray14", cfg)
    size = chestxray14.SIZE
    assert size == 264 and entry.parent == tmp_path / "cache" / "real"
    assert entry.name.startswith(f"chestxray14-{real.PREPARATION}-{size}-")
    assert manifest["arrays"]["train_x"]["shape"][1:] == [size, size]
    assert load(entry, "test_x").shape[1:] == (size, size)
    stamps = {p.name: p.stat().st_mtime_ns for p in entry.iterdir()}
    # the images are not read again: a second run works without them
    for png in directory.rglob("*.png"):
        png.unlink()
    again, manifest2 = real.prepare("densenet", "chestxray14", cfg)
    assert again == entry and manifest2 == manifest
    assert {p.name: p.stat().st_mtime_ns for p in entry.iterdir()} == stamps


def test_another_csv_is_another_entry(xray, tmp_path):
    directory, _ = xray
    cfg = real_config(tmp_path, directory)
    size = 16
    first = chestxray14.fingerprint(directory, size, real.PREPARATION)
    assert first != chestxray14.fingerprint(directory, size + 1, real.PREPARATION)
    assert first != chestxray14.fingerprint(directory, size, "v-next")
    entry, _ = real.prepare("densenet", "chestxray14", cfg)
    csv_file = directory / chestxray14.CSV_NAME
    csv_file.write_text(csv_file.read_text().replace(",Hernia,", ",Mass,", 1))
    entry2, _ = real.prepare("densenet", "chestxray14", cfg)
    assert entry2 != entry and entry.is_dir() and entry2.is_dir()
    assert (
        load(entry2, "test_y")[:, chestxray14.LABELS.index("Mass")].sum()
        == load(entry, "test_y")[:, chestxray14.LABELS.index("Mass")].sum() + 1
    )


def test_the_setting_arrives_typed_from_the_config():
    config.register()
    with initialize_config_dir(config_dir=str(bench.conf_dir()), version_base="1.3"):
        default = OmegaConf.to_object(compose(config_name="config", overrides=["data=real"]))
        given = OmegaConf.to_object(
            compose(
                config_name="config",
                overrides=["data=real", "data.chestxray14.directory=/data/ChestX-ray14"],
            )
        )
    assert type(default.data.chestxray14) is config.DirectoryConfig
    assert default.data.chestxray14.directory is None
    assert given.data.chestxray14.directory == "/data/ChestX-ray14"


def test_the_cli_prepares_once_then_a_run_trains_on_it(xray, run_bench, tmp_path):
    """`python -m bench prepare task=densenet data=real ...` as a user types it, then a run
    (the fake framework) on the prepared split: the test split's 3 patients' images."""
    directory, listed = xray
    where = f"data.chestxray14.directory={directory}"
    prepared = run_bench("prepare", "task=densenet", "data=real", where, "task.image_size=32")
    assert prepared.returncode == 0, prepared.output
    assert "prepare densenet data=real: " in prepared.output
    run = run_bench(
        "framework=fake",
        "task=densenet",
        "data=real",
        where,
        "preset=smoke",
        "task.batch_size=4",
        "preset.epochs=1",
        "task.image_size=32",
    )
    assert run.result["status"] == "ok", run.output
    # the mean ROC-AUC over the labels both present and absent among the few test images
    assert run.result["accuracy_metric"] == "mean_roc_auc" and 0 <= run.result["accuracy"] <= 1
    test_images = sum(1 for patient, _ in listed.values() if patient in expected_split()["test"])
    assert run.result["test_examples"] == test_images
    assert run.result["data"]["cache_entry"] in prepared.output


def test_the_images_are_stored_in_proportion_to_the_crop(xray, run_bench):
    """SPEC's 264 for a 224 crop; task.image_size=112 and 32 store 132 and 38 (as synthetic
    data does), each size its own cache entry: training crops and evaluation resizes images
    of the same proportions at every size."""
    directory, _ = xray
    prepared = run_bench(
        "prepare",
        "task=densenet",
        "data=real",
        f"data.chestxray14.directory={directory}",
        "task.image_size=112,32",
    )
    assert prepared.returncode == 0, prepared.output
    entries = re.findall(r"^prepare densenet data=real: .* in (.+)$", prepared.output, re.M)
    assert len(entries) == 2, prepared.output
    for entry, side in zip(entries, (132, 38)):
        assert Path(entry).name.startswith(f"chestxray14-{real.PREPARATION}-{side}-"), entry
        for split in chestxray14.SPLITS:
            assert load(Path(entry), f"{split}_x").shape[1:] == (side, side)


# ---- what is refused, and what to do -------------------------------------------------------


def header_only_png(path, width, height):
    """A PNG whose header declares width x height 8-bit grayscale pixels: Pillow reads the size
    from the header and refuses an image over its pixel limit before decoding anything."""

    def chunk(kind, data):
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b""))
        + chunk(b"IEND", b"")
    )


@pytest.mark.parametrize(
    "damage", ["an image over Pillow's pixel limit", "a CSV field over the csv module's limit"]
)
def test_what_pillow_or_csv_refuses_is_one_line(xray, run_bench, own_cache, damage):
    directory, _ = xray
    env, _ = own_cache  # the CSV alone names an entry: a shared cache may hold this one
    if damage.startswith("an image"):
        bomb = next(directory.rglob("00000075_001.png"))
        header_only_png(bomb, 20000, 20000)  # 400 million pixels
        expected = (
            f"{bomb} is not one of ChestX-ray14's images (1024 x 1024): Image size "
            f"(400000000 pixels) exceeds limit"
        )
    else:
        csv_file = directory / chestxray14.CSV_NAME
        lines = csv_file.read_text().splitlines()
        lines[3] = lines[3].replace(",058Y,", f",{'9' * 200_000},", 1)
        csv_file.write_text("\n".join(lines) + "\n")
        expected = (
            f"{csv_file} is not NIH's {chestxray14.CSV_NAME}: line 4: field larger "
            f"than field limit (131072)"
        )
    run = run_bench(
        "prepare",
        "task=densenet",
        "data=real",
        f"data.chestxray14.directory={directory}",
        "task.image_size=32",
        env=env,
    )
    assert run.returncode == 1 and "Traceback" not in run.output, run.output
    assert f"prepare densenet data=real: {expected}" in run.output, run.output


def test_no_directory_says_it_is_never_downloaded(tmp_path):
    with pytest.raises(DataError) as err:
        real.prepare("densenet", "chestxray14", real_config(tmp_path, None))
    message = str(err.value)
    assert "never downloaded" in message and "45 GB" in message
    assert "https://nihcc.app.box.com/v/ChestXray-NIHCC" in message
    assert "data.chestxray14.directory=" in message
    assert not (tmp_path / "cache").exists()


def test_an_archive_setting_is_refused(xray, tmp_path):
    directory, _ = xray
    cfg = real_config(tmp_path, directory)
    cfg.archive = str(tmp_path / "images_001.tar.gz")
    with pytest.raises(DataError, match="a directory, not an archive.*data.chestxray14.directory"):
        real.prepare("densenet", "chestxray14", cfg)


def test_missing_directory(tmp_path):
    cfg = real_config(tmp_path, tmp_path / "nowhere")
    with pytest.raises(DataError, match=r"nowhere: no such directory.*nihcc"):
        real.prepare("densenet", "chestxray14", cfg)


def test_missing_csv(xray, tmp_path):
    directory, _ = xray
    (directory / chestxray14.CSV_NAME).unlink()
    with pytest.raises(DataError, match=r"has no Data_Entry_2017\.csv"):
        real.prepare("densenet", "chestxray14", real_config(tmp_path, directory))


def test_absent_images_are_counted_and_named(xray, tmp_path):
    directory, _ = xray
    gone = ["00000044_002.png", "00000060_000.png", "00000031_000.png"]
    for name in gone:
        next(directory.rglob(name)).unlink()
    entry = tmp_path / "entry"
    with pytest.raises(DataError) as err:
        chestxray14.prepare(directory, entry, SIZE)
    message = str(err.value)
    assert message.startswith(f"3 of the {len(image_names())} images")
    assert all(name in message for name in gone)
    assert not entry.exists() and not list(tmp_path.glob("entry.*"))  # nothing half-made


def test_many_absent_images_are_counted_and_a_few_named(xray, tmp_path):
    directory, _ = xray
    for png in (directory / "images_002").rglob("*.png"):
        png.unlink()
    absent = len(image_names()) - len(image_names()) // 2
    with pytest.raises(DataError, match=rf"^{absent} of the .*, \.\.\.; extract every"):
        chestxray14.prepare(directory, tmp_path / "entry", SIZE)


def test_unknown_finding(tmp_path):
    directory = tmp_path / "x"
    make_fixture(directory)
    csv_file = directory / chestxray14.CSV_NAME
    csv_file.write_text(csv_file.read_text().replace("Mass|Nodule", "Mass|Nodulle"))
    with pytest.raises(
        DataError,
        match=r"line \d+ \(00000007_002\.png\): unknown finding "
        r"'Nodulle'; known: Atelectasis",
    ):
        chestxray14.prepare(directory, tmp_path / "entry", SIZE)


@pytest.mark.parametrize(
    "header,missing",
    [
        (HEADER.replace("Patient ID", "Patient"), "'Patient ID'"),
        (HEADER.replace("Finding Labels", "Labels"), "'Finding Labels'"),
        ("filename,label,patient,x,y,z,w,a,b,c,d,", "'Image Index', 'Finding Labels'"),
    ],
)
def test_a_csv_with_other_columns(tmp_path, header, missing):
    directory = tmp_path / "x"
    make_fixture(directory, header=header)
    with pytest.raises(
        DataError,
        match=rf"not NIH's Data_Entry_2017\.csv: it has no column "
        rf"{missing}",
    ):
        chestxray14.prepare(directory, tmp_path / "entry", SIZE)


def test_an_unreadable_image_is_named(xray, tmp_path):
    directory, _ = xray
    broken = next(directory.rglob("00000075_001.png"))
    broken.write_bytes(broken.read_bytes()[:40])
    with pytest.raises(DataError, match=r"00000075_001\.png is not a readable image"):
        chestxray14.prepare(directory, tmp_path / "entry", SIZE)


def test_two_copies_of_an_image_are_refused(xray, tmp_path):
    directory, _ = xray
    original = next(directory.rglob("00000015_001.png"))
    (directory / "images").mkdir()
    (directory / "images" / original.name).write_bytes(original.read_bytes())
    with pytest.raises(DataError, match=r"00000015_001\.png is under .* twice"):
        chestxray14.prepare(directory, tmp_path / "entry", SIZE)


def test_the_workers_evaluation_resize_is_pillows_bilinear():
    """bench_shared.xray resizes each evaluation batch with matrices (NumPy only, in every
    worker); they are Pillow's BILINEAR weights, as the 2018 notebooks' resize, to rounding."""
    from PIL import Image

    from bench_shared import xray

    image = np.random.RandomState(0).randint(0, 256, (264, 264)).astype(np.uint8)
    ours = xray.resized(image[None], 224)[0]
    pillow = np.asarray(Image.fromarray(image).resize((224, 224), Image.BILINEAR), np.float32)
    assert np.abs(ours - pillow).max() < 1.0
