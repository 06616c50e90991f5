"""Restoring: match a saved object graph to live objects, assign values, defer the rest.

Matching walks the saved graph from its root together with the live objects, by child name
(``graph.children_of``). A saved variable matched to a live variable is assigned at once.
What does not exist yet is restored when it is created, as TF does:

* a Keras layer that is not built yet (its weights come with its first call): when it
  builds, its new children are matched and assigned;
* an optimizer slot (created by the first ``apply_gradients``): when the optimizer creates
  the slot of a variable that was restored, the slot is assigned its saved value.

Both are caught by a hook on that one object (an instance attribute wrapping
``_maybe_build`` / ``_create_slot``), removed once nothing is pending on it. Not caught: a
layer whose ``build()`` is called by hand (not through a call, ``Sequential.build`` or
``Model.build``), and attributes assigned after the restore; ``assert_consumed()`` names
what stayed unrestored. When several restores are pending on one object, the latest wins.

Values are written with ``variable.assign(array)``; a distributed variable's ``assign`` in
cross-replica context writes every copy. Shapes and dtypes are checked first, for all the
values restored at once, so a mismatch (``ValueError``) leaves those variables untouched.
"""

from __future__ import annotations

import weakref

import numpy as np

from simdist.checkpoint.graph import children_of, escape, walk
from simdist.keras.engine.base_layer import Layer
from simdist.keras.engine.tracking import is_variable
from simdist.keras.optimizers.optimizer import Optimizer

__all__ = ["Restoration", "CheckpointLoadStatus", "InitializationOnlyStatus"]

_build_hooks: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # layer -> [callback]
_slot_hooks: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # optimizer -> [cb]


def _run_hooks(table: weakref.WeakKeyDictionary, owner, attr: str, *args) -> None:
    callbacks = table.get(owner, [])
    remaining = [cb for cb in list(callbacks) if not cb(owner, *args)]
    if remaining:
        table[owner] = remaining
    else:
        table.pop(owner, None)
        owner.__dict__.pop(attr, None)  # back to the class's method


def _add_build_hook(layer: Layer, callback) -> None:
    """Call ``callback(layer)`` after ``layer`` builds, until it returns True."""
    if layer not in _build_hooks:
        original = type(layer)._maybe_build

        def hooked_maybe_build(input_shape, _layer=layer):
            original(_layer, input_shape)
            _run_hooks(_build_hooks, _layer, "_maybe_build")

        object.__setattr__(layer, "_maybe_build", hooked_maybe_build)
        _build_hooks[layer] = []
    _build_hooks[layer].append(callback)


def _add_slot_hook(optimizer: Optimizer, callback) -> None:
    """Call ``callback(optimizer, var, slot_name, slot)`` per new slot, until it returns True."""
    if optimizer not in _slot_hooks:
        original = type(optimizer)._create_slot

        def hooked_create_slot(var, slot_name, _opt=optimizer):
            slot = original(_opt, var, slot_name)
            _run_hooks(_slot_hooks, _opt, "_create_slot", var, slot_name, slot)
            return slot

        optimizer.__dict__["_create_slot"] = hooked_create_slot
        _slot_hooks[optimizer] = []
    _slot_hooks[optimizer].append(callback)


def _check(key: str, variable, value: np.ndarray) -> np.ndarray:
    expected_dtype = variable.dtype.as_numpy_dtype
    if np.dtype(expected_dtype) != value.dtype:
        raise ValueError(
            f"Cannot restore checkpoint value '{key}' into variable {variable.name}: the "
            f"checkpoint holds dtype {value.dtype.name}, the variable has dtype "
            f"{variable.dtype.name}. Create the variable with the saved dtype."
        )
    shape = variable.shape
    if shape.rank is not None and tuple(shape.as_list()) != value.shape:
        raise ValueError(
            f"Cannot restore checkpoint value '{key}' into variable {variable.name}: the "
            f"checkpoint holds shape {value.shape}, the variable has shape "
            f"{tuple(shape.as_list())}. Build the model the same way as the one that was "
            "saved (same layer sizes and input shape)."
        )
    return value


