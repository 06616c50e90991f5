"""TFRecordWriter, TFRecordOptions and TFRecordDataset without TensorFlow: round trips,
compression, reading orders, errors, and FILE auto-sharding of record files."""

import gzip
import os
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf
from simdist import errors
from simdist.data.options import AutoShardPolicy
from simdist.data.record_framing import frame
from simdist.distribute.auto_shard import auto_shard_dataset


def write(path, records, options=None):
    with tf.io.TFRecordWriter(str(path), options) as writer:
        for record in records:
            writer.write(record)
    return str(path)


def read(filenames, **kwargs):
    return [r.numpy() for r in tf.data.TFRecordDataset(filenames, **kwargs)]


@pytest.fixture
def files(tmp_path):
    """Five files of 3, 1, 5, 0 and 2 records (``b"<file><record>"``)."""
    sizes = [3, 1, 5, 0, 2]
    return [
        write(tmp_path / f"part-{i}.tfrecord", [f"{i}{j}".encode() for j in range(n)])
        for i, n in enumerate(sizes)
    ]


def test_uncompressed_file_is_the_framed_records(tmp_path):
    path = write(tmp_path / "a", [b"x", b"", b"yz" * 100])
    with open(path, "rb") as f:
        assert f.read() == frame(b"x") + frame(b"") + frame(b"yz" * 100)


@settings(max_examples=25)
@given(
    records=st.lists(st.binary(max_size=300), max_size=12),
    kind=st.sampled_from([None, "", "GZIP", "ZLIB"]),
)
def test_round_trip(tmp_path_factory, records, kind):
    path = write(tmp_path_factory.mktemp("rt") / "f", records, kind)
    assert read(path, compression_type=kind) == records


def test_compressed_files_are_gzip_and_zlib_streams(tmp_path):
    records = [b"a" * 50, b"b"]
    plain = frame(records[0]) + frame(records[1])
    gz = write(tmp_path / "g", records, tf.io.TFRecordOptions(compression_type="GZIP"))
    zz = write(tmp_path / "z", records, "ZLIB")
    with open(gz, "rb") as f:
        assert gzip.decompress(f.read()) == plain
    with open(zz, "rb") as f:
        assert zlib.decompress(f.read()) == plain
    level0 = write(tmp_path / "g0", records, tf.io.TFRecordOptions("GZIP", compression_level=0))
    with open(level0, "rb") as f:
        assert gzip.decompress(f.read()) == plain


def test_options_strings_and_numbers():
    get = tf.io.TFRecordOptions.get_compression_type_string
    assert get(None) == "" and get("") == ""
    assert get("GZIP") == "GZIP" and get(tf.io.TFRecordOptions("ZLIB")) == "ZLIB"
    assert get(2) == "GZIP" and get(1) == "ZLIB" and get(0) == ""
    with pytest.raises(ValueError, match='Not a valid compression_type: "BZ2"'):
        tf.io.TFRecordOptions("BZ2")
    with pytest.raises(ValueError, match="Not a valid compression_type"):
        tf.io.TFRecordWriter("unused", "gzip")


def test_writer_errors_and_str_records(tmp_path):
    path = str(tmp_path / "w")
    writer = tf.io.TFRecordWriter(path)
    writer.write("héllo")
    writer.flush()
    assert os.path.getsize(path) == 16 + len("héllo".encode())
    writer.close()
    writer.close()
    with pytest.raises(errors.FailedPreconditionError):
        writer.write(b"late")
    with pytest.raises(TypeError):
        tf.io.TFRecordWriter(str(tmp_path / "i")).write(1)
    with pytest.raises(errors.NotFoundError):
        tf.io.TFRecordWriter(str(tmp_path / "no" / "such" / "dir"))
    assert read(path) == ["héllo".encode()]


def test_flat_order_and_filename_forms(files):
    expected = [b"00", b"01", b"02", b"10", b"20", b"21", b"22", b"23", b"24", b"40", b"41"]
    assert read(files) == expected
    assert read(tf.constant(files)) == expected
    assert read(tf.data.Dataset.from_tensor_slices(files)) == expected
    assert read(files[1]) == [b"10"]
    ds = tf.data.TFRecordDataset(files)
    assert ds.element_spec == tf.TensorSpec([], tf.string)
    assert int(ds.cardinality()) == tf.data.UNKNOWN_CARDINALITY


