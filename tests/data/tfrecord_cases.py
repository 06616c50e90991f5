# ruff: noqa: E501 - the cases are program text run on both sides; their lines stay whole
"""The cases of test_tfrecord_vs_tf.py: each runs on simdist and on TensorFlow 2.21.

``case(tf, np, root, side)`` returns a JSON-able dict. ``write_*`` cases write files under
``root/<side>``; ``read_*`` cases run after both sides wrote and read both sides' files.
``attempt``, ``array`` and ``arrays`` come from the test module's prelude.
"""

CASES = {}

CASES["write_files"] = r'''
import os
def case(tf, np, root, side):
    rng = np.random.default_rng(7)
    records = [rng.integers(0, 256, n, dtype=np.uint8).tobytes() for n in (0, 1, 5, 300, 70000)]
    records.append("unicode é".encode())
    records.append(b"ends with nul\x00")
    sizes = {"a": 3, "b": 1, "c": 5, "d": 0, "e": 2}
    out = {}
    for kind, options in (("plain", None), ("gzip", "GZIP"), ("zlib", tf.io.TFRecordOptions(compression_type="ZLIB"))):
        with tf.io.TFRecordWriter(os.path.join(root, side, f"records.{kind}"), options) as w:
            for r in records:
                w.write(r)
    for name, n in sizes.items():
        with tf.io.TFRecordWriter(os.path.join(root, side, f"part-{name}.plain")) as w:
            for j in range(n):
                w.write(f"{name}{j}".encode())
    with tf.io.TFRecordWriter(os.path.join(root, side, "strings.plain")) as w:
        w.write("text record")
        w.flush()
        w.write(b"bytes record")
    out["options"] = [tf.io.TFRecordOptions.get_compression_type_string(o)
                      for o in (None, "", "GZIP", "ZLIB", 1, 2, 0)]
    out["bad_option"] = attempt(lambda: tf.io.TFRecordOptions("BZ2"))[:2]
    return out
'''

CASES["read_files"] = r'''
import os
def case(tf, np, root, side):
    out = {}
    for writer in ("simdist", "tf"):
        d = os.path.join(root, writer)
        for kind, ct in (("plain", None), ("gzip", "GZIP"), ("zlib", "ZLIB")):
            ds = tf.data.TFRecordDataset(os.path.join(d, f"records.{kind}"), compression_type=ct)
            out[f"{writer}/{kind}"] = [r.numpy().hex() for r in ds]
        out[f"{writer}/strings"] = [r.numpy().hex() for r in tf.data.TFRecordDataset(os.path.join(d, "strings.plain"))]
    d = os.path.join(root, side)
    parts = [os.path.join(d, f"part-{n}.plain") for n in "abcde"]
    def read(ds):
        return [r.numpy().decode() for r in ds]
    out["flat"] = read(tf.data.TFRecordDataset(parts))
    out["tensor names"] = read(tf.data.TFRecordDataset(tf.constant(parts)))
    out["dataset names"] = read(tf.data.TFRecordDataset(tf.data.Dataset.from_tensor_slices(parts)))
    for n in (1, 2, 3, 4, 8):
        out[f"parallel {n}"] = read(tf.data.TFRecordDataset(parts, num_parallel_reads=n))
    names = tf.data.Dataset.from_tensor_slices(parts)
    out["interleave"] = read(names.interleave(tf.data.TFRecordDataset, cycle_length=2, block_length=2))
    out["list_files"] = read(tf.data.Dataset.list_files(os.path.join(d, "part-*.plain"), shuffle=False).interleave(tf.data.TFRecordDataset, cycle_length=3))
    out["spec"] = str(tf.data.TFRecordDataset(parts).element_spec)
    out["cardinality"] = int(tf.data.TFRecordDataset(parts).cardinality())
    out["missing"] = attempt(lambda: read(tf.data.TFRecordDataset(os.path.join(d, "nope"))))[:2]
    out["int names"] = attempt(lambda: tf.data.TFRecordDataset([1, 2]))[:2]
    return out
'''