class Restoration:
    """One ``restore`` of a checkpoint into the graph under ``root``.

    Args:
        root: the live root object (the ``Checkpoint``).
        prefix: the checkpoint's path (for messages).
        index: the checkpoint's parsed index.
        values: key -> array.
    """

    def __init__(self, root, prefix: str, index: dict, values: dict[str, np.ndarray]) -> None:
        self.root = root
        self.prefix = prefix
        self.nodes: list[dict] = index["object_graph"]
        self.values = values
        self.matched: dict[int, object] = {}  # saved node -> live object
        self.saved_of: dict[int, list[int]] = {}  # id(live object) -> saved nodes
        self.restored: set[str] = set()
        self.optimizers: list[tuple[int, Optimizer]] = []
        self._slot_tables: dict[int, dict[tuple[int, str], int]] = {}

    # --- matching -------------------------------------------------------------------------
    def run(self) -> None:
        """Match from the root and restore everything that exists now."""
        self._match([(0, self.root)])

    def _match(self, pairs: list[tuple[int, object]]) -> None:
        assignments: list[tuple[str, object, np.ndarray]] = []
        queue = list(pairs)
        while queue:
            saved, obj = queue.pop(0)
            if saved in self.matched:
                continue
            self.matched[saved] = obj
            self.saved_of.setdefault(id(obj), []).append(saved)
            node = self.nodes[saved]
            key = node.get("key")
            if key is not None and is_variable(obj) and key in self.values:
                assignments.append((key, obj, _check(key, obj, self.values[key])))
            queue.extend(self._child_pairs(saved, obj))
            if isinstance(obj, Optimizer) and node.get("slots"):
                self.optimizers.append((saved, obj))
                _add_slot_hook(obj, self._on_slot_created)
        for key, variable, value in assignments:
            variable.assign(value)
            self.restored.add(key)
        self._restore_existing_slots()

    def _child_pairs(self, saved: int, obj) -> list[tuple[int, object]]:
        wanted = self.nodes[saved].get("children", {})
        if not wanted:
            return []
        live = {escape(name): child for name, child in children_of(obj).items()}
        pairs = [(cid, live[name]) for name, cid in wanted.items() if name in live]
        missing = [cid for name, cid in wanted.items() if name not in live]
        if any(cid not in self.matched for cid in missing) and isinstance(obj, Layer):
            if not obj.built:
                _add_build_hook(obj, lambda layer, saved=saved: self._on_built(saved, layer))
        return pairs

    def _on_built(self, saved: int, layer) -> bool:
        self._match(self._child_pairs(saved, layer))
        return True

    # --- optimizer slots ------------------------------------------------------------------
    def _slot_entry(self, opt_saved: int, variable, slot_name: str) -> int | None:
        table = self._slot_tables.get(opt_saved)
        if table is None:
            entries = self.nodes[opt_saved].get("slots", [])
            table = {(e["variable"], e["name"]): e["node"] for e in entries}
            self._slot_tables[opt_saved] = table
        for var_saved in self.saved_of.get(id(variable), []):
            node = table.get((var_saved, slot_name))
            if node is not None:
                return node
        return None

    def _restore_existing_slots(self) -> None:
        pairs = []
        for opt_saved, optimizer in self.optimizers:
            for ref, slots in optimizer._slots.items():
                for slot_name, slot in slots.items():
                    node = self._slot_entry(opt_saved, ref.deref(), slot_name)
                    if node is not None and node not in self.matched:
                        pairs.append((node, slot))
        if pairs:
            self._match(pairs)

    def _on_slot_created(self, optimizer, variable, slot_name: str, slot) -> bool:
        for opt_saved, live in self.optimizers:
            if live is optimizer:
                node = self._slot_entry(opt_saved, variable, slot_name)
                if node is not None and node not in self.matched:
                    self._match([(node, slot)])
        return self._all_slots_matched()

    def _all_slots_matched(self) -> bool:
        return all(
            entry["node"] in self.matched
            for opt_saved, _ in self.optimizers
            for entry in self.nodes[opt_saved].get("slots", [])
        )

    # --- bookkeeping for the status -------------------------------------------------------
    def unmatched_saved(self) -> list[str]:
        """Saved values not restored yet (their keys)."""
        keys = [n["key"] for n in self.nodes if n.get("key") is not None]
        return [k for k in keys if k not in self.restored]

    def unmatched_live(self) -> list[str]:
        """Live objects and variables under the root not matched to the checkpoint."""
        graph = walk(self.root)
        out = []
        for node, obj in enumerate(graph.objects):
            if graph.paths[node] == "save_counter":
                continue  # bookkeeping of the Checkpoint itself, not the user's state
            if node and id(obj) not in self.saved_of:
                label = obj.name if is_variable(obj) else type(obj).__name__
                out.append(f"{graph.paths[node]} ({label})")
        return out


class CheckpointLoadStatus:
    """What ``Checkpoint.restore`` returns: assertions about how much was restored."""

    def __init__(self, restoration: Restoration) -> None:
        self._restoration = restoration

    def assert_consumed(self) -> CheckpointLoadStatus:
        """Every saved value was restored and every live object matched the checkpoint.

        Raises:
            AssertionError: naming the unrestored values or the unmatched objects.
        """
        left = self._restoration.unmatched_saved()
        if left:
            raise AssertionError(
                f"Unresolved values in checkpoint '{self._restoration.prefix}': {left}. Their "
                "objects do not exist yet (build the model, or apply gradients once for "
                "optimizer slots) or not at all; use expect_partial() if that is intended."
            )
        self.assert_existing_objects_matched()
        return self

    def assert_existing_objects_matched(self) -> CheckpointLoadStatus:
        """Every object and variable under the root now has a value from the checkpoint.

        Raises:
            AssertionError: naming the live objects the checkpoint has nothing for.
        """
        extra = self._restoration.unmatched_live()
        if extra:
            raise AssertionError(
                f"Objects not found in checkpoint '{self._restoration.prefix}': {extra}. The "
                "checkpoint was saved from a different object graph (other layers or "
                "attribute names)."
            )
        return self

    def assert_nontrivial_match(self) -> CheckpointLoadStatus:
        """Something besides the root was matched.

        Raises:
            AssertionError: nothing in the checkpoint matched.
        """
        if len(self._restoration.matched) <= 1:
            raise AssertionError(
                f"Nothing except the root object matched checkpoint '{self._restoration.prefix}'."
            )
        return self

    def expect_partial(self) -> CheckpointLoadStatus:
        """Declare that a partial restore is intended (simdist never warns about it)."""
        return self

    def run_restore_ops(self, session=None) -> None:
        """Nothing to run: restoring is eager."""

    def initialize_or_restore(self, session=None) -> None:
        """Nothing to run: restoring is eager."""


class InitializationOnlyStatus:
    """What ``restore(None)`` returns: nothing was restored (variables keep their values)."""

    def assert_consumed(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is restored.")

    assert_existing_objects_matched = assert_consumed
    assert_nontrivial_match = assert_consumed

    def expect_partial(self) -> InitializationOnlyStatus:
        return self

    def run_restore_ops(self, session=None) -> None:
        """Nothing to run."""

    def initialize_or_restore(self, session=None) -> None:
        """Nothing to run."""