def test_parallel_reads_interleave_one_record_per_file(files):
    """TF 2.21's order (tests/data/test_tfrecord_vs_tf.py compares it)."""
    assert read(files, num_parallel_reads=2) == [
        b"00", b"10", b"01", b"02", b"20", b"21", b"22", b"40", b"23", b"41", b"24",
    ]  # fmt: skip
    assert read(files, num_parallel_reads=1) == read(files)
    names = tf.data.Dataset.from_tensor_slices(files)
    interleaved = names.interleave(tf.data.TFRecordDataset, cycle_length=2)
    assert list(interleaved.as_numpy_iterator()) == read(files, num_parallel_reads=2)


def test_bad_arguments(files, tmp_path):
    with pytest.raises(errors.InvalidArgumentError, match="compression_type"):
        tf.data.TFRecordDataset(files, compression_type="BZ2")
    with pytest.raises(errors.InvalidArgumentError, match="`cycle_length` must be > 0"):
        tf.data.TFRecordDataset(files, num_parallel_reads=0)
    with pytest.raises(TypeError):
        tf.data.TFRecordDataset([1, 2])
    with pytest.raises(TypeError):
        tf.data.TFRecordDataset(tf.data.Dataset.range(2))
    with pytest.raises(errors.NotFoundError):
        read(str(tmp_path / "missing"))
    with pytest.raises(errors.DataLossError, match="incorrect header check"):
        read(files[0], compression_type="GZIP")
    with pytest.raises(errors.InvalidArgumentError, match="compression_type"):
        tf.data.TFRecordDataset(files, compression_type="gzip")  # TF: read as uncompressed


def test_corruption_in_a_dataset(tmp_path):
    path = write(tmp_path / "c", [b"a0", b"a1"])
    with open(path, "r+b") as f:
        f.seek(18 + 12)
        f.write(b"X")
    it = iter(tf.data.TFRecordDataset(path))
    assert next(it).numpy() == b"a0"
    with pytest.raises(errors.DataLossError, match="corrupted record at 30"):
        next(it)


def test_map_parse_batch_pipeline(tmp_path):
    def example(i):
        return tf.train.Example(features=tf.train.Features(feature={
            "x": tf.train.Feature(float_list=tf.train.FloatList(value=[i, i / 2])),
            "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
        })).SerializeToString()  # fmt: skip

    path = write(tmp_path / "e", [example(i) for i in range(5)])
    spec = {"x": tf.io.FixedLenFeature([2], tf.float32), "y": tf.io.FixedLenFeature([], tf.int64)}
    ds = tf.data.TFRecordDataset(path).map(lambda s: tf.io.parse_single_example(s, spec))
    batches = list(ds.batch(2))
    assert [b["y"].numpy().tolist() for b in batches] == [[0, 1], [2, 3], [4]]
    assert batches[0]["x"].numpy().tolist() == [[0.0, 0.0], [1.0, 0.5]]
    batched = tf.data.TFRecordDataset(path).batch(3).map(lambda s: tf.io.parse_example(s, spec))
    assert [b["y"].numpy().tolist() for b in batched] == [[0, 1, 2], [3, 4]]


# --- FILE auto-sharding ----------------------------------------------------------------------
def with_policy(ds, policy):
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = policy
    return ds.with_options(options)


def worker_records(ds, workers):
    return [
        [r.numpy() for r in auto_shard_dataset(ds, workers, w).dataset] for w in range(workers)
    ]


@pytest.mark.parametrize("policy", [AutoShardPolicy.AUTO, AutoShardPolicy.FILE])
def test_file_sharding_gives_worker_w_files_w_plus_k_workers(files, policy):
    ds = with_policy(tf.data.TFRecordDataset(files), policy)
    assert auto_shard_dataset(ds, 2, 0).policy == AutoShardPolicy.FILE
    assert worker_records(ds, 2) == [
        [b"00", b"01", b"02", b"20", b"21", b"22", b"23", b"24", b"40", b"41"],
        [b"10"],
    ]
    parallel = with_policy(tf.data.TFRecordDataset(files, num_parallel_reads=2), policy)
    assert worker_records(parallel, 2) == [
        [b"00", b"20", b"01", b"21", b"02", b"22", b"23", b"40", b"24", b"41"],
        [b"10"],
    ]