CASES["read_corrupt"] = r'''
import os
def case(tf, np, root, side):
    src = os.path.join(root, side, "part-a.plain")  # records a0 a1 a2, 18 bytes each
    raw = open(src, "rb").read()
    out = {}
    def read_all(path):
        got = []
        try:
            for r in tf.data.TFRecordDataset(path):
                got.append(r.numpy().decode())
        except Exception as exc:  # noqa: BLE001 - the error is the result
            got.append(attempt(lambda: (_ for _ in ()).throw(exc))[1:])
        return got
    for at in (0, 9, 12, 15, 30, 39, 50):
        data = bytearray(raw)
        data[at] ^= 1
        path = os.path.join(root, side, f"flip{at}")
        open(path, "wb").write(bytes(data))
        out[f"flip {at}"] = read_all(path)
    for size in (1, 11, 18, 23, 29, 30, 31, 33, 35, 53):
        path = os.path.join(root, side, f"cut{size}")
        open(path, "wb").write(raw[:size])
        out[f"cut {size}"] = read_all(path)
    return out
'''

CASES["write_examples"] = r'''
def case(tf, np, root, side):
    T = tf.train
    F = T.Feature
    out = {}
    def both(message):
        """Bytes and text; protobuf orders a map with several keys by a hash seeded per
        process, so those compare in the deterministic (key-sorted) form and without text."""
        data = message.SerializeToString(deterministic=True).hex()
        return [data, str(message) if len(str(message).split("key:")) <= 2 else None]
    out["int64"] = both(F(int64_list=T.Int64List(value=[1, 2, -1, 300, 2**63 - 1, -2**63])))
    out["float"] = both(F(float_list=T.FloatList(value=[0.1, 1.0, 1e20, -0.0, 3e-5, 123456789.0, float("inf"), 1/3])))
    out["bytes"] = both(F(bytes_list=T.BytesList(value=[b"", b"a\"b'c\\\n\t\r\x00\x7f\xc3\xa9 z"])))
    out["empty feature"] = both(F())
    out["empty lists"] = [both(F(int64_list=T.Int64List())), both(F(float_list=T.FloatList(value=[]))), both(F(bytes_list=T.BytesList(value=[b""])))]
    out["example none"] = both(T.Example())
    out["example empty"] = both(T.Example(features=T.Features()))
    keys = ["zeta", "alpha", "mid", "", "é"] + [f"k{i}" for i in range(12)][::-1]
    feats = {k: F(int64_list=T.Int64List(value=[i])) for i, k in enumerate(keys)}
    ex = T.Example(features=T.Features(feature=feats))
    out["map order"] = both(ex)
    out["map keys"] = sorted(ex.features.feature)
    out["parsed keys"] = sorted(T.Example.FromString(ex.SerializeToString()).features.feature)
    single = T.Example(features=T.Features(feature={"only": F(int64_list=T.Int64List(value=[5]))}))
    out["single key default bytes"] = single.SerializeToString().hex()
    built = T.Features()
    built.feature["z"].int64_list.value.append(1)
    built.feature["a"].float_list.value.extend([1.5, 2.5])
    built.feature["m"]
    out["built"] = both(built)
    out["dict ctor"] = both(T.Example(features={"feature": {"a": {"int64_list": {"value": [1]}}}}))
    seq = T.SequenceExample(
        context=T.Features(feature={"c": F(int64_list=T.Int64List(value=[1]))}),
        feature_lists=T.FeatureLists(feature_list={
            "s": T.FeatureList(feature=[F(int64_list=T.Int64List(value=[1])), F(), F(bytes_list=T.BytesList(value=[b"x"]))]),
            "e": T.FeatureList(),
        }))
    out["sequence"] = both(seq)
    f = F(int64_list=T.Int64List(value=[1]))
    f.float_list.value.append(2.0)
    out["oneof switch"] = [f.WhichOneof("kind"), f.HasField("int64_list"), both(f)]
    e = T.Example()
    e.features
    out["read no set"] = [e.HasField("features"), both(e)]
    e.features.feature["a"]
    out["entry sets"] = [e.HasField("features"), both(e)]
    out["eq"] = [F() == F(), F(int64_list=T.Int64List()) == F(), T.Example() == T.Example(features=T.Features()),
                 T.Int64List(value=[1]).value == [1]]
    out["float32 values"] = list(T.FloatList(value=[0.1, 1, 2.5e-3]).value)
    out["int np"] = list(T.Int64List(value=np.arange(3, dtype=np.int32)).value)
    out["errors"] = [
        attempt(lambda: T.BytesList(value=["s"])),
        attempt(lambda: T.Int64List(value=[1.5])),
        attempt(lambda: T.Int64List(value=[2**63])),
        attempt(lambda: T.FloatList(value=["a"])),
        attempt(lambda: T.Example(foo=1)),
    ]
    out["errors classes"] = [
        attempt(lambda: setattr(T.Example(), "features", T.Features()))[:2],
        attempt(lambda: setattr(T.Int64List(), "value", [1]))[:2],
        attempt(lambda: T.Features().feature.__setitem__("x", F()))[:2],
    ]
    out["bytesize"] = T.Example(features={"feature": {"a": {"int64_list": {"value": [1]}}}}).ByteSize()
    out["unpacked"] = list(T.Int64List.FromString(b"\x08\x01\x08\x02").value)
    out["parse returns"] = T.Example().ParseFromString(b"\n\x00")
    out["listfields"] = [d.name for d, v in F(int64_list=T.Int64List(value=[1])).ListFields()]
    return out
'''

