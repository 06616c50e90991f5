# ruff: noqa: E501 - snippet sources are data, kept as written
"""Snippets of tf.config, tf.function and the tf.data methods users chain before distributing,
run on simdist and on TF 2.21 by the differential harness (4 logical CPUs, no GPU)."""

from simdist.testing.differential import Snippet as S

SNIPPETS = [
    S(
        "config.devices",
        """
        cpu = tf.config.list_physical_devices("CPU")[0]
        observe("physical", tf.config.list_physical_devices())
        observe("physical_gpu", tf.config.list_physical_devices("GPU"))
        observe("logical_before", tf.config.get_logical_device_configuration(cpu))
        observe("logical", tf.config.list_logical_devices())
        observe("logical_cpu", tf.config.list_logical_devices("CPU"))
        observe("configuration", tf.config.get_logical_device_configuration(cpu))
        observe("visible", tf.config.get_visible_devices())
        observe("visible_cpu", tf.config.get_visible_devices("CPU"))
        observe("same_again", tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(4)]))
        observe("change_after_start", lambda: tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * 2))
        observe("hide_after_start", lambda: tf.config.set_visible_devices([], "CPU"))
        observe("memory_limit_cpu", lambda: tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration(memory_limit=10)]))
        observe("unknown_device", lambda: tf.config.set_logical_device_configuration(
            tf.config.PhysicalDevice("/physical_device:GPU:0", "GPU"),
            [tf.config.LogicalDeviceConfiguration()]))
        observe("string_device", lambda: tf.config.get_logical_device_configuration("CPU:0"))
        observe("growth_cpu", lambda: tf.config.experimental.set_memory_growth(cpu, True))
        observe("ldc", tf.config.LogicalDeviceConfiguration(memory_limit=5))
        observe("ldc_fields", tf.config.LogicalDeviceConfiguration._fields)
        observe("ld", tf.config.LogicalDevice(name="/device:CPU:0", device_type="CPU"))
        observe("ld_eq", tf.config.list_logical_devices()[0] == tf.config.LogicalDevice("/device:CPU:0", "CPU"))
        observe("aliases", (tf.config.experimental.VirtualDeviceConfiguration is tf.config.LogicalDeviceConfiguration,
                            tf.config.experimental.list_physical_devices is tf.config.list_physical_devices))
        observe("experimental_logical", tf.config.experimental.list_logical_devices("CPU"))
        observe("experimental_virtual", tf.config.experimental.get_virtual_device_configuration(cpu))
        observe("lower_case", tf.config.list_logical_devices("cpu"))
        observe("unknown_type", lambda: tf.config.list_physical_devices("XPU"))
        observe("experimental_set_virtual", tf.config.experimental.set_virtual_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(4)]))
        observe("experimental_visible", tf.config.experimental.get_visible_devices("CPU"))
        observe("experimental_set_visible", tf.config.experimental.set_visible_devices(
            tf.config.list_physical_devices("CPU"), "CPU"))
        observe("growth_get_cpu", lambda: tf.config.experimental.get_memory_growth(cpu))
        """,
        phrases={
            "change_after_start": ("cannot be modified after being initialized",),
            "hide_after_start": ("cannot be modified after being initialized",),
            "memory_limit_cpu": ("memory limit on CPU virtual devices",),
            "unknown_device": ("Unrecognized device",),
            "string_device": ("Unrecognized device",),
            "growth_cpu": ("memory growth",),
        },
        differs={
            "lower_case": "TF matches device types case-sensitively and lists nothing for "
            "'cpu'; simdist reads 'cpu' as 'CPU'",
            "unknown_type": "TF lists nothing for an unknown device type; simdist raises "
            "ValueError naming CPU, GPU and TPU, so that a typo ('GUP') is not read as 'none'",
            "growth_get_cpu": "TF's get_memory_growth of a device it keeps no growth setting for "
            "fails with a bare KeyError from its internal dict; simdist answers False",
        },
    ),
    S(
        "config.switches",
        """
        observe("soft", tf.config.get_soft_device_placement())
        tf.config.set_soft_device_placement(False)
        observe("soft_off", tf.config.get_soft_device_placement())
        tf.config.set_soft_device_placement(True)
        observe("eager", tf.config.functions_run_eagerly())
        tf.config.run_functions_eagerly(True)
        observe("eager_on", tf.config.functions_run_eagerly())
        @tf.function
        def inside():
            return tf.executing_eagerly()
        observe("inside_eager", inside())
        tf.config.run_functions_eagerly(False)
        observe("inside_graph", inside())
        observe("tf32", tf.config.experimental.tensor_float_32_execution_enabled())
        observe("determinism", tf.config.experimental.enable_op_determinism())
        tf.config.experimental.enable_tensor_float_32_execution(False)
        observe("tf32_off", tf.config.experimental.tensor_float_32_execution_enabled())
        tf.config.experimental.enable_tensor_float_32_execution(True)
        tf.config.experimental_run_functions_eagerly(True)
        observe("experimental_eager", tf.config.experimental_functions_run_eagerly())
        tf.config.experimental_run_functions_eagerly(False)
        """,
    ),
    S(
        "function.tracing",
        """
        @tf.function
        def f(x, n=1):
            return x * n
        f(tf.constant(1.0)); f(tf.constant(2.0)); f(tf.constant([1.0])); f(tf.constant(1)); f(tf.constant(1.0), n=2)
        observe("count", f.experimental_get_tracing_count())
        observe("python_function", f.python_function.__name__)
        observe("result", f(tf.constant([1.0, 2.0]), n=3))
        observe("int_out", f(2, n=3))
        @tf.function(reduce_retracing=True)
        def g(x):
            return x + 1
        for n in [1, 2, 3, 4]:
            g(tf.ones([n]))
        observe("reduce_retracing", g.experimental_get_tracing_count())
        for shape in ([2, 2], [3, 3], [5]):
            g(tf.ones(shape))
        observe("reduce_retracing_rank", g.experimental_get_tracing_count())
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def h(x):
            return tf.reduce_sum(x)
        observe("sig", h(tf.constant([1.0, 2.0])))
        observe("sig_list", h([1.0, 2.0, 3.0]))
        h(tf.constant([1.0, 2.0, 3.0]))
        observe("sig_count", h.experimental_get_tracing_count())
        observe("sig_rank", lambda: h(tf.constant([[1.0]])))
        observe("sig_dtype", lambda: h(tf.constant([1, 2])))
        observe("sig_arity", lambda: h(tf.constant([1.0]), tf.constant([1.0])))
        observe("executing_eagerly", tf.function(lambda: tf.executing_eagerly())())
        """,
        phrases={"sig_rank": ("Can not cast",), "sig_dtype": ("Can not cast",)},
    ),
    S(
        "function.variables",
        """
        made = []
        @tf.function
        def lazy(x):
            if not made:
                made.append(tf.Variable(x))
            return made[0] + x
        observe("first", lazy(tf.constant(1.0)))
        observe("second", lazy(tf.constant(2.0)))
        class Scale:
            def __init__(self):
                self.v = None
            @tf.function
            def __call__(self, x):
                if self.v is None:
                    self.v = tf.Variable(x * 10)
                return self.v + x
        a, b = Scale(), Scale()
        observe("a", a(tf.constant(1.0)))
        observe("b", b(tf.constant(2.0)))
        observe("a2", a(tf.constant(3.0)))
        fresh = []
        @tf.function
        def later(x, make):
            if make:
                fresh.append(tf.Variable(x))
            return x
        observe("later_first", later(tf.constant(1.0), False))
        observe("later_create", lambda: later(tf.constant(1.0), True))
        """,
        phrases={"later_create": ("non-first call",)},
    ),
    S(
        "function.distributed",
        """
        strategy = mirrored()
        ds = tf.data.Dataset.from_tensor_slices((tf.ones([8, 3]), tf.range(8))).batch(4)
        dist = strategy.experimental_distribute_dataset(ds)
        @tf.function(input_signature=[dist.element_spec])
        def step(inputs):
            x, y = inputs
            return strategy.run(lambda a, b: tf.reduce_sum(a) + tf.cast(tf.reduce_sum(b), tf.float32), args=(x, y))
        observe("totals", [strategy.reduce("SUM", step(b), axis=None) for b in dist])
        observe("count", step.experimental_get_tracing_count())
        @tf.function
        def plain(inputs):
            return strategy.run(lambda a, b: tf.reduce_sum(a), args=inputs)
        for _ in range(2):
            for b in dist:
                plain(b)
        observe("plain_count", plain.experimental_get_tracing_count())
        observe("spec", repr(dist.element_spec))
        """,
    ),
    S(
        "data.chains",
        """
        ds = tf.data.Dataset.range(10)
        observe("range", list(ds.as_numpy_iterator()))
        observe("cardinality", ds.cardinality())
        observe("spec", ds.element_spec)
        observe("map_filter", list(ds.map(lambda x: x * 2).filter(lambda x: x % 3 == 0).as_numpy_iterator()))
        observe("batch", list(ds.batch(4).as_numpy_iterator()))
        observe("batch_drop", list(ds.batch(4, drop_remainder=True).as_numpy_iterator()))
        observe("batch_card", (ds.batch(4).cardinality(), ds.batch(4, drop_remainder=True).cardinality()))
        observe("batch_spec", ds.batch(4, drop_remainder=True).element_spec)
        observe("take_skip", list(ds.skip(2).take(3).as_numpy_iterator()))
        observe("repeat", list(ds.take(2).repeat(3).as_numpy_iterator()))
        observe("repeat_card", ds.repeat().cardinality())
        observe("unbatch", list(ds.batch(3).unbatch().as_numpy_iterator()))
        observe("shard", list(ds.shard(3, 1).as_numpy_iterator()))
        observe("enumerate", list(tf.data.Dataset.range(3).enumerate().as_numpy_iterator()))
        observe("zip", list(tf.data.Dataset.zip((tf.data.Dataset.range(3), tf.data.Dataset.range(3, 6))).as_numpy_iterator()))
        observe("concat", list(tf.data.Dataset.range(2).concatenate(tf.data.Dataset.range(5, 7)).as_numpy_iterator()))
        observe("padded", list(tf.data.Dataset.range(1, 4).map(lambda n: tf.fill([n], n)).padded_batch(2).as_numpy_iterator()))
        observe("flat_map", list(tf.data.Dataset.range(3).flat_map(lambda x: tf.data.Dataset.from_tensors(x).repeat(2)).as_numpy_iterator()))
        observe("interleave", list(tf.data.Dataset.range(2).interleave(lambda x: tf.data.Dataset.range(x * 10, x * 10 + 3), cycle_length=2).as_numpy_iterator()))
        observe("reduce", ds.reduce(tf.constant(0, tf.int64), lambda a, b: a + b))
        observe("cache_prefetch", list(ds.cache().prefetch(tf.data.AUTOTUNE).take(3).as_numpy_iterator()))
        observe("slices", list(tf.data.Dataset.from_tensor_slices({"a": [1, 2], "b": [3.0, 4.0]}).as_numpy_iterator()))
        observe("slices_spec", tf.data.Dataset.from_tensor_slices(([1, 2], [3.0, 4.0])).element_spec)
        options = tf.data.Options()
        options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
        observe("options", ds.with_options(options).options().experimental_distribute.auto_shard_policy)
        observe("policies", list(tf.data.experimental.AutoShardPolicy))
        observe("bad_batch", lambda: ds.batch(0))
        observe("infinite", tf.data.INFINITE_CARDINALITY)
        """,
        phrases={"bad_batch": ("greater than zero",)},
    ),
    S(
        "data.generator_distributed",
        """
        strategy = mirrored()
        def gen():
            for i in range(6):
                yield [float(i)] * 4
        ds = tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec([4], tf.float32))
        observe("spec", ds.element_spec)
        observe("card", ds.cardinality())
        observe("batched", [strategy.experimental_local_results(b) for b in strategy.experimental_distribute_dataset(ds.batch(4))])
        observe("unbatched", lambda: [strategy.experimental_local_results(b) for b in strategy.experimental_distribute_dataset(ds)])
        """,
    ),
    S(
        "io.gfile",
        """
        import tempfile
        root = tempfile.mkdtemp()
        d = tf.io.gfile.join(root, "a", "b")
        observe("exists_before", tf.io.gfile.exists(d))
        tf.io.gfile.makedirs(d)
        tf.io.gfile.makedirs(d)
        observe("isdir", tf.io.gfile.isdir(d))
        with tf.io.gfile.GFile(tf.io.gfile.join(d, "x.txt"), "w") as f:
            f.write("one\\ntwo\\n")
        with tf.io.gfile.GFile(tf.io.gfile.join(d, "x.txt")) as f:
            observe("read", f.read())
        with tf.io.gfile.GFile(tf.io.gfile.join(d, "x.txt")) as f:
            observe("lines", f.readlines())
        with tf.io.gfile.GFile(tf.io.gfile.join(d, "y.bin"), "wb") as f:
            f.write(b"ab")
        observe("size", tf.io.gfile.GFile(tf.io.gfile.join(d, "y.bin"), "rb").size())
        observe("stat", (tf.io.gfile.stat(tf.io.gfile.join(d, "y.bin")).length,
                         tf.io.gfile.stat(d).is_directory))
        observe("listdir", sorted(tf.io.gfile.listdir(d)))  # TF: file-system order; simdist sorts
        observe("glob", [p[len(root):] for p in tf.io.gfile.glob(tf.io.gfile.join(d, "*.txt"))])
        observe("glob_none", tf.io.gfile.glob(tf.io.gfile.join(d, "*.none")))
        tf.io.gfile.copy(tf.io.gfile.join(d, "x.txt"), tf.io.gfile.join(d, "z.txt"))
        observe("copy_exists", lambda: tf.io.gfile.copy(tf.io.gfile.join(d, "x.txt"), tf.io.gfile.join(d, "z.txt")))
        tf.io.gfile.copy(tf.io.gfile.join(d, "x.txt"), tf.io.gfile.join(d, "z.txt"), overwrite=True)
        tf.io.gfile.rename(tf.io.gfile.join(d, "z.txt"), tf.io.gfile.join(d, "w.txt"))
        observe("renamed", sorted(tf.io.gfile.listdir(d)))
        tf.io.gfile.remove(tf.io.gfile.join(d, "w.txt"))
        observe("walk", [(p[len(root):], sorted(s), sorted(f)) for p, s, f in tf.io.gfile.walk(root)])
        observe("mkdir_exists", lambda: tf.io.gfile.mkdir(d))
        observe("read_missing", lambda: tf.io.gfile.GFile(tf.io.gfile.join(root, "missing")).read())
        observe("remove_missing", lambda: tf.io.gfile.remove(tf.io.gfile.join(root, "missing")))
        observe("listdir_missing", lambda: tf.io.gfile.listdir(tf.io.gfile.join(root, "missing")))
        observe("stat_missing", lambda: tf.io.gfile.stat(tf.io.gfile.join(root, "missing")))
        tf.io.gfile.rmtree(tf.io.gfile.join(root, "a"))
        observe("gone", tf.io.gfile.exists(d))
        observe("rmtree_missing", lambda: tf.io.gfile.rmtree(tf.io.gfile.join(root, "a")))
        """,
    ),
    S(
        "compat.v1",
        """
        config = tf.compat.v1.ConfigProto()
        observe("defaults", (config.inter_op_parallelism_threads, config.intra_op_parallelism_threads,
                             config.allow_soft_placement, config.log_device_placement))
        config.inter_op_parallelism_threads = 3
        config.gpu_options.allow_growth = True
        observe("set", (config.inter_op_parallelism_threads, config.gpu_options.allow_growth))
        observe("kw", tf.compat.v1.ConfigProto(allow_soft_placement=True).allow_soft_placement)
        observe("eager", tf.compat.v1.executing_eagerly())
        observe("levels", (tf.compat.v1.logging.INFO, tf.compat.v1.logging.WARN, tf.compat.v1.logging.ERROR))
        """,
    ),
    S(
        "ops.gather",
        """
        p = tf.reshape(tf.range(2 * 3 * 4 * 5, dtype=tf.float32), [2, 3, 4, 5])
        i = tf.constant([[0, 2, 2], [1, 1, 0]])
        observe("plain", tf.gather(p, [2, 0], axis=1))
        observe("batch1_axis1", tf.gather(p, i, axis=1, batch_dims=1))
        observe("batch1_axis2", tf.gather(p, i, axis=2, batch_dims=1))
        observe("batch1_axis3", tf.gather(p, i, axis=3, batch_dims=1))
        observe("batch1_default_axis", tf.gather(p, i, batch_dims=1))
        observe("batch_negative", tf.gather(p, i, axis=2, batch_dims=-1))
        j = tf.constant([[[0, 3], [1, 1], [2, 0]], [[3, 3], [0, 1], [2, 2]]])
        observe("batch2", tf.gather(p, j, axis=2, batch_dims=2))
        observe("batch2_scalar_rows", tf.gather(p, tf.constant([[1, 0, 3], [2, 2, 0]]), axis=2, batch_dims=2))
        v = tf.Variable(p)
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.gather(v, i, axis=2, batch_dims=1) * tf.range(5, dtype=tf.float32))
        observe("batch1_gradient", tf.convert_to_tensor(tape.gradient(y, v)))
        observe("int16", tf.gather([1, 2, 3], tf.constant([2, 0], tf.int16)))
        observe("float_indices", lambda: tf.gather([1, 2, 3], [0.0]))
        observe("axis_below_batch", lambda: tf.gather(p, i, axis=0, batch_dims=1))
        observe("batch_mismatch", lambda: tf.gather(p, tf.constant([[0], [1], [2]]), axis=1, batch_dims=1))
        observe("out_of_range", lambda: tf.gather(p, tf.constant([[0, 9], [1, 1]]), axis=2, batch_dims=1))
        """,
        phrases={"float_indices": ("int32",)},
    ),
    S(
        "image",
        """
        import numpy as np
        rng = np.random.default_rng(0)
        img = tf.constant(rng.random((2, 5, 7, 3)).astype(np.float32))
        u8 = tf.constant((rng.random((2, 5, 7, 3)) * 255).astype(np.uint8))
        for size in ([3, 4], [10, 13], [1, 1], [8, 3]):
            observe(f"bilinear_{size}", tf.image.resize(img, size))
            observe(f"nearest_{size}", tf.image.resize(img, size, method="nearest"))
            observe(f"bilinear_uint8_{size}", tf.image.resize(u8, size))
        observe("aspect", tf.image.resize(img, [10, 10], preserve_aspect_ratio=True))
        observe("enum", tf.image.resize(img, [4, 4], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR))
        v = tf.Variable(img)
        with tf.GradientTape(persistent=True) as tape:
            up = tf.reduce_sum(tf.image.resize(v, [10, 13]) * tf.reshape(tf.range(390, dtype=tf.float32), [1, 10, 13, 3]))
            down = tf.reduce_sum(tf.image.resize(v, [3, 4]) ** 2)
            near = tf.reduce_sum(tf.image.resize(v, [9, 4], method="nearest") * 2.0)
        for label, y in (("up", up), ("down", down), ("near", near)):
            observe(f"gradient_{label}", tape.gradient(y, v))
        observe("flip_lr", tf.image.flip_left_right(img))
        observe("flip_ud", tf.image.flip_up_down(img[0]))
        for k in range(4):
            observe(f"rot90_{k}", tf.image.rot90(img, k))
        observe("uint8_to_float", tf.image.convert_image_dtype(u8, tf.float32))
        observe("float_to_uint8", tf.image.convert_image_dtype(img, tf.uint8))
        observe("uint8_to_int32", tf.image.convert_image_dtype(u8, tf.int32))
        observe("saturated", tf.image.convert_image_dtype(img * 2, tf.uint8, saturate=True))
        observe("standardize", tf.image.per_image_standardization(img))
        observe("standardize_uint8", tf.image.per_image_standardization(u8))
        observe("central", tf.image.central_crop(img, 0.5))
        observe("central_odd", tf.image.central_crop(img[0], 0.33))
        observe("crop_box", tf.image.crop_to_bounding_box(img, 1, 2, 3, 4))
        observe("pad_box", tf.image.pad_to_bounding_box(img, 1, 2, 8, 10))
        observe("crop_or_pad", tf.image.resize_with_crop_or_pad(img, 3, 10))
        observe("crop_or_pad_single", tf.image.resize_with_crop_or_pad(img[0], 8, 4))
        observe("brightness", tf.image.adjust_brightness(img, 0.2))
        observe("brightness_uint8", tf.image.adjust_brightness(u8, 0.3))
        # eighths on 4 x 8 pixels: the means are exact, whatever the order of the additions
        eighths = tf.constant(rng.integers(0, 8, (2, 4, 8, 3)).astype(np.float32) / 8)
        observe("contrast", tf.image.adjust_contrast(eighths, 1.75))
        observe("contrast_uint8", tf.image.adjust_contrast(u8, 0.5))
        observe("grayscale", tf.image.rgb_to_grayscale(img))
        observe("grayscale_uint8", tf.image.rgb_to_grayscale(u8))
        observe("to_rgb", tf.image.grayscale_to_rgb(img[..., :1]))
        tf.random.set_seed(1)  # TF's random ops need a seed under op determinism
        observe("random_crop_shape", tf.image.random_crop(img, [2, 3, 3, 3]).shape)
        observe("random_flip_shape", tf.image.random_flip_left_right(img).shape)
        observe("saturate_cast", tf.saturate_cast([300.0, -5.0, 3e10, -3e10], tf.uint8))
        observe("saturate_cast_int32", tf.saturate_cast([3e10, -3e10, 1.5], tf.int32))
        observe("variance", tf.math.reduce_variance(img, axis=[1, 2]))
        observe("std", tf.math.reduce_std(img, axis=-1, keepdims=True))
        observe("reverse", tf.reverse(img, [1, 2]))
        observe("slice", tf.slice(img, [0, 1, 2, 0], [2, -1, 3, 2]))
        observe("tensordot", tf.tensordot(img, tf.ones([3, 4]), 1))
        observe("tensordot_pairs", tf.tensordot(img, img, [[0, 3], [0, 3]]))
        observe("slice_out", lambda: tf.slice(img, [0, 4, 0, 0], [1, 3, 1, 1]))
        observe("reverse_twice", lambda: tf.reverse(img, [1, 1]))
        """,
    ),
    S(
        "config.threading_optimizer_autograph",
        """
        t = tf.config.threading
        tf.constant(0)  # the runtime has started (TF's has, in the harness's process)
        observe("threads", (t.get_intra_op_parallelism_threads(), t.get_inter_op_parallelism_threads()))
        observe("intra_after_start", lambda: t.set_intra_op_parallelism_threads(1))
        observe("inter_after_start", lambda: t.set_inter_op_parallelism_threads(1))
        observe("intra_float", lambda: t.set_intra_op_parallelism_threads(1.5))
        o = tf.config.optimizer
        observe("jit_default", o.get_jit())
        o.set_jit(True)
        observe("jit_on", o.get_jit())
        o.set_jit("autoclustering")
        observe("jit_named", o.get_jit())
        o.set_jit(False)
        observe("jit_off", o.get_jit())
        observe("jit_unknown", lambda: o.set_jit("foo"))
        o.set_jit(False)
        observe("options_default", o.get_experimental_options())
        o.set_experimental_options({"layout_optimizer": False})
        observe("options", o.get_experimental_options())
        o.set_experimental_options({"layout_optimizer": True})
        a = tf.autograph
        observe("do_not_convert", a.experimental.do_not_convert(lambda x: x + 1)(1))
        @a.experimental.do_not_convert
        def twice(x):
            return x * 2
        observe("decorated", (twice(3), twice.__name__))
        observe("in_function", tf.function(a.experimental.do_not_convert(lambda x: x * 3))(tf.constant(2)))
        observe("verbosity", a.set_verbosity(0))
        observe("loop_options", a.experimental.set_loop_options(maximum_iterations=3))
        observe("feature", a.experimental.Feature.ALL.name)
        """,
        phrases={
            "intra_after_start": ("Intra op parallelism cannot be modified after initialization",),
            "inter_after_start": ("Inter op parallelism cannot be modified after initialization",),
            "intra_float": ("cannot be modified after initialization",),
        },
        differs={
            "jit_unknown": "TF accepts any string for set_jit and ignores it; simdist raises "
            "ValueError naming the values it takes",
        },
    ),
    S(
        "io.csv",
        """
        import os, tempfile
        def cols(ts):
            return [(t.dtype.name, t.numpy().tolist()) for t in ts]
        D = tf.io.decode_csv
        observe("basic", cols(D(["1,2.5,a", "3,,b"], [[0], [0.0], [""]])))
        observe("required", cols(D([["1,2", "3,4"]], [tf.constant([], tf.int64), [7.0]])))
        observe("scalar", cols(D(tf.constant("4,5"), [[1], [2]])))
        observe("quoted", cols(D(['"a,b",c', '"x""y",z', '"",'], [[""], [""]])))
        observe("delim", cols(D(["1|2"], [[0], [0]], field_delim="|")))
        observe("na", cols(D(["NA,2", "x,NA"], [["d"], [5]], na_value="NA")))
        observe("select", cols(D(["1,2,3"], [[0], [0]], select_cols=[0, 2])))
        observe("numbers", cols(D(["  3 ,4,1e3,inf,-0,+5,1."], [[0], [0.0], [0.0], [0.0], [0.0], [0], [0.0]])))
        observe("int64", cols(D(["9999999999"], [tf.constant([0], tf.int64)])))
        observe("float64", cols(D(["0.1"], [tf.constant(0.0, tf.float64)])))
        observe("missing", lambda: D(["1,"], [tf.constant([], tf.int32), tf.constant([], tf.int32)]))
        observe("too_many", lambda: D(["1,2,3"], [[0], [0]]))
        observe("too_few", lambda: D(["1"], [[0], [0]]))
        observe("not_int", lambda: D(["x,2"], [[0], [0]]))
        observe("float_in_int", lambda: D(["1.5,2"], [[0], [0]]))
        observe("int32_range", lambda: D(["2147483648"], [[0]]))
        observe("hex", lambda: D(["0x10"], [[0]]))
        observe("bad_quote", lambda: D(['"a"b,c'], [[""], [""]]))
        observe("open_quote", lambda: D(['"abc'], [[""]]))
        observe("quote_inside", lambda: D(['a"b,c'], [[""], [""]]))
        observe("newline", lambda: D(["1,2\\n"], [[0], [0]]))
        observe("no_quotes", lambda: D(['"a,b",c'], [[""], [""]], use_quote_delim=False))
        observe("empty", lambda: D([""], [[1], [2]]))
        observe("bool", lambda: D(["a"], [[True]]))
        observe("rank2_default", lambda: D(["1"], [[[0]]]))
        observe("two_defaults", lambda: D(["1"], [[0, 1]]))
        observe("long_delim", lambda: D(["1,2"], [[1], [2]], field_delim=",,"))
        observe("select_order", lambda: D(["1,2,3"], [[0], [0]], select_cols=[2, 0]))
        observe("select_count", lambda: D(["1,2,3"], [[0]], select_cols=[0, 2]))
        observe("select_negative", lambda: D(["1,2"], [[0], [0]], select_cols=[-1, 0]))
        tmp = tempfile.mkdtemp()
        path = os.path.join(tmp, "t.csv")
        with open(path, "w") as f:
            f.write('a,b,c\\n1,2.5,x\\n3,,y\\n5,6,"q,r"\\n7,8,"line\\nbreak"\\r\\n')
        C = tf.data.experimental.CsvDataset
        def rows(ds):
            return [tuple(v.numpy().tolist() if hasattr(v.numpy(), "tolist") else v.numpy() for v in e) for e in ds]
        full = C(path, [[0], [0.0], [""]], header=True)
        observe("dataset", rows(full))
        observe("dataset_spec", full.element_spec)
        observe("dataset_cardinality", full.cardinality())
        observe("dataset_select", rows(C(path, [[0], [""]], header=True, select_cols=[0, 2])))
        observe("dataset_exclude", rows(C(path, [[0], [0.0]], header=True, exclude_cols=[2])))
        observe("dataset_two_files", rows(C([path, path], [[0], [0.0], [""]], header=True)))
        observe("dataset_required", lambda: rows(C(path, [[0], tf.constant([], tf.float32), [""]], header=True)))
        observe("dataset_header_as_data", lambda: rows(C(path, [[0], [0.0], [""]])))
        observe("dataset_few_columns", lambda: rows(C(path, [[0], [0.0]], header=True)))
        observe("dataset_both", lambda: C(path, [[0]], select_cols=[0], exclude_cols=[1]))
        observe("dataset_missing_file", lambda: rows(C(os.path.join(tmp, "none.csv"), [[0]])))
        observe("dataset_in_map", rows(tf.data.TextLineDataset(path).skip(1).take(2).map(
            lambda line: tuple(D(line, [[0], [0.0], [""]])))))
        """,
        phrases={
            "missing": ("Field 1 is required but missing in record 0",),
            "too_many": ("Expect 2 fields but have 3 in record 0",),
            "too_few": ("Expect 2 fields but have 1 in record 0",),
            "not_int": ("Field 0 in record 0 is not a valid int32: x",),
            "float_in_int": ("is not a valid int32: 1.5",),
            "int32_range": ("is not a valid int32: 2147483648",),
            "hex": ("is not a valid int32: 0x10",),
            "bad_quote": ("Quote inside a string has to be escaped by another quote",),
            "open_quote": ("Quoted field has to end with quote followed by delim or end",),
            "quote_inside": ("Unquoted fields cannot have quotes/CRLFs inside",),
            "newline": ("Unquoted fields cannot have quotes/CRLFs inside",),
            "no_quotes": ("Expect 2 fields but have 3 in record 0",),
            "empty": ("Expect 2 fields but have 0 in record 0",),
            "bool": ("is not in the list of allowed values",),
            "rank2_default": ("Each record default should be at most rank 1",),
            "two_defaults": ("There should only be 1 default per field but field 0 has 2",),
            "long_delim": ("field_delim should be only 1 char",),
            "select_order": ("select_cols is not strictly increasing",),
            "select_count": ("Length of select_cols and record_defaults do not match",),
            "select_negative": ("select_cols contains negative values",),
            "dataset_header_as_data": ("Field 0 in record is not a valid int32: a",),
            "dataset_few_columns": ("Expect 2 fields but have more in record",),
            "dataset_both": ("Either select_cols or exclude_cols should be empty",),
            "dataset_required": ("Field 1 is required but missing in record",),
            "dataset_missing_file": ("No such file or directory",),
        },
    ),
    S(
        "data.make_csv_dataset",
        """
        import os, tempfile
        tmp = tempfile.mkdtemp()
        a, b = os.path.join(tmp, "a.csv"), os.path.join(tmp, "b.csv")
        with open(a, "w") as f:
            f.write('id,height,name,big,label\\n1,1.5,"x,y",9999999999,0\\n2,,z,1,1\\n3,2.25,w,2,0\\n')
        with open(b, "w") as f:
            f.write("id,height,name,big,label\\n4,3.0,v,3,1\\n5,NA,u,4,0\\n")
        M = tf.data.experimental.make_csv_dataset
        def batches(ds, n=3):
            out = []
            for element in ds.take(n):
                features, label = element if isinstance(element, tuple) else (element, None)
                out.append(([(k, v.dtype.name, v.numpy().tolist()) for k, v in features.items()],
                            None if label is None else label.numpy().tolist()))
            return out
        one = M(a, 2, label_name="label", num_epochs=1, shuffle=False)
        observe("one_file", batches(one))
        observe("spec", one.element_spec)
        observe("two_files", batches(M([a, b], 2, label_name="label", num_epochs=1, shuffle=False, na_value="NA")))
        observe("parallel", batches(M(os.path.join(tmp, "*.csv"), 1, num_epochs=1, shuffle=False,
                                      num_parallel_reads=2, na_value="NA"), 5))
        observe("forever", batches(M(a, 2, label_name="label", shuffle=False), 3))
        observe("select", batches(M(a, 3, select_columns=["name", 0], num_epochs=1, shuffle=False)))
        observe("defaults", batches(M(a, 3, column_defaults=[tf.int64, [0.5], [""], tf.int64, [0]],
                                      num_epochs=1, shuffle=False)))
        observe("names_no_header", batches(M(a, 2, column_names=["i", "h", "n", "g", "l"], header=False,
                                             column_defaults=[[""]] * 5, num_epochs=1, shuffle=False)))
        observe("inference_rows", batches(M(a, 3, num_rows_for_inference=1, num_epochs=1, shuffle=False)))
        observe("shuffled_members", sorted(v for f, _ in batches(M(a, 1, label_name="label", num_epochs=1,
                                                                   shuffle_seed=3), 3) for k, d, v in f if k == "id"))
        observe("bad_label", lambda: M(a, 2, label_name="nope"))
        observe("no_header", lambda: M(a, 2, header=False))
        observe("duplicate_names", lambda: M(a, 2, column_names=["a", "a", "b", "c", "d"]))
        observe("bad_select", lambda: M(a, 2, select_columns=["zz"]))
        observe("select_index", lambda: M(a, 2, select_columns=[9]))
        observe("select_twice", lambda: M(a, 2, select_columns=[0, "id"]))
        observe("defaults_count", lambda: M(a, 2, select_columns=[0, 1], column_defaults=[[0]]))
        observe("no_match", lambda: M(os.path.join(tmp, "*.tsv"), 2))
        """,
        phrases={
            "bad_label": ("`label_name` provided must be one of the columns",),
            "no_header": ("Expected `column_names` or `header` arguments",),
            "duplicate_names": ("contains duplicate column names",),
            "bad_select": ("specified in `select_columns` must be of one of the columns",),
            "select_index": ("specified in `select_columns` should be > 0",),
            "select_twice": ("contains duplicate columns",),
            "defaults_count": ("must have the same length",),
        },
    ),
    S(
        "data.window",
        """
        D = tf.data.Dataset
        def plain(t):
            value = t.numpy()
            return value.tolist() if hasattr(value, "tolist") else value
        def windows(ds):
            return [tf.nest.map_structure(lambda w: [plain(x) for x in w], e) for e in ds]
        ds = D.range(7)
        for size, shift, stride, drop in [(3, None, 1, False), (3, 2, 1, False), (3, 2, 1, True),
                                          (3, 1, 2, False), (2, 3, 1, False), (3, 2, 2, True),
                                          (8, 1, 1, True), (1, 1, 3, False), (4, 2, 3, False)]:
            w = ds.window(size, shift, stride, drop)
            key = f"{size}_{shift}_{stride}_{drop}"
            observe("window_" + key, windows(w))
            observe("cardinality_" + key, w.cardinality())
        observe("spec", ds.window(3).element_spec)
        observe("spec_class", type(ds.window(3).element_spec).__name__)
        pairs = D.from_tensor_slices(({"a": [1, 2, 3, 4, 5]}, [5.0, 6.0, 7.0, 8.0, 9.0])).window(2)
        observe("structure_spec", pairs.element_spec)
        observe("structure", windows(pairs))
        zipped = pairs.flat_map(lambda d, y: D.zip((d["a"].batch(2), y.batch(2))))
        observe("zipped_spec", zipped.element_spec)
        observe("zipped", [tf.nest.map_structure(plain, e) for e in zipped])
        series = ds.window(4, 1, drop_remainder=True).flat_map(lambda w: w.batch(4))
        observe("series", [plain(e) for e in series])
        observe("series_spec", series.element_spec)
        observe("series_cardinality", series.cardinality())
        sums = ds.window(3, 1, drop_remainder=True).map(
            lambda w: w.reduce(tf.constant(0, tf.int64), lambda a, b: a + b))
        observe("sums", [plain(e) for e in sums])
        observe("sums_spec", sums.element_spec)
        observe("interleaved", [plain(e) for e in ds.window(3).interleave(lambda w: w, cycle_length=2)])
        observe("filtered", [plain(e) for e in ds.window(2).filter(
            lambda w: w.reduce(tf.constant(0, tf.int64), lambda a, b: a + b) > 4).flat_map(lambda w: w)])
        observe("images", [e.shape.as_list() for e in D.from_tensor_slices(tf.zeros([6, 2, 3])).window(
            4, 2, drop_remainder=True).flat_map(lambda w: w.batch(4))])
        observe("infinite", D.range(5).repeat().window(2).cardinality())
        observe("unknown", D.range(5).filter(lambda x: True).window(2).cardinality())
        observe("empty", (D.range(0).window(2).cardinality(), windows(D.range(0).window(2))))
        observe("size_0", lambda: ds.window(0))
        observe("shift_0", lambda: ds.window(2, 0))
        observe("stride_0", lambda: ds.window(2, 1, 0))
        observe("numpy", lambda: ds.window(2).as_numpy_iterator())
        observe("dataset_spec", tf.data.DatasetSpec.from_value(D.range(3)))
        observe("dataset_spec_init", tf.data.DatasetSpec(tf.TensorSpec([2], tf.float32)))
        """,
        phrases={
            "size_0": ("Window size must be greater than zero",),
            "shift_0": ("Window shift must be greater than zero",),
            "stride_0": ("Window stride must be greater than zero",),
            "numpy": ("as_numpy_iterator()` is not supported",),
        },
    ),
    S(
        "data.grouping_and_mixtures",
        """
        D = tf.data.Dataset
        def plain(t):
            value = t.numpy()
            return value.tolist() if hasattr(value, "tolist") else value
        def seen(ds):
            return [tf.nest.map_structure(plain, e) for e in ds]
        ds = D.range(10)
        scanned = ds.scan(tf.constant(0, tf.int64), lambda s, x: (s + x, s * 2))
        observe("scan", seen(scanned))
        observe("scan_spec", scanned.element_spec)
        observe("scan_cardinality", scanned.cardinality())
        pairs = D.from_tensor_slices(([1, 2, 3], [4.0, 5.0, 6.0]))
        observe("scan_tuple", seen(pairs.scan(tf.constant(0.0), lambda s, e: (s + e[1], (e[0], s)))))
        observe("take_while", seen(ds.take_while(lambda x: x < 4)))
        observe("take_while_cardinality", ds.take_while(lambda x: x < 4).cardinality())
        observe("unique", seen(D.from_tensor_slices([3, 1, 3, 2, 1, 5]).unique()))
        observe("unique_strings", seen(D.from_tensor_slices([b"a", b"b", b"a"]).unique()))
        observe("unique_float", lambda: D.from_tensor_slices([1.0]).unique())
        grouped = ds.group_by_window(lambda x: x % 3, lambda k, w: w.batch(2), window_size=2)
        observe("group_by_window", seen(grouped))
        observe("group_by_window_spec", grouped.element_spec)
        observe("group_by_window_size_func", seen(ds.group_by_window(
            lambda x: x % 2, lambda k, w: w.batch(5), window_size_func=lambda k: k + 2)))
        observe("group_by_window_both", lambda: ds.group_by_window(lambda x: x % 2, lambda k, w: w, 2, lambda k: 2))
        seqs = D.from_generator(lambda: ([1] * n for n in [1, 5, 2, 7, 3, 3, 8, 1]),
                                output_signature=tf.TensorSpec([None], tf.int32))
        bucketed = seqs.bucket_by_sequence_length(lambda x: tf.shape(x)[0], [3, 6], [2, 2, 2])
        observe("bucket", seen(bucketed))
        observe("bucket_spec", bucketed.element_spec)
        observe("bucket_boundary", seen(seqs.bucket_by_sequence_length(
            lambda x: tf.shape(x)[0], [3, 9], [2, 2, 2], pad_to_bucket_boundary=True)))
        observe("bucket_bad_sizes", lambda: seqs.bucket_by_sequence_length(lambda x: tf.shape(x)[0], [3], [2]))
        rebatched = ds.batch(4).rebatch(3)
        observe("rebatch", seen(rebatched))
        observe("rebatch_spec", rebatched.element_spec)
        observe("rebatch_drop_spec", ds.batch(4).rebatch(3, drop_remainder=True).element_spec)
        observe("rebatch_list", seen(ds.batch(5).rebatch([1, 2])))
        observe("single", D.from_tensors([1, 2]).get_single_element())
        observe("single_empty", lambda: D.range(0).get_single_element())
        observe("single_many", lambda: D.range(2).get_single_element())
        asserted = ds.apply(tf.data.experimental.assert_cardinality(10))
        observe("assert_cardinality", (asserted.cardinality(), len(seen(asserted))))
        observe("assert_too_few", lambda: seen(ds.apply(tf.data.experimental.assert_cardinality(12))))
        observe("assert_too_many", lambda: seen(ds.apply(tf.data.experimental.assert_cardinality(4))))
        choice = D.from_tensor_slices(tf.constant([0, 1, 1, 0, 2], tf.int64))
        sources = [D.range(0, 3), D.range(10, 12), D.range(20, 23)]
        observe("choose", seen(D.choose_from_datasets(sources, choice)))
        observe("choose_keep_going", seen(D.choose_from_datasets(
            sources, D.from_tensor_slices(tf.constant([1, 1, 1, 0, 1], tf.int64)), stop_on_empty_dataset=False)))
        observe("choose_out_of_range", lambda: seen(D.choose_from_datasets(
            sources, D.from_tensor_slices(tf.constant([3], tf.int64)))))
        observe("counter", seen(D.counter(5, 2).take(3)))
        observe("experimental_counter", seen(tf.data.experimental.Counter(1).take(2)))
        observe("counter_cardinality", D.counter().cardinality())
        tf.random.set_seed(1)
        mixed = D.sample_from_datasets([D.range(0, 5), D.range(100, 105)], [0.5, 0.5], seed=3)
        observe("sample_members", sorted(seen(mixed)))
        observe("sample_spec", mixed.element_spec)
        observe("sample_stop_count", len(seen(D.sample_from_datasets([D.range(3), D.range(3)], seed=1))) == 6)
        observe("random_spec", D.random(seed=4).element_spec)
        observe("random_cardinality", D.random(seed=4).cardinality())
        observe("random_same_each_iteration", seen(D.random(seed=4).take(3)) == seen(D.random(seed=4).take(3)))
        """,
    ),
    S(
        "saved_model.keras",
        """
        import os, tempfile
        import numpy as np
        init = dict(kernel_initializer=tf.keras.initializers.Constant(0.1), bias_initializer="zeros")
        model = tf.keras.Sequential([
            tf.keras.layers.Dense(4, input_shape=(3,), activation="relu", **init),
            tf.keras.layers.Dense(2, **init)])
        path = os.path.join(tempfile.mkdtemp(), "model")
        tf.saved_model.save(model, path, options=tf.saved_model.SaveOptions(experimental_io_device="/job:localhost"))
        loaded = tf.saved_model.load(path, options=tf.saved_model.LoadOptions(experimental_io_device="/job:localhost"))
        serve = loaded.signatures[tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
        x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
        observe("signature", serve(x))
        observe("signature_by_name", serve(dense_input=x))
        observe("signature_too_many", lambda: serve(x, x))
        observe("call", loaded(x))
        observe("variables", (len(loaded.variables), len(loaded.trainable_variables)))
        inputs = tf.keras.Input((3,), name="features")
        head = tf.keras.layers.Dense(2, name="head", **init)(inputs)
        other = tf.keras.layers.Dense(1, name="other", **init)(inputs)
        functional = tf.keras.Model(inputs, [head, other])
        fpath = os.path.join(tempfile.mkdtemp(), "functional")
        tf.saved_model.save(functional, fpath)
        observe("functional_signature", tf.saved_model.load(fpath).signatures["serving_default"](features=x))
        strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("CPU")[:2])
        with strategy.scope():
            again = tf.saved_model.load(path)
        serve_again = again.signatures["serving_default"]
        ds = tf.data.Dataset.from_tensor_slices(np.ones((4, 3), np.float32)).batch(4)
        for batch in strategy.experimental_distribute_dataset(ds):
            result = strategy.run(serve_again, args=(batch,))
            observe("distributed", {k: strategy.experimental_local_results(v) for k, v in result.items()})
        observe("keras_load", lambda: type(tf.keras.models.load_model(path)).__name__)

        class SubclassedModel(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self._dense_layer = tf.keras.layers.Dense(5, name="output_layer", **init)

            def call(self, inputs):
                return self._dense_layer(inputs)

        sub = SubclassedModel()
        observe("save_spec_unbuilt", sub.save_spec() is None)
        unbuilt_path = os.path.join(tempfile.mkdtemp(), "unbuilt")
        tf.saved_model.save(sub, unbuilt_path)
        observe("unbuilt_signatures", len(tf.saved_model.load(unbuilt_path).signatures))
        five = tf.data.Dataset.from_tensors((tf.range(5, dtype=tf.float32), tf.range(5, dtype=tf.float32)))
        sub.compile(optimizer="sgd", loss="mean_squared_error")
        sub.fit(five.repeat(8).batch(4), epochs=1, verbose=0)
        observe("save_spec", sub.save_spec())
        observe("save_spec_sequential", model.save_spec())
        observe("save_spec_functional", functional.save_spec())
        sub_path = os.path.join(tempfile.mkdtemp(), "sub")
        tf.saved_model.save(sub, sub_path)
        observe("subclassed_signature", tf.saved_model.load(sub_path).signatures["serving_default"](tf.ones([2, 5])))
        """,
        differs={
            "keras_load": "tf_keras refuses to load with load_model what tf.saved_model.save "
            "wrote (no Keras metadata); simdist's two savers write one format, so it loads "
            "the Keras model",
        },
    ),
]
