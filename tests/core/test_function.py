"""tf.function: eager semantics kept, 'inside a function' marked, input_signature enforced."""

import pytest

import simdist as tf


def test_decorated_function_runs_eagerly_and_marks_inside():
    seen = []

    @tf.function
    def f(x):
        seen.append(tf.executing_eagerly())
        return x * 2

    assert tf.executing_eagerly()
    assert float(f(tf.constant(3.0))) == 6.0
    assert seen == [False]
    assert tf.executing_eagerly()


def test_decorator_with_arguments_and_methods():
    class Model:
        def __init__(self):
            self.k = 3.0

        @tf.function(input_signature=[tf.TensorSpec(shape=(None,), dtype=tf.float32)])
        def scale(self, x):
            return x * self.k

    out = Model().scale(tf.constant([1.0, 2.0]))
    assert out.numpy().tolist() == [3.0, 6.0]


def test_input_signature_rejects_wrong_dtype_and_shape():
    @tf.function(input_signature=[tf.TensorSpec(shape=(None, 2), dtype=tf.float32)])
    def f(x):
        return x

    f(tf.constant([[1.0, 2.0]]))
    with pytest.raises(TypeError, match="incompatible with input_signature"):
        f(tf.constant([[1, 2]]))
    with pytest.raises(ValueError, match="incompatible with input_signature"):
        f(tf.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match="positional argument"):
        f(tf.constant([[1.0, 2.0]]), tf.constant([[1.0, 2.0]]))


def test_tracing_count_follows_tf_retracing_rules():
    @tf.function
    def f(x, flag):
        return x

    f(tf.constant([1.0]), True)
    f(tf.constant([2.0]), True)  # same shape/dtype and Python value: no retrace
    assert f.experimental_get_tracing_count() == 1
    f(tf.constant([1.0, 2.0]), True)  # new shape
    f(tf.constant([1.0]), False)  # new Python value
    assert f.experimental_get_tracing_count() == 3


def test_run_functions_eagerly_makes_calls_eager():
    @tf.function
    def f():
        return tf.executing_eagerly()

    tf.config.run_functions_eagerly(True)
    try:
        assert f() is True  # run eagerly: the plain Python value, as TF
    finally:
        tf.config.run_functions_eagerly(False)
    out = f()  # as a function: Python values come back as tensors, as from a graph
    assert isinstance(out, tf.Tensor) and out.dtype == tf.bool and not bool(out)


def test_exception_inside_restores_eager_state():
    @tf.function
    def boom():
        raise KeyError("x")

    with pytest.raises(KeyError):
        boom()
    assert tf.executing_eagerly()


def test_numbers_returned_from_a_function_become_tensors():
    @tf.function
    def f():
        return 4, {"x": 1.5}, None, tf.constant([1, 2])

    four, d, none, t = f()
    assert repr(four) == "<tf.Tensor: shape=(), dtype=int32, numpy=4>"
    assert d["x"].dtype == tf.float32 and none is None and t.shape == (2,)


# ----------------------------------------------- variables on later calls, retracing, PerReplica


def test_a_later_call_that_creates_a_variable_is_refused_as_in_tf():
    import simdist as tf

    made = []

    @tf.function
    def make(x):
        made.append(tf.Variable(x))
        return x

    make(tf.constant(1.0))
    with pytest.raises(ValueError, match="only supports singleton tf.Variables"):
        make(tf.constant(2.0))
    assert len(made) == 1


def test_singleton_variables_per_instance_of_a_decorated_method():
    import simdist as tf

    class Scale:
        def __init__(self):
            self.v = None

        @tf.function
        def __call__(self, x):
            if self.v is None:
                self.v = tf.Variable(x)
            return self.v + x

    a, b = Scale(), Scale()
    assert float(a(tf.constant(1.0))) == 2.0
    assert float(b(tf.constant(1.0))) == 2.0  # b's first call may create its variable
    assert float(a(tf.constant(2.0))) == 3.0


def test_run_functions_eagerly_allows_creation_on_every_call():
    import simdist as tf

    @tf.function
    def make():
        return tf.Variable(1.0)

    tf.config.run_functions_eagerly(True)
    try:
        make()
        make()
    finally:
        tf.config.run_functions_eagerly(False)


def test_reduce_retracing_relaxes_shapes_as_tf_counts():
    import simdist as tf

    @tf.function(reduce_retracing=True)
    def double(x):
        return x * 2

    for n in [1, 2, 3, 4]:
        double(tf.ones([n]))
    assert double.experimental_get_tracing_count() == 2  # [1], then [None]
    for shape in ([2, 2], [3, 3], [3, 4]):
        double(tf.ones(shape))
    assert double.experimental_get_tracing_count() == 3  # then an unknown rank

    @tf.function
    def plain(x):
        return x * 2

    for n in [1, 2, 3, 4]:
        plain(tf.ones([n]))
    assert plain.experimental_get_tracing_count() == 4


def test_input_signature_from_a_distributed_dataset_element_spec():
    import simdist as tf

    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    dataset = tf.data.Dataset.from_tensor_slices((tf.ones([8, 3]), tf.zeros([8]))).batch(4)
    dist = strategy.experimental_distribute_dataset(dataset)

    @tf.function(input_signature=[dist.element_spec])
    def step(inputs):
        x, y = inputs
        return strategy.run(lambda a, b: tf.reduce_sum(a) + tf.reduce_sum(b), args=(x, y))

    totals = [float(strategy.reduce("SUM", step(batch), axis=None)) for batch in dist]
    assert totals == [12.0, 12.0] and step.experimental_get_tracing_count() == 1
    with pytest.raises(TypeError, match="expects a PerReplica value"):
        step((tf.ones([4, 3]), tf.ones([4])))

    @tf.function
    def untyped(inputs):
        return strategy.run(lambda a, b: tf.reduce_sum(a), args=inputs)

    for _ in range(2):
        for batch in dist:
            untyped(batch)
    assert untyped.experimental_get_tracing_count() == 1  # traced by the components' specs