_EXAMPLES = r'''
def examples(tf):
    T = tf.train
    F = T.Feature
    one = T.Example(features=T.Features(feature={
        "f": F(float_list=T.FloatList(value=[1.0, 2.0])),
        "i": F(int64_list=T.Int64List(value=[3])),
        "s": F(bytes_list=T.BytesList(value=[b"a", b"b", b"c"])),
        "e": F(),
    })).SerializeToString()
    two = T.Example(features=T.Features(feature={
        "f": F(float_list=T.FloatList(value=[1.0, 2.0, 3.0, 4.0])),
        "i": F(int64_list=T.Int64List(value=[3, 4, 5])),
    })).SerializeToString()
    return one, two
'''

CASES["write_parse_single"] = _EXAMPLES + r'''
def case(tf, np, root, side):
    one, two = examples(tf)
    io = tf.io
    P = lambda spec, data=one: attempt(lambda: arrays(io.parse_single_example(data, spec)))
    FL, VL, SQ = io.FixedLenFeature, io.VarLenFeature, io.FixedLenSequenceFeature
    out = {}
    out["all"] = P({"s": VL(tf.string), "i": FL([], tf.int64), "f": FL([2], tf.float32),
                    "a": VL(tf.int64), "b": FL([], tf.int64, default_value=5)})
    out["order"] = list(io.parse_single_example(one, {"s": VL(tf.string), "i": FL([], tf.int64), "f": FL([2], tf.float32), "a": VL(tf.int64), "b": FL([], tf.int64, default_value=5)}))
    out["missing float"] = P({"zz": FL([], tf.float32)})
    out["missing int"] = P({"zz": FL([], tf.int64)})
    out["missing str"] = P({"zz": FL([], tf.string)})
    out["empty kind"] = P({"e": FL([], tf.float32)})
    out["empty kind default"] = P({"e": FL([], tf.float32, default_value=2.0)})
    out["empty kind varlen"] = P({"e": VL(tf.float32)})
    out["dtype"] = P({"i": FL([], tf.float32)})
    out["dtype str as int"] = P({"s": FL([3], tf.int64)})
    out["dtype varlen"] = P({"s": VL(tf.int64)})
    out["size float"] = P({"f": FL([3], tf.float32)})
    out["size str"] = P({"s": FL([], tf.string)})
    out["size int"] = P({"i": FL([2], tf.int64)})
    out["shape 2d"] = P({"f": FL([1, 2], tf.float32)})
    out["default list"] = P({"zz": FL([3], tf.float32, default_value=[1, 2, 3])})
    out["default str"] = P({"zz": FL([], tf.string, default_value="x")})
    out["default 2d"] = P({"zz": FL([2, 1], tf.int64, default_value=[[1], [2]])})
    out["seq"] = P({"s": SQ([], tf.string, allow_missing=True), "f": SQ([2], tf.float32, allow_missing=True),
                    "zz": SQ([2], tf.float32, allow_missing=True)})
    out["seq stride"] = P({"s": SQ([2], tf.string, allow_missing=True)})
    out["seq default"] = P({"zz": SQ([], tf.int64, allow_missing=True, default_value=3)})
    out["garbage"] = P({"i": FL([], tf.int64)}, b"\x01\x02")
    out["empty input"] = P({"i": FL([], tf.int64, default_value=1)}, b"")
    out["tensor input"] = P({"i": FL([], tf.int64)}, tf.constant(one))
    return out
'''

