# ruff: noqa: E501 - snippet sources are data, kept as written
"""Snippets of the array ops, control flow, TensorArray, tf.debugging and tf.random.Generator
that TF's tutorials and docstrings use, run on simdist and on TF 2.21 (values, dtypes, shapes,
gradients and error classes; a Generator's numbers are simdist's own, so only their
reproducibility and shapes are compared)."""

from simdist.testing.differential import Snippet as S

SNIPPETS = [
    S(
        "ops.nd_index",
        """
        x = tf.constant([[1., 2.], [3., 4.]])
        observe("gather_nd", tf.gather_nd(x, [[1, 0], [0, 1]]))
        observe("gather_nd_rows", tf.gather_nd(x, [[1]]))
        observe("gather_nd_batch", tf.gather_nd(x, [[1], [0]], batch_dims=1))
        observe("gather_nd_int64", tf.gather_nd(x, tf.constant([[0, 0]], tf.int64)))
        observe("gather_nd_3d", tf.gather_nd(tf.reshape(tf.range(24), [2, 3, 4]), [[[1, 2]], [[0, 1]]]))
        observe("scatter_nd", tf.scatter_nd([[1], [3], [1]], [10, 20, 5], [4]))
        observe("scatter_nd_rows", tf.scatter_nd([[0], [2]], [[1., 2.], [3., 4.]], [3, 2]))
        observe("update", tf.tensor_scatter_nd_update([1, 2, 3, 4], [[0], [2]], [9, 8]))
        observe("add_repeats", tf.tensor_scatter_nd_add(x, [[0, 0], [0, 0]], [1., 1.]))
        observe("sub_row", tf.tensor_scatter_nd_sub(x, [[1]], [[1., 1.]]))
        observe("update_python_number", tf.tensor_scatter_nd_update(tf.zeros([4]), [[1]], [1]))
        u = tf.constant([5., 6.])
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            tape.watch(u)
            g = tf.reduce_sum(tf.gather_nd(x, [[0, 1], [0, 1], [1, 0]]) * [1., 2., 3.])
            s = tf.reduce_sum(tf.tensor_scatter_nd_update(x, [[0, 0], [1, 1]], u) * [[1., 2.], [3., 4.]])
            a = tf.reduce_sum(tf.scatter_nd([[1], [1]], u, [3]) * [1., 2., 3.])
        observe("grad_gather_nd", tape.gradient(g, x))
        observe("grad_update_tensor", tape.gradient(s, x))
        observe("grad_update_updates", tape.gradient(s, u))
        observe("grad_scatter_nd", tape.gradient(a, u))
        observe("oob", lambda: tf.gather_nd(x, [[0, 5]]))
        observe("negative", lambda: tf.gather_nd(x, [[0, -1]]))
        observe("too_deep", lambda: tf.gather_nd(x, [[0, 1, 0]]))
        observe("scalar_indices", lambda: tf.gather_nd(x, 1))
        observe("float_indices", lambda: tf.gather_nd(x, [[0.0, 1.0]]))
        observe("scatter_oob", lambda: tf.scatter_nd([[5]], [1.0], [4]))
        observe("scatter_negative", lambda: tf.tensor_scatter_nd_add(tf.zeros([4]), [[-1]], [1.0]))
        observe("scatter_shape", lambda: tf.scatter_nd([[1], [2]], [1.0, 2.0, 3.0], [4]))
        observe("update_shape", lambda: tf.tensor_scatter_nd_update(tf.zeros([4]), [[1]], [1.0, 2.0]))
        observe("negative_shape", lambda: tf.scatter_nd([[1]], [1.0], [-4]))
        """,
        phrases={
            "oob": ("does not index into param shape",),
            "negative": ("does not index into param shape",),
            "too_deep": ("index innermost dimension length must be <=",),
            "scalar_indices": ("indices must be at least a vector",),
            "float_indices": ("Tindices",),
            "scatter_oob": ("does not index into shape",),
            "scatter_negative": ("does not index into shape",),
            "negative_shape": ("must be >= 0",),
        },
    ),
    S(
        "ops.einsum",
        """
        a = tf.constant([[1., 2.], [3., 4.]])
        b = tf.constant([[0., 1.], [1., 0.]])
        observe("matmul", tf.einsum("ij,jk->ik", a, b))
        observe("implicit", tf.einsum("ij,jk", a, b))
        observe("trace", tf.einsum("ii", a))
        observe("diagonal", tf.einsum("ii->i", a))
        observe("transpose", tf.einsum("ij->ji", a))
        observe("outer", tf.einsum("i,j->ij", tf.constant([1., 2.]), tf.constant([3., 4., 5.])))
        observe("sum_all", tf.einsum("ij->", a))
        observe("batch", tf.einsum("bij,bjk->bik", tf.reshape(tf.range(8.), [2, 2, 2]), tf.ones([2, 2, 3])))
        observe("ellipsis", tf.einsum("...ij,...jk->...ik", tf.ones([3, 1, 2, 2]), tf.ones([4, 2, 2])))
        observe("three", tf.einsum("ij,jk,kl->il", a, b, a))
        observe("linalg", tf.linalg.einsum("ij->j", a))
        observe("int", tf.einsum("ij,jk->ik", tf.ones([2, 2], tf.int32), tf.ones([2, 2], tf.int32)))
        with tf.GradientTape() as tape:
            tape.watch(a)
            y = tf.reduce_sum(tf.einsum("ij,jk->ik", a, a) * b) + tf.einsum("ii", a) + tf.reduce_sum(tf.einsum("ij->i", a) * [1., 3.])
        observe("grad", tape.gradient(y, a))
        observe("operand_count", lambda: tf.einsum("ij,jk->ik", a))
        observe("bad_output", lambda: tf.einsum("ij,jk->iz", a, a))
        observe("bad_dim", lambda: tf.einsum("ij,jk->ik", a, tf.ones([3, 2])))
        observe("bad_rank", lambda: tf.einsum("ijk,jk->i", a, a))
        observe("bad_dtype", lambda: tf.einsum("ij,jk->ik", a, tf.ones([2, 2], tf.float64)))
        observe("no_broadcast_outside_ellipsis", lambda: tf.einsum("ij,jk->ik", tf.ones([2, 1]), tf.ones([3, 4])))
        observe("broadcast_ellipsis", tf.einsum("...j,...j->...", tf.ones([2, 1, 3]), tf.ones([4, 3])))
        """,
        phrases={
            "bad_dim": ("Expected dimension 2 at axis 0",),
            "bad_rank": ("Expected input 0 to have rank 3 but got: 2",),
            "no_broadcast_outside_ellipsis": ("Expected dimension 1 at axis 0",),
        },
    ),
    S(
        "ops.sort",
        """
        v = tf.constant([3., 1., 2., 1.])
        observe("sort", tf.sort(v))
        observe("sort_descending", tf.sort(v, direction="DESCENDING"))
        observe("argsort", tf.argsort(v, stable=True))
        observe("argsort_descending_ties", tf.argsort(tf.constant([1, 3, 3, 2]), direction="DESCENDING", stable=True))
        observe("sort_axis0", tf.sort(tf.constant([[3, 1], [1, 2]]), axis=0))
        observe("sort_nan_ascending", tf.sort(tf.constant([2., float("nan"), 1.])))
        observe("argsort_int64_input", tf.argsort(tf.constant([2, 1], tf.int64)))
        observe("top_k_ties", tf.math.top_k(tf.constant([1, 3, 3, 2]), k=2))
        observe("top_k_rows", tf.nn.top_k(tf.constant([[1., 5., 2.], [4., 0., 6.]]), k=2))
        observe("top_k_zero", tf.math.top_k([1., 2.], k=0))
        observe("top_k_int64", tf.math.top_k([1., 2.], k=1, index_type=tf.int64).indices)
        w = tf.constant([[4., 1., 3.], [0., 2., 5.]])
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(w)
            s = tf.reduce_sum(tf.sort(w, axis=0) * [[1., 2., 3.], [4., 5., 6.]])
            t = tf.reduce_sum(tf.math.top_k(w, k=2).values * [[1., 2.], [3., 4.]])
        observe("grad_sort", tape.gradient(s, w))
        observe("grad_top_k", tape.gradient(t, w))
        observe("bad_direction", lambda: tf.sort(v, direction="UP"))
        observe("k_too_big", lambda: tf.math.top_k(v, k=5))
        observe("k_negative", lambda: tf.math.top_k(v, k=-1))
        observe("top_k_scalar", lambda: tf.math.top_k(tf.constant(1.0), k=1))
        observe("sort_strings", lambda: tf.sort(tf.constant(["b", "a"])))
        """,
        phrases={
            "bad_direction": ("should be one of ASCENDING, DESCENDING",),
            "k_too_big": ("must have at least k columns",),
            "k_negative": ("Need k >= 0",),
            "top_k_scalar": (">= 1-D",),
        },
    ),
    S(
        "ops.segment",
        """
        d = tf.constant([[1., 2.], [3., 4.], [5., 6.]])
        observe("sum", tf.math.segment_sum(d, [0, 0, 1]))
        observe("mean_gap", tf.math.segment_mean(d, [0, 0, 2]))
        observe("max", tf.math.segment_max(d, [0, 1, 1]))
        observe("max_gap", tf.math.segment_max(tf.constant([1., 2., 3.]), [0, 0, 2]))
        observe("int_sum", tf.math.segment_sum([1, 2, 3, 4], [0, 0, 1, 1]))
        observe("int_mean", tf.math.segment_mean(tf.constant([1, -2, -3]), [0, 1, 1]))
        observe("unsorted_int_mean", tf.math.unsorted_segment_mean(tf.constant([1, -2, -3]), [0, 1, 1], 3))
        observe("min_gap", tf.math.segment_min(d, [0, 0, 2]))
        observe("unsorted_min_empty", tf.math.unsorted_segment_min(d, [1, 0, 1], 3))
        observe("unsorted_sum", tf.math.unsorted_segment_sum(d, [1, 0, 1], 3))
        observe("unsorted_mean", tf.math.unsorted_segment_mean(d, [1, 0, 1], 3))
        observe("unsorted_max_empty", tf.math.unsorted_segment_max(d, [1, 0, 1], 3))
        observe("unsorted_int_max_empty", tf.math.unsorted_segment_max(tf.constant([1, 2, 3]), [0, 0, 1], 3))
        observe("unsorted_negative_dropped", tf.math.unsorted_segment_sum([1., 2., 3.], [0, -1, 1], 3))
        observe("unsorted_2d_ids", tf.math.unsorted_segment_sum(tf.ones([2, 2, 3]), [[0, 1], [1, 1]], 2))
        ties = tf.constant([2., 2., 1., 7.])
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(d)
            tape.watch(ties)
            mean = tf.reduce_sum(tf.math.segment_mean(d, [0, 0, 1]) * [[1., 2.], [3., 4.]])
            usum = tf.reduce_sum(tf.math.unsorted_segment_sum(d, [1, -1, 0], 2) * [[1., 2.], [3., 4.]])
            top = tf.reduce_sum(tf.math.segment_max(ties, [0, 0, 0, 1]) * [1., 10.])
            utop = tf.reduce_sum(tf.math.unsorted_segment_max(ties, [1, 1, 0, 0], 2) * [1., 10.])
            low = tf.reduce_sum(tf.math.segment_min(ties, [0, 0, 1, 1]) * [1., 10.])
        observe("grad_mean", tape.gradient(mean, d))
        observe("grad_unsorted_sum", tape.gradient(usum, d))
        observe("grad_max_ties", tape.gradient(top, ties))
        observe("grad_unsorted_max_ties", tape.gradient(utop, ties))
        observe("grad_min", tape.gradient(low, ties))
        observe("not_increasing", lambda: tf.math.segment_sum([1., 2., 3.], [1, 0, 0]))
        observe("wrong_length", lambda: tf.math.segment_sum([1., 2., 3.], [0, 0]))
        observe("negative_sorted", lambda: tf.math.segment_sum([1., 2., 3.], [-1, 0, 0]))
        observe("unsorted_oob", lambda: tf.math.unsorted_segment_sum([1., 2., 3.], [0, 5, 1], 3))
        observe("unsorted_shape", lambda: tf.math.unsorted_segment_sum(tf.ones([3, 2]), [0, 1], 3))
        """,
        phrases={
            "not_increasing": ("segment ids are not increasing",),
            "wrong_length": ("should be the same size as dimension 0 of input",),
            "negative_sorted": ("Segment id -1 out of range",),
            "unsorted_oob": ("segment_ids[1] = 5 is out of range [0, 3)",),
            "unsorted_shape": ("does not start with segment_ids.shape",),
        },
    ),
    S(
        "ops.clip",
        """
        ts = [tf.constant([3., 4.]), tf.constant([[12.]])]
        observe("global", tf.clip_by_global_norm(ts, 6.5))
        observe("global_unclipped", tf.clip_by_global_norm(ts, 100.))
        observe("global_none", tf.clip_by_global_norm([tf.constant([3., 4.]), None], 1.0))
        observe("global_inf", tf.clip_by_global_norm([tf.constant([float("inf"), 4.])], 1.0))
        observe("global_use_norm", tf.clip_by_global_norm(ts, 1.0, use_norm=tf.constant(2.0)))
        observe("global_tuple", tf.clip_by_global_norm((tf.constant([1., 1.]),), 1.0))
        observe("linalg_global_norm", tf.linalg.global_norm([tf.constant([3., 4.]), None, tf.constant([[12.]])]))
        observe("norm_rows", tf.clip_by_norm(tf.constant([[3., 4.], [6., 8.]]), 5.0, axes=[1]))
        observe("norm_all", tf.clip_by_norm(tf.constant([[3., 4.], [6., 8.]]), 5.0))
        observe("norm_negative_clip", tf.clip_by_norm([3., 4.], -1.0))
        observe("norm_zero", tf.clip_by_norm(tf.zeros([2]), 1.0))
        observe("norm_float64", tf.clip_by_norm(tf.constant([3., 4.], tf.float64), 1.0))
        x = tf.constant([3., 4.])
        z = tf.zeros([2])
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            tape.watch(z)
            glob = tf.reduce_sum(tf.clip_by_global_norm([x, x * 2.], 1.0)[0][1] * [1., 2.])
            norm = tf.reduce_sum(tf.clip_by_norm(x, 1.0) * [1., 2.])
            zero = tf.reduce_sum(tf.clip_by_norm(z, 1.0) * [1., 2.])
        observe("grad_global", tape.gradient(glob, x))
        observe("grad_norm", tape.gradient(norm, x))
        observe("grad_zero_norm", tape.gradient(zero, z))
        observe("not_a_list", lambda: tf.clip_by_global_norm(tf.constant([3., 4.]), 1.0))
        observe("global_int", lambda: tf.clip_by_global_norm([tf.constant([1, 2])], 1.0))
        observe("norm_int", lambda: tf.clip_by_norm(tf.constant([3, 4]), 5))
        """,
        phrases={"not_a_list": ("should be a sequence of tensors",)},
    ),
    S(
        "ops.debugging",
        """
        observe("equal", tf.debugging.assert_equal(tf.constant([1, 2]), [1, 2]))
        observe("equal_broadcast", tf.debugging.assert_equal(tf.constant([[1, 1]]), 1))
        observe("equal_fails", lambda: tf.debugging.assert_equal(tf.constant([1, 2]), tf.constant([1, 3]), message="custom"))
        observe("equal_shapes", lambda: tf.debugging.assert_equal(tf.constant([1, 2]), tf.constant([1, 2, 3])))
        observe("equal_dtypes", lambda: tf.debugging.assert_equal(tf.constant([1]), tf.constant([1.0])))
        observe("near", tf.debugging.assert_near(tf.constant([1.0]), tf.constant([1.0 + 1e-7])))
        observe("near_fails", lambda: tf.debugging.assert_near(tf.constant([1.0]), tf.constant([1.1])))
        observe("near_atol", tf.debugging.assert_near([1.0], [1.1], atol=0.2))
        observe("greater_fails", lambda: tf.debugging.assert_greater(tf.constant([1, 2]), tf.constant([1, 1])))
        observe("less", tf.debugging.assert_less(tf.constant([1, 2]), tf.constant([2, 3])))
        observe("less_equal_fails", lambda: tf.debugging.assert_less_equal([3], [2]))
        observe("greater_equal", tf.debugging.assert_greater_equal([3], [3]))
        observe("none_equal_fails", lambda: tf.debugging.assert_none_equal([1, 2], [3, 2]))
        observe("positive_fails", lambda: tf.debugging.assert_positive([1, 0]))
        observe("non_negative", tf.debugging.assert_non_negative([0, 1]))
        observe("rank", tf.debugging.assert_rank(tf.ones([2, 2]), 2))
        observe("rank_fails", lambda: tf.debugging.assert_rank(tf.ones([2, 2]), 3))
        observe("shapes", tf.debugging.assert_shapes([(tf.ones([2, 3]), ("N", "D")), (tf.ones([3]), ("D",)), (tf.ones([]), ())]))
        observe("shapes_size", lambda: tf.debugging.assert_shapes([(tf.ones([2, 3]), ("N", "D")), (tf.ones([2]), ("D",))]))
        observe("shapes_rank", lambda: tf.debugging.assert_shapes([(tf.ones([2, 3]), ("N",))]))
        observe("shapes_explicit", lambda: tf.debugging.assert_shapes([(tf.ones([2, 3]), (2, 4))]))
        observe("numerics", tf.debugging.check_numerics(tf.constant([1.0, 2.0]), "fine"))
        observe("numerics_nan", lambda: tf.debugging.check_numerics(tf.constant([1.0, float("nan")]), "bad"))
        observe("numerics_inf", lambda: tf.debugging.check_numerics(tf.constant([float("inf")]), "bad"))
        observe("numerics_int", lambda: tf.debugging.check_numerics(tf.constant([1]), "bad"))
        observe("all_finite", tf.debugging.assert_all_finite(tf.constant([1.0]), "fine"))
        observe("all_finite_fails", lambda: tf.debugging.assert_all_finite(tf.constant([float("inf")]), "bad"))
        observe("log_device_placement", tf.debugging.set_log_device_placement(False))
        with tf.control_dependencies([tf.debugging.assert_equal(1, 1), lambda: None]):
            observe("control_dependencies", tf.constant(1) + 1)
        observe("control_dependencies_fails", lambda: tf.control_dependencies([tf.assert_equal(2, 3, message="bad shape")]))
        observe("top_level", (tf.assert_equal(1, 1), tf.assert_rank(tf.ones([2]), 1), tf.assert_less(1, 2), tf.assert_greater(2, 1)))
        """,
        phrases={
            "equal_fails": ("custom", "Condition x == y did not hold", "Indices of first 1 different values"),
            "near_fails": ("not equal to tolerance",),
            "greater_fails": ("Condition x > y did not hold",),
            "less_equal_fails": ("Condition x <= y did not hold",),
            "rank_fails": ("must have rank 3",),
            "shapes_size": ("dimension 0 must have size 3",),
            "shapes_rank": ("must have rank",),
            "shapes_explicit": ("Specified explicitly", "dimension 1 must have size 4"),
            "numerics_nan": ("bad : Tensor had NaN values",),
            "control_dependencies_fails": ("bad shape",),
            "numerics_inf": ("bad : Tensor had Inf values",),
            "all_finite_fails": ("Tensor had Inf values",),
        },
    ),
    S(
        "control_flow",
        """
        observe("cond_tensor", tf.cond(tf.constant(True), lambda: tf.constant(1), lambda: tf.constant(2)))
        observe("cond_python", tf.cond(False, lambda: 1, lambda: 2))
        observe("cond_singleton", tf.cond(True, lambda: [5], lambda: [6]))
        observe("cond_tuple", tf.cond(tf.constant(0) > 1, lambda: (1, 2), lambda: (3, 4)))
        observe("cond_vector", lambda: tf.cond(tf.constant([True, False]), lambda: 1, lambda: 2))
        observe("cond_missing", lambda: tf.cond(True, None, lambda: 2))
        observe("cond_not_callable", lambda: tf.cond(True, 1, lambda: 2))
        x = tf.constant(3.0)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = tf.cond(x > 0, lambda: x * x, lambda: -x)
            _, p = tf.while_loop(lambda i, p: i < 3, lambda i, p: (i + 1, p * x), (0, tf.constant(1.0)))
        observe("cond_grad", tape.gradient(y, x))
        observe("while_grad", tape.gradient(p, x))
        observe("while", tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * 2.), (0, 1.)))
        observe("while_list", tf.while_loop(lambda i: i < 3, lambda i: [i + 1], [tf.constant(0)]))
        observe("while_max", tf.while_loop(lambda i, s: i < 10, lambda i, s: (i + 1, s + i), (0, 0), maximum_iterations=4))
        observe("while_not_callable", lambda: tf.while_loop(1, lambda i: [i + 1], [0]))
        observe("while_structure", lambda: tf.while_loop(lambda i: i < 3, lambda i: (i + 1, i), [0]))
        observe("while_no_vars", lambda: tf.while_loop(lambda: True, lambda: [], []))
        @tf.function
        def grow():
            return tf.while_loop(lambda v: tf.size(v) < 3, lambda v: [tf.concat([v, [1]], 0)], [tf.constant([1])])
        observe("while_shape_in_function", lambda: grow())
        @tf.function
        def relaxed():
            return tf.while_loop(lambda v: tf.size(v) < 3, lambda v: [tf.concat([v, [1]], 0)], [tf.constant([1])],
                                 shape_invariants=[tf.TensorShape([None])])
        observe("while_invariants", relaxed())
        """,
        phrases={
            "cond_missing": ("'true_fn' argument required",),
            "cond_not_callable": ("'true_fn' must be callable",),
            "while_not_callable": ("'cond' must be callable",),
            "while_structure": ("don't have the same nested structure",),
            "while_no_vars": ("'loop_vars' must be provided",),
            "while_shape_in_function": ("enters the loop with shape", "shape_invariants"),
        },
    ),
    S(
        "tensor_array",
        """
        ta = tf.TensorArray(tf.float32, size=2)
        ta = ta.write(0, 1.0).write(1, 2.0)
        observe("stack", ta.stack())
        observe("read", ta.read(1))
        observe("size", ta.size())
        observe("attributes", (ta.dtype, ta.element_shape.as_list(), ta.dynamic_size))
        observe("gather_after_read", ta.gather([1, 0]))
        observe("write_past_end", lambda: ta.write(5, 1.0))
        observe("read_past_end", lambda: ta.read(5))
        observe("python_int_into_float", tf.TensorArray(tf.float32, size=1).write(0, 1).stack())
        observe("float_into_int", lambda: tf.TensorArray(tf.int32, size=1).write(0, 1.5))
        observe("dynamic_size", tf.TensorArray(tf.float32, size=0, dynamic_size=True).write(3, 1.0).size())
        observe("dynamic_stack", tf.TensorArray(tf.float32, size=0, dynamic_size=True).write(1, 1.0).stack())
        observe("unstack", tf.TensorArray(tf.float32, size=3).unstack([1., 2., 3.]).read(2))
        observe("mixed_shapes", lambda: tf.TensorArray(tf.float32, size=2).write(0, [1., 2.]).write(1, [3.]))
        observe("element_shape", lambda: tf.TensorArray(tf.float32, size=2, element_shape=[2]).write(0, [1., 2., 3.]))
        observe("empty", tf.TensorArray(tf.float32, size=0).stack())
        observe("empty_shaped", tf.TensorArray(tf.float32, size=0, element_shape=[3]).stack())
        observe("unwritten_is_zero", tf.TensorArray(tf.float32, size=2).write(0, [1., 2.]).stack())
        observe("concat", tf.TensorArray(tf.float32, size=2, element_shape=[None]).write(0, [1., 2.]).write(1, [3., 4.]).concat())
        observe("no_size", lambda: tf.TensorArray(tf.float32))
        observe("unknown_shape_zeros", lambda: tf.TensorArray(tf.float32, size=2).stack())
        observe("negative_write", lambda: tf.TensorArray(tf.float32, size=2).write(-1, 1.))
        observe("loop_variable", tf.while_loop(lambda v: v < 3., lambda v: [v + 1.], [tf.Variable(0.)]))
        @tf.function
        def fibonacci(n):  # TF's docstring example: in tf.function entries are read twice
            ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            ta = ta.unstack([0., 1.])
            for i in range(2, n):
                ta = ta.write(i, ta.read(i - 1) + ta.read(i - 2))
            return ta.stack()
        observe("fibonacci_in_function", fibonacci(7))
        twice = tf.TensorArray(tf.float32, size=1).write(0, 1.)
        twice.read(0)
        observe("read_twice_eagerly", lambda: twice.read(0))
        observe("keep_after_read", tf.TensorArray(tf.float32, size=1, clear_after_read=False).write(0, 5.).read(0))
        x = tf.constant([1., 2.])
        with tf.GradientTape() as tape:
            tape.watch(x)
            t = tf.TensorArray(tf.float32, size=2)
            t = t.write(0, x * 2.).write(1, x * x)
            y = tf.reduce_sum(t.stack() * [[1., 2.], [3., 4.]])
        observe("grad", tape.gradient(y, x))
        def body(i, acc):
            return i + 1, acc.write(i, tf.cast(i, tf.float32) * 10.)
        _, acc = tf.while_loop(lambda i, acc: i < 3, body, (0, tf.TensorArray(tf.float32, size=3)))
        observe("in_while_loop", acc.stack())
        """,
        phrases={
            "write_past_end": ("Tried to write to index 5 but array is not resizeable and size is: 2",),
            "read_past_end": ("Tried to read from index 5 but array size is: 2",),
            "float_into_int": ("TensorArray dtype is int32 but Op is trying to write dtype float32",),
            "mixed_shapes": ("Incompatible shape for value",),
            "element_shape": ("Incompatible shape for value",),
            "no_size": ("Size must be declared for TensorArrays when eager execution is enabled",),
            "unknown_shape_zeros": ("Cannot convert a partially known TensorShape",),
            "negative_write": ("Writing to negative indices (index -1) is not allowed",),
            "read_twice_eagerly": ("Could not read index 0 twice because it was cleared",),
        },
    ),
    S(
        "random.generator",
        """
        g = tf.random.Generator.from_seed(1)
        observe("normal", (g.normal([2, 3]).shape.as_list(), g.normal([2]).dtype))
        observe("uniform_int", (g.uniform([5], maxval=10, dtype=tf.int32).dtype, bool(tf.reduce_all(g.uniform([50], maxval=10, dtype=tf.int32) < 10))))
        observe("uniform_range", bool(tf.reduce_all((lambda u: (u >= 2.) & (u < 3.))(g.uniform([50], 2., 3.)))))
        observe("same_seed", bool(tf.reduce_all(tf.random.Generator.from_seed(5).normal([4]) == tf.random.Generator.from_seed(5).normal([4]))))
        observe("advances", bool(tf.reduce_all(g.normal([4]) == g.normal([4]))))
        observe("split", [type(c).__name__ for c in g.split(2)])
        observe("split_zero", g.split(0))
        kids = tf.random.Generator.from_seed(9).split(2)
        observe("split_distinct", bool(tf.reduce_all(kids[0].normal([4]) == kids[1].normal([4]))))
        observe("algorithm", g.algorithm)
        observe("state", (g.state.shape.as_list(), g.state.dtype))
        doc = tf.random.Generator.from_seed(1234)
        observe("state_from_seed", doc.state.numpy())
        doc.normal(shape=(2, 3))
        observe("state_after_draw", doc.state.numpy())
        doc.uniform([4], maxval=7, dtype=tf.int64)
        observe("state_after_int_draw", doc.state.numpy())
        children = doc.split(2)
        observe("state_after_split", (doc.state.numpy(), [c.state.numpy()[:2] for c in children]))
        doc.skip(3)
        observe("state_after_skip", doc.state.numpy())
        seven = tf.random.Generator.from_seed(7)
        seven.normal([2])
        observe("state_is_the_stream", bool(tf.reduce_all(seven.normal([3]) == tf.random.Generator.from_seed(7 + 512).normal([3]))))
        resumed = tf.random.Generator.from_state(g.state.numpy(), g.algorithm)  # TF: g.state itself would alias
        observe("from_state", bool(tf.reduce_all(resumed.normal([3]) == g.normal([3]))))
        h = tf.random.Generator.from_seed(4)
        first = h.normal([3])
        h.reset_from_seed(4)
        observe("reset_from_seed", bool(tf.reduce_all(h.normal([3]) == first)))
        observe("truncated", bool(tf.reduce_all(tf.abs(g.truncated_normal([100])) <= 2.0)))
        observe("make_seeds", (g.make_seeds(3).shape.as_list(), g.make_seeds().dtype))
        # the session's TF has op determinism enabled (an earlier snippet), and TF then refuses
        # get_global_generator until one is set, and from_non_deterministic_state always
        mine = tf.random.Generator.from_seed(2)
        tf.random.set_global_generator(mine)
        observe("global", tf.random.get_global_generator() is mine)
        import tempfile
        saved = tf.random.Generator.from_seed(3)
        saved.normal([2])
        path = tf.train.Checkpoint(generator=saved).save(tempfile.mkdtemp() + "/ckpt")
        after = saved.normal([3])
        back = tf.random.Generator.from_seed(99)
        tf.train.Checkpoint(generator=back).restore(path)
        observe("checkpoint", (bool(tf.reduce_all(back.normal([3]) == after)), back.state.numpy()))
        observe("int_needs_both_bounds", lambda: g.uniform([2], dtype=tf.int32))
        observe("int_normal", lambda: g.normal([2], dtype=tf.int32))
        """,
        phrases={"int_needs_both_bounds": ("minval and maxval must be both `None` or both non-`None`",)},
    ),
    S(
        "random.generator_distributed",
        """
        strategy = mirrored()
        local = strategy.experimental_local_results
        with strategy.scope():
            g = tf.random.Generator.from_seed(1)
            twin = tf.random.Generator.from_seed(1)
        first = [v.numpy().tolist() for v in local(strategy.run(lambda: g.normal([2])))]
        observe("replicas_differ", len(set(map(tuple, first))))
        observe("seeded", first == [v.numpy().tolist() for v in local(strategy.run(lambda: twin.normal([2])))])
        observe("made_inside_run", first == [v.numpy().tolist() for v in local(strategy.run(lambda: tf.random.Generator.from_seed(1).normal([2])))])
        observe("states_in_step", len(set(tuple(v.numpy().tolist()) for v in local(strategy.run(lambda: g.state)))))
        plain = tf.random.Generator.from_seed(1)
        plain.normal([2])  # what each replica drew (TF advances its counter by the draw's size)
        observe("cross_replica_continues", bool(tf.reduce_all(g.normal([1]) == plain.normal([1]))))
        observe("next_step_differs", first != [v.numpy().tolist() for v in local(strategy.run(lambda: g.normal([2])))])
        outside = tf.random.Generator.from_seed(1)
        observe("outside_scope", lambda: len(local(strategy.run(lambda: outside.normal([1])))))
        """,
        differs={
            "outside_scope": "TF hands the replicas consecutive draws of a generator created "
            "outside the strategy, in the order they arrive; simdist refuses "
            "(NotImplementedError: create it in strategy.scope()) rather than depend on "
            "thread order",
        },
    ),
    S(
        "ops.scan",
        """
        x = tf.constant([[1., 2., 3.], [4., 5., 6.]])
        observe("cumsum_int", tf.cumsum([1, 2, 3]))
        observe("cumsum_axis1", tf.cumsum(x, axis=1))
        observe("cumsum_exclusive_reverse", tf.math.cumsum([1., 2., 3.], exclusive=True, reverse=True))
        observe("cumsum_axis_tensor", tf.cumsum([[1, 2], [3, 4]], axis=tf.constant(-1, tf.int64)))
        observe("cumsum_uint8_wraps", tf.cumsum(tf.constant([200, 100], tf.uint8)))
        observe("cumprod", tf.math.cumprod(x, axis=1))
        observe("cumprod_exclusive", tf.math.cumprod([1., 2., 3.], exclusive=True))
        observe("cumprod_reverse", tf.math.cumprod([1., 2., 3.], reverse=True, exclusive=True))
        observe("cumsum_empty_exclusive", tf.cumsum(tf.zeros([0, 3]), axis=0, exclusive=True))
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            a = tf.reduce_sum(tf.cumsum(x, axis=1, exclusive=True) * [[1., 2., 3.], [4., 5., 6.]])
            b = tf.reduce_sum(tf.math.cumprod(x, axis=0, reverse=True) * [[1., -1., 2.], [3., 1., 1.]])
            c = tf.reduce_sum(tf.math.cumprod(x, axis=1, exclusive=True) * [[1., 2., 3.], [1., 1., 1.]])
        observe("grad_cumsum", tape.gradient(a, x))
        observe("grad_cumprod", tape.gradient(b, x))
        observe("grad_cumprod_exclusive", tape.gradient(c, x))
        observe("axis_out_of_range", lambda: tf.cumsum([1., 2.], axis=1))
        observe("scalar", lambda: tf.cumsum(3.))
        observe("bool", lambda: tf.cumsum([True, False]))
        observe("float_axis", lambda: tf.cumsum([1, 2], axis=1.0))
        """,
        phrases={
            "axis_out_of_range": ("Expected scan axis in the range [-1, 1), but got 1",),
            "scalar": ("Expected scan axis in the range [0, 0), but got 0",),
        },
    ),
    S(
        "ops.manip",
        """
        m = tf.constant([[1, 2], [3, 4]])
        observe("boolean_mask", tf.boolean_mask(m, [True, False]))
        observe("boolean_mask_axis", tf.boolean_mask(m, [True, False], axis=1))
        observe("boolean_mask_2d", tf.boolean_mask(tf.reshape(tf.range(12), [2, 3, 2]), [[True, False, True], [False, True, False]]))
        observe("boolean_mask_int_mask", tf.boolean_mask(m, [1, 0]))
        observe("boolean_mask_none", tf.boolean_mask([1., 2.], [False, False]))
        observe("repeat_rows", tf.repeat(m, [1, 2], axis=0))
        observe("repeat_flat", tf.repeat(m, 2))
        observe("repeat_one_count_list", tf.repeat(m, [2], axis=1))
        observe("repeat_scalar", tf.repeat(3, 2))
        observe("roll", tf.roll([[1, 2, 3], [4, 5, 6]], shift=[1, -1], axis=[0, 1]))
        observe("roll_same_axis_twice", tf.roll([1, 2, 3, 4], shift=[1, 2], axis=[0, 0]))
        observe("roll_int64", tf.roll(tf.constant([1, 2, 3], tf.int64), tf.constant(1, tf.int64), 0))
        x = tf.constant([[1., 2., 3.], [4., 5., 6.]])
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            a = tf.reduce_sum(tf.boolean_mask(x, [[True, False, True], [False, True, True]]) * [1., 2., 3., 4.])
            b = tf.reduce_sum(tf.repeat(x, [0, 2, 1], axis=1) * [[1., 2., 3.], [4., 5., 6.]])
            c = tf.reduce_sum(tf.roll(x, 1, axis=1) * [[1., 2., 3.], [4., 5., 6.]])
            d = tf.reduce_sum(tf.boolean_mask(x, [False, True, True], axis=1) * [[1., 2.], [3., 4.]])
        observe("grad_boolean_mask", tape.gradient(a, x))
        observe("grad_boolean_mask_axis", tape.gradient(d, x))
        observe("grad_repeat", tape.gradient(b, x))
        observe("grad_roll", tape.gradient(c, x))
        observe("mask_shape", lambda: tf.boolean_mask(m, [True, False, True]))
        observe("mask_scalar", lambda: tf.boolean_mask(m, True))
        observe("mask_negative_axis", lambda: tf.boolean_mask(m, [True, False], axis=-1))
        observe("repeat_count_mismatch", lambda: tf.repeat(m, [1, 2, 3], axis=0))
        observe("repeat_negative", lambda: tf.repeat([1, 2], -1))
        observe("repeat_axis", lambda: tf.repeat([1, 2], 2, axis=1))
        observe("roll_mismatch", lambda: tf.roll([1, 2, 3], shift=[1, 1], axis=[0]))
        observe("roll_axis", lambda: tf.roll([1, 2, 3], shift=1, axis=2))
        observe("roll_scalar", lambda: tf.roll(1, 1, 0))
        observe("shape_n", tf.shape_n([tf.ones([2, 3]), [1, 2]]))
        observe("shape_n_int64", tf.shape_n([tf.ones([2, 3])], out_type=tf.int64))
        observe("shape_n_empty", lambda: tf.shape_n([]))
        observe("identity_n", tf.identity_n([tf.ones([2]), [1, 2], 2.]))
        with tf.GradientTape() as tape:
            tape.watch(x)
            y0, y1 = tf.identity_n([x, x * 2.])
            e = tf.reduce_sum(y0 * y1)
        observe("grad_identity_n", tape.gradient(e, x))
        """,
        phrases={
            "mask_scalar": ("mask cannot be scalar",),
            "repeat_negative": ("Expected multiples[1] >= 0, but got -1",),
            "repeat_axis": ("axis=1 out of bounds: expected -1<=axis<1",),
            "roll_mismatch": ("shift and axis must have the same size",),
            "roll_axis": ("axis 2 is out of range",),
            "roll_scalar": ("input must be 1-D or higher",),
        },
    ),
    S(
        "ops.grid",
        """
        observe("eye", tf.eye(2))
        observe("eye_rect_batch", tf.eye(2, 3, batch_shape=[2]))
        observe("eye_int", tf.eye(2, dtype=tf.int32))
        observe("linalg_eye", tf.linalg.eye(3, 2, dtype=tf.float64))
        observe("linspace", tf.linspace(0., 1., 5))
        observe("linspace_int_inputs", tf.linspace(0, 1, 5))
        observe("linspace_vectors_axis1", tf.linspace([0., 1.], [1., 2.], 3, axis=1))
        observe("linspace_vectors_axis0", tf.linspace([0., 1.], [1., 3.], 4))
        observe("linspace_one", tf.linspace(2., 1., 1))
        observe("linspace_none", tf.linspace(2., 1., 0))
        observe("linspace_num_tensor", tf.linspace(0., 1., tf.constant(3, tf.int64)))
        observe("linspace_thirds", tf.linspace(-1., 1., 7))
        observe("meshgrid_xy", tf.meshgrid([1, 2, 3], [4, 5]))
        observe("meshgrid_ij", tf.meshgrid([1, 2, 3], [4, 5], indexing="ij"))
        observe("meshgrid_flattens", tf.meshgrid([[1, 2]], [4, 5]))
        observe("meshgrid_one", tf.meshgrid([1, 2]))
        observe("meshgrid_three", [t.shape for t in tf.meshgrid([1, 2], [4, 5, 6], [7, 8, 9, 10])])
        a, b = tf.constant([1., 2.]), tf.constant([3., 4., 5.])
        lo, hi = tf.constant([0., 1.]), tf.constant([2., 5.])
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([a, b, lo, hi])
            gx, gy = tf.meshgrid(a, b)
            m = tf.reduce_sum(gx * gy * [[1., 2.], [3., 4.], [5., 6.]])
            gi, gj = tf.meshgrid(a, b, indexing="ij")
            n = tf.reduce_sum(gi * [[1., 2., 3.], [4., 5., 6.]] + gj)
            s = tf.reduce_sum(tf.linspace(lo, hi, 4, axis=1) * [[1., 2., 3., 4.], [5., 6., 7., 8.]])
        observe("grad_meshgrid", tape.gradient(m, [a, b]))
        observe("grad_meshgrid_ij", tape.gradient(n, [a, b]))
        observe("grad_linspace", tape.gradient(s, [lo, hi]))
        observe("eye_negative", lambda: tf.eye(-1))
        observe("eye_float", lambda: tf.eye(2.))
        observe("eye_batch_negative", lambda: tf.eye(2, batch_shape=[-1]))
        observe("linspace_negative", lambda: tf.linspace(0., 1., -1))
        observe("linspace_dtypes", lambda: tf.linspace(0., tf.constant(1., tf.float64), 3))
        observe("linspace_axis", lambda: tf.linspace(0., 1., 3, axis=1))
        observe("meshgrid_indexing", lambda: tf.meshgrid([1, 2, 3], [4, 5], indexing="zz"))
        observe("meshgrid_dtypes", lambda: tf.meshgrid([1, 2], [4., 5.]))
        observe("meshgrid_keyword", lambda: tf.meshgrid([1, 2], foo=1))
        """,
        phrases={
            "eye_negative": ("must be >= 0",),
            "eye_float": ("must be positive integer values",),
            "linspace_dtypes": ("Tensor conversion requested dtype float32",),
            "meshgrid_indexing": ("must be either 'xy' or 'ij', got 'zz'",),
            "meshgrid_keyword": ("'foo' is an invalid keyword argument",),
        },
    ),
    S(
        "ops.search",
        """
        observe("searchsorted", tf.searchsorted([[1, 3, 5], [2, 4, 6]], [[2, 5, 6], [0, 4, 7]]))
        observe("searchsorted_right", tf.searchsorted([1, 3, 5], [2, 5, 6], side="right"))
        observe("searchsorted_int64", tf.searchsorted([1., 3., 5.], [2.], out_type=tf.int64))
        observe("unique", tf.unique([1, 1, 2, 4, 4, 4, 7, 8, 8]))
        observe("unique_unsorted", tf.unique([5., 3., 5., 1.], out_idx=tf.int64))
        observe("unique_strings", tf.unique(["b", "a", "b"]))
        observe("unique_bool", tf.unique([True, False, True]))
        observe("unique_empty", tf.unique(tf.constant([], tf.float32)))
        observe("unique_nan_and_zeros", tf.unique([float("nan"), 1., float("nan"), 0.0, -0.0]))
        observe("searchsorted_nan", tf.searchsorted([[1., 2.], [1., 2.]], [[float("nan")], [1.5]]))
        observe("searchsorted_nan_right", tf.searchsorted([1., 2.], [float("nan")], side="right"))
        observe("unique_with_counts", tf.unique_with_counts([1, 1, 2, 4, 4, 4, 7, 8, 8]))
        observe("unique_with_counts_int64", tf.unique_with_counts([3, 3, 1], out_idx=tf.int64))
        observe("unique_fields", tf.unique([2, 2]).y)
        observe("unique_with_counts_fields", tf.unique_with_counts([2, 2]).count)
        observe("bad_side", lambda: tf.searchsorted([1, 3, 5], [2], side="x"))
        observe("leading_dims", lambda: tf.searchsorted([[1, 3, 5]], [[2], [3]]))
        observe("mixed_dtypes", lambda: tf.searchsorted([1, 3, 5], [2.]))
        observe("unique_2d", lambda: tf.unique([[1, 1]]))
        """,
        phrases={
            "bad_side": ("must be either 'right' or 'left'",),
            "leading_dims": ("Leading dim_size of both tensors must match",),
            "unique_2d": ("unique expects a 1D vector",),
        },
    ),
    S(
        "ops.histogram",
        """
        observe("bincount", tf.math.bincount([1, 1, 3]))
        observe("bincount_weights", tf.math.bincount([1, 1, 3], weights=[.5, 1., 2.]))
        observe("bincount_weights_int", tf.math.bincount([1, 2], weights=[1, 2]))
        observe("bincount_weights_float64", tf.math.bincount([1, 2], weights=tf.constant([1., 2.], tf.float64)))
        observe("bincount_min_max", tf.math.bincount([1, 1, 3], minlength=5, maxlength=2))
        observe("bincount_minlength", tf.math.bincount([1, 1, 3], minlength=6))
        observe("bincount_maxlength_zero", tf.math.bincount([1, 2], maxlength=0))
        observe("bincount_empty", tf.math.bincount(tf.constant([], tf.int32)))
        observe("bincount_2d", tf.math.bincount([[1, 2], [0, 0]]))
        observe("bincount_rows", tf.math.bincount([[1, 2], [0, 0]], axis=-1))
        observe("bincount_rows_weights", tf.math.bincount([[1, 2], [0, 0]], weights=[[1., 2.], [3., 4.]], axis=-1))
        observe("bincount_binary", tf.math.bincount([1, 1, 3], binary_output=True))
        observe("bincount_dtype", tf.math.bincount([1, 1, 3], dtype=tf.float32))
        observe("bincount_float_input", tf.math.bincount([1., 1., 3.]))
        observe("bincount_int64_input", tf.math.bincount(tf.constant([1, 1, 3], tf.int64)))
        observe("confusion", tf.math.confusion_matrix([1, 2, 4], [2, 2, 4]))
        observe("confusion_weighted", tf.math.confusion_matrix([1, 2, 4], [2, 2, 4], num_classes=5, weights=[1., 2., 3.], dtype=tf.float32))
        observe("confusion_float_labels", tf.math.confusion_matrix([1., 2.], [2., 1.]))
        observe("confusion_2d", tf.math.confusion_matrix([[1, 2]], [[2, 1]]))
        observe("histogram", tf.histogram_fixed_width([-1.0, 0.0, 1.5, 2.0, 5.0, 15], [0.0, 5.0], nbins=5))
        observe("histogram_int", tf.histogram_fixed_width([1, 2, 3], [0, 5], nbins=5))
        observe("histogram_int64", tf.histogram_fixed_width([1., 2.], [0., 5.], nbins=3, dtype=tf.int64))
        observe("histogram_float64", tf.histogram_fixed_width(tf.constant([1., 2.], tf.float64), [0., 5.], nbins=5))
        observe("histogram_2d", tf.histogram_fixed_width([[1., 2.], [3., 4.9]], [0., 5.], nbins=5))
        observe("histogram_edges", tf.histogram_fixed_width([5.0, 4.999, 0.0], [0., 5.], nbins=5))
        observe("bincount_negative", lambda: tf.math.bincount([1, -1, 3]))
        observe("bincount_weights_shape", lambda: tf.math.bincount([1, 2], weights=[1.]))
        observe("confusion_negative_label", lambda: tf.math.confusion_matrix([1, -2, 4], [2, 2, 4]))
        observe("confusion_negative_prediction", lambda: tf.math.confusion_matrix([1, 2], [2, -1]))
        observe("confusion_out_of_bound", lambda: tf.math.confusion_matrix([1, 2, 4], [2, 2, 4], num_classes=3))
        observe("confusion_sizes", lambda: tf.math.confusion_matrix([1, 2], [2, 2, 4]))
        observe("histogram_range", lambda: tf.histogram_fixed_width([1., 2.], [5., 0.], nbins=5))
        observe("histogram_nbins", lambda: tf.histogram_fixed_width([1., 2.], [0., 5.], nbins=0))
        observe("histogram_nan", lambda: tf.histogram_fixed_width([float("nan"), 1.], [0., 5.], nbins=5))
        """,
        phrases={
            "bincount_negative": ("Input arr must be non-negative!",),
            "bincount_weights_shape": ("`weights` must be the same shape as `arr`",),
            "confusion_negative_label": ("`labels` contains negative values",),
            "confusion_negative_prediction": ("`predictions` contains negative values",),
            "confusion_out_of_bound": ("`labels` out of bound",),
            "histogram_range": ("value_range should satisfy value_range[0] < value_range[1]",),
            "histogram_nbins": ("nbins should be a positive number, but got '0'",),
            "histogram_nan": ("Histogram values must not contain NaN",),
        },
    ),
    S(
        "ops.special",
        """
        x = tf.constant([-2.5, -0.5, 0.5, 1., 3., 4.])  # erfc(10) is subnormal: TF flushes it
        observe("erf", tf.math.erf(x))
        observe("erf_float64", tf.math.erf(tf.constant([0.5, -1.], tf.float64)))
        observe("erfc", tf.math.erfc(x))
        observe("lgamma", tf.math.lgamma([0., -1., 0.5, -0.5, 3., -2.5, 100.]))
        observe("digamma", tf.math.digamma([0., -1., 0.5, -0.5, 3., -2.5, 100.]))
        observe("softplus", tf.math.softplus([-30., 0., 2.]))
        observe("sigmoid", tf.math.sigmoid([0., 2.]))
        observe("tanh", tf.math.tanh([0., 2.]))
        special = tf.constant([1., float("nan"), float("inf"), -float("inf")])
        observe("is_nan", tf.math.is_nan(special))
        observe("is_inf", tf.math.is_inf(special))
        observe("is_finite", tf.math.is_finite(special))
        observe("polyval", tf.math.polyval([1., 2., 3.], 2.))
        observe("polyval_tensors", tf.math.polyval([tf.constant([1., 2.]), tf.constant([3., 4.])], tf.constant([2., 3.])))
        observe("polyval_empty", tf.math.polyval([], 2.))
        observe("polyval_int", tf.math.polyval([1, 2], 3))
        c = tf.constant([1., -2.])
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([x, c])
            e = tf.reduce_sum(tf.math.erf(x) * [1., 2., 3., 4., 5., 6.])
            ec = tf.reduce_sum(tf.math.erfc(x))
            lg = tf.reduce_sum(tf.math.lgamma(x) * [1., 2., 3., 4., 5., 6.])
            dg = tf.reduce_sum(tf.math.digamma(x) * [1., 2., 3., 4., 5., 6.])
            pv = tf.reduce_sum(tf.math.polyval([c, 3., c], x[:2]))
        observe("grad_erf", tape.gradient(e, x))
        observe("grad_erfc", tape.gradient(ec, x))
        observe("grad_lgamma", tape.gradient(lg, x))
        observe("grad_digamma", tape.gradient(dg, x))
        observe("grad_polyval", tape.gradient(pv, [x, c]))
        observe("erf_int", lambda: tf.math.erf(1))
        observe("is_nan_int", lambda: tf.math.is_nan(1))
        observe("softplus_int", lambda: tf.math.softplus(1))
        observe("polyval_tensor_coeffs", lambda: tf.math.polyval(tf.constant([1., 2.]), 2.))
        """,
        phrases={"polyval_tensor_coeffs": ("Argument coeffs must be list type",)},
    ),
    S(
        "ops.linalg",
        """
        a = tf.constant([[1., 2.], [3., 4.]])
        spd = tf.constant([[4., 2., 0.4], [2., 3., 0.5], [0.4, 0.5, 2.]], tf.float64)
        observe("matvec", tf.linalg.matvec(a, [1., 1.]))
        observe("matvec_transpose", tf.linalg.matvec(a, [1., 0.], transpose_a=True))
        observe("matvec_batch", tf.linalg.matvec(tf.stack([a, 2. * a]), [[1., 0.], [0., 1.]]))
        observe("inv", tf.linalg.inv(a))
        observe("inv_adjoint", tf.linalg.inv(a, adjoint=True))
        observe("inv_batch", tf.linalg.inv(tf.stack([a, tf.cast(spd[:2, :2], tf.float32)])))
        observe("cholesky", tf.linalg.cholesky(spd))
        observe("cholesky_reads_lower", tf.linalg.cholesky([[4., 100.], [2., 3.]]))
        # TF leaves the upper triangle unwritten there (whatever the memory held): NaN-ness only
        observe("cholesky_not_positive", tf.math.is_nan(tf.linalg.cholesky([[1., 2.], [2., 1.]])))
        observe("diag", tf.linalg.diag([1, 2]))
        observe("diag_k", tf.linalg.diag([1, 2], k=1))
        observe("diag_k_negative", tf.linalg.diag([1., 2.], k=-2))
        observe("diag_rows_padding", tf.linalg.diag([1, 2], num_rows=3, padding_value=9))
        observe("diag_batch", tf.linalg.diag([[1, 2], [3, 4]]))
        observe("diag_part", tf.linalg.diag_part([[1, 2, 3], [4, 5, 6]]))
        observe("diag_part_k", tf.linalg.diag_part([[1, 2, 3], [4, 5, 6]], k=1))
        observe("diag_part_below", tf.linalg.diag_part([[1, 2, 3], [4, 5, 6]], k=-1))
        observe("diag_part_batch", tf.linalg.diag_part(tf.reshape(tf.range(12), [2, 2, 3])))
        observe("band_part", tf.linalg.band_part(tf.reshape(tf.range(16.), [4, 4]), 1, -1))
        observe("band_part_diagonal", tf.linalg.band_part(tf.reshape(tf.range(16.), [4, 4]), 0, 0))
        observe("band_part_lower", tf.linalg.band_part(tf.reshape(tf.range(12), [3, 4]), -1, 0))
        observe("l2_normalize", tf.math.l2_normalize([3., 4.]))
        observe("l2_normalize_axis", tf.nn.l2_normalize([[3., 4.], [0., 0.]], axis=1))
        observe("l2_normalize_linalg", tf.linalg.l2_normalize([[1., 1.], [2., 0.]], axis=0))
        v = tf.constant([1., -1.])
        w = tf.constant([[1., 2., 3.], [4., 5., 6.]])
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([a, spd, v, w])
            mv = tf.reduce_sum(tf.linalg.matvec(a, v) * [1., 2.])
            iv = tf.reduce_sum(tf.linalg.inv(a) * [[1., 2.], [3., 4.]])
            ch = tf.reduce_sum(tf.linalg.cholesky(spd) * tf.constant([[1., 2., 3.], [4., 5., 6.], [7., 8., 9.]], tf.float64))
            dg = tf.reduce_sum(tf.linalg.diag(v, k=1) * [[1., 2., 3.], [4., 5., 6.], [7., 8., 9.]])
            dp = tf.reduce_sum(tf.linalg.diag_part(w, k=1) * [2., 3.])
            bp = tf.reduce_sum(tf.linalg.band_part(w, 0, 1) * w)
            ln = tf.reduce_sum(tf.math.l2_normalize(w, axis=1) * [[1., 0., 2.], [0., 1., 1.]])
        observe("grad_matvec", tape.gradient(mv, [a, v]))
        observe("grad_inv", tape.gradient(iv, a))
        observe("grad_cholesky", tape.gradient(ch, spd))
        observe("grad_diag", tape.gradient(dg, v))
        observe("grad_diag_part", tape.gradient(dp, w))
        observe("grad_band_part", tape.gradient(bp, w))
        observe("grad_l2_normalize", tape.gradient(ln, w))
        observe("matvec_sizes", lambda: tf.linalg.matvec(a, [1., 1., 1.]))
        observe("inv_singular", lambda: tf.linalg.inv([[1., 2.], [2., 4.]]))
        observe("inv_not_square", lambda: tf.linalg.inv([[1., 2., 3.], [2., 4., 5.]]))
        observe("inv_int", lambda: tf.linalg.inv([[1, 2], [3, 4]]))
        observe("cholesky_not_square", lambda: tf.linalg.cholesky([[1., 2., 3.], [2., 4., 5.]]))
        observe("diag_scalar", lambda: tf.linalg.diag(1))
        observe("diag_part_vector", lambda: tf.linalg.diag_part([1, 2]))
        observe("diag_part_k_out_of_bound", lambda: tf.linalg.diag_part([[1, 2, 3], [4, 5, 6]], k=5))
        observe("band_part_too_wide", lambda: tf.linalg.band_part(tf.ones([4, 4]), 5, 0))
        observe("band_part_vector", lambda: tf.linalg.band_part([1., 2.], 0, 0))
        observe("l2_normalize_int", lambda: tf.math.l2_normalize([3, 4]))
        """,
        phrases={
            "inv_singular": ("Input is not invertible",),
            "inv_not_square": ("Input matrix must be square",),
            "cholesky_not_square": ("must be square",),
            "diag_scalar": ("diagonal must be at least 1-dim",),
            "diag_part_vector": ("input must be at least 2-dim",),
            "diag_part_k_out_of_bound": ("lower_diag_index is out of bound: 5",),
            "band_part_too_wide": ("num_lower must be negative or less or equal to number of rows (4) got: 5",),
            "band_part_vector": ("input must be at least 2-dim",),
        },
    ),
    S(
        "ops.nn_extra",
        """
        x = tf.constant([[-1., 0.5], [1.2, -0.3]])  # tanh near +-1 rounds differently in TF
        observe("gelu", tf.nn.gelu([-1., 0., 1.5]))
        observe("gelu_approximate", tf.nn.gelu([-1., 0., 1.5], approximate=True))
        observe("swish", tf.nn.swish([-1., 1.]))
        observe("silu", tf.nn.silu([-1., 1.]))
        m, v = tf.constant([2., 3.]), tf.constant([1., 0.5])
        o, s = tf.constant([0.5, -0.5]), tf.constant([2., 1.])
        observe("batch_normalization", tf.nn.batch_normalization(x, m, v, o, s, 1e-3))
        observe("batch_normalization_no_affine", tf.nn.batch_normalization(x, m, v, None, None, 1e-3))
        seq = tf.reshape(tf.range(12.), [1, 6, 2])
        observe("conv1d_same", tf.nn.conv1d(seq, tf.ones([3, 2, 1]), stride=2, padding="SAME"))
        observe("conv1d_dilated", tf.nn.conv1d(seq, tf.ones([2, 2, 3]), stride=1, padding="VALID", dilations=2))
        observe("conv1d_ncw", tf.nn.conv1d(tf.reshape(tf.range(12.), [1, 2, 6]), tf.ones([2, 2, 3]), stride=1, padding="VALID", data_format="NCW"))
        k = tf.constant([[[1., -1.], [0.5, 2.]], [[0., 1.], [1., 1.]]])
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([x, m, v, o, s, seq, k])
            g = tf.reduce_sum(tf.nn.gelu(x) * [[1., 2.], [3., 4.]])
            ga = tf.reduce_sum(tf.nn.gelu(x, approximate=True) * [[1., 2.], [3., 4.]])
            bn = tf.reduce_sum(tf.nn.batch_normalization(x, m, v, o, s, 1e-3) * [[1., 2.], [3., 4.]])
            cv = tf.reduce_sum(tf.nn.conv1d(seq, k, stride=2, padding="SAME") * [[[1., 2.], [3., 4.], [5., 6.]]])
        observe("grad_gelu", tape.gradient(g, x))
        observe("grad_gelu_approximate", tape.gradient(ga, x))
        observe("grad_batch_normalization", tape.gradient(bn, [x, m, v, o, s]))
        observe("grad_conv1d", tape.gradient(cv, [seq, k]))
        tf.config.experimental.enable_op_determinism()  # TF: once per process, for good
        observe("timestamp_under_determinism", tf.timestamp)
        observe("gelu_int", lambda: tf.nn.gelu([1, 2]))
        observe("conv1d_channels", lambda: tf.nn.conv1d(seq, tf.ones([2, 3, 3]), stride=1, padding="VALID"))
        """,
        phrases={
            "gelu_int": ("must be a floating point tensor",),
            "timestamp_under_determinism": ("Timestamp cannot be called when determinism is enabled",),
        },
    ),
    S(
        "random.distributions",
        """
        tf.random.set_seed(7)
        p = tf.random.poisson([3, 2], [1., 5.], seed=1)
        observe("poisson", (p.shape, p.dtype, bool(tf.reduce_all(p >= 0))))
        observe("poisson_int", tf.random.poisson([2], 3., dtype=tf.int32, seed=1).dtype)
        observe("poisson_int_rate", tf.random.poisson([2], 3, seed=1).dtype)
        observe("poisson_negative_rate", tf.random.poisson([2], -1., seed=1))
        g = tf.random.gamma([3], [0.5, 1.5], seed=1)
        observe("gamma", (g.shape, g.dtype, bool(tf.reduce_all(g > 0))))
        observe("gamma_beta", tf.random.gamma([3, 1], [[0.5], [1.5]], beta=[1., 2., 3.], seed=1).shape)
        observe("gamma_float64", tf.random.gamma([2], 2., dtype=tf.float64).dtype)
        observe("gamma_negative", tf.random.gamma([3], -1., seed=1))
        observe("gamma_zero", tf.random.gamma([3], 0., seed=1))
        observe("stateless_poisson", tf.random.stateless_poisson([2], [1, 2], [1., 5.]).dtype)
        observe("stateless_poisson_same", bool(tf.reduce_all(tf.random.stateless_poisson([4], [1, 2], 3.) == tf.random.stateless_poisson([4], [1, 2], 3.))))
        observe("stateless_gamma", tf.random.stateless_gamma([2, 2], [1, 2], [1., 5.]).shape)
        observe("stateless_gamma_same", bool(tf.reduce_all(tf.random.stateless_gamma([4], [1, 2], 2.) == tf.random.stateless_gamma([4], [1, 2], 2.))))
        tf.random.set_seed(7)
        again = tf.random.poisson([3, 2], [1., 5.], seed=1)
        observe("poisson_reproducible", bool(tf.reduce_all(p == again)))
        a, b = tf.constant([0.5, 2.]), tf.constant([1., 3.])
        with tf.GradientTape() as tape:
            tape.watch([a, b])
            mean = tf.reduce_mean(tf.random.gamma([20000], a, b, seed=3), axis=0)
        da, db = tape.gradient(mean, [a, b])
        # d E[x] / d alpha = 1 / beta, d E[x] / d beta = -alpha / beta^2 (sampling error ~1%)
        observe("gamma_grad_alpha", bool(tf.reduce_all(tf.abs(da * b - 1.) < 0.05)))
        observe("gamma_grad_beta", bool(tf.reduce_all(tf.abs(db * b * b / a + 1.) < 0.05)))
        observe("gamma_grad_shapes", (da.shape, db.shape, da.dtype))
        rate = tf.constant([2.])
        with tf.GradientTape() as tape:
            tape.watch(rate)
            counts = tf.random.poisson([3], rate, seed=3)
        observe("poisson_grad", lambda: tape.gradient(counts, rate))
        split = tf.random.experimental.stateless_split([1, 2])
        observe("split", (split.shape, split.dtype))
        observe("split_three_int64", tf.random.experimental.stateless_split(tf.constant([1, 2], tf.int64), num=3).dtype)
        observe("split_pure", bool(tf.reduce_all(split == tf.random.experimental.stateless_split([1, 2]))))
        observe("split_prefix", bool(tf.reduce_all(split == tf.random.experimental.stateless_split([1, 2], num=3)[:2])))
        observe("split_seeds_differ", len({tuple(s.numpy().tolist()) for s in split}))
        fold = tf.random.experimental.stateless_fold_in([1, 2], 5)
        observe("fold_in", (fold.shape, fold.dtype))
        observe("fold_in_differs", bool(tf.reduce_any(fold != tf.random.experimental.stateless_fold_in([1, 2], 6))))
        observe("split_usable", tf.random.stateless_normal([2], seed=split[0]).shape)
        observe("split_top_level", tf.random.split is tf.random.experimental.stateless_split)
        observe("fold_in_top_level", tf.random.fold_in is tf.random.experimental.stateless_fold_in)
        cat = tf.random.stateless_categorical([[0., 1.], [5., -50.]], 3, seed=[1, 2])
        observe("stateless_categorical", (cat.shape, cat.dtype, cat[1].numpy().tolist()))
        observe("stateless_categorical_int32", tf.random.stateless_categorical([[0., 1.]], 3, seed=[1, 2], dtype=tf.int32).dtype)
        observe("stateless_categorical_pure", bool(tf.reduce_all(cat == tf.random.stateless_categorical([[0., 1.], [5., -50.]], 3, seed=[1, 2]))))
        observe("stateless_categorical_vector", lambda: tf.random.stateless_categorical([0., 1.], 3, seed=[1, 2]))
        observe("split_bad_seed", lambda: tf.random.experimental.stateless_split([1, 2, 3]))
        observe("poisson_bool", lambda: tf.random.poisson([2], 3., dtype=tf.bool))
        observe("gamma_int", lambda: tf.random.gamma([3], 1., dtype=tf.int32))
        """,
        phrases={
            "poisson_grad": ("gradient registry has no entry for: RandomPoissonV2",),
            "split_bad_seed": ("seed must have shape [2], not [3]",),
            "stateless_categorical_vector": ("logits should be a matrix",),
        },
    ),
    S(
        "ops.map_fn",
        """
        observe("map", tf.map_fn(lambda x: x * 2, tf.constant([1, 2, 3])))
        observe("signature", tf.map_fn(lambda x: tf.cast(x, tf.float32) / 2, tf.constant([1, 2, 3]), fn_output_signature=tf.float32))
        observe("dtype_keyword", tf.map_fn(lambda x: tf.cast(x, tf.float32), tf.constant([1, 2]), dtype=tf.float32))
        observe("nested_in_out", tf.map_fn(lambda t: (t[0] * 2, t[1] + 1), (tf.constant([1., 2.]), tf.constant([3, 4]))))
        observe("nested_in_signature", tf.map_fn(lambda t: t[0] * t[1], (tf.constant([1., 2.]), tf.constant([3., 4.])), fn_output_signature=tf.float32))
        observe("dict_in", tf.map_fn(lambda d: {"a": d["a"] * 2.}, {"a": tf.constant([1., 2.])}))
        observe("tuple_signature", tf.map_fn(lambda x: (x, tf.cast(x, tf.int64)), tf.constant([1., 2.]), fn_output_signature=(tf.float32, tf.int64)))
        observe("tensorspec", tf.map_fn(lambda x: tf.ones([2]) * x, tf.constant([1., 2.]), fn_output_signature=tf.TensorSpec([2], tf.float32)))
        observe("rows", tf.map_fn(lambda row: tf.reduce_sum(row), tf.constant([[1., 2.], [3., 4.]])))
        observe("empty", tf.map_fn(lambda x: x * 2, tf.constant([], tf.float32)))
        observe("python_number_result", tf.map_fn(lambda x: 1., tf.constant([1., 2.])))
        x = tf.constant([1., 2., 3.])
        v = tf.Variable(2.)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            sq = tf.map_fn(lambda e: e * e, x)
            scaled = tf.reduce_sum(tf.map_fn(lambda e: e * v, x))
            vm = tf.reduce_sum(tf.vectorized_map(lambda e: e * e * v, x))
        observe("grad_map", tape.gradient(sq, x))
        observe("grad_map_variable", tape.gradient(scaled, v))
        observe("grad_vectorized_map", tape.gradient(vm, [x, v]))
        observe("vectorized_map", tf.vectorized_map(lambda e: e * 2, tf.constant([[1., 2.], [3., 4.]])))
        observe("vectorized_map_nested", tf.vectorized_map(lambda t: t[0] @ t[1], (tf.ones([2, 2, 3]), tf.ones([2, 3, 1]))))
        observe("vectorized_map_reduce", tf.vectorized_map(lambda r: tf.reduce_sum(r), tf.constant([[1., 2.], [3., 4.]])))
        observe("vectorized_map_constant", tf.vectorized_map(lambda r: tf.constant(3.), tf.constant([1., 2.])))
        observe("dtype_mismatch", lambda: tf.map_fn(lambda e: tf.cast(e, tf.float32) / 2, tf.constant([1, 2, 3])))
        observe("structure_mismatch", lambda: tf.map_fn(lambda t: t[0] + t[1], (tf.constant([1., 2.]), tf.constant([3., 4.]))))
        observe("scalar_elems", lambda: tf.map_fn(lambda e: e * 2, tf.constant(1.)))
        observe("python_list_of_numbers", lambda: tf.map_fn(lambda e: e * 2, [1., 2.]))
        observe("lengths_differ", lambda: tf.map_fn(lambda t: t[0], (tf.constant([1., 2.]), tf.constant([3.]))))
        observe("shapes_differ", lambda: tf.map_fn(lambda e: tf.ones([tf.cast(e, tf.int32)]), tf.constant([1., 2.])))
        observe("returns_none", lambda: tf.map_fn(lambda e: None, tf.constant([1., 2.])))
        """,
        phrases={
            "dtype_mismatch": ("TensorArray dtype is int32 but Op is trying to write dtype float32",),
            "structure_mismatch": ("The two structures don't have the same nested structure",),
            "scalar_elems": ("Elements in elems must be 1+ dimensional Tensors, not scalars",),
            "python_list_of_numbers": ("Elements in elems must be 1+ dimensional Tensors, not scalars",),
            "lengths_differ": ("Dimensions 2 and 1 are not compatible",),
            "shapes_differ": ("Incompatible shape for value ((2,)), expected ((1,))",),
        },
    ),
    S(
        "ops.script",
        """
        observe("py_function", tf.py_function(lambda a, b: a * b, [tf.constant(2.), 3.], Tout=tf.float32))
        observe("py_function_list", tf.py_function(lambda a: [a, a * 2], [tf.constant(2.)], Tout=[tf.float32, tf.float32]))
        observe("py_function_numpy_result", tf.py_function(lambda a: a.numpy() * 2, [tf.constant(2.)], Tout=tf.float32))
        observe("py_function_converts", tf.py_function(lambda a: 2, [tf.constant(2.)], Tout=tf.float32))
        observe("py_function_spec", tf.py_function(lambda a: a, [tf.constant(2.)], Tout=tf.TensorSpec([], tf.float32)))
        observe("py_function_sees_tensors", tf.py_function(lambda a: str(tf.is_tensor(a)), [tf.constant(2.)], Tout=tf.string))
        observe("py_function_none", tf.py_function(lambda a: None, [tf.constant(2.)], Tout=[]))
        @tf.py_function(Tout=tf.int32)
        def plus_one(a):
            return a + 1
        observe("py_function_decorator", plus_one(tf.constant(1)))
        observe("numpy_function", tf.numpy_function(lambda a: a * 2, [tf.constant([1., 2.])], Tout=tf.float32))
        observe("numpy_function_sees_arrays", tf.numpy_function(lambda a: type(a).__name__, [tf.constant(2.)], Tout=tf.string))
        observe("numpy_function_keeps_dtype", tf.numpy_function(lambda a: a.astype("float64"), [tf.constant([1.])], Tout=tf.float32))
        observe("numpy_function_list", tf.numpy_function(lambda a: (a, a), [tf.constant(2.)], Tout=[tf.float32, tf.float32]))
        observe("numpy_function_stateless", tf.numpy_function(lambda a: a, [tf.constant(2.)], Tout=tf.float32, stateful=False))
        x = tf.constant(3.)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            p = tf.py_function(lambda a: a * a, [x], Tout=tf.float32)
            n = tf.numpy_function(lambda a: a * a, [x], Tout=tf.float32)
        observe("grad_py_function", tape.gradient(p, x))
        observe("grad_numpy_function", tape.gradient(n, x))
        observe("no_tout", lambda: tf.py_function(lambda a: a, [tf.constant(2.)]))
        observe("numpy_no_tout", lambda: tf.numpy_function(lambda a: a, [tf.constant(2.)]))
        observe("wrong_dtype", lambda: tf.py_function(lambda a: tf.constant(1), [tf.constant(2.)], Tout=tf.float32))
        observe("raises_zero_division", lambda: tf.py_function(lambda a: 1 / 0, [tf.constant(2.)], Tout=tf.float32))
        observe("raises_value_error", lambda: tf.py_function(lambda a: int("x"), [tf.constant(2.)], Tout=tf.float32))
        observe("raises_stop_iteration", lambda: tf.py_function(lambda a: next(iter([])), [tf.constant(2.)], Tout=tf.float32))
        observe("raises_not_implemented", lambda: tf.py_function(lambda a: (_ for _ in ()).throw(NotImplementedError("later")), [tf.constant(2.)], Tout=tf.float32))
        observe("numpy_function_raises", lambda: tf.numpy_function(lambda a: [][1], [tf.constant(2.)], Tout=tf.float32))
        """,
        phrases={
            "no_tout": ("Missing required argument: 'Tout'",),
            "numpy_no_tout": ("Missing required argument: 'Tout'",),
            "wrong_dtype": ("ValueError", "Tensor conversion requested dtype float32"),
            "raises_zero_division": ("ZeroDivisionError: division by zero",),
            "raises_value_error": ("ValueError: invalid literal for int()",),
            "raises_stop_iteration": ("StopIteration",),
            "raises_not_implemented": ("NotImplementedError: later",),
        },
    ),
    S(
        "ops.custom_gradient",
        """
        @tf.custom_gradient
        def log1pexp(x):
            e = tf.exp(x)
            def grad(upstream):
                return upstream * (1 - 1 / (1 + e))
            return tf.math.log(1 + e), grad
        x = tf.constant([0., 100.])
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = log1pexp(x)
        observe("value", y)
        observe("grad", tape.gradient(y, x))
        @tf.custom_gradient
        def clip_grad(a, b):
            def grad(dy):
                return tf.clip_by_value(dy, -1., 1.), None
            return a * b, grad
        a, b = tf.constant([1., 2.]), tf.constant([3., 4.])
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([a, b])
            c = tf.reduce_sum(clip_grad(a, b) * [5., -0.5])
        observe("grad_two_args", tape.gradient(c, [a, b]))
        w = tf.Variable(3.)
        @tf.custom_gradient
        def scaled(u):
            out = u * w
            def grad(dy, variables=None):
                return dy * w * 10., [dy * u * 100.]
            return out, grad
        u = tf.constant(2.)
        with tf.GradientTape() as tape:
            tape.watch(u)
            s = scaled(u)
        observe("grad_variables", tape.gradient(s, [u, w]))
        @tf.custom_gradient
        def pair(u):
            def grad(d1, d2):
                return d1 + 10. * d2
            return (u * 2., u * 3.), grad
        with tf.GradientTape() as tape:
            tape.watch(u)
            p1, p2 = pair(u)
            total = p1 + p2 * 2.
        observe("grad_two_outputs", tape.gradient(total, u))
        with tf.GradientTape() as tape:
            tape.watch(u)
            p1, _ = pair(u)
        observe("grad_unused_output", tape.gradient(p1, u))
        class Layer(tf.Module):
            @tf.custom_gradient
            def double(self, v):
                return v * 2., lambda dy: dy * 7.
        with tf.GradientTape() as tape:
            tape.watch(u)
            m = Layer().double(u)
        observe("grad_method", tape.gradient(m, u))
        @tf.function
        def in_function(v):
            with tf.GradientTape() as tape:
                tape.watch(v)
                out = log1pexp(v)
            return tape.gradient(out, v)
        observe("grad_in_function", in_function(tf.constant([0., 100.])))
        strategy = mirrored()
        with strategy.scope():
            mv = tf.Variable(2.)
        @tf.custom_gradient
        def times_mv(t):
            def grad(dy, variables=None):
                return dy * 0., [dy * 5.]
            return t * mv, grad
        def step():
            with tf.GradientTape() as tape:
                out = times_mv(tf.constant(1.))
            return tape.gradient(out, mv)
        observe("grad_under_strategy_run", strategy.experimental_local_results(strategy.run(step)))
        recomputed = tf.recompute_grad(lambda t: tf.exp(t) * w)
        with tf.GradientTape() as tape:
            tape.watch(u)
            r = recomputed(u)
        observe("recompute_value", r)
        observe("recompute_grad", tape.gradient(r, [u, w]))
        @tf.custom_gradient
        def needs_variables(t):
            return t * w, lambda dy: dy
        def call_needs_variables():
            with tf.GradientTape() as tape:
                tape.watch(u)
                return needs_variables(u)
        observe("grad_fn_without_variables", call_needs_variables)
        @tf.custom_gradient
        def too_many(t):
            return t * 2., lambda dy: (dy, dy)
        def too_many_grads():
            with tf.GradientTape() as tape:
                tape.watch(u)
                out = too_many(u)
            return tape.gradient(out, u)
        observe("too_many_grads", too_many_grads)
        @tf.custom_gradient
        def missing_variable_grad(t):
            def grad(dy, variables=None):
                return dy, []
            return t * w, grad
        def missing_variable():
            with tf.GradientTape() as tape:
                tape.watch(u)
                out = missing_variable_grad(u)
            return tape.gradient(out, [u, w])
        observe("missing_variable_grad", missing_variable)
        observe("hessians_eager", lambda: tf.hessians(u * u, u))
        observe("gradients_eager", lambda: tf.gradients(u * u, u))
        """,
        phrases={
            "grad_fn_without_variables": ("grad_fn must accept keyword argument 'variables'",),
            "too_many_grads": ("custom_gradient function expected to return 1 gradients, but returned 2 instead",),
            "missing_variable_grad": ("Must return gradient for each variable from @custom_gradient grad_fn",),
            "hessians_eager": ("tf.gradients is not supported when eager execution is enabled",),
            "gradients_eager": ("tf.gradients is not supported when eager execution is enabled",),
        },
    ),
]
