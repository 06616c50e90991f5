"""``einsum``: Einstein summation over named axes, with its gradient.

The equation names each operand's axes with letters (``"ij,jk->ik"``); ``...`` stands for
leading axes that broadcast across operands, and without ``->`` the output is every letter
used once, in alphabetical order, after the ``...`` axes (NumPy's and TF's implicit mode).

The gradient of operand ``i`` is itself an einsum: the output's gradient contracted with
the other operands onto operand ``i``'s letters. Two cases need more than that one einsum:
a letter that appears in operand ``i`` alone (summed away in the forward pass) comes back
by broadcasting, and a letter repeated within operand ``i`` (a diagonal, ``"ii->i"``) is
put back on the diagonal through an identity matrix. Operands broadcast along ``...`` get
their gradient summed back to their own shape.
"""

from __future__ import annotations

import string

import numpy as np

from simdist import errors
from simdist.core.ops._helpers import as_tensors, unbroadcast
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["einsum"]

_LETTERS = set(string.ascii_letters)


def _bad(equation: str, why: str) -> ValueError:
    """An equation that cannot be read, or names the wrong operands: TF's ValueError."""
    return ValueError(f"Invalid einsum equation {equation!r}: {why}.")


def _parse(equation: str, ranks: list[int]) -> tuple[list[str], str, str]:
    """Each operand's letters and the output's, with every ``...`` spelt out in fresh letters
    (returned too: only those axes broadcast)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(ranks):
        raise _bad(equation, f"it names {len(inputs)} operands, but {len(ranks)} were given")
    used = set(eq) & _LETTERS
    spare = [c for c in string.ascii_letters if c not in used]
    ellipsis_rank = 0
    for position, (subs, rank) in enumerate(zip(inputs, ranks, strict=True)):
        named = len(subs.replace("...", ""))
        if set(subs.replace("...", "")) - _LETTERS or subs.count("...") > 1:
            raise _bad(equation, f"{subs!r} must be letters with at most one '...'")
        if ("..." in subs and named > rank) or ("..." not in subs and named != rank):
            raise errors.InvalidArgumentError(
                f"Expected input {position} to have rank {named} but got: {rank} [Op:Einsum]; "
                f"its subscripts {subs!r} name {named} axes."
            )
        if "..." in subs:
            ellipsis_rank = max(ellipsis_rank, rank - named)
    fill = "".join(spare[:ellipsis_rank])
    expanded = []
    for subs, rank in zip(inputs, ranks, strict=True):
        if "..." in subs:
            own = rank - len(subs.replace("...", ""))
            subs = subs.replace("...", fill[ellipsis_rank - own :])
        expanded.append(subs)
    if arrow:
        if set(rhs.replace("...", "")) - _LETTERS:
            raise _bad(equation, f"the output {rhs!r} must be letters and '...'")
        output = rhs.replace("...", fill)
    else:
        counts = {c: "".join(expanded).count(c) for c in set("".join(expanded))}
        output = fill + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in fill))
    known = set("".join(expanded))
    for c in output:
        if c not in known:
            raise _bad(equation, f"output letter {c!r} names no axis of any operand")
        if output.count(c) > 1:
            raise _bad(equation, f"output letter {c!r} appears more than once")
    return expanded, output, fill


def _sizes(subs: list[str], values: list[np.ndarray], equation: str, fill: str) -> dict:
    """Each letter's size; a size-1 axis broadcasts only under ``...`` (as in TF)."""
    sizes: dict[str, int] = {}
    for letters, value in zip(subs, values, strict=True):
        for c, d in zip(letters, value.shape, strict=True):
            if c not in sizes or (c in fill and sizes[c] == 1):
                sizes[c] = d
            elif d != sizes[c] and not (c in fill and d == 1):
                raise errors.InvalidArgumentError(
                    f"Expected dimension {sizes[c]} at axis {letters.index(c)} of operand "
                    f"with subscripts {letters!r}, but got dimension {d} [Op:Einsum]; "
                    f"letter {c!r} must have one size in {equation!r}."
                )
    return sizes


def _operand_grad(i, subs, output, values, sizes, g, shape) -> np.ndarray:
    """d(sum(out * g)) / d(operand i), shaped as operand i (before ``...`` broadcasting)."""
    mine = subs[i]
    unique = "".join(dict.fromkeys(mine))
    others = [subs[j] for j in range(len(subs)) if j != i]
    reachable = set(output).union(*others) if others else set(output)
    kept = "".join(c for c in unique if c in reachable)
    spec = ",".join([output] + others) + "->" + kept
    operands = [g] + [values[j] for j in range(len(values)) if j != i]
    partial = np.einsum(spec, *operands)
    # letters summed away in operand i alone come back by broadcasting
    full = partial.reshape([sizes[c] if c in kept else 1 for c in unique])
    full = np.broadcast_to(full, [sizes[c] for c in unique])
    if len(unique) != len(mine):  # a repeated letter: back onto the diagonal
        fresh = iter(c for c in string.ascii_letters if c not in set("".join(subs)) | set(output))
        target, eyes, eye_specs = "", [], []
        for pos, c in enumerate(mine):
            if c in mine[:pos]:
                new = next(fresh)
                target += new
                eyes.append(np.eye(sizes[c], dtype=g.dtype))
                eye_specs.append(c + new)
            else:
                target += c
        full = np.einsum(",".join([unique] + eye_specs) + "->" + target, full, *eyes)
    return unbroadcast(np.ascontiguousarray(full), shape)


def einsum(equation: str, *inputs, **kwargs) -> Tensor:
    """Einstein summation (``tf.einsum``).

    >>> import simdist as tf
    >>> tf.einsum("ij,jk->ik", [[1.0, 2.0]], [[3.0], [4.0]]).numpy()
    array([[11.]], dtype=float32)

    Args:
        equation: ``"ij,jk->ik"``-style subscripts; ``...`` for broadcast axes; without
            ``->``, NumPy's implicit output.
        *inputs: the operands, one per comma-separated term, all of one dtype.

    Returns:
        The contraction, of the operands' dtype.

    Raises:
        ValueError: an equation that cannot be read, names another number of operands,
            or has an output letter no operand has.
        InvalidArgumentError: an operand of another rank than its subscripts, a letter
            with two sizes, or mixed dtypes.
    """
    kwargs.pop("name", None)
    kwargs.pop("optimize", None)
    if kwargs:
        raise TypeError(f"einsum got unexpected keyword arguments {sorted(kwargs)}.")
    if not isinstance(equation, str):
        raise TypeError(f"einsum's equation must be a string, got {equation!r}.")
    if not inputs:
        raise _bad(equation, "no operands were given")
    tensors = as_tensors("Einsum", *inputs)
    values = [t._value for t in tensors]
    subs, output, fill = _parse(equation, [v.ndim for v in values])
    sizes = _sizes(subs, values, equation, fill)
    full_values = [
        np.broadcast_to(v, [sizes[c] for c in letters])
        for v, letters in zip(values, subs, strict=True)
    ]
    spec = ",".join(subs) + "->" + output
    result = np.einsum(spec, *full_values, optimize=len(values) > 2)
    out = make_tensor(np.asarray(result, dtype=values[0].dtype), tensors[0]._dtype)

    def vjp(i):
        def grad(g):
            ops = [np.asarray(v, g.dtype) for v in full_values]
            return _operand_grad(i, subs, output, ops, sizes, g, values[i].shape)

        return grad

    record("Einsum", tensors, [out], [vjp(i) for i in range(len(tensors))])
    return out