CASES["write_parse_batch"] = _EXAMPLES + r'''
def case(tf, np, root, side):
    one, two = examples(tf)
    io = tf.io
    P = lambda spec, data=(one, two), **kw: attempt(lambda: arrays(io.parse_example(list(data), spec, **kw)))
    FL, VL, SQ = io.FixedLenFeature, io.VarLenFeature, io.FixedLenSequenceFeature
    out = {}
    out["varlen and seq"] = P({"i": VL(tf.int64), "f": SQ([2], tf.float32, allow_missing=True), "s": VL(tf.string)})
    out["seq pad default"] = P({"f": SQ([2], tf.float32, allow_missing=True, default_value=-1.0)})
    out["seq pad strings"] = P({"s": SQ([], tf.string, allow_missing=True)})
    out["size error at index 1"] = P({"i": FL([], tf.int64)})
    out["missing at index 1"] = P({"s": FL([3], tf.string)})
    out["fixed"] = P({"f": FL([2], tf.float32)}, (one, one))
    out["defaults"] = P({"zz": FL([2], tf.int64, default_value=[7, 8])})
    out["empty batch"] = attempt(lambda: arrays(io.parse_example(tf.constant([], tf.string), {"f": FL([2], tf.float32), "v": VL(tf.int64)})))
    out["from dataset"] = [arrays(b) for b in tf.data.Dataset.from_tensor_slices([one, two, one]).batch(2).map(
        lambda s: io.parse_example(s, {"i": VL(tf.int64), "f": SQ([2], tf.float32, allow_missing=True)}))]
    out["map single"] = [arrays(b) for b in tf.data.Dataset.from_tensor_slices([one, one]).map(
        lambda s: io.parse_single_example(s, {"f": FL([2], tf.float32), "s": SQ([], tf.string, allow_missing=True)}))]
    return out
'''

CASES["write_parse_sequence"] = r'''
def case(tf, np, root, side):
    T = tf.train
    F = T.Feature
    io = tf.io
    se = T.SequenceExample(
        context=T.Features(feature={"c": F(int64_list=T.Int64List(value=[1]))}),
        feature_lists=T.FeatureLists(feature_list={
            "s": T.FeatureList(feature=[F(int64_list=T.Int64List(value=[1, 2])), F(int64_list=T.Int64List(value=[3, 4]))]),
            "v": T.FeatureList(feature=[F(bytes_list=T.BytesList(value=[b"x"])), F(bytes_list=T.BytesList(value=[b"y", b"z"])), F(bytes_list=T.BytesList())]),
        })).SerializeToString()
    FL, VL, SQ = io.FixedLenFeature, io.VarLenFeature, io.FixedLenSequenceFeature
    def P(context=None, sequence=None):
        def run():
            c, s = io.parse_single_sequence_example(se, context_features=context, sequence_features=sequence)
            return [arrays(c), arrays(s), list(c), list(s)]
        return attempt(run)
    out = {}
    out["both"] = P({"c": FL([], tf.int64), "d": VL(tf.float32)}, {"s": SQ([2], tf.int64), "v": VL(tf.string)})
    out["missing list"] = P(sequence={"q": SQ([2], tf.int64)})
    out["missing allowed"] = P(sequence={"q": SQ([2], tf.int64, allow_missing=True), "r": VL(tf.int64)})
    out["step size"] = P(sequence={"s": SQ([3], tf.int64)})
    out["step dtype"] = P(sequence={"s": SQ([2], tf.float32)})
    out["context missing"] = P(context={"zz": FL([], tf.int64)})
    out["empty step"] = P(sequence={"v": SQ([], tf.string)})
    return out
'''

