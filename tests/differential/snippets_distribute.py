# ruff: noqa: E501 - snippet sources are data, kept as written
"""Snippets of tf.distribute, run on simdist and on TF 2.21 by the differential harness.

Every snippet runs on a host with 4 logical CPUs and no GPU, on both sides. A deliberate
difference is a ``differs`` entry (also listed in docs/differences.md).
"""

from simdist.testing.differential import Snippet as S

MS = "        strategy = mirrored()\n"

SNIPPETS = [
    S(
        "train.exponential_moving_average",
        """
        w = tf.Variable([1.0, 2.0], name="w")
        ema = tf.train.ExponentialMovingAverage(0.9)
        ema.apply([w])
        w.assign([3.0, 5.0])
        ema.apply([w])
        observe("average", ema.average(w))
        observe("names", (ema.average(w).name, ema.average_name(w), ema.name))
        observe("trainable", ema.average(w).trainable)
        observe("none_yet", ema.average(tf.Variable(0.0)))
        step = tf.Variable(0, dtype=tf.int64)
        counted = tf.train.ExponentialMovingAverage(0.99, num_updates=step)
        v = tf.Variable(1.0)
        counted.apply([v])
        v.assign(2.0)
        step.assign(5)
        counted.apply([v])
        observe("num_updates", counted.average(v))
        observe("name_before_apply", ema.average_name(v))
        @tf.function
        def in_function():
            ema.apply([w])
        in_function()
        observe("in_function", ema.average(w))
        observe("integer", lambda: ema.apply([tf.Variable(1, dtype=tf.int32)]))
        strategy = tf.distribute.MirroredStrategy(["CPU:0", "CPU:1"])
        with strategy.scope():
            m = tf.Variable([1.0, 1.0], name="m")
            mirrored = tf.train.ExponentialMovingAverage(0.5)
        def step_fn():
            m.assign_add(tf.ones([2]))
            mirrored.apply([m])
        strategy.run(step_fn)
        strategy.run(step_fn)
        observe("mirrored_type", type(mirrored.average(m)).__name__)
        observe("mirrored", strategy.experimental_local_results(mirrored.average(m)))
        observe("mirrored_name", mirrored.average(m).name)
        def per_replica_values():
            ctx = tf.distribute.get_replica_context()
            mirrored.apply([m])
            return ctx.replica_id_in_sync_group
        strategy.run(per_replica_values)
        observe("mirrored_again", strategy.experimental_local_results(mirrored.average(m)))
        """,
        phrases={"integer": ("must be half, float, or double",)},
    ),
    S(
        "strategy.construction",
        """
        for name, make in [
            ("mirrored", lambda: mirrored()),
            ("mirrored_default", lambda: tf.distribute.MirroredStrategy()),
            ("one_device", lambda: tf.distribute.OneDeviceStrategy("/cpu:0")),
            ("central", lambda: tf.distribute.experimental.CentralStorageStrategy(["CPU:0", "CPU:1"])),
        ]:
            s = make()
            observe(name + ".type", type(s).__name__)
            observe(name + ".replicas", s.num_replicas_in_sync)
            observe(name + ".worker_devices", s.extended.worker_devices)
            observe(name + ".parameter_devices", s.extended.parameter_devices)
            observe(name + ".isinstance", isinstance(s, tf.distribute.Strategy))
            observe(name + ".extended", isinstance(s.extended, tf.distribute.StrategyExtended))
            observe(name + ".resolver", s.cluster_resolver)
        observe("duplicate", lambda: tf.distribute.MirroredStrategy(["CPU:0", "CPU:0"]))
        observe("empty", lambda: tf.distribute.MirroredStrategy([]))
        """,
        phrases={"duplicate": ("duplicates",)},
        differs={
            "duplicate": "TF checks with an assert (AssertionError); simdist raises ValueError",
            "empty": "TF silently takes every local device for an empty list; simdist refuses "
            "it (ValueError), as a computed empty device list is a bug TF would hide",
        },
    ),
    S(
        "default_strategy",
        """
        d = tf.distribute.get_strategy()
        observe("replicas", d.num_replicas_in_sync)
        observe("has", tf.distribute.has_strategy())
        observe("cross", tf.distribute.in_cross_replica_context())
        observe("rc", type(tf.distribute.get_replica_context()).__name__)
        observe("rc.replicas", tf.distribute.get_replica_context().num_replicas_in_sync)
        observe("reduce_float", d.reduce("SUM", 1.0, axis=None))
        observe("reduce_tensor", d.reduce("SUM", tf.constant([1.0, 2.0]), axis=None))
        observe("reduce_axis", d.reduce(tf.distribute.ReduceOp.MEAN, tf.constant([1.0, 2.0]), axis=0))
        observe("gather", d.gather(tf.constant([1.0, 2.0]), axis=0))
        observe("run", d.run(lambda x: x * 2, args=(tf.constant(3),)))
        observe("local", d.experimental_local_results(tf.constant(1)))
        observe("worker_devices", lambda: d.extended.worker_devices)
        observe("parameter_devices", lambda: d.extended.parameter_devices)
        with d.scope():
            v = tf.Variable(1.0)
        observe("variable", v)
        """,
        phrases={
            "worker_devices": ("unsupported by default",),
            "parameter_devices": ("unsupported by default",),
        },
    ),
    S(
        "strategy.scope_and_contexts",
        MS
        + """\
        with strategy.scope():
            observe("has", tf.distribute.has_strategy())
            observe("same", tf.distribute.get_strategy() is strategy)
            observe("cross", tf.distribute.in_cross_replica_context())
            observe("rc", tf.distribute.get_replica_context())
        def fn():
            ctx = tf.distribute.get_replica_context()
            return (ctx.replica_id_in_sync_group, ctx.num_replicas_in_sync,
                    tf.distribute.in_cross_replica_context(), ctx.strategy is strategy)
        out = strategy.run(fn)
        observe("ids", strategy.experimental_local_results(out[0]))
        observe("num", out[1])
        observe("in_cross", out[2])
        observe("same_strategy", out[3])
        def devices():
            ctx = tf.distribute.get_replica_context()
            observe("devices%d" % ctx.replica_id_in_sync_group, ctx.devices)
        strategy.run(devices)
        """,
        differs={
            f"devices{i}": "TF documents ReplicaContext.devices as a tuple of strings, but its "
            "MirroredStrategy returns a list holding the replica's device list "
            "([['/job:localhost/.../CPU:0']]); simdist keeps the documented tuple"
            for i in range(2)
        },
    ),
    S(
        "strategy.run_and_values",
        MS
        + """\
        def fn(x):
            ctx = tf.distribute.get_replica_context()
            return x + tf.cast(ctx.replica_id_in_sync_group, tf.float32)
        per_replica = strategy.run(fn, args=(tf.constant([1.0, 2.0]),))
        observe("per_replica", per_replica)
        observe("isinstance", isinstance(per_replica, tf.distribute.DistributedValues))
        observe("local", strategy.experimental_local_results(per_replica))
        observe("sum", strategy.reduce("SUM", per_replica, axis=None))
        observe("mean", strategy.reduce(tf.distribute.ReduceOp.MEAN, per_replica, axis=None))
        observe("sum_axis0", strategy.reduce("SUM", per_replica, axis=0))
        observe("mean_axis0", strategy.reduce("MEAN", per_replica, axis=0))
        observe("gather0", strategy.gather(per_replica, axis=0))
        observe("gather_plain", strategy.gather(tf.constant([1.0, 2.0]), axis=0))
        observe("reduce_mean_plain", strategy.reduce("MEAN", tf.constant(2.0), axis=None))
        observe("reduce_sum_plain", lambda: strategy.reduce("SUM", tf.constant(2.0), axis=None))
        observe("nested", strategy.run(lambda: {"a": tf.constant(1), "b": (tf.constant(2.0),)}))
        observe("bad_op", lambda: strategy.reduce("MAX", per_replica, axis=None))
        observe("reduce_in_replica", strategy.run(
            lambda: tf.distribute.get_replica_context().all_reduce("SUM", tf.constant(1.0))))
        """,
        phrases={"reduce_sum_plain": ("non-DistributedValues",)},
    ),
    S(
        "replica_context.collectives",
        MS
        + """\
        def fn():
            ctx = tf.distribute.get_replica_context()
            r = tf.cast(ctx.replica_id_in_sync_group, tf.float32)
            x = tf.stack([r, r + 10.0])
            return (ctx.all_reduce(tf.distribute.ReduceOp.SUM, x),
                    ctx.all_reduce("MEAN", x),
                    ctx.all_gather(tf.reshape(x, [1, 2]), axis=0),
                    ctx.all_reduce("SUM", {"k": x, "j": x * 2.0}))
        out = strategy.run(fn)
        observe("sum", strategy.experimental_local_results(out[0]))
        observe("mean", strategy.experimental_local_results(out[1]))
        observe("gather", strategy.experimental_local_results(out[2]))
        observe("nested", strategy.experimental_local_results(out[3]))
        """,
    ),
    S(
        "replica_context.all_reduce_gradient",
        MS
        + """\
        with strategy.scope():
            a, b = tf.Variable([1.0, 2.0]), tf.Variable([3.0])
        def fn():
            ctx = tf.distribute.get_replica_context()
            scale = tf.cast(ctx.replica_id_in_sync_group, tf.float32) + 1.0
            with tf.GradientTape() as tape:
                ra, rb = ctx.all_reduce("SUM", [a * scale, b * scale])
                mean = ctx.all_reduce("MEAN", {"a": a * scale})["a"]
                loss = tf.reduce_sum(ra * ra) + tf.reduce_sum(mean)
            return tape.gradient(loss, [a, b])
        grads = strategy.run(fn)
        observe("a", strategy.experimental_local_results(grads[0]))
        observe("b_feeds_only_an_unused_result", strategy.experimental_local_results(grads[1]))
        """,
    ),
    S(
        "replica_context.merge_call",
        MS
        + """\
        def merge(strat, value):
            observe("merge.cross", tf.distribute.in_cross_replica_context())
            return strat.reduce("SUM", value, axis=None)
        def fn():
            ctx = tf.distribute.get_replica_context()
            return ctx.merge_call(merge, args=(tf.cast(ctx.replica_id_in_sync_group, tf.float32) + 1.0,))
        observe("result", strategy.experimental_local_results(strategy.run(fn)))
        """,
    ),
    S(
        "variables.mirrored",
        MS
        + """\
        plain = tf.Variable(1.0)
        observe("plain", plain)
        observe("plain.device", plain.device)
        with strategy.scope():
            v = tf.Variable([1.0, 2.0], name="w")
            s = tf.Variable(0.0, synchronization=tf.VariableSynchronization.ON_READ,
                            aggregation=tf.VariableAggregation.SUM, trainable=False)
            m = tf.Variable(1.0, aggregation=tf.VariableAggregation.MEAN)
        observe("mirrored", v)
        observe("mirrored.devices", [c.device for c in v.values])
        observe("mirrored.isinstance", isinstance(v, tf.Variable))
        observe("sync_on_read", s)
        observe("mean", m)
        observe("assign", v.assign([3.0, 4.0]))
        observe("after_assign", v)
        def step():
            ctx = tf.distribute.get_replica_context()
            s.assign_add(tf.cast(ctx.replica_id_in_sync_group, tf.float32) + 1.0)
            m.assign_add(tf.cast(ctx.replica_id_in_sync_group, tf.float32) + 1.0)
            return s.read_value()
        observe("replica_reads", strategy.experimental_local_results(strategy.run(step)))
        observe("sync_on_read_value", s.read_value())
        observe("mean_after", m)
        observe("enums", [tf.VariableSynchronization.AUTO, tf.VariableSynchronization.ON_WRITE,
                          tf.VariableAggregation.NONE, tf.VariableAggregation.ONLY_FIRST_REPLICA])
        observe("created_in_scope", strategy.extended.variable_created_in_scope(v))
        observe("plain_in_scope", strategy.extended.variable_created_in_scope(plain))
        def none_sync():
            with strategy.scope():
                return tf.Variable(1.0, synchronization=tf.VariableSynchronization.NONE)
        observe("none_sync", none_sync)
        """,
        phrases={"none_sync": ("NONE",)},
        differs={},
    ),
    S(
        "extended.update_reduce_to",
        MS
        + """\
        with strategy.scope():
            v = tf.Variable(1.0)
        def fn():
            ctx = tf.distribute.get_replica_context()
            return tf.cast(ctx.replica_id_in_sync_group, tf.float32) + 1.0
        pr = strategy.run(fn)
        observe("reduce_to", strategy.extended.reduce_to("SUM", pr, destinations=v))
        observe("batch_reduce_to", strategy.extended.batch_reduce_to(
            "MEAN", [(pr, v), (pr, v)]))
        observe("update", strategy.extended.update(v, lambda var, x: var.assign_add(x),
                                                   args=(tf.constant(2.0),)))
        observe("after", v)
        observe("colocate_outside_scope", lambda: strategy.extended.colocate_vars_with(v))
        with strategy.scope():
            with strategy.extended.colocate_vars_with(v):
                colocated = tf.Variable(2.0)
        observe("colocated", colocated)
        """,
    ),
    S(
        "distribute_values_from_function",
        MS
        + """\
        def value_fn(ctx):
            return tf.constant(float(ctx.replica_id_in_sync_group * 10 + ctx.num_replicas_in_sync))
        values = strategy.experimental_distribute_values_from_function(value_fn)
        observe("values", values)
        observe("local", strategy.experimental_local_results(values))
        ctx = tf.distribute.experimental.ValueContext(1, 2)
        observe("ctx", (ctx.replica_id_in_sync_group, ctx.num_replicas_in_sync))
        observe("ctx_repr", repr(ctx))
        """,
        differs={
            "ctx_repr": "TF's ValueContext has no repr (an object address); simdist's "
            "says the replica id and count"
        },
    ),
    S(
        "input.distribute_dataset",
        MS
        + """\
        ds = tf.data.Dataset.range(10).map(lambda x: tf.cast(x, tf.float32)).batch(4)
        dist = strategy.experimental_distribute_dataset(ds)
        observe("type", isinstance(dist, tf.distribute.DistributedDataset))
        observe("spec", repr(dist.element_spec))
        batches = [strategy.experimental_local_results(b) for b in dist]
        observe("batches", batches)
        it = iter(dist)
        observe("iter_type", isinstance(it, tf.distribute.DistributedIterator))
        observe("next", strategy.experimental_local_results(next(it)))
        observe("get_next", strategy.experimental_local_results(it.get_next()))
        opt = it.get_next_as_optional()
        observe("optional", opt.has_value())
        observe("optional_value", strategy.experimental_local_results(opt.get_value()))
        observe("end", lambda: it.get_next())
        observe("drop", [strategy.experimental_local_results(b) for b in
                         strategy.experimental_distribute_dataset(
                             tf.data.Dataset.range(7).batch(4, drop_remainder=True))])
        """,
        phrases={"end": ("End of sequence",)},
    ),
    S(
        "input.datasets_from_function",
        MS
        + """\
        def dataset_fn(ctx):
            observe("ctx%d" % ctx.input_pipeline_id, (ctx.num_input_pipelines, ctx.input_pipeline_id,
                                                      ctx.num_replicas_in_sync))
            observe("per_replica_batch", ctx.get_per_replica_batch_size(8))
            return tf.data.Dataset.range(8).batch(ctx.get_per_replica_batch_size(8))
        dist = strategy.distribute_datasets_from_function(dataset_fn)
        observe("batches", [strategy.experimental_local_results(b) for b in dist])
        ic = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=1, num_replicas_in_sync=4)
        observe("input_context", (ic.num_input_pipelines, ic.input_pipeline_id, ic.num_replicas_in_sync,
                                  ic.get_per_replica_batch_size(16)))
        observe("bad_batch", lambda: ic.get_per_replica_batch_size(10))
        observe("repr", repr(tf.distribute.InputContext()))
        """,
        phrases={"bad_batch": ("10",)},
        differs={
            "repr": "TF's InputContext has no repr (an object address); simdist's says "
            "the pipeline id and count"
        },
    ),
    S(
        "input.options",
        MS
        + """\
        options = tf.distribute.InputOptions(experimental_fetch_to_device=False)
        observe("fields", (options.experimental_fetch_to_device, options.experimental_per_replica_buffer_size,
                           options.experimental_replication_mode))
        observe("modes", [tf.distribute.InputReplicationMode.PER_WORKER,
                          tf.distribute.InputReplicationMode.PER_REPLICA])
        dist = strategy.experimental_distribute_dataset(tf.data.Dataset.range(4).batch(2), options)
        observe("values", [strategy.experimental_local_results(b) for b in dist])
        observe("run_options", tf.distribute.RunOptions().experimental_enable_dynamic_batch_size)
        """,
    ),
    S(
        "reduce_op_and_cross_device_ops",
        """
        observe("members", [tf.distribute.ReduceOp.SUM, tf.distribute.ReduceOp.MEAN])
        observe("from_str", tf.distribute.ReduceOp("SUM"))
        observe("value", tf.distribute.ReduceOp.MEAN.value)
        for name, ops in [("nccl", tf.distribute.NcclAllReduce()),
                          ("hier", tf.distribute.HierarchicalCopyAllReduce()),
                          ("one", tf.distribute.ReductionToOneDevice())]:
            s = mirrored(cross_device_ops=ops)
            observe(name + ".isinstance", isinstance(ops, tf.distribute.CrossDeviceOps))
            pr = s.run(lambda: tf.cast(tf.distribute.get_replica_context().replica_id_in_sync_group, tf.float32))
            observe(name + ".sum", s.reduce("SUM", pr, axis=None))
        opts = tf.distribute.experimental.CommunicationOptions(
            implementation=tf.distribute.experimental.CommunicationImplementation.RING)
        observe("comm", opts.implementation)
        observe("comm_members", list(tf.distribute.experimental.CommunicationImplementation))
        observe("collective_alias", tf.distribute.experimental.CollectiveCommunication.AUTO)
        """,
    ),
    S(
        "cluster_resolvers",
        """
        spec = tf.train.ClusterSpec({"worker": ["a:1", "b:2"], "ps": ["c:3"]})
        observe("as_dict", spec.as_dict())
        observe("jobs", sorted(spec.jobs))
        observe("num_tasks", spec.num_tasks("worker"))
        observe("task_indices", spec.task_indices("worker"))
        observe("task_address", spec.task_address("ps", 0))
        observe("job_tasks", spec.job_tasks("worker"))
        observe("bool", (bool(spec), bool(tf.train.ClusterSpec({}))))
        observe("eq", spec == tf.train.ClusterSpec({"worker": ["a:1", "b:2"], "ps": ["c:3"]}))
        observe("bad_job", lambda: spec.num_tasks("chief"))
        r = tf.distribute.cluster_resolver.SimpleClusterResolver(
            spec, task_type="worker", task_id=1, rpc_layer="grpc", num_accelerators={"GPU": 2})
        observe("simple", (r.task_type, r.task_id, r.rpc_layer, r.num_accelerators(), r.environment))
        observe("simple_master", r.master())
        observe("simple_master_task", r.master("worker", 0, rpc_layer="grpc"))
        observe("simple_spec", r.cluster_spec().as_dict())
        observe("isinstance", isinstance(r, tf.distribute.cluster_resolver.ClusterResolver))
        import json, os
        os.environ["TF_CONFIG"] = json.dumps({
            "cluster": {"worker": ["host1:port", "host2:port"], "ps": ["host3:port"]},
            "task": {"type": "worker", "index": 1}, "job": {"name": "x"}, "rpc_layer": "grpc"})
        try:
            t = tf.distribute.cluster_resolver.TFConfigClusterResolver()
            observe("tfconfig", (t.task_type, t.task_id, t.rpc_layer, t.cluster_spec().as_dict()))
            observe("tfconfig_master", t.master())
            observe("tfconfig_accel", t.num_accelerators())
            over = tf.distribute.cluster_resolver.TFConfigClusterResolver(task_type="ps", task_id=0)
            observe("override", (over.task_type, over.task_id, over.master()))
        finally:
            del os.environ["TF_CONFIG"]
        empty = tf.distribute.cluster_resolver.TFConfigClusterResolver()
        observe("empty", (empty.task_type, empty.task_id, empty.cluster_spec().as_dict(), empty.master()))
        """,
    ),
    S(
        "tpu_and_ps_names",
        """
        observe("tpu_cls", tf.distribute.TPUStrategy.__name__)
        observe("ps_cls", tf.distribute.experimental.ParameterServerStrategy.__name__)
        observe("mwms_cls", tf.distribute.MultiWorkerMirroredStrategy.__name__)
        observe("coordinator", tf.distribute.experimental.coordinator.ClusterCoordinator.__name__)
        observe("coordinator_values", tf.distribute.experimental.coordinator.PerWorkerValues.__name__)
        observe("remote_value", tf.distribute.experimental.coordinator.RemoteValue.__name__)
        observe("per_worker_value", tf.distribute.coordinator.PerWorkerValue.__name__)
        observe("tpu_resolver", tf.distribute.cluster_resolver.TPUClusterResolver.__name__)
        """,
    ),
    S(
        "multi_worker_single_task",
        """
        s = tf.distribute.MultiWorkerMirroredStrategy()
        observe("replicas", s.num_replicas_in_sync)
        observe("type", type(s.cluster_resolver).__name__)
        observe("resolver", (s.cluster_resolver.task_type, s.cluster_resolver.task_id))
        observe("devices", s.extended.worker_devices)
        observe("should", (s.extended.experimental_should_init, s.extended.should_checkpoint,
                           s.extended.should_save_summary))
        pr = s.run(lambda: tf.constant(2.0))
        observe("sum", s.reduce("SUM", pr, axis=None))
        with s.scope():
            v = tf.Variable(1.0)
        observe("var", v)
        """,
    ),
    S(
        "more_names",
        MS
        + """\
        observe("replica_context_cls", isinstance(
            strategy.run(lambda: tf.distribute.get_replica_context()).values[0] if False else
            tf.distribute.get_replica_context(), tf.distribute.ReplicaContext))
        def in_replica():
            return isinstance(tf.distribute.get_replica_context(), tf.distribute.ReplicaContext)
        observe("in_replica", strategy.experimental_local_results(strategy.run(in_replica)))
        spec = tf.train.ClusterSpec({"worker": ["a:1"], "chief": ["c:1"]})
        observe("spec", spec.as_dict())
        observe("cluster_def", repr(spec.as_cluster_def()))
        observe("mwms_experimental", tf.distribute.experimental.MultiWorkerMirroredStrategy.__name__)
        it = iter(strategy.experimental_distribute_dataset(tf.data.Dataset.range(4).batch(2)))
        observe("next_method", strategy.experimental_local_results(it.next()))
        """,
        differs={
            "cluster_def": "TF returns its ClusterDef protocol buffer; simdist, which needs NumPy "
            "alone, a plain dict of the same jobs and tasks",
            "mwms_experimental": "TF's experimental MultiWorkerMirroredStrategy is another class "
            "also named CollectiveAllReduceStrategy; simdist's is a private subclass "
            "(_ExperimentalMultiWorkerMirroredStrategy) of the one CollectiveAllReduceStrategy",
        },
    ),
    S(
        "server_and_set_strategy",
        """
        spec = tf.train.ClusterSpec({"worker": ["localhost:23001", "localhost:23002"], "ps": ["localhost:23003"]})
        observe("bad_job", lambda: tf.distribute.Server(spec, job_name="chief", task_index=0, start=False))
        observe("no_job", lambda: tf.distribute.Server(spec, start=False))
        observe("ps_cls", tf.distribute.ParameterServerStrategy.__name__)
        observe("ps_same", tf.distribute.ParameterServerStrategy is tf.distribute.experimental.ParameterServerStrategy)
        s = mirrored()
        tf.distribute.experimental_set_strategy(s)
        observe("set", tf.distribute.get_strategy() is s)
        observe("has", tf.distribute.has_strategy())
        tf.distribute.experimental_set_strategy(None)
        observe("cleared", tf.distribute.has_strategy())
        with s.scope():
            observe("inside_scope", lambda: tf.distribute.experimental_set_strategy(s))
        observe("after", tf.distribute.has_strategy())
        """,
        phrases={"inside_scope": ("Must not be called inside",)},
        differs={
            "bad_job": "TF fails inside its C++ server with InternalError; simdist checks "
            "the job first and raises ValueError naming the cluster's jobs"
        },
    ),
    S(
        "tutorial.distributed_input",
        MS
        + """\
        global_batch_size = 16
        dataset = tf.data.Dataset.from_tensors(([1.0], [1.0])).repeat(100).batch(global_batch_size)
        dist_dataset = strategy.experimental_distribute_dataset(dataset)
        @tf.function
        def train_step(inputs):
            features, labels = inputs
            return labels - 0.3 * features
        losses = [strategy.run(train_step, args=(x,)) for x in dist_dataset]
        observe("steps", len(losses))
        observe("last", strategy.experimental_local_results(losses[-1]))
        def dataset_fn(input_context):
            batch_size = input_context.get_per_replica_batch_size(global_batch_size)
            d = tf.data.Dataset.from_tensors(([1.0], [1.0])).repeat(64).batch(16)
            d = d.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
            d = d.batch(batch_size)
            return d.prefetch(2)
        from_fn = strategy.distribute_datasets_from_function(dataset_fn)
        first = next(iter(from_fn))
        observe("from_fn_shapes", [tuple(t[0].shape) for t in strategy.experimental_local_results(first)])
        options = tf.data.Options()
        options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
        off = strategy.experimental_distribute_dataset(dataset.with_options(options))
        observe("off_first", [tuple(t[0].shape) for t in strategy.experimental_local_results(next(iter(off)))])
        steps_per_loop = 5
        it = iter(strategy.experimental_distribute_dataset(
            tf.data.Dataset.range(11).map(lambda x: tf.cast(x, tf.float32)).batch(4)))
        seen = []
        def train_fn(distributed_iterator):  # eager: AutoGraph cannot read exec'd source
            for _ in tf.range(steps_per_loop):
                optional_data = distributed_iterator.get_next_as_optional()
                if not optional_data.has_value():
                    break
                per_replica = strategy.run(lambda x: x * 2.0, args=(optional_data.get_value(),))
                seen.append(strategy.experimental_local_results(per_replica))
        train_fn(it)
        observe("loop", seen)
        """,
    ),
]