def test_list_files_interleave_is_sharded_by_file(files, tmp_path):
    names = tf.data.Dataset.list_files(str(tmp_path / "*.tfrecord"), shuffle=False)
    ds = names.interleave(tf.data.TFRecordDataset, cycle_length=2).batch(20)
    got = [sorted(r for batch in w for r in batch.tolist()) for w in worker_records(ds, 2)]
    assert got == [
        sorted([b"00", b"01", b"02", b"20", b"21", b"22", b"23", b"24", b"40", b"41"]),
        [b"10"],
    ]


def test_data_policy_keeps_every_file(files):
    ds = with_policy(tf.data.TFRecordDataset(files), AutoShardPolicy.DATA)
    result = auto_shard_dataset(ds, 2, 1)
    assert result.policy == AutoShardPolicy.DATA and result.dataset is ds


def test_multi_worker_strategy_reads_its_files(files):
    from simdist.sim import launch

    def prog():
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        ds = tf.data.TFRecordDataset(files).batch(2)
        seen = []
        for batch in strategy.experimental_distribute_dataset(ds):
            for value in strategy.experimental_local_results(batch):
                seen += value.numpy().tolist()
        return seen

    first, second = launch(prog, workers=2, devices_per_worker=1)
    assert sorted(first) == [b"00", b"01", b"02", b"20", b"21", b"22", b"23", b"24", b"40",
                             b"41"]  # fmt: skip
    assert second == [b"10"]


def test_parsed_records_through_a_strategy(tmp_path):
    spec = {"x": tf.io.FixedLenFeature([], tf.int64), "v": tf.io.VarLenFeature(tf.int64)}
    records = [
        tf.train.Example(features=tf.train.Features(feature={
            "x": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
            "v": tf.train.Feature(int64_list=tf.train.Int64List(value=list(range(i % 3)))),
        })).SerializeToString()
        for i in range(8)
    ]  # fmt: skip
    paths = [write(tmp_path / "p0", records[:4]), write(tmp_path / "p1", records[4:])]
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])

    def dataset_fn(ctx):
        names = tf.data.Dataset.from_tensor_slices(paths).shard(
            ctx.num_input_pipelines, ctx.input_pipeline_id
        )
        ds = names.interleave(tf.data.TFRecordDataset, cycle_length=2)
        parsed = ds.map(lambda s: tf.io.parse_single_example(s, spec))
        summed = parsed.map(lambda e: e["x"] + tf.reduce_sum(tf.sparse.to_dense(e["v"])))
        return summed.batch(ctx.get_per_replica_batch_size(4))

    seen = []
    for batch in strategy.distribute_datasets_from_function(dataset_fn):
        for value in strategy.experimental_local_results(batch):
            seen += value.numpy().tolist()
    assert sorted(seen) == sorted(i + (0, 0, 1)[i % 3] for i in range(8))
    dist = strategy.experimental_distribute_dataset(
        tf.data.TFRecordDataset(paths).map(lambda s: tf.io.parse_single_example(s, spec)["x"])
        .batch(4)
    )  # fmt: skip
    got = [strategy.experimental_local_results(b) for b in dist]
    assert [[v.numpy().tolist() for v in step] for step in got] == [[[0, 1], [2, 3]],
                                                                    [[4, 5], [6, 7]]]  # fmt: skip


def test_multi_worker_list_files_interleave_parse(tmp_path):
    """The tutorials' shape of pipeline: list_files, interleave the readers, parse, batch;
    under AUTO each worker reads its own files (w, w + 2, ...)."""
    from simdist.sim import launch

    for i in range(5):
        write(tmp_path / f"ex-{i}.tfrecord", [
            tf.train.Example(features=tf.train.Features(feature={
                "x": tf.train.Feature(int64_list=tf.train.Int64List(value=[10 * i + j]))
            })).SerializeToString()
            for j in range(2)
        ])  # fmt: skip
    spec = {"x": tf.io.FixedLenFeature([], tf.int64)}

    def prog():
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        names = tf.data.Dataset.list_files(str(tmp_path / "ex-*.tfrecord"), shuffle=False)
        ds = names.interleave(tf.data.TFRecordDataset, cycle_length=2)
        ds = ds.map(lambda s: tf.io.parse_single_example(s, spec)["x"]).batch(2)
        seen = []
        for batch in strategy.experimental_distribute_dataset(ds):
            for value in strategy.experimental_local_results(batch):
                seen += value.numpy().tolist()
        return seen

    first, second = launch(prog, workers=2, devices_per_worker=1)
    assert first == [0, 20, 1, 21, 40, 41]
    assert second == [10, 30, 11, 31]