CASES["write_tensors"] = r'''
def case(tf, np, root, side):
    io = tf.io
    values = [
        tf.constant(1.5), tf.constant([[1, 2], [3, 4]]), tf.constant([b"ab", b""]),
        tf.constant([True, False]), tf.constant(np.zeros((0, 3), np.float32)),
        tf.constant(np.array([1, -2], np.int8)), tf.constant(np.array([1, 2], np.uint8)),
        tf.constant(np.array([1, 2], np.int16)), tf.constant(np.array([1.5], np.float16)),
        tf.constant(np.array([1.5], np.float64)), tf.constant(np.array([1, 2**40], np.int64)),
        tf.constant("s"), tf.constant(np.arange(6, dtype=np.float32).reshape(1, 2, 3)),
    ]
    out = {}
    for i, v in enumerate(values):
        data = io.serialize_tensor(v)
        out[f"serialize {i}"] = [data.numpy().hex(), array(data)["shape"], array(io.parse_tensor(data, v.dtype))]
    out["mismatch"] = attempt(lambda: io.parse_tensor(io.serialize_tensor(tf.constant(1.5)), tf.float64))
    out["int_val"] = attempt(lambda: array(io.parse_tensor(b"\x08\x03\x12\x04\x12\x02\x08\x03\x3a\x01\x07", tf.int32)))
    out["garbage"] = attempt(lambda: io.parse_tensor(b"\xff\xff", tf.float32))[:2]
    D = lambda *a, **k: attempt(lambda: array(io.decode_raw(*a, **k)))
    out["raw int16"] = D(b"\x01\x00\x02\x00", tf.int16)
    out["raw big endian"] = D(b"\x01\x00\x02\x00", tf.int16, little_endian=False)
    out["raw vector"] = D([b"\x01\x00", b"\x02\x00"], tf.uint8)
    out["raw float"] = D(np.array([1.5, 2], np.float32).tobytes(), tf.float32)
    out["raw matrix"] = D([[b"\x01\x00\x00\x00"], [b"\x02\x00\x00\x00"]], tf.int32)
    out["raw uneven"] = D([b"\x01\x00", b"\x02"], tf.uint8)
    out["raw not multiple"] = D(b"\x01\x00\x02", tf.int16)
    out["raw fixed"] = D([b"\x01\x00\x02", b"\x03"], tf.int16, fixed_length=4)
    return out
'''

CASES["write_sharding"] = r'''
import os
def case(tf, np, root, side):
    d = os.path.join(root, side, "shards")
    os.makedirs(d, exist_ok=True)
    parts = []
    for i, n in enumerate((3, 1, 5, 0, 2)):
        path = os.path.join(d, f"s{i}.rec")
        with tf.io.TFRecordWriter(path) as w:
            for j in range(n):
                w.write(f"{i}{j}".encode())
        parts.append(path)
    if side == "tf":
        from tensorflow.python.data.experimental.ops.distribute import _AutoShardDataset
        shard = lambda ds, n, i: _AutoShardDataset(ds, n, i)
    else:
        from simdist.distribute.auto_shard import auto_shard_dataset
        shard = lambda ds, n, i: auto_shard_dataset(ds, n, i).dataset
    def policy(ds, p):
        options = tf.data.Options()
        options.experimental_distribute.auto_shard_policy = p
        return ds.with_options(options)
    P = tf.data.experimental.AutoShardPolicy
    pipelines = {
        "flat": lambda: tf.data.TFRecordDataset(parts),
        "parallel": lambda: tf.data.TFRecordDataset(parts, num_parallel_reads=2),
        "list_files": lambda: tf.data.Dataset.list_files(os.path.join(d, "*.rec"), shuffle=False).interleave(tf.data.TFRecordDataset, cycle_length=2),
        "batched": lambda: tf.data.TFRecordDataset(parts).batch(2),
    }
    out = {}
    for name, make in pipelines.items():
        for p in ("AUTO", "FILE"):
            for workers in (2, 3):
                got = []
                for w in range(workers):
                    got.append(attempt(lambda: [x.tolist() if hasattr(x, "tolist") else x for x in
                        [r.numpy() for r in shard(policy(make(), getattr(P, p)), workers, w)]]))
                out[f"{name} {p} {workers}"] = [[v.decode() if isinstance(v, bytes) else
                    ([b.decode() for b in v] if isinstance(v, list) else v) for v in g[1]]
                    if g[0] == "ok" else g[:2] for g in got]
    return out
'''

CASES["write_random_examples"] = r'''
def case(tf, np, root, side):
    """200 random Examples (the same draws on both sides): bytes, and every feature parsed
    back as a VarLenFeature of its kind."""
    T = tf.train
    rng = np.random.default_rng(2024)
    kinds = ("int64", "float", "bytes", "none")
    out = {"bytes": [], "parsed": []}
    for _ in range(200):
        feature = {}
        specs = {}
        for k in range(int(rng.integers(0, 6))):
            key = "".join(chr(c) for c in rng.integers(97, 100, int(rng.integers(0, 4)))) + str(k)
            kind = kinds[int(rng.integers(0, 4))]
            n = int(rng.integers(0, 5))
            if kind == "int64":
                values = [int(v) for v in rng.integers(-2**62, 2**62, n)]
                feature[key] = T.Feature(int64_list=T.Int64List(value=values))
                specs[key] = tf.io.VarLenFeature(tf.int64)
            elif kind == "float":
                values = [float(v) for v in rng.standard_normal(n).astype(np.float32)]
                feature[key] = T.Feature(float_list=T.FloatList(value=values))
                specs[key] = tf.io.VarLenFeature(tf.float32)
            elif kind == "bytes":
                values = [bytes(rng.integers(0, 256, int(rng.integers(0, 6)), dtype=np.uint8)) for _ in range(n)]
                feature[key] = T.Feature(bytes_list=T.BytesList(value=values))
                specs[key] = tf.io.VarLenFeature(tf.string)
            else:
                feature[key] = T.Feature()
                specs[key] = tf.io.VarLenFeature(tf.int64)
        example = T.Example(features=T.Features(feature=feature))
        data = example.SerializeToString(deterministic=True)
        out["bytes"].append(data.hex())
        assert T.Example.FromString(data) == example
        if specs:
            out["parsed"].append(arrays(tf.io.parse_single_example(data, specs)))
    return out
'''

CASES["write_sparse_dataset"] = r'''
def case(tf, np, root, side):
    """A VarLenFeature parsed in Dataset.map: its element_spec, batched, made dense."""
    T = tf.train
    def ex(v):
        return T.Example(features=T.Features(feature={
            "v": T.Feature(int64_list=T.Int64List(value=v)),
            "y": T.Feature(int64_list=T.Int64List(value=[len(v)]))})).SerializeToString()
    spec = {"v": tf.io.VarLenFeature(tf.int64), "y": tf.io.FixedLenFeature([], tf.int64)}
    ds = tf.data.Dataset.from_tensor_slices([ex([1, 2]), ex([]), ex([3, 4, 5])])
    parsed = ds.map(lambda s: tf.io.parse_single_example(s, spec))
    batched = parsed.batch(2)
    dense = parsed.map(lambda e: tf.sparse.to_dense(e["v"]))
    return {
        "spec": str(parsed.element_spec),
        "batched spec": str(batched.element_spec),
        "elements": [arrays(e) for e in parsed],
        "batches": [arrays(b) for b in batched],
        "dense": [array(d) for d in dense],
        "dense spec": str(dense.element_spec),
        "to_dense batch": [array(tf.sparse.to_dense(b["v"], default_value=-1)) for b in batched],
        "from_dense": array(tf.sparse.from_dense(tf.constant([[0, 5], [6, 0]]))),
    }
'''
